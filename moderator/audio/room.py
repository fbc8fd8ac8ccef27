"""A simulated room for scripted games: the moderator's own voice reaching a microphone, delayed and
reverberant, at a chosen signal-to-echo ratio."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from moderator.audio.echo import rooms_heard
from moderator.audio.mix import peak_frame_power
from moderator.audio.reference import RATE, PlayedAudio

#: Reverberation time of the synthetic rooms: a furnished living room.
RT60 = 0.3
#: The moderator's voice in a microphone, against its level as rendered (a speaker set at a comfortable
#: volume, a metre or two from the microphone).
ECHO_GAIN = 0.25
#: Direct-to-reverberant ratio in dB: a microphone a metre or two from the speaker.
DRR = 0.0
#: Range of the speaker-to-microphone delay, in seconds (sound over 2-4 m, plus a device's buffers).
DELAYS = (0.02, 0.06)


def impulse_response(delay: float, *, rt60: float = RT60, drr: float = DRR, seed: int = 0) -> np.ndarray:
    """A simple synthetic room impulse response at 16 kHz: the direct path after ``delay`` seconds, then
    exponentially decaying noise (60 dB down after ``rt60``) whose energy is ``drr`` dB under the direct
    sound's (the direct-to-reverberant ratio)."""
    rng = np.random.default_rng(seed)
    n_delay = round(delay * RATE)
    t = np.arange(1, round(rt60 * RATE)) / RATE
    tail = rng.normal(0.0, 1.0, len(t)) * 10 ** (-3 * t / rt60)
    tail *= np.sqrt(10 ** (-drr / 10) / np.sum(tail**2))
    out = np.concatenate([np.zeros(n_delay), [1.0], tail])
    return (out / np.sqrt(np.sum(out**2))).astype(np.float32)


@dataclass
class EchoRoom:
    """What each microphone hears of the moderator: ``played`` through a room's impulse response
    (``impulse_response``: RT60 0.3 s, direct-to-reverberant ratio 0 dB).

    The moderator's voice reaches the microphone at a fixed level (``ECHO_GAIN``), as a speaker's volume is
    set once; the players are as loud as ``ser`` says: the signal-to-echo ratio in dB (peak-frame power,
    as the suite's SNR) of a player's command against the moderator's voice in the microphone (0 dB: as
    loud as the moderator, -6 dB: half as loud), applied by scaling each command (``speech_gain``). Each
    microphone has its own delay, drawn from ``DELAYS`` with ``seed``.
    """

    played: PlayedAudio
    ser: float
    seed: int = 0
    responses: dict[str | None, np.ndarray] = field(default_factory=dict)
    delays: dict[str | None, float] = field(default_factory=dict)
    _powers: list[float] = field(default_factory=list, repr=False)
    _seen: list[Any] = field(default_factory=list, repr=False)

    def _response(self, mic: str | None) -> np.ndarray:
        if mic not in self.responses:
            rng = np.random.default_rng([self.seed, {None: 0, "A": 1, "B": 2}[mic]])
            self.delays[mic] = float(rng.uniform(*DELAYS))
            self.responses[mic] = impulse_response(self.delays[mic], seed=int(rng.integers(1 << 31)))
        return self.responses[mic]

    def echo(self, mic: str | None, t: float, n: int) -> np.ndarray:
        """The moderator's voice in ``mic`` over ``n`` samples from clock time ``t``."""
        h = self._response(mic)
        history = len(h) - 1
        ref = self.played.reference(rooms_heard(mic), t - history / RATE, n + history)
        if not ref.any():
            return np.zeros(n, np.float32)
        size = 1 << int(np.ceil(np.log2(len(ref) + len(h))))
        full = np.fft.irfft(np.fft.rfft(ref, size) * np.fft.rfft(h, size), size)
        return (ECHO_GAIN * full[history : history + n]).astype(np.float32)

    def speech_gain(self, speech: np.ndarray) -> float:
        """How much to scale a player's ``speech`` for it to stand ``ser`` dB over the moderator's voice in
        the microphone (the moderator's peak-frame power: the median of its phrases so far); 1 before it
        has said anything. Never so much that the speech would clip."""
        moderator, player = self._moderator_power(), peak_frame_power(speech)
        if moderator <= 0 or player <= 0:
            return 1.0
        gain = float(np.sqrt(ECHO_GAIN**2 * moderator * 10 ** (self.ser / 10) / player))
        return min(gain, 0.99 / max(float(np.max(np.abs(speech))), 1e-9))

    def _moderator_power(self) -> float:
        """The peak-frame power of the moderator's phrases (the median of those heard so far)."""
        for placed in self.played.history():
            if placed.peak_power is None:
                placed.peak_power = peak_frame_power(placed.samples)
            if not any(placed is seen for seen in self._seen):
                self._seen = [*self._seen[-255:], placed]  # more than ``keep`` seconds of phrases
                if placed.peak_power > 0:  # a test signal (the chirp) is marked 0: not the speaking level
                    self._powers.append(placed.peak_power)
        return float(np.median(self._powers)) if self._powers else 0.0
