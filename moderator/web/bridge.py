"""The one way between the web server's thread and the live game's: commands in through a queue, views out.

The server never touches the engine. It ``submit``s a command and waits on the returned future; the game's
thread ``take``s the commands once per tick (``LiveGame``), runs each through the same path as a typed line, and
answers it with the events it caused. After a change (and once a second, for the clock) the game's thread builds
the view (``moderator.web.live_view``) and hands it, as a finished JSON string, to the server's ``outlet``. A
byte on a pipe (``wake_fd``) wakes the play loop when a command arrives, so it is handled at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from moderator.game.engine import Engine

#: Where the game's thread hands a message for the pages: ``(kind, json)``, kind "view" or "event". It is called
#: on the game's thread, so it must only pass the string on (``loop.call_soon_threadsafe``).
Outlet = Callable[[str, str], None]


@dataclass(frozen=True)
class Answer:
    """What a command sent from the web caused: accepted or refused (with the moderator's reason), and its events."""

    accepted: bool
    events: tuple[dict[str, Any], ...] = ()
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The API's answer body."""
        out: dict[str, Any] = {"accepted": self.accepted, "events": list(self.events)}
        if self.reason is not None:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class Request:
    """A command from the web: said in ``room`` (None: the room follows from the names), answered on ``answer``."""

    room: str | None
    text: str
    answer: Future[Answer] = field(default_factory=Future, compare=False)


class Bridge:
    """Commands from the server's thread to the game's, and views and events back.

    On the game's thread it is also an event sink of the live game (``__call__``): it keeps the last refusals for
    the host page and passes every event to the event stream.
    """

    #: How many refusals the host page lists, newest first.
    REFUSALS: int = 8
    #: How often the view is sent even without a change (the pages' clocks resynchronise on it), in seconds.
    REFRESH: float = 1.0

    def __init__(self, describe: Callable[..., dict[str, Any]] | None = None) -> None:
        if describe is None:
            from moderator.web.live_view import live_view as describe
        self._describe = describe
        self._queue: queue.SimpleQueue[Request] = queue.SimpleQueue()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._outlet: Outlet | None = None
        self._refusals: deque[dict[str, Any]] = deque(maxlen=self.REFUSALS)
        self._shown: tuple[int, int] | None = None
        self._shown_at = float("-inf")
        self._closed = False

    # --- the server's side ------------------------------------------------------------------------

    def connect(self, outlet: Outlet) -> None:
        """Send views and events to ``outlet`` from now on (the server, once it listens)."""
        self._outlet = outlet

    def submit(self, room: str | None, text: str) -> Future[Answer]:
        """Queue a command for the game's thread; the future gets its answer."""
        request = Request(room, text)
        if self._closed:
            request.answer.set_result(Answer(False, reason="the game is over"))
            return request.answer
        self._queue.put(request)
        # A full pipe: the loop is awake already; a closed one: the game just ended (``close`` answers it).
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"!")
        return request.answer

    # --- the game's side ------------------------------------------------------------------------

    @property
    def wake_fd(self) -> int:
        """Readable when a command is waiting: the play loop waits on it beside the keyboard."""
        return self._wake_r

    def take(self) -> list[Request]:
        """The commands waiting, in arrival order (the game's thread, once per tick)."""
        with contextlib.suppress(BlockingIOError):
            while os.read(self._wake_r, 4096):
                pass
        taken: list[Request] = []
        while True:
            try:
                taken.append(self._queue.get_nowait())
            except queue.Empty:
                return taken

    def __call__(self, event: dict[str, Any]) -> None:
        """An event of the game (a sink): kept if it is a refusal, and passed to the event stream."""
        if event["type"] == "rejected":
            self._refusals.appendleft({k: event[k] for k in ("t", "room", "text", "reason")})
        self._send("event", event)

    def show(self, engine: Engine, alerts: Callable[[], Sequence[str]] = tuple) -> None:
        """Send the view if the game changed since the last one, or every ``REFRESH`` seconds (the clock);
        ``alerts`` (what the host must be shown besides the rooms) is asked only then."""
        now = engine.clock.now()
        shown = (id(engine), engine.version)
        if self._outlet is None or (shown == self._shown and now - self._shown_at < self.REFRESH):
            return
        self._shown, self._shown_at = shown, now
        self._send("view", self._describe(engine, alerts=alerts(), refusals=list(self._refusals)))

    def _send(self, kind: str, payload: dict[str, Any]) -> None:
        if self._outlet is not None:
            self._outlet(kind, json.dumps(payload, ensure_ascii=False, separators=(",", ":")))

    def close(self) -> None:
        """The game ended: commands still waiting, and any sent from now on, are answered so."""
        if self._closed:
            return
        self._closed = True
        for request in self.take():
            request.answer.set_result(Answer(False, reason="the game is over"))
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)
