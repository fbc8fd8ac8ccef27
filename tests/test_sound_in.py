"""Tests for the microphones: the AudioIn contract (fake and sounddevice), device lookup, time stamps, failures,
and a real PulseAudio pipe-source microphone."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from fake_sd_in import FakeInSD, FakeInStream, FakeTime
from fake_sounddevice import FakePortAudioError
from fakes import FakeAudioIn
from pulse import PulseBench

from moderator.adapters.audio_system import AudioSystem
from moderator.adapters.clock import VirtualClock
from moderator.adapters.portaudio import list_devices, resolve_device
from moderator.adapters.sound_in import SoundDeviceIn
from moderator.errors import DeviceError
from moderator.ports import AudioIn

RATE = 16000

#: The running test's fake sound system (set by the ``sd`` fixture), handed to the adapter under test.
_system: AudioSystem | None = None


@pytest.fixture
def sd() -> Iterator[FakeInSD]:
    global _system
    fake = FakeInSD()
    _system = AudioSystem(sounddevice=lambda: fake, pulse=lambda: None)  # no Pulse server: PortAudio only
    yield fake
    _system = None


def resolved(spec: str | int, direction: str = "input") -> int:
    """``resolve_device`` over the fake's devices."""
    return resolve_device(spec, list_devices(_system), direction=direction)


@pytest.fixture
def mono() -> FakeTime:
    """The adapter's monotonic clock (its stall and retry timers), given to it as ``monotonic=mono.monotonic``."""
    return FakeTime()


def make_in(clock: VirtualClock, logs: list[str] | None = None, **kwargs: Any) -> SoundDeviceIn:
    if "shared" not in kwargs:
        kwargs.setdefault("room_a", "USB Mic")
    return SoundDeviceIn(clock, log=(logs if logs is not None else []).append,
                         **({"system": _system} if _system else {}), **kwargs)


def ramp(n: int, start: float = 0.0) -> np.ndarray:
    return np.linspace(start, start + 0.5, n, dtype=np.float32)


# --- the AudioIn contract, run against the fake and the sounddevice adapter ------------------------------------


class AudioInContract:
    """What the play loop relies on from every AudioIn."""

    def make(self, mics: tuple[str | None, ...]) -> tuple[AudioIn, Callable[[str | None, np.ndarray], None]]:
        """An AudioIn with these microphones, and a way to make one of them hear samples (16 kHz)."""
        raise NotImplementedError

    def test_chunks_come_per_microphone_in_order_and_join_without_gaps(self) -> None:
        audio_in, hear = self.make(("A", "B"))
        hear("A", ramp(4800))
        hear("B", ramp(3200, 0.2))
        hear("A", ramp(1600, 0.4))
        chunks = audio_in.read()
        assert {c.mic for c in chunks} == {"A", "B"}
        for mic, expected in (("A", np.concatenate([ramp(4800), ramp(1600, 0.4)])), ("B", ramp(3200, 0.2))):
            mine = [c for c in chunks if c.mic == mic]
            assert all(c.samples.ndim == 1 and c.samples.dtype == np.float32 for c in mine)
            np.testing.assert_allclose(np.concatenate([c.samples for c in mine]), expected, atol=1e-6)
            for a, b in itertools.pairwise(mine):
                assert b.t == pytest.approx(a.t + len(a.samples) / a.rate, abs=1e-6)
        assert audio_in.read() == []
        assert audio_in.failed_mics == set()

    def test_a_shared_microphone_is_named_none(self) -> None:
        audio_in, hear = self.make((None,))
        assert audio_in.mics == (None,)
        hear(None, ramp(1600))
        assert {c.mic for c in audio_in.read()} == {None}

    def test_nothing_is_read_after_close(self) -> None:
        audio_in, hear = self.make(("A",))
        hear("A", ramp(1600))
        audio_in.close()
        assert audio_in.read() == []
        audio_in.close()  # twice is harmless


class TestFakeAudioIn(AudioInContract):
    def make(self, mics: tuple[str | None, ...]) -> tuple[AudioIn, Callable[[str | None, np.ndarray], None]]:
        fake = FakeAudioIn(mics)
        return fake, lambda mic, samples: fake.push(mic, samples, RATE)


class TestSoundDeviceIn(AudioInContract):
    @pytest.fixture(autouse=True)
    def _fake_sd(self, sd: FakeInSD) -> None:
        self.sd = sd

    def make(self, mics: tuple[str | None, ...]) -> tuple[AudioIn, Callable[[str | None, np.ndarray], None]]:
        clock = VirtualClock(10.0)
        names = {"A": "USB Mic", "B": "Webcam Mic", None: "pulse"}
        if mics == (None,):
            audio_in = make_in(clock, shared="pulse")
        else:
            audio_in = make_in(clock, room_a=names["A"] if "A" in mics else None,
                               room_b=names["B"] if "B" in mics else None)
        streams = dict(zip(mics, self.sd.streams, strict=True))

        def hear(mic: str | None, samples: np.ndarray) -> None:
            stream = streams[mic]
            block = stream.blocksize
            assert stream.rate == RATE
            for i in range(0, len(samples), block):
                clock.advance(block / RATE)
                stream.deliver(samples[i : i + block])

        return audio_in, hear


