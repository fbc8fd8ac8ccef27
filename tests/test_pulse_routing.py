"""Speakers and microphones named by PulseAudio sink/source: name resolution on a fake server, and real routing
through PortAudio's ``pulse`` device to the bench's null sinks and pipe source, with no ``.asoundrc``."""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from fake_sounddevice import FakePortAudioStream, FakeSounddevice, device
from pulse import RECORD_RATE, ROOT, PulseBench

from moderator.adapters import pulse_routing
from moderator.adapters.audio_system import AudioSystem
from moderator.adapters.clock import VirtualClock
from moderator.adapters.portaudio import resolve_route
from moderator.adapters.pulse_routing import PulseDevice
from moderator.adapters.sound_out import SoundDeviceOut
from moderator.commands import devices
from moderator.env import Environment
from moderator.errors import DeviceError

# --- a fake Pulse server and PortAudio ---------------------------------------------------------------------------


def _dev(index: int, name: str, description: str, channels: int = 2, rate: int = 48000) -> SimpleNamespace:
    return SimpleNamespace(index=index, name=name, description=description, channel_count=channels,
                           sample_spec=SimpleNamespace(rate=rate))


class FakePulse:
    """The parts of ``pulsectl.Pulse`` used: lists, server info, moves; a stream appears when PortAudio opens one."""

    def __init__(self) -> None:
        self.sinks = [_dev(0, "alsa_output.pci.analog-stereo", "Built-in Audio"),
                      _dev(1, "bluez_sink.AA_BB", "Kitchen Speaker"),
                      _dev(2, "bluez_sink.CC_DD", "Porch Speaker", channels=1)]
        self.sources = [_dev(0, "alsa_output.pci.analog-stereo.monitor", "Monitor of Built-in Audio"),
                        _dev(1, "alsa_input.usb-mic", "USB Microphone", channels=1)]
        self.sink_inputs: list[SimpleNamespace] = []
        self.source_outputs: list[SimpleNamespace] = []
        self.moves: list[tuple[str, int, int]] = []
        self.honour_env = True  # like ALSA's pulse plugin: PULSE_SINK / PULSE_SOURCE pick the device
        self.closed = 0

    def server_info(self) -> SimpleNamespace:
        return SimpleNamespace(default_sink_name=self.sinks[0].name, default_source_name=self.sources[1].name)

    def sink_list(self) -> list[SimpleNamespace]:
        return self.sinks

    def source_list(self) -> list[SimpleNamespace]:
        return self.sources

    def sink_input_list(self) -> list[SimpleNamespace]:
        return self.sink_inputs

    def source_output_list(self) -> list[SimpleNamespace]:
        return self.source_outputs

    def sink_input_move(self, index: int, sink: int) -> None:
        self.moves.append(("sink", index, sink))
        next(s for s in self.sink_inputs if s.index == index).sink = sink

    def source_output_move(self, index: int, source: int) -> None:
        self.moves.append(("source", index, source))
        next(s for s in self.source_outputs if s.index == index).source = source

    def close(self) -> None:
        self.closed += 1

    def stream_opened(self, output: bool) -> None:
        """What the server sees when PortAudio's ``pulse`` device opens a stream now."""
        devs, streams, var = (self.sinks, self.sink_inputs, "PULSE_SINK") if output else (
            self.sources, self.source_outputs, "PULSE_SOURCE")
        wanted = os.environ.get(var) if self.honour_env else None
        where = next((d.index for d in devs if d.name == wanted), 0)
        props = {"application.process.id": str(os.getpid())}
        if self.honour_env and f"PULSE_PROP_{pulse_routing.TAG}" in os.environ:
            props[pulse_routing.TAG] = os.environ[f"PULSE_PROP_{pulse_routing.TAG}"]
        streams.append(SimpleNamespace(index=len(streams) + 10, proplist=props,
                                       **({"sink": where} if output else {"source": where})))


class FakeStream(FakePortAudioStream):
    def __init__(self, sd: FakeSD, output: bool, **kwargs: Any) -> None:
        super().__init__(sd, **kwargs)
        self.latency, self.time = kwargs.get("latency", 0.05), 0.0
        self.env = {key: os.environ.get(key) for key in ("PULSE_SINK", "PULSE_SOURCE")}
        if sd.devices[kwargs["device"]]["name"] == "pulse":
            sd.pulse.stream_opened(output)


