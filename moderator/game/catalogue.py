"""The advanced game's cards and presets as data (``characters.yaml``, ``presets.yaml``), checked on load.

A card has a team, an objective written in a small vocabulary (``moderator.game.objectives``), and optionally a
backup (the card that takes over its role when it is buried), linked cards (never buried, all in play together),
rules that change who wins (Doctor, Engineer) and powers the moderator runs. A preset is a deck recipe from the
official configurations: fixed cards, cards added when burying or from a player count, and how the rest is filled.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from moderator import yamlio
from moderator.errors import RulesError

CHARACTERS_FILE = Path(__file__).with_name("characters.yaml")
PRESETS_FILE = Path(__file__).with_name("presets.yaml")
TEAMS = ("blue", "red", "grey", "green")
#: Powers the engine runs (the rest are explained, not enforced).
POWERS = ("cannot_be_hostage", "usurp_reveal", "extra_hostage", "shoots", "guesses_buried", "predicts")
#: Objective operators and what each takes (``card``: a card id; ``cards``: a list of them; ``objective(s)``).
OPERATORS = {
    "team": "team", "with": "card", "away_from": "card", "with_each_other": "cards", "predicts": "winner",
    "guesses": "buried", "shot": "card", "shot_by": "card", "never_hostage": "true", "shared": "pair",
    "all": "objectives", "any": "objectives", "not": "objective",
}
BASIC_CARDS = ("president", "bomber", "blue_team", "red_team", "gambler", "presidents_daughter", "martyr")
TEAM_CARDS = ("blue_team", "red_team")
ODD_FILLERS = ("gambler", "bury", "mi6", "none")


@dataclass(frozen=True)
class Card:
    """One card of the catalogue."""

    id: str
    team: str
    name: str
    objective: Mapping[str, Any] | None
    backup: str | None = None
    linked: tuple[str, ...] = ()
    winner_rules: tuple[Mapping[str, Any], ...] = ()
    powers: tuple[str, ...] = ()
    shows: str | None = None
    source: str = ""
    unsupported: str | None = None
    power_note: str | None = None


@dataclass(frozen=True)
class Preset:
    """One official configuration."""

    id: str
    name: str
    players: tuple[int, int]
    cards: tuple[str, ...]
    when_burying: tuple[str, ...] = ()
    from_players: Mapping[str, int] = field(default_factory=dict)
    choose_one: tuple[tuple[str, ...], ...] = ()
    team_cards: str = "optional"
    odd: str = "none"
    bury: str = "optional"
    colour_share: str = "default"
    source: str = ""
    unsupported: tuple[str, ...] = ()
    """Cards the catalogue lacks or cannot run: the preset cannot be played while this is not empty."""


@dataclass(frozen=True)
class Catalogue:
    """Every card and preset, checked."""

    cards: Mapping[str, Card]
    presets: Mapping[str, Preset]

    def card(self, card_id: str) -> Card:
        """The card with this id; an unknown or unsupported id is a RulesError that says why."""
        card = self.cards.get(card_id)
        if card is None:
            raise RulesError(f"unknown card {card_id!r}; `moderator presets --cards` lists them")
        if card.unsupported:
            raise RulesError(f"the {card.name} card is not supported: {card.unsupported}")
        return card

    def preset(self, preset_id: str) -> Preset:
        """The preset with this id; an unknown or unsupported one is a RulesError that says why."""
        preset = self.presets.get(preset_id)
        if preset is None:
            raise RulesError(f"unknown preset {preset_id!r}; `moderator presets` lists them")
        if preset.unsupported:
            why = "; ".join(f"{self.cards[c].name} ({self.cards[c].unsupported})" for c in preset.unsupported)
            raise RulesError(f"the preset {preset.name!r} needs cards the moderator does not support: {why}")
        return preset


def _fail(source: str, where: str, message: str) -> RulesError:
    return RulesError(f"{source}: {where}: {message}")


def parse_cards(data: Any, *, source: str) -> dict[str, Card]:
    """Check the characters file's data and build the cards."""
    if not isinstance(data, dict) or not data:
        raise RulesError(f"{source}: expected a mapping of card id -> card")
    raw = {str(k): v for k, v in data.items()}
    cards: dict[str, Card] = {}
    for cid, entry in raw.items():
        if not isinstance(entry, dict):
            raise _fail(source, cid, "expected a mapping")
        unknown = set(entry) - {"team", "name", "objective", "backup", "linked", "winner_rule", "powers", "shows",
                                "source", "unsupported", "power_note"}
        if unknown:
            raise _fail(source, cid, f"unknown keys {sorted(unknown)}")
        unsupported = entry.get("unsupported")
        team = entry.get("team")
        if team not in TEAMS and not unsupported:
            raise _fail(source, cid, f"team must be one of {', '.join(TEAMS)}")
        if not entry.get("source"):
            raise _fail(source, cid, "every card names its source")
        objective = entry.get("objective")
        if objective is None and not unsupported:
            raise _fail(source, cid, "a supported card needs an objective")
        powers = tuple(entry.get("powers") or ())
        bad = [p for p in powers if p not in POWERS]
        if bad:
            raise _fail(source, cid, f"unknown powers {bad}; the engine runs {', '.join(POWERS)}")
        cards[cid] = Card(
            id=cid, team=str(team or "grey"), name=str(entry.get("name") or cid.replace("_", " ").title()),
            objective=objective, backup=entry.get("backup"), linked=tuple(entry.get("linked") or ()),
            winner_rules=tuple(entry.get("winner_rule") or ()), powers=powers, shows=entry.get("shows"),
            source=str(entry["source"]), unsupported=str(unsupported) if unsupported else None,
            power_note=entry.get("power_note"),
        )
    for card in cards.values():
        _check_card_refs(card, cards, source)
    return cards


