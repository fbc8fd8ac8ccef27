"""What the Speaker reports and answers: a phrase heard in a room, one playing now, and event-log times."""

from __future__ import annotations

import math
from dataclasses import dataclass

from moderator.audio.clip import Clip
from moderator.game import events


def ceil_ms(t: float) -> float:
    """``t`` rounded up to the millisecond (the event log's resolution); never -0.0."""
    return math.ceil(t * 1000 - 1e-6) / 1000 + 0.0


@dataclass(frozen=True)
class Spoken:
    """A phrase that was heard in a room: from ``start`` to ``end`` (clock time), or until it was ``cut``."""

    room: str
    key: str
    start: float
    end: float
    cut: bool = False

    def event(self) -> events.Spoken:
        """Its ``spoken`` event (times rounded like every event time)."""
        return events.Spoken(self.room, self.key, round(self.start, 3), round(self.end, 3),
                             True if self.cut else events.OMITTED)


@dataclass(frozen=True)
class Playing:
    """A phrase handed to the output: what ``Speaker.playing`` answers."""

    key: str
    start: float
    end: float
    clip: Clip
    """The object given to ``AudioOut.play`` (and to ``stop``)."""
    timed: bool
    interruptible: bool
