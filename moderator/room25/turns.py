"""A turn of Room 25 (seeds/004, "Gameplay"): programming, the two action phases, the Adrenaline round and the
countdown, each player called in turn order; the first player becomes the last at the end of each turn."""

from __future__ import annotations

from typing import TYPE_CHECKING

from moderator.room25.events import Phase, TurnStart

if TYPE_CHECKING:
    from moderator.room25.engine import Room25Engine

#: The action phases, each with the phrase that calls a player to it.
CALLS = {"action_1": "room25.call.action_1", "action_2": "room25.call.action_2",
         "adrenaline": "room25.call.adrenaline"}


def start_turn(eng: Room25Engine, number: int) -> None:
    """Turn ``number`` begins with its programming phase."""
    s = eng.state
    s.turn, s.programmed, s.adrenaline, s.acting = number, [], [], []
    left = s.turns - number + 1
    eng.emit(TurnStart(number, left, list(s.order)))
    eng.emit(Phase("programming"))
    eng.say("room25.turn.start", turn=number, turns=s.turns, order=eng.names(s.order))
    if left == 1:
        eng.say("room25.turn.last")
    eng.say("room25.programming.timed" if eng.programming.seconds else "room25.programming.untimed",
            time=eng.catalog.duration(eng.programming.seconds or 0))
    eng.programming.start()


def waiting(eng: Room25Engine) -> list[str]:
    """The living players who have not said they programmed, in turn order."""
    return [p for p in eng.state.order if p not in eng.state.programmed]


def end_programming(eng: Room25Engine) -> None:
    """Everyone programmed, or the timer ran out: the first actions."""
    eng.programming.stop()
    eng.fire("programming_over")
    begin_actions(eng, "action_1")


def begin_actions(eng: Room25Engine, phase: str) -> None:
    """An action phase begins: its players are called one at a time, in turn order."""
    s = eng.state
    eng.emit(Phase(phase))
    s.acting = [p for p in s.order if phase != "adrenaline" or p in s.adrenaline]
    call_next(eng)


def call_next(eng: Room25Engine) -> None:
    """Call the next player of the phase; once nobody is left, the phase is over. Nothing is called while an
    identity reveal waits for its answer, or once the game is over."""
    s = eng.state
    if s.pending or s.winner is not None:
        return
    phase = eng.leaf()
    if phase not in CALLS:
        return
    if s.acting:
        eng.say(CALLS[phase], player=s.acting[0])
        return
    if phase == "action_1":
        eng.fire("second_actions")
        begin_actions(eng, "action_2")
    elif phase == "action_2" and any(p in s.order for p in s.adrenaline):
        eng.fire("adrenaline_round")
        begin_actions(eng, "adrenaline")
    else:
        end_turn(eng)


def remind(eng: Room25Engine) -> None:
    """After "undo": ask again for the reveal that waits, else call again who plays now (in an action phase)."""
    s = eng.state
    if s.pending:
        player, reason = s.pending[0]
        eng.say(f"room25.reveal.{reason}", player=player)
    elif s.acting and eng.leaf() in CALLS:
        eng.say(CALLS[eng.leaf()], player=s.acting[0])


def end_turn(eng: Room25Engine) -> None:
    """The countdown: the last turn ends the game (the guards win); otherwise the first player becomes the last."""
    s = eng.state
    eng.fire("end_turn")
    eng.emit(Phase("countdown"))
    if s.turn >= s.turns:
        eng.finish("guards", "countdown")
        return
    s.order = s.order[1:] + s.order[:1]
    eng.say("room25.countdown", order=eng.names(s.order), left=eng.count("turn", s.turns - s.turn))
    eng.fire("next_turn")
    start_turn(eng, s.turn + 1)
