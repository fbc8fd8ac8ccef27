"""The Announcer that speaks: each phrase becomes a clip, queued per room in the order it was announced,
played through an AudioOut, reported back once it has been heard, and cut short on barge-in."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Collection
from concurrent.futures import Executor, Future
from dataclasses import dataclass

import numpy as np

from moderator.audio.clip import Clip
from moderator.audio.mix import power
from moderator.game.state import ROOMS
from moderator.ports import AudioOut, Clock
from moderator.voice.spoken import Playing, Spoken, ceil_ms

#: Pause between two utterances in the same room, in seconds (a countdown number and its gap fit in 1 s).
GAP = 0.15
#: Keys announced with the "time's up" sound cue before the words.
CUED = {"time.over"}
#: Timed phrases that are said on time or not at all: "30 seconds left" said 3 s late is wrong.
PUNCTUAL = frozenset({"time.warning", "time.count"})
#: How late (seconds) a PUNCTUAL phrase may still start; later, it is dropped.
STALE_AFTER = 1.0
#: An untimed phrase longer than this (seconds) is interruptible: barge-in may cut it (the briefing, the
#: help list, a long refusal, the reveal and the result). Short ones are over before a command is parsed.
LONG = 2.5
#: Never cut, however long: they tell everyone what happens now, and are not said again.
UNCUTTABLE = frozenset({"round.start", "round.start_untimed", "exchange", "exchange.player"})
#: Phrases that start the clock a timed phrase counts from: no timed phrase goes ahead of them
#: ("Round 2. 35 seconds." must come before "30 seconds left").
ANCHORS = frozenset({"round.start", "round.start_untimed", "resumed", "resumed.untimed"})
#: Phrases that hold only in the context (``Speaker.context``, the phase) they were said in: dropped if it
#: changed before they could start. The time left, after the round ended; the commands that fit; why a
#: command was refused ("refuse." ends with a dot: every key it begins); "go and meet" once they have met.
CONTEXTUAL = frozenset({"time.left", "time.paused", "time.untimed", "time.up", "time.none", "help",
                        "refuse.", "parley", "parley.last"})


#: The cue's beeps carry a faint broadband hiss this many dB under them. Pure tones excite an echo
#: canceller in two frequencies only, and its filter adapts there at the expense of everything else: a
#: player who spoke 1 s after the beeps, over "Time's up!", scored 0.50 (0.72 with no beeps at all) and the
#: 8- and 13-player games talked over at 0 dB each lost that command; with the hiss, both games are right
#: (at -30 dB the 13-player game still lost it).
CUE_HISS_DB = -20.0


def time_up_cue(rate: int = 22050) -> Clip:
    """A distinct, unmistakable cue: three rising two-tone beeps (with a faint hiss: ``CUE_HISS_DB``)."""
    beeps = [Clip.tone((f, f * 1.5), 0.18, rate, level=0.6) for f in (660, 780, 880)]
    gap = Clip.silence(0.07, rate)
    tones = beeps[0].then(gap, beeps[1], gap, beeps[2]).samples
    level = math.sqrt(power(beeps[0].samples))
    hiss = np.random.default_rng(0).normal(0.0, level * 10 ** (CUE_HISS_DB / 20), len(tones))
    return Clip((tones + hiss).astype(np.float32), rate).then(Clip.silence(0.2, rate))


@dataclass(eq=False)
class _Phrase:
    """One announcement; a phrase for both rooms is one object in both queues."""

    key: str
    at: float
    """When it was wanted: the timer's time, or the moment it was announced."""
    timed: bool
    context: object
    clip: Clip | None = None
    future: Future[Clip] | None = None
    """Set while it renders in the background: a placeholder its queue waits for."""

    @property
    def interruptible(self) -> bool:
        return (not self.timed and self.key not in UNCUTTABLE and self.clip is not None
                and self.clip.duration > LONG)


@dataclass(eq=False)
class _Handed:
    """A phrase given to the output in one room, not reported yet."""

    phrase: _Phrase
    room: str
    clip: Clip
    start: float
    end: float
    entry: tuple[str, str, float, float, float]

    def view(self) -> Playing:
        p = self.phrase
        return Playing(p.key, self.start, self.end, self.clip, p.timed, p.interruptible)


