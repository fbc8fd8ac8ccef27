"""Small builders shared by tests."""

from __future__ import annotations

from moderator.adapters.clock import VirtualClock
from moderator.game.engine import Engine
from moderator.game.rules import make_plan
from moderator.speech.catalog import load_catalog
from moderator.speech.grammar import load_grammar


def eight_player_engine() -> Engine:
    """A new 8-player game on a virtual clock, rooms fixed."""
    rooms = {"A": ["Alice", "Bob", "Carol", "Dave"], "B": ["Erin", "Frank", "Grace", "Heidi"]}
    return Engine.new(make_plan(8), rooms, clock=VirtualClock(), grammar=load_grammar(), catalog=load_catalog())
