"""The live view as JSON, built on the game's thread for the web pages and ``GET /api/state``.

Everything here is asked of the engine and its own modules, never worked out again: the headline and phase
(``moderator.view``), the time left and the hostages due (the round clock), the commands that fit now
(``hints``, ``Engine.may``), and the command buttons' sentences (the grammar's canonical templates).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from moderator.game import catalogue
from moderator.game.plan_view import card_name, dealing
from moderator.game.rules import GamePlan
from moderator.game.state import ROOMS
from moderator.speech.grammar_data import INTENT_SLOTS
from moderator.speech.template import Slot, skeletons
from moderator.view import headline

if TYPE_CHECKING:
    from moderator.game.engine import Engine
    from moderator.speech.grammar import Grammar

#: Intents that are answers to the moderator's spoken questions, or a voice-only form of another button.
_NO_BUTTON = frozenset({"appoint_you", "name_answer", "room_answer"})
#: Intents said in one room, whose buttons are on that room's panel; the others are the whole game's.
_IN_A_ROOM = frozenset({"appoint", "offer", "accept", "refuse", "usurp", "hostages", "ready", "bodyguard", "confirm"})
#: Intents whose player is anyone in the game, not a member of the room whose panel shows the button.
_ANYONE = frozenset({"reveal", "shoot"})


def live_view(engine: Engine, *, alerts: Sequence[str] = (), refusals: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """The view of the game now: rooms, leaders, hostages, clock, phase, paused, and what the host may do."""
    s = engine.state
    paused = engine.in_state("round.paused")
    allowed = [i for i in engine.allowed_intents() if i not in _NO_BUTTON and (i != "undo" or engine.can_undo())]
    return {
        "version": engine.version,
        "t": round(engine.clock.now(), 3),
        "phase": engine.phase()[1],
        "headline": headline(engine),
        "paused": paused,
        "round": s.round,
        "rounds": len(s.plan["rounds"]),
        "clock": _clock(engine, paused),
        "rooms": {room: _room(engine, room, allowed) for room in ROOMS},
        "commands": [i for i in allowed if i not in _IN_A_ROOM],
        "forms": {i: _form(engine, i) for i in allowed},
        "choices": _choices(engine),
        "deck": _deck(s.plan),
        "players": list(s.players),
        "refusals": list(refusals),
        "alerts": list(alerts),
        "winner": s.winner,
    }


def _clock(engine: Engine, paused: bool) -> dict[str, Any]:
    left = engine.time_left()
    rounds = engine.state.plan["rounds"]
    number = engine.state.round
    length = rounds[number - 1]["seconds"] if 0 < number <= len(rounds) else None
    running = left is not None and not paused and engine.in_state("round.running")
    return {"left": None if left is None else round(left, 3), "running": running, "seconds": length}


def _room(engine: Engine, room: str, allowed: list[str]) -> dict[str, Any]:
    r = engine.state.rooms[room]
    said = engine.state.last_said.get(room)
    helpful = engine.helpful_intents(room)
    fits = [i for i in allowed if i in _IN_A_ROOM and engine.may(i, room)]
    return {
        "members": list(r.members),
        "leader": r.leader,
        "hostages_due": engine.hostages_due() if engine.state.round else 0,
        "hostages": None if r.hostages is None else list(r.hostages),
        "pending": None if r.pending is None else list(r.pending),
        "said": None if said is None else said[1],
        "commands": [i for i in helpful if i in fits] + [i for i in fits if i not in helpful],
    }


def _form(engine: Engine, intent: str) -> dict[str, Any]:
    """A button: its label (the catalogue's name of the action) and the sentence it sends, slots to pick."""
    return {"label": engine.text(f"action.{intent}"), "parts": list(sentence(engine.grammar, intent)),
            "anyone": intent in _ANYONE}


@lru_cache(maxsize=64)
def sentence(grammar: Grammar, intent: str) -> tuple[dict[str, str], ...]:
    """The intent's canonical sentence (its first template, optional words left out) as words and slots to fill:
    ``({"words": "I appoint"}, {"slot": "player", "type": "player"}, {"words": "as leader"})``."""
    wanted = set(INTENT_SLOTS[intent])
    required = {name for name, (_, needed) in INTENT_SLOTS[intent].items() if needed}
    shapes = skeletons(grammar.trees(intent)[0])
    fits = [sh for sh in shapes if required <= {p.name for p in sh if isinstance(p, Slot)}]
    shape = min(fits, key=lambda sh: (len({p.name for p in sh if isinstance(p, Slot)} & wanted) - len(required),
                                      len(sh)))
    parts: list[dict[str, str]] = []
    for piece in shape:
        if isinstance(piece, Slot):
            parts.append({"slot": piece.name, "type": piece.type})
        elif parts and "words" in parts[-1]:
            parts[-1] = {"words": f"{parts[-1]['words']} {piece.text}"}
        else:
            parts.append({"words": piece.text})
    return tuple(parts)


def _choices(engine: Engine) -> dict[str, list[dict[str, str]]]:
    """The values of the slot types that are not players, as the grammar says them: teams, rooms, answers, and the
    cards of this game's deck (with the President and the Bomber) for the reveal."""
    lists = engine.grammar.lists
    deck = set(engine.state.plan["deck"]) | {"president", "bomber"}
    out: dict[str, list[dict[str, str]]] = {}
    for kind in ("team", "room", "answer", "role"):
        values = [v for v in lists.get(kind, {}) if kind != "role" or v in deck]
        out[kind] = [{"value": str(v), "say": lists[kind][v][0],
                      "label": card_name(str(v), _cards())[0] if kind == "role" else str(v)} for v in values]
    return out


@lru_cache(maxsize=1)
def _cards() -> catalogue.Catalogue:
    return catalogue.default()


def warm() -> None:
    """Load what the first view needs (the card catalogue, 80 ms), before the game starts."""
    _cards()


@lru_cache(maxsize=4)
def _deck_of(plan_json: str) -> dict[str, Any]:
    plan = GamePlan.from_dict(json.loads(plan_json))
    advanced = _cards() if plan.preset or plan.characters else None
    cards = []
    for card_id, count in plan.deck.items():
        name, team = card_name(card_id, advanced)
        cards.append({"id": card_id, "name": name, "team": team, "count": count})
    return {"players": plan.players, "cards": cards, "buried": plan.buried, "dealing": dealing(advanced, plan)}


def _deck(plan: dict[str, Any]) -> dict[str, Any]:
    """The deck to deal from for this game's player count: each card's name, team and count, how many to bury,
    and how to deal (``plan``'s own words)."""
    return _deck_of(json.dumps(plan))
