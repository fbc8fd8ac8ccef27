"""Scripted voice input: a scenario's lines spoken by synthetic players (with noise) into the listening loop."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from moderator.adapters.clock import VirtualClock
from moderator.audio.clip import Clip
from moderator.audio.endpoint import RATE
from moderator.audio.mix import noise_for, scale_noise
from moderator.game.engine import Engine
from moderator.loop import Listener
from moderator.scenario import Step
from moderator.simulate import advance

#: Real-time-sized pieces, as a microphone delivers them.
CHUNK = 0.1
LEAD_IN = 0.5
TAIL = 1.0


class VoiceDelivery:
    """Speaks each step into its room's microphone, chunk by chunk, on the virtual clock."""

    def __init__(
        self,
        listener: Listener,
        speak: Callable[[str], Clip],
        *,
        typed: bool = False,
        noise: np.ndarray | None = None,
        snr: float | None = None,
        peak: bool = True,
        seed: int = 0,
    ) -> None:
        self.listener = listener
        self.speak = speak
        self.typed = typed
        self.noise = noise
        self.snr = snr
        self.peak = peak
        self.rng = np.random.default_rng(seed)

    def __call__(self, engine: Engine, clock: VirtualClock, step: Step) -> None:
        """Deliver one step: typed (text mode), or as audio (voice mode, and always for ``audio:`` steps)."""
        if step.audio is None and self.typed:
            if step.say is not None:
                engine.handle_text(step.say, step.room)
            return
        clip = Clip.read(step.audio) if step.audio is not None else self.speak(step.say or "")
        speech = clip.resample(RATE).samples
        signal = np.concatenate([np.zeros(round(LEAD_IN * RATE), np.float32), speech,
                                 np.zeros(round(TAIL * RATE), np.float32)])
        if self.noise is not None and self.snr is not None:
            bed = noise_for(self.noise, len(signal), self.rng)
            signal = signal + scale_noise(speech, bed, self.snr, peak=self.peak)
        step_len = round(CHUNK * RATE)
        start = clock.now()
        for i in range(0, len(signal), step_len):
            t = start + i / RATE
            advance(engine, clock, t)
            self.listener.feed(step.room, signal[i : i + step_len], RATE, t)
        advance(engine, clock, start + len(signal) / RATE)


#: Party talk with no command in it: the raw material of babble noise (and of false-accept tests).
CHATTER = (
    "did anyone see where I left my drink",
    "I think Bob is lying about his card",
    "this music is really great",
    "can you pass the chips please",
    "who wants another slice of pizza",
    "I am definitely on the blue team",
    "let me see your card first",
    "no way, show me the colour",
    "we should send him over there",
    "I love this game so much",
)
BABBLE_VOICES = ("flite:slt", "flite:rms", "flite:awb", "flite:kal")


def make_babble(
    seconds: float,
    speak: Callable[[str, str], Clip],
    *,
    talkers: int = 6,
    seed: int = 0,
    voices: Sequence[str] = BABBLE_VOICES,
    lines: Sequence[str] = CHATTER,
    spread_db: float = 0.0,
) -> np.ndarray:
    """Multi-talker party babble: ``talkers`` voices each chatting without pause, overlapped, at 16 kHz.

    Each line is said by its talker's voice (``voices`` in turn); with ``spread_db``, each line's level is
    drawn from that many dB below full, as some talkers stand nearer than others.
    """
    rng = np.random.default_rng(seed)
    n = round(seconds * RATE)
    mix = np.zeros(n, np.float32)
    for talker in range(talkers):
        voice = voices[talker % len(voices)]
        parts: list[np.ndarray] = [np.zeros(int(rng.integers(0, RATE)), np.float32)]
        length = len(parts[0])
        while length < n:
            line = speak(lines[int(rng.integers(len(lines)))], voice).resample(RATE).samples
            gap = np.zeros(int(rng.integers(RATE // 10, RATE // 2)), np.float32)
            if spread_db:
                level = 10 ** (rng.uniform(-spread_db, 0) / 20)
                line = (line / max(float(np.max(np.abs(line))), 1e-9) * level).astype(np.float32)
            parts += [line, gap]
            length += len(line) + len(gap)
        mix += np.concatenate(parts)[:n]
    peak = float(np.max(np.abs(mix))) or 1.0
    return (mix / peak * 0.5).astype(np.float32)
