"""The one owner of a live game: its engine, and every part that acts on it, ticked in a fixed order."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TextIO

from moderator.errors import ModeratorError
from moderator.game.engine import Engine
from moderator.journal import Journal, Saved
from moderator.play import split_room
from moderator.ports import Clock
from moderator.settings import LiveTiming

if TYPE_CHECKING:
    from moderator.loop import Listener
    from moderator.ports import AudioIn, MicChunk
    from moderator.speaking import Voice

#: Where an event goes: the terminal, the JSON Lines log (``moderator.play.EventLog``), a test's list.
Sink = Callable[[dict[str, Any]], None]


class LiveGame:
    """Runs a live game on one thread, and journals it after every change.

    ``tick()`` runs one pass, always in this order:

    1. **microphones**: what they heard since the last tick is read (they only queue audio on their threads);
    2. **timers**: the engine fires those due within ``timing.lead`` (their audio starts on their exact time);
    3. **recognition**: the audio goes to the listening loop (endpointing, the recognizer, re-parsing), and
    4. **engine**: each command it understood is handed to the engine;
    5. **speech**: the voice hands what is due to the speakers and reports what was said.

    Typed lines (``feed``) are step 4 too, handled as the loop reads them, between ticks. Decoding an utterance
    holds the thread, so right before one, steps 2 and 5 run again with ``timing.recognition_lead`` more lead.
    How long the loop may sleep follows from the next timer's time, as a value (``wait_time``).

    The engine is not thread-safe and has one owner. A bug in a step must not lose the game: the engine is
    rebuilt from the last save (``rebuild(saved, clock)``, on this game's one clock) and ``adopt`` hands it to
    every part that holds one (the event sinks, the voice's announcer, phase and ``spoken`` events, the
    listening loop), in that one place; the replaced engine's events go nowhere from then on.
    """

    #: The default timing's lead.
    LEAD: ClassVar[float] = LiveTiming.lead

    def __init__(
        self,
        engine: Engine,
        journal: Journal,
        *,
        epoch: float,
        lang: str,
        events: Path | None,
        rebuild: Callable[[Saved, Clock], Engine],
        sinks: Sequence[Sink] = (),
        voice: Voice | None = None,
        mics: AudioIn | None = None,
        listener: Listener | None = None,
        timing: LiveTiming | None = None,
        extra_alerts: Callable[[], list[str]] = list,
        err: TextIO = sys.stderr,
    ) -> None:
        self.clock = engine.clock
        self.journal = journal
        self.epoch = epoch
        self.lang = lang
        self.events = events
        self.timing = timing or LiveTiming()
        self.sinks = list(sinks)
        self.voice = voice
        #: The microphones and the listening loop their audio goes to (None: keyboard only).
        self.mics = mics
        self.listener = listener
        if listener is not None:
            listener.before_recognizing = self._ahead_of_recognition
        self._rebuild = rebuild
        self._extra_alerts = extra_alerts
        self._err = err
        self._saved_version = -1
        self.engine = engine
        self.adopt(engine)

    def adopt(self, engine: Engine) -> None:
        """Make ``engine`` the game: every part that answers from the engine answers from this one now."""
        if engine.clock is not self.clock:
            raise ValueError("a live game has one clock: the engine must run on it")
        self.engine = engine
        for sink in self.sinks:
            engine.subscribe(partial(self._publish, engine, sink))
        if self.voice is not None:
            self.voice.attach(engine)
        if self.listener is not None:
            self.listener.engine = engine

    def _publish(self, source: Engine, sink: Sink, event: dict[str, Any]) -> None:
        if source is self.engine:  # a replaced engine is dead: nothing it still says is the game's
            sink(event)

    @property
    def finished(self) -> bool:
        """True once the result is announced."""
        return self.engine.in_state("result")

    # --- the tick ---------------------------------------------------------------------------------

    def tick(self) -> None:
        """One pass of the live loop, in the order the class describes."""
        chunks = self._microphones()
        self._timers(self.timing.lead)
        self._recognition(chunks)
        self._speech()

    def feed(self, line: str) -> None:
        """Handle one typed line ("A: ..." or "B: ..." names the room's microphone)."""
        room, text = split_room(line)
        if text:
            self._guard(lambda: self.engine.handle_text(text, room))

    def wait_time(self, longest: float | None = None) -> float:
        """How long the loop may wait before the next tick (at most ``longest``, default ``timing.poll``)."""
        return self.timing.wait(self.engine.next_due(), self.clock.now(), longest)

    def _microphones(self) -> list[MicChunk]:
        return self.mics.read() if self.mics is not None and self.listener is not None else []

    def _timers(self, lead: float) -> None:
        self._guard(lambda: self.engine.tick(lead))

    def _recognition(self, chunks: list[MicChunk]) -> None:
        for chunk in chunks:
            try:
                self._guard(partial(self._hear, chunk))
            except ModeratorError as exc:  # e.g. the recognizer failed: the keyboard still works
                where = "the shared microphone" if chunk.mic is None else f"room {chunk.mic}'s microphone"
                print(f"moderator: what {where} heard was lost: {exc}", file=self._err)

    def _hear(self, chunk: MicChunk) -> None:
        if self.listener is not None:
            self.listener.feed(chunk.mic, chunk.samples, chunk.rate, chunk.t)

    def _speech(self) -> None:
        if self.voice is not None:
            self.voice.pump()

    def _ahead_of_recognition(self) -> None:
        """The listening loop is about to decode an utterance: what falls due meanwhile is handled first."""
        self._timers(self.timing.lead + self.timing.recognition_lead)
        self._speech()

    # --- saving, and surviving a bug ----------------------------------------------------------------

    def save(self) -> None:
        """Journal the game now if it changed since the last save."""
        if self.engine.version != self._saved_version:
            self.journal.save(self.engine.snapshot(), epoch=self.epoch, saved_at=self.clock.now(),
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
            self.adopt(self._rebuild(self.journal.load(), self.clock))
            self._saved_version = self.engine.version
            return
        self.save()

    # --- what the host sees, and the end --------------------------------------------------------------

    def alerts(self) -> list[str]:
        """What the host must be shown besides the rooms: failed speakers and microphones, and the rest."""
        said = self.voice.alerts() if self.voice is not None else []
        failed = sorted(self.mics.failed_mics, key=str) if self.mics is not None else []
        heard = ["the shared microphone is not working: type the commands" if mic is None
                 else f"room {mic}'s microphone is not working: type its commands as '{mic}: ...'" for mic in failed]
        return said + heard + self._extra_alerts()

    def close(self) -> None:
        """Say what was already announced (waiting up to ``timing.finish_timeout`` for what still renders),
        then stop the voice and its output."""
        if self.voice is None:
            return
        try:
            self.voice.finish(self.timing.finish_timeout)
        finally:
            self.voice.close()
            self.voice.out.close()