class FakeSD(FakeSounddevice):
    def __init__(self, pulse: FakePulse) -> None:
        super().__init__([device("HDA Intel: ALC (hw:0,0)", 2, 2), device("pulse", 32, 32),
                          device("default", 32, 32)])
        self.pulse = pulse

    def OutputStream(self, **kwargs: Any) -> FakeStream:  # mirrors sounddevice's name
        return FakeStream(self, True, **kwargs)

    def InputStream(self, **kwargs: Any) -> FakeStream:  # mirrors sounddevice's name
        return FakeStream(self, False, **kwargs)

    check_output_settings = check_input_settings = FakeSounddevice.check_settings


#: The running test's fake sound system (set by the ``sd`` fixture), handed to the adapters under test.
_system: AudioSystem | None = None


@pytest.fixture
def pulse() -> FakePulse:
    return FakePulse()


@pytest.fixture
def sd(pulse: FakePulse) -> Iterator[FakeSD]:
    global _system
    fake = FakeSD(pulse)
    _system = AudioSystem(sounddevice=lambda: fake, pulse=lambda: pulse)
    yield fake
    _system = None


def route(spec: str | int, direction: str = "output") -> tuple[int, PulseDevice | None]:
    """``resolve_route`` on the fake sound system."""
    return resolve_route(spec, direction=direction, system=_system or AudioSystem())


# --- resolution ------------------------------------------------------------------------------------------------


def test_a_portaudio_device_wins_and_a_sink_or_source_is_reached_through_pulse(sd: FakeSD) -> None:
    assert route("ALC") == (0, None)
    assert route("default") == (2, None)
    index, sink = route("kitchen speaker")  # by description, ignoring case
    assert index == 1 and sink is not None and (sink.kind, sink.name) == ("sink", "bluez_sink.AA_BB")
    index, source = route("alsa_input.usb-mic", direction="input")  # by name
    assert index == 1 and source is not None and source.kind == "source" and source.channels == 1
    _, source = route("monitor of built", direction="input")  # a sink's monitor can be a microphone
    assert source is not None and source.name.endswith(".monitor")


def test_unknown_and_ambiguous_names_list_both_kinds_of_device(sd: FakeSD) -> None:
    with pytest.raises(DeviceError) as err:
        route("roomA")
    assert str(err.value) == (
        "unknown output device 'roomA'; available: 0 HDA Intel: ALC (hw:0,0), 1 pulse, 2 default; "
        "Pulse sinks: alsa_output.pci.analog-stereo (Built-in Audio), bluez_sink.AA_BB (Kitchen Speaker), "
        "bluez_sink.CC_DD (Porch Speaker)"
    )
    with pytest.raises(DeviceError, match=r"unknown input device .*Pulse sources: .*alsa_input.usb-mic"):
        route("kitchen", direction="input")  # a sink is no microphone
    with pytest.raises(DeviceError, match=r"Pulse sink 'bluez' is ambiguous: it matches bluez_sink.AA_BB, "
                                          "bluez_sink.CC_DD"):
        route("bluez")
    with pytest.raises(DeviceError, match="unknown output device 7; available"):
        route(7)  # a number is PortAudio's


def test_without_a_pulse_server_names_resolve_as_before(sd: FakeSD) -> None:
    global _system
    _system = AudioSystem(sounddevice=lambda: sd, pulse=lambda: None)
    with pytest.raises(DeviceError) as err:
        route("kitchen")
    assert str(err.value) == "unknown output device 'kitchen'; available: 0 HDA Intel: ALC (hw:0,0), 1 pulse, 2 default"


def test_a_sink_needs_portaudio_to_reach_the_server(sd: FakeSD) -> None:
    del sd.devices[1:]
    with pytest.raises(DeviceError, match=r"sink bluez_sink.AA_BB .*is on the Pulse server, but PortAudio has no "
                                          "'pulse' or 'pipewire' or 'default' output device"):
        route("kitchen")


# --- opening and routing ---------------------------------------------------------------------------------------


def test_each_room_opens_on_pulse_with_its_sink_named_at_creation(sd: FakeSD, pulse: FakePulse) -> None:
    out = SoundDeviceOut(VirtualClock(), system=_system, room_a="Kitchen Speaker", room_b="bluez_sink.CC_DD",
                         log=[].append, warm_up=0)
    assert [s.kwargs["device"] for s in sd.streams] == [1, 1]
    assert [s.env["PULSE_SINK"] for s in sd.streams] == ["bluez_sink.AA_BB", "bluez_sink.CC_DD"]
    assert [s.kwargs["channels"] for s in sd.streams] == [2, 1]  # the porch speaker is mono
    assert [s.sink for s in pulse.sink_inputs] == [1, 2] and pulse.moves == []
    assert "PULSE_SINK" not in os.environ and f"PULSE_PROP_{pulse_routing.TAG}" not in os.environ
    out.close(timeout=0)


