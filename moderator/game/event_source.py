"""What every game's engine shares on its way out: the listeners of its events, the log's time (which never goes
back, and is a timer's own time while the timer fires), the engine's version, and its announcements.

``Engine`` (Two Rooms) and ``Room25Engine`` both are an ``EventSource``; each says what its own events and phrases
are, and what its timers do (``fire_due``'s ``handle``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from moderator.game import events
from moderator.ports import Announcer, Clock
from moderator.timers import Scheduler, Timer

Event = dict[str, Any]
Listener = Callable[[Event], None]


class EventSource:
    """Events out, stamped with the game's time; announcements out, to the log and the announcer."""

    def __init__(self, clock: Clock, announcer: Announcer | None) -> None:
        self.clock = clock
        self.announcer = announcer
        self.timers = Scheduler()
        #: How many events so far: a live game saves when it changed.
        self.version = 0
        #: While a timer fires: its due time, added to the announcements it causes as ``scheduled``.
        self._scheduled: float | None = None
        self._last_t = float("-inf")
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> None:
        """Call ``listener`` with every event from now on."""
        self._listeners.append(listener)

    def emit(self, event: events.Event) -> Event:
        """Stamp ``event`` with the time and send its log object (``events.to_json``) to every listener."""
        # A timer handled ahead of time (tick's look-ahead) logs its own time; the log never goes backwards.
        now = self.clock.now() if self._scheduled is None else max(self.clock.now(), self._scheduled)
        self._last_t = max(self._last_t, now)
        logged = events.to_json(event, round(self._last_t, 3))
        self.version += 1
        for listener in self._listeners:
            listener(logged)
        return logged

    @property
    def last_t(self) -> float:
        """The time of the last event emitted."""
        return self._last_t

    def now(self) -> float:
        """The game clock (a timer's own time while it fires)."""
        return self.clock.now() if self._scheduled is None else self._scheduled

    def announce(self, room: str, key: str, text: str) -> None:
        """Log an announcement (with the time of the timer that caused it) and hand it to the announcer."""
        scheduled = events.OMITTED if self._scheduled is None else round(self._scheduled, 3)
        self.emit(events.Announce(room, key, text, scheduled))
        if self.announcer is not None:
            self.announcer.announce(room, key, text, self._scheduled)

    def next_due(self) -> float | None:
        """When the next timer fires (None: nothing scheduled)."""
        return self.timers.next_due()

    def fire_due(self, lead: float, handle: Callable[[Timer], None]) -> None:
        """``handle`` every timer due now (with ``lead``, those due within ``lead`` seconds too), in order, each
        with its own time as the game's (``now``, and the ``scheduled`` of what it announces)."""
        while (timer := self.timers.pop_next(self.clock.now() + lead)) is not None:
            self._scheduled = timer.due
            try:
                handle(timer)
            finally:
                self._scheduled = None
