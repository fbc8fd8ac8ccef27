"""Play a scenario on a virtual clock and collect its event log."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from moderator.adapters.clock import VirtualClock
from moderator.errors import ScenarioError
from moderator.game.engine import Engine
from moderator.game.rules import plan_for, split_rooms
from moderator.scenario import Scenario, Step
from moderator.settings import Schedule
from moderator.speech.catalog import Catalog
from moderator.speech.grammar import Grammar


def advance(engine: Engine, clock: VirtualClock, target: float) -> None:
    """Move the virtual clock to ``target``, firing every timer due on the way, in order."""
    while (due := engine.next_due()) is not None and due <= target:
        clock.set(max(due, clock.now()))
        engine.tick()
    clock.set(max(target, clock.now()))


def run_scenario(
    scenario: Scenario,
    *,
    grammar: Grammar,
    catalog: Catalog,
    listeners: list[Callable[[dict[str, Any]], None]] = (),  # type: ignore[assignment]
    setup: Callable[[Engine], None] | None = None,
    schedule: Schedule | None = None,
    deliver: Callable[[Engine, VirtualClock, Step], None] | None = None,
) -> Engine:
    """Play the scenario to its last step in text mode; returns the engine in its final state.

    Round 1 starts at t=0: if no setup step said "start the game", the game is
    started then (without a ``command`` event, since nobody said it). ``deliver``
    hands each step to the game (spoken into a microphone, say); by default a
    ``say`` is typed.
    """
    if deliver is None and any(step.audio is not None for step in scenario.steps):
        raise ScenarioError(f"{scenario.source}: 'audio' steps need a recognizer to hear them")
    timed = [s.at for s in scenario.steps if s.at is not None]
    clock = VirtualClock(start=min([0.0, *timed]))
    rooms = scenario.rooms
    if rooms is None:
        a, b = split_rooms(scenario.players, random.Random(scenario.seed))
        rooms = {"A": a, "B": b}
    plan = plan_for(len(scenario.players), scenario.options)
    engine = Engine.new(plan, rooms, clock=clock, grammar=grammar, catalog=catalog, schedule=schedule,
                        read_back=scenario.options.read_back)
    for listener in listeners:
        engine.subscribe(listener)
    if setup is not None:
        setup(engine)
    engine.begin()
    for step in scenario.steps:
        if step.at is not None:
            if step.at >= 0 and clock.now() <= 0 and engine.in_state("briefing"):
                advance(engine, clock, 0.0)
                engine.start_game()
            advance(engine, clock, step.at)
        if deliver is not None:
            deliver(engine, clock, step)
        elif step.say is not None:
            engine.handle_text(step.say, step.room)
    return engine
