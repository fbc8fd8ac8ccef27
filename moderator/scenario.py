"""Scenario files for ``moderator simulate``: loading and validation (see docs/scenario-format.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from moderator import yamlio
from moderator.errors import ModeratorError, RulesError, ScenarioError
from moderator.game import catalogue
from moderator.game.deck import buried_from, check_cards
from moderator.game.engine import READ_BACK
from moderator.game.rules import HOSTAGE_TABLES, MAX_PLAYERS, MIN_PLAYERS, plan_for
from moderator.game.state import ROOMS
from moderator.inputs import control_character, reading, shown
from moderator.limits import (
    ROUND_MAX_SECONDS,
    ROUND_MIN_SECONDS,
    SCENARIO_MAX_BYTES,
    SCENARIO_MAX_STEPS,
    SCRIPT_MAX_SECONDS,
)
from moderator.resources import SCENARIOS
from moderator.roster import check_name
from moderator.settings import GameOptions

_OPTION_TYPES: dict[str, type] = {
    "rounds": int, "hostage_table": str, "givesy_backsies": str, "bury": bool, "round_seconds": int,
    "durations": list, "no_timer": bool, "force": bool, "mics": str,
    "read_back": str, "wake_word": str, "preset": str, "characters": list,
}


#: The games a scenario may play (``game:``; two_rooms when left out).
GAMES = ("two_rooms", "room25")


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
    cards: dict[str, str] | None = None
    """The advanced game's deal, when the script gives it (player -> card id)."""
    buried: str | None = None
    """The card set aside, when the script gives it (with ``cards`` and ``bury: true``)."""


def load_scenario(path: Path) -> Scenario:
    """Read and validate a scenario file. A name with no such file, such as ``eight_players``, is one of the
    scenarios that come with the package (``scenarios/``)."""
    path = Path(path)
    packaged = SCENARIOS / f"{path.name.removesuffix('.yaml')}.yaml"
    with reading(path, ScenarioError):
        if not _exists(path) and path.parent == Path(".") and _exists(packaged):
            path = packaged
        data = yamlio.load_file(path, error=ScenarioError, what="scenario", max_bytes=SCENARIO_MAX_BYTES)
        return scenario_from_dict(data, source=str(path), base=path.parent)


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:  # a name too long, say: reading it says so
        return False


def scenario_from_dict(data: Any, *, source: str = "<data>", base: Path = Path(".")) -> Scenario:
    """Validate parsed YAML; every error names the file and, where it applies, the step."""

    def fail(msg: str) -> ScenarioError:
        return ScenarioError(f"{source}: {msg}")

    if not isinstance(data, dict):
        raise fail("expected a mapping with 'players' and 'steps'")
    if data.get("game", "two_rooms") not in GAMES:
        raise fail(f"unknown game {shown(data['game'])}; known: {', '.join(GAMES)}")
    if data.get("game") == "room25":
        from moderator.room25.scenario import room25_from_dict

        return room25_from_dict(data, source=source, base=base)  # type: ignore[return-value]
    _no_unknown_keys(data, ("game", "players", "rooms", "seed", "options", "steps", "name", "description", "cards",
                            "buried"), "", fail)
    options = _options(data.get("options") or {}, fail)
    players = _players(data.get("players"), options.force, source)
    rooms = _rooms(data.get("rooms"), players, fail)
    seed = data.get("seed", 0)
    if not isinstance(seed, int):
        raise fail("'seed' must be an integer")
    steps = _steps(data.get("steps"), players, options.shared_mic, base, fail)
    cards, buried = _deal(data.get("cards"), data.get("buried"), players, options, fail)
    return Scenario(players, rooms, seed, options, steps, source, cards, buried)


