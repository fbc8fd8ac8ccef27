"""The set-up chirp finds each microphone's delay, whatever rate and chunk sizes the microphone delivers."""

from __future__ import annotations

import numpy as np
import pytest
from fakes import RecordingOut

from moderator.adapters.clock import VirtualClock
from moderator.audio.clip import Clip
from moderator.audio.delay import chirp
from moderator.audio.echo import EchoPath
from moderator.audio.reference import RATE, PlayedAudio
from moderator.audio.resample import StreamResampler
from moderator.calibrate import FOUND, locate, measure_delays
from moderator.ports import MicChunk

MIC_RATE = 44100
#: How late each room's microphone hears its speaker: neither a whole sample at 16 kHz nor at 44.1 kHz.
DELAYS = {"A": 0.04371, "B": 0.11893}


class ChirpRoom:
    """Two microphones at 44.1 kHz that hear their own room's speaker ``DELAYS`` late, over a faint hiss,
    in chunks of odd sizes; ``wait`` is the chirp's wait, on a virtual clock (nothing sleeps)."""

    mics = ("A", "B")

    def __init__(self, played: PlayedAudio, clock: VirtualClock, sizes: np.ndarray) -> None:
        self.played, self.clock, self.sizes = played, clock, sizes
        self.rng = np.random.default_rng(7)
        self._chunks: list[MicChunk] = []
        #: Per microphone, everything it heard in the last wait: (clock time of its first sample, samples).
        self.heard: dict[str, tuple[float, np.ndarray]] = {}

    def read(self, timeout: float = 0.0) -> list[MicChunk]:
        chunks, self._chunks = self._chunks, []
        return chunks

    def wait(self, seconds: float) -> None:
        t0 = self.clock.now()
        room, clip, at = self.played.out.played[-1]  # type: ignore[attr-defined]
        assert clip.rate == RATE
        n = round(seconds * MIC_RATE)
        sweep = chirp(MIC_RATE, seconds=clip.duration, level=0.3)  # the chirp played, sampled at the mic's rate
        for mic in self.mics:
            x = self.rng.normal(0.0, 1e-3, n).astype(np.float32)
            if mic == room:
                start = round((at + DELAYS[mic] - t0) * MIC_RATE)
                x[start : start + len(sweep)] += 0.5 * sweep[: n - start]
            self.heard[mic] = (t0, x)
            i, k = 0, 0
            while i < n:
                size = int(self.sizes[k % len(self.sizes)])
                self._chunks.append(MicChunk(mic, x[i : i + size], MIC_RATE, t0 + i / MIC_RATE))
                i, k = i + size, k + 1
        self.clock.advance(seconds)


def calibrate(sizes: np.ndarray) -> tuple[dict[str | None, float | None], ChirpRoom, PlayedAudio]:
    clock = VirtualClock(100.0)
    played = PlayedAudio(RecordingOut())
    mics = ChirpRoom(played, clock, sizes)
    path = EchoPath(played, mics.mics)
    measured = measure_delays(played, mics, path, clock, mics.wait)  # type: ignore[arg-type]
    assert all(m.confidence >= FOUND for m in measured)
    assert {m.mic: path.delay(m.mic) for m in measured} == {m.mic: m.delay for m in measured}
    return {m.mic: m.delay for m in measured}, mics, played


#: A microphone's chunk sizes (cycled): a block size that is no whole number of 16 kHz samples, a few such
#: sizes mixed, and random sizes from 1.4 to 34 ms. Each chunk resampled on its own (the old way) moved the
#: first three's delays by 5 to 27 samples at 16 kHz: every chunk's rounding shifts what follows it.
SIZES = {"301": [301], "1103": [1103], "mixed": [301, 257, 333],
         "random": [int(n) for n in np.random.default_rng(1).integers(61, 1500, 40)]}


@pytest.mark.parametrize("sizes", SIZES.values(), ids=SIZES.keys())
def test_odd_sized_44_1_khz_chunks_give_the_delay_of_the_whole_recording(sizes: list[int]) -> None:
    delays, _, _ = calibrate(np.array(sizes))
    whole, _, _ = calibrate(np.array([10**7]))  # each room's recording in one chunk
    assert delays == whole
    for mic, delay in delays.items():
        assert delay == pytest.approx(DELAYS[str(mic)], abs=1.01 / RATE)


@pytest.mark.parametrize("sizes", [[301], [1103], [301, 257, 333]])
def test_resampling_each_chunk_on_its_own_would_move_the_delay(sizes: list[int]) -> None:
    """What the test above guards against: each chunk resampled alone (the old way) drifts off the clock."""
    delays, mics, played = calibrate(np.array(sizes))
    t0, x = mics.heard["B"]  # room B's chirp, the last one
    old, i, k = [], 0, 0
    while i < len(x):
        size = sizes[k % len(sizes)]
        old.append(Clip(x[i : i + size], MIC_RATE).resample(RATE).samples)
        i, k = i + size, k + 1
    moved, _ = locate(played, "B", t0, np.concatenate(old))
    r = StreamResampler(RATE)
    head, _ = r(x, MIC_RATE, t0)
    kept, _ = locate(played, "B", t0, np.concatenate([head, r.flush()[0]]))
    assert kept == delays["B"]
    assert abs(moved - DELAYS["B"]) > 4 / RATE
