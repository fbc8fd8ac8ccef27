"""What fits now: the intents a recognizer should listen for, and the few worth suggesting to the players."""

from __future__ import annotations

from typing import Protocol

from moderator.game.state import ROOMS, GameState
from moderator.game.statechart import Statechart


class Situation(Protocol):
    """What the hints need from the game; the Engine implements it."""

    state: GameState
    chart: Statechart

    def can_undo(self, room: str | None = None) -> bool: ...
    def in_state(self, name: str) -> bool: ...
    def may(self, intent: str, room: str) -> bool: ...


#: The advanced game's commands: not listened for in a basic game.
ADVANCED_INTENTS = frozenset({"guess", "shoot", "buried", "explain", "bodyguard"})


def allowed_intents(game: Situation) -> list[str]:
    """The intents that fit the current phase (what a recognizer should listen for now)."""
    s = game.state
    asked = s.asked_room or any(r.asked_leader for r in s.rooms.values())
    fact = (s.asking or "").startswith("shared:")  # the advanced reveal's "yes" or "no"
    hidden = (set() if asked else {"name_answer", "room_answer"}) | (
        set() if any(r.pending for r in s.rooms.values()) or fact else {"confirm"})
    if not (s.plan.get("preset") or s.plan.get("characters")):
        hidden |= ADVANCED_INTENTS
    else:  # the reveal's steps are listened for only when asked
        wanted = {"guess": s.asking == "guess", "shoot": s.asking == "shoot",
                  "buried": s.asking == "names" or game.in_state("prediction"),
                  "bodyguard": any(c.endswith("bodyguard") for c in s.plan["deck"])}
        hidden |= {intent for intent, now in wanted.items() if not now}
    return [intent for intent in game.chart.intents
            if intent not in hidden and any(game.may(intent, r) for r in ROOMS)]


def helpful_intents(game: Situation, room: str | None = None) -> list[str]:
    """The 3 to 5 intents most worth suggesting now in ``room`` (None: either room), best first: the
    answer the moderator waits for, then what moves the game on, then questions; fewer when fewer fit."""
    s = game.state
    rooms = [s.rooms[room]] if room in ROOMS else list(s.rooms.values())
    led, timed = all(r.leader is not None for r in rooms), s.deadline is not None
    wanted = [intent for intent, waiting in (
        ("confirm", any(r.pending for r in rooms)), ("room_answer", s.asked_room),
        ("name_answer", any(r.asked_leader for r in rooms))) if waiting]
    if game.in_state("round.running"):
        offer = any(r.offer for r in rooms)
        wanted += (["accept", "refuse"] if offer else []) + ([] if led else ["appoint"])
        untimed = (["hostages"] if led and any(r.hostages is None for r in rooms) else []) + (["ready"] if led else [])
        wanted += ["time", "pause"] if timed else [*untimed, "pause"]
        wanted += ([] if offer or not led else ["offer"]) + (["usurp"] if led else [])
    elif game.in_state("round.paused"):
        wanted += ["resume", "time"]
    elif game.in_state("hostages"):
        wanted += ([] if led else ["appoint"]) + ["hostages", "time"]
    elif s.asking is not None:  # the advanced reveal waits for one thing
        step = s.asking if s.asking in ("guess", "shoot") else "names" if s.asking == "names" else "fact"
        wanted += {"guess": ["guess"], "shoot": ["shoot"], "names": ["reveal", "buried"], "fact": ["confirm"]}[step]
    else:
        wanted += ["start", "met", "predict", "reveal", "buried"]
    wanted += ["undo"] if game.can_undo(room if room in ROOMS else None) else []
    fits = set(allowed_intents(game))
    if room in ROOMS:  # what only the other room may do now is no help here
        fits = {i for i in fits if game.may(i, room)}
    chosen = list(dict.fromkeys(i for i in wanted if i in fits))
    chosen += [i for i in ("repeat", "help") if i in fits and i not in chosen][: max(0, 3 - len(chosen))]
    return chosen[:5]
