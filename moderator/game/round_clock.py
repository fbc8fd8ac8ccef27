"""The round's clock: pause and resume, the time left, and the timers that speak as a round runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from moderator.timers import Scheduler, Timer

if TYPE_CHECKING:
    from moderator.game.state import GameState
    from moderator.ports import Clock
    from moderator.settings import Schedule
    from moderator.speech.catalog import Catalog


class RoundClock:
    """Part of the Engine: everything about the running round's time. Time comes only from ``clock``."""

    state: GameState
    clock: Clock
    catalog: Catalog
    schedule: Schedule
    timers: Scheduler
    _scheduled: float | None

    # Provided by the Engine.
    def say(self, room: str, key: str, /, _text: str | None = None, **slots: Any) -> None: ...
    def fire(self, trigger: str) -> None: ...
    def in_state(self, name: str) -> bool: ...
    def round_over(self) -> None: ...

    def pause(self) -> None:
        """Stop the round's clock."""
        if self.state.deadline is not None:
            self.state.remaining = max(0.0, self.state.deadline - self.clock.now())
        self.state.deadline = None
        self.timers.cancel("round")
        self.fire("pause")
        self._say_left("paused")

    def resume(self) -> None:
        """Restart the round's clock with the time it had."""
        if self.state.remaining is not None:
            self.state.deadline = self.clock.now() + self.state.remaining
        self.state.remaining = None
        self.fire("resume")
        self._schedule_round()
        self._say_left("resumed")

    def time_left(self) -> float | None:
        """Seconds left in the running or paused round; None when untimed or no round runs."""
        if self.state.deadline is not None:
            return max(0.0, self.state.deadline - self.clock.now())
        return self.state.remaining

    def _say_left(self, key: str) -> None:
        """ "Game paused. 1 minute left." (or the untimed form of ``key``)."""
        left = self.time_left()
        if left is None:
            self.say("both", f"{key}.untimed")
        else:
            self.say("both", key, left=self.catalog.duration(left))

    def say_time_left(self, room: str) -> None:
        """Answer "how much time is left"."""
        left = self.time_left()
        if self.in_state("round.running") and left is not None:
            self.say(room, "time.left", left=self.catalog.duration(left), round=self.state.round)
        elif self.in_state("round.paused") and left is not None:
            self.say(room, "time.paused", left=self.catalog.duration(left), round=self.state.round)
        elif self.in_state("round"):
            self.say(room, "time.untimed", round=self.state.round)
        elif self.in_state("hostages") or self.in_state("parley"):
            self.say(room, "time.up", round=self.state.round)
        else:
            self.say(room, "time.none")

    def _schedule_round(self) -> None:
        """(Re)schedule the announcements of the running round from its deadline."""
        self.timers.cancel("round")
        s = self.state
        if s.deadline is None:
            return
        now = self.clock.now()
        left = s.deadline - now
        marks = [("warn", m) for m in self.schedule.warnings]
        marks += [("count", n) for n in range(self.schedule.countdown, 0, -1)]
        if s.round == 1 and self.schedule.leader_nag:
            marks.append(("nag", self.schedule.leader_nag))
        for name, mark in marks:
            if f"{name}:{mark}" not in s.fired and mark < left:
                self.timers.at(s.deadline - mark, name, group="round", data=mark)
        self.timers.at(max(s.deadline, now), "time_up", group="round", data=0)

    def next_due(self) -> float | None:
        """When the next timer fires (None: nothing scheduled)."""
        return self.timers.next_due()

    def tick(self, lead: float = 0.0) -> None:
        """Fire every timer due now, in order; with ``lead``, also those due within ``lead`` seconds.

        A live loop passes a small lead so that a timer's announcement reaches the speaker before its
        time and its audio starts exactly then; events still carry the timer's own time.
        """
        while (timer := self.timers.pop_next(self.clock.now() + lead)) is not None:
            self._scheduled = timer.due
            try:
                self._fire_timer(timer)
            finally:
                self._scheduled = None

    def _fire_timer(self, timer: Timer) -> None:
        self.state.fired.append(f"{timer.name}:{timer.data}")
        if timer.name == "warn":
            self.say("both", "time.warning", left=self.catalog.duration(timer.data))
        elif timer.name == "count":
            self.say("both", "time.count", n=timer.data)
        elif timer.name == "nag":
            for name, room in self.state.rooms.items():
                if room.leader is None:
                    self.say(name, "leader.nag", room=name)
        elif timer.name == "time_up":
            self.round_over()

    def pause_restored(self, remaining: float) -> None:
        """After a crash, pause the running round with the time it had when it died."""
        self.state.deadline = self.clock.now() + remaining
        if self.in_state("round.running"):
            self.pause()
