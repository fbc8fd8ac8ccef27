"""Crash safety: the game is saved atomically after every change, and can be resumed."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

from moderator.errors import JournalError

FORMAT = 1


def default_path() -> Path:
    """Where a game is saved when ``--state`` is not given."""
    return platformdirs.user_state_path("moderator") / "game.json"


@dataclass(frozen=True)
class Saved:
    """A saved game as read back."""

    state: dict[str, Any]
    epoch: float
    """Wall-clock time of the game's t=0; the game clock is ``wall - epoch``."""
    saved_at: float
    """Game-clock time of the save: the last moment the game was known to run."""
    lang: str
    events: str | None
    """Where the event log is appended, if anywhere."""


class Journal:
    """One saved game file, replaced atomically on every save."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def save(self, state: dict[str, Any], *, epoch: float, saved_at: float, lang: str, events: str | None) -> None:
        """Write the game so that a crash at any moment leaves the old or the new file, never half of one."""
        data = {"format": FORMAT, "epoch": epoch, "saved_at": saved_at, "lang": lang, "events": events,
                "state": state}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".game-", suffix=".tmp", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    json.dump(data, fh)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            dir_fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError as exc:
            raise JournalError(f"cannot save the game to {self.path}: {exc.strerror or exc}") from exc

    def exists(self) -> bool:
        """True when a saved game is there."""
        return self.path.exists()

    def load(self) -> Saved:
        """Read the saved game; a missing or damaged file is a JournalError that says so."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise JournalError(f"there is no saved game at {self.path}; start one with 'moderator play'") from None
        except (OSError, ValueError) as exc:
            raise JournalError(f"the saved game {self.path} cannot be read: {exc}") from exc
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise JournalError(f"{self.path} is not a saved game of this version of moderator")
        try:
            return Saved(data["state"], float(data["epoch"]), float(data["saved_at"]), str(data["lang"]),
                         data.get("events"))
        except (KeyError, TypeError, ValueError) as exc:
            raise JournalError(f"the saved game {self.path} is damaged: missing {exc}") from exc
