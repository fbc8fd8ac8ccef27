"""The game engine: commands and timers in, events and announcements out. Pure: time comes from a Clock."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from moderator.game import actions, advanced, events, hints, powers, reasons, reveal, round_end
from moderator.game.actions import Refusal
from moderator.game.event_source import EventSource
from moderator.game.phrase import Phrase
from moderator.game.round_clock import RoundClock
from moderator.game.rules import GamePlan
from moderator.game.state import ROOMS, GameState, RoomState
from moderator.game.statechart import SEP, Statechart, load_statechart
from moderator.game.undo import UndoHistory
from moderator.ports import Announcer, Clock
from moderator.settings import Schedule
from moderator.speech.catalog import Catalog
from moderator.speech.grammar import Grammar, NoParse, Parsed
from moderator.timers import Timer

_ACTIONS: dict[str, Callable[..., actions.Apply]] = {
    "start": lambda eng, slots, room: eng.start_game,
    "appoint": actions.appoint,
    "appoint_you": actions.appoint_you,
    "name_answer": actions.name_answer,
    "room_answer": actions.room_answer,
    "offer": actions.offer,
    "accept": partial(actions.answer_offer, accepted=True),
    "refuse": partial(actions.answer_offer, accepted=False),
    "usurp": powers.usurp,
    "ready": round_end.ready,
    "hostages": powers.hostages,
    "met": round_end.met,
    "pause": lambda eng, slots, room: eng.rounds.pause,
    "resume": lambda eng, slots, room: eng.rounds.resume,
    "time": partial(actions.query, intent="time"),
    "repeat": partial(actions.query, intent="repeat"),
    "help": partial(actions.query, intent="help"),
    "undo": actions.check_undo,
    "confirm": lambda eng, slots, room: (advanced.answer_fact if eng.in_state("reveal") else round_end.confirm)(
        eng, slots, room),
    "predict": reveal.predict,
    "reveal": lambda eng, slots, room: (
        powers.public_reveal if eng.in_state("round") or eng.in_state("hostages")
        else advanced.name_card if advanced.is_advanced(eng) else reveal.reveal)(eng, slots, room),
    "bodyguard": powers.bodyguard,
    "guess": advanced.guess,
    "shoot": advanced.shoot,
    "buried": advanced.name_buried,
    "explain": partial(actions.query, intent="explain"),
}
#: Commands that "undo" can take back (until something locks).
_UNDOABLE = {"appoint", "name_answer", "offer", "accept", "refuse", "usurp", "ready"}
#: While the moderator's next words are still being synthesized, how often round 1 checks whether it may start.
_RECHECK = 0.5
#: When a hostage choice is read back for a "yes" before it locks: for spoken commands only (a
#: recognizer can mishear a name; a typed line is what the host meant), always, or never.
READ_BACK = ("spoken", "always", "never")


class _Flow:
    """The model object ``transitions`` drives; it only holds the state."""

    state: str | list[str]


class Engine(EventSource):
    """Runs one game. Feed it commands (``handle_text``) and time (``tick``); listen to its events.

    It is what the rules of the commands (``actions.Game``), the hints (``hints.Situation``) and its round clock
    (``round_clock.RoundHost``) need of a game; each of those modules names only that much of it.
    """

    def __init__(
        self,
        state: GameState,
        *,
        clock: Clock,
        grammar: Grammar,
        catalog: Catalog,
        chart: Statechart | None = None,
        schedule: Schedule | None = None,
        announcer: Announcer | None = None,
        read_back: str = "spoken",
    ) -> None:
        if read_back not in READ_BACK:
            raise ValueError(f"read_back must be one of {', '.join(READ_BACK)}, not {read_back!r}")
        super().__init__(clock, announcer)
        self.state = state
        self.read_back = read_back
        #: True while the command being applied should be read back before it locks.
        self.reading_back = False
        #: True while the command being applied was typed by the host at a live game's keyboard.
        self.by_host = False
        self.grammar = grammar
        self.catalog = catalog
        self.chart = chart or load_statechart()
        self.schedule = schedule or Schedule()
        self.flow = _Flow()
        # Guard of the statechart's prediction -> reveal transition.
        self.flow.gambler_may_be_buried = lambda: bool(self.state.plan["buried"])  # type: ignore[attr-defined]
        # Guard of naming hostages during a round: only without a timer.
        self.flow.untimed = lambda: self.rounds.seconds() is None  # type: ignore[attr-defined]
        self.flow.by_host = lambda: self.by_host  # type: ignore[attr-defined]
        # Guard of a public reveal during the rounds: only the advanced game's powers use one.
        self.flow.advanced = lambda: advanced.is_advanced(self)  # type: ignore[attr-defined]
        self.chart.build(self.flow, initial=state.machine)
        #: The round's plan, deadline, pause, and the phrases its timers say (their timers are in ``timers``).
        self.rounds = RoundClock(self, clock=clock, catalog=catalog, schedule=self.schedule, timers=self.timers)
        #: The room of the command being applied (None: not known), for the answers that depend on it.
        self._asking: str | None = None
        self._undo = UndoHistory()
        self.rounds.reschedule()

    @classmethod
    def new(cls, plan: GamePlan, rooms: Mapping[str, Sequence[str]], *, cards: Mapping[str, str] | None = None,
            buried: str | None = None, **kwargs: Any) -> Engine:
        """A game in set-up with the given plan and rooms (``cards``, ``buried``: a known deal, for scripts)."""
        players = [p for r in ROOMS for p in rooms[r]]
        state = GameState(
            players=players,
            rooms={r: RoomState(members=list(rooms[r])) for r in ROOMS},
            plan=plan.to_dict(),
            cards=None if cards is None else dict(cards),
            buried_card=buried,
        )
        return cls(state, **kwargs)

    def text(self, key: str, /, **slots: Any) -> str:
        """A phrase of the catalogue."""
        return self.catalog.render(key, **slots)

    def say(self, room: str, key: str, /, _text: str | None = None, **slots: Any) -> None:
        """Announce a phrase in room A, B or both."""
        text = _text if _text is not None else self.text(key, **slots)
        for where in (ROOMS if room == "both" else (room,)):
            self.state.last_said[where] = [key, text]
        self.state.last_said["both"] = [key, text]
        self.announce(room, key, text)

    def say_phrase(self, room: str, phrase: Phrase) -> None:
        """Announce a phrase given as a value."""
        self.say(room, phrase.key, **phrase.slots)

    def names(self, players: Sequence[str]) -> str:
        """ "Bob", "Bob and Carol", "Bob, Carol and Dave"."""
        return self.catalog.join(list(players))

    def count(self, word: str, n: int) -> str:
        """ "1 hostage", "2 hostages"."""
        return self.catalog.count(word, n)

    def fire(self, trigger: str) -> None:
        """Fire a statechart trigger and emit a ``state`` event for every state entered."""
        before = self._active()
        self.flow.trigger(trigger)  # type: ignore[attr-defined]
        self.state.machine = self.flow.state
        entered = self._active() - before
        for name in self.chart.state_names():  # parents before children
            if name in entered:
                self.emit(events.State(name))

    def _active(self) -> set[str]:
        leaves = self.flow.state if isinstance(self.flow.state, list) else [self.flow.state]
        parts = (leaf.split(SEP) for leaf in leaves)
        return {SEP.join(p[: i + 1]) for p in parts for i in range(len(p))}

    def in_state(self, name: str) -> bool:
        """True when ``name`` (or a state nested in it) is active."""
        return name in self._active()

    # --- commands ----------------------------------------------------------------------------

    def begin(self) -> None:
        """Enter the briefing of a new game (does nothing for a restored one)."""
        if self.state.machine == self.chart.initial:
            self.emit(events.State(self.chart.initial))
            self.fire("deal")
            self.say("both", "briefing", _text=self.briefing_text())

    def briefing_text(self) -> str:
        """What the moderator says first: the players, the rounds and the rooms (with a buried card: how to bury it,
        and which backups take over)."""
        s = self.state
        text = self.text("briefing", players=len(s.players), rounds=len(s.plan["rounds"]),
                         room_a=self.names(s.rooms["A"].members), room_b=self.names(s.rooms["B"].members))
        if advanced.is_advanced(self):
            return text + " " + advanced.briefing(self)
        if s.plan["buried"]:
            text += " " + self.text("briefing.bury", cards=sum(s.plan["deck"].values()))
        return text

    def phase(self) -> tuple[int, str]:
        """The round and the top-level state: an answer about "now" is stale once this changes."""
        leaf = self.flow.state[0] if isinstance(self.flow.state, list) else self.flow.state
        return self.state.round, leaf.split(SEP)[0]

    def handle_text(self, text: str, room: str | None = None, *, spoken: bool = False, host: bool = False) -> bool:
        """Parse a typed line or transcript (``spoken``) and apply it (``host``: typed by the host at the keyboard of
        a live game, not a scripted player). Returns True when accepted."""
        parsed = self.grammar.parse(text, self.state.players)
        if isinstance(parsed, NoParse):
            self._reject(room, text, "refuse.parse", {"reason": parsed.reason}, intent=None)
            return False
        return self.handle(parsed, room, spoken=spoken, host=host)

    def handle(self, parsed: Parsed, room: str | None = None, *, spoken: bool = False, host: bool = False) -> bool:
        """Apply a parsed command heard in ``room`` (None: a shared input). True when accepted."""
        saved = self.state.copy()
        self.reading_back = self.read_back == "always" or (self.read_back == "spoken" and spoken)
        self.by_host = host and not spoken
        try:
            where = actions.room_of_command(self, parsed.intent, parsed.slots, room)
            if not self.may(parsed.intent, where or "A"):
                raise self._not_now(parsed.intent, where)
            apply = _ACTIONS[parsed.intent](self, parsed.slots, where)
        except Refusal as refusal:
            self.state = saved
            self._reject(room, parsed.text, refusal.key, refusal.slots, intent=parsed.intent)
            return False
        undoable = parsed.intent in _UNDOABLE or (parsed.intent == "hostages" and self.reading_back)
        self.emit(events.Command(where or "both", parsed.intent, parsed.slots, parsed.text))
        self._asking = where
        locks = self._undo.locks
        apply()
        if undoable and self._undo.locks == locks:  # (unless it ended the round: "room B is ready")
            self._undo.record(saved, self.state, parsed.intent, parsed.slots)
        elif not undoable and parsed.intent not in ("time", "repeat", "help", "undo"):
            self._undo.locked(where)
        return True

    def _reject(self, room: str | None, text: str, key: str, slots: dict[str, Any], *, intent: str | None) -> None:
        reason = self.text(key, **slots)
        self.emit(events.Rejected(room or "both", text, reason, key, intent))
        self.say(room or "both", key, _text=reason)

    def _not_now(self, intent: str, room: str | None) -> Refusal:
        if intent == "hostages" and room and self.state.rooms[room].hostages is not None:
            locked = self.state.rooms[room].hostages or []
            return Refusal("refuse.hostages_locked", room=room, players=locked)
        leaf = self.flow.state[0] if isinstance(self.flow.state, list) else self.flow.state
        situation = self.text(reasons.situation_key(intent, leaf, self.state.plan))
        return Refusal("refuse.not_now", action=self.text(f"action.{intent}"), situation=situation)

    def may(self, intent: str, room: str) -> bool:
        """True when ``intent``, about ``room``, fits the statechart's state now."""
        return self.flow.may_trigger(self.chart.intents[intent].format(room=room))  # type: ignore[attr-defined]

    def allowed_intents(self) -> list[str]:
        """The intents that fit the current phase (what a recognizer should listen for now)."""
        return hints.allowed_intents(self)

    def help_text(self, room: str | None = None) -> str:
        """Example phrasings of the 3 to 5 commands that fit now, most useful first, for ``room`` (default:
        the room of the command being applied; None: either room)."""
        return self.catalog.join([self.text(f"example.{i}") for i in self.helpful_intents(room or self._asking)])

    def helpful_intents(self, room: str | None = None) -> list[str]:
        """The 3 to 5 intents most worth suggesting now in ``room`` (None: either room), best first."""
        return hints.helpful_intents(self, room)

    # --- game steps --------------------------------------------------------------------------

    def set_leader(self, room: str, player: str, how: str) -> None:
        """Make ``player`` the leader of ``room``."""
        state = self.state.rooms[room]
        state.leader, state.offer, state.no_giveback, state.asked_leader = player, None, None, False
        self.emit(events.Leader(room, player, how))
        self.say(room, f"leader.{how}", player=player, room=room)

    def start_game(self) -> None:
        """ "start the game": round 1 begins as soon as the moderator has finished speaking (the briefing).

        With an announcer that knows when it will be quiet (``idle_at()``, the Speaker), a timer starts round
        1 then; without one (text), it starts now.
        """
        self.timers.cancel("start")
        self._start_when_quiet(self.clock.now())

    def _start_when_quiet(self, moment: float) -> None:
        """Start round 1 if the moderator is quiet at ``moment``; else set the ``start`` timer to try again."""
        idle_at = getattr(self.announcer, "idle_at", None)
        at = None if idle_at is None else idle_at()
        if at is None or at <= max(moment, self.clock.now()) + 1e-6:
            self.fire("start")
            self.start_round(1)
        else:  # more was said meanwhile, or a phrase is still rendering (inf)
            # Later than ``moment``, so a tick handling timers ahead of time cannot loop on it.
            self.timers.at(at if at != float("inf") else moment + _RECHECK, "start", group="start")

    def reveal_next(self, *, first: bool = False) -> None:
        """The advanced game's reveal: ask for what is still missing, or judge the game (``advanced``)."""
        (advanced.start if first else advanced.next_step)(self)

    def hostages_due(self) -> int:
        """Hostages each room sends this round."""
        return self.rounds.hostages_due()

    def start_round(self, number: int) -> None:
        """Round ``number`` starts: its clock runs from now, and it is announced."""
        s = self.state
        s.round = number
        for room in s.rooms.values():
            room.no_giveback, room.offer, room.ready, room.gave_up = None, None, False, []
            room.usurper_round = False
        # Round 1 may start from a timer (after the briefing), handled a little ahead: its own time counts.
        self.rounds.start(self.now())
        due = self.hostages_due()
        self.emit(events.RoundStart(number, self.rounds.seconds(), {r: due for r in ROOMS}))
        self.rounds.reschedule()
        self.rounds.say_cue("start")

    def round_over(self) -> None:
        """Time is up (or both rooms are ready): hostage selection."""
        self.rounds.stop()
        for room in self.state.rooms.values():
            room.offer = None
        self._undo.locked()
        self.fire("time_up")
        self.emit(events.RoundEnd(self.state.round))
        if self.rounds.seconds() is None:  # no timer: both rooms are ready, their hostages named; no "time's up"
            for name in ROOMS:
                self.fire(f"hostages_{name}")
            round_end.to_parley(self)
            return
        self.rounds.say_cue("time_up")
        due = self.count("hostage", self.hostages_due())
        for name, room in self.state.rooms.items():
            if room.leader is None:
                self.say(name, "hostages.no_leader", room=name, hostages=due)
            else:
                self.say(name, "hostages.due", room=name, leader=room.leader, hostages=due)

    def can_undo(self, room: str | None = None) -> bool:
        """True when "undo" from ``room`` (None: from no room, e.g. the host's keyboard) has a change to take back."""
        return self._undo.can_undo(room)

    def undo(self, room: str | None = None) -> None:
        """Take back the last change of ``room`` that is not locked (None: the last change of either room)."""
        leaders = {name: r.leader for name, r in self.state.rooms.items()}
        change = self._undo.undo(self.state, room)
        self.emit(events.Undo(change.room, change.intent, change.slots))
        for name in ROOMS:
            if self.state.rooms[name].leader != leaders[name]:
                self.emit(events.Leader(name, self.state.rooms[name].leader, "undone"))
        action, names = self.text(f"action.{change.intent}"), self.names(change.names)
        self.say(change.room, "undone" if names else "undone.plain", room=change.room, action=action, players=names)

    # --- time ----------------------------------------------------------------------------------

    def tick(self, lead: float = 0.0) -> None:
        """Fire every timer due now, in order; with ``lead``, also those due within ``lead`` seconds.

        A live loop passes a small lead so that a timer's announcement reaches the speaker before its
        time and its audio starts exactly then; events still carry the timer's own time.
        """
        self.fire_due(lead, self._on_timer)

    def _on_timer(self, timer: Timer) -> None:
        if timer.name != "start":
            self.rounds.on_timer(timer)
        elif self.in_state("briefing"):
            self._start_when_quiet(timer.due)

    def time_left(self) -> float | None:
        """Seconds left in the running or paused round; None when untimed or no round runs."""
        return self.rounds.time_left()

    def say_time_left(self, room: str) -> None:
        """Answer "how much time is left" in ``room``."""
        self.rounds.say_time_left(room)

    def pause_restored(self, remaining: float) -> None:
        """After a crash, pause the running round with the time it had when it died."""
        self.rounds.pause_restored(remaining)

    def snapshot(self) -> dict[str, Any]:
        """The state to journal."""
        return self.state.to_dict()
