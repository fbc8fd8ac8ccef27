"""Games driven to each phase: what a recognizer is told to expect there, and engines to listen in it."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from moderator.adapters.clock import VirtualClock
from moderator.game.engine import Engine
from moderator.game.rules import make_plan
from moderator.simulate import advance
from moderator.speech.catalog import load_catalog
from moderator.speech.grammar import Grammar, load_grammar

#: Long rounds: listening benchmarks feed minutes of audio without the round ending under them.
ROUND_SECONDS = 3600


def new_engine(roster: Sequence[str], grammar: Grammar | None = None) -> Engine:
    """A new 3-round game of ``roster`` (split in half) on a virtual clock, begun (in its briefing)."""
    half = len(roster) // 2
    rooms = {"A": list(roster[:half]), "B": list(roster[half:])}
    plan = make_plan(len(roster), rounds=3, durations=[ROUND_SECONDS] * 3, force=True)
    engine = Engine.new(plan, rooms, clock=VirtualClock(), grammar=grammar or load_grammar(),
                        catalog=load_catalog())
    engine.begin()
    return engine


def _say(engine: Engine, text: str, room: str | None = None) -> None:
    if not engine.handle_text(text, room):
        raise RuntimeError(f"driving the benchmark game: {text!r} was refused in {engine.state.machine}")


def _step(engine: Engine) -> None:
    """One move of a game played by the book."""
    state = engine.state
    if engine.in_state("briefing"):
        _say(engine, "start the game")
    elif engine.in_state("round.running") and not all(r.leader for r in state.rooms.values()):
        for room, r in state.rooms.items():
            if not r.leader:
                _say(engine, f"I appoint {r.members[0]} as leader", room)
    elif engine.in_state("round.running"):
        advance(engine, engine.clock, engine.clock.now() + ROUND_SECONDS + 1)
    elif engine.in_state("hostages"):
        for room, r in state.rooms.items():
            if r.hostages is None:
                picks = [p for p in r.members if p != r.leader][: engine.hostages_due()]
                _say(engine, "hostages " + " and ".join(picks), room)
    elif engine.in_state("parley"):
        _say(engine, "leaders have met")
    elif engine.in_state("prediction"):
        _say(engine, "gambler predicts red")
    else:
        raise RuntimeError(f"the benchmark game cannot move on from {engine.state.machine}")


def _leaders(engine: Engine) -> bool:
    return engine.in_state("round.running") and all(r.leader for r in engine.state.rooms.values())


def _pause(engine: Engine) -> None:
    _say(engine, "pause")


def _ask_leader(engine: Engine) -> None:
    _say(engine, "I appoint you as leader", "A")


#: label -> (reached when, then do). The phases a game spends its time in, plus two question states.
PHASES: dict[str, tuple[Callable[[Engine], bool], Callable[[Engine], None] | None]] = {
    "briefing": (lambda e: e.in_state("briefing"), None),
    "round, no leaders": (lambda e: e.in_state("round.running"), None),
    "round, leader asked": (lambda e: e.in_state("round.running"), _ask_leader),
    "round": (_leaders, None),
    "paused": (_leaders, _pause),
    "hostages": (lambda e: e.in_state("hostages"), None),
    "parley": (lambda e: e.in_state("parley"), None),
    "reveal": (lambda e: e.in_state("reveal") or e.in_state("prediction"), None),
}


def phase_engine(label: str, roster: Sequence[str], grammar: Grammar | None = None) -> Engine:
    """A game of ``roster`` played up to the phase ``label`` of ``PHASES``."""
    reached, then = PHASES[label]
    engine = new_engine(roster, grammar)
    for _ in range(100):
        if reached(engine):
            if then is not None:
                then(engine)
            return engine
        _step(engine)
    raise RuntimeError(f"the benchmark game never reached {label!r}")


def phase_intents(roster: Sequence[str]) -> dict[str, list[str]]:
    """label -> the intents the recognizer is told to expect in that phase."""
    return {label: phase_engine(label, roster).allowed_intents() for label in PHASES}


def grammar_for_intent(phases: dict[str, list[str]]) -> dict[str, tuple[str, list[str]]]:
    """intent -> (phase, its intents): the largest phase grammar the intent is said in (the harder case)."""
    out: dict[str, tuple[str, list[str]]] = {}
    for label, intents in phases.items():
        for intent in intents:
            if intent not in out or len(intents) > len(out[intent][1]):
                out[intent] = (label, intents)
    return out