def test_a_stream_the_plugin_left_on_the_default_sink_is_moved(sd: FakeSD, pulse: FakePulse) -> None:
    pulse.honour_env = False  # an ALSA plugin that ignores PULSE_SINK: found as this process's new stream
    out = SoundDeviceOut(VirtualClock(), system=_system, room_a="kitchen", log=[].append, warm_up=0)
    assert pulse.moves == [("sink", 10, 1)] and pulse.sink_inputs[0].sink == 1
    out.close(timeout=0)
    from moderator.adapters.sound_in import SoundDeviceIn

    mic = SoundDeviceIn(VirtualClock(), system=_system, shared="USB Microphone", log=[].append)
    assert pulse.moves[-1] == ("source", 10, 1)
    mic.close()


def test_a_stream_not_seen_on_the_server_is_an_error_and_is_closed(sd: FakeSD, pulse: FakePulse,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pulse, "stream_opened", lambda output: None)
    with pytest.raises(DeviceError, match=r"cannot route to sink bluez_sink.AA_BB .*shows no stream just opened"):
        SoundDeviceOut(VirtualClock(), system=_system, room_a="kitchen", log=[].append, warm_up=0)
    assert sd.streams[0].closed


def test_one_sink_for_both_rooms_is_refused_but_two_sinks_are_two_devices(sd: FakeSD) -> None:
    with pytest.raises(DeviceError, match=r"both name output device 1 \(sink bluez_sink.AA_BB\)"):
        SoundDeviceOut(VirtualClock(), system=_system, room_a="kitchen", room_b="Kitchen Speaker", log=[].append,
                       warm_up=0)
    with pytest.raises(DeviceError, match=r"split stereo needs two output channels; .*'bluez_sink.CC_DD' has 1"):
        SoundDeviceOut(VirtualClock(), system=_system, split_stereo="porch", log=[].append, warm_up=0)


def test_the_devices_command_lists_sinks_and_sources(sd: FakeSD) -> None:
    parser = argparse.ArgumentParser()
    devices.register(parser.add_subparsers())
    stdout = io.StringIO()
    devices.run(parser.parse_args(["devices"]), Environment(stdout=stdout, audio=_system or AudioSystem()))
    text = stdout.getvalue()
    assert text.split("\n\n")[1].splitlines()[:3] == [
        "   Pulse   name                                   description                ch   rate",
        ">  sink    alsa_output.pci.analog-stereo          Built-in Audio              2  48000",
        "   sink    bluez_sink.AA_BB                       Kitchen Speaker             2  48000",
    ]
    assert "<  source  alsa_input.usb-mic" in text
    stdout = io.StringIO()
    devices.run(parser.parse_args(["devices", "--json"]), Environment(stdout=stdout, audio=_system or AudioSystem()))
    listed = json.loads(stdout.getvalue())
    assert [d["index"] for d in listed[:3]] == [0, 1, 2]
    assert listed[4] == {"index": None, "name": "bluez_sink.AA_BB", "description": "Kitchen Speaker",
                         "hostapi": "Pulse server", "pulse": "sink", "inputs": 0, "outputs": 2,
                         "samplerate": 48000.0, "default_input": False, "default_output": False}


def test_find_prefers_an_exact_name_to_a_substring() -> None:
    devs = [PulseDevice("sink", 0, "room", "Room", 2, 48000), PulseDevice("sink", 1, "roomA", "Room A", 2, 48000)]
    assert pulse_routing.find("ROOM", devs, "output") is devs[0]
    assert pulse_routing.find("room a", devs, "output") is devs[1]
    assert pulse_routing.find("kitchen", devs, "output") is None


# --- real PulseAudio, no .asoundrc ------------------------------------------------------------------------------

PLAYER = r"""
import json, sys
import sounddevice
from moderator.adapters.clock import SystemClock
from moderator.adapters.sound_out import SoundDeviceOut
from moderator.audio.clip import Clip
from moderator.errors import DeviceError

sink_a, sink_b = sys.argv[1:3]
names = [d["name"] for d in sounddevice.query_devices()]
try:
    SoundDeviceOut(SystemClock(), room_a="no such speaker")
except DeviceError as exc:
    unknown = str(exc)
clock = SystemClock()
logs = []
out = SoundDeviceOut(clock, room_a=sink_a, room_b=sink_b, log=logs.append)
start = clock.now() + 0.2
out.play("A", Clip.tone((440,), 0.6, 22050), start)
out.play("B", Clip.tone((660,), 0.6, 22050), start)
out.close()
print(json.dumps({"portaudio": names, "unknown": unknown, "logs": logs, "rooms": sorted(out.starts)}))
"""

