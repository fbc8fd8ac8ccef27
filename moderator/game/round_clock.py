"""A round's clock: the round as planned, what it says on its own and when (its cues), pause, time left."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from moderator.game.phrase import Phrase
from moderator.game.state import ROOMS

if TYPE_CHECKING:
    from moderator.game.state import GameState
    from moderator.ports import Clock
    from moderator.settings import Schedule
    from moderator.speech.catalog import Catalog
    from moderator.timers import Scheduler, Timer


@dataclass(frozen=True)
class Cue:
    """A phrase a round says on its own: when it starts, or on one of its timers."""

    name: str
    """``start`` (said as the round starts), or the round's timer that says it: ``warn``, ``count``, ``nag`` or
    ``time_up`` (a round without a timer has none: it ends when both rooms are ready)."""
    seconds: int | None
    """When its timer fires, in seconds before the end of the round (None: ``start``, no timer)."""
    room: str
    """Where it is said: ``A``, ``B`` or ``both``."""
    phrase: Phrase
    leaderless: bool = False
    """Said only if ``room`` still has no leader when the timer fires (the reminder to appoint one)."""


def round_cues(catalog: Catalog, schedule: Schedule, spec: Mapping[str, Any]) -> list[Cue]:
    """Everything round ``spec`` (an item of a plan's ``rounds``) says on its own, in the order its timers are
    set: its start, the time warnings, the countdown, the reminder to appoint a leader (round 1), time's up.

    This is the one list of them: the round's clock sets its timers and says its phrases from it, and the
    phrases known before the game (``moderator.speech.prerender``) are rendered from it.
    """
    number, seconds = spec["round"], spec["seconds"]
    hostages = catalog.count("hostage", spec["hostages"])
    time_up = Cue("time_up", 0, "both", Phrase("time.over", {"round": number}))
    if seconds is None:  # no timer: no time's up either (the round ends when both rooms are ready)
        return [Cue("start", None, "both", Phrase("round.start_untimed", {"round": number, "hostages": hostages}))]
    duration = catalog.duration(seconds)
    cues = [Cue("start", None, "both", Phrase("round.start", {"round": number, "duration": duration,
                                                                  "hostages": hostages}))]
    cues += [Cue("warn", mark, "both", Phrase("time.warning", {"left": catalog.duration(mark)}))
             for mark in dict.fromkeys(schedule.warnings)]
    cues += [Cue("count", n, "both", Phrase("time.count", {"n": n})) for n in range(schedule.countdown, 0, -1)]
    # The reminder to appoint a leader: ``leader_nag`` seconds before the end, or half-way through a shorter round
    # (a 20-second round would otherwise never be reminded).
    nag = min(schedule.leader_nag, seconds // 2)
    if number == 1 and nag > 0:
        cues += [Cue("nag", nag, room, Phrase("leader.nag", {"room": room}), leaderless=True) for room in ROOMS]
    return [*cues, time_up]


class RoundHost(Protocol):
    """What a round's clock needs from the game that holds it (the Engine)."""

    state: GameState

    def say_phrase(self, room: str, phrase: Phrase) -> None:
        """Announce ``phrase`` in room A, B or both."""
        ...

    def fire(self, trigger: str) -> None:
        """Fire a statechart trigger."""
        ...

    def in_state(self, name: str) -> bool:
        """True when statechart state ``name`` (or one nested in it) is active."""
        ...

    def round_over(self) -> None:
        """Time is up: on to the hostages."""
        ...


class RoundClock:
    """The Engine's round clock: the current round's plan, its deadline, its timers and what they say.

    It keeps no state of its own: the deadline, the time left while paused and the timers already said are in
    the game's ``state`` (so they are journaled), and its timers are in the game's scheduler, group ``round``.
    Time comes only from ``clock``.
    """

    def __init__(self, game: RoundHost, *, clock: Clock, catalog: Catalog, schedule: Schedule,
                 timers: Scheduler) -> None:
        self.game = game
        self.clock = clock
        self.catalog = catalog
        self.schedule = schedule
        self.timers = timers

    # --- the plan ----------------------------------------------------------------------------

    def spec(self) -> dict[str, Any]:
        """The current round as planned (round 1 before the game starts): ``round``, ``seconds``, ``hostages``."""
        state = self.game.state
        return state.plan["rounds"][max(state.round, 1) - 1]

    def seconds(self) -> int | None:
        """The current round's duration (None in the no-timer variant)."""
        return self.spec()["seconds"]

    def hostages_due(self) -> int:
        """Hostages each room sends this round."""
        return int(self.spec()["hostages"])

    def last(self) -> bool:
        """True in the game's final round."""
        return self.game.state.round >= len(self.game.state.plan["rounds"])

    def cues(self) -> list[Cue]:
        """What the current round says on its own (``round_cues``)."""
        return round_cues(self.catalog, self.schedule, self.spec())

    def say_cue(self, name: str, seconds: int | None = None) -> None:
        """Say the current round's cues called ``name`` (and due ``seconds`` before the end, if given)."""
        rooms = self.game.state.rooms
        for cue in self.cues():
            if cue.name == name and seconds in (None, cue.seconds) and not (cue.leaderless and rooms[cue.room].leader):
                self.game.say_phrase(cue.room, cue.phrase)

    # --- the clock ---------------------------------------------------------------------------

    def start(self, now: float) -> None:
        """Set the current round's deadline from ``now`` (its timers are set by ``reschedule``)."""
        state, seconds = self.game.state, self.seconds()
        state.fired, state.remaining = [], None
        state.deadline = None if seconds is None else now + seconds

    def stop(self) -> None:
        """The round is over: no deadline, no timers."""
        self.timers.cancel("round")
        self.game.state.deadline = self.game.state.remaining = None

    def pause(self) -> None:
        """Stop the round's clock."""
        state = self.game.state
        if state.deadline is not None:
            state.remaining = max(0.0, state.deadline - self.clock.now())
        state.deadline = None
        self.timers.cancel("round")
        self.game.fire("pause")
        self._say_left("paused")

    def resume(self) -> None:
        """Restart the round's clock with the time it had."""
        state = self.game.state
        if state.remaining is not None:
            state.deadline = self.clock.now() + state.remaining
        state.remaining = None
        self.game.fire("resume")
        self.reschedule()
        self._say_left("resumed")

    def pause_restored(self, remaining: float) -> None:
        """After a crash, pause the running round with the time it had when it died."""
        self.game.state.deadline = self.clock.now() + remaining
        if self.game.in_state("round.running"):
            self.pause()

    def time_left(self) -> float | None:
        """Seconds left in the running or paused round; None when untimed or no round runs."""
        state = self.game.state
        if state.deadline is not None:
            return max(0.0, state.deadline - self.clock.now())
        return state.remaining

    def _say_left(self, key: str) -> None:
        """ "Game paused. 1 minute left." (or the untimed form of ``key``)."""
        left = self.time_left()
        if left is None:
            self.game.say_phrase("both", Phrase(f"{key}.untimed"))
        else:
            self.game.say_phrase("both", Phrase(key, {"left": self.catalog.duration(left)}))

    def say_time_left(self, room: str) -> None:
        """Answer "how much time is left"."""
        left, number, on = self.time_left(), self.game.state.round, self.game.in_state
        if on("round.running") and left is not None:
            phrase = Phrase("time.left", {"left": self.catalog.duration(left), "round": number})
        elif on("round.paused") and left is not None:
            phrase = Phrase("time.paused", {"left": self.catalog.duration(left), "round": number})
        elif on("round"):
            phrase = Phrase("time.untimed", {"round": number})
        elif on("hostages") or on("parley"):
            phrase = Phrase("time.up", {"round": number})
        else:
            phrase = Phrase("time.none")
        self.game.say_phrase(room, phrase)

    # --- timers ------------------------------------------------------------------------------

    def reschedule(self) -> None:
        """(Re)set the running round's timers from its deadline, leaving out those already said."""
        self.timers.cancel("round")
        state = self.game.state
        if state.deadline is None:
            return
        now = self.clock.now()
        left = state.deadline - now
        for name, mark in dict.fromkeys((c.name, c.seconds) for c in self.cues() if c.seconds is not None):
            if name == "time_up":
                self.timers.at(max(state.deadline, now), name, group="round", data=mark)
            elif f"{name}:{mark}" not in state.fired and mark < left:
                self.timers.at(state.deadline - mark, name, group="round", data=mark)

    def on_timer(self, timer: Timer) -> None:
        """A timer of the round is due: say its cues, or end the round."""
        self.game.state.fired.append(f"{timer.name}:{timer.data}")
        if timer.name == "time_up":
            self.game.round_over()
        else:
            self.say_cue(timer.name, timer.data)
