"""Tests for the bench's echo loop: a pipe microphone hears what a room plays, later and quieter, like a real one."""

from __future__ import annotations

import subprocess
import time

import numpy as np
import pytest
from pulse import (
    ECHO_PATH_LATENCY,
    MIC_CHUNK,
    RECORD_RATE,
    PulseBench,
    TimedRecording,
    _DelayLine,
    _Echo,
    decaying_ir,
)

RATE = RECORD_RATE


def chirp(seconds: float = 0.4, low: float = 200.0, high: float = 1200.0, level: float = 0.5) -> np.ndarray:
    """A linear sweep with 10 ms fades: its autocorrelation has one sharp peak, so a lag is unambiguous.

    It stays low because the echo and the reference are each resampled from the sink's 44.1 kHz to 16 kHz with
    their own sub-sample phase: up to 3 kHz that costs a few percent of correlation at random, up to 1.2 kHz < 1 %.
    """
    t = np.arange(round(seconds * RATE)) / RATE
    x = level * np.sin(2 * np.pi * (low * t + (high - low) * t**2 / (2 * seconds)))
    fade = np.minimum(1.0, np.minimum(t, seconds - t) / 0.01)
    return (x * fade).astype(np.float32)


def rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64))))


def lag_and_gain(played: TimedRecording, heard: TimedRecording) -> tuple[float, float, float]:
    """When ``heard`` repeats ``played`` (seconds later, on the monotonic clock), how loud (dB), and how well (0..1)."""
    x, y = played.samples.astype(np.float64), heard.samples.astype(np.float64)
    n = 1 << int(np.ceil(np.log2(len(x) + len(y))))
    corr = np.fft.irfft(np.fft.rfft(y, n) * np.conj(np.fft.rfft(x, n)), n)
    corr = np.concatenate([corr[-(len(x) - 1) :], corr[: len(y)]])  # index i: y[j] against x[j - (i - len(x) + 1)]
    k = int(np.argmax(corr)) - (len(x) - 1)
    xs = x[max(0, -k) : len(y) - k]
    ys = y[max(0, k) : max(0, k) + len(xs)]
    gain = float(np.dot(ys, xs) / np.dot(xs, xs))
    fit = float(np.dot(ys, xs) / np.sqrt(np.dot(xs, xs) * np.dot(ys, ys)))
    return heard.time_of(k) - played.time_of(0), 20 * np.log10(abs(gain)), fit


# --- the loop's arithmetic, without PulseAudio ------------------------------------------------------------------


def test_the_delay_line_gives_samples_back_their_delay_after_capture_whatever_the_bursts() -> None:
    line = _DelayLine(delay=0.05)
    assert not line.take(80, at=9.0).any()  # nothing arrived yet: silence, and nothing fixed
    signal = np.arange(1, 4001, dtype=np.float32)
    line.feed(signal[:160].tobytes(), now=10.02)  # samples 0-159 captured from 10.01 on, arriving 10 ms late
    line.feed(signal[160:320].tobytes(), now=10.025)  # the best estimate: captured from 10.005 on
    got = line.take(160, at=10.05)  # starting 5 ms before sample 0 was captured + 50 ms
    assert not got[:80].any() and (got[80:] == signal[:80]).all()
    assert (line.take(160, at=10.06) == signal[80:240]).all()
    got = line.take(160, at=10.07)  # 240-399 are due, only 240-319 came: the rest is silence
    assert (got[:80] == signal[240:320]).all() and not got[80:].any() and line.late == 80
    line.feed(signal[320:800].tobytes(), now=10.06)  # they come late: dropped, and what follows is on time
    assert (line.take(160, at=10.08) == signal[400:560]).all()


def test_the_echo_sums_the_taps_convolves_in_chunks_like_one_convolution_and_scales() -> None:
    rng = np.random.default_rng(1)
    signal = rng.standard_normal(MIC_CHUNK * 8).astype(np.float32)
    taps = [_DelayLine(delay=0.02), _DelayLine(delay=0.02)]
    taps[0].feed(signal.tobytes(), now=1.0 + len(signal) / RATE)
    taps[1].feed((signal * 0.5).astype(np.float32).tobytes(), now=1.0 + len(signal) / RATE)
    ir = decaying_ir(0.05)
    echo = _Echo(taps, -6.0, ir)
    got = np.concatenate([echo.next(MIC_CHUNK, at=1.02 + i * MIC_CHUNK / RATE) for i in range(8)])
    want = np.convolve(signal * 1.5, ir)[: len(got)] * 10 ** (-6 / 20)
    assert np.allclose(got, want, atol=1e-5)
    assert ir[0] == 1.0 and abs(ir[-1]) < abs(ir[1:40]).max() * 1e-2


