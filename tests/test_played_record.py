"""The echo canceller's reference on a sound card is what the output callback really wrote, frame-counted, and
where the device really played it: a clip asked for "now" a buffer later, the rest of a phrase after an
underrun's gap, a cut phrase up to its last written frame. Driven buffer by buffer through a fake PortAudio."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from fake_sounddevice import FakePortAudioStream, FakeSounddevice, device

from moderator.adapters.audio_system import SYSTEM, AudioSystem
from moderator.adapters.clock import VirtualClock
from moderator.adapters.sound_out import RECORD_SECONDS, UNDERRUN_LOST, SoundDeviceOut
from moderator.audio.clip import Clip
from moderator.audio.reference import RATE, PlayedAudio, band_limited

OUT_RATE = 48000
#: The stream's clock runs this far ahead of the game clock (their offset must be found, not assumed).
AHEAD = 1000.0
LATENCY = 0.05
BUFFER = 480  # 10 ms


class Stream(FakePortAudioStream):
    """An output stream whose callback the test runs, buffer by buffer, and the card behind it.

    Each buffer reaches the DAC at a game time the test chooses (PortAudio may report another), and the game
    clock reads the callback's start (or later: the GIL came late). The card plays what the callback wrote,
    where the test put it, except that an underrun drops what PulseAudio was measured to drop: the buffer
    queued before it (not one that went into an empty device itself), and the first ``UNDERRUN_LOST`` s of
    the buffer after it.
    """

    def __init__(self, sd: SD, **kwargs: Any) -> None:
        super().__init__(sd, **kwargs)
        self.clock = sd.clock
        self.channels, self.latency = kwargs["channels"], kwargs["latency"]
        self.played: list[tuple[float, np.ndarray]] = []  # (DAC time, frames) as the card played them
        self.underflowed = False

    @property
    def time(self) -> float:
        return self.clock.now() + AHEAD

    def pull(self, dac: float, *, reported: float | None = None, underflow: bool = False,
             late: float = 0.0, frames: int = BUFFER) -> np.ndarray:
        """One buffer whose first frame reaches the DAC at game time ``dac``; PortAudio says ``reported``."""
        current = dac - LATENCY
        self.clock.set(max(self.clock.now(), current + late))
        out = np.full((frames, self.channels), np.nan, np.float32)
        info = type("TimeInfo", (), {"currentTime": current + AHEAD,
                                     "outputBufferDacTime": (dac if reported is None else reported) + AHEAD})()
        status = type("Status", (), {"output_underflow": underflow, "__bool__": lambda self: underflow})()
        self.kwargs["callback"](out, frames, info, status)
        if underflow:
            if self.played and not self.underflowed:  # a buffer queued normally: dropped
                self.played.pop()
            # A stream that resumes earlier than it stopped never plays what it had queued past that.
            self.played = [(t, frames[: max(0, round((dac - t) * OUT_RATE))]) for t, frames in self.played]
            lost = round(UNDERRUN_LOST * OUT_RATE)
            self.played.append((dac + lost / OUT_RATE, out[lost:].copy()))
        else:
            self.played.append((dac, out.copy()))
        self.underflowed = underflow
        return out

    def run(self, dac: float, buffers: int, **kwargs: Any) -> float:
        """``buffers`` consecutive buffers from DAC time ``dac``; the DAC time of the next one."""
        for _ in range(buffers):
            self.pull(dac, **kwargs)
            dac += BUFFER / OUT_RATE
        return dac

    def heard(self, t: float, n: int, channel: int = 0) -> np.ndarray:
        """What the room heard from game time ``t``, at 16 kHz (``band_limited`` is tested on its own below)."""
        out = np.zeros(n, np.float32)
        for dac, frames in self.played:
            out += band_limited(frames[:, channel], OUT_RATE, dac, t, n)
        return out


class SD(FakeSounddevice):
    def __init__(self, clock: VirtualClock) -> None:
        super().__init__([device("roomA", 2, rate=OUT_RATE), device("roomB", 2, rate=OUT_RATE)])
        self.clock = clock

    def OutputStream(self, **kwargs: Any) -> Stream:  # mirrors sounddevice's name
        return Stream(self, **kwargs)

    check_output_settings = FakeSounddevice.check_settings


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(9.0)


#: The running test's fake sound system (set by the ``sd`` fixture), handed to the speakers under test.
_system: AudioSystem | None = None


@pytest.fixture
def sd(clock: VirtualClock) -> Iterator[SD]:
    global _system
    fake = SD(clock)
    _system = AudioSystem(sounddevice=lambda: fake, pulse=lambda: None)
    yield fake
    _system = None


def speakers(clock: VirtualClock, **kwargs: Any) -> PlayedAudio:
    kwargs.setdefault("room_a", None if "split_stereo" in kwargs else "roomA")
    kwargs.setdefault("room_b", None if "split_stereo" in kwargs else "roomB")
    return PlayedAudio(SoundDeviceOut(clock, log=[].append, warm_up=0, latency=LATENCY, system=_system or SYSTEM,
                                      **kwargs))


def voice(seconds: float, seed: int = 0) -> Clip:
    """Speech-like test audio at 16 kHz: noise under 3.5 kHz (where the sound card's resampling of a clip is
    faithful), with an uneven envelope."""
    rng = np.random.default_rng(seed)
    n = round(seconds * RATE)
    taps = np.arange(-50, 51)
    lowpass = np.sinc(2 * 3500 / RATE * taps) * np.hanning(len(taps))
    x = np.convolve(rng.standard_normal(n + len(taps) - 1), lowpass / lowpass.sum(), mode="valid")
    envelope = 0.5 + 0.4 * np.sin(np.arange(n) / RATE * 2 * np.pi * 3.0)
    return Clip((0.3 * x * envelope).astype(np.float32), RATE)


#: Samples at a clip's edges that the resampling filter smears (its reach, 1 ms, and a little more).
EDGE = 20


def level(x: np.ndarray) -> float:
    return 10 * float(np.log10(np.mean(np.square(x, dtype=np.float64)) + 1e-20))


def samples16(seconds: float) -> int:
    return round(seconds * RATE)


def assert_as_heard(played: PlayedAudio, room: str, stream: Stream, t: float, seconds: float,
                    channel: int = 0) -> np.ndarray:
    """The reference from ``t`` is what the room heard, to the sample (and is not silence)."""
    reference = played.reference((room,), t, samples16(seconds))
    heard = stream.heard(t, len(reference), channel)
    assert level(heard) > -40, "the test must play something there"
    assert level(reference - heard) - level(heard) < -60, "the reference is not what the room heard"
    return reference


def asked(played: PlayedAudio, room: str, t: float, seconds: float) -> np.ndarray:
    """What the clips asked for say was played (as every output that is not a sound card does)."""
    return PlayedAudio.reference(_Asked(played), (room,), t, samples16(seconds))


class _Asked:
    """``played``'s clips, read without the record (the reference before the record existed)."""

    def __init__(self, played: PlayedAudio) -> None:
        self.__dict__.update(played.__dict__)
        self.out = object()

    def _settle(self) -> None:
        PlayedAudio._settle(self)  # type: ignore[arg-type]

    def _forget(self, t: float) -> None:
        """Keep every clip."""


