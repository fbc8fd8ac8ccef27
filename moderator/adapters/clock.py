"""Clocks: the wall-anchored clock of a live game and the virtual clock of a simulation."""

from __future__ import annotations

import time


class SystemClock:
    """Game time anchored to the wall clock, so a saved game's time survives a restart.

    ``now()`` is ``time.time() - epoch``: after a crash, a new process with the
    same epoch continues the same timeline, and the time the game was down has
    passed on it too.
    """

    def __init__(self, epoch: float | None = None) -> None:
        self.epoch = time.time() if epoch is None else epoch

    def now(self) -> float:
        """Seconds since the epoch of this game."""
        return time.time() - self.epoch

    @staticmethod
    def sleep(seconds: float) -> None:
        """Wait on the wall clock (set-up only: the game loop never sleeps past a timer)."""
        time.sleep(seconds)

    @staticmethod
    def wall() -> float:
        """The wall clock, for stamping saved games."""
        return time.time()


class VirtualClock:
    """A clock that only moves when told to: simulations and tests."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)

    def now(self) -> float:
        """The current virtual time."""
        return self._now

    def set(self, t: float) -> None:
        """Jump to ``t``; time never goes backwards."""
        if t < self._now:
            raise ValueError(f"virtual time cannot go back from {self._now} to {t}")
        self._now = float(t)

    def advance(self, seconds: float) -> None:
        """Move forward by ``seconds``."""
        self.set(self._now + seconds)
