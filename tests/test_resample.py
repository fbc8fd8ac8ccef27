"""One stateful resampler per microphone: chunks of any size give what the whole signal gives, on exact times."""

from __future__ import annotations

import numpy as np
import pytest
from fake_recognizer import ScriptedRecognizer
from tests_support import eight_player_engine

from moderator.audio.clip import Clip
from moderator.audio.resample import StreamResampler
from moderator.loop import Listener

OUT = 16000


def sine(rate: int, seconds: float = 1.5, freq: float = 1000.0, t0: float = 0.0) -> np.ndarray:
    t = t0 + np.arange(round(seconds * rate)) / rate
    return (0.5 * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def whole(x: np.ndarray, rate: int, t: float = 0.0) -> np.ndarray:
    r = StreamResampler(OUT)
    head, first = r(x, rate, t)
    tail, _ = r.flush()
    assert first == t
    return np.concatenate([head, tail])


def chunked(x: np.ndarray, rate: int, t0: float, sizes: np.ndarray) -> tuple[np.ndarray, list[tuple[float, int]]]:
    """Fed in chunks of ``sizes`` (cycled) with their time stamps; the output and (time, length) per call."""
    r = StreamResampler(OUT)
    outs, stamps, i, k = [], [], 0, 0
    while i < len(x):
        size = int(sizes[k % len(sizes)])
        out, t = r(x[i : i + size], rate, t0 + i / rate)
        outs.append(out)
        stamps.append((t, len(out)))
        i, k = i + size, k + 1
    out, t = r.flush()
    return np.concatenate([*outs, out]), [*stamps, (t, len(out))]


@pytest.mark.parametrize("rate", [44100, 48000, 22050, 8000])
def test_odd_sized_chunks_give_what_the_whole_signal_gives_on_contiguous_times(rate: int) -> None:
    x = sine(rate)
    sizes = np.random.default_rng(rate).integers(1, 3 * rate // 20, 50)  # 1 sample to 150 ms, odd ones included
    out, stamps = chunked(x, rate, 7.0, sizes)
    expected = whole(x, rate, 7.0)
    assert len(out) == len(expected) == round(len(x) * OUT / rate)
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-6)
    at = 7.0
    for t, n in stamps:  # each call's first sample follows on from the last call's last
        if n:
            assert t == pytest.approx(at, abs=1e-9)
            at = t + n / OUT


@pytest.mark.parametrize("rate", [44100, 48000])
def test_the_output_is_the_signal_at_16_khz_with_no_trace_of_the_joins(rate: int) -> None:
    x = sine(rate)
    out, _ = chunked(x, rate, 0.0, np.array([rate // 10 + 1, 1, 441, 2205]))
    truth = sine(OUT, seconds=len(out) / OUT)
    inner = slice(OUT // 100, -OUT // 100)  # the stream's own edges: silence before and after it
    assert np.max(np.abs(out[inner] - truth[inner])) < 1e-4  # about -74 dB: not delayed, not distorted
    # The old way, each chunk on its own, is off by far more at the joins.
    old = np.concatenate([Clip(x[i : i + rate // 10 + 1], rate).resample(OUT).samples
                          for i in range(0, len(x), rate // 10 + 1)])
    assert np.max(np.abs(old[inner] - truth[: len(old)][inner])) > 1e-2


def test_16_khz_passes_through_untouched() -> None:
    r = StreamResampler(OUT)
    x = np.random.default_rng(0).uniform(-1, 1, 1601).astype(np.float32)
    out, t = r(x, OUT, 3.25)
    assert t == 3.25 and out.dtype == np.float32 and np.array_equal(out, x)
    assert out is not x  # the caller's buffer is not handed on
    assert r(x.astype(np.float64), OUT, 3.35)[0].dtype == np.float32


def test_a_gap_or_a_new_rate_starts_a_new_stream() -> None:
    r = StreamResampler(OUT)
    x = sine(48000, seconds=0.1)
    r(x, 48000, 0.0)
    out, t = r(x, 48000, 5.0)  # the device came back later: nothing of the old stream is carried over
    assert t == 5.0
    np.testing.assert_array_equal(out, StreamResampler(OUT)(x, 48000, 5.0)[0])
    y = sine(44100, seconds=0.1)
    out, t = r(y, 44100, 5.1)  # reopened at another rate
    assert t == 5.1
    np.testing.assert_array_equal(out, StreamResampler(OUT)(y, 44100, 5.1)[0])


class Chunks:
    """An endpointer that only records what it is fed."""

    in_speech = False

    def __init__(self) -> None:
        self.fed: list[tuple[np.ndarray, float]] = []

    def feed(self, audio: np.ndarray, t: float) -> list:
        self.fed.append((audio, t))
        return []


def test_the_listener_resamples_each_microphone_as_one_stream() -> None:
    listener = Listener(eight_player_engine(), ScriptedRecognizer([]), new_endpointer=Chunks)  # type: ignore[arg-type]
    assert set(listener.resamplers) == {"A", "B"}
    assert listener.resamplers["A"] is not listener.resamplers["B"]
    a, b = sine(48000), sine(44100, freq=440.0)
    for k in range(-(-len(a) // 4801)):  # odd chunks, and the two microphones interleaved
        listener.feed("A", a[k * 4801 : (k + 1) * 4801], 48000, 2.0 + k * 4801 / 48000)
        listener.feed("B", b[k * 4411 : (k + 1) * 4411], 44100, 2.0 + k * 4411 / 44100)
    for mic, x, rate in (("A", a, 48000), ("B", b, 44100)):
        fed = listener.endpointers[mic].fed  # type: ignore[attr-defined]
        got = np.concatenate([audio for audio, _ in fed])
        expected = whole(x, rate, 2.0)
        np.testing.assert_allclose(got, expected[: len(got)], rtol=0, atol=1e-6)
        assert len(expected) - len(got) < 50  # only the last millisecond or so waits for more
        assert fed[0][1] == 2.0 and all(t == pytest.approx(2.0 + sum(len(f[0]) for f in fed[:k]) / OUT, abs=1e-9)
                                        for k, (_, t) in enumerate(fed))
