"""Tests for the sounddevice output: device lookup, sample-exact scheduling, failures, and real PulseAudio rooms."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from fake_sounddevice import FakePortAudioStream, FakeSounddevice, device
from pulse import PulseBench

from moderator.adapters.audio_system import AudioSystem
from moderator.adapters.clock import VirtualClock
from moderator.adapters.portaudio import list_devices, resolve_device
from moderator.adapters.sound_out import SoundDeviceOut
from moderator.audio.clip import Clip, rms_db
from moderator.commands import devices
from moderator.env import Environment
from moderator.errors import DeviceError

RATE = 44100


# --- a fake sounddevice module --------------------------------------------------------------------------------


class FakeStream(FakePortAudioStream):
    """An OutputStream whose callback the test drives, buffer by buffer, with chosen DAC times."""

    def __init__(self, sd: FakeSD, **kwargs: Any) -> None:
        super().__init__(sd, **kwargs)
        self.channels, self.latency = kwargs["channels"], kwargs["latency"]
        self.time = 1000.0  # the stream clock; unrelated to the game clock on purpose

    def pull(self, frames: int, dac: float, underflow: bool = False) -> np.ndarray:
        """Ask for one buffer whose first frame reaches the DAC at stream time ``dac``."""
        out = np.full((frames, self.channels), np.nan, dtype=np.float32)  # the callback must overwrite all
        info = SimpleNamespace(currentTime=dac - self.latency, outputBufferDacTime=dac)
        self.kwargs["callback"](out, frames, info, SimpleNamespace(output_underflow=underflow))
        return out


class FakeSD(FakeSounddevice):
    """Just the parts of ``sounddevice`` the adapter uses."""

    def __init__(self) -> None:
        super().__init__([
            device("pulse", 32, 32, RATE),
            device("roomA", 2, rate=RATE),
            device("roomB", 2, rate=RATE),
            device("USB Mic", 0, 1, RATE),
            device("mono speaker", 1, rate=RATE),
            device("default", 32, 32, RATE),
        ])

    def OutputStream(self, **kwargs: Any) -> FakeStream:  # mirrors sounddevice's name
        return FakeStream(self, **kwargs)

    check_output_settings = FakeSounddevice.check_settings


#: The running test's fake sound system (set by the ``sd`` fixture), handed to the adapter under test.
_system: AudioSystem | None = None


@pytest.fixture
def sd() -> Iterator[FakeSD]:
    global _system
    fake = FakeSD()
    _system = AudioSystem(sounddevice=lambda: fake, pulse=lambda: None)  # no Pulse server: PortAudio only
    yield fake
    _system = None


def resolved(spec: str | int) -> int:
    """``resolve_device`` over the fake's devices."""
    return resolve_device(spec, list_devices(_system))


