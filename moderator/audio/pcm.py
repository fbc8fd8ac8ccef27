"""Float samples in [-1, 1] to 16-bit PCM and back: the one place the scale and the clipping are decided."""

from __future__ import annotations

import numpy as np


def to_int16(samples: np.ndarray, *, rounded: bool = False) -> np.ndarray:
    """16-bit samples (little-endian ``int16``) for float samples.

    Args:
        samples: float samples, nominally in [-1, 1]; computed in their own dtype (float32 stays float32).
        rounded: False (WAV files, the VAD, the recognizers): clipped to [-1, 1], scaled by 32767 and
            truncated toward zero, so that full scale is +-32767 either way. True (the echo canceller): scaled
            by 32768, rounded to the nearest and clipped to [-32768, 32767], so that ``from_pcm16`` gives back
            any sample already on the 16-bit grid exactly.
    """
    x = np.asarray(samples)
    if rounded:
        return np.clip(np.round(x * 32768), -32768, 32767).astype("<i2")
    return (np.clip(x, -1, 1) * 32767).astype("<i2")


def to_pcm16(samples: np.ndarray, *, rounded: bool = False) -> bytes:
    """16-bit little-endian PCM bytes for float samples (``rounded``: see ``to_int16``)."""
    return to_int16(samples, rounded=rounded).tobytes()


def from_pcm16(data: bytes | bytearray | memoryview | np.ndarray) -> np.ndarray:
    """Float32 samples in [-1, 1) for 16-bit little-endian PCM bytes (or an ``int16`` array): divided by 32768.

    An odd trailing byte is an error (``np.frombuffer``); cut it off first where a file may have one.
    """
    pcm = data if isinstance(data, np.ndarray) else np.frombuffer(data, "<i2")
    return pcm.astype(np.float32) / 32768
