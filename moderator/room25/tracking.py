"""What the moderator keeps track of in Room 25 and the rules it knows (seeds/004, "Winning conditions" and
"Identity reveals"): deaths, Room 25, the reveals they call for, and whether "we escaped" holds.

Each command's rule checks first (raising ``Refusal`` with the reason, nothing changed) and returns what applies it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from moderator.game.actions import Refusal
from moderator.room25 import turns
from moderator.room25.events import Revealed, RevealRequired, Tracked

if TYPE_CHECKING:
    from moderator.room25.engine import Room25Engine

Apply = Callable[[], None]


def _living(eng: Room25Engine, slots: dict[str, Any]) -> str:
    player = str(slots["player"])
    if player in eng.state.dead:
        raise Refusal("room25.refuse.dead", player=player)
    return player


def killed(eng: Room25Engine, slots: dict[str, Any]) -> Apply:
    """ "Ann is dead", "Ann was killed"."""
    player = _living(eng, slots)

    def apply() -> None:
        s = eng.state
        calling = bool(s.acting) and s.acting[0] == player
        s.dead.append(player)
        for group in (s.order, s.acting, s.in_room25, s.adrenaline, s.programmed):
            if player in group:
                group.remove(player)
        eng.emit(Tracked(player, "dead"))
        eng.say("room25.dead", player=player)
        if eng.state.plan["mode"] == "cooperation":
            if len(s.dead) >= 2:  # every character is a prisoner: no reveal is needed to know it
                eng.finish("guards", "two_prisoners_killed")
                return
        elif len(s.dead) >= 2:
            _ask_next_dead(eng, "second_death" if len(s.dead) == 2 else "another_death")
        _masks(eng)
        if calling:
            turns.call_next(eng)

    return apply


def reached(eng: Room25Engine, slots: dict[str, Any]) -> Apply:
    """ "Ann reached room 25"."""
    player = _living(eng, slots)
    if player in eng.state.in_room25:
        raise Refusal("room25.refuse.already_in", player=player)

    def apply() -> None:
        eng.state.in_room25.append(player)
        eng.emit(Tracked(player, "reached"))
        eng.say("room25.reached", player=player, players=eng.names(eng.state.in_room25))
        _masks(eng)

    return apply


def left(eng: Room25Engine, slots: dict[str, Any]) -> Apply:
    """ "Ann left room 25"."""
    player = _living(eng, slots)
    if player not in eng.state.in_room25:
        raise Refusal("room25.refuse.not_in", player=player)

    def apply() -> None:
        eng.state.in_room25.remove(player)
        eng.emit(Tracked(player, "left"))
        eng.say("room25.left", player=player)

    return apply


def _require(eng: Room25Engine, player: str, reason: str) -> None:
    """Ask ``player`` to reveal their identity, for ``reason``."""
    eng.state.pending.append([player, reason])
    eng.emit(RevealRequired(player, reason))
    eng.say(f"room25.reveal.{reason}", player=player, first=eng.state.dead[0] if eng.state.dead else player)


def _ask_next_dead(eng: Room25Engine, reason: str) -> None:
    """The first killed character whose identity is still secret must reveal it (after a second death; after a
    later one, the same chain: docs/decisions.md)."""
    s = eng.state
    asked = {p for p, _ in s.pending}
    secret = [p for p in s.dead if p not in s.identities and p not in asked]
    if secret:
        _require(eng, secret[0], reason)


def _masks(eng: Room25Engine) -> None:
    """ "Take off the masks": with one guard, the last character out of Room 25 reveals; with two guards, the last
    two. Characters inside keep their identity secret."""
    s = eng.state
    if s.plan["mode"] != "suspicion" or s.winner is not None:
        return
    outside = [p for p in s.order if p not in s.in_room25]
    if not 0 < len(outside) <= int(s.plan["guards"]):
        return
    asked = {p for p, _ in s.pending}
    for player in outside:
        if player not in s.identities and player not in asked:
            _require(eng, player, "masks")


def identity(eng: Room25Engine, slots: dict[str, Any]) -> Apply:
    """ "Ann is a prisoner" / "Ann is a guard", the answer to a required reveal; it applies the rule chain."""
    s = eng.state
    player, side = str(slots["player"]), str(slots["side"])
    reasons = {p: r for p, r in s.pending}
    if player not in reasons:
        raise Refusal("room25.refuse.no_reveal", player=player)
    guards = [p for p, who in s.identities.items() if who == "guard"]
    if side == "guard" and len(guards) >= int(s.plan["guards"]):
        raise Refusal("room25.refuse.too_many_guards", players=guards)

    def apply() -> None:
        s.pending = [[p, r] for p, r in s.pending if p != player]
        s.identities[player] = side
        eng.emit(Revealed(player, side))
        eng.say(f"room25.revealed.{side}", player=player)
        if reasons[player] != "masks":
            _after_death_reveal(eng, player, side)
        if s.winner is None and not s.pending:
            eng.say("room25.goes_on")
            turns.call_next(eng)

    return apply


def _after_death_reveal(eng: Room25Engine, player: str, side: str) -> None:
    """A killed character revealed: two prisoners killed is the guards' win; one more prisoner means the next
    killed character reveals too; a guard ends the chain ("If the 1st character is a guard, the game continues")."""
    s = eng.state
    if side != "prisoner":
        return
    if sum(1 for p in s.dead if s.identities.get(p) == "prisoner") >= 2:
        eng.finish("guards", "two_prisoners_killed")
        return
    _ask_next_dead(eng, "first_killed_prisoner" if len(s.dead) == 2 else "earlier_killed_prisoner")


def escaped(eng: Room25Engine, slots: dict[str, Any]) -> Apply:
    """ "We escaped": every prisoner in Room 25 (guards may stay out of it, and with two or more inside), or, on the
    countdown's last turn in suspicion mode, all but one prisoner. Otherwise refused with the reason."""
    s = eng.state
    inside = [p for p in s.in_room25 if p not in s.dead]
    if len(inside) < 2:
        raise Refusal("room25.refuse.escape_alone")
    # The moderator knows a guard only once revealed: anyone else outside Room 25 may be a prisoner.
    missing = [p for p in s.players if p not in inside and s.identities.get(p) != "guard"]
    last = s.turn >= s.turns
    if len(missing) == 1 and s.plan["mode"] == "suspicion" and not last:
        raise Refusal("room25.refuse.escape_last_turn", player=missing[0])
    if missing and not (len(missing) == 1 and s.plan["mode"] == "suspicion"):
        raise Refusal("room25.refuse.escape_missing", players=missing)

    def apply() -> None:
        eng.finish("prisoners", "escaped_last_turn" if missing else "escaped", trigger="escape")

    return apply
