"""The rules of each command: check first (raising ``Refusal``), then return the change to apply.

Every rule here takes the game (anything with what ``Game`` lists: the Engine),
the command's slots and its room, and either raises ``Refusal`` (nothing has
changed) or returns a zero-argument callable that applies the change. The
engine emits the ``command`` event between the two, so the log reads command
first, consequences after. The end of a round's rules are in ``round_end``, the reveal's in ``reveal``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Protocol

from moderator.game.catalogue import outside_rooms
from moderator.game.events import Event
from moderator.game.round_clock import RoundClock
from moderator.game.state import GameState, RoomState, other
from moderator.speech.grammar import NAME_SLOTS

Apply = Callable[[], None]
Slots = dict[str, Any]


class Game(Protocol):
    """What the rules need from the game they judge; the Engine implements it (its docstrings say more)."""

    state: GameState
    rounds: RoundClock
    #: True while the command being applied is to be read back before it locks (a spoken hostage choice).
    reading_back: bool
    #: True while the command being applied was typed by the host at a live game's keyboard.
    by_host: bool

    def can_undo(self, room: str | None = None) -> bool: ...
    def undo(self, room: str | None = None) -> None: ...
    def emit(self, event: Event) -> dict[str, Any]: ...
    def say(self, room: str, key: str, /, _text: str | None = None, **slots: Any) -> None: ...
    def text(self, key: str, /, **slots: Any) -> str: ...
    def names(self, players: Sequence[str]) -> str: ...
    def count(self, word: str, n: int) -> str: ...
    def help_text(self, room: str | None = None) -> str: ...
    def fire(self, trigger: str) -> None: ...
    def in_state(self, name: str) -> bool: ...
    def set_leader(self, room: str, player: str, how: str) -> None: ...
    def start_round(self, number: int) -> None: ...
    def round_over(self) -> None: ...
    def reveal_next(self, *, first: bool = False) -> None: ...


class Refusal(Exception):
    """A command breaks a rule or does not fit now. ``key`` is a phrase id, ``slots`` fill it."""

    def __init__(self, key: str, **slots: Any) -> None:
        super().__init__(key)
        self.key = key
        self.slots = slots


def _room(eng: Game, room: str | None) -> RoomState:
    if room is None:
        raise Refusal("refuse.which_room")
    return eng.state.rooms[room]


def _in_room(eng: Game, player: str, room: str, key: str = "refuse.wrong_room") -> None:
    where = eng.state.room_of(player)
    if where != room:
        raise Refusal(key, player=player, their_room=where, room=room)


def _no_leader_yet(eng: Game, room: str) -> None:
    leader = eng.state.rooms[room].leader
    if leader is not None:
        raise Refusal("refuse.has_leader", room=room, leader=leader)


def known_card(eng: Game, player: str) -> str | None:
    """The card ``player`` holds, when the moderator knows it (the advanced game: the deal, or a public reveal)."""
    s = eng.state
    return (s.cards or {}).get(player) or s.public.get(player)


def outside(eng: Game, player: str) -> bool:
    """True for an Ambassador the moderator knows of: part of no room (``catalogue.outside_rooms``)."""
    card = known_card(eng, player)
    return card is not None and outside_rooms(card)


def voters(eng: Game, room: str) -> list[str]:
    """The room's players who count in a vote: not an Ambassador the moderator knows of."""
    return [p for p in eng.state.rooms[room].members if not outside(eng, p)]


def _not_an_ambassador(eng: Game, player: str) -> None:
    if outside(eng, player):
        raise Refusal("refuse.ambassador_leader", player=player)


# --- leaders -------------------------------------------------------------------------------


def appoint(eng: Game, slots: Slots, room: str | None) -> Apply:
    """A first leader, appointed by another player of the room."""
    _room(eng, room)
    assert room is not None
    player, by = slots["player"], slots.get("by")
    _no_leader_yet(eng, room)
    _in_room(eng, player, room)
    _not_an_ambassador(eng, player)
    if by is not None:
        if by == player:
            raise Refusal("refuse.self_appoint", player=player)
        _in_room(eng, by, room)
    return lambda: eng.set_leader(room, player, "appointed")


