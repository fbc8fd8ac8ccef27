"""Render a game plan for the party host: rounds, deck, what is allowed, and how to deal.

An advanced deck (a preset or characters) is shown from the catalogue: every card's English name and team, what
each special card does, which cards are linked, and which backups take over when a card is buried.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TextIO

from rich import box
from rich.console import Console
from rich.table import Table

from moderator.game import catalogue
from moderator.game.card_text import team_of, the, together, what_it_does
from moderator.game.catalogue import TEAM_CARDS, Catalogue
from moderator.game.rules import COLOR_SHARE_MIN_PLAYERS, GamePlan

#: Card id -> (name on the card, team colour).
CARD_NAMES = {
    "president": ("President", "Blue"),
    "bomber": ("Bomber", "Red"),
    "presidents_daughter": ("President's Daughter", "Blue"),
    "martyr": ("Martyr", "Red"),
    "gambler": ("Gambler", "Grey"),
    "blue_team": ("Blue Team", "Blue"),
    "red_team": ("Red Team", "Red"),
}
_STYLES = {"Blue": "bold blue", "Red": "bold red", "Grey": "bold white", "Green": "bold green"}


def format_length(seconds: int | None) -> str:
    """A round length as the host says it: "3 min", "2 min 30 s", or "no timer"."""
    if seconds is None:
        return "no timer"
    minutes, rest = divmod(seconds, 60)
    if not minutes:
        return f"{rest} s"
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"


def render_plan(plan: GamePlan, file: TextIO) -> None:
    """Print the plan as tables; colour only when ``file`` is a terminal."""
    console = Console(file=file, highlight=False, soft_wrap=True)
    cat = catalogue.default() if plan.preset or plan.characters else None
    console.print(
        f"[bold]Two Rooms and a Boom[/bold]: {plan.players} players, {len(plan.rounds)} rounds "
        f"(hostage table: {plan.hostage_table})"
    )
    if cat is not None:
        console.print(_recipe(cat, plan), markup=False)

    rounds = Table(title="Rounds", box=box.SIMPLE, title_justify="left")
    rounds.add_column("Round", justify="right")
    rounds.add_column("Length")
    rounds.add_column("Hostages per room", justify="right")
    for spec in plan.rounds:
        rounds.add_row(str(spec.round), format_length(spec.seconds), str(spec.hostages))
    console.print(rounds)

    size = sum(plan.deck.values())
    deck = Table(title=f"Deck ({size} cards)", box=box.SIMPLE, title_justify="left")
    deck.add_column("Card")
    deck.add_column("Team")
    deck.add_column("Count", justify="right")
    for card, count in plan.deck.items():
        name, team = card_name(card, cat)
        deck.add_row(name, team, str(count), style=_STYLES.get(team.split(" ")[0]))
    console.print(deck)
    if cat is not None:
        _print_cards(console, cat, plan)

    console.print(_colour_share(plan, cat))
    if any(spec.seconds is None for spec in plan.rounds):
        console.print("No timer: a round ends when both leaders have announced hostages and said ready.")
    if plan.has_gambler:
        console.print("The Gambler reveals first and predicts Red or Blue before anyone else reveals.")
    for line in dealing(cat, plan):
        console.print(line, markup=False)
    big, small = (plan.players + 1) // 2, plan.players // 2
    console.print(
        f"Rooms: split the {plan.players} players at random into two rooms of {big} and {small}; "
        "nobody looks at their card until the first round starts."
    )


def dealing(cat: Catalogue | None, plan: GamePlan) -> list[str]:
    """How to deal: linked cards, backups, and burying around the linked cards (seeds/003's Grey Ceremony).
    (``plan`` prints it; the web panel's host page shows it beside the deck.)"""
    size = sum(plan.deck.values())
    linked = linked_groups(cat, plan.deck) if cat is not None else []
    lines = []
    for group in linked:
        names = together([cat.cards[c].name for c in group]) if cat is not None else ""
        nobody = "neither" if len(group) == 2 else "none of them"
        lines.append(f"{names} are linked: " + ("set them aside before burying, then shuffle them back."
                                                if plan.buried else
                                                f"they only work together, and {nobody} may be buried."))
    if cat is not None and plan.buried:
        lines.append(_backups(cat, plan))
    if plan.buried and linked:
        aside = sum(len(g) for g in linked)
        lines.append(f"Buried cards: {plan.buried}. Set the {aside} linked cards aside, shuffle the other "
                     f"{size - aside}, set {plan.buried} aside face down without looking, shuffle the linked cards "
                     f"back in, and deal the {plan.players} cards.")
    elif plan.buried:
        lines.append(f"Buried cards: {plan.buried}. Shuffle the {size} cards, set {plan.buried} aside face down "
                     f"without looking, and deal the other {plan.players}.")
    else:
        lines.append(f"Buried cards: none. Shuffle the {size} cards and deal one to each player.")
    return lines


def card_name(card_id: str, cat: Catalogue | None) -> tuple[str, str]:
    """A card's English name and team for the deck table: from the catalogue when there is one."""
    if cat is not None and card_id in cat.cards:
        card = cat.cards[card_id]
        return card.name, team_of(card)
    return CARD_NAMES.get(card_id, (card_id, "?"))


def _recipe(cat: Catalogue, plan: GamePlan) -> str:
    """Where the deck comes from: the preset's name, or the characters added to the basic cards."""
    if plan.preset:
        preset = cat.presets[plan.preset]
        low, high = preset.players
        return f"Preset: {preset.name} ({preset.id}, {low} to {high} players)"
    names = together([cat.cards[c].name for c in plan.characters])
    return f"Characters: {names}, with the President, the Bomber and the team cards"


def _print_cards(console: Console, cat: Catalogue, plan: GamePlan) -> None:
    """One line per special card: what it needs to win and what it does."""
    special = [c for c in plan.deck if c not in TEAM_CARDS and c in cat.cards]
    if not special:
        return
    console.print("What the cards do:")
    for card_id in special:
        card = cat.cards[card_id]
        console.print(f"  {card.name} ({team_of(card)}): {what_it_does(cat, card)}", markup=False)


def linked_groups(cat: Catalogue, deck: Mapping[str, int]) -> list[list[str]]:
    """The deck's groups of linked cards (never buried, all in play together), each once, in deck order."""
    cards = list(deck)
    groups: list[list[str]] = []
    for card_id in cards:
        card = cat.cards.get(card_id)
        if card is None or not card.linked:
            continue
        group = [c for c in card.linked if c in cards]
        if len(group) > 1 and not any(set(group) == set(g) for g in groups):
            groups.append(group)
    return groups


def _backups(cat: Catalogue, plan: GamePlan) -> str:
    """Which card takes over when a card with a backup is buried."""
    pairs = [(c, cat.cards[c].backup) for c in plan.deck if c in cat.cards and cat.cards[c].backup in plan.deck]
    if not pairs:
        return "When a card is buried, no backup takes over: its role is not played."
    said = together([f"{the(cat, backup)} for {the(cat, card)}" for card, backup in pairs if backup])
    return f"When a card is buried, its backup takes over: {said}."


def _colour_share(plan: GamePlan, cat: Catalogue | None) -> str:
    rule = cat.presets[plan.preset].colour_share if cat is not None and plan.preset else "default"
    if plan.color_share:
        small = rule == "allowed" and plan.players < COLOR_SHARE_MIN_PLAYERS
        return "Colour share and colour reveal: allowed" + (" (this preset allows them at any size)." if small
                                                             else ".")
    if rule == "forbidden":
        return "Colour share and colour reveal: not allowed (this preset forbids them)."
    return "Colour share and colour reveal: not allowed (they need more than 10 players)."

