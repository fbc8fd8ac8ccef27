"""The programming phase's optional timer: its spoken cues on the engine's polled Scheduler (time comes from the
engine's Clock; nothing sleeps), pause and resume."""

from __future__ import annotations

from typing import TYPE_CHECKING

from moderator.room25 import turns
from moderator.timers import Scheduler, Timer

if TYPE_CHECKING:
    from moderator.room25.engine import Room25Engine

#: Seconds left at which the time left is said (when the timer is longer), then the spoken countdown.
WARNINGS = (30, 10)
COUNTDOWN = (5, 4, 3, 2, 1)
GROUP = "programming"


def cues(seconds: int) -> list[int]:
    """The seconds-left marks said during a programming phase of ``seconds``; 0 is "time's up"."""
    return [w for w in WARNINGS if w < seconds] + [c for c in COUNTDOWN if c < seconds] + [0]


class ProgrammingClock:
    """The programming timer of a game (``plan.programming_seconds``; None: no timer)."""

    def __init__(self, eng: Room25Engine, timers: Scheduler) -> None:
        self.eng = eng
        self.timers = timers

    @property
    def seconds(self) -> int | None:
        """The phase's length, or None without a timer."""
        value = self.eng.state.plan.get("programming_seconds")
        return None if value is None else int(value)

    def start(self) -> None:
        """A programming phase begins: the timer runs from now."""
        if self.seconds is None:
            return
        self.eng.state.deadline = self.eng.now() + self.seconds
        self.eng.state.paused_left = None
        self.reschedule()

    def reschedule(self) -> None:
        """Schedule the cues still ahead of the deadline (also for a restored game)."""
        self.timers.cancel(GROUP)
        deadline, seconds = self.eng.state.deadline, self.seconds
        if deadline is None or seconds is None:
            return
        for left in cues(seconds):
            # Time's up is always due (at once, for a game resumed after its deadline); a passed cue is not said.
            if left == 0 or deadline - left >= self.eng.clock.now() - 1e-6:
                self.timers.at(deadline - left, "programming", group=GROUP, data=left)

    def stop(self) -> None:
        """The phase is over: no more cues."""
        self.timers.cancel(GROUP)
        self.eng.state.deadline = self.eng.state.paused_left = None

    def pause(self) -> None:
        """Stop the timer, keeping the time it had."""
        state = self.eng.state
        if state.deadline is not None:
            state.paused_left = max(0.0, state.deadline - self.eng.now())
        state.deadline = None
        self.timers.cancel(GROUP)

    def resume(self) -> None:
        """Run the timer again with the time it had."""
        state = self.eng.state
        if state.paused_left is not None:
            state.deadline = self.eng.now() + state.paused_left
        state.paused_left = None
        self.reschedule()

    def time_left(self) -> float | None:
        """Seconds left to program (paused: what it had); None when no timer runs."""
        state = self.eng.state
        if state.paused_left is not None:
            return state.paused_left
        return None if state.deadline is None else max(0.0, state.deadline - self.eng.now())

    def on_timer(self, timer: Timer) -> None:
        """A cue is due: the time left, a countdown number, or time's up (the programming phase ends)."""
        left = int(timer.data)
        if left == 0:
            self.eng.say("room25.timer.up")
            turns.end_programming(self.eng)
        elif left in COUNTDOWN:
            self.eng.say("room25.timer.count", n=left)
        else:
            self.eng.say("room25.timer.left", time=self.eng.catalog.duration(left))