# --- device lookup and set-up errors ---------------------------------------------------------------------------


def test_resolve_by_index_exact_name_and_unique_substring(sd: FakeInSD) -> None:
    assert resolved(2) == 2
    assert resolved("3") == 3
    assert resolved("usb mic") == 2
    assert resolved("webcam") == 3
    assert resolved("pulse") == 0


def test_unknown_ambiguous_and_output_only_devices_list_the_microphones(sd: FakeInSD) -> None:
    with pytest.raises(DeviceError) as err:
        resolved("foo")
    assert str(err.value) == (
        "unknown input device (microphone) 'foo'; available: 0 pulse, 2 USB Mic, 3 Webcam Mic, 4 default"
    )
    with pytest.raises(DeviceError, match="'mic' is ambiguous: it matches 2 USB Mic, 3 Webcam Mic"):
        resolved("mic")
    with pytest.raises(DeviceError, match="device 1 'roomA' has no input channels; available: 0 pulse"):
        resolved(1)
    with pytest.raises(DeviceError, match=r"unknown input device .* 'roomA'"):
        resolved("roomA")  # an output-only device is not looked for by name


def test_microphone_choices_that_cannot_work_are_refused(sd: FakeInSD) -> None:
    clock = VirtualClock()
    with pytest.raises(DeviceError, match="both name input device 2; one microphone for both rooms is a shared"):
        make_in(clock, room_a="USB Mic", room_b="2")
    with pytest.raises(DeviceError, match="do not also name room microphones"):
        make_in(clock, shared="pulse", room_a="USB Mic")
    with pytest.raises(DeviceError, match="no microphone given"):
        make_in(clock, room_a=None)
    sd.refuse_open = True
    with pytest.raises(DeviceError, match=r"cannot open input device .* 2 'USB Mic': Device unavailable"):
        make_in(clock)


