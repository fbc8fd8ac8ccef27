"""The set-up chirp: how late the moderator's own voice reaches each microphone, measured before the game."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from moderator.audio.clip import Clip
from moderator.audio.delay import chirp, estimate_delay
from moderator.audio.echo import EchoPath, rooms_heard
from moderator.audio.reference import RATE, PlayedAudio
from moderator.ports import AudioIn, Clock

#: A chirp is found when its correlation peak stands this far over the rest (``estimate_delay``).
FOUND = 8.0
#: The chirp starts this long after it is handed over (the output's buffer), and the microphone is read
#: until this long after it ends (the longest delay looked for, and the microphone's own buffer).
LEAD, LISTEN = 0.2, 0.6


@dataclass(frozen=True)
class Measured:
    """What the chirp found for one microphone."""

    mic: str | None
    delay: float | None
    """Seconds from the moderator's schedule to the microphone; None when the chirp was not heard."""
    confidence: float


def measure_delays(played: PlayedAudio, mics: AudioIn, path: EchoPath, clock: Clock,
                   wait: Callable[[float], None]) -> list[Measured]:
    """Play a short chirp into each room in turn and find it in the microphones that hear that room.

    A chirp found sets that microphone's delay in ``path``; one not found leaves the delay at 0 (the
    canceller then has to find the echo on its own, within its filter) and is reported. ``wait`` sleeps
    (the live clock) while the chirp plays.
    """
    sweep = Clip(chirp(RATE, seconds=0.3, level=0.3), RATE)
    found: dict[str | None, list[tuple[float, float]]] = {mic: [] for mic in mics.mics}
    for room in ("A", "B"):
        hearing = [mic for mic in mics.mics if room in rooms_heard(mic)]
        if not hearing:
            continue
        mics.read()  # drop what was heard before
        start = clock.now() + LEAD
        played.play(room, sweep, start)
        wait(LEAD + sweep.duration + LISTEN)
        chunks: dict[str | None, list[tuple[float, np.ndarray]]] = {mic: [] for mic in hearing}
        for chunk in mics.read():
            if chunk.mic in chunks:
                chunks[chunk.mic].append((chunk.t, Clip(chunk.samples, chunk.rate).resample(RATE).samples))
        for mic, pieces in chunks.items():
            if not pieces:
                continue
            t0 = pieces[0][0]
            heard = np.concatenate([samples for _, samples in pieces])
            reference = played.reference((room,), t0, len(heard))
            delay, confidence = estimate_delay(reference, heard, RATE)
            found[mic].append((delay, confidence))
    out = []
    for mic, estimates in found.items():
        sure = [(d, c) for d, c in estimates if c >= FOUND]
        if sure:
            delay = min(d for d, _ in sure)  # the nearer speaker: the reference must never come late
            path.set_delay(mic, delay)
            out.append(Measured(mic, delay, max(c for _, c in sure)))
        else:
            out.append(Measured(mic, None, max((c for _, c in estimates), default=0.0)))
    return out
