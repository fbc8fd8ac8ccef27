"""What the moderator played into each room, and when: the reference signal of echo cancellation."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from moderator.audio.clip import Clip
from moderator.ports import AudioOut

RATE = 16000
#: Resampling what a device played to ``RATE``: a windowed sinc (Kaiser, about 65 dB down from 8 kHz on at
#: 44.1 kHz), this many samples of the lower rate either side of each sample, ...
KERNEL_HALF = 16
KERNEL_BETA = 5.65
#: ... cut off (-6 dB) at this share of the lower rate's Nyquist frequency (flat to 0.5 dB up to 7 kHz) ...
KERNEL_CUTOFF = 0.95
#: ... and tabulated at this many phases per input sample.
KERNEL_PHASES = 512


@functools.lru_cache(maxsize=8)
def _kernel(rate: int, out_rate: int) -> tuple[np.ndarray, int]:
    """The resampling filter as a table of phases (``KERNEL_PHASES + 1`` rows of ``2 * half`` taps) and
    ``half``, in input samples."""
    half = int(np.ceil(KERNEL_HALF * max(1.0, rate / out_rate)))
    cutoff = KERNEL_CUTOFF * min(rate, out_rate) / 2 / rate  # cycles per input sample
    d = np.arange(2 * half * KERNEL_PHASES + 1) / KERNEL_PHASES - half
    window = np.i0(KERNEL_BETA * np.sqrt(np.clip(1 - (d / half) ** 2, 0, 1))) / np.i0(KERNEL_BETA)
    h = 2 * cutoff * np.sinc(2 * cutoff * d) * window
    # Row p, tap k: the filter at p / KERNEL_PHASES + half - 1 - k input samples.
    taps = np.arange(2 * half)
    rows = np.arange(KERNEL_PHASES + 1)[:, None] + (2 * half - 1 - taps)[None, :] * KERNEL_PHASES
    return h[rows].astype(np.float32), half


def band_limited(samples: np.ndarray, rate: int, start: float, t: float, n: int, out_rate: int = RATE) -> np.ndarray:
    """``n`` samples at ``out_rate`` from time ``t`` of ``samples`` (at ``rate``, the first at time ``start``,
    silence around them), band-limited: unlike ``Clip.resample``'s linear interpolation, nothing above the
    new Nyquist frequency folds back. Times are any, not only on either grid."""
    out = np.zeros(n, np.float32)
    if not len(samples) or n <= 0:
        return out
    table, half = _kernel(rate, out_rate)
    step = rate / out_rate
    first = (t - start) * rate  # where output sample 0 falls among the input samples
    lo = max(0, int(np.floor((-half - first) / step)) + 1)
    hi = min(n, int(np.ceil((len(samples) + half - first) / step)))
    if hi <= lo:
        return out
    at = first + np.arange(lo, hi) * step
    floor = np.floor(at)
    phase = np.rint((at - floor) * KERNEL_PHASES).astype(np.intp)
    padded = np.concatenate([np.zeros(2 * half, np.float32), samples.astype(np.float32, copy=False),
                             np.zeros(2 * half, np.float32)])
    windows = sliding_window_view(padded, 2 * half)[floor.astype(np.intp) + half + 1]
    out[lo:hi] = np.einsum("jk,jk->j", table[phase], windows)
    return out


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

    When ``out`` is a sound card that records what it really played (``written``: ``SoundDeviceOut``), the
    reference is that, resampled: a card plays clips later than asked (a buffer later for "now", more after
    an underrun). Otherwise (a WAV timeline, a simulated room, nothing) what was asked is what was played.
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
        written = getattr(self.out, "written", None)
        if written is not None:
            margin = 2 * KERNEL_HALF / RATE  # the resampling filter's reach, and more
            for room in rooms:
                for start, rate, samples in written(room, t - margin, t_end + margin):
                    out += band_limited(samples, rate, start, t, n)
            self._forget(t)
            return out
        for placed in self._placed:
            if placed.room not in rooms or placed.end <= t or placed.start >= t_end:
                continue
            first = round((t - placed.start) * RATE)  # index into the clip of our sample 0
            last = min(len(placed.samples), round((placed.end - placed.start) * RATE))
            lo, hi = max(first, 0), min(first + n, last)
            if hi > lo:
                out[lo - first : hi - first] += placed.samples[lo:hi]
        self._forget(t)
        return out

    def _forget(self, t: float) -> None:
        self._placed = [p for p in self._placed if p.end > t - self.keep]

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
