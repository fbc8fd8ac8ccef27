"""An AudioOut that writes what each room heard, and when, to one WAV file per room."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from moderator.audio.clip import AudioError, Clip
from moderator.game.state import ROOMS


class TimelineOut:
    """Collects clips at their clock times; ``close()`` writes ``roomA.wav``, ``roomB.wav`` and ``timeline.json``.

    Sample 0 of both files is clock time ``t0``, so something played at clock
    time t is heard at second ``t - t0`` of the file.
    """

    def __init__(self, directory: Path, *, t0: float, rate: int = 22050) -> None:
        self.directory = Path(directory)
        self.t0 = t0
        self.rate = rate
        self.end = t0
        self.placed: list[tuple[str, float, Clip]] = []
        self._given: list[Clip] = []  # per placed clip, the object given to play (what stop names)

    def play(self, room: str, clip: Clip, at: float) -> None:
        """Place ``clip`` in ``room`` at clock time ``at``."""
        self._given.append(clip)
        clip = clip.resample(self.rate)
        self.placed.append((room, at, clip))
        self.end = max(self.end, at + clip.duration)

    def stop(self, room: str, clip: Clip, at: float) -> None:
        """Cut ``clip`` short in ``room`` from clock time ``at``: what was placed after that is not heard."""
        for i, (where, start, placed) in enumerate(self.placed):
            if where == room and self._given[i] is clip and start + placed.duration > at:
                keep = max(0, round((at - start) * self.rate))
                self.placed[i] = (where, start, Clip(placed.samples[:keep], self.rate))

    def extend(self, t: float) -> None:
        """Make the files last at least until clock time ``t`` (the game's last event)."""
        self.end = max(self.end, t)

    def mix(self) -> dict[str, np.ndarray]:
        """Each room's timeline as float32 samples."""
        n = round((self.end - self.t0) * self.rate) + 1
        rooms = {r: np.zeros(n, dtype=np.float32) for r in ROOMS}
        for room, at, clip in self.placed:
            start = round((at - self.t0) * self.rate)
            seg = clip.samples[max(0, -start) : max(0, n - start)]  # a clip a hair before t0 loses that hair
            start = max(0, start)
            rooms[room][start : start + len(seg)] += seg
        return rooms

    def close(self) -> None:
        """Write the files.

        Raises:
            AudioError: one of them cannot be written.
        """
        meta = {"t0": self.t0, "rate": self.rate, "seconds": self.end - self.t0,
                "files": {r: f"room{r}.wav" for r in ROOMS}}
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            for room, samples in self.mix().items():
                Clip(samples, self.rate).write(self.directory / f"room{room}.wav")
            (self.directory / "timeline.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            raise AudioError(f"cannot write the audio in {self.directory}: {exc.strerror or exc}") from exc
