"""The advanced game's cards in words, for the host: what a card needs to win, what changes who wins, its powers.

Objectives are data in the catalogue's vocabulary (``catalogue.OPERATORS``); ``objective`` reads one out in
English, e.g. ``{with: president}`` -> "ends in the President's room". A phrase without a subject is about the
card's holder ("ends in ..."); one about other cards names them ("the Mistress and the President ...").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from moderator.game.catalogue import Card, Catalogue

#: Cards named like a person: no "the" before them.
PROPER_NAMES = frozenset({"romeo", "juliet", "ahab", "moby", "cupid", "eris", "dr_boom", "yog_sothoth",
                          "nyarlathotep"})
#: What the moderator does for each power the engine runs.
POWER_TEXT = {
    "cannot_be_hostage": "can never be sent as a hostage",
    "usurp_reveal": "may reveal the card to become the room's leader at once",
    "extra_hostage": "may send one more player to the other room",
    "shoots": "the moderator asks at the reveal whom it shot",
    "guesses_buried": "the moderator asks at the reveal for its guess",
    "predicts": "the moderator asks for its prediction before the reveal",
}


def the(cat: Catalogue, card_id: str) -> str:
    """A card as a sentence names it: "the President", "Juliet"."""
    name = cat.cards[card_id].name if card_id in cat.cards else card_id
    return name if card_id in PROPER_NAMES or name.startswith("The ") else f"the {name}"


def possessive(cat: Catalogue, card_id: str) -> str:
    """ "the President's", "Moby's"."""
    name = the(cat, card_id)
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def team_name(team: str) -> str:
    """ "blue" -> "Blue"."""
    return team.capitalize()


def together(names: Sequence[str]) -> str:
    """ "A", "A and B", "A, B and C"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def objective(cat: Catalogue, obj: Mapping[str, Any], me: str | None = None) -> str:
    """An objective in words; ``me`` is the card it belongs to, the subject of a phrase that names none."""
    return _say(cat, obj, me)[0]


def _say(cat: Catalogue, obj: Mapping[str, Any], me: str | None) -> tuple[str, bool]:
    """The objective in words, and whether the words have their own subject ("the Bomber ...")."""
    ((op, arg),) = obj.items()
    if op == "team":
        return f"wins with the {team_name(arg)} team", False
    if op == "with":
        return f"ends in {possessive(cat, arg)} room", False
    if op == "away_from":
        return f"ends in the room without {the(cat, arg)}", False
    if op in ("with_each_other", "shared"):
        return _pair(cat, op, arg, me)
    if op in ("all", "any"):
        said = [_say(cat, sub, me) for sub in arg]
        # "it" once a part has a subject of its own: "Moby and the Bomber end in one room and it ends ...".
        subject = any(own for _, own in said)
        parts = [text if own or not subject else f"it {text}" for text, own in said]
        return (together(parts) if op == "all" else "either " + " or ".join(parts)), subject
    if op == "not":
        return _negated(cat, arg, me)
    if op in ("shot", "shot_by"):
        return f"{'shoots' if op == 'shot' else 'is shot by'} {the(cat, arg)}", False
    simple = {"predicts": "predicts the winning team", "guesses": "guesses the buried card",
              "never_hostage": "is never sent as a hostage"}
    if op in simple:
        return simple[op], False
    raise ValueError(f"unknown objective operator {op!r}")  # the catalogue's loader refuses these


def _pair(cat: Catalogue, op: str, cards: Sequence[str], me: str | None, *,
          negated: bool = False) -> tuple[str, bool]:
    """ "ends in one room with ..." (``with_each_other``) or "card-shares with ..." (``shared``), or their
    negations; with a subject of its own when the card itself is not one of ``cards``."""
    if op == "shared":
        verb = "does not card-share" if negated else "card-shares"
        if me in cards:
            return f"{verb} with {the(cat, cards[1] if cards[0] == me else cards[0])}", False
        return f"{the(cat, cards[0])} {verb} with {the(cat, cards[1])}", True
    others = together([the(cat, c) for c in cards if c != me])
    if me in cards:
        return f"{'does not end' if negated else 'ends'} in one room with {others}", False
    return f"{others} {'do not end' if negated else 'end'} in one room", True


def _negated(cat: Catalogue, obj: Mapping[str, Any], me: str | None) -> tuple[str, bool]:
    """The opposite of an objective, said the way round a person would say it."""
    ((op, arg),) = obj.items()
    if op == "team":
        return f"wins when the {team_name(arg)} team loses", False
    if op in ("with", "away_from"):
        return _say(cat, {"away_from" if op == "with" else "with": arg}, me)
    if op in ("with_each_other", "shared"):
        return _pair(cat, op, arg, me, negated=True)
    if op == "not":
        return _say(cat, arg, me)
    if op in ("shot", "shot_by"):
        return f"{'does not shoot' if op == 'shot' else 'is not shot by'} {the(cat, arg)}", False
    if op == "never_hostage":
        return "is sent as a hostage at least once", False
    text, own = _say(cat, obj, me)
    return f"it is not so that {text if own else 'it ' + text}", True


def winner_rule(cat: Catalogue, rule: Mapping[str, Any], me: str) -> str:
    """A rule that changes who wins, e.g. "unless the President card-shares with it, Red wins"."""
    condition = rule["unless"]
    ((op, arg),) = condition.items()
    if op == "shared":
        other = [c for c in arg if c != me]
        said = (f"{the(cat, other[0])} card-shares with it" if me in arg and other
                else _pair(cat, "shared", arg, None)[0])
    else:
        text, own = _say(cat, condition, me)
        said = text if own else f"it {text}"
    return f"unless {said}, {team_name(rule['winner'])} wins"


def what_it_does(cat: Catalogue, card: Card) -> str:
    """One line for the host: the card's objective, what changes who wins, its powers and its notes."""
    parts = [objective(cat, card.objective, card.id) if card.objective else f"wins with the "
             f"{team_name(card.team)} team"]
    parts += [winner_rule(cat, rule, card.id) for rule in card.winner_rules]
    if not card.power_note:  # a note says more than the power's id
        parts += [POWER_TEXT[p] for p in card.powers if p in POWER_TEXT]
    text = "; ".join(parts)
    text = text[0].upper() + text[1:] + "."
    if card.power_note:
        text += f" {card.power_note.strip()}"
    return text


def team_of(card: Card) -> str:
    """The team a card wins with, and the colour it shows when that differs: "Blue (shows Red)"."""
    shows = f" (shows {team_name(card.shows)})" if card.shows and card.shows != card.team else ""
    return f"{team_name(card.team)}{shows}"
