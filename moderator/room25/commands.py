"""The rule of each Room 25 command: it checks (raising ``Refusal`` with the reason; nothing has changed) and
returns what applies it. Also the briefing and the answers to "how much time is left", "repeat" and "help"."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from moderator.game.actions import Refusal
from moderator.room25 import tracking, turns

if TYPE_CHECKING:
    from moderator.room25.engine import Room25Engine

Apply = Callable[[], None]
#: Commands that move the game on: refused while a reveal waits for its answer.
WAIT_FOR_REVEAL = frozenset({"programmed", "everyone_programmed", "done", "skip", "adrenaline", "escaped"})
#: Commands "undo" can take back, as long as the phase did not change.
UNDOABLE = frozenset({"programmed", "adrenaline", "done", "skip", "killed", "reached", "left", "identity"})


def check(eng: Room25Engine, intent: str, slots: dict[str, Any]) -> Apply:
    """The rule of ``intent``: what applies it, or ``Refusal`` with the reason."""
    if not eng.may(intent):
        raise Refusal("room25.refuse.not_now", action=eng.text(f"room25.action.{intent}"),
                      situation=eng.text(f"room25.situation.{eng.leaf()}"))
    if blocked(eng, intent):
        raise Refusal("room25.refuse.reveal_first", player=eng.state.pending[0][0])
    return _RULES[intent](eng, slots)


def blocked(eng: Room25Engine, intent: str) -> bool:
    """True when ``intent`` must wait for a required reveal's answer."""
    return bool(eng.state.pending) and intent in WAIT_FOR_REVEAL


def briefing(eng: Room25Engine) -> list[tuple[str, dict[str, Any]]]:
    """What the moderator says before the first turn: the game, the countdown, the tiles, the first look."""
    plan, s = eng.state.plan, eng.state
    said: list[tuple[str, dict[str, Any]]] = [
        (f"room25.briefing.{plan['mode']}", {"characters": len(s.players), "turns": plan["turns"],
                                              "guards": plan["guards"]}),
        ("room25.setup.start", {}),
    ]
    if plan["tiles"]:
        said.append((plan["tiles"], {}))
    else:
        said.append(("room25.tiles.none", {"characters": len(s.players)}))
    said += [("room25.setup.first_look", {}), ("room25.setup.order", {"order": eng.names(s.order)})]
    return said


def _start(eng: Room25Engine, slots: dict[str, Any]) -> Apply:
    return eng.start_game


def _programmed(eng: Room25Engine, slots: dict[str, Any]) -> Apply:
    if "player" not in slots:
        raise Refusal("room25.refuse.who_programmed")
    player = str(slots["player"])
    if player in eng.state.dead:
        raise Refusal("room25.refuse.dead", player=player)
    if player in eng.state.programmed:
        raise Refusal("room25.refuse.already_programmed", player=player)

    def apply() -> None:
        eng.state.programmed.append(player)
        if left := turns.waiting(eng):
            eng.say("room25.programmed", player=player, players=left)
        else:
            turns.end_programming(eng)

    return apply


def _everyone(eng: Room25Engine, slots: dict[str, Any]) -> Apply:
    def apply() -> None:
        eng.state.programmed = list(eng.state.order)
        turns.end_programming(eng)

    return apply


def _done(eng: Room25Engine, slots: dict[str, Any], *, skipped: bool = False) -> Apply:
    def apply() -> None:
        player = eng.state.acting.pop(0)
        if skipped:
            eng.say("room25.skipped", player=player)
        turns.call_next(eng)

    return apply


def _adrenaline(eng: Room25Engine, slots: dict[str, Any]) -> Apply:
    s = eng.state
    player = str(slots["player"])
    if player in s.dead:
        raise Refusal("room25.refuse.dead", player=player)
    if player in s.adrenaline:
        raise Refusal("room25.refuse.adrenaline_twice", player=player)
    if player in s.adrenaline_used:
        raise Refusal("room25.refuse.adrenaline_used", player=player, turn=s.adrenaline_used[player])

    def apply() -> None:
        s.adrenaline.append(player)
        s.adrenaline_used[player] = s.turn  # "The adrenaline token is then lost", whatever happens to the action
        eng.say("room25.adrenaline", player=player)

    return apply


def _pause(eng: Room25Engine, slots: dict[str, Any]) -> Apply:
    if eng.programming.seconds is None:
        raise Refusal("room25.refuse.no_timer")

    def apply() -> None:
        eng.programming.pause()
        eng.fire("pause")
        eng.say("room25.paused", time=eng.catalog.duration(eng.programming.time_left() or 0))

    return apply


def _resume(eng: Room25Engine, slots: dict[str, Any]) -> Apply:
    def apply() -> None:
        eng.fire("resume")
        eng.programming.resume()
        eng.say("room25.resumed", time=eng.catalog.duration(eng.programming.time_left() or 0))

    return apply


def _time(eng: Room25Engine, slots: dict[str, Any]) -> Apply:
    def apply() -> None:
        s = eng.state
        if s.turn:
            eng.say("room25.time.turns", turn=s.turn, turns=s.turns, left=eng.count("turn", s.turns - s.turn + 1))
        left = eng.programming.time_left()
        if left is not None:
            eng.say("room25.time.programming", time=eng.catalog.duration(left))

    return apply


def _repeat(eng: Room25Engine, slots: dict[str, Any]) -> Apply:
    def apply() -> None:
        if eng.state.last_said:
            key, text = eng.state.last_said
            eng.say(key, _text=text)

    return apply


def _help(eng: Room25Engine, slots: dict[str, Any]) -> Apply:
    def apply() -> None:
        useful = [i for i in eng.allowed_intents() if i not in ("time", "repeat", "help", "undo")][:5]
        player = (eng.state.order or eng.state.players)[0]  # the examples name someone of this game
        eng.say("room25.help", commands=[eng.text(f"room25.example.{i}", player=player) for i in useful])

    return apply


def _undo(eng: Room25Engine, slots: dict[str, Any]) -> Apply:
    if not eng.history:
        raise Refusal("room25.refuse.nothing_to_undo")
    return eng.undo


_RULES: dict[str, Callable[[Room25Engine, dict[str, Any]], Apply]] = {
    "start": _start,
    "programmed": _programmed,
    "everyone_programmed": _everyone,
    "done": _done,
    "skip": lambda eng, slots: _done(eng, slots, skipped=True),
    "adrenaline": _adrenaline,
    "killed": tracking.killed,
    "reached": tracking.reached,
    "left": tracking.left,
    "identity": tracking.identity,
    "escaped": tracking.escaped,
    "pause": _pause,
    "resume": _resume,
    "time": _time,
    "repeat": _repeat,
    "help": _help,
    "undo": _undo,
}
