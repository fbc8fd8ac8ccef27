"""The echo cancellers (moderator.adapters.echo) and the set-up chirp's delay (moderator.audio.delay)."""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

import numpy as np
import pytest

from moderator.adapters import echo
from moderator.adapters.echo import EchoError, make_echo_canceller
from moderator.audio.delay import HEARD, chirp, estimate_delay
from moderator.errors import ModeratorError

RATE = 16000

#: The least echo each canceller must remove once adapted, in dB. In these synthetic rooms speex removes
#: 12-40 dB depending on the room (13.7, 23 and 40 dB in the three tested), webrtc ~20 dB; on speech in
#: docs/benchmarks/aec.md ~21 and ~31 dB. Without a working canceller it is 0 dB.
MIN_ERLE = {"speex": 10.0, "webrtc": 15.0}


def room(rng: np.random.Generator, delay: float, rt60: float = 0.25, length: float = 0.25) -> np.ndarray:
    """A delay, a direct path and an exponentially decaying tail as loud as it."""
    n = np.arange(1, int(length * RATE))
    tail = rng.standard_normal(len(n)) * np.exp(-6.91 * n / (rt60 * RATE))
    return np.concatenate([np.zeros(round(delay * RATE)), [1.0], tail / np.sqrt(np.sum(tail**2))])


def speechlike(rng: np.random.Generator, seconds: float, level: float = 0.1) -> np.ndarray:
    """Low-passed noise rising and falling 20 dB at syllable rate (4 Hz), at ``level`` RMS."""
    n = int(seconds * RATE)
    noise = np.convolve(rng.standard_normal(n), np.ones(4) / 4, "same")
    x = noise * (0.1 + np.abs(np.sin(2 * np.pi * 2 * np.arange(n) / RATE + rng.uniform(0, 6))))
    return (level * x / np.sqrt(np.mean(x**2))).astype(np.float32)


def run(canceller: echo._Canceller, mic: np.ndarray, ref: np.ndarray, chunk: int = 1600) -> np.ndarray:
    return np.concatenate([canceller.process(mic[i:i + chunk], ref[i:i + chunk]) for i in range(0, len(mic), chunk)])


def db(x: np.ndarray) -> float:
    return float(10 * np.log10(np.mean(np.square(x, dtype=np.float64))))


@pytest.fixture(params=["speex", "webrtc"])
def name(request: pytest.FixtureRequest) -> str:
    try:
        make_echo_canceller(request.param)
    except EchoError as exc:
        pytest.skip(str(exc))
    return request.param


def echo_scene(seed: int, seconds: float = 8.0) -> tuple[np.ndarray, np.ndarray]:
    """(reference, microphone hearing only its echo and a -70 dBFS hiss)."""
    rng = np.random.default_rng(seed)
    ref = speechlike(rng, seconds)
    mic = 0.3 * np.convolve(ref, room(rng, delay=0.04))[: len(ref)] + 10 ** (-70 / 20) * rng.standard_normal(len(ref))
    return ref, mic.astype(np.float32)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_removes_the_echo_once_adapted(name: str, seed: int) -> None:
    ref, mic = echo_scene(seed)
    canceller = make_echo_canceller(name)
    assert not canceller.converged
    out = run(canceller, mic, ref)
    last = slice(-3 * RATE, None)
    assert db(mic[last]) - db(out[last]) >= MIN_ERLE[name]
    assert canceller.converged


def test_a_silent_reference_leaves_the_microphone_as_it_is(name: str) -> None:
    ref, mic = echo_scene(2, seconds=4.0)
    canceller = make_echo_canceller(name)
    run(canceller, mic, ref)  # adapted to a room: the filter is not empty
    voice = speechlike(np.random.default_rng(3), 3.0, level=0.03)
    out = run(canceller, voice, np.zeros_like(voice))
    assert abs(db(out) - db(voice)) < 1.0
    # WebRTC's high-pass filter shifts phases a little: the best correlation within 20 ms counts.
    best = max(abs(np.corrcoef(voice[: len(voice) - lag], out[lag:])[0, 1]) for lag in range(0, 320, 2))
    assert best > 0.9


def test_keeps_length_and_dtype(name: str) -> None:
    canceller = make_echo_canceller(name)
    for n in (160, 1600, 3200):
        out = canceller.process(np.full(n, 0.01), np.zeros(n))  # float64 in: converted
        assert out.dtype == np.float32 and out.shape == (n,)
    assert canceller.process(np.zeros(0, np.float32), np.zeros(0, np.float32)).shape == (0,)