def _deal(cards: Any, buried: Any, players: list[str], options: GameOptions,
          fail: Any) -> tuple[dict[str, str] | None, str | None]:
    """A scripted deal: ``cards`` gives every player one card of the game's deck; ``buried`` the card set aside."""
    if cards is None:
        if buried is not None:
            raise fail("'buried' needs 'cards': the deal it is left over from")
        return None, None
    if not isinstance(cards, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in cards.items()):
        raise fail("'cards' must map each player to a card id, e.g. Alice: president")
    if buried is not None and not isinstance(buried, str):
        raise fail("'buried' must be a card id, e.g. martyr")
    try:
        plan = plan_for(len(players), options)
        check_cards(catalogue.default(), plan.deck, players, cards, buried, bury=bool(plan.buried))
    except RulesError as exc:
        raise fail(str(exc)) from exc
    return dict(cards), buried or (buried_from(plan.deck, cards) if plan.buried else None)


def _no_unknown_keys(raw: dict[Any, Any], known: tuple[str, ...], where: str, fail: Any) -> None:
    unknown = sorted(shown(key) for key in raw if key not in known)
    if unknown:
        raise fail(f"{where}unknown keys: {', '.join(unknown[:5])}")


def _players(raw: Any, force: bool, source: str) -> list[str]:
    if not isinstance(raw, list) or not all(isinstance(p, str) and p.strip() for p in raw):
        raise ScenarioError(f"{source}: 'players' must be a list of names")
    players = [check_name(p.strip(), where=f"player {k}", source=source, error=ScenarioError)
               for k, p in enumerate(raw, 1)]
    folded = [p.lower() for p in players]
    dupes = sorted({p for p in players if folded.count(p.lower()) > 1})
    if dupes:
        raise ScenarioError(f"{source}: player names must be unique; repeated: {', '.join(dupes)}")
    if not MIN_PLAYERS <= len(players) <= (len(players) if force else MAX_PLAYERS):
        raise ScenarioError(f"{source}: {len(players)} players: a game needs {MIN_PLAYERS} to {MAX_PLAYERS}"
                            f"{'' if len(players) < MIN_PLAYERS else ' (more with the option force: true)'}")
    return players


def _rooms(raw: Any, players: list[str], fail: Any) -> dict[str, list[str]] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) != set(ROOMS):
        raise fail("'rooms' must have exactly the keys A and B")
    for r in ROOMS:
        if not isinstance(raw[r] or [], list) or not all(isinstance(p, str) for p in raw[r] or []):
            raise fail(f"room {r} must be a list of player names, got {shown(raw[r])}")
    rooms = {r: list(raw[r] or []) for r in ROOMS}
    for r in ROOMS:
        for p in rooms[r]:
            if p not in players:
                raise fail(f"room {r} names unknown player {shown(p)}")
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
            raise fail(f"unknown option {shown(key)}; known: {', '.join(sorted(_OPTION_TYPES))}")
        if not isinstance(value, _OPTION_TYPES[key]) or (isinstance(value, bool) and _OPTION_TYPES[key] is int):
            raise fail(f"option '{key}' must be {_OPTION_TYPES[key].__name__}, got {shown(value)}")
    mics = raw.get("mics", "per-room")
    if mics not in ("per-room", "shared"):
        raise fail(f"option 'mics' must be per-room or shared, got {shown(mics)}")
    if raw.get("read_back", "spoken") not in READ_BACK:
        raise fail(f"option 'read_back' must be one of {', '.join(READ_BACK)}, got {shown(raw['read_back'])}")
    if raw.get("hostage_table", "current") not in HOSTAGE_TABLES:
        raise fail(f"option 'hostage_table' must be {' or '.join(HOSTAGE_TABLES)}, got {shown(raw['hostage_table'])}")
    if "wake_word" in raw and (not raw["wake_word"].strip() or control_character(raw["wake_word"])):
        raise fail("option 'wake_word' must be a word, e.g. moderator")
    fields = {k: v for k, v in raw.items() if k != "mics"}
    if "characters" in fields:
        if not all(isinstance(c, str) for c in fields["characters"]):
            raise fail("option 'characters' must be a list of card ids, e.g. [doctor, engineer]")
        fields["characters"] = tuple(fields["characters"])
    if "durations" in fields:
        fields["durations"] = tuple(_round_seconds(s, "durations", fail) for s in fields["durations"])
    if "round_seconds" in fields:
        fields["round_seconds"] = _round_seconds(fields["round_seconds"], "round_seconds", fail)
    return GameOptions(shared_mic=mics == "shared", **fields)


