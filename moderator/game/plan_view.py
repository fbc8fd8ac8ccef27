"""Render a game plan for the party host: rounds, deck, what is allowed, and how to deal."""

from __future__ import annotations

from typing import TextIO

from rich import box
from rich.console import Console
from rich.table import Table

from moderator.game.rules import GamePlan

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
_STYLES = {"Blue": "bold blue", "Red": "bold red", "Grey": "bold white"}


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
    console.print(
        f"[bold]Two Rooms and a Boom[/bold]: {plan.players} players, {len(plan.rounds)} rounds "
        f"(hostage table: {plan.hostage_table})"
    )

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
        name, team = CARD_NAMES.get(card, (card, "?"))
        deck.add_row(name, team, str(count), style=_STYLES.get(team))
    console.print(deck)

    if plan.color_share:
        console.print("Colour share and colour reveal: allowed.")
    else:
        console.print("Colour share and colour reveal: not allowed (they need more than 10 players).")
    if any(spec.seconds is None for spec in plan.rounds):
        console.print("No timer: a round ends when both leaders have announced hostages and said ready.")
    if plan.has_gambler:
        console.print("The Gambler reveals first and predicts Red or Blue before anyone else reveals.")
    if plan.buried:
        console.print(
            f"Buried cards: {plan.buried}. Shuffle the {size} cards, set {plan.buried} aside face down "
            f"without looking, and deal the other {plan.players}."
        )
    else:
        console.print(f"Buried cards: none. Shuffle the {size} cards and deal one to each player.")
    big, small = (plan.players + 1) // 2, plan.players // 2
    console.print(
        f"Rooms: split the {plan.players} players at random into two rooms of {big} and {small}; "
        "nobody looks at their card until the first round starts."
    )
