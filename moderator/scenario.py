"""Scenario files for ``moderator simulate``: loading and validation (see docs/scenario-format.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from moderator import yamlio
from moderator.errors import ScenarioError
from moderator.game.engine import READ_BACK
from moderator.game.rules import MAX_PLAYERS, MIN_PLAYERS
from moderator.game.state import ROOMS
from moderator.resources import SCENARIOS
from moderator.settings import GameOptions

_OPTION_TYPES: dict[str, type] = {
    "rounds": int, "hostage_table": str, "givesy_backsies": str, "bury": bool, "round_seconds": int,
    "durations": list, "no_timer": bool, "force": bool, "mics": str,
    "read_back": str, "wake_word": str,
}


@dataclass(frozen=True)
class Step:
    """One scripted line: said (or played) at a time, into a room's microphone."""

    index: int
    at: float | None  # None: "setup", no clock advance
    room: str | None
    say: str | None = None
    audio: Path | None = None


@dataclass(frozen=True)
class Scenario:
    """A whole scripted game."""

    players: list[str]
    rooms: dict[str, list[str]] | None
    seed: int
    options: GameOptions
    steps: list[Step] = field(default_factory=list)
    source: str = "<data>"


def load_scenario(path: Path) -> Scenario:
    """Read and validate a scenario file. A name with no such file, such as ``eight_players``, is one of the
    scenarios that come with the package (``scenarios/``)."""
    path = Path(path)
    packaged = SCENARIOS / f"{path.name.removesuffix('.yaml')}.yaml"
    if not path.exists() and path.parent == Path(".") and packaged.exists():
        path = packaged
    data = yamlio.load_file(path, error=ScenarioError)
    return scenario_from_dict(data, source=str(path), base=path.parent)


def scenario_from_dict(data: Any, *, source: str = "<data>", base: Path = Path(".")) -> Scenario:
    """Validate parsed YAML; every error names the file and, where it applies, the step."""

    def fail(msg: str) -> ScenarioError:
        return ScenarioError(f"{source}: {msg}")

    if not isinstance(data, dict):
        raise fail("expected a mapping with 'players' and 'steps'")
    unknown = set(data) - {"players", "rooms", "seed", "options", "steps", "name", "description"}
    if unknown:
        raise fail(f"unknown keys: {', '.join(sorted(unknown))}")
    players = data.get("players")
    if not isinstance(players, list) or not all(isinstance(p, str) and p.strip() for p in players):
        raise fail("'players' must be a list of names")
    players = [p.strip() for p in players]
    dupes = sorted({p for p in players if [q.lower() for q in players].count(p.lower()) > 1})
    if dupes:
        raise fail(f"player names must be unique; repeated: {', '.join(dupes)}")
    if not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
        raise fail(f"{len(players)} players: a game needs {MIN_PLAYERS} to {MAX_PLAYERS}")
    rooms = _rooms(data.get("rooms"), players, fail)
    options = _options(data.get("options") or {}, fail)
    seed = data.get("seed", 0)
    if not isinstance(seed, int):
        raise fail("'seed' must be an integer")
    steps = _steps(data.get("steps"), players, options.shared_mic, base, fail)
    return Scenario(players, rooms, seed, options, steps, source)


def _rooms(raw: Any, players: list[str], fail: Any) -> dict[str, list[str]] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) != set(ROOMS):
        raise fail("'rooms' must have exactly the keys A and B")
    rooms = {r: [str(p) for p in raw[r] or []] for r in ROOMS}
    for r in ROOMS:
        for p in rooms[r]:
            if p not in players:
                raise fail(f"room {r} names unknown player '{p}'")
    placed = rooms["A"] + rooms["B"]
    missing = [p for p in players if p not in placed]
    twice = sorted({p for p in placed if placed.count(p) > 1})
    if missing or twice:
        raise fail(f"every player must be in exactly one room; missing: {missing or 'none'}, twice: {twice or 'none'}")
    return rooms


def _options(raw: Any, fail: Any) -> GameOptions:
    if not isinstance(raw, dict):
        raise fail("'options' must be a mapping")
    for key, value in raw.items():
        if key not in _OPTION_TYPES:
            raise fail(f"unknown option '{key}'; known: {', '.join(sorted(_OPTION_TYPES))}")
        if not isinstance(value, _OPTION_TYPES[key]) or (isinstance(value, bool) and _OPTION_TYPES[key] is int):
            raise fail(f"option '{key}' must be {_OPTION_TYPES[key].__name__}, got {value!r}")
    mics = raw.get("mics", "per-room")
    if mics not in ("per-room", "shared"):
        raise fail(f"option 'mics' must be per-room or shared, got {mics!r}")
    if raw.get("read_back", "spoken") not in READ_BACK:
        raise fail(f"option 'read_back' must be one of {', '.join(READ_BACK)}, got {raw['read_back']!r}")
    if "wake_word" in raw and not raw["wake_word"].strip():
        raise fail("option 'wake_word' must be a word, e.g. moderator")
    fields = {k: v for k, v in raw.items() if k != "mics"}
    if "durations" in fields:
        fields["durations"] = tuple(fields["durations"])
    return GameOptions(shared_mic=mics == "shared", **fields)


def _steps(raw: Any, players: list[str], shared: bool, base: Path, fail: Any) -> list[Step]:
    if not isinstance(raw, list):
        raise fail("'steps' must be a list")
    steps: list[Step] = []
    last = float("-inf")
    for i, item in enumerate(raw, 1):
        if not isinstance(item, dict):
            raise fail(f"step {i}: expected a mapping with 'at' and 'say' or 'audio'")
        unknown = set(item) - {"at", "room", "say", "audio"}
        if unknown:
            raise fail(f"step {i}: unknown keys {', '.join(sorted(unknown))}")
        at_raw = item.get("at")
        if at_raw == "setup":
            at = None
        elif isinstance(at_raw, (int, float)) and not isinstance(at_raw, bool):
            at = float(at_raw)
            if at < last:
                raise fail(f"step {i}: 'at' {at:g} is earlier than the step before ({last:g}); times must not decrease")
            last = at
        else:
            raise fail(f"step {i}: 'at' must be a number of seconds or 'setup', got {at_raw!r}")
        if at is None and last > float("-inf"):
            raise fail(f"step {i}: 'at: setup' steps must come before timed steps")
        room = item.get("room")
        if room is not None and room not in ROOMS:
            raise fail(f"step {i}: room must be A or B, got {room!r}")
        if room is None and not shared and ("say" in item or "audio" in item):
            raise fail(f"step {i}: with one microphone per room, each step needs 'room: A' or 'room: B'")
        if ("say" in item) == ("audio" in item):
            raise fail(f"step {i}: give exactly one of 'say' or 'audio'")
        audio = None
        if "audio" in item:
            audio = (base / str(item["audio"])).resolve()
            if not audio.is_file():
                raise fail(f"step {i}: audio file {item['audio']} not found (looked in {audio})")
        say = str(item["say"]) if "say" in item else None
        steps.append(Step(i, at, None if shared else room, say, audio))
    return steps