class FakeTime:
    """``time.monotonic`` and ``time.sleep`` under the test's control (the adapter's stall, retry and close
    timers): sleeping only moves the clock."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.slept += seconds


def make_out(clock: VirtualClock, logs: list[str] | None = None, mono: FakeTime | None = None,
             **kwargs: Any) -> SoundDeviceOut:
    kwargs.setdefault("room_a", None if "split_stereo" in kwargs else "roomA")
    kwargs.setdefault("room_b", None if "split_stereo" in kwargs else "roomB")
    mono = mono or FakeTime()
    return SoundDeviceOut(clock, log=(logs if logs is not None else []).append, warm_up=0,
                          monotonic=mono.monotonic, sleep=mono.sleep, **({"system": _system} if _system else {}),
                          **kwargs)


def ramp(n: int) -> Clip:
    return Clip(np.linspace(0.1, 0.5, n, dtype=np.float32), RATE)


# --- resolve_device -------------------------------------------------------------------------------------------


def test_resolve_by_index_exact_name_and_unique_substring(sd: FakeSD) -> None:
    assert resolved(2) == 2
    assert resolved("2") == 2
    assert resolved("ROOMA") == 1
    assert resolved("mono") == 4
    assert resolved("pulse") == 0


def test_unknown_device_lists_the_output_devices(sd: FakeSD) -> None:
    with pytest.raises(DeviceError) as err:
        resolved("foo")
    assert str(err.value) == (
        "unknown output device 'foo'; available: 0 pulse, 1 roomA, 2 roomB, 4 mono speaker, 5 default"
    )


def test_ambiguous_and_input_only_devices_are_refused(sd: FakeSD) -> None:
    with pytest.raises(DeviceError, match="'room' is ambiguous: it matches 1 roomA, 2 roomB"):
        resolved("room")
    with pytest.raises(DeviceError, match="device 3 'USB Mic' has no output channels; available: 0 pulse"):
        resolved(3)
    with pytest.raises(DeviceError, match="unknown output device 'usb'"):
        resolved("usb")
    with pytest.raises(DeviceError, match="unknown output device 9"):
        resolved(9)


def test_device_choices_that_cannot_work_are_refused(sd: FakeSD) -> None:
    clock = VirtualClock()
    with pytest.raises(DeviceError, match=r"both name output device 1; .* or use split stereo"):
        make_out(clock, room_a="roomA", room_b="1")
    with pytest.raises(DeviceError, match="split stereo needs two output channels"):
        make_out(clock, split_stereo="mono")
    with pytest.raises(DeviceError, match="do not also name room devices"):
        make_out(clock, split_stereo="roomA", room_a="roomB")
    with pytest.raises(DeviceError, match="no output device given"):
        make_out(clock, room_a=None, room_b=None)
    sd.refuse_open = True
    with pytest.raises(DeviceError, match="cannot open output device 1 'roomA': Device unavailable"):
        make_out(clock)


# --- scheduling and mixing (fake streams) ---------------------------------------------------------------------


def test_a_clip_starts_at_the_sample_its_clock_time_reaches_the_dac(sd: FakeSD) -> None:
    clock = VirtualClock(10.0)
    out = make_out(clock)
    stream_a, stream_b = sd.streams
    clip = ramp(1000)
    out.play("A", clip, at=10.5)  # stream time 1000.5
    first = stream_a.pull(1024, dac=1000.49)  # the target is 441 frames into this buffer
    assert np.all(first[:441] == 0)
    np.testing.assert_array_equal(first[441:, 0], clip.samples[:583])
    np.testing.assert_array_equal(first[441:, 1], clip.samples[:583])  # a room's device plays it on every channel
    second = stream_a.pull(1024, dac=1000.49 + 1024 / RATE)
    np.testing.assert_array_equal(second[:417, 0], clip.samples[583:])
    assert np.all(second[417:] == 0)
    assert np.all(stream_b.pull(1024, dac=1000.49) == 0)
    [(room, at, started)] = out.starts
    assert (room, at) == ("A", 10.5)
    assert started == pytest.approx(10.5, abs=0.5 / RATE)


def test_a_clip_waits_for_its_buffer_and_a_late_clip_starts_at_once(sd: FakeSD) -> None:
    clock = VirtualClock(10.0)
    out = make_out(clock)
    stream_a = sd.streams[0]
    out.play("A", ramp(100), at=11.0)
    out.play("B", ramp(100), at=9.0)  # already past: plays whole, as soon as it can
    assert np.all(stream_a.pull(512, dac=1000.05) == 0)
    late = sd.streams[1].pull(512, dac=1000.05)
    np.testing.assert_array_equal(late[:100, 0], ramp(100).samples)
    [(room, at, started)] = out.starts
    assert (room, at, started) == ("B", 9.0, pytest.approx(10.05))


def test_overlapping_clips_mix_and_the_sum_is_clipped(sd: FakeSD) -> None:
    clock = VirtualClock(0.0)
    out = make_out(clock)
    loud = Clip(np.full(300, 0.7, dtype=np.float32), RATE)
    out.play("A", loud, at=0.1)
    out.play("A", loud, at=0.1 + 100 / RATE)
    buf = sd.streams[0].pull(1024, dac=1000.1)
    assert np.all(buf[:100, 0] == pytest.approx(0.7))
    assert np.all(buf[100:300, 0] == 1.0)  # 1.4, clipped
    assert np.all(buf[300:400, 0] == pytest.approx(0.7))
    assert len(out.starts) == 2


def test_split_stereo_puts_room_a_left_and_room_b_right(sd: FakeSD) -> None:
    clock = VirtualClock(0.0)
    out = make_out(clock, split_stereo="roomA")
    [stream] = sd.streams
    assert stream.channels == 2
    out.play("A", Clip(np.full(10, 0.25, dtype=np.float32), RATE), at=0.0)
    out.play("B", Clip(np.full(20, -0.5, dtype=np.float32), RATE), at=0.0)
    buf = stream.pull(64, dac=1000.0)
    np.testing.assert_array_equal(buf[:, 0], np.r_[np.full(10, 0.25), np.zeros(54)])
    np.testing.assert_array_equal(buf[:, 1], np.r_[np.full(20, -0.5), np.zeros(44)])


def test_clips_are_resampled_to_the_stream_rate_and_a_refused_rate_falls_back(sd: FakeSD) -> None:
    sd.refused_rates.add(48000)
    logs: list[str] = []
    out = make_out(VirtualClock(), logs, rate=48000)
    assert [s.rate for s in sd.streams] == [RATE, RATE]
    assert logs == [
        "device 1 'roomA' refuses 48000 Hz; using its default 44100 Hz",
        "device 2 'roomB' refuses 48000 Hz; using its default 44100 Hz",
    ]
    out.play("A", Clip(np.full(220, 0.5, dtype=np.float32), 22050), at=0.0)
    buf = sd.streams[0].pull(1024, dac=1000.0)
    assert np.count_nonzero(buf[:, 0]) == 440  # 220 samples at 22050 Hz


def test_a_room_without_a_speaker_is_logged_and_its_clips_dropped(sd: FakeSD) -> None:
    logs: list[str] = []
    out = make_out(VirtualClock(), logs, room_b=None)
    assert logs == ["room B has no speaker: its announcements are not played"]
    out.play("B", ramp(10), at=0.0)
    assert len(sd.streams) == 1
    with pytest.raises(ValueError, match="room must be 'A' or 'B'"):
        out.play("C", ramp(10), at=0.0)


# --- failures -------------------------------------------------------------------------------------------------


def test_a_lost_device_is_logged_once_silences_its_room_and_is_reopened_later(sd: FakeSD) -> None:
    clock = VirtualClock(0.0)
    logs: list[str] = []
    mono = FakeTime()
    out = make_out(clock, logs, mono, retry_after=0.2)
    stream_a, stream_b = sd.streams
    out.play("A", ramp(5000), at=0.0)
    stream_a.pull(256, dac=1000.0)
    stream_a.kwargs["finished_callback"]()  # PortAudio gave up on the device
    out.play("A", ramp(10), at=0.0)
    out.play("B", ramp(10), at=0.0)
    out.play("A", ramp(10), at=0.0)
    assert logs == [
        "room A: output device 1 'roomA' failed: the stream stopped unexpectedly (device lost?); "
        "silent until it comes back"
    ]
    assert out.failed_rooms == {"A"}
    assert not out._routes["A"][0].busy()
    np.testing.assert_array_equal(stream_b.pull(16, dac=1000.0)[:10, 0], ramp(10).samples)
    mono.now += 0.19
    out.play("A", ramp(10), at=0.0)  # too soon to retry
    assert len(logs) == 1 and out.failed_rooms == {"A"} and sd.streams[-1] is stream_b
    mono.now += 0.01
    out.play("A", ramp(10), at=0.0)
    assert logs[-1] == "room A: output device 1 'roomA' is back"
    assert stream_a.aborted and stream_a.closed
    new_a = sd.streams[-1]
    assert new_a is not stream_a and new_a.active
    assert np.any(new_a.pull(16, dac=1000.0) != 0)
    assert out.failed_rooms == set()


def test_a_stalled_stream_counts_as_lost_and_underflows_are_reported_once(sd: FakeSD) -> None:
    logs: list[str] = []
    mono = FakeTime()
    out = make_out(VirtualClock(), logs, mono, stall_after=0.05, retry_after=60)
    sd.streams[0].pull(64, dac=1000.0, underflow=True)
    sd.streams[0].pull(64, dac=1000.0, underflow=True)
    mono.now += 0.05
    sd.streams[1].pull(64, dac=1000.0)
    out.poll()
    out.poll()
    assert out.failed_rooms == set()  # quiet for exactly the stall window: not yet lost
    assert logs == ["room A: output device 1 'roomA' ran dry (audio glitch); a larger latency may help"]
    mono.now += 0.001
    sd.streams[1].pull(64, dac=1000.0)  # room B's stream goes on: only A's is lost
    out.poll()
    out.poll()
    assert out.failed_rooms == {"A"}
    assert logs[1:] == [
        "room A: output device 1 'roomA' failed: it pulled no audio for 0.05 s (device lost or suspended?); "
        "silent until it comes back",
    ]


def test_close_is_bounded_and_releases_every_stream(sd: FakeSD) -> None:
    mono = FakeTime()
    out = make_out(VirtualClock(), mono=mono)
    out.play("A", ramp(RATE * 10), at=0.0)  # nothing pulls it: close must not wait forever
    out.close(timeout=0.1)
    assert mono.slept == pytest.approx(0.1, abs=0.011)  # waited for the clip, then gave up
    assert all(s.stopped and s.closed for s in sd.streams)


def test_close_waits_for_nothing_when_nothing_plays(sd: FakeSD) -> None:
    mono = FakeTime()
    make_out(VirtualClock(), mono=mono).close(timeout=5.0)
    assert mono.slept == 0.0


# --- real PulseAudio ------------------------------------------------------------------------------------------

PLAYER = r"""
import json, sys
from moderator.adapters.clock import SystemClock
from moderator.adapters.sound_out import SoundDeviceOut
from moderator.audio.clip import Clip

