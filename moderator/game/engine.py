"""The game engine: commands and timers in, events and announcements out. Pure: time comes from a Clock."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from moderator.game import actions
from moderator.game.actions import Refusal
from moderator.game.round_clock import RoundClock
from moderator.game.rules import GamePlan
from moderator.game.state import ROOMS, GameState, RoomState
from moderator.game.statechart import SEP, Statechart, load_statechart
from moderator.ports import Announcer, Clock
from moderator.settings import Schedule
from moderator.speech.catalog import Catalog
from moderator.speech.grammar import Grammar, NoParse, Parsed
from moderator.timers import Scheduler, Timer

Event = dict[str, Any]
Listener = Callable[[Event], None]

_ACTIONS: dict[str, Callable[..., actions.Apply]] = {
    "start": lambda eng, slots, room: eng.start_game,
    "appoint": actions.appoint,
    "appoint_you": actions.appoint_you,
    "name_answer": actions.name_answer,
    "room_answer": actions.room_answer,
    "offer": actions.offer,
    "accept": partial(actions.answer_offer, accepted=True),
    "refuse": partial(actions.answer_offer, accepted=False),
    "usurp": actions.usurp,
    "ready": actions.ready,
    "hostages": actions.hostages,
    "met": actions.met,
    "pause": lambda eng, slots, room: eng.pause,
    "resume": lambda eng, slots, room: eng.resume,
    "time": partial(actions.query, intent="time"),
    "repeat": partial(actions.query, intent="repeat"),
    "help": partial(actions.query, intent="help"),
    "undo": lambda eng, slots, room: eng.check_undo(),
    "confirm": lambda eng, slots, room: eng.confirm(slots, room),
    "predict": actions.predict,
    "reveal": actions.reveal,
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


class Engine(RoundClock):
    """Runs one game. Feed it commands (``handle_text``) and time (``tick``); listen to its events."""

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
        self.state = state
        self.read_back = read_back
        #: True while the command being applied should be read back before it locks.
        self.reading_back = False
        self.clock = clock
        self.grammar = grammar
        self.catalog = catalog
        self.chart = chart or load_statechart()
        self.schedule = schedule or Schedule()
        self.announcer = announcer
        self.flow = _Flow()
        # Guard of the statechart's prediction -> reveal transition.
        self.flow.gambler_may_be_buried = lambda: bool(self.state.plan["buried"])  # type: ignore[attr-defined]
        self.chart.build(self.flow, initial=state.machine)
        self.timers = Scheduler()
        self.version = 0
        #: While a timer fires: its due time, added to the announcements it causes as ``scheduled``.
        self._scheduled: float | None = None
        self._last_t = float("-inf")
        #: The room of the command being applied (None: not known), for the answers that depend on it.
        self._asking: str | None = None
        self._listeners: list[Listener] = []
        self._undo: list[GameState] = []
        self._schedule_round()

    @classmethod
    def new(cls, plan: GamePlan, rooms: dict[str, Sequence[str]], **kwargs: Any) -> Engine:
        """A game in set-up with the given plan and rooms."""
        players = [p for r in ROOMS for p in rooms[r]]
        state = GameState(
            players=players,
            rooms={r: RoomState(members=list(rooms[r])) for r in ROOMS},
            plan=plan.to_dict(),
        )
        return cls(state, **kwargs)

    # --- events ----------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> None:
        """Call ``listener`` with every event from now on."""
        self._listeners.append(listener)

    def emit(self, type_: str, **fields: Any) -> Event:
        """Send an event to every listener."""
        # A timer handled ahead of time (tick's look-ahead) logs its own time; the log never goes backwards.
        now = self.clock.now() if self._scheduled is None else max(self.clock.now(), self._scheduled)
        self._last_t = max(self._last_t, now)
        event: Event = {"t": round(self._last_t, 3), "type": type_, **fields}
        self.version += 1
        for listener in self._listeners:
            listener(event)
        return event

    @property
    def last_t(self) -> float:
        """The time of the last event emitted."""
        return self._last_t

    def text(self, key: str, /, **slots: Any) -> str:
        """A phrase of the catalogue."""
        return self.catalog.render(key, **slots)

    def say(self, room: str, key: str, /, _text: str | None = None, **slots: Any) -> None:
        """Announce a phrase in room A, B or both."""
        text = _text if _text is not None else self.text(key, **slots)
        for where in (ROOMS if room == "both" else (room,)):
            self.state.last_said[where] = [key, text]
        self.state.last_said["both"] = [key, text]
        extra = {} if self._scheduled is None else {"scheduled": round(self._scheduled, 3)}
        self.emit("announce", room=room, key=key, text=text, **extra)
        if self.announcer is not None:
            self.announcer.announce(room, key, text, self._scheduled)

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
                self.emit("state", state=name)

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
            self.emit("state", state=self.chart.initial)
            self.fire("deal")
            self.say("both", "briefing", _text=self.briefing_text())

    def briefing_text(self) -> str:
        """What the moderator says first: the players, the rounds and the rooms."""
        return self.text("briefing", players=len(self.state.players), rounds=len(self.state.plan["rounds"]),
                         room_a=self.names(self.state.rooms["A"].members),
                         room_b=self.names(self.state.rooms["B"].members))

    def phase(self) -> tuple[int, str]:
        """The round and the top-level state: an answer about "now" is stale once this changes."""
        leaf = self.flow.state[0] if isinstance(self.flow.state, list) else self.flow.state
        return self.state.round, leaf.split(SEP)[0]

    def handle_text(self, text: str, room: str | None = None, *, spoken: bool = False) -> bool:
        """Parse a typed line or transcript (``spoken``) and apply it. Returns True when accepted."""
        parsed = self.grammar.parse(text, self.state.players)
        if isinstance(parsed, NoParse):
            self._reject(room, text, "refuse.parse", {"reason": parsed.reason}, intent=None)
            return False
        return self.handle(parsed, room, spoken=spoken)

    def handle(self, parsed: Parsed, room: str | None = None, *, spoken: bool = False) -> bool:
        """Apply a parsed command heard in ``room`` (None: a shared input). True when accepted."""
        saved = self.state.copy()
        self.reading_back = self.read_back == "always" or (self.read_back == "spoken" and spoken)
        try:
            where = actions.room_of_command(self, parsed.intent, parsed.slots, room)
            trigger = self.chart.intents[parsed.intent].format(room=where or "A")
            if not self.flow.may_trigger(trigger):  # type: ignore[attr-defined]
                raise self._not_now(parsed.intent, where)
            apply = _ACTIONS[parsed.intent](self, parsed.slots, where)
        except Refusal as refusal:
            self.state = saved
            self._reject(room, parsed.text, refusal.key, refusal.slots, intent=parsed.intent)
            return False
        undoable = parsed.intent in _UNDOABLE or (parsed.intent == "hostages" and self.reading_back)
        if undoable:
            self._undo.append(saved)
        self.emit("command", room=where or "both", intent=parsed.intent, slots=parsed.slots, text=parsed.text)
        self._asking = where
        apply()
        if not undoable and parsed.intent not in ("time", "repeat", "help", "undo"):
            self._undo.clear()
        return True

    def _reject(self, room: str | None, text: str, key: str, slots: dict[str, Any], *, intent: str | None) -> None:
        reason = self.text(key, **slots)
        self.emit("rejected", room=room or "both", text=text, reason=reason, key=key, intent=intent)
        self.say(room or "both", key, _text=reason)

    def _not_now(self, intent: str, room: str | None) -> Refusal:
        if intent == "hostages" and room and self.state.rooms[room].hostages is not None:
            locked = self.state.rooms[room].hostages or []
            return Refusal("refuse.hostages_locked", room=room, players=self.names(locked))
        leaf = self.flow.state[0] if isinstance(self.flow.state, list) else self.flow.state
        top = leaf.split(SEP)[0]
        situation = self.text(f"situation.{leaf if top == 'round' else top}")
        return Refusal("refuse.not_now", action=self.text(f"action.{intent}"), situation=situation)

    def allowed_intents(self) -> list[str]:
        """The intents that fit the current phase (what a recognizer should listen for now)."""
        asked = self.state.asked_room or any(r.asked_leader for r in self.state.rooms.values())
        hidden = (set() if asked else {"name_answer", "room_answer"}) | (
            set() if any(r.pending for r in self.state.rooms.values()) else {"confirm"})
        return [
            intent for intent, trigger in self.chart.intents.items()
            if intent not in hidden
            and any(self.flow.may_trigger(trigger.format(room=r)) for r in ROOMS)  # type: ignore[attr-defined]
        ]

    def help_text(self, room: str | None = None) -> str:
        """Example phrasings of the 3 to 5 commands that fit now, most useful first, for ``room`` (default:
        the room of the command being applied; None: either room)."""
        return self.catalog.join([self.text(f"example.{i}") for i in self.helpful_intents(room or self._asking)])

    def helpful_intents(self, room: str | None = None) -> list[str]:
        """The 3 to 5 intents most worth suggesting now in ``room`` (None: either room), best first: the
        answer the moderator waits for, then what moves the game on, then questions; fewer when fewer fit."""
        s = self.state
        rooms = [s.rooms[room]] if room in ROOMS else list(s.rooms.values())
        led, timed = all(r.leader is not None for r in rooms), s.deadline is not None
        wanted = [intent for intent, waiting in (
            ("confirm", any(r.pending for r in rooms)), ("room_answer", s.asked_room),
            ("name_answer", any(r.asked_leader for r in rooms))) if waiting]
        if self.in_state("round.running"):
            offer = any(r.offer for r in rooms)
            wanted += (["accept", "refuse"] if offer else []) + ([] if led else ["appoint"])
            wanted += ["time", "pause"] if timed else (["ready"] if led else []) + ["pause"]
            wanted += ([] if offer or not led else ["offer"]) + (["usurp"] if led else [])
        elif self.in_state("round.paused"):
            wanted += ["resume", "time"]
        elif self.in_state("hostages"):
            wanted += ([] if led else ["appoint"]) + ["hostages", "time"]
        else:
            wanted += ["start", "met", "predict", "reveal"]
        wanted += ["undo"] if self._undo else []
        fits = set(self.allowed_intents())
        if room in ROOMS:  # what only the other room may do now is no help here
            fits = {i for i in fits
                    if self.flow.may_trigger(self.chart.intents[i].format(room=room))}  # type: ignore[attr-defined]
        chosen = list(dict.fromkeys(i for i in wanted if i in fits))
        chosen += [i for i in ("repeat", "help") if i in fits and i not in chosen][: max(0, 3 - len(chosen))]
        return chosen[:5]

    # --- game steps --------------------------------------------------------------------------

    def set_leader(self, room: str, player: str, how: str) -> None:
        """Make ``player`` the leader of ``room``."""
        state = self.state.rooms[room]
        state.leader, state.offer, state.no_giveback, state.asked_leader = player, None, None, False
        self.emit("leader", room=room, player=player, how=how)
        self.say(room, f"leader.{how}", player=player, room=room)

    def start_game(self) -> None:
        """ "start the game": round 1 begins as soon as the moderator has finished speaking (the briefing).

        With an announcer that knows when it will be quiet (``idle_at()``, the Speaker), a timer starts round
        1 then; without one (text), it starts now.
        """
        self.timers.cancel("start")
        at = self._quiet_at(self.clock.now())
        if at is None:
            self._round_one()
        else:
            self.timers.at(at if at != float("inf") else self.clock.now() + _RECHECK, "start", group="start")

    def _quiet_at(self, moment: float) -> float | None:
        """When the announcer will have finished speaking, if that is after ``moment`` (None: by then)."""
        idle_at = getattr(self.announcer, "idle_at", None)
        at = None if idle_at is None else idle_at()
        return at if at is not None and at > max(moment, self.clock.now()) + 1e-6 else None

    def _round_one(self) -> None:
        self.fire("start")
        self._start_round(1)

    def _fire_timer(self, timer: Timer) -> None:
        if timer.name != "start":
            super()._fire_timer(timer)
        elif self.in_state("briefing"):
            at = self._quiet_at(timer.due)
            if at is None:
                self._round_one()
            else:  # more was said meanwhile, or a phrase is still rendering (inf)
                # Later than the timer itself, so a tick handling timers ahead of time cannot loop on it.
                self.timers.at(at if at != float("inf") else timer.due + _RECHECK, "start", group="start")

    def round_seconds(self) -> int | None:
        """The current round's duration (None in the no-timer variant)."""
        return self._round_spec()["seconds"]

    def hostages_due(self) -> int:
        """Hostages each room sends this round."""
        return int(self._round_spec()["hostages"])

    def _round_spec(self) -> dict[str, Any]:
        return self.state.plan["rounds"][max(self.state.round, 1) - 1]

    def last_round(self) -> bool:
        """True in the game's final round."""
        return self.state.round >= len(self.state.plan["rounds"])

    def _start_round(self, number: int) -> None:
        s = self.state
        s.round, s.fired, s.remaining = number, [], None
        for room in s.rooms.values():
            room.no_giveback, room.offer, room.ready = None, None, False
        seconds = self.round_seconds()
        # Round 1 may start from a timer (after the briefing), handled a little ahead: its own time counts.
        now = self.clock.now() if self._scheduled is None else self._scheduled
        s.deadline = None if seconds is None else now + seconds
        due = self.hostages_due()
        self.emit("round_start", round=number, seconds=seconds, hostages={r: due for r in ROOMS})
        self._schedule_round()
        if seconds is None:
            self.say("both", "round.start_untimed", round=number, hostages=self.count("hostage", due))
        else:
            self.say("both", "round.start", round=number, duration=self.catalog.duration(seconds),
                     hostages=self.count("hostage", due))

    def round_over(self) -> None:
        """Time is up (or both rooms are ready): hostage selection."""
        self.timers.cancel("round")
        self.state.deadline = self.state.remaining = None
        for room in self.state.rooms.values():
            room.offer = None
        self._undo.clear()
        self.fire("time_up")
        self.emit("round_end", round=self.state.round)
        self.say("both", "time.over", round=self.state.round)
        due = self.count("hostage", self.hostages_due())
        for name, room in self.state.rooms.items():
            if room.leader is None:
                self.say(name, "hostages.no_leader", room=name, hostages=due)
            else:
                self.say(name, "hostages.due", room=name, leader=room.leader, hostages=due)

    def read_back_hostages(self, room: str, players: list[str]) -> None:
        """Say a heard hostage choice back; it locks on "yes" (``confirm``)."""
        self.state.rooms[room].pending = players
        self.state.awaiting = room
        self.say(room, "hostages.read_back", room=room, players=self.names(players))

    def lock_hostages(self, room: str, players: list[str]) -> None:
        """Lock a room's hostage choice; when both are locked, send the leaders to parley."""
        self.state.rooms[room].hostages = players
        self.state.rooms[room].pending = None
        if self.state.awaiting == room:
            self.state.awaiting = None
        self.fire(f"hostages_{room}")
        self.emit("hostages", room=room, players=players)
        self.say(room, "hostages.locked", players=self.names(players))
        if all(r.hostages is not None for r in self.state.rooms.values()):
            self.fire("all_locked")
            self.say("both", "parley.last" if self.last_round() else "parley")

    def leaders_met(self) -> None:
        """The parley is over: start the next round's timer, then exchange the hostages."""
        self.fire("met")
        last = self.last_round()
        if not last:
            self._start_round(self.state.round + 1)
        rooms = self.state.rooms
        to_a, to_b = list(rooms["B"].hostages or []), list(rooms["A"].hostages or [])
        rooms["A"].members = [p for p in rooms["A"].members if p not in to_b] + to_a
        rooms["B"].members = [p for p in rooms["B"].members if p not in to_a] + to_b
        for r in rooms.values():
            r.hostages = None
        self.emit("exchange", to_A=to_a, to_B=to_b)
        self.say("both", "exchange")
        # One line per hostage, said in the room they leave: each can be rendered before the game.
        for player in to_b:
            self.say("A", "exchange.player", player=player, room="B")
        for player in to_a:
            self.say("B", "exchange.player", player=player, room="A")
        if not last:
            self.fire("next_round")
            return
        self.fire("end_game")
        self.emit("game_over", rooms={r: list(rooms[r].members) for r in ROOMS})
        self.say("both", "game.over")
        if self.state.plan["deck"].get("gambler"):
            self.fire("ask_gambler")
            self.say("both", "reveal.gambler_buried" if self.state.plan["buried"] else "reveal.gambler")
        else:
            self.fire("ask_reveal")
            self.say("both", "reveal.everyone")

    def decide(self) -> None:
        """Both cards are known: announce the winner."""
        s = self.state
        where_p, where_b = s.room_of(s.president or ""), s.room_of(s.bomber or "")
        s.winner = "red" if where_p == where_b else "blue"
        result: dict[str, Any] = {"winner": s.winner, "president": s.president, "bomber": s.bomber,
                                  "rooms": {r: list(s.rooms[r].members) for r in ROOMS}}
        if s.prediction is not None:
            result["gambler"] = "right" if s.prediction == s.winner else "wrong"
        self.fire("decide")
        self.emit("result", **result)
        key = "result.red" if s.winner == "red" else "result.blue"
        self.say("both", key, president=s.president, bomber=s.bomber, room_p=where_p, room_b=where_b)
        if s.prediction is not None:
            self.say("both", f"result.gambler_{result['gambler']}", team=self.text(f"team.{s.prediction}"))

    def check_undo(self) -> actions.Apply:
        """Refuse "undo" when nothing can be taken back; else return the undo."""
        if not self._undo:
            raise Refusal("refuse.nothing_to_undo")
        return self.undo

    def undo(self) -> None:
        """Take back the last change that is not locked."""
        before = self.state
        self.state = self._undo.pop()
        self.state.last_said = before.last_said
        self.emit("undo")
        for room in ROOMS:
            if self.state.rooms[room].leader != before.rooms[room].leader:
                self.emit("leader", room=room, player=self.state.rooms[room].leader, how="undone")
        self.say("both", "undone")

    def confirm(self, slots: dict[str, Any], room: str | None) -> actions.Apply:
        """ "yes"/"no": answers the read-back of ``room``'s hostages (a shared mic: the last one read back)."""
        room = room or self.state.awaiting
        players = self.state.rooms[room].pending if room is not None else None
        if room is None or players is None:
            raise Refusal("refuse.nothing_to_confirm")
        if slots["answer"] == "yes":
            return lambda: self.lock_hostages(room, players)

        def choose_again() -> None:
            self.state.rooms[room].pending = None
            self.state.awaiting = None
            self.say(room, "hostages.again", room=room, hostages=self.count("hostage", self.hostages_due()))
        return choose_again

    def snapshot(self) -> dict[str, Any]:
        """The state to journal."""
        return self.state.to_dict()

