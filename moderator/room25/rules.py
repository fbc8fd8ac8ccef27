"""Room 25's set-up rules from seeds/004: modes, countdown lengths, tile tables, rosters. Pure data and checks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from moderator.errors import RosterError, UsageError
from moderator.inputs import shown
from moderator.roster import check_name

GAME = "room25"
MODES = ("suspicion", "cooperation")
#: seeds/004, "Countdown": "In SUSPICION mode, there are 10 turns for 4-6 characters, 9 turns for 7 characters
#: and 8 for 8 characters. In COOPERATION mode, there are 8 turns for 4 characters, 7 turns for 5 characters and
#: 6 for 6 characters." The seed gives no countdown for other counts, so none is played (docs/decisions.md).
COUNTDOWN: dict[str, dict[int, int]] = {
    "suspicion": {4: 10, 5: 10, 6: 10, 7: 9, 8: 8},
    "cooperation": {4: 8, 5: 7, 6: 6},
}
#: seeds/004, "Game Setup": the tile table of each (mode, characters) it covers, as a phrase key. Suspicion with
#: 4-5 and with 6 players only: for any other game the moderator says the seed has none (never invented).
TILES: dict[tuple[str, int], str] = {
    ("suspicion", 4): "room25.tiles.suspicion_4_5",
    ("suspicion", 5): "room25.tiles.suspicion_4_5",
    ("suspicion", 6): "room25.tiles.suspicion_6",
}
#: "one to two guards infiltrate the prisoners" (seeds/004, Objectives).
GUARDS = (1, 2)
#: The programming timer's bounds, in seconds (``--programming-seconds``).
PROGRAMMING_SECONDS = (10, 600)


@dataclass(frozen=True)
class Plan:
    """One Room 25 game's set-up: mode, guards, countdown length, tile table, programming timer."""

    mode: str
    guards: int
    """0 in cooperation mode (no guards), else 1 or 2."""
    turns: int
    """The countdown's length (``COUNTDOWN``)."""
    tiles: str | None
    """The phrase key of the seed's tile table, or None when the seed gives none for this game."""
    programming_seconds: int | None = None
    """The programming phase's timer; None: it ends only when every player has programmed."""

    def to_dict(self) -> dict[str, Any]:
        """The plan as saved and logged, with ``game: room25``."""
        return {"game": GAME, **asdict(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Plan:
        """The plan as saved."""
        return cls(data["mode"], data["guards"], data["turns"], data["tiles"], data.get("programming_seconds"))


def plan_for(mode: str, players: int, guards: int | None, programming_seconds: int | None = None) -> Plan:
    """The set-up of a game of ``players`` characters.

    Raises:
        UsageError: an unknown mode, guards in cooperation, a guard count other than 1 or 2, a count of characters
            the seed gives no countdown for, or a programming timer out of bounds.
    """
    if mode not in MODES:
        raise UsageError(f"unknown Room 25 mode {shown(mode)}; choose suspicion or cooperation")
    if mode == "cooperation" and guards is not None:
        raise UsageError("cooperation mode has no guards (seeds/004): leave out --guards, or play --mode suspicion")
    if mode == "suspicion" and guards not in GUARDS:
        got = "" if guards is None else f", not {guards}"
        raise UsageError(f"suspicion mode needs --guards 1 or 2 (one to two guards, seeds/004){got}")
    table = COUNTDOWN[mode]
    if players not in table:
        lo, hi = min(table), max(table)
        beyond = mode == "cooperation" and players > hi
        why = " (the seed's cooperation countdown stops at 6 characters)" if beyond else ""
        raise RosterError(f"Room 25 in {mode} mode is for {lo} to {hi} characters, not {players}{why}")
    if programming_seconds is not None and not PROGRAMMING_SECONDS[0] <= programming_seconds <= PROGRAMMING_SECONDS[1]:
        raise UsageError(f"--programming-seconds must be {PROGRAMMING_SECONDS[0]} to {PROGRAMMING_SECONDS[1]}, "
                         f"got {programming_seconds}")
    return Plan(mode, guards or 0, table[players], TILES.get((mode, players)), programming_seconds)


def check_players(names: Sequence[str], *, source: str) -> list[str]:
    """Each name plain text and different from the others (ignoring case); the count is ``plan_for``'s.

    Raises:
        RosterError: an empty, repeated or unusable name.
    """
    checked = [check_name(n.strip(), where=f"player {k}", source=source) for k, n in enumerate(names, 1)]
    if any(not n for n in checked):
        raise RosterError(f"{source}: a name is empty")
    folded = [n.casefold() for n in checked]
    twice = sorted({n for n in checked if folded.count(n.casefold()) > 1})
    if twice:
        raise RosterError(f"{source}: {', '.join(twice)} appears twice; every player needs a different name")
    return checked