cfg = json.loads(sys.argv[1])
clock = SystemClock()
logs = []
out = SoundDeviceOut(clock, log=logs.append, **cfg["devices"])
start = clock.now() + 0.2
for room, freq, delay in cfg["plays"]:
    out.play(room, Clip.tone((freq,), 0.5, 22050), start + delay)
out.close()
print(json.dumps({"starts": out.starts, "logs": logs}))
"""

SILENT_DB = -70.0
LOUD_DB = -50.0


def play(bench: PulseBench, devices: dict[str, Any], plays: list[tuple[str, float, float]]) -> dict[str, Any]:
    proc = bench.run(PLAYER, json.dumps({"devices": devices, "plays": plays}))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def per_room(bench: PulseBench, plays: list[tuple[str, float, float]]) -> tuple[float, float, dict[str, Any]]:
    with bench.record("roomA") as rec_a, bench.record("roomB") as rec_b:
        result = play(bench, {"room_a": "roomA", "room_b": "roomB"}, plays)
    return rms_db(rec_a[0][:, 0]), rms_db(rec_b[0][:, 0]), result


@pytest.mark.pulse
def test_each_room_hears_only_its_own_clips(bench: PulseBench) -> None:
    a_db, b_db, result = per_room(bench, [("A", 440, 0.0)])
    assert a_db > LOUD_DB and b_db < SILENT_DB, (a_db, b_db)
    assert result["logs"] == []
    a_db, b_db, _ = per_room(bench, [("B", 440, 0.0)])
    assert b_db > LOUD_DB and a_db < SILENT_DB, (a_db, b_db)


@pytest.mark.pulse
def test_both_rooms_play_at_once_on_time(bench: PulseBench) -> None:
    a_db, b_db, result = per_room(bench, [("A", 440, 0.0), ("B", 660, 0.0)])
    assert a_db > LOUD_DB and b_db > LOUD_DB, (a_db, b_db)
    starts = {room: (at, started) for room, at, started in result["starts"]}
    assert starts["A"][0] == starts["B"][0]
    for at, started in starts.values():
        assert abs(started - at) < 0.005  # scheduled 200 ms ahead: on the sample, by PortAudio's DAC estimate


@pytest.mark.pulse
def test_split_stereo_plays_room_a_left_and_room_b_right(bench: PulseBench) -> None:
    for room, loud, quiet in (("A", 0, 1), ("B", 1, 0)):
        with bench.record("roomA", channels=2) as rec:
            play(bench, {"split_stereo": "roomA"}, [(room, 440, 0.0)])
        levels = [rms_db(rec[0][:, ch]) for ch in (0, 1)]
        assert levels[loud] > LOUD_DB and levels[quiet] < SILENT_DB, (room, levels)


@pytest.mark.pulse
def test_a_suspended_device_is_logged_and_its_room_goes_quiet_while_the_other_plays(bench: PulseBench) -> None:
    script = r"""
