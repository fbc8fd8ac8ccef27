"""The game core imports one way: the rules, the hints and the round clock name what they need of a game in a
Protocol, the Engine implements those, and nothing in moderator/game imports the engine."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from moderator.adapters.clock import VirtualClock
from moderator.game import actions, hints, round_clock
from moderator.game.engine import Engine
from moderator.game.rules import make_plan
from moderator.resources import ROOT
from moderator.speech.catalog import load_catalog
from moderator.speech.grammar import load_grammar

GAME = ROOT / "moderator" / "game"


def imported(path: Any) -> set[str]:
    """Every module ``path`` imports, at run time or for type checking only."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
    return names


@pytest.mark.parametrize("path", sorted(p for p in GAME.glob("*.py") if p.name != "engine.py"), ids=lambda p: p.name)
def test_no_module_of_the_game_core_imports_the_engine(path: Any) -> None:
    assert "moderator.game.engine" not in imported(path)


@pytest.mark.parametrize("protocol", [actions.Game, hints.Situation, round_clock.RoundHost], ids=lambda p: p.__name__)
def test_the_engine_has_everything_each_protocol_names(protocol: type) -> None:
    engine = Engine.new(make_plan(8), {"A": ["Ann", "Bob", "Cat", "Dan"], "B": ["Eve", "Fay", "Gus", "Hal"]},
                        clock=VirtualClock(), grammar=load_grammar(), catalog=load_catalog())
    members = {name for name in [*vars(protocol), *protocol.__annotations__] if not name.startswith("_")}
    assert {"state", "in_state"} <= members
    assert sorted(m for m in members if not hasattr(engine, m)) == []
