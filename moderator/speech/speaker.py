"""The Announcer that speaks: each phrase becomes a clip, queued per room, played through an AudioOut."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass

from moderator.audio.clip import Clip
from moderator.game.state import ROOMS
from moderator.ports import AudioOut, Clock

#: Pause between two utterances in the same room, in seconds.
GAP = 0.25
#: Keys announced with the "time's up" sound cue before the words.
CUED = {"time.over"}


def time_up_cue(rate: int = 22050) -> Clip:
    """A distinct, unmistakable cue: three rising two-tone beeps."""
    beeps = [Clip.tone((f, f * 1.5), 0.18, rate, level=0.6) for f in (660, 780, 880)]
    gap = Clip.silence(0.07, rate)
    return beeps[0].then(gap, beeps[1], gap, beeps[2], Clip.silence(0.2, rate))


@dataclass
class _Pending:
    rooms: tuple[str, ...]
    key: str
    future: Future[Clip]


class Speaker:
    """Speaks announcements; implements the ``Announcer`` port.

    ``lookup(text)`` returns an already rendered clip or None; ``render(text)``
    renders one. With a ``background`` executor, text that is not rendered yet
    is synthesized there and played by ``pump()`` when ready, so a slow
    synthesis never holds up the game loop (and the time warnings, which are
    pre-rendered, are never late because of it). Without one (simulations on
    a virtual clock) rendering is synchronous.
    """

    def __init__(
        self,
        *,
        clock: Clock,
        out: AudioOut,
        lookup: Callable[[str], Clip | None],
        render: Callable[[str], Clip],
        background: Executor | None = None,
        cue: Clip | None = None,
    ) -> None:
        self.clock = clock
        self.out = out
        self.lookup = lookup
        self.render = render
        self.background = background
        self.cue = cue if cue is not None else time_up_cue()
        self.busy_until = {r: float("-inf") for r in ROOMS}
        self.pending: list[_Pending] = []
        #: (room, key, requested time, start time, duration) of every utterance, for benchmarks and tests.
        self.log: list[tuple[str, str, float, float, float]] = []

    def announce(self, room: str, key: str, text: str) -> None:
        """Say ``text`` in room A, B or both, after whatever that room is already saying."""
        rooms = ROOMS if room == "both" else (room,)
        clip = self.lookup(text)
        if clip is None and self.background is not None:
            self.pending.append(_Pending(rooms, key, self.background.submit(self.render, text)))
            return
        self._queue(rooms, key, clip if clip is not None else self.render(text), self.clock.now())

    def pump(self) -> None:
        """Play the announcements whose background rendering has finished (in the order they were made)."""
        while self.pending and self.pending[0].future.done():
            item = self.pending.pop(0)
            self._queue(item.rooms, item.key, item.future.result(), self.clock.now())

    def _queue(self, rooms: tuple[str, ...], key: str, clip: Clip, now: float) -> None:
        if key in CUED:
            clip = self.cue.then(clip)
        for room in rooms:
            start = max(now, self.busy_until[room])
            self.busy_until[room] = start + clip.duration + GAP
            self.out.play(room, clip, start)
            self.log.append((room, key, now, start, clip.duration))