import json, sys, time
from moderator.adapters.clock import SystemClock
from moderator.adapters.sound_out import SoundDeviceOut
from moderator.audio.clip import Clip

clock = SystemClock()
logs = []
out = SoundDeviceOut(clock, room_a="roomA", room_b="roomB", log=logs.append, stall_after=0.4, retry_after=60)
print("ready", flush=True)
sys.stdin.readline()  # the sink behind roomA is suspended now
time.sleep(1.5)  # well past stall_after, even on a loaded machine
out.play("A", Clip.tone((440,), 0.3, 22050), clock.now())
out.play("B", Clip.tone((440,), 0.3, 22050), clock.now())
out.close(timeout=3)
print(json.dumps({"starts": out.starts, "logs": logs, "failed": sorted(out.failed_rooms)}))
"""
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=bench.env,
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline().strip() == "ready"
        with bench.record("roomB") as rec_b:
            bench.suspend("roomA", True)
            proc.stdin.write("go\n")
            proc.stdin.flush()
            out, err = proc.communicate(timeout=20)
    finally:
        bench.suspend("roomA", False)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    result = json.loads(out.strip().splitlines()[-1])
    assert result["failed"] == ["A"]
    assert (
        len(result["logs"]) == 1
        and result["logs"][0].startswith("room A: output device")
        and "failed: it pulled no audio for 0.4 s" in result["logs"][0]
    ), result["logs"]
    assert [room for room, _, _ in result["starts"]] == ["B"]
    assert rms_db(rec_b[0][:, 0]) > LOUD_DB


@pytest.mark.pulse
def test_the_device_list_and_an_unknown_device_name_show_the_rooms(bench: PulseBench) -> None:
    script = r"""