class Speaker:
    """Speaks announcements; implements the ``Announcer`` port.

    Each room has its own queue, so both rooms can speak at once while a room never talks over itself.
    Order in a room is causal: a phrase never plays before one announced earlier in that room, even if
    the earlier one is still rendering (its placeholder holds the queue). The one exception is a timer's
    phrase (``at`` given): it goes ahead of untimed phrases still waiting, after the timed ones due before
    it, and never ahead of an ANCHORS phrase. A reply starts at once when its room is quiet; a timer's
    phrase due while a reply plays follows it immediately. Following, not mixing: two voices at once are
    understood by nobody; a late time warning or countdown number (PUNCTUAL, more than STALE_AFTER late)
    is dropped instead, and "time's up" is always said.

    A phrase is handed to the AudioOut only when it starts within ``horizon`` seconds, so what is still
    waiting can be overtaken, re-checked or dropped: ``pump()`` must be called as time passes (the live
    loop does it; a simulation calls it as its virtual clock moves, at ``next_wake()``). Handing over is
    also where CONTEXTUAL answers are dropped when ``context()`` is no longer what it was when they were
    asked. ``horizon=inf`` hands everything over at once.

    Once a phrase is over (the clock passed its end, checked in ``pump()``) or cut, ``on_spoken`` gets a
    ``Spoken``; ``flush()`` hands over and reports the rest. ``cut(room)`` is barge-in.

    ``lookup(text)`` returns an already rendered clip or None; ``render(text)`` renders one. With a
    ``background`` executor, text that is not rendered yet is synthesized there, so a slow synthesis
    never holds up the game loop (the timers' phrases are pre-rendered). Without one, rendering is
    synchronous. A background render that fails is dropped and reported through ``warn`` (without it,
    the error is raised from ``pump``).
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
        context: Callable[[], object] | None = None,
        contextual: Collection[str] = CONTEXTUAL,
        on_spoken: Callable[[Spoken], None] | None = None,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.clock = clock
        self.out = out
        self.lookup = lookup
        self.render = render
        self.background = background
        self.cue = cue if cue is not None else time_up_cue()
        self.horizon = horizon
        self.context = context
        self.contextual = frozenset(contextual)
        self.on_spoken = on_spoken
        self.warn = warn
        #: Per room, until when it is talking: the end of the last phrase handed to the output.
        self.busy_until = {r: float("-inf") for r in ROOMS}
        self.queues: dict[str, list[_Phrase]] = {r: [] for r in ROOMS}
        self.handed: dict[str, list[_Handed]] = {r: [] for r in ROOMS}
        self._recent: dict[str, deque[Playing]] = {r: deque(maxlen=16) for r in ROOMS}
        #: (room, key, wanted start, start, duration) of every utterance handed over, for benchmarks and tests.
        self.log: list[tuple[str, str, float, float, float]] = []
        #: (room, key, why) of every phrase dropped unsaid: "stale", "context", "cut", "failed".
        self.dropped: list[tuple[str, str, str]] = []

    # --- the Announcer port ------------------------------------------------------------------

    def announce(self, room: str, key: str, text: str, at: float | None = None) -> None:
        """Say ``text`` in room A, B or both at clock time ``at`` (a timer's phrase; None: now)."""
        rooms = ROOMS if room == "both" else (room,)
        phrase = _Phrase(key, self.clock.now() if at is None else at, at is not None,
                         self.context() if self.context is not None else None)
        clip = self.lookup(text)
        if clip is None and self.background is not None:
            phrase.future = self.background.submit(self.render, text)
        else:
            phrase.clip = self._dress(key, clip if clip is not None else self.render(text))
        for where in rooms:
            self._enqueue(where, phrase)
        self._dispatch()

    # --- driving it ----------------------------------------------------------------------------

    def pump(self) -> None:
        """Hand each room's next phrases to the output when they are due; report those that are over."""
        self._dispatch()
        now = self.clock.now()
        over = [h for r in ROOMS for h in self.handed[r] if h.end <= now]
        for h in sorted(over, key=lambda h: (h.end, h.room)):
            self.handed[h.room].remove(h)
            self._report(h, cut=False)

    def next_wake(self) -> float | None:
        """The next clock time at which ``pump()`` has something to do (a simulation moves its clock there)."""
        times = [h.end for r in ROOMS for h in self.handed[r]]
        for room, queue in self.queues.items():
            if queue and (queue[0].future is None or queue[0].future.done()):
                times.append(max(queue[0].at, self.busy_until[room] + GAP) - self.horizon)
        return min(times) if times else None

    def flush(self) -> None:
        """The end of the game: hand everything over now, in order, and report it all as spoken."""
        self.horizon = float("inf")
        for room, queue in self.queues.items():
            for phrase in [p for p in queue if p.future is not None and not p.future.done()]:
                queue.remove(phrase)
                self.dropped.append((room, phrase.key, "failed"))
        self._dispatch()
        rest = [h for r in ROOMS for h in self.handed[r]]
        for h in sorted(rest, key=lambda h: (h.end, h.room)):
            self.handed[h.room].remove(h)
            self._report(h, cut=False)

    # --- what the listening loop needs -----------------------------------------------------------

    def cut(self, room: str) -> bool:
        """Barge-in: stop the interruptible phrase playing now in ``room`` (True if there was one), and drop
        the room's interruptible phrases not started yet. Timed phrases and short ones are never cut."""
        now = self.clock.now()
        stopped = False
        for h in list(self.handed[room]):
            if not h.phrase.interruptible or h.end <= now:
                continue
            self.out.stop(room, h.clip, now)
            self.handed[room].remove(h)
            if h.start <= now:
                h.end, stopped = now, True
                self._report(h, cut=True)
            else:  # handed ahead, never heard
                self._unlog(h)
                self.dropped.append((room, h.phrase.key, "cut"))
        for phrase in [p for p in self.queues[room] if p.interruptible]:
            self.queues[room].remove(phrase)
            self.dropped.append((room, phrase.key, "cut"))
        self._recall(room)  # what was handed to follow the cut phrase may now start at once
        self.busy_until[room] = max([h.end for h in self.handed[room]], default=min(self.busy_until[room], now))
        self._dispatch()
        return stopped

    def playing(self, room: str, t: float | None = None) -> Playing | None:
        """The phrase sounding in ``room`` at clock time ``t`` (default now), if any (recent past included)."""
        t = self.clock.now() if t is None else t
        for h in self.handed[room]:
            if h.start <= t < h.end:
                return h.view()
        return next((p for p in reversed(self._recent[room]) if p.start <= t < p.end), None)

    def idle_at(self, room: str = "both") -> float:
        """When ``room`` (or both) will have said everything announced so far, so that something new may
        start: exactly now when it is quiet already; else rounded up to the millisecond; ``inf`` while a
        phrase of theirs is still rendering (its length is not known yet: ask again later)."""
        now = self.clock.now()
        latest = now
        for r in ROOMS if room == "both" else (room,):
            t = max(self.busy_until[r] + GAP, now)
            for phrase in self.queues[r]:
                if phrase.clip is None:
                    return float("inf")
                t = max(t, phrase.at) + phrase.clip.duration + GAP
            latest = max(latest, t)
        return now if latest <= now else ceil_ms(latest)

    def measure(self, key: str, text: str) -> float:
        """How long saying ``text`` (phrase ``key``) keeps a quiet room busy, gap included, rounded up to
        the millisecond. Renders it if needed (it is then in the cache for when it is said)."""
        clip = self.lookup(text)
        clip = self._dress(key, clip if clip is not None else self.render(text))
        return ceil_ms(clip.duration + GAP)

    @property
    def idle(self) -> bool:
        """Nothing is rendering or waiting to be handed to the output."""
        return not any(self.queues.values())

    @property
    def rendering(self) -> bool:
        """A phrase is still being synthesized in the background."""
        return any(p.future is not None for q in self.queues.values() for p in q)

    # --- inside --------------------------------------------------------------------------------

    def _dress(self, key: str, clip: Clip) -> Clip:
        return self.cue.then(clip) if key in CUED else clip

    def _enqueue(self, room: str, phrase: _Phrase) -> None:
        queue = self.queues[room]
        if not phrase.timed:
            queue.append(phrase)
            return
        back = self._recall(room)
        if back:
            self.busy_until[room] = max([h.end for h in self.handed[room]], default=min(back) - GAP)
        # After the timed phrases due no later and after any anchor; ahead of the untimed ones waiting.
        pos = 0
        for i, q in enumerate(queue):
            if (q.timed and q.at <= phrase.at) or (not q.timed and q.key in ANCHORS):
                pos = i + 1
        queue.insert(pos, phrase)

    def _recall(self, room: str) -> list[float]:
        """Take back the untimed phrases handed ahead (within the horizon) that have not started, to the front
        of the queue: a timed phrase arriving now goes before them, as it would had they still been waiting.
        Returns the start times they had. The caller sets ``busy_until``."""
        now = self.clock.now()
        back = [h for h in self.handed[room]
                if h.start > now and not h.phrase.timed and h.phrase.key not in ANCHORS]
        for h in back:
            self.out.stop(room, h.clip, now)
            self.handed[room].remove(h)
            self._unlog(h)
        self.queues[room][:0] = [h.phrase for h in back]
        return [h.start for h in back]

    def _dispatch(self) -> None:
        now = self.clock.now()
        for room, queue in self.queues.items():
            while queue:
                phrase = queue[0]
                if phrase.future is not None:
                    if not phrase.future.done():
                        break  # the queue waits for it: causal order
                    self._resolve(phrase)
                if phrase.clip is None:  # its render failed (for both rooms, if it was for both)
                    queue.pop(0)
                    self.dropped.append((room, phrase.key, "failed"))
                    continue
                start = max(phrase.at, self.busy_until[room] + GAP, now)
                if start > now + self.horizon:
                    break
                queue.pop(0)
                why = self._stale(phrase, start)
                if why is not None:
                    self.dropped.append((room, phrase.key, why))
                    continue
                self._hand(room, phrase, start)

    def _resolve(self, phrase: _Phrase) -> None:
        """A background render finished: keep its clip, or drop the phrase if it failed (in every room)."""
        future, phrase.future = phrase.future, None
        assert future is not None
        try:
            phrase.clip = self._dress(phrase.key, future.result())
        except Exception as exc:
            if self.warn is None:
                raise
            self.warn(f"could not say {phrase.key!r}: {exc}")

    def _stale(self, phrase: _Phrase, start: float) -> str | None:
        if phrase.timed and phrase.key in PUNCTUAL and start - phrase.at > STALE_AFTER:
            return "stale"
        if self.context is not None and self._contextual(phrase.key) and self.context() != phrase.context:
            return "context"
        return None

    def _contextual(self, key: str) -> bool:
        return key in self.contextual or any(key.startswith(p) for p in self.contextual if p.endswith("."))

    def _hand(self, room: str, phrase: _Phrase, start: float) -> None:
        assert phrase.clip is not None
        clip = Clip(phrase.clip.samples, phrase.clip.rate)  # its own object: what stop() will name
        entry = (room, phrase.key, phrase.at, start, clip.duration)
        self.out.play(room, clip, start)
        self.log.append(entry)
        self.handed[room].append(_Handed(phrase, room, clip, start, start + clip.duration, entry))
        self.busy_until[room] = max(self.busy_until[room], start + clip.duration)

    def _unlog(self, h: _Handed) -> None:
        for i in range(len(self.log) - 1, -1, -1):
            if self.log[i] is h.entry:
                del self.log[i]
                return

    def _report(self, h: _Handed, *, cut: bool) -> None:
        self._recent[h.room].append(h.view())
        if self.on_spoken is not None:
            self.on_spoken(Spoken(h.room, h.phrase.key, h.start, h.end, cut))