def differs(a: np.ndarray, b: np.ndarray) -> bool:
    return level(a - b) - level(b) > -10


def test_a_clip_asked_for_now_is_in_the_reference_where_the_card_played_it(sd: SD, clock: VirtualClock) -> None:
    played = speakers(clock)
    stream = sd.streams[0]
    dac = stream.run(9.0, 50)  # 9.5: the stream flows
    clip = voice(0.4)
    played.play("A", clip, clock.now())  # 9.45: a buffer is already on its way, so it starts at 9.5
    stream.run(dac, 50)
    reference = assert_as_heard(played, "A", stream, 9.4, 0.6)
    assert level(reference[: samples16(0.1) - EDGE]) < -100, "nothing before the buffer it was written in"
    assert not played.reference(("B",), 9.4, samples16(0.6)).any(), "room B played nothing"


def test_after_an_underrun_the_rest_of_the_phrase_is_where_the_card_resumed_it(sd: SD, clock: VirtualClock) -> None:
    played = speakers(clock)
    stream = sd.streams[0]
    dac = stream.run(9.0, 40)  # 9.4
    clip = voice(0.8, seed=1)
    played.play("A", clip, dac)
    dac = stream.run(dac, 20)  # 0.2 s of it played, then the callback starved: 0.15 s of nothing
    gap = 0.15
    dac += gap
    # PortAudio reports the first buffer after an underrun a little off, the next ones right.
    stream.pull(dac, reported=dac - 0.0015, underflow=True)
    stream.run(dac + BUFFER / OUT_RATE, 60)
    reference = assert_as_heard(played, "A", stream, 9.4, 1.2)
    silent = reference[samples16(0.19) + EDGE : samples16(0.2 + gap + UNDERRUN_LOST) - EDGE]
    assert level(silent) < -100, "the gap, and what the card dropped around it, are silence"
    assert differs(reference, asked(played, "A", 9.4, 1.2)), "the clip as asked would be 0.15 s early"


