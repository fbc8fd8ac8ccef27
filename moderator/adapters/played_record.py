"""What an output stream really played, per room, and when each frame reached the DAC: the echo canceller's
reference as the room heard it (``output_stream`` keeps one per open stream)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from moderator.ports import Clock

#: Each output remembers what it wrote over this many seconds (the echo canceller reads a fraction of a
#: second back; the set-up chirp about a second) ...
RECORD_SECONDS = 10.0
#: ... and reads none of it within this long of being written over (a read racing the callback).
RECORD_MARGIN = 1.0
#: Buffers whose time stamps wait for the caller's thread (a ring: 10 s of 64-frame buffers at 48 kHz).
STAMPS = 8192
#: A new stretch of the record starts where PortAudio reports an underrun, or where its DAC time strays
#: this far from the frame count without one (a sink that woke up: PulseAudio's null sink jumps by 0.4-1.2
#: s). Smaller jumps without an underrun were PulseAudio's reports, not the audio: 5-11 ms seen under load
#: while the frames played on unmoved (the in-game delay tracker follows a real one): ...
RESYNC = 0.1
#: ... at the median of this many buffers' reported times (the first buffer after an underrun is reported
#: as playing at once, the next ones as the stream refills: measured on PulseAudio, the third is right).
SETTLE = 5
#: Around an underrun the device drops audio: on PulseAudio (40 underruns measured frame by frame) the whole
#: buffer queued before it, and the first 0.3-5 ms of the buffer after (of each, in a run of underruns: a
#: buffer written into an empty device plays). The record has nothing there: a reference with what the
#: room never heard throws the canceller off for a second, a silent one costs a few milliseconds of echo.
UNDERRUN_LOST = 0.005
#: The reported DAC times' bias against the frame count, followed at this share per buffer.
BIAS_ALPHA = 0.05
#: The clock's offset from the stream's time is the least seen in the callbacks (which only ever read the
#: clock late, when the GIL comes late): a constant, to a few microseconds (a reference 10 us off already
#: leaves -18 dB of a 2 kHz echo). Only when every reading for this long is this much higher did a clock move.
OFFSET_WINDOW, OFFSET_JUMP = 2.0, 0.01


class PlayedRecord:
    """What one output stream really wrote, per room, and when each frame reached the DAC: the reference
    of echo cancellation, as the room heard it.

    The callback (PortAudio's thread) only copies each buffer into a ring and stamps it (``write``): no
    allocation, no lock. The caller's thread turns the stamps into a timeline when it reads (``pieces``).
    Frames are counted, so consecutive buffers join exactly: a time stamp per frame from a count is exact,
    while the DAC times PortAudio reports are not (on PulseAudio they drift from the frames really played
    by 0.3 ms a second; the count held to 0.01 ms over a minute). A new stretch starts only where PortAudio
    reports an underrun, or its DAC time jumps by more than ``RESYNC``: after an underrun the audio resumes
    late (the gap) or early (the stream dropped what it had queued), by the step the reported times show
    once they settle (``SETTLE``), and what was written around it is taken as lost (``UNDERRUN_LOST``). A
    stretch's frames that a later stretch starts before were not played.
    """

    def __init__(self, rate: int, channels: tuple[int, ...], clock: Clock, seconds: float = RECORD_SECONDS) -> None:
        self.rate, self.channels, self.clock = rate, channels, clock
        self.size = round(seconds * rate)
        self.frames = np.zeros((len(channels), self.size), np.float32)  # per room: the ring of frames written
        self.written = 0  # frames written so far
        # Per buffer (a ring of STAMPS): its first frame, the DAC time PortAudio reported for it (stream
        # time), the clock's offset from the stream time as read then, and whether it came after an underrun.
        self._first = np.zeros(STAMPS, np.int64)
        self._dac = np.zeros(STAMPS)
        self._offset = np.zeros(STAMPS)
        self._underflow = np.zeros(STAMPS, bool)
        self.buffers = 0
        # The caller's thread only, from here on.
        self._lock = threading.Lock()
        self._done = 0  # stamps turned into the timeline
        # Stretches: [first frame, stream time of its DAC, frames lost at its start, frames lost before it].
        self._stretches: list[list[float]] = []
        self._settling: list[float] = []  # the start times implied so far by the latest stretch's buffers
        self._bias = 0.0  # reported DAC time minus the timeline's, lately
        self._last_first, self._last_underflow = 0, False
        self.offset = float("inf")  # clock time minus stream time
        self._window = (0, float("inf"))  # the first frame of the latest OFFSET_WINDOW, and its least offset

    def write(self, outdata: np.ndarray, frames: int, dac: float, current: float, underflow: bool) -> None:
        """Keep the buffer just filled (PortAudio's thread): copies into preallocated rings, nothing else."""
        start = self.written % self.size
        end = start + frames
        for row, channel in enumerate(self.channels):
            if end <= self.size:
                self.frames[row, start:end] = outdata[:, channel]
            else:
                split = self.size - start
                self.frames[row, start:] = outdata[:split, channel]
                self.frames[row, : end - self.size] = outdata[split:, channel]
        i = self.buffers % STAMPS
        self._first[i], self._dac[i], self._underflow[i] = self.written, dac, underflow
        self._offset[i] = self.clock.now() - current if current else np.nan
        self.written += frames  # published after the frames and the stamp: a reader sees them whole
        self.buffers += 1

    def pieces(self, row: int, t0: float, t1: float) -> list[tuple[float, np.ndarray]]:
        """What was played for room ``row`` between clock times ``t0`` and ``t1``: contiguous runs of frames
        as (clock time of the first, samples at ``rate``); nothing where nothing was played."""
        with self._lock:
            written = self.written  # first: every frame before it has its stamp by now
            self._advance()
            if not self._stretches or self.offset == float("inf"):
                return []
            oldest = max(0, written - self.size + round(RECORD_MARGIN * self.rate))
            s0, s1 = t0 - self.offset, t1 - self.offset
            pieces = []
            for n, (first, start, skip, _) in enumerate(self._stretches):
                following = self._stretches[n + 1] if n + 1 < len(self._stretches) else None
                first = int(first)
                last = int(following[0] - following[3]) if following else written
                if following is not None:  # what a later stretch starts before was never played
                    last = min(last, first + max(0, round((following[1] - start) * self.rate)))
                fa = max(first + int(skip), first + int(np.floor((s0 - start) * self.rate)), oldest)
                fb = min(last, first + int(np.ceil((s1 - start) * self.rate)))
                if fb > fa:
                    pieces.append((start + (fa - first) / self.rate + self.offset, self._copy(row, fa, fb)))
            return pieces

    def _copy(self, row: int, fa: int, fb: int) -> np.ndarray:
        a, b = fa % self.size, fb % self.size
        if a < b:
            return self.frames[row, a:b].copy()
        return np.concatenate([self.frames[row, a:], self.frames[row, :b]])

    def _advance(self) -> None:
        """Turn the stamps written since the last call into the timeline."""
        buffers = self.buffers
        if buffers - self._done > STAMPS // 2:  # so far behind that stamps may have been written over
            self._done, self._stretches, self._settling = buffers - STAMPS // 4, [], []
        for i in range(self._done, buffers):
            k = i % STAMPS
            first, dac = int(self._first[k]), float(self._dac[k])
            offset = float(self._offset[k])
            if offset == offset:  # not NaN: PortAudio reported its current time
                self._follow_offset(first, offset)
            underflow = bool(self._underflow[k])
            # The buffer before an underrun is dropped, unless it too went into an empty device and played.
            self._place(first, dac, underflow, first if self._last_underflow else self._last_first)
            self._last_first, self._last_underflow = first, underflow
        self._done = buffers
        keep = self.written - self.size
        while len(self._stretches) > 1 and self._stretches[1][0] <= keep:
            del self._stretches[0]

    def _follow_offset(self, first: int, offset: float) -> None:
        """The least offset seen; a new one if a whole ``OFFSET_WINDOW`` stayed ``OFFSET_JUMP`` above it."""
        self.offset = min(self.offset, offset)
        start, least = self._window
        least = min(least, offset)
        if first - start >= OFFSET_WINDOW * self.rate:
            if least > self.offset + OFFSET_JUMP:
                self.offset = least
            start, least = first, float("inf")
        self._window = (start, least)

    def _place(self, first: int, dac: float, underflow: bool, lost_from: int) -> None:
        """Follow one buffer's stamp (``lost_from``: the first frame an underrun here drops): the frame count,
        or a new stretch (see the class)."""
        if not self._stretches:
            self._stretches.append([first, dac, 0, 0])
            self._settling, self._bias = [dac], 0.0
            return
        stretch = self._stretches[-1]
        since = (first - stretch[0]) / self.rate
        deviation = dac - (stretch[1] + since)
        if underflow or (not self._settling and abs(deviation - self._bias) > RESYNC):
            lost = (round(UNDERRUN_LOST * self.rate), first - max(lost_from, int(stretch[0]))) if underflow else (0, 0)
            self._stretches.append([first, dac - self._bias, *lost])
            self._settling = [dac - self._bias]
        elif self._settling:
            self._settling.append(dac - self._bias - since)
            stretch[1] = float(np.median(self._settling))
            if len(self._settling) >= SETTLE:
                self._settling = []
        else:
            self._bias += BIAS_ALPHA * (deviation - self._bias)
