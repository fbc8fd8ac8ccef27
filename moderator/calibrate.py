"""The set-up chirp: how late the moderator's own voice reaches each microphone, measured before the game."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from moderator.audio.clip import Clip
from moderator.audio.delay import chirp, estimate_delay
from moderator.audio.echo import EchoPath, rooms_heard
from moderator.audio.reference import RATE, PlayedAudio
from moderator.audio.resample import StreamResampler
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


def sweep() -> Clip:
    """The set-up chirp: 0.3 s from 300 Hz to 6 kHz, at a comfortable level."""
    return Clip(chirp(RATE, seconds=0.3, level=0.3), RATE)


def locate(played: PlayedAudio, room: str, t0: float, heard: np.ndarray) -> tuple[float, float]:
    """(delay, confidence) of what ``room``'s speaker played in ``heard``: 16 kHz audio from clock time ``t0``."""
    return estimate_delay(played.reference((room,), t0, len(heard)), heard, RATE)


def settle(path: EchoPath, estimates: dict[str | None, list[tuple[float, float]]]) -> list[Measured]:
    """Give each microphone the delay of the nearest speaker it surely heard (the reference must never come
    late); a microphone that heard no chirp keeps its delay (0: the canceller finds the echo on its own,
    within its filter)."""
    out = []
    for mic, found in estimates.items():
        sure = [(d, c) for d, c in found if c >= FOUND]
        if sure:
            delay = min(d for d, _ in sure)
            path.set_delay(mic, delay)
            out.append(Measured(mic, delay, max(c for _, c in sure)))
        else:
            out.append(Measured(mic, None, max((c for _, c in found), default=0.0)))
    return out


def measure_delays(played: PlayedAudio, mics: AudioIn, path: EchoPath, clock: Clock,
                   wait: Callable[[float], None]) -> list[Measured]:
    """Play the set-up chirp into each room in turn and find it in the microphones that hear that room
    (``settle`` sets their delays in ``path``). ``wait`` sleeps (the live clock) while the chirp plays."""
    chirp_clip = sweep()
    found: dict[str | None, list[tuple[float, float]]] = {mic: [] for mic in mics.mics}
    resamplers = {mic: StreamResampler(RATE) for mic in mics.mics}  # a device's rate, as one stream each
    for room in ("A", "B"):
        hearing = [mic for mic in mics.mics if room in rooms_heard(mic)]
        if not hearing:
            continue
        mics.read()  # drop what was heard before
        played.play(room, chirp_clip, clock.now() + LEAD)
        wait(LEAD + chirp_clip.duration + LISTEN)
        chunks: dict[str | None, list[tuple[float, np.ndarray]]] = {mic: [] for mic in hearing}
        for mic in hearing:
            resamplers[mic].reset()  # what was dropped above is a gap: the chirp's recording is a stream of its own
        for chunk in mics.read():
            if chunk.mic in chunks:
                samples, t = resamplers[chunk.mic](chunk.samples, chunk.rate, chunk.t)
                if len(samples):
                    chunks[chunk.mic].append((t, samples))
        for mic, pieces in chunks.items():
            if pieces:
                found[mic].append(locate(played, room, pieces[0][0], np.concatenate([s for _, s in pieces])))
    return settle(path, found)