def _check_card_refs(card: Card, cards: Mapping[str, Card], source: str) -> None:
    for ref in ([card.backup] if card.backup else []) + list(card.linked):
        if ref not in cards:
            raise _fail(source, card.id, f"names the unknown card {ref!r}")
    for linked in card.linked:
        if card.id not in cards[linked].linked and linked != card.id:
            raise _fail(source, card.id, f"is linked to {linked!r}, but {linked!r} is not linked back")
    if card.unsupported:
        return
    check_objective(card.objective, cards, f"{source}: {card.id}: objective")
    for rule in card.winner_rules:
        if not isinstance(rule, dict) or set(rule) != {"unless", "winner"} or rule["winner"] not in ("red", "blue"):
            raise _fail(source, card.id, "a winner_rule is {unless: OBJECTIVE, winner: red|blue}")
        check_objective(rule["unless"], cards, f"{source}: {card.id}: winner_rule")


def check_objective(obj: Any, cards: Mapping[str, Card], where: str) -> None:
    """Raise RulesError when an objective is not written in the vocabulary (``OPERATORS``)."""
    if not isinstance(obj, dict) or len(obj) != 1:
        raise RulesError(f"{where}: each objective is one operator: {', '.join(OPERATORS)}")
    ((op, arg),) = obj.items()
    kind = OPERATORS.get(op)
    if kind is None:
        raise RulesError(f"{where}: unknown operator {op!r}; the vocabulary is {', '.join(OPERATORS)}")
    is_card = isinstance(arg, str) and arg in cards
    is_cards = isinstance(arg, list) and all(isinstance(a, str) and a in cards for a in arg)
    ok = {
        "team": arg in ("red", "blue"),
        "card": is_card,
        "cards": is_cards and len(arg) >= 2,
        "pair": is_cards and len(arg) == 2,
        "winner": arg == "winner",
        "buried": arg == "buried",
        "true": arg is True,
        "objectives": isinstance(arg, list) and len(arg) >= 1,
        "objective": True,
    }[kind]
    if not ok:
        raise RulesError(f"{where}: {op}: {arg!r} is not a valid {kind}")
    if kind == "objectives":
        for sub in arg:
            check_objective(sub, cards, where)
    elif kind == "objective":
        check_objective(arg, cards, where)


