"""A fake of the input side of ``sounddevice``: devices, and InputStreams whose callbacks a test drives."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np


class FakePortAudioError(Exception):
    pass


class FakeInStream:
    """An InputStream whose callback the test drives, block by block, with chosen ADC times."""

    def __init__(self, sd: FakeInSD, **kwargs: Any) -> None:
        if sd.refuse_open:
            raise FakePortAudioError("Device unavailable")
        self.kwargs = kwargs
        self.rate, self.blocksize = kwargs["samplerate"], kwargs["blocksize"]
        self.time = 500.0  # the stream clock; unrelated to the game clock on purpose
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

    def deliver(self, samples: np.ndarray, *, age: float | None = None, overflow: bool = False) -> None:
        """One block whose first sample reached the ADC ``age`` s before the callback (default: its length)."""
        frames = len(samples)
        age = frames / self.rate if age is None else age
        self.time += frames / self.rate
        info = SimpleNamespace(inputBufferAdcTime=self.time - age, currentTime=self.time)
        indata = np.asarray(samples, np.float32).reshape(-1, 1)
        self.kwargs["callback"](indata, frames, info, SimpleNamespace(input_overflow=overflow))


class FakeInSD:
    """Just the parts of ``sounddevice`` the microphone adapter uses."""

    PortAudioError = FakePortAudioError

    def __init__(self) -> None:
        def dev(name: str, outputs: int, inputs: int, rate: float = 44100.0) -> dict[str, Any]:
            return {"name": name, "hostapi": 0, "max_input_channels": inputs, "max_output_channels": outputs,
                    "default_samplerate": rate}

        self.devices = [
            dev("pulse", 32, 32),
            dev("roomA", 2, 0),
            dev("USB Mic", 0, 1),
            dev("Webcam Mic", 0, 2, 48000.0),
            dev("default", 32, 32),
        ]
        self.default = SimpleNamespace(device=(4, 4))
        self.streams: list[FakeInStream] = []
        self.refuse_open = False
        self.refused_rates: set[int] = set()

    def query_devices(self) -> list[dict[str, Any]]:
        return self.devices

    def query_hostapis(self) -> list[dict[str, Any]]:
        return [{"name": "ALSA"}]

    def InputStream(self, **kwargs: Any) -> FakeInStream:  # mirrors sounddevice's name
        return FakeInStream(self, **kwargs)

    def check_input_settings(self, **kwargs: Any) -> None:
        if kwargs["samplerate"] in self.refused_rates:
            raise FakePortAudioError("Invalid sample rate")


class FakeTime:
    """``time.monotonic`` under the test's control (the adapter's stall and retry timers)."""

    def __init__(self) -> None:
        self.now = 100.0

    def monotonic(self) -> float:
        return self.now
