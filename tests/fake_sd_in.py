"""A fake of the input side of ``sounddevice``: devices, and InputStreams whose callbacks a test drives."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
from fake_sounddevice import FakePortAudioStream, FakeSounddevice, device


class FakeInStream(FakePortAudioStream):
    """An InputStream whose callback the test drives, block by block, with chosen ADC times."""

    def __init__(self, sd: FakeInSD, **kwargs: Any) -> None:
        super().__init__(sd, **kwargs)
        self.blocksize = kwargs["blocksize"]
        self.time = 500.0  # the stream clock; unrelated to the game clock on purpose

    def deliver(self, samples: np.ndarray, *, age: float | None = None, overflow: bool = False) -> None:
        """One block whose first sample reached the ADC ``age`` s before the callback (default: its length)."""
        frames = len(samples)
        age = frames / self.rate if age is None else age
        self.time += frames / self.rate
        info = SimpleNamespace(inputBufferAdcTime=self.time - age, currentTime=self.time)
        indata = np.asarray(samples, np.float32).reshape(-1, 1)
        self.kwargs["callback"](indata, frames, info, SimpleNamespace(input_overflow=overflow))


class FakeInSD(FakeSounddevice):
    """Just the parts of ``sounddevice`` the microphone adapter uses."""

    def __init__(self) -> None:
        super().__init__([
            device("pulse", 32, 32),
            device("roomA", 2, 0),
            device("USB Mic", 0, 1),
            device("Webcam Mic", 0, 2, 48000.0),
            device("default", 32, 32),
        ])

    def InputStream(self, **kwargs: Any) -> FakeInStream:  # mirrors sounddevice's name
        return FakeInStream(self, **kwargs)

    check_input_settings = FakeSounddevice.check_settings


class FakeTime:
    """``time.monotonic`` under the test's control (the adapter's stall and retry timers)."""

    def __init__(self) -> None:
        self.now = 100.0

    def monotonic(self) -> float:
        return self.now
