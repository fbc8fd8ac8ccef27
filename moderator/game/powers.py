"""Powers the moderator runs during the rounds of an advanced game (the character guide's wording in
``characters.yaml``): a public reveal ("Frank is the blue usurper"), the Usurper taking the leadership at once, the
Ambassador who cannot be a hostage, and the Bodyguard's extra player at the end of a round.

The moderator knows a player's card from the deal (a scenario's ``cards``) or from a public reveal said to it.
Rules as in ``actions``: each checks (raising ``Refusal``) and returns the change to apply.
"""

from __future__ import annotations

from moderator.game import actions, catalogue, round_end
from moderator.game.actions import Apply, Game, Refusal, Slots, known_card, outside


def _name(eng: Game, card: str) -> str:
    return eng.text(f"card.{card}")


def hostages(eng: Game, slots: Slots, room: str | None) -> Apply:
    """A hostage choice (``round_end.hostages``), refused first when it names an Ambassador (never a hostage)."""
    for p in slots["players"]:
        if outside(eng, p):
            raise Refusal("refuse.ambassador_hostage", player=p, card=_name(eng, known_card(eng, p) or ""))
    return round_end.hostages(eng, slots, room)


def usurp(eng: Game, slots: Slots, room: str | None) -> Apply:
    """A vote (``actions.usurp``), refused first against a leader who took the room by the Usurper's reveal this
    round."""
    if room is not None and eng.state.rooms[room].usurper_round:
        raise Refusal("refuse.usurper_holds", leader=eng.state.rooms[room].leader, room=room)
    return actions.usurp(eng, slots, room)


def public_reveal(eng: Game, slots: Slots, room: str | None) -> Apply:
    """ "Frank is the blue usurper", said during a round: a public reveal of a card with a power."""
    card, player = slots["role"], slots["player"]
    s = eng.state
    if not s.plan["deck"].get(card):
        raise Refusal("refuse.not_in_game", card=_name(eng, card))
    powers = catalogue.default().cards[card].powers
    if not {"usurp_reveal", "cannot_be_hostage", "extra_hostage"} & set(powers):
        raise Refusal("refuse.reveal_at_end", card=_name(eng, card))
    dealt = (s.cards or {}).get(player)
    if dealt is not None and dealt != card:
        raise Refusal("refuse.dealt_otherwise", player=player, card=_name(eng, dealt))
    holder = next((p for p, c in s.public.items() if c == card and p != player), None)
    if holder is not None:
        raise Refusal("refuse.holds_other", player=holder, card=_name(eng, card))
    where = s.room_of(player)
    if "usurp_reveal" in powers:
        if s.public.get(player) == card:
            raise Refusal("refuse.usurper_once", player=player)
        if eng.rounds.last():
            raise Refusal("refuse.usurper_last_round")
        if where is not None and s.rooms[where].usurper_round:
            raise Refusal("refuse.usurper_holds", leader=s.rooms[where].leader, room=where)

    def apply() -> None:
        s.public[player] = card
        eng.say("both" if where is None else where, "power.revealed", player=player, card=_name(eng, card))
        if "usurp_reveal" in powers and where is not None:
            s.rooms[where].usurper_round = True
            eng.set_leader(where, player, "usurped")
    return apply


def bodyguard(eng: Game, slots: Slots, room: str | None) -> Apply:
    """ "The bodyguard sends Bob": at the end of a round, one extra player goes to the other room."""
    player = slots["player"]
    s = eng.state
    cards = [c for c in s.plan["deck"] if "extra_hostage" in catalogue.default().cards[c].powers]
    if not cards:
        raise Refusal("refuse.no_bodyguard")
    where = room or s.room_of(player)
    if where is None or s.room_of(player) != where:
        raise Refusal("refuse.wrong_room", player=player, their_room=s.room_of(player), room=where)
    state = s.rooms[where]
    if state.extra:
        raise Refusal("refuse.bodyguard_once", room=where, player=state.extra[0])
    if player == state.leader or player in (state.hostages or []) or player in (state.pending or []):
        raise Refusal("refuse.bodyguard_hostage", player=player)

    def apply() -> None:
        state.extra = [player]
        eng.say(where, "power.bodyguard", player=player, room="B" if where == "A" else "A")
    return apply
