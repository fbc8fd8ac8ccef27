"""What the fakes of ``sounddevice`` share: the error, a stream's start/stop/abort/close, and a device list."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any


class FakePortAudioError(Exception):
    pass


def device(name: str, outputs: int, inputs: int = 0, rate: float = 44100.0) -> dict[str, Any]:
    """One entry of ``query_devices()``."""
    return {"name": name, "hostapi": 0, "max_input_channels": inputs, "max_output_channels": outputs,
            "default_samplerate": rate}


class FakePortAudioStream:
    """A stream that records what was done to it; ``open`` refused when its module says so."""

    def __init__(self, sd: FakeSounddevice, **kwargs: Any) -> None:
        if sd.refuse_open:
            raise FakePortAudioError("Device unavailable")
        self.kwargs = kwargs
        self.rate = kwargs["samplerate"]
        self.active = self.stopped = self.aborted = self.closed = False
        sd.streams.append(self)

    def start(self) -> None:
        self.active = True

    def stop(self) -> None:
        self.active, self.stopped = False, True

    def abort(self) -> None:
        self.active, self.aborted = False, True

    def close(self) -> None:
        self.closed = True


class FakeSounddevice:
    """The module: its devices (the last one is the default both ways) and the streams opened on them."""

    PortAudioError = FakePortAudioError

    def __init__(self, devices: list[dict[str, Any]]) -> None:
        self.devices = devices
        self.default = SimpleNamespace(device=(len(devices) - 1, len(devices) - 1))
        self.streams: list[Any] = []
        self.refuse_open = False
        self.refused_rates: set[int] = set()

    def query_devices(self) -> list[dict[str, Any]]:
        return self.devices

    def query_hostapis(self) -> list[dict[str, Any]]:
        return [{"name": "ALSA"}]

    def check_settings(self, **kwargs: Any) -> None:
        if kwargs["samplerate"] in self.refused_rates:
            raise FakePortAudioError("Invalid sample rate")
