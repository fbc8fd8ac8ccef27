"""A stand-in for pyttsx3, imported by the speech process (``moderator.adapters.tts.Pyttsx3Process``) when a test
puts this folder first on its PYTHONPATH. What it does is chosen by the environment variable ``FAKE_PYTTSX3``:

- ``init-error:MESSAGE``: ``init`` raises RuntimeError(MESSAGE), as pyttsx3 does without libespeak-ng;
- ``oserror:MESSAGE``: ``init`` raises OSError(MESSAGE);
- ``init-hang``: ``init`` never returns;
- ``crash-once:PATH``: the first render of "crash" (while PATH does not exist) ends the process with a segmentation
  fault, as libespeak-ng once did; every other render writes a tone;
- ``hang``: a render of "hang" does not return until ``RELEASE`` is set (an hour at most); every other render writes
  a tone;
- ``chatty``: every render also prints to stdout, through Python and straight to file descriptor 1 (as the real
  driver's "Audio saved" and a native library's messages would);
- anything else: every render writes a tone.

The tone is 0.1 s per word, so that a longer text gives a longer clip.
"""

from __future__ import annotations

import math
import os
import signal
import struct
import threading
import time
import wave
from pathlib import Path
from typing import Any

MODE = os.environ.get("FAKE_PYTTSX3", "")
RELEASE = threading.Event()
"""Ends a hung render (a test in the same process sets it, so the engine's lock is given back)."""


class _Voice:
    id = "gmw/en-us"
    languages = ("en-us",)


class _Engine:
    def __init__(self) -> None:
        self._job: tuple[str, str] | None = None

    def getProperty(self, name: str) -> Any:
        assert name == "voices"
        return [_Voice()]

    def connect(self, topic: str, cb: Any) -> dict:
        return {"topic": topic, "cb": cb}

    def disconnect(self, token: dict) -> None:
        pass

    def setProperty(self, name: str, value: Any) -> None:
        pass

    def save_to_file(self, text: str, path: str) -> None:
        self._job = (text, path)

    def runAndWait(self) -> None:
        assert self._job is not None
        text, path = self._job
        if MODE.startswith("crash-once:") and text == "crash":
            marker = Path(MODE.split(":", 1)[1])
            if not marker.exists():
                marker.touch()
                os.kill(os.getpid(), signal.SIGSEGV)
        if MODE == "hang" and text == "hang":
            RELEASE.wait(timeout=3600)
        if MODE == "chatty":
            print(f"Audio saved to {path}", flush=True)
            os.write(1, b"\x80\x04native library message\n")
        frames = int(0.1 * len(text.split()) * 22050)
        with wave.open(path, "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(22050)
            out.writeframes(b"".join(struct.pack("<h", int(8000 * math.sin(i / 10))) for i in range(frames)))


def init(driver: str | None = None) -> _Engine:
    kind, _, message = MODE.partition(":")
    if kind == "init-error":
        raise RuntimeError(message)
    if kind == "oserror":
        raise OSError(message)
    if kind == "init-hang":
        time.sleep(3600)
    return _Engine()
