"""The events of a game, one dataclass per type, and the one function that turns them into the JSON Lines log's
objects (docs/scenario-format.md is the contract: outside checkers read these).

An event is built where it happens, without its time; ``Engine.emit`` stamps the time and hands ``to_json(...)``
to every listener. A field left at ``OMITTED`` is left out of the log (``scheduled`` of an announcement that no
timer caused, ``cut`` of a phrase that was not cut, ``guess`` of a transcript that was not rejected).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

Rooms = dict[str, list[str]]


class _Omitted:
    def __repr__(self) -> str:
        return "OMITTED"


#: A field left out of the event's JSON object.
OMITTED: Any = _Omitted()


@dataclass(frozen=True)
class Event:
    """What every event has: its ``type`` (the class's) and, once emitted, its time ``t``."""

    type: ClassVar[str]


@dataclass(frozen=True)
class State(Event):
    """The statechart entered a state."""

    type: ClassVar[str] = "state"
    state: str | list[str]


@dataclass(frozen=True)
class Announce(Event):
    """The moderator speaks: a phrase of the catalogue, in room A, B or both."""

    type: ClassVar[str] = "announce"
    room: str
    key: str
    text: str
    scheduled: float = OMITTED
    """The due time of the timer that caused it (a timer handled ahead of time)."""


@dataclass(frozen=True)
class Spoken(Event):
    """When a phrase actually played in a room (``cut``: barge-in stopped it)."""

    type: ClassVar[str] = "spoken"
    room: str
    key: str
    start: float
    end: float
    cut: bool = OMITTED


@dataclass(frozen=True)
class Heard(Event):
    """A recognizer produced a transcript (``guess``: what it heard best when it rejected it)."""

    type: ClassVar[str] = "heard"
    room: str
    text: str
    confidence: float
    guess: str = OMITTED


@dataclass(frozen=True)
class Command(Event):
    """A transcript or typed line parsed into a command, accepted."""

    type: ClassVar[str] = "command"
    room: str
    intent: str
    slots: dict[str, Any]
    text: str


@dataclass(frozen=True)
class Rejected(Event):
    """A command that could not be parsed, or broke a rule; nothing changed."""

    type: ClassVar[str] = "rejected"
    room: str
    text: str
    reason: str
    key: str
    intent: str | None


@dataclass(frozen=True)
class Leader(Event):
    """A room's leader changed (``player`` None: an undone appointment)."""

    type: ClassVar[str] = "leader"
    room: str
    player: str | None
    how: str


@dataclass(frozen=True)
class RoundStart(Event):
    type: ClassVar[str] = "round_start"
    round: int
    seconds: int | None
    hostages: dict[str, int]


@dataclass(frozen=True)
class RoundEnd(Event):
    type: ClassVar[str] = "round_end"
    round: int


@dataclass(frozen=True)
class Hostages(Event):
    """A room's hostage choice locked."""

    type: ClassVar[str] = "hostages"
    room: str
    players: list[str]


@dataclass(frozen=True)
class Exchange(Event):
    type: ClassVar[str] = "exchange"
    to_A: list[str]
    to_B: list[str]


@dataclass(frozen=True)
class Undo(Event):
    """"undo" took back a room's change: the command, as the grammar parsed it."""

    type: ClassVar[str] = "undo"
    room: str
    intent: str
    slots: dict[str, Any]


@dataclass(frozen=True)
class GameOver(Event):
    type: ClassVar[str] = "game_over"
    rooms: Rooms


@dataclass(frozen=True)
class Result(Event):
    """Who won (``gambler``: whether the Gambler's prediction was right, when there was one)."""

    type: ClassVar[str] = "result"
    winner: str
    president: str | None
    bomber: str | None
    rooms: Rooms
    gambler: str = OMITTED
    characters: dict[str, dict[str, Any]] = OMITTED  # type: ignore[assignment]
    """The advanced game: player -> ``{card, team, won}`` for every player whose card is known."""
    buried: str = OMITTED
    """The advanced game: the buried card's id, when one was buried and it is known."""


#: Every event type by its name in the log.
TYPES: dict[str, type[Event]] = {cls.type: cls for cls in (State, Announce, Spoken, Heard, Command, Rejected,
                                                             Leader, RoundStart, RoundEnd, Hostages, Exchange, Undo,
                                                             GameOver, Result)}


def to_json(event: Event, t: float) -> dict[str, Any]:
    """The log's object for ``event`` at time ``t``: ``t``, ``type``, then its fields in order, omitted ones left
    out. The one place an event becomes JSON."""
    out: dict[str, Any] = {"t": t, "type": event.type}
    for f in fields(event):
        value = getattr(event, f.name)
        if value is not OMITTED:
            out[f.name] = value
    return out


