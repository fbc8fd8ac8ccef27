"""A live game: typed lines, microphone audio and clock ticks in, on one thread; saved after every change."""

from __future__ import annotations

import json
import re
import sys
import traceback
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from moderator.errors import ModeratorError
from moderator.game.engine import Engine
from moderator.journal import Journal, Saved

if TYPE_CHECKING:
    from moderator.loop import Listener
    from moderator.ports import AudioIn, MicChunk

_PREFIX = re.compile(r"^\s*(?:room\s+)?([ab])\s*[:>]\s*(.*)$", re.IGNORECASE)


def split_room(line: str) -> tuple[str | None, str]:
    """ "A: hostages Bob" → ("A", "hostages Bob"); no prefix → (None, line): the room follows from the names."""
    m = _PREFIX.match(line)
    if m:
        return m.group(1).upper(), m.group(2).strip()
    return None, line.strip()


class EventLog:
    """Writes events to a JSON Lines file, one flushed line each (a kill loses nothing written).

    ``mode`` "a" continues a log (a resumed game); "w" starts a new one (a simulation).
    """

    def __init__(self, path: Path, mode: str = "a") -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh: TextIO = self.path.open(mode, encoding="utf-8")
        except OSError as exc:
            raise ModeratorError(f"cannot write the event log {path}: {exc.strerror or exc}") from exc

    def __call__(self, event: dict[str, Any]) -> None:
        self._fh.write(json.dumps(event, ensure_ascii=False) + "\n")
        self._fh.flush()

    def close(self) -> None:
        """Close the file."""
        self._fh.close()


class PlaySession:
    """Feeds lines, microphone audio and ticks to the engine and journals the game after every change.

    The engine is not thread-safe: microphones only queue audio on their own threads, and ``tick``
    hands it to the listening loop here, on the thread that also handles typed lines.
    """

    def __init__(
        self,
        engine: Engine,
        journal: Journal,
        *,
        epoch: float,
        lang: str,
        events: Path | None,
        rebuild: Callable[[Saved], Engine],
        err: TextIO = sys.stderr,
    ) -> None:
        self.engine = engine
        self.journal = journal
        self.epoch = epoch
        self.lang = lang
        self.events = events
        self._rebuild = rebuild
        self._err = err
        self._saved_version = -1
        #: Called after every tick (the speaker plays what finished rendering).
        self.on_tick: list[Callable[[], None]] = []
        #: What the host must be shown besides the rooms (a failed speaker, ...).
        self.alerts: Callable[[], list[str]] = list
        #: The microphones and the listening loop their audio goes to (None: keyboard only).
        self.mics: AudioIn | None = None
        self._listener: Listener | None = None

    @property
    def listener(self) -> Listener | None:
        """The listening loop the microphones' audio goes to (None: keyboard only)."""
        return self._listener

    @listener.setter
    def listener(self, listener: Listener | None) -> None:
        self._listener = listener
        if listener is not None:
            listener.before_recognizing = self._ahead_of_recognition

    @property
    def finished(self) -> bool:
        """True once the result is announced."""
        return self.engine.in_state("result")

    def feed(self, line: str) -> None:
        """Handle one typed line ("A: ..." or "B: ..." names the room's microphone)."""
        room, text = split_room(line)
        if text:
            self._guard(lambda: self.engine.handle_text(text, room))

    #: Timers are handled this far ahead, so that their audio can be scheduled to start exactly on time.
    LEAD = 0.15
    #: Recognizing an utterance holds this thread (pocketsphinx keeps the GIL) for up to about this long,
    #: so the timers due meanwhile are handled, and their audio scheduled, before it starts.
    RECOGNITION_LEAD = 1.0

    def _ahead_of_recognition(self) -> None:
        self._guard(lambda: self.engine.tick(self.LEAD + self.RECOGNITION_LEAD))
        for hook in self.on_tick:
            hook()

    def tick(self) -> None:
        """Fire due timers (and those due within LEAD seconds)."""
        self._guard(lambda: self.engine.tick(self.LEAD))
        self.hear()
        for hook in self.on_tick:
            hook()

    def hear(self) -> None:
        """Hand what the microphones heard since the last call to the listening loop."""
        if self.mics is None or self.listener is None:
            return
        for chunk in self.mics.read():
            try:
                self._guard(partial(self._feed, chunk))
            except ModeratorError as exc:  # e.g. the recognizer failed: the keyboard still works
                where = "the shared microphone" if chunk.mic is None else f"room {chunk.mic}'s microphone"
                print(f"moderator: what {where} heard was lost: {exc}", file=self._err)

    def _feed(self, chunk: MicChunk) -> None:
        if self.listener is not None:
            self.listener.feed(chunk.mic, chunk.samples, chunk.rate, chunk.t)

    def wait_time(self, longest: float) -> float:
        """How long the loop may wait before the next timer is due (at most ``longest``)."""
        due = self.engine.next_due()
        if due is None:
            return longest
        return min(longest, max(0.0, due - self.LEAD - self.engine.clock.now()))

    def save(self) -> None:
        """Journal the game now if it changed since the last save."""
        if self.engine.version != self._saved_version:
            self.journal.save(self.engine.snapshot(), epoch=self.epoch, saved_at=self.engine.clock.now(),
                              lang=self.lang, events=str(self.events) if self.events else None)
            self._saved_version = self.engine.version

    def _guard(self, step: Callable[[], object]) -> None:
        """Run a step; a bug in it must not lose the game, so fall back to the last save."""
        try:
            step()
        except ModeratorError:
            raise
        except Exception:
            print("moderator: internal error; the last command was ignored and the game goes on:",
                  file=self._err)
            traceback.print_exc(file=self._err)
            self.engine = self._rebuild(self.journal.load())
            self._saved_version = self.engine.version
            if self.listener is not None:
                self.listener.engine = self.engine
            return
        self.save()

