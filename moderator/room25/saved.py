"""A saved Room 25 game checked before it is resumed: each field the engine reads, named when it is wrong."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

from moderator.errors import ModeratorError
from moderator.game.statechart import load_statechart
from moderator.room25.rules import GAME, plan_for
from moderator.room25.state import Room25State
from moderator.save_check import Invalid

#: Where a saved game keeps its state (field names below are dotted from it, as save_check names them).
_STATE = "state"


def is_room25(state: Any) -> bool:
    """True when a saved game's state is a Room 25 game's."""
    return isinstance(state, dict) and isinstance(state.get("plan"), dict) and state["plan"].get("game") == GAME


def is_room25_file(path: Path) -> bool:
    """True when ``path`` holds a saved Room 25 game (False when it cannot be read: its own load says why)."""
    try:
        return is_room25(json.loads(Path(path).read_text(encoding="utf-8")).get("state"))
    except (OSError, ValueError, AttributeError):
        return False


def check_state(state: dict[str, Any], options: Any) -> None:
    """Check a Room 25 game's saved state and options.

    Raises:
        Invalid: naming the first field found wrong.
    """
    if not isinstance(options, dict) or set(options) - {"game"}:
        raise Invalid("options", "a Room 25 game keeps only its game's name")
    known = {f.name for f in fields(Room25State)}
    if unknown := sorted(set(state) - known):
        raise Invalid("state", f"unknown field(s) {', '.join(map(str, unknown))}")
    players = state.get("players")
    if not isinstance(players, list) or not all(isinstance(p, str) and p for p in players):
        raise Invalid(f"{_STATE}.players", "must be a list of names")
    plan = state["plan"]
    try:
        plan_for(plan.get("mode"), len(players), plan.get("guards") or None, plan.get("programming_seconds"))
    except ModeratorError as exc:
        raise Invalid(f"{_STATE}.plan", str(exc)) from None
    for name in ("order", "programmed", "adrenaline", "acting", "dead", "in_room25"):
        value = state.get(name, [])
        if not isinstance(value, list) or any(p not in players for p in value):
            raise Invalid(f"{_STATE}.{name}", "must list players of the game")
    machine = state.get("machine")
    if machine not in load_statechart(GAME).state_names():
        raise Invalid(f"{_STATE}.machine", f"{machine!r} is not a state of Room 25")
    turn = state.get("turn", 0)
    if not isinstance(turn, int) or not 0 <= turn <= plan["turns"]:
        raise Invalid(f"{_STATE}.turn", f"must be 0 to {plan['turns']}")
