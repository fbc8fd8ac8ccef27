"""A Room 25 game's data: turn order, countdown, phase progress, deaths, Room 25, identities. Serialisable."""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Room25State:
    """Everything the moderator knows of a game; the statechart's state is ``machine``."""

    players: list[str]
    plan: dict[str, Any]
    machine: str | list[str] = "setup"
    turn: int = 0
    order: list[str] = field(default_factory=list)
    """The living characters in turn order (the first moves first)."""
    programmed: list[str] = field(default_factory=list)
    """Who said they programmed this turn."""
    adrenaline: list[str] = field(default_factory=list)
    """Who said, this turn's programming, that they use their Adrenaline token."""
    adrenaline_used: dict[str, int] = field(default_factory=dict)
    """Player -> the turn they used their token in (once per game)."""
    acting: list[str] = field(default_factory=list)
    """The players still to resolve the current action phase, in order (the first is being called)."""
    dead: list[str] = field(default_factory=list)
    """The killed characters, in the order they died."""
    in_room25: list[str] = field(default_factory=list)
    identities: dict[str, str] = field(default_factory=dict)
    """Revealed identities: player -> ``prisoner`` or ``guard``."""
    pending: list[list[str]] = field(default_factory=list)
    """Reveals asked for and not answered yet: [player, reason]."""
    deadline: float | None = None
    """When the programming timer runs out (None: no timer running)."""
    paused_left: float | None = None
    """Seconds the programming timer had when it was paused."""
    winner: str | None = None
    reason: str | None = None
    last_said: list[str] = field(default_factory=list)
    """The last announcement [key, text], for "repeat"."""

    @property
    def rooms(self) -> dict[str, Any]:
        """No rooms: one table, one shared microphone (the listening loop asks)."""
        return {}

    @property
    def turns(self) -> int:
        """The countdown's length."""
        return int(self.plan["turns"])

    def living(self) -> list[str]:
        """The characters still alive, in roster order."""
        return [p for p in self.players if p not in self.dead]

    def copy(self) -> Room25State:
        """A deep copy (for undo and for refusals)."""
        return copy.deepcopy(self)

    def to_dict(self) -> dict[str, Any]:
        """The state to journal."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Room25State:
        """The state as journaled."""
        return cls(**copy.deepcopy(data))
