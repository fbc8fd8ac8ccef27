"""Fakes for the ports, for tests that must not touch engines, devices or the clock."""

from __future__ import annotations

import hashlib
import threading

import numpy as np

from moderator.audio.clip import Clip
from moderator.errors import SynthesisError
from moderator.ports import MicChunk
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
        self.stopped: list[tuple[str, Clip, float]] = []
        self.closed = False

    def play(self, room: str, clip: Clip, at: float) -> None:
        """Record the request."""
        self.played.append((room, clip, at))

    def stop(self, room: str, clip: Clip, at: float) -> None:
        """Record the cut."""
        self.stopped.append((room, clip, at))

    def close(self) -> None:
        """Mark closed."""
        self.closed = True


class FakeAudioIn:
    """An AudioIn whose microphones hear what the test ``push``es; ``fail`` marks one failed.

    It honours the AudioIn contract (chunks in order, gapless stamps per microphone, nothing after
    ``close``), so the contract suite in ``tests/test_sound_in.py`` runs against it too.
    """

    def __init__(self, mics: tuple[str | None, ...] = ("A", "B")) -> None:
        self.mics = mics
        self.failed: set[str | None] = set()
        self.closed = False
        self._chunks: list[MicChunk] = []
        self._next: dict[str | None, float] = {}

    def push(self, mic: str | None, samples: np.ndarray, rate: int = 16000, t: float | None = None,
             chunk: float = 0.1) -> None:
        """Let ``mic`` hear ``samples`` from clock time ``t`` (default: right after what it heard last)."""
        if mic not in self.mics:
            raise ValueError(f"no microphone {mic!r}; this fake has {self.mics}")
        start = self._next.get(mic, 0.0) if t is None else t
        step = max(1, round(chunk * rate))
        for i in range(0, len(samples), step):
            piece = np.asarray(samples[i : i + step], dtype=np.float32)
            self._chunks.append(MicChunk(mic, piece, rate, start + i / rate))
        self._next[mic] = start + len(samples) / rate

    def read(self, timeout: float = 0.0) -> list[MicChunk]:
        """Everything pushed since the last call (never waits: a test pushes first)."""
        if self.closed:
            return []
        chunks, self._chunks = self._chunks, []
        return chunks

    @property
    def failed_mics(self) -> set[str | None]:
        """The microphones marked failed."""
        return set(self.failed)

    def fail(self, mic: str | None) -> None:
        """Mark ``mic`` failed (it hears nothing more until ``recover``)."""
        self.failed.add(mic)

    def recover(self, mic: str | None) -> None:
        """Mark ``mic`` working again."""
        self.failed.discard(mic)

    def close(self) -> None:
        """Later reads return nothing."""
        self.closed = True