def test_in_a_run_of_underruns_each_buffer_plays_from_an_empty_device(sd: SD, clock: VirtualClock) -> None:
    """The CPU starved (measured under load: callbacks 50 ms apart for a while): every buffer arrives after the
    device ran dry, plays at once but for its first milliseconds, and a gap follows it."""
    played = speakers(clock)
    stream = sd.streams[0]
    dac = stream.run(9.0, 40)
    played.play("A", voice(0.8, seed=11), dac)
    dac = stream.run(dac, 15)
    for _ in range(5):
        dac += 0.035
        stream.pull(dac, underflow=True)
        dac += BUFFER / OUT_RATE
    stream.run(dac, 40)
    assert_as_heard(played, "A", stream, 9.4, 1.0)


def test_a_stream_that_drops_what_it_had_queued_resumes_earlier(sd: SD, clock: VirtualClock) -> None:
    played = speakers(clock)
    stream = sd.streams[0]
    dac = stream.run(9.0, 40)
    played.play("A", voice(0.6, seed=2), dac)
    dac = stream.run(dac, 20)
    early = 0.03  # recovering from the underrun, the stream threw away 30 ms it had queued
    stream.pull(dac - early, underflow=True)
    stream.run(dac - early + BUFFER / OUT_RATE, 40)
    assert_as_heard(played, "A", stream, 9.4, 0.8)


def test_a_reported_jump_without_an_underrun_is_the_reports_not_the_audio(sd: SD, clock: VirtualClock) -> None:
    """Measured on PulseAudio under load: the reported DAC time jumped by 5-11 ms, and stayed there, while the
    frames played on where the count put them."""
    played = speakers(clock)
    stream = sd.streams[0]
    dac = stream.run(9.0, 40)
    played.play("A", voice(0.6, seed=10), dac)
    dac = stream.run(dac, 20)
    for _ in range(40):
        stream.pull(dac, reported=dac + 0.011)
        dac += BUFFER / OUT_RATE
    assert_as_heard(played, "A", stream, 9.4, 0.6)


def test_the_frame_count_wins_over_reported_times_that_wander(sd: SD, clock: VirtualClock) -> None:
    """PortAudio's DAC times on PulseAudio drift from the frames played by 0.3 ms a second and jitter by a
    millisecond; the frames join exactly all the same."""
    played = speakers(clock)
    stream = sd.streams[0]
    dac = stream.run(9.0, 40)
    played.play("A", voice(1.0, seed=3), dac)
    rng = np.random.default_rng(0)
    for k in range(140):
        stream.pull(dac, reported=dac + 0.0003 * (k * BUFFER / OUT_RATE) + rng.uniform(-0.001, 0.001))
        dac += BUFFER / OUT_RATE
    assert_as_heard(played, "A", stream, 9.4, 1.0)


def test_a_cut_phrase_is_in_the_reference_up_to_the_last_frame_written(sd: SD, clock: VirtualClock) -> None:
    played = speakers(clock)
    stream = sd.streams[0]
    dac = stream.run(9.0, 40)
    clip = voice(1.0, seed=4)
    played.play("A", clip, dac)
    dac = stream.run(dac, 30)  # 0.3 s written, up to DAC time 9.7; the clock is at 9.65
    stop = clock.now()
    played.stop("A", clip, stop)  # barge-in: what is already in the device's buffer still plays
    stream.run(dac, 20)
    reference = assert_as_heard(played, "A", stream, 9.4, 0.6)
    written = samples16(0.3)
    after_stop = slice(samples16(stop - 9.4) + EDGE, written - EDGE)
    assert level(reference[after_stop]) > -40, "played after it was asked to stop: it was in the device already"
    assert level(asked(played, "A", 9.4, 0.6)[after_stop]) < -100, "(where the clip was asked to stop)"
    assert level(reference[written + EDGE :]) < -100


def test_split_stereo_gives_each_room_its_own_channel(sd: SD, clock: VirtualClock) -> None:
    played = speakers(clock, split_stereo="roomA")
    [stream] = sd.streams
    dac = stream.run(9.0, 40)
    played.play("A", voice(0.3, seed=5), dac)
    played.play("B", voice(0.3, seed=6), dac + 0.1)
    stream.run(dac, 60)
    ref_a = assert_as_heard(played, "A", stream, dac, 0.5, channel=0)
    ref_b = assert_as_heard(played, "B", stream, dac, 0.5, channel=1)
    both = played.reference(("A", "B"), dac, samples16(0.5))
    np.testing.assert_allclose(both, ref_a + ref_b, atol=1e-6)


