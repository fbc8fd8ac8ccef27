"""Small builders shared by tests."""

from __future__ import annotations

from typing import Any

from moderator.adapters.clock import VirtualClock
from moderator.game.engine import Engine
from moderator.game.rules import make_plan
from moderator.speech.catalog import load_catalog
from moderator.speech.grammar import load_grammar


def eight_player_engine() -> Engine:
    """A new 8-player game on a virtual clock, rooms fixed."""
    rooms = {"A": ["Alice", "Bob", "Carol", "Dave"], "B": ["Erin", "Frank", "Grace", "Heidi"]}
    return Engine.new(make_plan(8), rooms, clock=VirtualClock(), grammar=load_grammar(), catalog=load_catalog())


def hostage_phase_engine(read_back: str = "spoken") -> tuple[Engine, list[dict[str, Any]]]:
    """``eight_player_engine`` begun, with Alice and Erin leading, at round 1's end (the hostage choice), and the
    events it emitted."""
    engine = eight_player_engine()
    engine.read_back = read_back
    events: list[dict[str, Any]] = []
    engine.subscribe(events.append)
    engine.begin()
    for line, room in (("start the game", "A"), ("I appoint Alice as leader", "A"),
                       ("Frank appoints Erin as leader", "B")):
        assert engine.handle_text(line, room)
    engine.clock.set(180.0)  # type: ignore[attr-defined]
    engine.tick()
    assert engine.in_state("hostages")
    return engine, events
