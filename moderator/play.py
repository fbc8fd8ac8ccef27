"""A live game's input and output at the edge: typed lines' room prefix, and the JSON Lines event log.

The live game itself, ticked on one thread and saved after every change, is ``moderator.live.LiveGame``."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from moderator import jsonl
from moderator.errors import ModeratorError

_PREFIX = re.compile(r"^\s*(?:room\s+)?([ab])\s*[:>]\s*(.*)$", re.IGNORECASE)


def split_room(line: str) -> tuple[str | None, str]:
    """ "A: hostages Bob" → ("A", "hostages Bob"); no prefix → (None, line): the room follows from the names."""
    m = _PREFIX.match(line)
    if m:
        return m.group(1).upper(), m.group(2).strip()
    return None, line.strip()


class EventLog:
    """Writes events to a JSON Lines file, one line each, written through at once (a kill loses nothing written).

    ``mode`` "a" continues a log (a resumed game); "w" starts a new one (a simulation).

    Without ``warn``, a failed write is a ModeratorError. With it (a live game), a failed write must not stop
    the game: the failure is said once through ``warn``, the lines not written are kept in memory (up to
    ``keep`` bytes; what comes after is counted and dropped) and retried with every new event, and when they
    are written again that is said too. A line cut short by a full disk is completed on the retry, and cut back
    off the file if the game ends first, so the log stays whole lines.
    """

    def __init__(self, path: Path, mode: str = "a", *, warn: Callable[[str], None] | None = None,
                 keep: int = 8 * 1024 * 1024) -> None:
        self.path = Path(path)
        self._warn, self._keep = warn, keep
        flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | (os.O_APPEND if mode == "a" else os.O_TRUNC)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, flags, 0o644)
        except OSError as exc:
            raise ModeratorError(f"cannot write the event log {path}: {exc.strerror or exc}") from exc
        try:
            # Where the file's whole lines end. A file that cannot say (/proc/version) cannot be a log either.
            self._whole = self._end = os.lseek(self._fd, 0, os.SEEK_END)
        except OSError as exc:
            os.close(self._fd)
            raise ModeratorError(f"cannot write the event log {path}: {exc.strerror or exc}") from exc
        self._pending = bytearray()
        self._cut = False  # the first pending line was partly written
        self._dropped = 0
        #: Why the log cannot be written, while it cannot (None: it is written).
        self.trouble: str | None = None

    def __call__(self, event: dict[str, Any]) -> None:
        line = (jsonl.line(event) + "\n").encode("utf-8")
        if len(self._pending) + len(line) > self._keep:
            self._dropped += 1
        else:
            self._pending += line
        self._write()

    def _write(self) -> None:
        while self._pending:
            try:
                n = os.write(self._fd, self._pending)
            except OSError as exc:
                self._failed(exc)
                return
            written = bytes(self._pending[:n])
            del self._pending[:n]
            last = written.rfind(b"\n")
            if last >= 0:
                self._whole = self._end + last + 1
            self._end += n
            self._cut = written[-1:] != b"\n" if n else self._cut
        if self.trouble is not None:
            self.trouble = None
            lost = f"; {self._dropped} events could not be kept meanwhile" if self._dropped else ""
            self._say(f"the event log {self.path} is written again{lost}")
            self._dropped = 0

    def _failed(self, exc: OSError) -> None:
        message = f"cannot write the event log {self.path}: {exc.strerror or exc}"
        if self._warn is None:
            raise ModeratorError(message) from exc
        if self.trouble is None:
            self._say(f"warning: {message}; the game goes on, and its events are kept and written as soon as "
                      "the log can take them")
        self.trouble = message

    def _say(self, message: str) -> None:
        if self._warn is not None:
            self._warn(message)

    def alerts(self) -> list[str]:
        """What the host's view shows while the log cannot be written."""
        return [] if self.trouble is None else [f"the event log is not being written: {self.trouble}"]

    def close(self) -> None:
        """Write what is still pending if possible, cut off a line left half-written, and close the file."""
        if self._pending:
            with contextlib.suppress(ModeratorError):
                self._write()
        if self._pending and self._cut:
            with contextlib.suppress(OSError):  # a device (/dev/full) has no end to cut
                os.ftruncate(self._fd, self._whole)
        os.close(self._fd)