def appoint_you(eng: Game, slots: Slots, room: str | None) -> Apply:
    """ "I appoint you as leader": ask which room (shared mic), then who."""
    if room is None:
        def ask_room() -> None:
            eng.state.asked_room = True
            eng.say("both", "ask.which_room")
        return ask_room
    _no_leader_yet(eng, room)

    def ask_name() -> None:
        eng.state.rooms[room].asked_leader = True
        eng.say(room, "ask.who_leader", room=room)
    return ask_name


def room_answer(eng: Game, slots: Slots, room: str | None) -> Apply:
    """ "room A", the answer to "Which room?"."""
    if not eng.state.asked_room:
        raise Refusal("refuse.not_asked")
    target = slots["room"]
    _no_leader_yet(eng, target)

    def apply() -> None:
        eng.state.asked_room = False
        eng.state.rooms[target].asked_leader = True
        eng.say(target, "ask.who_leader", room=target)
    return apply


def name_answer(eng: Game, slots: Slots, room: str | None) -> Apply:
    """A bare name, the answer to "Who is the new leader of room A?"."""
    player = slots["player"]
    asked = [r for r, s in eng.state.rooms.items() if s.asked_leader and (room is None or r == room)]
    if not asked:
        raise Refusal("refuse.not_asked_name", player=player)
    # Both rooms asked: the name says which; one room asked: the name must be of that room.
    target = asked[0] if len(asked) == 1 else eng.state.room_of(player)
    assert target is not None  # roster names always have a room
    _in_room(eng, player, target)
    _not_an_ambassador(eng, player)
    _no_leader_yet(eng, target)
    return lambda: eng.set_leader(target, player, "appointed")


def _not_ready(state: RoomState, room: str | None) -> None:
    """No-timer variant: a room whose leader said it is ready changes nothing more this round."""
    if state.ready:
        raise Refusal("refuse.room_ready", room=room)


def _not_a_hostage(state: RoomState, player: str) -> None:
    """No-timer variant: once the room's hostages are named, none of them can become its leader; nor while a choice
    naming them waits for its "yes" (read back), which would lock a leader as a hostage."""
    if any(chosen and player in chosen for chosen in (state.hostages, state.pending)):
        raise Refusal("refuse.hostage_cannot_lead", player=player)


def offer(eng: Game, slots: Slots, room: str | None) -> Apply:
    """Abdication: the leader offers leadership to a player of the room."""
    leader, player = slots["leader"], slots["player"]
    state = _room(eng, room)
    _not_ready(state, room)
    assert room is not None
    if state.leader != leader:
        if state.leader is None:
            raise Refusal("refuse.no_leader", room=room)
        raise Refusal("refuse.not_leader", player=leader, room=room, leader=state.leader)
    _in_room(eng, player, room)
    _not_an_ambassador(eng, player)
    if player == leader:
        raise Refusal("refuse.offer_self", player=player)
    if state.offer is not None:
        raise Refusal("refuse.offer_open", leader=state.offer[0], player=state.offer[1])
    if state.no_giveback == [leader, player]:
        raise Refusal("refuse.givesy_backsy", leader=leader, player=player)
    _not_given_up(eng, state, player)
    _not_a_hostage(state, player)

    def apply() -> None:
        state.offer = [leader, player]
        eng.say(room, "offer.made", leader=leader, player=player)
    return apply


def _not_given_up(eng: Game, state: RoomState, player: str) -> None:
    """The newer edition's "no givesy-backsies" (``givesy_backsies: fr``): who handed the leadership over this round
    cannot become leader again before the next round, by an offer or by a vote."""
    if eng.state.plan.get("givesy_backsies", "en") == "fr" and player in state.gave_up:
        raise Refusal("refuse.gave_up", player=player)