def test_a_room_without_a_speaker_played_nothing(sd: SD, clock: VirtualClock) -> None:
    played = speakers(clock, room_b=None)
    played.play("B", voice(0.3), clock.now())
    sd.streams[0].run(9.0, 50)
    assert not played.reference(("B",), 8.9, samples16(0.6)).any()


def test_the_clock_read_late_in_a_callback_does_not_move_the_reference(sd: SD, clock: VirtualClock) -> None:
    """The callback reads the game clock when it gets the GIL; the offset to the stream's clock is the least
    seen, so a callback that ran late (recognition held the GIL) does not shift what follows."""
    played = speakers(clock)
    stream = sd.streams[0]
    dac = stream.run(9.0, 40)
    played.play("A", voice(0.5, seed=7), dac)
    for k in range(60):
        stream.pull(dac, late=0.03 if k % 7 == 3 else 0.0)
        dac += BUFFER / OUT_RATE
    assert_as_heard(played, "A", stream, 9.4, 0.5)


def test_the_first_buffers_of_a_sink_waking_up_do_not_place_the_rest(sd: SD, clock: VirtualClock) -> None:
    """Before a sink pulls audio its DAC times are wrong (PulseAudio's null sink: by up to a second); the jump
    when it starts is followed, though PortAudio flags no underrun."""
    played = speakers(clock)
    stream = sd.streams[0]
    for k in range(4):
        stream.pull(8.0 + k * BUFFER / OUT_RATE, reported=7.0 + k * BUFFER / OUT_RATE)
    dac = stream.run(9.0, 40)
    played.play("A", voice(0.3, seed=8), dac)
    stream.run(dac, 40)
    assert_as_heard(played, "A", stream, dac, 0.4)


def test_the_record_is_forgotten_after_its_time_not_wrapped_around(sd: SD, clock: VirtualClock) -> None:
    played = speakers(clock)
    stream = sd.streams[0]
    dac = stream.run(9.0, 10)
    played.play("A", voice(0.2, seed=9), dac)
    start = dac
    stream.run(dac, round((RECORD_SECONDS + 1) * OUT_RATE / BUFFER))
    assert not played.reference(("A",), start, samples16(0.3)).any()


def test_the_callback_records_without_allocating(sd: SD, clock: VirtualClock) -> None:
    """What runs on PortAudio's thread: copies into preallocated rings, no new arrays."""
    import tracemalloc

    speakers(clock)
    stream = sd.streams[0]
    outdata = np.zeros((BUFFER, 2), np.float32)
    record = stream.kwargs["callback"].__self__.record
    record.write(outdata, BUFFER, 1000.0, 999.95, False)
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for k in range(200):
            record.write(outdata, BUFFER, 1000.0 + k * 0.01, 999.95 + k * 0.01, False)
        grown = sum(stat.size_diff for stat in tracemalloc.take_snapshot().compare_to(before, "filename"))
    finally:
        tracemalloc.stop()
    assert grown < 4096


# --- the resampler -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rate", [44100, 48000, 22050])
def test_band_limited_resampling_keeps_speech_and_drops_what_would_fold_back(rate: int) -> None:
    t = np.arange(rate) / rate
    for freq, kept in ((1000, True), (6500, True), (9000, False), (15000, False)):
        if freq >= rate / 2:
            continue
        x = np.sin(2 * np.pi * freq * t).astype(np.float32)
        y = band_limited(x, rate, 0.0, 0.25, 4000)
        if kept:
            expected = np.sin(2 * np.pi * freq * (0.25 + np.arange(4000) / RATE))
            assert level(y - expected) - level(expected) < -25, (rate, freq)
        else:
            assert level(y) - level(x) < -50, (rate, freq)


def test_band_limited_resampling_places_samples_at_any_time() -> None:
    """A time between two samples of either rate is honoured (no rounding to a grid)."""
    rate = 44100
    t = np.arange(rate) / rate
    x = np.sin(2 * np.pi * 700 * t).astype(np.float32)
    start = 3.000_013  # the first input sample, 13 us after 3 s
    y = band_limited(x, rate, start, 3.2, 1600)
    expected = np.sin(2 * np.pi * 700 * (3.2 - start + np.arange(1600) / RATE))
    assert level(y - expected) - level(expected) < -60
    assert not band_limited(x, rate, start, 2.0, 1600).any(), "silence before the samples"