@pytest.mark.parametrize(("mic", "ref"), [(1600, 1440), (1601, 1601), (100, 100), ((2, 800), (2, 800))])
def test_wrong_shapes_raise(name: str, mic: int | tuple[int, int], ref: int | tuple[int, int]) -> None:
    with pytest.raises(ValueError, match="multiple of 160"):
        make_echo_canceller(name).process(np.zeros(mic, np.float32), np.zeros(ref, np.float32))


def test_reset_forgets_the_room(name: str) -> None:
    ref, mic = echo_scene(4, seconds=5.0)
    used = make_echo_canceller(name)
    run(used, mic, ref)
    assert used.converged
    used.reset()
    assert not used.converged
    other_ref, other_mic = echo_scene(5, seconds=1.0)
    after_reset = run(used, other_mic, other_ref)
    fresh = run(make_echo_canceller(name), other_mic, other_ref)
    np.testing.assert_allclose(after_reset, fresh, atol=1e-6)


def test_unknown_name_is_a_moderator_error() -> None:
    with pytest.raises(ModeratorError, match="unknown echo canceller 'nlms'"):
        make_echo_canceller("nlms")
    with pytest.raises(EchoError, match="options"):
        make_echo_canceller("auto", tail=0.1)


def test_missing_libraries_say_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_library(path: str) -> None:
        raise OSError(f"{path}: cannot open shared object file")

    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    monkeypatch.setattr(ctypes, "CDLL", no_library)
    monkeypatch.setitem(sys.modules, "pywebrtc_audio", None)  # import fails
    with pytest.raises(EchoError, match="apt-get install libspeexdsp1"):
        make_echo_canceller("speex")
    with pytest.raises(EchoError, match="pip install pywebrtc-audio"):
        make_echo_canceller("webrtc")
    with pytest.raises(EchoError, match=r"no echo canceller is installed.*libspeexdsp.*pywebrtc-audio"):
        make_echo_canceller()


def test_auto_prefers_speex() -> None:
    try:
        assert make_echo_canceller().name == "speex"
    except EchoError as exc:
        pytest.skip(str(exc))


# -- the set-up chirp ---------------------------------------------------------------------------------------


def test_chirp_is_a_faded_sweep_in_the_speech_band() -> None:
    c = chirp()
    assert c.dtype == np.float32 and len(c) == RATE // 2
    assert 0.45 <= np.max(np.abs(c)) <= 0.5
    assert abs(c[0]) < 0.01 and abs(c[-1]) < 0.01
    spectrum = np.abs(np.fft.rfft(c)) ** 2
    freqs = np.fft.rfftfreq(len(c), 1 / RATE)
    assert spectrum[(freqs >= 250) & (freqs <= 6500)].sum() > 0.98 * spectrum.sum()


@pytest.mark.parametrize("delay", [0.0, 0.0173, 0.2311, 0.45])
def test_finds_the_chirp_under_reverberation_and_noise(delay: float) -> None:
    rng = np.random.default_rng(round(delay * 1e4))
    played = np.zeros(RATE, np.float32)
    played[: RATE // 2] = chirp()
    heard = 0.05 * np.convolve(chirp(), room(rng, delay, rt60=0.4, length=0.4))
    mic = np.zeros(RATE + RATE // 2)
    mic[: min(len(mic), len(heard))] = heard[: len(mic)]
    mic += 0.3 * speechlike(rng, len(mic) / RATE, level=0.05) + 0.01 * rng.standard_normal(len(mic))
    found, confidence = estimate_delay(played, mic, RATE)
    assert abs(found - delay) < 0.001
    assert confidence > 2 * HEARD


def test_confidence_is_low_when_the_chirp_is_not_there() -> None:
    rng = np.random.default_rng(7)
    played = np.zeros(RATE, np.float32)
    played[: RATE // 2] = chirp()
    for mic in (0.01 * rng.standard_normal(RATE), speechlike(rng, 1.0), np.zeros(RATE)):
        assert estimate_delay(played, mic, RATE)[1] < HEARD / 2


def test_delay_is_searched_only_up_to_max_delay() -> None:
    c = chirp()
    mic = np.zeros(RATE)
    mic[4800: 4800 + len(c)] = 0.1 * c[: RATE - 4800]
    assert estimate_delay(c, mic, RATE)[0] == pytest.approx(0.3, abs=1e-4)
    found, confidence = estimate_delay(c, mic, RATE, max_delay=0.2)
    assert found <= 0.2 and confidence < HEARD / 2
