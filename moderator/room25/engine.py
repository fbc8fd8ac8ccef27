"""Room 25's engine: commands and timers in, events and announcements out, on the shared machinery (statechart
loader, grammar, phrase catalogue, polled Scheduler, event serializer). Pure: time comes from a Clock.

It offers what the live loop (``moderator.live.LiveGame``), the listening loop (``moderator.loop.Listener``) and
``moderator simulate`` use of an engine: ``handle_text``/``handle``, ``tick``/``next_due``, ``subscribe``/``emit``,
``in_state``, ``allowed_intents``, ``snapshot`` and ``version``. One table, one shared microphone: everything is
said to ``both`` speakers (the shared output), and every command is heard from ``both``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from moderator.game import events
from moderator.game.actions import Refusal
from moderator.game.event_source import EventSource
from moderator.game.statechart import SEP, Statechart, load_statechart
from moderator.ports import Announcer, Clock
from moderator.room25 import commands, timer, turns, view
from moderator.room25.events import Outcome
from moderator.room25.rules import Plan
from moderator.room25.state import Room25State
from moderator.room25.timer import ProgrammingClock
from moderator.speech.catalog import Catalog
from moderator.speech.grammar import Grammar, NoParse, Parsed
from moderator.timers import Timer

#: Where every announcement and command of the one table goes (the contract's room names).
TABLE = "both"
#: While the moderator's next words are still being synthesized, how often turn 1 checks whether it may start.
_RECHECK = 0.5


class _Flow:
    """The model object ``transitions`` drives; it only holds the state."""

    state: str | list[str]


class Room25Engine(EventSource):
    """Runs one game of Room 25. Feed it commands (``handle_text``) and time (``tick``); listen to its events."""

    def __init__(self, state: Room25State, *, clock: Clock, grammar: Grammar, catalog: Catalog,
                 chart: Statechart | None = None, announcer: Announcer | None = None) -> None:
        super().__init__(clock, announcer)
        self.state = state
        self.grammar = grammar
        self.catalog = catalog
        self.chart = chart or load_statechart("room25")
        self.flow = _Flow()
        self.chart.build(self.flow, initial=state.machine)
        self.programming = ProgrammingClock(self, self.timers)
        #: What "undo" can take back: the state before each command that stayed in its phase.
        self.history: list[tuple[Room25State, str, dict[str, Any]]] = []
        self.programming.reschedule()

    @classmethod
    def new(cls, plan: Plan, players: Sequence[str], **kwargs: Any) -> Room25Engine:
        """A game in set-up; the turn order starts as the roster's order."""
        return cls(Room25State(players=list(players), plan=plan.to_dict(), order=list(players)), **kwargs)

    # --- speech ---------------------------------------------------------------------------------------

    def text(self, key: str, /, **slots: Any) -> str:
        """A phrase of the catalogue."""
        return self.catalog.render(key, **slots)

    def say(self, key: str, /, _text: str | None = None, **slots: Any) -> None:
        """Announce a phrase at the table."""
        text = _text if _text is not None else self.text(key, **slots)
        self.state.last_said = [key, text]
        self.announce(TABLE, key, text)

    def names(self, players: Sequence[str]) -> str:
        """ "Ann", "Ann and Ben", "Ann, Ben and Cal"."""
        return self.catalog.join(list(players))

    def count(self, word: str, n: int) -> str:
        """ "1 turn", "3 turns"."""
        return self.catalog.count(word, n)

    # --- the statechart ------------------------------------------------------------------------------

    def fire(self, trigger: str) -> None:
        """Fire a statechart trigger and emit a ``state`` event for every state entered."""
        before = self._active()
        self.flow.trigger(trigger)  # type: ignore[attr-defined]
        self.state.machine = self.flow.state
        entered = self._active() - before
        for name in self.chart.state_names():
            if name in entered:
                self.emit(events.State(name))
        self.history.clear()  # a new phase: what was said before it is settled

    def _active(self) -> set[str]:
        leaves = self.flow.state if isinstance(self.flow.state, list) else [self.flow.state]
        parts = (leaf.split(SEP) for leaf in leaves)
        return {SEP.join(p[: i + 1]) for p in parts for i in range(len(p))}

    def in_state(self, name: str) -> bool:
        """True when ``name`` (or a state nested in it) is active."""
        return name in self._active()

    def leaf(self) -> str:
        """The innermost active state's own name: ``programming``, ``action_1``, ..., ``result``."""
        state = self.flow.state[0] if isinstance(self.flow.state, list) else self.flow.state
        return state.split(SEP)[-1]

    def phase(self) -> tuple[int, str]:
        """The turn and the phase: an answer about "now" is stale once this changes."""
        return self.state.turn, self.leaf()

    def may(self, intent: str) -> bool:
        """True when ``intent`` fits the statechart's state now."""
        return bool(self.flow.may_trigger(self.chart.intents[intent]))  # type: ignore[attr-defined]

    def allowed_intents(self) -> list[str]:
        """The intents that fit now (what a recognizer should listen for)."""
        return [i for i in self.grammar.intents if self.may(i) and not commands.blocked(self, i)]

    # --- commands ------------------------------------------------------------------------------------

    def begin(self) -> None:
        """Enter the briefing of a new game (does nothing for a restored one)."""
        if self.state.machine == self.chart.initial:
            self.emit(events.State(self.chart.initial))
            self.fire("deal")
            for key, slots in commands.briefing(self):
                self.say(key, **slots)

    def start_game(self) -> None:
        """ "start the game": turn 1 begins as soon as the moderator has said the briefing (with a voice that knows
        when it will be quiet, ``idle_at()``: a timer then; without one, now)."""
        self.timers.cancel("start")
        idle_at = getattr(self.announcer, "idle_at", None)
        at = None if idle_at is None else idle_at()
        if at is None or at <= self.now() + 1e-6:
            self.fire("start")
            turns.start_turn(self, 1)
        else:  # still speaking, or still rendering (inf): try again then
            self.timers.at(at if at != float("inf") else self.now() + _RECHECK, "start", group="start")

    def resumed(self) -> None:
        """A game resumed from its save: say where it is (the turn, the programming time), and who plays now."""
        commands.check(self, "time", {})()
        turns.remind(self)

    def briefing_seconds(self, speaker: Any) -> float:
        """How long the briefing keeps a quiet table busy (``Speaker.measure`` of each of its phrases): a script's
        times count from turn 1, which starts after it."""
        return sum(speaker.measure(key, self.text(key, **slots)) for key, slots in commands.briefing(self))

    def handle_text(self, text: str, room: str | None = None, *, spoken: bool = False, host: bool = False) -> bool:
        """Parse a typed line or transcript and apply it. Returns True when accepted."""
        parsed = self.grammar.parse(text, self.state.players)
        if isinstance(parsed, NoParse):
            self._reject(text, "refuse.parse", {"reason": parsed.reason}, intent=None)
            return False
        return self.handle(parsed, room, spoken=spoken, host=host)

    def handle(self, parsed: Parsed, room: str | None = None, *, spoken: bool = False, host: bool = False) -> bool:
        """Apply a parsed command (``room`` is ignored: one table). True when accepted."""
        saved = self.state.copy()
        try:
            apply = commands.check(self, parsed.intent, parsed.slots)
        except Refusal as refusal:
            self.state = saved
            self._reject(parsed.text, refusal.key, refusal.slots, intent=parsed.intent)
            return False
        self.emit(events.Command(TABLE, parsed.intent, parsed.slots, parsed.text))
        machine = self.state.machine
        apply()
        if parsed.intent in commands.UNDOABLE and self.state.machine == machine and self.state.winner is None:
            self.history.append((saved, parsed.intent, dict(parsed.slots)))
        return True

    def _reject(self, text: str, key: str, slots: dict[str, Any], *, intent: str | None) -> None:
        reason = self.text(key, **slots)
        self.emit(events.Rejected(TABLE, text, reason, key, intent))
        self.say(key, _text=reason)

    def undo(self) -> None:
        """Take back the last command of this phase."""
        saved, intent, slots = self.history.pop()
        self.state = saved
        self.programming.reschedule()
        self.emit(events.Undo(TABLE, intent, slots))
        self.say("room25.undone", action=self.text(f"room25.action.{intent}"))
        turns.remind(self)

    def finish(self, winner: str, reason: str, *, trigger: str = "game_over") -> None:
        """The game is over: ``winner`` (prisoners or guards) for ``reason``."""
        self.programming.stop()
        self.state.winner, self.state.reason, self.state.pending, self.state.acting = winner, reason, [], []
        self.fire(trigger)
        self.emit(Outcome(winner, reason, self.state.turn))
        cooperation = self.state.plan["mode"] == "cooperation" and winner == "guards"  # no guards: the prisoners lose
        self.say(f"room25.result.{reason}_cooperation" if cooperation else f"room25.result.{reason}")

    # --- time ------------------------------------------------------------------------------------------

    def tick(self, lead: float = 0.0) -> None:
        """Fire every timer due now (with ``lead``, those due within ``lead`` seconds too), in order."""
        self.fire_due(lead, self._on_timer)

    def _on_timer(self, timer: Timer) -> None:
        if timer.name != "start":
            self.programming.on_timer(timer)
        elif self.in_state("briefing"):
            self.start_game()

    def time_left(self) -> float | None:
        """Seconds left to program, when the programming timer runs (or is paused)."""
        return self.programming.time_left()

    def setup_phrases(self) -> list[str]:
        """What can be rendered before the game: the briefing, the timer's cues, each player's calls, and every
        Room 25 phrase without slots (``Voice.prerender``)."""
        s, catalog = self.state, self.catalog
        texts = [self.text(key, **slots) for key, slots in commands.briefing(self)]
        texts += [self.text("room25.timer.count", n=n) for n in timer.COUNTDOWN]
        texts += [self.text("room25.timer.left", time=catalog.duration(w)) for w in timer.WARNINGS]
        texts += [self.text(key, player=p) for p in s.players for key in turns.CALLS.values()]
        texts += [text for key, text in catalog.phrases.items() if key.startswith("room25.") and "{" not in text
                  and not key.startswith(("room25.action.", "room25.situation.", "room25.example."))]
        return list(dict.fromkeys(texts))

    def view_text(self, *, width: int = 100, color: bool = False, alerts: list[str] | None = None) -> str:
        """The live view for the terminal (``status``, and the prompt's toolbar)."""
        return view.view_text(self, width=width, color=color, alerts=alerts)

    def snapshot(self) -> dict[str, Any]:
        """The state to journal."""
        return self.state.to_dict()
