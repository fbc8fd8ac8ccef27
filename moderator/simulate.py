"""Play a scenario on a virtual clock and collect its event log."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from moderator.adapters.clock import VirtualClock
from moderator.errors import ScenarioError
from moderator.game.engine import Engine
from moderator.game.rules import plan_for, split_rooms
from moderator.scenario import Scenario, Step
from moderator.settings import Schedule
from moderator.speech.catalog import Catalog
from moderator.speech.grammar import Grammar


class ScriptClock(VirtualClock):
    """A scenario's virtual clock. Until the game begins, ``lead_in`` may start it earlier: a spoken briefing
    is said before round 1, and a script's times count from round 1's start."""

    def __init__(self, start: float = 0.0) -> None:
        super().__init__(start)
        self.begun = False

    def lead_in(self, seconds: float) -> None:
        """Start ``seconds`` earlier (to the millisecond, the event log's resolution)."""
        if self.begun:
            raise RuntimeError("the game has begun: its clock can no longer start earlier")
        self._now = round(self._now - seconds, 3)


def advance(engine: Engine, clock: VirtualClock, target: float) -> None:
    """Move the virtual clock to ``target``, firing every timer due on the way, in order.

    A voice (an announcer with ``pump``/``next_wake``, the Speaker) is pumped at every step and at each
    moment it has something to do (a phrase starts or ends), after the timers due then.
    """
    wake = getattr(engine.announcer, "next_wake", None)
    while True:
        due = [t for t in (engine.next_due(), wake() if wake is not None else None) if t is not None]
        if not due or min(due) > target:
            break
        clock.set(max(min(due), clock.now()))
        engine.tick()
        _pump(engine)
    clock.set(max(target, clock.now()))
    _pump(engine)


def finish_speaking(engine: Engine, clock: VirtualClock) -> None:
    """Let the voice finish what it was saying: the clock moves on until it is quiet (no timer fires)."""
    wake = getattr(engine.announcer, "next_wake", None)
    while wake is not None and (t := wake()) is not None:
        clock.set(max(t, clock.now()))
        _pump(engine)


def _pump(engine: Engine) -> None:
    pump = getattr(engine.announcer, "pump", None)
    if pump is not None:
        pump()


def run_scenario(
    scenario: Scenario,
    *,
    grammar: Grammar,
    catalog: Catalog,
    listeners: list[Callable[[dict[str, Any]], None]] = (),  # type: ignore[assignment]
    setup: Callable[[Engine], None] | None = None,
    schedule: Schedule | None = None,
    deliver: Callable[[Engine, VirtualClock, Step], None] | None = None,
    between: Callable[[Engine, VirtualClock, float], None] | None = None,
) -> Engine:
    """Play the scenario to its last step in text mode; returns the engine in its final state.

    Round 1 starts at t=0: if no setup step said "start the game", the game is
    started then (without a ``command`` event, since nobody said it). ``deliver``
    hands each step to the game (spoken into a microphone, say); by default a
    ``say`` is typed. ``setup`` may give the engine a voice, and move the clock's
    start earlier by the briefing's length (``ScriptClock.lead_in``), since with a
    voice round 1 starts once the briefing has been said. What the voice is still
    saying after the last step is said before this returns. ``between`` moves the clock from one
    step to the next instead of ``advance`` (the microphones hear the room meanwhile, say).
    """
    clock = script_clock(scenario, deliver)
    rooms = scenario.rooms
    if rooms is None:
        a, b = split_rooms(scenario.players, random.Random(scenario.seed))
        rooms = {"A": a, "B": b}
    plan = plan_for(len(scenario.players), scenario.options)
    engine = Engine.new(plan, rooms, clock=clock, grammar=grammar, catalog=catalog, schedule=schedule,
                        read_back=scenario.options.read_back, cards=scenario.cards, buried=scenario.buried)
    play_steps(engine, clock, scenario.steps, listeners=listeners, setup=setup, deliver=deliver, between=between)
    return engine


def script_clock(scenario: Any, deliver: object | None) -> ScriptClock:
    """The clock of a scripted game, from its earliest step (a game of any kind); audio steps need ``deliver``."""
    if deliver is None and any(step.audio is not None for step in scenario.steps):
        raise ScenarioError(f"{scenario.source}: 'audio' steps need a recognizer to hear them")
    timed = [s.at for s in scenario.steps if s.at is not None]
    return ScriptClock(start=min([0.0, *timed]))


def play_steps(engine: Any, clock: ScriptClock, steps: Sequence[Step], *,
               listeners: Sequence[Callable[[dict[str, Any]], None]], setup: Callable[[Any], None] | None,
               deliver: Callable[[Any, VirtualClock, Step], None] | None,
               between: Callable[[Any, VirtualClock, float], None] | None) -> None:
    """Begin a scripted game of any kind and play its steps (as ``run_scenario`` describes), then say what is
    still to be said. The game starts at t=0 if no set-up step started it."""
    for listener in listeners:
        engine.subscribe(listener)
    if setup is not None:
        setup(engine)
    clock.begun = True
    engine.begin()
    move = between or advance
    for step in steps:
        if step.at is not None:
            if step.at >= 0 and clock.now() <= 0 and engine.in_state("briefing"):
                move(engine, clock, 0.0)
                if engine.in_state("briefing"):  # a "start the game" said during the briefing starts it by now
                    engine.start_game()
            move(engine, clock, step.at)
        if deliver is not None:
            deliver(engine, clock, step)
        elif step.say is not None:
            engine.handle_text(step.say, step.room)
    finish_speaking(engine, clock)
