"""The ``moderator presets`` subcommand: the advanced game's presets (or, with ``--cards``, its cards), and which
of them the moderator can run."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from typing import Any

from moderator.env import Environment
from moderator.game import catalogue
from moderator.game.card_text import team_of, together
from moderator.game.catalogue import Card, Catalogue, Preset


def register(subparsers: Any) -> None:
    """Add the ``presets`` subcommand."""
    parser = subparsers.add_parser(
        "presets",
        help="list the advanced game's presets (or its cards) and which ones the moderator can run",
        description=(
            "List the official configurations of the advanced game: each preset's id, name and player counts, "
            "and whether the moderator can run it (or which cards it cannot, and why). Play one with "
            "'moderator plan --preset ID --players N' and 'moderator play --preset ID'."
        ),
    )
    parser.add_argument("--cards", action="store_true",
                        help="list the cards instead: id, name, team, and whether the moderator supports them")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, env: Environment) -> int:
    """Print the presets, or the cards, as text or JSON."""
    cat = catalogue.default()
    if args.json:
        data = {"cards": [card_dict(c) for c in cat.cards.values()]} if args.cards \
            else {"presets": [preset_dict(cat, p) for p in cat.presets.values()]}
        print(json.dumps(data, ensure_ascii=False), file=env.stdout)
        return 0
    lines = card_lines(cat) if args.cards else preset_lines(cat)
    for line in lines:
        print(line, file=env.stdout)
    return 0


def missing(cat: Catalogue, preset: Preset) -> list[tuple[str, list[Card]]]:
    """Why a preset cannot be played: each reason with the cards it applies to, in the catalogue's order."""
    by_reason: dict[str, list[Card]] = {}
    for card_id in preset.unsupported:
        card = cat.cards[card_id]
        by_reason.setdefault(card.unsupported or "not supported", []).append(card)
    return list(by_reason.items())


def preset_lines(cat: Catalogue) -> Iterable[str]:
    """One line per preset ("ready", or the cards it lacks), and under an unsupported one, why, per card."""
    presets = list(cat.presets.values())
    ready = sum(1 for p in presets if not p.unsupported)
    yield (f"{len(presets)} presets, {ready} ready. Play one with: moderator plan --preset ID --players N "
           "(and moderator play --preset ID ...)")
    id_width = max(len(p.id) for p in presets)
    name_width = max(len(p.name) for p in presets)
    for p in presets:
        low, high = p.players
        players = f"{low} players" if low == high else f"{low}-{high} players"
        if not p.unsupported:
            status = "ready"
        else:
            status = "not supported: " + together([cat.cards[c].name for c in p.unsupported])
        yield f"  {p.id:<{id_width}}  {p.name:<{name_width}}  {players:<13}  {status}"
        for why, cards in missing(cat, p):
            yield f"      {together([c.name for c in cards])}: {why}"


def card_lines(cat: Catalogue) -> Iterable[str]:
    """One line per card: id, name, team, and "supported" or why not."""
    cards = list(cat.cards.values())
    supported = sum(1 for c in cards if not c.unsupported)
    yield f"{len(cards)} cards, {supported} supported. Add some to a game with: moderator plan --characters ID,ID,..."
    id_width = max(len(c.id) for c in cards)
    name_width = max(len(c.name) for c in cards)
    team_width = max(len(team_of(c)) for c in cards)
    for c in cards:
        status = f"not supported: {c.unsupported}" if c.unsupported else "supported"
        yield f"  {c.id:<{id_width}}  {c.name:<{name_width}}  {team_of(c):<{team_width}}  {status}"


def preset_dict(cat: Catalogue, preset: Preset) -> dict[str, Any]:
    """A preset as JSON: what ``presets.yaml`` says, whether it is ready, and which cards it lacks and why."""
    return {
        "id": preset.id,
        "name": preset.name,
        "players": list(preset.players),
        "ready": not preset.unsupported,
        "unsupported": [{"card": c, "name": cat.cards[c].name, "why": cat.cards[c].unsupported}
                        for c in preset.unsupported],
        "cards": list(preset.cards),
        "when_burying": list(preset.when_burying),
        "from_players": dict(preset.from_players),
        "choose_one": [list(group) for group in preset.choose_one],
        "team_cards": preset.team_cards,
        "odd": preset.odd,
        "bury": preset.bury,
        "colour_share": preset.colour_share,
    }


def card_dict(card: Card) -> dict[str, Any]:
    """A card as JSON: its team, whether the moderator supports it, and why not."""
    return {
        "id": card.id,
        "name": card.name,
        "team": card.team,
        "shows": card.shows,
        "supported": not card.unsupported,
        "why": card.unsupported,
        "backup": card.backup,
        "linked": list(card.linked),
    }
