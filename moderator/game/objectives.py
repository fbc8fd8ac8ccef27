"""Judging the end of an advanced game: who acts as each card, which team wins, and each player's objective.

Objectives are written in the catalogue's vocabulary (``catalogue.OPERATORS``); this module is its only
interpreter. Everything is decided from the final rooms and the facts said at the reveal (``Table``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from moderator.game.catalogue import Card, Catalogue


@dataclass
class Table:
    """What is known when the game is judged."""

    cards: Mapping[str, str]
    """player -> card id, for every player whose card is known."""
    rooms: Mapping[str, str]
    """player -> "A" or "B" at the end of the game."""
    buried: str | None = None
    prediction: str | None = None
    """The Gambler's prediction: "red" or "blue"."""
    guess: str | None = None
    """The Private Investigator's guess of the buried card."""
    shot: str | None = None
    """The player the Sniper shot."""
    hostages: frozenset[str] = frozenset()
    """Every player who was sent as a hostage in any round."""
    facts: Mapping[str, bool] = field(default_factory=dict)
    """Answers to the reveal's questions, by ``fact_id``."""


def fact_id(pair: list[str] | tuple[str, ...]) -> str:
    """The key of a "did A card-share with B" fact."""
    return f"shared:{pair[0]}:{pair[1]}"


def holder(cat: Catalogue, table: Table, card_id: str) -> str | None:
    """The player acting as ``card_id``: its holder, or, when it was buried, its backup's holder."""
    for player, card in table.cards.items():
        if card == card_id:
            return player
    card = cat.cards.get(card_id)
    if table.buried == card_id and card is not None and card.backup:
        return holder(cat, table, card.backup)
    return None


def in_play(table: Table) -> list[str]:
    """The cards dealt (not buried), each once, in the order of the players."""
    return list(dict.fromkeys(table.cards.values()))


def acting(cat: Catalogue, cards_in_play: list[str], buried: str | None) -> list[str]:
    """The cards whose rules apply: those in play, and a buried card whose backup is in play (the Nurse plays the
    buried Doctor's part, the card-share with the President included)."""
    backup = cat.cards[buried].backup if buried in cat.cards else None
    return cards_in_play + ([buried] if buried and backup in cards_in_play else [])


def winner(cat: Catalogue, table: Table) -> str:
    """Red when the President and the Bomber end in the same room, else blue; then the rules of cards like the
    Doctor ("no card-share with the President: red wins") and the Engineer ("... with the Bomber: blue wins").
    When rules for both teams fire, neither team wins: ``none`` (the character guide: "all players lose")."""
    president, bomber = holder(cat, table, "president"), holder(cat, table, "bomber")
    base = "red" if president and bomber and table.rooms.get(president) == table.rooms.get(bomber) else "blue"
    rules = [rule for card_id in acting(cat, in_play(table), table.buried) for rule in cat.cards[card_id].winner_rules]
    fired = {rule["winner"] for rule in rules if not holds(cat, table, rule["unless"], None, base)}
    if len(fired) > 1:
        return "none"
    return fired.pop() if fired else base


def judge(cat: Catalogue, table: Table) -> tuple[str, dict[str, dict[str, Any]]]:
    """The winning team and, for each player with a known card, ``{card, team, won}``."""
    team_won = winner(cat, table)
    out = {}
    for player, card_id in table.cards.items():
        card = cat.cards[card_id]
        won = holds(cat, table, card.objective or {"team": card.team}, player, team_won)
        out[player] = {"card": card_id, "team": card.team, "won": won}
    return team_won, out


def holds(cat: Catalogue, table: Table, obj: Mapping[str, Any], me: str | None, team_won: str) -> bool:
    """Whether an objective holds for player ``me`` (None for a rule about the whole game)."""
    ((op, arg),) = obj.items()
    rooms = table.rooms

    def where(card_id: str) -> str | None:
        p = holder(cat, table, card_id)
        return rooms.get(p) if p else None

    if op == "team":
        return bool(team_won == arg)
    if op in ("with", "away_from"):
        mine, theirs = rooms.get(me or ""), where(arg)
        if mine is None or theirs is None:
            return False
        return (mine == theirs) == (op == "with")
    if op == "with_each_other":
        places = [where(c) for c in arg]
        return None not in places and len(set(places)) == 1
    if op == "predicts":
        return table.prediction is not None and table.prediction == team_won
    if op == "guesses":
        return table.buried is not None and table.guess == table.buried
    if op == "shot":
        target = holder(cat, table, arg)
        return target is not None and table.shot == target
    if op == "shot_by":
        return me is not None and table.shot == me
    if op == "never_hostage":
        return me is not None and me not in table.hostages
    if op == "shared":
        return bool(table.facts.get(fact_id(arg), False))
    if op == "all":
        return all(holds(cat, table, o, me, team_won) for o in arg)
    if op == "any":
        return any(holds(cat, table, o, me, team_won) for o in arg)
    if op == "not":
        return not holds(cat, table, arg, me, team_won)
    raise ValueError(f"unknown objective operator {op!r}")  # the catalogue's loader refuses these


def _walk(obj: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    ((op, arg),) = obj.items()
    yield op, arg
    if op in ("all", "any"):
        for sub in arg:
            yield from _walk(sub)
    elif op == "not":
        yield from _walk(arg)


def _terms(card: Card) -> Iterator[tuple[str, Any]]:
    """Every operator of a card's objective and of the rules it adds to who wins."""
    for obj in ([card.objective] if card.objective else []) + [r["unless"] for r in card.winner_rules]:
        yield from _walk(obj)


def questions(cat: Catalogue, cards_in_play: list[str]) -> list[list[str]]:
    """The "did A card-share with B" facts the reveal must ask, for the cards in play, each once."""
    pairs: list[list[str]] = []
    for card_id in cards_in_play:
        for op, arg in _terms(cat.cards[card_id]):
            if op == "shared" and list(arg) not in pairs:
                pairs.append(list(arg))
    return pairs


def needed_cards(cat: Catalogue, cards_in_deck: list[str]) -> list[str]:
    """The cards whose holders the moderator must learn at the reveal to judge and announce the game: the
    President, the Bomber, every card an objective names, and every character with an objective of its own (not
    its team's win; the Gambler's is announced from the prediction)."""
    needed = ["president", "bomber"]
    for card_id in cards_in_deck:
        card = cat.cards[card_id]
        if card.objective and not any(op in ("team", "predicts") for op, _ in _walk(card.objective)):
            needed.append(card_id)
        for op, arg in _terms(card):
            if op in ("with", "away_from", "shot"):
                needed.append(arg)
            elif op == "with_each_other":
                needed += list(arg)
    return [c for c in dict.fromkeys(needed) if c in cards_in_deck]
