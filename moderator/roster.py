"""Rosters: the players' names, from the command line or a file."""

from __future__ import annotations

import json
from pathlib import Path

from moderator import yamlio
from moderator.errors import RosterError
from moderator.game.rules import MAX_PLAYERS, MIN_PLAYERS


def parse_names(text: str) -> list[str]:
    """Names separated by commas or newlines; blank entries and '#' comments are dropped."""
    names: list[str] = []
    for line in text.splitlines():
        line = line.split("#", 1)[0]
        names += [n.strip() for n in line.split(",") if n.strip()]
    return names


def load_roster(path: Path) -> list[str]:
    """Read a roster: a YAML/JSON list, or plain text with one name per line (or comma separated)."""
    path = Path(path)
    if path.suffix.lower() in (".yaml", ".yml", ".json"):
        if path.suffix.lower() == ".json":
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise RosterError(f"cannot read roster {path}: {exc}") from exc
        else:
            data = yamlio.load_file(path, error=RosterError)
        if isinstance(data, dict):
            data = data.get("players")
        if not isinstance(data, list):
            raise RosterError(f"{path}: expected a list of names (or a mapping with 'players')")
        names = [str(n).strip() for n in data]
    else:
        try:
            names = parse_names(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise RosterError(f"cannot read roster {path}: {exc.strerror or exc}") from exc
    return check_roster(names, source=str(path))


def check_roster(names: list[str], *, source: str = "the roster", force: bool = False) -> list[str]:
    """Names must be unique (ignoring case), non-empty, and 6 to 30 of them (more with force)."""
    if any(not n for n in names):
        raise RosterError(f"{source}: a name is empty")
    seen: dict[str, str] = {}
    for n in names:
        if n.lower() in seen:
            raise RosterError(f"{source}: '{n}' appears twice; every player needs a different name")
        seen[n.lower()] = n
    if len(names) < MIN_PLAYERS:
        raise RosterError(f"{source}: {len(names)} players is too few; a game needs {MIN_PLAYERS} to {MAX_PLAYERS}")
    if len(names) > MAX_PLAYERS and not force:
        raise RosterError(f"{source}: {len(names)} players is too many; a game needs {MIN_PLAYERS} to "
                          f"{MAX_PLAYERS} (use --force to play with more)")
    return names
