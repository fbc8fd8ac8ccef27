"""Crash safety: the game is saved atomically after every change, checked when read back, held by one process.

Beside the save file ``game.json`` lives ``game.json.lock``. It is ``flock``-ed for the life of a game, so a
second moderator cannot open the same game, and it holds one short fixed-width record, rewritten in place: the
pid of the moderator that holds it, and the heartbeat, the game-clock time at which that moderator last knew
the game to be running (``Journal.beat``, once a second). A save happens only when the game changes; the
heartbeat is how ``--resume --paused`` knows the time at a crash within a second without rewriting the whole
save every second.
"""

from __future__ import annotations

import errno
import fcntl
import json
import math
import os
import re
import tempfile
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import platformdirs

from moderator.errors import JournalError
from moderator.save_check import Invalid, check_file

FORMAT = 1
#: A save file is a few kilobytes; anything far larger is not one (and is not read into memory).
MAX_BYTES = 8 * 1024 * 1024
#: The lock file's record, padded so that each rewrite covers the one before.
_RECORD = 128


def default_path() -> Path:
    """Where a game is saved when ``--state`` is not given."""
    return platformdirs.user_state_path("moderator") / "game.json"


@dataclass(frozen=True)
class Saved:
    """A saved game as read back (or about to be written)."""

    state: dict[str, Any]
    epoch: float
    """Wall-clock time of the game's t=0; the game clock is ``wall - epoch``."""
    saved_at: float
    """Game-clock time of the save, or of the heartbeat after it: the last moment the game was known to run."""
    lang: str
    events: str | None
    """The event log the game was written to, if any (only reported on resume: it is never reopened from here)."""
    game: str = ""
    """This game's id, which its heartbeat carries (an older save has none)."""
    options: dict[str, Any] = field(default_factory=dict)
    """The game's settings that ``--resume`` keeps: ``read_back``, ``schedule``."""

    @property
    def finished(self) -> bool:
        """True once the result was announced: nothing is left to resume."""
        return self.state.get("machine") == "result"

    def describe(self) -> str:
        """Which game this is, for a host who must decide about it: players, round, when it was last saved."""
        players = self.state["players"]
        names = ", ".join(players) if len(players) <= 10 else f"{', '.join(players[:8])} and {len(players) - 8} more"
        plan = self.state["plan"]
        if plan.get("game") == "room25":  # another game's save (moderator/room25)
            turn = self.state.get("turn", 0)
            where = f"Room 25, turn {turn} of {plan['turns']}" if turn else "Room 25, before turn 1"
        else:
            number, rounds = self.state["round"], len(plan["rounds"])
            where = f"round {number} of {rounds}" if number else "before round 1"
        when = datetime.fromtimestamp(self.epoch + self.saved_at).strftime("%Y-%m-%d %H:%M")
        return f"{len(players)} players: {names}; {where}; saved {when}"


