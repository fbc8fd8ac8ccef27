"""Scripted voice input: a scenario's lines spoken by synthetic players (with noise) into the listening loop."""

from __future__ import annotations

from collections.abc import Callable

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
