"""A microphone's chunks to 16 kHz as one stream: chunk joins leave no trace, and times stay exact.

Resampling each chunk on its own treats its edges as the end of the signal, which puts a click at every
join. ``StreamResampler`` keeps the input it still needs between calls, so its output for a stream fed in
chunks of any size is its output for the stream fed whole. The filter is a windowed sinc (Kaiser), exact
for rational rate ratios (one phase per output position: 160 for 44.1 kHz, 1 for 48 kHz), centred on each
output sample: the output is not delayed, but its last ``half`` input samples (about 1 ms) wait for the
next chunk, and each call says when its first sample is.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

#: Taps either side of each output sample, in samples of the lower of the two rates ...
HALF = 16
#: ... under a Kaiser window of this beta (about 65 dB down at the new Nyquist frequency on 44.1 kHz) ...
BETA = 5.65
#: ... cut off (-6 dB) at this share of the lower rate's Nyquist frequency (flat to 0.5 dB up to 7 kHz at 16 kHz).
CUTOFF = 0.95
#: A chunk whose time stamp is this far (s) from where the stream had got to starts a new stream, as the
#: endpointer (``moderator.audio.endpoint``) treats it as a gap too.
GAP = 1e-3


@functools.lru_cache(maxsize=8)
def _filters(rate: int, out_rate: int) -> tuple[np.ndarray, int, int, int]:
    """``(table, half, up, down)``: row ``p`` of ``table`` weighs input samples ``n - half + 1 ... n + half``
    for the output that falls ``p / up`` of a sample after input sample ``n``; the output rate is
    ``rate * up / down``."""
    g = math.gcd(rate, out_rate)
    up, down = out_rate // g, rate // g
    half = math.ceil(HALF * max(1.0, rate / out_rate))
    cutoff = CUTOFF * min(rate, out_rate) / 2 / rate  # cycles per input sample
    d = (np.arange(up) / up)[:, None] + (half - 1 - np.arange(2 * half))[None, :]  # output minus input position
    window = np.i0(BETA * np.sqrt(np.clip(1 - (d / half) ** 2, 0, 1))) / np.i0(BETA)
    h = 2 * cutoff * np.sinc(2 * cutoff * d) * window
    h /= h.sum(axis=1, keepdims=True)  # every phase passes a constant unchanged
    return h.astype(np.float32), half, up, down


class StreamResampler:
    """One stream of audio (a microphone's) to ``out_rate``, chunk by chunk, as if resampled whole.

    Input at ``out_rate`` passes through untouched. A chunk whose time does not follow on from the last one,
    or at another rate, starts a new stream (what the last one still held back is dropped: about 1 ms).
    """

    def __init__(self, out_rate: int = 16000) -> None:
        self.out_rate = out_rate
        self._rate: int | None = None

    def reset(self) -> None:
        """Forget the stream: the next chunk starts a new one."""
        self._rate = None

    def __call__(self, samples: np.ndarray, rate: int, t: float) -> tuple[np.ndarray, float]:
        """The output samples (float32) that ``samples`` (mono, at ``rate``, the first at clock time ``t``)
        complete, and the clock time of the first of them. It may be a sample or two fewer or more than
        the chunk's share, and none for a very short chunk."""
        x = np.asarray(samples).astype(np.float32).reshape(-1)
        rate = int(rate)
        if rate == self.out_rate:
            self._rate = None
            return x, t
        if self._rate != rate or abs(self._t0 + self._n_in / rate - t) > GAP:
            self._start(rate, t)
        first = self._m
        return self._run(x, None), self._t0 + first / self.out_rate

    def flush(self) -> tuple[np.ndarray, float]:
        """The rest of the stream, as if silence followed it, and the clock time of its first sample; the
        stream then ends. Resampling a whole signal is one call and a ``flush``."""
        if self._rate is None:
            return np.zeros(0, np.float32), 0.0
        first, total = self._m, -(-self._n_in * self._up // self._down)  # every output before the end
        out = self._run(np.zeros(2 * self._half, np.float32), total)
        self._rate = None
        return out, self._t0 + first / self.out_rate

    def _start(self, rate: int, t: float) -> None:
        self._table, self._half, self._up, self._down = _filters(rate, self.out_rate)
        self._rate, self._t0 = rate, t
        self._n_in = 0  # input samples so far; input sample i is at clock time t0 + i / rate
        self._m = 0  # the next output sample; output sample m is at t0 + m / out_rate
        self._buf = np.zeros(self._half, np.float32)  # the input still needed, from sample ...
        self._buf_start = -self._half  # ... this one on (silence before the stream)

    def _run(self, x: np.ndarray, limit: int | None) -> np.ndarray:
        """Take in ``x`` and return every output sample whose taps it completes (at most up to ``limit``)."""
        half, up, down = self._half, self._up, self._down
        buf = np.concatenate([self._buf, x]) if len(self._buf) else x
        self._n_in += len(x)
        # Output m needs input up to floor(m * down / up) + half, of which there are n_in.
        end = max(self._m, -(-(self._n_in - half) * up // down))
        if limit is not None:
            end = min(end, limit)
            self._n_in -= len(x)  # padding, not input
        out = np.zeros(0, np.float32)
        if end > self._m:
            m = np.arange(self._m, end)
            n = m * down // up
            windows = sliding_window_view(buf, 2 * half)[n - half + 1 - self._buf_start]
            out = np.einsum("jk,jk->j", self._table[m * down - n * up], windows).astype(np.float32, copy=False)
        self._m = end
        keep = self._m * down // up - half + 1 - self._buf_start  # the first input the next output needs
        self._buf, self._buf_start = buf[keep:].copy(), self._buf_start + keep
        return out