def answer_offer(eng: Game, slots: Slots, room: str | None, accepted: bool) -> Apply:
    """The offered player accepts or refuses."""
    player = slots["player"]
    state = _room(eng, room)
    _not_ready(state, room)
    assert room is not None
    if state.offer is None or state.offer[1] != player:
        raise Refusal("refuse.no_offer", player=player)
    if accepted:
        # The offer may predate the hostages: named since, the player can still refuse it, but not take the lead.
        _not_a_hostage(state, player)
    giver = state.offer[0]

    def apply() -> None:
        state.offer = None
        if accepted:
            eng.set_leader(room, player, "abdicated")
            state.no_giveback = [player, giver]
            state.gave_up += [] if giver in state.gave_up else [giver]
        else:
            eng.say(room, "offer.refused", player=player, leader=giver)
    return apply


def usurp(eng: Game, slots: Slots, room: str | None) -> Apply:
    """More than half of the room points at one player, who becomes leader."""
    votes, player = int(slots["votes"]), slots["player"]
    state = _room(eng, room)
    _not_ready(state, room)
    assert room is not None
    _in_room(eng, player, room)
    size = len(voters(eng, room))
    if state.leader is None:
        raise Refusal("refuse.usurp_no_leader", room=room)
    if state.leader == player:
        raise Refusal("refuse.already_leader", player=player, room=room)
    if votes > size:
        raise Refusal("refuse.too_many_votes", votes=votes, room=room, size=size)
    if votes * 2 <= size:
        raise Refusal("refuse.not_majority", votes=votes, room=room, size=size, needed=size // 2 + 1)
    _not_given_up(eng, state, player)
    _not_a_hostage(state, player)
    _not_an_ambassador(eng, player)
    return lambda: eng.set_leader(room, player, "usurped")


# --- questions and undo --------------------------------------------------------------------


def check_undo(eng: Game, slots: Slots, room: str | None) -> Apply:
    """ "undo": refused when nothing can be taken back; else the undo."""
    if not eng.can_undo(room):
        raise Refusal("refuse.nothing_to_undo")
    return partial(eng.undo, room)


def query(eng: Game, slots: Slots, room: str | None, intent: str) -> Apply:
    """Questions that change nothing: time left, repeat, help, what a card does."""
    where = room or "both"
    if intent == "time":
        return lambda: eng.rounds.say_time_left(where)
    if intent == "repeat":
        said = eng.state.last_said.get(where)
        if said is None:
            raise Refusal("refuse.nothing_to_repeat")
        return lambda: eng.say(where, said[0], _text=said[1])
    if intent == "explain":
        return lambda: eng.say(where, f"card.{slots['role']}.help")
    return lambda: eng.say(where, "help", commands=eng.help_text())


def names_said(slots: Slots) -> list[str]:
    """The players a command names, in the order its slots name them ("Bob appoints Alice": Bob, Alice)."""
    return [slots[key] for key in NAME_SLOTS if key in slots] + list(slots.get("players", ()))


def room_of_command(eng: Game, intent: str, slots: Slots, mic_room: str | None) -> str | None:
    """The room a command is about: the mic's room, else the room of the names said.

    Raises Refusal when names of both rooms are mixed, or a name is in the
    other room than the mic's.
    """
    names = list(slots.get("players", ())) if intent == "reveal" else names_said(slots)
    if intent in ("ready", "room_answer"):
        return slots["room"]
    if intent == "name_answer":
        # The room that was asked decides; name_answer checks the name against it.
        asked = [r for r, s in eng.state.rooms.items() if s.asked_leader]
        return mic_room if mic_room is not None or len(asked) != 1 else asked[0]
    if not names:
        return mic_room
    rooms = {eng.state.room_of(n) for n in names}
    if mic_room is None and len(rooms) > 1:
        a = [n for n in names if eng.state.room_of(n) == "A"]
        b = [n for n in names if eng.state.room_of(n) == "B"]
        raise Refusal("refuse.mixed_rooms", a=eng.names(a), b=eng.names(b))
    if mic_room is not None:
        for n in names:
            if eng.state.room_of(n) != mic_room:
                key = "refuse.hostage_wrong_room" if intent == "hostages" else "refuse.wrong_room"
                raise Refusal(key, player=n, their_room=other(mic_room), room=mic_room)
        return mic_room
    return rooms.pop()
