"""The ports of the core: what it needs from the outside world, as Protocols.

Adapters in ``moderator.adapters`` implement them; tests use the fakes in
``tests/fakes.py``. The core never imports ``time``, a device or an engine.
"""

from __future__ import annotations

from typing import Protocol


class Clock(Protocol):
    """Monotonic game time in seconds."""

    def now(self) -> float:
        """The current time in seconds; only differences are meaningful."""
        ...


class Announcer(Protocol):
    """Says something in a room. Speech output implements this; the terminal prints it."""

    def announce(self, room: str, key: str, text: str) -> None:
        """Speak ``text`` (phrase ``key``) in room ``A``, ``B`` or ``both``."""
        ...