class Journal:
    """One saved game file, replaced atomically on every save, and its lock file."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self._lock_fd: int | None = None

    # --- saving --------------------------------------------------------------------------------------------

    def save(self, saved: Saved) -> None:
        """Write the game so that a crash at any moment leaves the old or the new file, never half of one."""
        data = {"format": FORMAT, **asdict(saved)}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.stem}-", suffix=".tmp", dir=self.path.parent)
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

    def remove_leftovers(self) -> list[Path]:
        """Delete the temporary files of saves cut short by a kill (ours only: the lock says none is running)."""
        pattern = re.compile(rf"\.{re.escape(self.path.stem)}-[a-z0-9_]{{8}}\.tmp")
        removed = []
        try:
            for entry in self.path.parent.iterdir():
                if pattern.fullmatch(entry.name) and entry.is_file():
                    entry.unlink(missing_ok=True)
                    removed.append(entry)
        except OSError:
            pass  # a directory that cannot be listed or cleaned: the next save reports what matters
        return removed

    def back_up(self, now: datetime | None = None) -> Path:
        """Move the saved game aside, to ``<name>.<date>-<time><suffix>`` beside it; returns that path."""
        stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
        for n in range(1, 1000):
            backup = self.path.with_name(f"{self.path.stem}.{stamp}{'' if n == 1 else f'-{n}'}{self.path.suffix}")
            if not backup.exists():
                break
        try:
            os.rename(self.path, backup)
        except OSError as exc:
            raise JournalError(f"cannot keep the saved game {self.path} as {backup}: {exc.strerror or exc}") from exc
        return backup

    def claim(self, *, new: bool) -> bool:
        """Before a new game is saved here: may it be, and must the file there be kept aside first?

        Nothing there, or a finished game (its result announced; the event log is its record): the new game
        simply replaces it (False). An unfinished game, or a file that is not a saved game, is never replaced
        silently: without ``new`` it is a JournalError naming it; with ``new`` it is to be kept aside first with
        ``back_up`` (True).
        """
        if not self.exists():
            return False
        try:
            saved = self.load()
        except JournalError as exc:
            if new:
                return True
            raise JournalError(f"{exc}; to start a new game here anyway, add --new (the file is kept beside it, "
                               "renamed with the date and time)") from None
        if saved.finished:
            return False
        if new:
            return True
        raise JournalError(f"an unfinished game is saved in {self.path} ({saved.describe()}): continue it with "
                           f"'moderator play --resume --state {self.path}', or add --new to start a new game "
                           "(the saved one is kept beside it, renamed with the date and time)")

    def exists(self) -> bool:
        """True when a saved game is there."""
        return self.path.exists()

    # --- reading ----------------------------------------------------------------------------------------------

    def load(self) -> Saved:
        """Read the saved game and check it against the game's invariants; its heartbeat, if newer, is the time
        it was last known to run. A missing, damaged or inconsistent file is a JournalError naming the file
        and the field, and the file is left as it is."""
        try:
            with self.path.open("rb") as fh:
                raw = fh.read(MAX_BYTES + 1)
        except FileNotFoundError:
            raise JournalError(f"there is no saved game at {self.path}; start one with 'moderator play'") from None
        except OSError as exc:
            raise JournalError(f"the saved game {self.path} cannot be read: {exc.strerror or exc}") from exc
        if len(raw) > MAX_BYTES:
            raise JournalError(f"{self.path} is too large to be a saved game")
        try:
            data = json.loads(raw.decode("utf-8"))
        except RecursionError:
            raise JournalError(f"the saved game {self.path} is damaged: it is nested too deeply") from None
        except (UnicodeDecodeError, ValueError) as exc:
            raise JournalError(f"the saved game {self.path} is damaged: not JSON ({exc})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise JournalError(f"{self.path} is not a saved game of this version of moderator")
        try:
            check_file(data, languages=_languages())
        except Invalid as exc:
            raise JournalError(f"the saved game {self.path} is damaged: {exc}") from None
        saved = Saved(data["state"], float(data["epoch"]), float(data["saved_at"]), data["lang"], data.get("events"),
                      data.get("game") or "", data.get("options") or {})
        beat = self._record()
        if saved.game and beat.get("game") == saved.game and beat["t"] > saved.saved_at:
            saved = replace(saved, saved_at=beat["t"])
        return saved

    # --- the lock and the heartbeat ----------------------------------------------------------------------------

    def lock(self) -> None:
        """Hold this game for this process until ``unlock`` (or its exit, however it ends).

        Raises:
            JournalError: another moderator holds it (naming its pid), or the lock file cannot be made.
        """
        if self._lock_fd is not None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise JournalError(f"cannot lock the saved game {self.path}: {exc.strerror or exc} "
                               f"({self.lock_path}); choose another place with --state") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            pid = _parse(os.pread(fd, _RECORD, 0)).get("pid", "unknown")
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise JournalError(f"this game is open in another moderator (pid {pid}): {self.path}") from None
            raise JournalError(f"cannot lock the saved game {self.path}: {exc.strerror or exc}") from exc
        self._lock_fd = fd
        # Our pid, and the heartbeat of whoever ran this game last, kept until our first one.
        found = self._record()
        self._write_record({"pid": os.getpid(), "game": found.get("game", ""), "t": found.get("t", 0.0)})

    def unlock(self) -> None:
        """Let another moderator open this game. The lock file stays: it carries the last heartbeat."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing it releases the flock
            self._lock_fd = None

    def beat(self, game: str, t: float) -> bool:
        """Record that game ``game`` was running at game-clock time ``t``. Returns False if it could not be
        written: the heartbeat only sharpens the time of a crash, the save's own time is the fallback."""
        if self._lock_fd is None:
            return False
        return self._write_record({"pid": os.getpid(), "game": game, "t": round(t, 3)})

    def _write_record(self, record: dict[str, Any]) -> bool:
        """Rewrite the lock file's record in place: one block, already allocated after the first write, so it
        works on a full disk too; ``fdatasync`` makes it survive a power cut, not only a kill."""
        text = json.dumps(record).encode("utf-8")
        try:
            os.pwrite(self._lock_fd, text.ljust(_RECORD - 1) + b"\n", 0)  # type: ignore[arg-type]
            os.fdatasync(self._lock_fd)  # type: ignore[arg-type]
        except OSError:
            return False
        return True

    def _record(self) -> dict[str, Any]:
        """The lock file's record, read without locking; {} when there is none or it is not one."""
        try:
            if self._lock_fd is not None:
                return _parse(os.pread(self._lock_fd, _RECORD, 0))
            with self.lock_path.open("rb") as fh:
                return _parse(fh.read(_RECORD))
        except OSError:
            return {}


def _parse(raw: bytes) -> dict[str, Any]:
    """A lock file record, checked: a pid, a game id and a finite time, or {}."""
    try:
        record = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return {}
    if not isinstance(record, dict):
        return {}
    ok = (isinstance(record.get("pid"), int) and isinstance(record.get("game"), str)
          and isinstance(record.get("t"), (int, float)) and math.isfinite(record["t"]))
    return record if ok else {}


def _languages() -> set[str]:
    from moderator.resources import VOICES

    return {p.stem for p in VOICES.glob("*.yaml")}
