"""A polled timer scheduler: no threads, no sleeping; the caller asks what is due."""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field
from typing import Any


@dataclass(order=True, frozen=True)
class Timer:
    """One scheduled firing. Ordered by due time, then by scheduling order."""

    due: float
    seq: int
    name: str = field(compare=False)
    group: str = field(compare=False, default="")
    data: Any = field(compare=False, default=None)


class Scheduler:
    """Holds timers; ``pop_due(now)`` returns those whose time has come, in order."""

    def __init__(self) -> None:
        self._heap: list[Timer] = []
        self._seq = itertools.count()

    def at(self, due: float, name: str, *, group: str = "", data: Any = None) -> Timer:
        """Schedule ``name`` at time ``due``."""
        timer = Timer(due, next(self._seq), name, group, data)
        heapq.heappush(self._heap, timer)
        return timer

    def cancel(self, group: str) -> None:
        """Drop every timer of ``group``."""
        self._heap = [t for t in self._heap if t.group != group]
        heapq.heapify(self._heap)

    def next_due(self) -> float | None:
        """When the earliest timer is due, or None."""
        return self._heap[0].due if self._heap else None

    def pop_next(self, now: float) -> Timer | None:
        """Remove and return the earliest timer if it is due at ``now``."""
        if self._heap and self._heap[0].due <= now:
            return heapq.heappop(self._heap)
        return None

    def pending(self) -> list[Timer]:
        """The timers still waiting, earliest first."""
        return sorted(self._heap)

    def __len__(self) -> int:
        return len(self._heap)