def test_a_failure_to_open_the_second_microphone_closes_the_first(
    sd: FakeInSD, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[FakeInStream] = []

    def second_fails(**kwargs: Any) -> FakeInStream:
        if opened:
            raise FakePortAudioError("Device unavailable")
        opened.append(FakeInStream(sd, **kwargs))
        return opened[0]

    monkeypatch.setattr(sd, "InputStream", second_fails)
    with pytest.raises(DeviceError, match="Webcam Mic"):
        make_in(VirtualClock(), room_b="Webcam Mic")
    assert opened[0].closed


# --- streams: rate, blocks, time stamps --------------------------------------------------------------------------


def test_streams_are_mono_16_khz_in_blocks_of_a_twentieth_of_a_second_or_the_device_rate(sd: FakeInSD) -> None:
    sd.refused_rates = {RATE}
    audio_in = make_in(VirtualClock(), room_a="USB Mic", room_b="Webcam Mic")
    a, b = sd.streams
    assert (a.kwargs["channels"], a.rate, a.blocksize) == (1, 44100, 2205)
    assert (b.rate, b.blocksize) == (48000, 2400)
    assert audio_in.rates == {"A": 44100, "B": 48000}


def test_stamps_start_from_the_adc_time_and_count_samples_and_a_drift_reanchors_them(sd: FakeInSD) -> None:
    clock = VirtualClock(50.0)
    audio_in = make_in(clock)
    stream = sd.streams[0]
    clock.advance(0.18)
    stream.deliver(ramp(1600), age=0.13)  # its first sample reached the ADC 0.13 s ago
    for _ in range(3):
        clock.advance(0.1 + 0.003)  # callbacks jitter; the stamps do not
        stream.deliver(ramp(1600))
    chunks = audio_in.read()
    assert [c.t for c in chunks] == pytest.approx([50.05, 50.15, 50.25, 50.35])
    clock.advance(1.0)  # the stream stalled for a second: a gap, and a new anchor
    stream.deliver(ramp(1600))
    [late] = audio_in.read()
    assert late.t == pytest.approx(clock.now() - 0.1)


def test_reading_waits_up_to_the_timeout_for_a_first_chunk(sd: FakeInSD) -> None:
    audio_in = make_in(VirtualClock())
    start = time.monotonic()
    assert audio_in.read(timeout=0.05) == []
    assert time.monotonic() - start >= 0.04


# --- failures mid-game -----------------------------------------------------------------------------------------


def test_a_stopped_stream_is_reported_once_and_retried_until_audio_flows(sd: FakeInSD, mono: FakeTime) -> None:
    logs: list[str] = []
    audio_in = make_in(VirtualClock(), logs, retry_after=5.0, monotonic=mono.monotonic)
    sd.streams[0].kwargs["finished_callback"]()
    assert audio_in.read() == [] and audio_in.failed_mics == {"A"}
    audio_in.read()
    assert logs == [
        "room A: microphone 2 'USB Mic' failed: the stream stopped unexpectedly (device lost?); type that room's "
        "commands until it comes back"
    ]
    mono.now += 4.99
    audio_in.read()  # too soon to retry
    assert len(sd.streams) == 1
    mono.now += 0.01
    audio_in.read()  # reopened: a new stream, but not back until it delivers
    assert len(sd.streams) == 2 and sd.streams[0].aborted and sd.streams[0].closed
    assert audio_in.failed_mics == {"A"}
    sd.streams[1].deliver(ramp(1600))
    assert len(audio_in.read()) == 1
    assert audio_in.failed_mics == set()
    assert logs[-1] == "room A: microphone 2 'USB Mic' is back"


def test_a_stream_that_delivers_nothing_counts_as_failed(sd: FakeInSD, mono: FakeTime) -> None:
    logs: list[str] = []
    audio_in = make_in(VirtualClock(), logs, shared="Webcam", stall_after=2.0, retry_after=60.0,
                       monotonic=mono.monotonic)
    mono.now += 1.0
    audio_in.read()
    assert audio_in.failed_mics == set()
    mono.now += 1.5
    audio_in.read()
    assert audio_in.failed_mics == {None}
    assert logs == ["shared microphone 3 'Webcam Mic' failed: it delivered no audio for 2 s (device lost or "
                    "muted?); type that room's commands until it comes back"]
    sd.streams[0].deliver(ramp(1600))  # it comes back by itself
    audio_in.read()
    assert audio_in.failed_mics == set() and logs[-1] == "shared microphone 3 'Webcam Mic' is back"


def test_a_reopen_that_fails_waits_for_the_next_retry(sd: FakeInSD, mono: FakeTime) -> None:
    logs: list[str] = []
    audio_in = make_in(VirtualClock(), logs, retry_after=5.0, monotonic=mono.monotonic)
    sd.streams[0].active = False
    audio_in.read()
    sd.refuse_open = True
    mono.now += 5.0
    audio_in.read()
    mono.now += 1.0
    audio_in.read()
    assert len(sd.streams) == 1 and audio_in.failed_mics == {"A"} and len(logs) == 1
    sd.refuse_open = False
    mono.now += 4.0
    audio_in.read()
    assert len(sd.streams) == 2


def test_dropped_audio_is_reported_once(sd: FakeInSD) -> None:
    logs: list[str] = []
    audio_in = make_in(VirtualClock(), logs)
    sd.streams[0].deliver(ramp(1600), overflow=True)
    sd.streams[0].deliver(ramp(1600), overflow=True)
    audio_in.read()
    audio_in.read()
    assert logs == ["room A: microphone 2 'USB Mic' dropped audio (the game loop fell behind)"]
    audio_in.close()
    assert sd.streams[0].stopped and sd.streams[0].closed


# --- a real microphone: a PulseAudio pipe source ------------------------------------------------------------------


RECORDER = r"""
import json, sys
import numpy as np
from moderator.adapters.clock import SystemClock
from moderator.adapters.sound_in import SoundDeviceIn
from moderator.errors import DeviceError

try:
    SoundDeviceIn(SystemClock(), room_a="no such mic")
except DeviceError as exc:
    print(json.dumps({"error": str(exc)}), flush=True)
logs = []
clock = SystemClock()
mic = SoundDeviceIn(clock, room_a=sys.argv[1], log=logs.append, stall_after=0.5, retry_after=60)
print(json.dumps({"ready": True}), flush=True)
chunks = []
end = clock.now() + float(sys.argv[2])
while clock.now() < end:
    chunks.extend(mic.read(timeout=0.05))
mic.close()
samples = np.concatenate([c.samples for c in chunks])
gaps = [round(b.t - (a.t + len(a.samples) / a.rate), 4) for a, b in zip(chunks, chunks[1:])]
print(json.dumps({"rate": chunks[0].rate, "mics": sorted({c.mic for c in chunks}),
                  "seconds": len(samples) / chunks[0].rate, "peak": float(np.max(np.abs(samples))),
                  "gaps": sorted(set(gaps)), "logs": logs,
                  "failed": sorted(mic.failed_mics)}))
"""


@pytest.mark.pulse
def test_a_pipe_source_microphone_is_heard_gapless_and_reported_when_it_stops(bench: PulseBench) -> None:
    with bench.pipe_mic("micTest") as mic:
        proc = subprocess.Popen([sys.executable, "-c", RECORDER, "micTest", "2.0"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=bench.env)
        assert proc.stdout is not None
        error = json.loads(proc.stdout.readline())["error"]
        assert error.startswith("unknown input device (microphone) 'no such mic'; available: ") and "micTest" in error
        assert json.loads(proc.stdout.readline()) == {"ready": True}
        mic.say(np.full(RATE // 2, 0.5, np.float32))  # half a second of a loud DC level, then silence
        time.sleep(0.8)
        mic.close()  # nothing more is written: the stream stalls
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    result = json.loads(out.strip().splitlines()[-1])
    assert result["rate"] == RATE and result["mics"] == ["A"]
    assert result["peak"] > 0.4
    assert result["gaps"] == [0.0]
    assert 0.7 < result["seconds"] < 2.0
    assert result["failed"] == ["A"]
    assert len(result["logs"]) == 1 and "failed: it delivered no audio for 0.5 s" in result["logs"][0], result["logs"]
