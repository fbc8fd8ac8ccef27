"""Rosters: the players' names, from the command line or a file, each checked before a game can use it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from moderator import yamlio
from moderator.errors import ModeratorError, RosterError, UsageError
from moderator.game.rules import MAX_PLAYERS, MIN_PLAYERS
from moderator.inputs import control_character, read_text, reading, shown
from moderator.limits import ROSTER_MAX_BYTES

#: Names that are answers: a player called "Yes" could not confirm a read-back. Each with a name to suggest.
ANSWER_NAMES = {"yes": "Yesenia", "no": "Noah"}


def parse_names(text: str, *, source: str = "--players", error: type[ModeratorError] = UsageError) -> list[str]:
    """Names separated by commas or newlines; blank lines and '#' comments are skipped.

    Raises:
        error: an empty entry ("Alice,,Bob"), or a name ``check_name`` refuses; the message names its position.
    """
    names: list[str] = []
    lines = text.split("\n")  # not splitlines(): a control character inside a name must not split it
    for number, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].rstrip("\r")
        if not line.strip():
            continue
        entries = line.split(",")
        for k, entry in enumerate(entries, 1):
            where = f"line {number}" if len(lines) > 1 else ""
            if len(entries) > 1:
                where = f"{where}, entry {k}" if where else f"entry {k}"
            if not entry.strip():
                raise error(f"{source}: {where} is empty; separate names with one comma, e.g. Alice,Bob,Carol")
            names.append(check_name(entry.strip(), where=where, source=source, error=error))
    return names


def check_name(name: str, *, where: str, source: str, error: type[ModeratorError] = RosterError) -> str:
    """``name`` if a game can use it: no control characters (they would act on the terminal it is shown on),
    and not an answer ("yes", "no"). ``where`` says which entry it is ("line 3", "player 2")."""
    where = f"{source}: {where}:" if where else f"{source}:"
    bad = control_character(name)
    if bad is not None:
        raise error(f"{where} {shown(name)} holds {bad}; a name must be plain text")
    if name.lower() in ANSWER_NAMES:
        raise error(f"{where} a player named {name!r} could not answer 'yes' or 'no' when the moderator "
                    f"reads a choice back; call them {name}2 or {ANSWER_NAMES[name.lower()]}")
    return name


def load_roster(path: Path, *, force: bool = False, counted: bool = True) -> list[str]:
    """Read a roster: a YAML/JSON list of names (or a mapping with ``players``), or plain text with one name
    per line (or comma separated). ``force`` allows more than 30 players, as ``--force`` does; ``counted=False``
    leaves the names unchecked, for a game with other counts (Room 25 checks its own)."""
    path = Path(path)
    with reading(path, RosterError):
        text = read_text(path, error=RosterError, what="roster", max_bytes=ROSTER_MAX_BYTES)
        suffix = path.suffix.lower()
        if suffix in (".yaml", ".yml", ".json"):
            names = _listed_names(_parse(text, path, as_json=suffix == ".json"), path)
        else:
            names = parse_names(text, source=str(path), error=RosterError)
        return check_roster(names, source=str(path), force=force) if counted else names


def _parse(text: str, path: Path, *, as_json: bool) -> Any:
    if not as_json:
        return yamlio.loads(text, source=str(path), error=RosterError)
    try:
        return json.loads(text)
    except ValueError as exc:
        raise RosterError(f"{path}: invalid JSON: {exc}") from exc
    except RecursionError:
        raise RosterError(f"{path}: invalid JSON: lists nested too deeply") from None


def _listed_names(data: Any, path: Path) -> list[str]:
    if isinstance(data, dict):
        data = data.get("players")
    if not isinstance(data, list):
        raise RosterError(f"{path}: expected a list of names (or a mapping with 'players')")
    names = []
    for k, entry in enumerate(data, 1):
        if entry is None or (isinstance(entry, str) and not entry.strip()):
            raise RosterError(f"{path}: entry {k} is empty")
        if not isinstance(entry, str):
            raise RosterError(f"{path}: entry {k} is {shown(entry)}, not a name; write each name as text "
                              "(in quotes if it looks like a number or true)")
        names.append(check_name(entry.strip(), where=f"entry {k}", source=str(path)))
    return names


def check_roster(names: list[str], *, source: str = "the roster", force: bool = False) -> list[str]:
    """Names must be unique (ignoring case), non-empty, and 6 to 30 of them (more with force)."""
    if any(not n for n in names):
        raise RosterError(f"{source}: a name is empty")
    seen: dict[str, str] = {}
    for n in names:
        if n.lower() in seen:
            raise RosterError(f"{source}: {shown(n)} appears twice; every player needs a different name")
        seen[n.lower()] = n
    if len(names) < MIN_PLAYERS:
        raise RosterError(f"{source}: {len(names)} players is too few; a game needs {MIN_PLAYERS} to {MAX_PLAYERS}")
    if len(names) > MAX_PLAYERS and not force:
        raise RosterError(f"{source}: {len(names)} players is too many; a game needs {MIN_PLAYERS} to "
                          f"{MAX_PLAYERS} (use --force to play with more)")
    return names