def parse_presets(data: Any, cards: Mapping[str, Card], *, source: str) -> dict[str, Preset]:
    """Check the presets file's data against the cards and build the presets."""
    if not isinstance(data, dict) or not data:
        raise RulesError(f"{source}: expected a mapping of preset id -> preset")
    presets: dict[str, Preset] = {}
    for pid, entry in ((str(k), v) for k, v in data.items()):
        if not isinstance(entry, dict):
            raise _fail(source, pid, "expected a mapping")
        unknown = set(entry) - {"name", "players", "cards", "when_burying", "from_players", "choose_one",
                                "team_cards", "odd", "bury", "colour_share", "source"}
        if unknown:
            raise _fail(source, pid, f"unknown keys {sorted(unknown)}")
        players = entry.get("players")
        if (not isinstance(players, list) or len(players) != 2 or not all(isinstance(p, int) for p in players)
                or not 6 <= players[0] <= players[1]):
            raise _fail(source, pid, "players is an inclusive range [low, high], low at least 6")
        fixed = tuple(entry.get("cards") or ())
        when_burying = tuple(entry.get("when_burying") or ())
        from_players = dict(entry.get("from_players") or {})
        choose_one = tuple(tuple(c) for c in entry.get("choose_one") or ())
        named = list(fixed) + list(when_burying) + list(from_players) + [c for group in choose_one for c in group]
        missing = sorted({c for c in named if c not in cards})
        if missing:
            raise _fail(source, pid, f"names cards that are not in the catalogue: {', '.join(missing)}")
        for key, allowed in (("team_cards", ("optional", "required", "none")), ("odd", ODD_FILLERS),
                             ("bury", ("required", "optional", "never")),
                             ("colour_share", ("forbidden", "allowed", "default"))):
            if key in entry and entry[key] not in allowed:
                raise _fail(source, pid, f"{key} must be one of {', '.join(allowed)}")
        if not entry.get("source"):
            raise _fail(source, pid, "every preset names its source")
        # The first of each "X or Y" that is supported is what the deck uses; the rest must be supported.
        needed = list(fixed) + list(when_burying) + list(from_players)
        unsupported = sorted({c for c in needed if cards[c].unsupported}
                             | {g[0] for g in choose_one if all(cards[c].unsupported for c in g)})
        presets[pid] = Preset(
            id=pid, name=str(entry.get("name") or pid), players=(players[0], players[1]), cards=fixed,
            when_burying=when_burying, from_players=from_players, choose_one=choose_one,
            team_cards=entry.get("team_cards", "optional"), odd=entry.get("odd", "none"),
            bury=entry.get("bury", "optional"), colour_share=entry.get("colour_share", "default"),
            source=str(entry["source"]), unsupported=tuple(unsupported),
        )
    return presets


def load(characters: Path = CHARACTERS_FILE, presets: Path = PRESETS_FILE) -> Catalogue:
    """Load and check both files; any fault is a RulesError naming the file and the entry."""
    cards = parse_cards(yamlio.load_file(characters, error=RulesError), source=str(characters))
    missing = [c for c in BASIC_CARDS if c not in cards]
    if missing:
        raise RulesError(f"{characters}: the basic cards are missing: {', '.join(missing)}")
    return Catalogue(cards, parse_presets(yamlio.load_file(presets, error=RulesError), cards, source=str(presets)))


@cache
def default() -> Catalogue:
    """The packaged catalogue (loaded once)."""
    return load()


def outside_rooms(card_id: str) -> bool:
    """An Ambassador: never part of a room (no vote, never leader, never hostage), not counted among the players
    for the hostage table (the character guide)."""
    card = default().cards.get(card_id)
    return card is not None and "cannot_be_hostage" in card.powers


def in_order(cards: Sequence[str]) -> list[str]:
    """Card ids without repeats, in their first order."""
    return list(dict.fromkeys(cards))
