"""The Announcer that speaks: each phrase becomes a clip, queued per room, played through an AudioOut."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass

from moderator.audio.clip import Clip
from moderator.game.state import ROOMS
from moderator.ports import AudioOut, Clock

#: Pause between two utterances in the same room, in seconds (a countdown number and its gap fit in 1 s).
GAP = 0.15
#: Keys announced with the "time's up" sound cue before the words.
CUED = {"time.over"}


def time_up_cue(rate: int = 22050) -> Clip:
    """A distinct, unmistakable cue: three rising two-tone beeps."""
    beeps = [Clip.tone((f, f * 1.5), 0.18, rate, level=0.6) for f in (660, 780, 880)]
    gap = Clip.silence(0.07, rate)
    return beeps[0].then(gap, beeps[1], gap, beeps[2], Clip.silence(0.2, rate))


@dataclass
class _Item:
    key: str
    clip: Clip
    at: float
    urgent: bool
    """A timer's phrase: it goes ahead of waiting untimed ones."""


@dataclass
class _Pending:
    rooms: tuple[str, ...]
    key: str
    future: Future[Clip]


class Speaker:
    """Speaks announcements; implements the ``Announcer`` port.

    Each room has its own queue, so both rooms can speak at once while a room never talks over itself.
    A phrase is handed to the AudioOut only when the room's current phrase ends within ``horizon``
    seconds, so a timer's phrase (time warnings, "time's up") goes ahead of any untimed phrases still
    waiting and starts on time; and, knowing when the next timer is due (``next_timed``), an untimed
    phrase that would still be playing then waits until after it. ``pump()`` must then be called often
    (the game loop does); a simulation on a virtual clock uses ``horizon=inf`` and hands everything
    over at once.

    ``lookup(text)`` returns an already rendered clip or None; ``render(text)`` renders one. With a
    ``background`` executor, text that is not rendered yet is synthesized there and queued by
    ``pump()`` when ready, so a slow synthesis never holds up the game loop (and the timers' phrases,
    which are pre-rendered, are never late because of it). Without one, rendering is synchronous.
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
        horizon: float = float("inf"),
        next_timed: Callable[[], float | None] | None = None,
    ) -> None:
        self.clock = clock
        self.out = out
        self.lookup = lookup
        self.render = render
        self.background = background
        self.cue = cue if cue is not None else time_up_cue()
        self.horizon = horizon
        self.next_timed = next_timed
        self.busy_until = {r: float("-inf") for r in ROOMS}
        self.queues: dict[str, list[_Item]] = {r: [] for r in ROOMS}
        self.pending: list[_Pending] = []
        #: (room, key, wanted start, start after queueing, duration) of every utterance, for benchmarks and tests.
        self.log: list[tuple[str, str, float, float, float]] = []

    def announce(self, room: str, key: str, text: str, at: float | None = None) -> None:
        """Say ``text`` in room A, B or both at clock time ``at`` (a timer's phrase; None: now)."""
        rooms = ROOMS if room == "both" else (room,)
        clip = self.lookup(text)
        if clip is None and self.background is not None:
            self.pending.append(_Pending(rooms, key, self.background.submit(self.render, text)))
        else:
            self._enqueue(rooms, key, clip if clip is not None else self.render(text), at)
        self.pump()

    def pump(self) -> None:
        """Queue what finished rendering, and hand each room's next phrase to the output when it is due."""
        while self.pending and self.pending[0].future.done():
            item = self.pending.pop(0)
            self._enqueue(item.rooms, item.key, item.future.result(), None)
        now = self.clock.now()
        timed = self.next_timed() if self.next_timed is not None and self.horizon != float("inf") else None
        for room, queue in self.queues.items():
            while queue and self.busy_until[room] <= now + self.horizon:
                item = queue[0]
                start = max(item.at, self.busy_until[room], now)
                if not item.urgent and timed is not None and start + item.clip.duration + GAP > timed > now:
                    break  # it would still be talking when the next timer speaks: say it after
                queue.pop(0)
                self.busy_until[room] = start + item.clip.duration + GAP
                self.out.play(room, item.clip, start)
                self.log.append((room, item.key, item.at, start, item.clip.duration))

    @property
    def idle(self) -> bool:
        """Nothing is rendering or waiting to be handed to the output."""
        return not self.pending and not any(self.queues.values())

    def _enqueue(self, rooms: tuple[str, ...], key: str, clip: Clip, at: float | None) -> None:
        if key in CUED:
            clip = self.cue.then(clip)
        item = _Item(key, clip, self.clock.now() if at is None else at, urgent=at is not None)
        for room in rooms:
            queue = self.queues[room]
            if item.urgent:
                # After other timed phrases due earlier, ahead of every untimed one.
                pos = next((i for i, q in enumerate(queue) if not q.urgent or q.at > item.at), len(queue))
                queue.insert(pos, item)
            else:
                queue.append(item)
