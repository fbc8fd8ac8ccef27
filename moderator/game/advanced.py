"""The advanced game's reveal, in the rulebook's order: the Gambler (``reveal.predict``), the Private
Investigator's guess, the Sniper's shot, then everyone; then the questions the moderator cannot see the answer to
("did the President card-share with the Doctor?"), and the judgement of every objective (``objectives``).

When the deal is known (a scenario's ``cards``) the moderator does not ask who holds what; in a live game the
cards are dealt by hand, so the players name the holders of the cards that decide the game.
Rules as in ``actions``: each checks (raising ``Refusal``) and returns the change to apply.
"""

from __future__ import annotations

from moderator.game import catalogue
from moderator.game.actions import Apply, Game, Refusal, Slots
from moderator.game.events import OMITTED, Result
from moderator.game.objectives import Table, acting, fact_id, holder, judge, needed_cards, questions
from moderator.game.state import ROOMS

#: In the list of what is still to be named: the buried card (when the Investigator's guess needs it).
BURIED = "(buried)"


def is_advanced(eng: Game) -> bool:
    """True when the deck comes from a preset or from a list of characters."""
    plan = eng.state.plan
    return bool(plan.get("preset") or plan.get("characters"))


def briefing(eng: Game) -> str:
    """What the set-up adds in an advanced game: the special cards, how to bury around linked cards, and which
    backups take over a buried card."""
    cat = catalogue.default()
    s = eng.state
    special = [c for c in _in_deck(eng) if c not in ("blue_team", "red_team", "president", "bomber")]
    parts = []
    if special:
        parts.append(eng.text("briefing.cards", cards=eng.names([_card_name(eng, c) for c in special])))
    if s.plan["buried"]:
        linked = [c for c in _in_deck(eng) if cat.cards[c].linked]
        parts.append(eng.text("briefing.bury_linked" if linked else "briefing.bury_advanced",
                              cards=sum(s.plan["deck"].values()),
                              linked=eng.names([_card_name(eng, c) for c in linked])))
        for card_id in _in_deck(eng):
            backup = cat.cards[card_id].backup
            if backup and s.plan["deck"].get(backup):
                parts.append(eng.text("briefing.backup", card=_card_name(eng, card_id),
                                      backup=_card_name(eng, backup)))
    return " ".join(parts)


def _in_deck(eng: Game) -> list[str]:
    return [c for c, n in eng.state.plan["deck"].items() if n]


def _card_name(eng: Game, card_id: str) -> str:
    return eng.text(f"card.{card_id}")


def _cards_list(eng: Game, cards: list[str]) -> str:
    return eng.names([eng.text("reveal.the_buried_card") if c == BURIED else
                      eng.text("reveal.the_card", card=_card_name(eng, c)) for c in cards])


def _to_name(eng: Game) -> list[str]:
    """The cards whose holders are still to be named (a live game's reveal)."""
    s = eng.state
    if s.cards is not None:
        return []
    wanted = needed_cards(catalogue.default(), _in_deck(eng))
    if s.guess is not None and s.buried_card is None:
        wanted.append(BURIED)  # the Investigator's guess is judged against it
    return [c for c in wanted if c not in s.named and not (c == BURIED and s.buried_card)]


def _facts_open(eng: Game) -> list[list[str]]:
    cat = catalogue.default()
    buried = eng.state.buried_card
    in_play = acting(cat, [c for c in _in_deck(eng) if c != buried], buried)
    return [pair for pair in questions(cat, in_play) if fact_id(pair) not in eng.state.facts]


def _has(eng: Game, card_id: str) -> bool:
    """The card is in the deck (it may still be the buried one, unless the deal says otherwise)."""
    s = eng.state
    return bool(s.plan["deck"].get(card_id)) and s.buried_card != card_id


def next_step(eng: Game) -> None:
    """Ask for the reveal's next missing piece, or judge the game when nothing is missing."""
    s = eng.state
    if _has(eng, "private_investigator") and s.plan["buried"] and s.guess is None:
        s.asking = "guess"
        eng.say("both", "reveal.investigator")
    elif _has(eng, "sniper") and s.shot is None:
        s.asking = "shoot"
        eng.say("both", "reveal.sniper")
    elif to_name := _to_name(eng):
        first = s.asking != "names"
        s.asking = "names"
        eng.say("both", "reveal.name_cards" if first else "reveal.still", cards=_cards_list(eng, to_name))
    elif facts := _facts_open(eng):
        a, b = facts[0]
        s.asking = fact_id([a, b])
        eng.say("both", "reveal.ask_shared", a=_card_name(eng, a), b=_card_name(eng, b))
    else:
        s.asking = None
        decide(eng)


def start(eng: Game) -> None:
    """After the Gambler (or at once): show the cards, then the first question."""
    if eng.state.cards is not None:
        eng.say("both", "reveal.show_cards")
    next_step(eng)


def _card_slot(eng: Game, slots: Slots) -> str:
    card = slots["role"]
    if not eng.state.plan["deck"].get(card):
        raise Refusal("refuse.not_in_game", card=_card_name(eng, card))
    return card


def guess(eng: Game, slots: Slots, room: str | None) -> Apply:
    """The Private Investigator guesses which card was buried."""
    if eng.state.asking != "guess":
        raise Refusal("refuse.no_guess_now")
    card = slots["role"]

    def apply() -> None:
        eng.state.guess = card
        eng.say("both", "reveal.guessed", card=_card_name(eng, card))
        next_step(eng)
    return apply


def shoot(eng: Game, slots: Slots, room: str | None) -> Apply:
    """The Sniper shoots one player."""
    s = eng.state
    if s.asking == "guess":
        raise Refusal("refuse.investigator_first")
    if s.asking != "shoot":
        raise Refusal("refuse.no_shot_now")
    player = slots["player"]

    def apply() -> None:
        s.shot = player
        eng.say("both", "reveal.shot", player=player)
        next_step(eng)
    return apply


