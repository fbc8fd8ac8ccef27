"""Mixing speech with noise at a chosen signal-to-noise ratio."""

from __future__ import annotations

import numpy as np

#: The peak-frame SNR of the speech-to-intent benchmark: the loudest 2048-sample frame of each.
PEAK_FRAME = 2048

#: A quiet microphone's own noise floor, in dBFS. No microphone delivers digital silence, and pocketsphinx hears
#: synthetic speech padded with it worse than over this floor (``benchmarks.acceptance``, "clean + hiss").
MIC_HISS_DBFS = -60.0


def power(samples: np.ndarray) -> float:
    """Mean power."""
    return float(np.mean(np.square(samples, dtype=np.float64))) if len(samples) else 0.0


def frame_powers(samples: np.ndarray, frame: int) -> np.ndarray:
    """The mean power of each whole ``frame``-sample frame (float64; a shorter tail is left out)."""
    n = len(samples) // frame
    frames = np.asarray(samples[: n * frame]).reshape(n, frame).astype(np.float64)
    return np.mean(np.square(frames), axis=1)


def peak_frame_power(samples: np.ndarray, frame: int = PEAK_FRAME) -> float:
    """The power of the loudest frame."""
    if len(samples) < frame:
        return power(samples)
    return float(np.max(frame_powers(samples, frame)))


def snr_db(speech: np.ndarray, noise: np.ndarray, *, peak: bool = False) -> float:
    """SNR in dB, by average power or (``peak``) by peak-frame power."""
    measure = peak_frame_power if peak else power
    return 10 * np.log10(measure(speech) / max(measure(noise), 1e-20))


def noise_for(noise: np.ndarray, length: int, rng: np.random.Generator) -> np.ndarray:
    """A stretch of ``length`` samples of the noise, from a random offset, looped if needed."""
    if len(noise) == 0:
        return np.zeros(length, np.float32)
    reps = int(np.ceil((length + len(noise)) / len(noise)))
    looped = np.tile(noise, reps)
    start = int(rng.integers(0, len(noise)))
    return looped[start : start + length].astype(np.float32)


def noise_gain(speech: np.ndarray, noise: np.ndarray, snr: float, *, peak: bool = False) -> float:
    """The gain on the noise that gives speech over it the given SNR."""
    return 10 ** ((snr_db(speech, noise, peak=peak) - snr) / 20)


def scale_noise(speech: np.ndarray, noise: np.ndarray, snr: float, *, peak: bool = False) -> np.ndarray:
    """The noise scaled so that speech over it has the given SNR."""
    return (noise * noise_gain(speech, noise, snr, peak=peak)).astype(np.float32)


def hiss(length: int, dbfs: float, rng: np.random.Generator) -> np.ndarray:
    """``length`` samples of white noise at ``dbfs`` (its RMS in dB of full scale): a microphone's floor."""
    return (rng.standard_normal(length) * 10 ** (dbfs / 20)).astype(np.float32)


def steady_noise(length: int, colour: str, rng: np.random.Generator) -> np.ndarray:
    """``length`` samples of steady noise of unit RMS: "white" (a microphone's hiss), "pink" (power falling 3 dB an
    octave: air conditioning, a fan) or "brown" (6 dB an octave: a rumble), shaped in the frequency domain."""
    slopes = {"white": 0.0, "pink": 0.5, "brown": 1.0}
    if colour not in slopes:
        raise ValueError(f"no such noise colour: {colour!r} (one of {', '.join(slopes)})")
    spectrum = np.fft.rfft(rng.standard_normal(length))
    spectrum /= np.maximum(np.arange(len(spectrum)), 1) ** slopes[colour]
    noise = np.fft.irfft(spectrum, length)
    return (noise / max(float(np.sqrt(np.mean(noise**2))), 1e-12)).astype(np.float32)