# --- the real loop through PulseAudio ------------------------------------------------------------------------------


def play_into(bench: PulseBench, device: str, samples: np.ndarray) -> None:
    """Play mono float samples at ``RATE`` into a room's sink, and wait until they have played."""
    subprocess.run(
        ["pacat", "-d", bench.sinks[device], f"--rate={RATE}", "--channels=1", "--format=float32le",
         "--latency-msec=20"],
        input=samples.astype("<f4").tobytes(), env=bench.env, check=True, timeout=20,
    )


def echo_of(bench: PulseBench, mic_name: str, sound: np.ndarray, **echo: object) -> tuple[float, float, float]:
    with bench.pipe_mic(mic_name, **echo) as mic:  # type: ignore[arg-type]
        time.sleep(0.2)  # the tap's recorder connects
        with bench.record_timed(bench.monitor("roomA")) as played, bench.record_timed(mic.source) as heard:
            time.sleep(0.3)
            play_into(bench, "roomA", sound)
            time.sleep(0.4)
    return lag_and_gain(played, heard)


@pytest.mark.pulse
@pytest.mark.slow
def test_a_microphone_hears_its_room_after_the_echo_delay_and_quieter_by_the_echo_gain(bench: PulseBench) -> None:
    results = {}
    for delay, gain_db in ((0.04, -6.0), (0.14, -12.0)):
        lag, got_db, fit = echo_of(bench, f"micEcho{round(delay * 1000)}", chirp(), echo_from=("roomA",),
                                   echo_delay=delay, echo_gain_db=gain_db)
        results[delay] = lag
        print(f"echo_delay {delay * 1000:.0f} ms: heard {lag * 1000:.1f} ms later, {got_db:.2f} dB, fit {fit:.3f}")
        assert fit > 0.95, (delay, lag, got_db, fit)  # the chirp itself, undistorted
        assert abs(got_db - gain_db) < 0.5, (delay, got_db)
        assert delay - 0.005 < lag < delay + ECHO_PATH_LATENCY + 0.02, (delay, lag)  # measured: + 0.5-6 ms
    assert abs((results[0.14] - results[0.04]) - 0.1) < 0.01, results  # the delay adds what it says


@pytest.mark.pulse
@pytest.mark.slow
def test_without_echo_the_microphone_stays_silent_and_another_room_is_not_heard(bench: PulseBench) -> None:
    with bench.pipe_mic("micQuiet") as quiet, bench.pipe_mic("micB", echo_from=("roomB",)) as other:
        time.sleep(0.2)
        with bench.record_timed(quiet.source) as heard_quiet, bench.record_timed(other.source) as heard_other:
            time.sleep(0.2)
            play_into(bench, "roomA", chirp())
            time.sleep(0.3)
    assert len(heard_quiet.samples) > RATE // 2 and len(heard_other.samples) > RATE // 2
    assert not heard_quiet.samples.any()
    assert np.abs(heard_other.samples).max() < 1e-3


@pytest.mark.pulse
@pytest.mark.slow
def test_an_impulse_response_leaves_a_decaying_tail_after_the_sound(bench: PulseBench) -> None:
    click = np.zeros(RATE // 5, np.float32)
    click[800:804] = 0.8  # not at once: a new playback stream loses its first few milliseconds
    ir = decaying_ir(0.2, level_db=-6)
    with bench.pipe_mic("micRoom", echo_from=("roomA",), echo_delay=0.04, echo_gain_db=0.0, echo_ir=ir) as mic:
        time.sleep(0.2)
        with bench.record_timed(mic.source) as heard:
            time.sleep(0.2)
            play_into(bench, "roomA", click)
            time.sleep(0.5)
    y = np.abs(heard.samples)
    onset = int(np.argmax(y > 0.1))
    assert onset > 0
    early, late = (rms(heard.samples[onset + a : onset + b]) for a, b in ((50, 800), (2400, 3200)))
    assert early > 1e-3 and early > 10 * late, (early, late)  # reflections, dying away within 0.2 s
