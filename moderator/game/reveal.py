"""The rules of the reveal: the Gambler's prediction, the President's and the Bomber's cards, and who won.

Rules as in ``actions``: each checks (raising ``Refusal``) and returns the change to apply.
"""

from __future__ import annotations

from moderator.game.actions import Apply, Game, Refusal, Slots
from moderator.game.events import OMITTED, Result
from moderator.game.state import ROOMS


def predict(eng: Game, slots: Slots, room: str | None) -> Apply:
    """The Gambler predicts the winning team before anyone else reveals."""
    team = slots["team"]

    def apply() -> None:
        eng.state.prediction = team
        eng.fire("predict")
        eng.say("both", "reveal.predicted", team=eng.text(f"team.{team}"))
        if eng.state.plan.get("preset") or eng.state.plan.get("characters"):
            eng.reveal_next(first=True)
        else:
            eng.say("both", "reveal.everyone")
    return apply


def reveal(eng: Game, slots: Slots, room: str | None) -> Apply:
    """The players tell the moderator who holds the President and the Bomber."""
    role, player = slots["role"], slots["player"]
    if role not in ("president", "bomber"):  # the basic game needs only these two
        in_game = bool(eng.state.plan["deck"].get(role))
        raise Refusal("refuse.basic_reveal" if in_game else "refuse.not_in_game", card=eng.text(f"card.{role}"))
    other_role = "bomber" if role == "president" else "president"
    if getattr(eng.state, other_role) == player:
        raise Refusal("refuse.same_card", player=player, role=eng.text(f"role.{other_role}"))

    def apply() -> None:
        if eng.in_state("prediction"):
            eng.fire("reveal_role")  # the Gambler was buried: no prediction
        setattr(eng.state, role, player)
        eng.say("both", "reveal.noted", role=eng.text(f"role.{role}"), player=player,
                room=eng.state.room_of(player))
        if eng.state.president and eng.state.bomber:
            decide(eng)
    return apply


def decide(eng: Game) -> None:
    """Both cards are known: announce the winner (red when the President is in the Bomber's room)."""
    s = eng.state
    where_p, where_b = s.room_of(s.president or ""), s.room_of(s.bomber or "")
    s.winner = "red" if where_p == where_b else "blue"
    gambler = OMITTED if s.prediction is None else ("right" if s.prediction == s.winner else "wrong")
    eng.fire("decide")
    eng.emit(Result(s.winner, s.president, s.bomber, {r: list(s.rooms[r].members) for r in ROOMS}, gambler))
    key = "result.red" if s.winner == "red" else "result.blue"
    eng.say("both", key, president=s.president, bomber=s.bomber, room_p=where_p, room_b=where_b)
    if s.prediction is not None:
        eng.say("both", f"result.gambler_{gambler}", team=eng.text(f"team.{s.prediction}"))