def _before_names(eng: Game) -> None:
    if eng.state.asking == "guess":
        raise Refusal("refuse.investigator_first")
    if eng.state.asking == "shoot":
        raise Refusal("refuse.sniper_first")


def name_card(eng: Game, slots: Slots, room: str | None) -> Apply:
    """ "The Intern is Alice": who holds a card (a live game's reveal)."""
    _before_names(eng)
    card, player = _card_slot(eng, slots), slots["player"]
    s = eng.state
    if s.cards is not None:
        actual = s.cards.get(player)
        if actual != card and holder(catalogue.default(), _table(eng), card) != player:
            raise Refusal("refuse.dealt_otherwise", player=player, card=_card_name(eng, actual or "blue_team"))
    other = next((c for c, p in s.named.items() if p == player and c != card), None)
    if other is not None and not _backs_up(other, card) and not _backs_up(card, other):
        raise Refusal("refuse.holds_other", player=player, card=_card_name(eng, other))

    def apply() -> None:
        s.named[card] = player
        eng.say("both", "reveal.noted", role=_card_name(eng, card), player=player, room=s.room_of(player))
        next_step(eng)
    return apply


def _backs_up(card: str, acting_as: str) -> bool:
    """The President's Daughter acts as the buried President: one player may be named for both."""
    return catalogue.default().cards[acting_as].backup == card


def name_buried(eng: Game, slots: Slots, room: str | None) -> Apply:
    """ "The Intern was buried": nobody holds it."""
    _before_names(eng)
    card = _card_slot(eng, slots)
    s = eng.state
    if eng.in_state("prediction") and card != "gambler":
        raise Refusal("refuse.gambler_first")
    if not s.plan["buried"]:
        raise Refusal("refuse.nothing_buried")
    if s.cards is not None and s.buried_card != card:
        raise Refusal("refuse.buried_otherwise", card=_card_name(eng, card))

    def apply() -> None:
        if eng.in_state("prediction"):
            eng.fire("name_buried")  # the Gambler was buried: no prediction
        s.buried_card = card
        s.named[card] = None
        eng.say("both", "reveal.card_buried", card=_card_name(eng, card))
        next_step(eng)
    return apply


def answer_fact(eng: Game, slots: Slots, room: str | None) -> Apply:
    """ "yes" or "no" to the reveal's question."""
    s = eng.state
    if not (s.asking or "").startswith("shared:"):
        raise Refusal("refuse.nothing_to_confirm")
    asked = s.asking or ""

    def apply() -> None:
        s.facts[asked] = slots["answer"] == "yes"
        next_step(eng)
    return apply


def _table(eng: Game) -> Table:
    s = eng.state
    # A live game names the acting President (the Daughter's holder when the President was buried).
    cards = dict(s.cards) if s.cards is not None else {p: c for c, p in s.named.items() if p is not None}
    rooms = {p: r for r in ROOMS for p in s.rooms[r].members}
    return Table(cards=cards, rooms=rooms, buried=s.buried_card, prediction=s.prediction, guess=s.guess,
                 shot=s.shot, hostages=frozenset(s.sent), facts=dict(s.facts))


def decide(eng: Game) -> None:
    """Judge every objective and announce the team, then each character that is not a plain team member."""
    cat = catalogue.default()
    s = eng.state
    table = _table(eng)
    winner, characters = judge(cat, table)
    s.president, s.bomber = holder(cat, table, "president"), holder(cat, table, "bomber")
    s.winner = winner
    gambler = OMITTED if s.prediction is None else ("right" if s.prediction == winner else "wrong")
    eng.fire("decide")
    eng.emit(Result(winner, s.president, s.bomber, {r: list(s.rooms[r].members) for r in ROOMS}, gambler,
                    characters=characters, buried=s.buried_card or OMITTED))
    where_p, where_b = s.room_of(s.president or ""), s.room_of(s.bomber or "")
    base = "red" if where_p is not None and where_p == where_b else "blue"
    # "Blue team wins!" only when it does: a card's rule may still turn the result (then the rooms alone).
    key = f"result.{base}" if winner == base else ("result.together" if base == "red" else "result.apart")
    eng.say("both", key, president=s.president, bomber=s.bomber, room_p=where_p, room_b=where_b)
    if winner == "none":
        eng.say("both", "result.no_winner")
    elif winner != base:
        a, b = _overruling_pair(eng, table, base)
        eng.say("both", "result.overruled", a=_card_name(eng, a), b=_card_name(eng, b),
                team=eng.text(f"team.{winner}"))
    if s.prediction is not None:
        eng.say("both", f"result.gambler_{gambler}", team=eng.text(f"team.{s.prediction}"))
    for player, outcome in characters.items():
        objective = cat.cards[outcome["card"]].objective or {}
        if "team" not in objective and "predicts" not in objective:  # (the Gambler's line is said above)
            key = "result.character_won" if outcome["won"] else "result.character_lost"
            eng.say("both", key, card=_card_name(eng, outcome["card"]), player=player)


def _overruling_pair(eng: Game, table: Table, base: str) -> list[str]:
    """The card-share that did not happen and changed the winner (for the announcement)."""
    cat = catalogue.default()
    for card_id in acting(cat, list(dict.fromkeys(table.cards.values())), table.buried):
        for rule in cat.cards[card_id].winner_rules:
            pair = rule["unless"].get("shared")
            if pair and not table.facts.get(fact_id(pair), False) and rule["winner"] != base:
                return list(pair)
    return ["president", "bomber"]
