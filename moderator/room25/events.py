"""Room 25's events (docs/scenario-format.md, "Room 25"): dataclasses serialized by ``moderator.game.events.to_json``
like every other event, so the log has one writer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from moderator.game.events import Event


@dataclass(frozen=True)
class TurnStart(Event):
    """A turn begins: its number, the turns left counting this one, and the turn order."""

    type: ClassVar[str] = "turn_start"
    turn: int
    turns_left: int
    order: list[str]


@dataclass(frozen=True)
class Phase(Event):
    """A phase of the turn begins: programming, action_1, action_2, adrenaline or countdown."""

    type: ClassVar[str] = "phase"
    name: str


@dataclass(frozen=True)
class RevealRequired(Event):
    """A character must reveal their identity; ``reason``: ``masks``, ``second_death`` or ``first_was_prisoner``
    (or ``prisoner_before`` for a death after the second; docs/decisions.md)."""

    type: ClassVar[str] = "reveal_required"
    player: str
    reason: str


@dataclass(frozen=True)
class Revealed(Event):
    """A character revealed their identity: ``prisoner`` or ``guard``."""

    type: ClassVar[str] = "revealed"
    player: str
    identity: str


@dataclass(frozen=True)
class Tracked(Event):
    """What the moderator keeps track of changed: ``what`` is ``dead``, ``reached`` or ``left`` (Room 25)."""

    type: ClassVar[str] = "tracked"
    player: str
    what: str


@dataclass(frozen=True)
class Outcome(Event):
    """The game is over: ``winner`` is ``prisoners`` or ``guards``; ``reason`` says why."""

    type: ClassVar[str] = "result"
    winner: str
    reason: str
    turn: int


#: Room 25's event types by their name in the log.
TYPES: dict[str, type[Event]] = {cls.type: cls for cls in (TurnStart, Phase, RevealRequired, Revealed, Tracked,
                                                             Outcome)}
