"""Fakes for the ports, for tests that must not touch engines, devices or the clock."""

from __future__ import annotations

import hashlib
import threading

from moderator.audio.clip import Clip
from moderator.errors import SynthesisError
from moderator.settings import VoiceSettings


class FakeSynth:
    """A Synthesizer that "speaks" a tone: pitch from the text and voice, length from the text and rate.

    It records every render in ``calls`` and honours the Synthesizer contract (unknown voices,
    closing), so the contract suite in ``tests/test_tts.py`` runs against it too.
    """

    name = "fake"
    VOICES = ("en-us", "en", "it", "fr-fr", "fr", "cmn", "de", "es")
    SECONDS_PER_CHAR = 0.06
    """At 170 words per minute; faster rates give proportionally shorter clips."""

    def __init__(self, rate: int = 22050) -> None:
        self.rate = rate
        self.calls: list[tuple[str, VoiceSettings]] = []
        self.closed = False
        self._lock = threading.Lock()

    def render(self, text: str, voice: VoiceSettings) -> Clip:
        """A deterministic tone for ``text``."""
        if self.closed:
            raise SynthesisError("fake synthesizer is closed")
        if not text.strip():
            raise SynthesisError("nothing to say: the text is empty")
        if voice.name.lower() not in self.VOICES:
            raise SynthesisError(f"fake has no voice {voice.name!r}; try one of: {', '.join(self.VOICES)}")
        with self._lock:
            self.calls.append((text, voice))
        digest = hashlib.sha256(f"{voice.name}\n{text}".encode()).digest()
        freq = 150.0 + digest[0] * 2
        seconds = 0.2 + self.SECONDS_PER_CHAR * len(text) * 170 / voice.rate
        return Clip.tone((freq,), seconds, self.rate, level=0.5 * voice.volume)

    def close(self) -> None:
        """Later renders fail."""
        self.closed = True

    def texts(self) -> list[str]:
        """The texts rendered so far, in order."""
        with self._lock:
            return [text for text, _ in self.calls]


class RecordingOut:
    """An AudioOut that records what it was asked to play: (room, clip, at)."""

    def __init__(self) -> None:
        self.played: list[tuple[str, Clip, float]] = []
        self.closed = False

    def play(self, room: str, clip: Clip, at: float) -> None:
        """Record the request."""
        self.played.append((room, clip, at))

    def close(self) -> None:
        """Mark closed."""
        self.closed = True