import argparse, sys
from moderator.adapters.clock import SystemClock
from moderator.adapters.sound_out import SoundDeviceOut
from moderator.commands import devices
from moderator.env import Environment
from moderator.errors import DeviceError

parser = argparse.ArgumentParser()
devices.register(parser.add_subparsers())
devices.run(parser.parse_args(["devices"]), Environment())
try:
    SoundDeviceOut(SystemClock(), room_a="foo", room_b="roomB")
except DeviceError as exc:
    print("ERROR", exc)
"""
    proc = bench.run(script)
    assert proc.returncode == 0, proc.stderr
    table, error = proc.stdout.split("ERROR ")
    assert "roomA" in table and "roomB" in table and "> default output" in table
    assert error.startswith("unknown output device 'foo'; available: ")
    assert "roomA" in error and "roomB" in error


def test_a_failed_split_stereo_device_silences_both_rooms(sd: FakeSD) -> None:
    logs: list[str] = []
    out = make_out(VirtualClock(), logs, split_stereo="roomA", retry_after=60)
    sd.streams[0].kwargs["finished_callback"]()
    out.play("B", ramp(10), at=0.0)
    assert out.failed_rooms == {"A", "B"}
    assert logs == [
        "rooms A and B: output device 1 'roomA' failed: the stream stopped unexpectedly (device lost?); "
        "silent until it comes back"
    ]


def test_the_devices_command_marks_defaults_and_lists_inputs_too(sd: FakeSD) -> None:
    parser = argparse.ArgumentParser()
    devices.register(parser.add_subparsers())
    stdout = io.StringIO()
    assert devices.run(parser.parse_args(["devices"]), Environment(stdout=stdout, audio=_system)) == 0
    lines = stdout.getvalue().splitlines()
    assert lines[0].split() == ["#", "name", "host", "API", "out", "in", "rate"]
    assert lines[4].split() == ["3", "USB", "Mic", "ALSA", "0", "1", "44100"]
    assert lines[6].split() == ["><", "5", "default", "ALSA", "32", "32", "44100"]
    stdout = io.StringIO()
    devices.run(parser.parse_args(["devices", "--json"]), Environment(stdout=stdout, audio=_system))
    assert json.loads(stdout.getvalue())[1] == {
        "index": 1,
        "name": "roomA",
        "hostapi": "ALSA",
        "inputs": 0,
        "outputs": 2,
        "samplerate": 44100.0,
        "default_input": False,
        "default_output": False,
    }
