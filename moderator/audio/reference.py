"""What the moderator played into each room, and when: the reference signal of echo cancellation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from moderator.audio.clip import Clip
from moderator.ports import AudioOut

RATE = 16000


@dataclass(eq=False)
class _Placed:
    room: str
    clip: Clip
    """The object given to ``play`` (``stop`` names it)."""
    samples: np.ndarray
    """At ``RATE``."""
    start: float
    end: float
    asked: float = 0.0
    """The clock time ``play`` was asked for (``start`` moves to when the device really started it)."""
    settled: bool = False
    peak_power: float | None = None
    """Filled in by whoever measures it (the simulated room)."""


class Unplayed:
    """An ``AudioOut`` that plays nothing: a scripted game whose rooms are simulated (``moderator.audio.room``)
    needs what the moderator said, and no speakers."""

    def play(self, room: str, clip: Clip, at: float) -> None:
        """Nothing to play it on."""

    def stop(self, room: str, clip: Clip, at: float) -> None:
        """Nothing to stop."""

    def close(self) -> None:
        """Nothing to close."""


class PlayedAudio:
    """An ``AudioOut`` that passes everything on to ``out`` and remembers it, so that a microphone can be
    given exactly what the moderator said in its room over any stretch of clock time.

    A clip cut short (``stop``) is remembered cut. Clips that ended more than ``keep`` seconds before the
    latest ``reference`` asked for are forgotten. Other attributes (``poll``, ``failed_rooms``, ``starts``)
    are ``out``'s.
    """

    def __init__(self, out: AudioOut, *, keep: float = 30.0) -> None:
        self.out = out
        self.keep = keep
        self._placed: list[_Placed] = []
        self._started = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.out, name)

    def play(self, room: str, clip: Clip, at: float) -> None:
        """Play ``clip`` through ``out`` and remember it."""
        samples = clip.resample(RATE).samples.astype(np.float32, copy=False)
        self._placed.append(_Placed(room, clip, samples, at, at + len(samples) / RATE, asked=at))
        self.out.play(room, clip, at)

    def stop(self, room: str, clip: Clip, at: float) -> None:
        """Cut ``clip`` short through ``out``, and in the record (a clip cut before it started is never heard)."""
        self._settle()
        for placed in self._placed:
            if placed.clip is clip and placed.room == room and at < placed.end:
                placed.end = max(at, placed.start)
        self.out.stop(room, clip, at)

    def close(self) -> None:
        """Close ``out``."""
        self.out.close()

    def reference(self, rooms: Sequence[str], t: float, n: int) -> np.ndarray:
        """The ``n`` samples (at 16 kHz) the moderator played into ``rooms`` from clock time ``t``, mixed."""
        self._settle()
        out = np.zeros(n, np.float32)
        t_end = t + n / RATE
        for placed in self._placed:
            if placed.room not in rooms or placed.end <= t or placed.start >= t_end:
                continue
            first = round((t - placed.start) * RATE)  # index into the clip of our sample 0
            last = min(len(placed.samples), round((placed.end - placed.start) * RATE))
            lo, hi = max(first, 0), min(first + n, last)
            if hi > lo:
                out[lo - first : hi - first] += placed.samples[lo:hi]
        self._placed = [p for p in self._placed if p.end > t - self.keep]
        return out

    def _settle(self) -> None:
        """Move each clip to when the device really started it, once it says (``out.starts``: room, time
        asked, time started). A clip asked for "now" starts a buffer later on a sound card, and the
        canceller must hear it where the room does."""
        starts = getattr(self.out, "starts", None)
        if not starts or len(starts) <= self._started:
            return
        fresh, self._started = starts[self._started :], len(starts)
        for room, asked, started in fresh:
            for placed in reversed(self._placed):
                if placed.room == room and not placed.settled and abs(placed.asked - asked) < 1e-6:
                    shift = started - placed.start
                    placed.start, placed.end, placed.settled = placed.start + shift, placed.end + shift, True
                    break

    def history(self) -> list[_Placed]:
        """The clips remembered (those of the last ``keep`` seconds and later)."""
        return list(self._placed)

    def speaking(self, rooms: Sequence[str], t: float) -> bool:
        """Whether the moderator is playing something in ``rooms`` at clock time ``t``."""
        self._settle()
        return any(p.room in rooms and p.start <= t < p.end for p in self._placed)
