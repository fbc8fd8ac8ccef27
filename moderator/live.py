"""The one owner of a live game: its engine, and every part that acts on it, ticked in a fixed order."""

from __future__ import annotations

import copy
import sys
import traceback
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TextIO

from moderator.errors import JournalError, ModeratorError
from moderator.game.engine import Engine
from moderator.journal import Journal, Saved
from moderator.play import split_room
from moderator.ports import Clock
from moderator.settings import LiveTiming
from moderator.web.bridge import Answer

if TYPE_CHECKING:
    from moderator.loop import Listener
    from moderator.ports import AudioIn, MicChunk
    from moderator.speaking import Voice
    from moderator.web.bridge import Bridge, Request

#: Where an event goes: the terminal, the JSON Lines log (``moderator.play.EventLog``), a test's list.
Sink = Callable[[dict[str, Any]], None]


class LiveGame:
    """Runs a live game on one thread, and journals it after every change.

    ``tick()`` runs one pass, always in this order:

    1. **microphones**: what they heard since the last tick is read (they only queue audio on their threads);
    2. **timers**: the engine fires those due within ``timing.lead`` (their audio starts on their exact time);
    3. **remote**: the commands sent from the web panel (``remote.take()``) run as typed lines do, and each is
       answered with the events it caused (or the refusal's reason);
    4. **recognition**: the audio goes to the listening loop (endpointing, the recognizer, re-parsing), and
    5. **engine**: each command it understood is handed to the engine;
    6. **speech**: the voice hands what is due to the speakers and reports what was said;
    7. **view**: the remote is shown the game (``remote.show``) if it changed, or once a second for its clock.

    Typed lines (``feed``) are step 5 too, handled as the loop reads them, between ticks, and then shown (7).
    Decoding an utterance holds the thread, so right before one, steps 2 and 6 run again with
    ``timing.recognition_lead`` more lead.
    How long the loop may sleep follows from the next timer's time, as a value (``wait_time``).

    The engine is not thread-safe and has one owner. A bug in a step must not lose the game: the engine is
    rebuilt from the last snapshot taken for a save (``rebuild(saved, clock)``, on this game's one clock) and
    ``adopt`` hands it to every part that holds one (the event sinks, the voice's announcer, phase and
    ``spoken`` events, the listening loop), in that one place; the replaced engine's events go nowhere from
    then on.

    Nor may a failing disk end it: a save that fails is said once, the game goes on from memory, and the save
    is retried on every change and heartbeat until it works (which is said too). A sink that fails (the event
    log has its own handling) is said once and skipped; it never reaches the engine.
    """

    #: The default timing's lead.
    LEAD: ClassVar[float] = LiveTiming.lead
    #: How often the journal's heartbeat records that the game runs (``Journal.beat``): a crash's time is known
    #: within this much.
    HEARTBEAT: ClassVar[float] = 1.0

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
        game: str | None = None,
        options: Mapping[str, Any] | None = None,
        remote: Bridge | None = None,
    ) -> None:
        self.clock = engine.clock
        self.journal = journal
        self.epoch = epoch
        self.lang = lang
        self.events = events
        #: The game's id, which its heartbeat carries; and the settings a resumed game keeps.
        self.game_id = game or uuid.uuid4().hex
        self.options = dict(options or {})
        self.timing = timing or LiveTiming()
        self.sinks = list(sinks)
        self.voice = voice
        #: The microphones and the listening loop their audio goes to (None: keyboard only).
        self.mics = mics
        #: The web panel's side of the game (None: no ``--web``): commands in, views out, on this thread only.
        self.remote = remote
        #: While a remote command runs: the events it causes.
        self._caught: list[dict[str, Any]] | None = None
        self._view_failed = False
        self.listener = listener
        if listener is not None:
            listener.before_recognizing = self._ahead_of_recognition
        self._rebuild = rebuild
        self._extra_alerts = extra_alerts
        self._err = err
        self._saved_version = self._tried_version = -1
        #: The last snapshot taken for a save (written or not): what a bug falls back to.
        self._snapshot: Saved | None = None
        #: Why saving fails, while it does (None: it works).
        self.save_trouble: str | None = None
        self._last_beat = float("-inf")
        self._failed_sinks: set[int] = set()
        self.engine = engine
        self.adopt(engine)

    def adopt(self, engine: Engine) -> None:
        """Make ``engine`` the game: every part that answers from the engine answers from this one now."""
        if engine.clock is not self.clock:
            raise ValueError("a live game has one clock: the engine must run on it")
        self.engine = engine
        engine.subscribe(partial(self._publish, engine, self._catch))
        for sink in self.sinks:
            engine.subscribe(partial(self._publish, engine, sink))
        if self.voice is not None:
            self.voice.attach(engine)
        if self.listener is not None:
            self.listener.engine = engine

    def _publish(self, source: Engine, sink: Sink, event: dict[str, Any]) -> None:
        if source is not self.engine:  # a replaced engine is dead: nothing it still says is the game's
            return
        try:
            sink(event)
        except Exception as exc:  # an output's failure is not the game's: it must not undo the command
            if id(sink) not in self._failed_sinks:
                self._failed_sinks.add(id(sink))
                print(f"moderator: an output of the game's events failed ({exc}); the game goes on without it",
                      file=self._err, flush=True)

    @property
    def finished(self) -> bool:
        """True once the result is announced."""
        return self.engine.in_state("result")

    # --- the tick ---------------------------------------------------------------------------------

    def tick(self) -> None:
        """One pass of the live loop, in the order the class describes."""
        chunks = self._microphones()
        self._timers(self.timing.lead)
        self._remote()
        self._recognition(chunks)
        self._speech()
        self._view()
        self._heartbeat()

    def feed(self, line: str) -> None:
        """Handle one typed line ("A: ..." or "B: ..." names the room's microphone)."""
        room, text = split_room(line)
        if text:
            self._guard(lambda: self.engine.handle_text(text, room, host=True))
            self._view()

    def wait_time(self, longest: float | None = None) -> float:
        """How long the loop may wait before the next tick (at most ``longest``, default ``timing.poll``)."""
        return self.timing.wait(self.engine.next_due(), self.clock.now(), longest)

    def _microphones(self) -> list[MicChunk]:
        return self.mics.read() if self.mics is not None and self.listener is not None else []

    def _timers(self, lead: float) -> None:
        self._guard(lambda: self.engine.tick(lead))

    def _remote(self) -> None:
        """Step 3. The answers go out after the view that shows their effect, so whoever sent a command and then
        reads the state sees it."""
        if self.remote is None:
            return
        taken, answered = self.remote.take(), []
        try:
            for request in taken:
                answered.append((request, self._command(request)))
        finally:  # (a ModeratorError ends the game: the commands after it are answered so)
            if answered:
                self._view()
            for request, answer in answered:
                request.answer.set_result(answer)
            for request in taken[len(answered) + 1:]:
                request.answer.set_result(Answer(False, reason="the game stopped"))

    def _command(self, request: Request) -> Answer:
        """Run a command from the web as a typed line; what it caused."""
        engine, accepted = self.engine, []
        self._caught = []
        try:
            self._guard(lambda: accepted.append(engine.handle_text(request.text, request.room, host=True)))
        except ModeratorError as exc:  # as for a typed line, the game cannot go on; the sender is told why
            request.answer.set_result(Answer(False, tuple(self._caught), str(exc)))
            raise
        finally:
            caught, self._caught = self._caught, None
        if self.engine is not engine:  # a bug: the game went back to its last save, without this command
            return Answer(False, reason="internal error; the command was ignored")
        if accepted[0]:
            return Answer(True, tuple(caught))
        reason = next((e["reason"] for e in caught if e["type"] == "rejected"), "the moderator did not take it")
        return Answer(False, tuple(caught), reason)

    def _catch(self, event: dict[str, Any]) -> None:
        if self._caught is not None:
            self._caught.append(event)

    def _view(self) -> None:
        """Step 7. The view is not the game: a bug in it is said once, and the game goes on without it."""
        if self.remote is None:
            return
        try:
            self.remote.show(self.engine, self.alerts)
        except Exception as exc:
            if not self._view_failed:
                self._view_failed = True
                print(f"moderator: the web panel's view failed ({exc!r}); the game goes on", file=self._err,
                      flush=True)

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

    def save(self, *, retry: bool = False) -> None:
        """Journal the game now if it changed since the last save.

        A failure is said once (on ``err``, and in ``alerts``) and the game goes on from memory; the next
        change, or the next heartbeat (``retry``), tries again, and a save that works again is said too."""
        if self.engine.version == self._saved_version:
            return
        if self.save_trouble is not None and self.engine.version == self._tried_version and not retry:
            return  # nothing new since the last failed attempt: the heartbeat retries
        self._tried_version = self.engine.version
        self._snapshot = Saved(self.engine.snapshot(), self.epoch, self.clock.now(), self.lang,
                               str(self.events) if self.events else None, self.game_id, dict(self.options))
        try:
            self.journal.save(self._snapshot)
        except JournalError as exc:
            if self.save_trouble is None:
                print(f"moderator: warning: saving the game failed ({exc}); the game goes on from memory, and "
                      "saving is retried every second", file=self._err, flush=True)
            self.save_trouble = str(exc)
            return
        self._saved_version = self.engine.version
        if self.save_trouble is not None:
            self.save_trouble = None
            print(f"moderator: saving works again: the game is saved in {self.journal.path}", file=self._err,
                  flush=True)

    def _heartbeat(self) -> None:
        """Once a second: record that the game runs, and retry a save that failed."""
        now = self.clock.now()
        if now - self._last_beat < self.HEARTBEAT:
            return
        self._last_beat = now
        if self.save_trouble is not None:
            self.save(retry=True)
        self.journal.beat(self.game_id, now)

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
            # A copy: the rebuilt engine's state shares its lists with what it was built from.
            last = self._snapshot or self.journal.load()
            self.adopt(self._rebuild(replace(last, state=copy.deepcopy(last.state)), self.clock))
            self._saved_version = self.engine.version if self.save_trouble is None else -1
            return
        self.save()

    # --- what the host sees, and the end --------------------------------------------------------------

    def alerts(self) -> list[str]:
        """What the host must be shown besides the rooms: failed speakers and microphones, and the rest."""
        said = self.voice.alerts() if self.voice is not None else []
        failed = sorted(self.mics.failed_mics, key=str) if self.mics is not None else []
        heard = ["the shared microphone is not working: type the commands" if mic is None
                 else f"room {mic}'s microphone is not working: type its commands as '{mic}: ...'" for mic in failed]
        saving = [] if self.save_trouble is None else [f"the game is not being saved: {self.save_trouble}"]
        return said + heard + saving + self._extra_alerts()

    def close(self) -> None:
        """Record the last heartbeat, say what was already announced (waiting up to ``timing.finish_timeout``
        for what still renders), then stop the voice and its output."""
        self.save()
        self.journal.beat(self.game_id, self.clock.now())
        if self.remote is not None:
            self._view()
            self.remote.close()
        if self.voice is None:
            return
        try:
            self.voice.finish(self.timing.finish_timeout)
        finally:
            self.voice.close()
            self.voice.out.close()
