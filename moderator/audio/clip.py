"""A mono audio clip (float32 samples in [-1, 1]) with its sample rate, and WAV I/O."""

from __future__ import annotations

import io
import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from moderator.audio.pcm import from_pcm16, to_pcm16
from moderator.errors import ModeratorError


class AudioError(ModeratorError):
    """An audio file cannot be read or written."""


@dataclass(frozen=True, eq=False)
class Clip:
    """Mono float32 samples and a rate."""

    samples: np.ndarray
    rate: int

    @property
    def duration(self) -> float:
        """Length in seconds."""
        return len(self.samples) / self.rate

    @classmethod
    def silence(cls, seconds: float, rate: int) -> Clip:
        """``seconds`` of silence."""
        return cls(np.zeros(round(seconds * rate), dtype=np.float32), rate)

    @classmethod
    def tone(cls, freqs: tuple[float, ...], seconds: float, rate: int, level: float = 0.5) -> Clip:
        """A chord of sine tones with 10 ms fades (used for cues such as "time's up")."""
        t = np.arange(round(seconds * rate)) / rate
        wave_ = sum(np.sin(2 * np.pi * f * t) for f in freqs) / max(1, len(freqs))
        fade = min(len(t) // 2, round(0.01 * rate))
        env = np.ones_like(t)
        if fade:
            env[:fade] = np.linspace(0, 1, fade)
            env[-fade:] = np.linspace(1, 0, fade)
        return cls((level * wave_ * env).astype(np.float32), rate)

    def resample(self, rate: int) -> Clip:
        """The clip at another rate (linear interpolation: plenty for speech prompts)."""
        if rate == self.rate or not len(self.samples):
            return Clip(self.samples, rate) if rate != self.rate else self
        n = round(len(self.samples) * rate / self.rate)
        x = np.linspace(0, len(self.samples) - 1, n)
        return Clip(np.interp(x, np.arange(len(self.samples)), self.samples).astype(np.float32), rate)

    def then(self, *others: Clip) -> Clip:
        """This clip followed by others (resampled to this rate)."""
        parts = [self.samples] + [o.resample(self.rate).samples for o in others]
        return Clip(np.concatenate(parts).astype(np.float32), self.rate)

    def to_wav_bytes(self) -> bytes:
        """16-bit PCM WAV."""
        buf = io.BytesIO()
        with wave.open(buf, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(self.rate)
            w.writeframes(to_pcm16(self.samples))
        return buf.getvalue()

    def write(self, path: Path) -> None:
        """Write a 16-bit mono WAV file."""
        try:
            Path(path).write_bytes(self.to_wav_bytes())
        except OSError as exc:
            raise AudioError(f"cannot write {path}: {exc.strerror or exc}") from exc

    @classmethod
    def read(cls, path: Path) -> Clip:
        """Read a PCM WAV file (8/16/32-bit, any channels: mixed down to mono)."""
        try:
            with wave.open(str(path), "rb") as w:
                channels, width, rate = w.getnchannels(), w.getsampwidth(), w.getframerate()
                raw = w.readframes(w.getnframes())
        except (OSError, EOFError, wave.Error) as exc:
            raise AudioError(f"cannot read WAV {path}: {exc}") from exc
        if width == 1:
            data = (np.frombuffer(raw, np.uint8).astype(np.float32) - 128) / 128
        elif width == 2:
            data = from_pcm16(raw)
        elif width == 4:
            data = np.frombuffer(raw, "<i4").astype(np.float32) / 2**31
        else:
            raise AudioError(f"cannot read WAV {path}: {8 * width}-bit samples are not supported")
        if channels > 1:
            data = data.reshape(-1, channels).mean(axis=1)
        return cls(data.astype(np.float32), rate)


def rms_db(samples: np.ndarray) -> float:
    """Root-mean-square level in dBFS (-inf for digital silence)."""
    if not len(samples):
        return float("-inf")
    rms = float(np.sqrt(np.mean(np.square(samples, dtype=np.float64))))
    return 20 * np.log10(rms) if rms > 0 else float("-inf")
