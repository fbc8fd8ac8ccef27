"""Advanced decks: a preset's or a list of characters' cards for a player count, burying, and the deal.

The basic deck is ``rules.make_deck``. Here the deck is built from the catalogue (``catalogue.Catalogue``):
the preset's cards, the cards it adds when a card is buried or from a player count, then the team cards that
fill the rest in equal numbers. A buried card is chosen as seeds/003 describes: linked cards (Sniper, Target,
Decoy) are set aside, one of the other cards is buried at random, and the linked cards are shuffled back.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from moderator.errors import RulesError
from moderator.game.catalogue import TEAM_CARDS, Catalogue, Preset, in_order


@dataclass(frozen=True)
class Recipe:
    """What the deck is made of: a preset, or characters added to the basic cards."""

    preset: str | None = None
    characters: tuple[str, ...] = ()

    @property
    def advanced(self) -> bool:
        """True when the deck comes from the catalogue rather than the basic rules."""
        return bool(self.preset or self.characters)


def build(cat: Catalogue, recipe: Recipe, players: int, *, bury: bool) -> tuple[dict[str, int], bool]:
    """The deck (card id -> count) and whether a card is buried (a preset may require it).

    Raises:
        RulesError: the recipe cannot make a deck for this many players; the message says what can.
    """
    if recipe.preset and recipe.characters:
        raise RulesError("choose a preset or a list of characters, not both")
    if recipe.preset:
        preset = cat.preset(recipe.preset)
        low, high = preset.players
        if not low <= players <= high:
            span = f"{low} players" if low == high else f"{low} to {high} players"
            raise RulesError(f"the preset {preset.name!r} is for {span}, not {players}")
        if preset.bury == "never" and bury:
            raise RulesError(f"the preset {preset.name!r} does not bury a card")
        bury = bury or preset.bury == "required"
        specials = _preset_cards(cat, preset, players, bury=bury)
        odd, team_cards = preset.odd, preset.team_cards
    else:
        for card_id in recipe.characters:
            cat.card(card_id)  # unknown or unsupported: a clear error
        specials = in_order(["president", "bomber", *recipe.characters])
        odd, team_cards = "gambler", "optional"
    if bury:
        specials = _with_backups(cat, specials)
    size = players + (1 if bury else 0)
    rest = size - len(specials)
    if rest % 2 and odd == "bury" and not bury:
        return build(cat, recipe, players, bury=True)
    if rest % 2 and odd in ("gambler", "mi6") and odd not in specials:
        specials.append(odd)
        rest -= 1
    if rest % 2 and "gambler" not in specials:
        specials.append("gambler")  # the basic rule for an odd count (rulebook p.3), when nothing else evens it
        rest -= 1
    what = f"the preset {cat.presets[recipe.preset].name!r}" if recipe.preset else "these characters"
    if rest < 0:
        raise RulesError(f"{what} need{'s' if recipe.preset else ''} {len(specials) - (1 if bury else 0)} "
                         f"players or more{' with a buried card' if bury else ''}, not {players}")
    if rest % 2:
        hint = "" if bury else "; bury a card (--bury) to even it out"
        raise RulesError(f"{what} leave{'s' if recipe.preset else ''} {rest} team card{'s' if rest > 1 else ''}, "
                         f"which cannot be split evenly between blue and red{hint}")
    if rest and team_cards == "none" and recipe.preset and cat.presets[recipe.preset].players[0] == \
            cat.presets[recipe.preset].players[1]:
        # A preset for one player count is the exact deck; any other is filled with team cards (seeds/003: "to
        # play with more players, add more Blue Team and Red Team cards").
        raise RulesError(f"{what} has exactly {len(specials)} cards: play it with "
                         f"{len(specials) - (1 if bury else 0)} players")
    counts = dict.fromkeys(specials, 1)
    if rest:
        counts |= {"blue_team": rest // 2, "red_team": rest // 2}
    return counts, bury


def _preset_cards(cat: Catalogue, preset: Preset, players: int, *, bury: bool) -> list[str]:
    cards = list(preset.cards)
    if bury:
        cards += preset.when_burying
    cards += [c for c, low in preset.from_players.items() if players >= low]
    # "X or Y": the first the moderator supports (the loader refuses a preset where none is).
    cards += [next((c for c in group if not cat.cards[c].unsupported), group[0]) for group in preset.choose_one]
    return in_order(cards)


def _with_backups(cat: Catalogue, cards: Sequence[str]) -> list[str]:
    """Burying needs every card's backup in the deck (the rulebook: the President's Daughter and the Martyr)."""
    out = list(cards)
    for card_id in cards:
        backup = cat.cards[card_id].backup
        if backup and backup not in out:
            out.append(backup)
    return out


def check_deck(cat: Catalogue, deck: Mapping[str, int], players: int, buried: int) -> None:
    """Raise RulesError unless ``deck`` has one card per player (plus the buried one) and equal team cards."""
    total = sum(deck.values())
    if total != players + buried:
        raise RulesError(f"the deck has {total} cards for {players} players and {buried} buried")
    if deck.get("blue_team", 0) != deck.get("red_team", 0):
        raise RulesError("the deck needs as many Blue Team cards as Red Team cards")
    for card_id in deck:
        cat.card(card_id)


def deal(cat: Catalogue, deck: Mapping[str, int], players: Sequence[str], rng: random.Random, *,
         bury: bool) -> tuple[dict[str, str], str | None]:
    """Shuffle and deal one card to each player; with ``bury``, one card is set aside first, never a linked one.

    Returns player -> card id, and the buried card (or None).
    """
    cards = [card_id for card_id, n in deck.items() for _ in range(n)]
    buried = None
    if bury:
        candidates = [c for c in cards if not cat.cards[c].linked]
        if not candidates:
            raise RulesError("every card in this deck is linked: none may be buried")
        buried = rng.choice(candidates)
        cards.remove(buried)
    rng.shuffle(cards)
    if len(cards) != len(players):
        raise RulesError(f"the deck has {len(cards)} cards to deal to {len(players)} players")
    return dict(zip(players, cards, strict=True)), buried


def check_cards(cat: Catalogue, deck: Mapping[str, int], players: Sequence[str], cards: Mapping[str, str],
                buried: str | None, *, bury: bool) -> None:
    """Raise RulesError unless a given deal (a scenario's ``cards`` and ``buried``) is a deal of ``deck``."""
    missing = [p for p in players if p not in cards]
    extra = [p for p in cards if p not in players]
    if missing or extra:
        raise RulesError("cards must give every player exactly one card"
                         + (f"; missing: {', '.join(missing)}" if missing else "")
                         + (f"; not players: {', '.join(extra)}" if extra else ""))
    if buried is not None and not bury:
        raise RulesError("a buried card is given, but no card is buried: add `bury: true`")
    set_aside = buried
    if bury and buried is None:  # the buried card is whatever the deck has left over
        set_aside = buried_from(deck, cards)
        if set_aside is None:
            raise RulesError(f"cards do not deal the deck {dict(deck)}")
    dealt = list(cards.values()) + ([set_aside] if set_aside else [])
    counts = {c: dealt.count(c) for c in in_order(dealt)}
    if counts != {c: n for c, n in deck.items()}:
        raise RulesError(f"cards do not deal the deck {dict(deck)}: they deal {counts}")
    if buried and cat.cards[buried].linked:
        raise RulesError(f"the {cat.cards[buried].name} is linked to other cards and may not be buried")


def buried_from(deck: Mapping[str, int], cards: Mapping[str, str]) -> str | None:
    """The card the deal left over (with one card buried), or None."""
    dealt = list(cards.values())
    left = [c for c, n in deck.items() for _ in range(n - dealt.count(c))]
    return left[0] if len(left) == 1 else None


def is_team_card(card_id: str) -> bool:
    """Blue Team and Red Team: many copies, nobody needs to name their holders."""
    return card_id in TEAM_CARDS