RECORDER = r"""
import json, sys
import numpy as np
from moderator.adapters.clock import SystemClock
from moderator.adapters.sound_in import SoundDeviceIn

clock = SystemClock()
mic = SoundDeviceIn(clock, room_a=sys.argv[1], log=print)
print(json.dumps({"ready": True}), flush=True)
chunks, end = [], clock.now() + float(sys.argv[2])
while clock.now() < end:
    chunks.extend(mic.read(timeout=0.05))
mic.close()
samples = np.concatenate([c.samples for c in chunks])
print(json.dumps({"rate": chunks[0].rate, "samples": samples.tolist()}))
"""


@pytest.fixture
def plain_env(bench: PulseBench) -> Iterator[dict[str, str]]:
    """The bench's server, but a HOME without the bench's ``.asoundrc``: PortAudio sees only pulse and default."""
    with tempfile.TemporaryDirectory(prefix="no-asoundrc-") as home:
        yield {**bench.env, "HOME": home}
        assert not (Path(home) / ".asoundrc").exists()


def level_db(samples: np.ndarray, freq: float, rate: int = RECORD_RATE) -> float:
    """The level of ``freq`` in ``samples`` (dB of a full-scale sine's amplitude), from a windowed spectrum."""
    window = np.hanning(len(samples))
    spectrum = np.abs(np.fft.rfft(samples * window)) / (window.sum() / 2)
    bin_ = round(freq * len(samples) / rate)
    return float(20 * np.log10(spectrum[bin_ - 3 : bin_ + 4].max() + 1e-12))


@pytest.mark.pulse
def test_two_sinks_named_by_pulse_name_each_hear_only_their_own_room(bench: PulseBench,
                                                                     plain_env: dict[str, str]) -> None:
    import subprocess

    with bench.record("roomA") as rec_a, bench.record("roomB") as rec_b:
        proc = subprocess.run([sys.executable, "-c", PLAYER, bench.sinks["roomA"], bench.sinks["roomB"]],
                              capture_output=True, text=True, env=plain_env, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "roomA" not in " ".join(result["portaudio"]) and "pulse" in result["portaudio"]  # no .asoundrc
    assert result["unknown"].startswith("unknown output device 'no such speaker'; available: ")
    assert bench.sinks["roomA"] in result["unknown"] and bench.sinks["roomB"] in result["unknown"]
    assert result["logs"] == [] and [row[0] for row in result["rooms"]] == ["A", "B"]
    a, b = rec_a[0][:, 0], rec_b[0][:, 0]
    levels = {room: {f: level_db(x, f) for f in (440, 660)} for room, x in (("A", a), ("B", b))}
    # Over the whole recording (the tone fills a third of it): each room's own tone about -37 dB, the other
    # room's at the noise floor (measured: -110 dB): nothing of it leaked.
    assert levels["A"][440] > -50 and levels["B"][660] > -50, levels
    assert levels["A"][440] - levels["A"][660] > 60 and levels["B"][660] - levels["B"][440] > 60, levels
    for x in (a, b):  # and the tone itself arrived whole, at its level (half scale: -6 dB)
        loud = np.flatnonzero(np.abs(x) > 0.1)
        assert len(loud) and level_db(x[loud[0] : loud[0] + RECORD_RATE // 2], 440 if x is a else 660) > -8


@pytest.mark.pulse
def test_a_pipe_source_named_by_pulse_name_is_a_microphone(bench: PulseBench, plain_env: dict[str, str]) -> None:
    import subprocess

    with bench.pipe_mic("micRouted") as mic:
        proc = subprocess.Popen([sys.executable, "-c", RECORDER, mic.source, "2.0"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=plain_env)
        assert proc.stdout is not None
        assert json.loads(proc.stdout.readline()) == {"ready": True}
        t = np.arange(16000) / 16000
        mic.say(0.5 * np.sin(2 * np.pi * 500 * t).astype(np.float32))
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    result = json.loads(out.strip().splitlines()[-1])
    samples = np.array(result["samples"], np.float32)
    rate = result["rate"]
    loud = np.flatnonzero(np.abs(samples) > 0.1)
    assert len(loud), "the microphone heard nothing"
    tone = samples[loud[0] : loud[0] + rate // 2]
    assert level_db(tone, 500, rate) > -8 and level_db(tone, 1000, rate) < -40  # the half-scale tone, clean
