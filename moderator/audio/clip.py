"""A mono audio clip (float32 samples in [-1, 1]) with its sample rate, and WAV I/O."""

from __future__ import annotations

import io
import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from moderator.audio.pcm import from_pcm16, to_pcm16
from moderator.errors import ModeratorError
from moderator.inputs import reading
from moderator.limits import WAV_MAX_BYTES, WAV_MAX_CHANNELS, WAV_MAX_RATE, WAV_MAX_SECONDS, WAV_MIN_RATE


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
        """Read a PCM WAV file (8/16/32-bit, up to ``WAV_MAX_CHANNELS`` channels: mixed down to mono).

        Raises:
            AudioError: the file cannot be read, is not such a WAV, or is beyond the limits (see ``wav_header``).
        """
        with reading(path, AudioError):
            return cls._read(path)

    @classmethod
    def _read(cls, path: Path) -> Clip:
        try:
            with wave.open(str(path), "rb") as w:
                channels, width, rate, frames = _checked(path, w)
                raw = w.readframes(frames)
        except (OSError, EOFError, wave.Error, RuntimeError) as exc:  # RuntimeError: a chunk overruns its RIFF
            raise AudioError(f"cannot read WAV {path}: {_why(path, exc)}") from exc
        raw = raw[: len(raw) - len(raw) % (channels * width)]  # a frame cut short at the end
        if width == 1:
            data = (np.frombuffer(raw, np.uint8).astype(np.float32) - 128) / 128
        elif width == 2:
            data = from_pcm16(raw)
        else:
            data = np.frombuffer(raw, "<i4").astype(np.float32) / 2**31
        if channels > 1:
            data = data.reshape(-1, channels).mean(axis=1)
        return cls(data.astype(np.float32), rate)


def wav_header(path: Path) -> tuple[int, int, int, int]:
    """``(channels, bytes per sample, rate, frames)`` of a WAV file that ``Clip.read`` can read, from its header.

    Raises:
        AudioError: the file cannot be read, is not a PCM WAV of 8, 16 or 32-bit samples, or is beyond the
            limits: a rate from ``WAV_MIN_RATE`` to ``WAV_MAX_RATE``, at most ``WAV_MAX_SECONDS``,
            ``WAV_MAX_CHANNELS`` and ``WAV_MAX_BYTES``.
    """
    try:
        with wave.open(str(path), "rb") as w:
            return _checked(path, w)
    except (OSError, EOFError, wave.Error, RuntimeError) as exc:
        raise AudioError(f"cannot read WAV {path}: {_why(path, exc)}") from exc


def _checked(path: Path, w: wave.Wave_read) -> tuple[int, int, int, int]:
    channels, width, rate, frames = w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes()
    # A recorder writing to a pipe cannot know the length, and leaves the largest in the header.
    frames = min(frames, Path(path).stat().st_size // (channels * width))

    def refuse(why: str) -> AudioError:
        return AudioError(f"cannot read WAV {path}: {why}")

    if width not in (1, 2, 4):
        raise refuse(f"{8 * width}-bit samples are not supported (8, 16 or 32-bit PCM)")
    if not WAV_MIN_RATE <= rate <= WAV_MAX_RATE:
        raise refuse(f"its header gives a sample rate of {rate} Hz; moderator reads {WAV_MIN_RATE} to "
                     f"{WAV_MAX_RATE} Hz")
    if channels > WAV_MAX_CHANNELS:
        raise refuse(f"{channels} channels; moderator reads at most {WAV_MAX_CHANNELS}")
    if frames / rate > WAV_MAX_SECONDS or frames * channels * width > WAV_MAX_BYTES:
        raise refuse(f"it holds {frames / rate:.0f} s of audio ({frames * channels * width} bytes); "
                     f"moderator reads at most {WAV_MAX_SECONDS} s and {WAV_MAX_BYTES // 2**20} MiB")
    return channels, width, rate, frames


def _why(path: Path, exc: BaseException) -> str:
    """What is wrong with a WAV file the ``wave`` module refused, in words (its own message may be empty)."""
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    try:
        size = Path(path).stat().st_size
    except OSError:
        size = None
    if size == 0:
        return "the file is empty"
    if isinstance(exc, EOFError):
        return f"the file is cut short ({size} bytes): its header is incomplete"
    if isinstance(exc, RuntimeError):
        return "not a readable WAV file (a chunk is larger than the file says it holds)"
    message = str(exc)
    if message.startswith("unknown format"):
        return f"{message}: only uncompressed PCM WAV is supported"
    if "RIFF" in message or "WAVE" in message:
        return f"not a WAV file ({message})"
    return f"not a readable WAV file ({message})" if message else "not a readable WAV file"


def rms_db(samples: np.ndarray) -> float:
    """Root-mean-square level in dBFS (-inf for digital silence)."""
    if not len(samples):
        return float("-inf")
    rms = float(np.sqrt(np.mean(np.square(samples, dtype=np.float64))))
    return 20 * np.log10(rms) if rms > 0 else float("-inf")