def _round_seconds(value: Any, option: str, fail: Any) -> int:
    """A round's length in whole seconds (rounded); NaN, infinities and a round under 1 s are refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not ROUND_MIN_SECONDS <= value <= ROUND_MAX_SECONDS:
        raise fail(f"option '{option}': a round lasts {ROUND_MIN_SECONDS} to {ROUND_MAX_SECONDS} seconds, "
                   f"got {shown(value)}")
    return round(value)


def _steps(raw: Any, players: list[str], shared: bool, base: Path, fail: Any) -> list[Step]:
    if not isinstance(raw, list):
        raise fail("'steps' must be a list")
    if len(raw) > SCENARIO_MAX_STEPS:
        raise fail(f"{len(raw)} steps; a scenario has at most {SCENARIO_MAX_STEPS}")
    steps: list[Step] = []
    last = float("-inf")
    for i, item in enumerate(raw, 1):
        if not isinstance(item, dict):
            raise fail(f"step {i}: expected a mapping with 'at' and 'say' or 'audio'")
        _no_unknown_keys(item, ("at", "room", "say", "audio"), f"step {i}: ", fail)
        at = _at(item.get("at"), i, fail)
        if at is not None:
            if at < last:
                raise fail(f"step {i}: 'at' {at:g} is earlier than the step before ({last:g}); times must not decrease")
            last = at
        if at is None and last > float("-inf"):
            raise fail(f"step {i}: 'at: setup' steps must come before timed steps")
        room = item.get("room")
        if room is not None and room not in ROOMS:
            raise fail(f"step {i}: room must be A or B, got {shown(room)}")
        # Without a room a typed step's room follows from the names said ("both" when none does); a recording has no
        # words to tell it, so it needs its room.
        if room is None and not shared and "audio" in item:
            raise fail(f"step {i}: with one microphone per room, an 'audio' step needs 'room: A' or 'room: B'")
        if ("say" in item) == ("audio" in item):
            raise fail(f"step {i}: give exactly one of 'say' or 'audio'")
        say = _text(item, "say", i, fail) if "say" in item else None
        audio = _audio(_text(item, "audio", i, fail), base, i, fail) if "audio" in item else None
        steps.append(Step(i, at, None if shared else room, say, audio))
    return steps


def _at(raw: Any, i: int, fail: Any) -> float | None:
    """A step's time: None for "setup", else finite seconds within ``SCRIPT_MAX_SECONDS`` of 0."""
    if raw == "setup":
        return None
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        raise fail(f"step {i}: 'at' must be a number of seconds or 'setup', got {shown(raw)}")
    if not -SCRIPT_MAX_SECONDS <= raw <= SCRIPT_MAX_SECONDS:  # written so that NaN is refused too
        raise fail(f"step {i}: 'at' must be a number of seconds from {-SCRIPT_MAX_SECONDS} to {SCRIPT_MAX_SECONDS}, "
                   f"got {shown(raw)}")
    return float(raw)


def _text(item: dict[str, Any], key: str, i: int, fail: Any) -> str:
    value = item[key]
    if not isinstance(value, str):
        raise fail(f"step {i}: '{key}' must be text (quote it if it looks like a number, true or null), "
                   f"got {shown(value)}")
    bad = control_character(" ".join(value.split()))  # line breaks and tabs in a long line are spaces
    if bad is not None:
        raise fail(f"step {i}: '{key}' holds {bad}")
    return value


def _audio(name: str, base: Path, i: int, fail: Any) -> Path:
    from moderator.audio.clip import wav_header

    audio = (base / name).absolute()
    try:
        audio = audio.resolve()
        found = audio.is_file()
    except (OSError, RuntimeError) as exc:  # a name too long, a loop of links
        raise fail(f"step {i}: audio file {shown(name)}: {getattr(exc, 'strerror', None) or exc}") from exc
    if not found:
        raise fail(f"step {i}: audio file {name} not found (looked in {audio})")
    try:
        wav_header(audio)
    except ModeratorError as exc:
        raise fail(f"step {i}: {exc}") from exc
    return audio
