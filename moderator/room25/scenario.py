"""Room 25's scenario files (``game: room25``, docs/scenario-format.md) and their run on a virtual clock."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from moderator.errors import ModeratorError, ScenarioError
from moderator.inputs import control_character, shown
from moderator.room25.engine import Room25Engine
from moderator.room25.rules import GAME, check_players, plan_for
from moderator.scenario import Step, _no_unknown_keys, _steps
from moderator.settings import GameOptions
from moderator.simulate import ScriptClock, play_steps, script_clock
from moderator.speech.catalog import Catalog
from moderator.speech.grammar import Grammar

_KEYS = ("game", "mode", "players", "guards", "seed", "options", "steps", "name", "description")
_OPTIONS = {"programming_seconds": int, "wake_word": str}


@dataclass(frozen=True)
class Room25Scenario:
    """A whole scripted game of Room 25. One table, one shared microphone (``options.shared_mic``)."""

    players: list[str]
    mode: str
    guards: int | None
    seed: int
    options: GameOptions
    steps: list[Step] = field(default_factory=list)
    source: str = "<data>"
    programming_seconds: int | None = None
    game: str = GAME


def room25_from_dict(data: dict[str, Any], *, source: str, base: Path) -> Room25Scenario:
    """Validate a ``game: room25`` scenario; every error names the file and, where it applies, the step."""

    def fail(msg: str) -> ScenarioError:
        return ScenarioError(f"{source}: {msg}")

    _no_unknown_keys(data, _KEYS, "", fail)
    raw = data.get("players")
    if not isinstance(raw, list) or not all(isinstance(p, str) and p.strip() for p in raw):
        raise fail("'players' must be a list of names")
    mode, guards, seed = data.get("mode"), data.get("guards"), data.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise fail("'seed' must be an integer")
    if guards is not None and (not isinstance(guards, int) or isinstance(guards, bool)):
        raise fail(f"'guards' must be 1 or 2, got {shown(guards)}")
    options = data.get("options") or {}
    if not isinstance(options, dict):
        raise fail("'options' must be a mapping")
    for key, value in options.items():
        if key not in _OPTIONS:
            raise fail(f"unknown option {shown(key)}; known: {', '.join(sorted(_OPTIONS))}")
        if not isinstance(value, _OPTIONS[key]) or isinstance(value, bool):
            raise fail(f"option '{key}' must be {_OPTIONS[key].__name__}, got {shown(value)}")
    wake = options.get("wake_word")
    if wake is not None and (not wake.strip() or control_character(wake)):
        raise fail("option 'wake_word' must be a word, e.g. moderator")
    try:
        players = check_players(raw, source=source)
        plan_for(str(mode), len(players), guards, options.get("programming_seconds"))
    except ModeratorError as exc:
        raise fail(str(exc).removeprefix(f"{source}: ")) from exc
    steps = _steps(data.get("steps"), players, True, base, fail)
    return Room25Scenario(players, str(mode), guards, seed, GameOptions(shared_mic=True, wake_word=wake), steps,
                          source, options.get("programming_seconds"))


def run_room25(
    scenario: Room25Scenario,
    *,
    grammar: Grammar,
    catalog: Catalog,
    listeners: list[Callable[[dict[str, Any]], None]] = (),  # type: ignore[assignment]
    setup: Callable[[Room25Engine], None] | None = None,
    deliver: Callable[[Room25Engine, ScriptClock, Step], None] | None = None,
    between: Callable[[Room25Engine, ScriptClock, float], None] | None = None,
    **_: Any,
) -> Room25Engine:
    """Play the scenario to its last step, as ``moderator.simulate.run_scenario`` does for Two Rooms: turn 1 starts
    at t=0 if no set-up step said "start the game" (without a ``command`` event, since nobody said it)."""
    clock = script_clock(scenario, deliver)
    plan = plan_for(scenario.mode, len(scenario.players), scenario.guards, scenario.programming_seconds)
    engine = Room25Engine.new(plan, scenario.players, clock=clock, grammar=grammar, catalog=catalog)
    play_steps(engine, clock, scenario.steps, listeners=listeners, setup=setup, deliver=deliver, between=between)
    return engine
