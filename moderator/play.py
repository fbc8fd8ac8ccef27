"""A live game's input and output at the edge: typed lines' room prefix, and the JSON Lines event log.

The live game itself, ticked on one thread and saved after every change, is ``moderator.live.LiveGame``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, TextIO

from moderator.errors import ModeratorError

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

