"""A real ``moderator play`` whose disk fills up or turns read-only mid-game (issue 15): the game goes on from
memory, says once what failed, and catches up when the disk works again; the event log stays whole lines.

The disk is a tiny tmpfs mounted for the test (root only: skipped, saying why, where mounting is not allowed).
The ``/dev/full`` test needs no mount and always runs."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from moderator.journal import Journal
from moderator.play import EventLog

PLAYERS = "Alice,Bob,Carol,Dave,Erin,Frank,Grace,Heidi"
pytestmark = pytest.mark.slow


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 256 KiB tmpfs, unmounted after the test."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs for a full disk needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(disk: Path) -> Path:
    """Fill the disk to the last byte; returns the file that holds it."""
    filler = disk / "filler"
    with filler.open("wb", buffering=0) as fh:
        chunk = b"\0" * 4096
        try:
            while True:
                fh.write(chunk)
        except OSError:
            pass
        try:
            while True:
                fh.write(b"\0")
        except OSError:
            pass
    return filler


def remount(disk: Path, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(disk)], check=True)


def event(i: int) -> dict[str, Any]:
    return {"t": float(i), "type": "announce", "room": "both", "key": "k", "text": f"line {i} " + "x" * 60}


def lines(path: Path) -> list[dict[str, Any]]:
    text = path.read_text()
    assert text == "" or text.endswith("\n"), "the log ends with a whole line"
    return [json.loads(line) for line in text.splitlines()]


# --- the event log itself -----------------------------------------------------------------------------------


def test_an_event_log_on_a_full_disk_keeps_its_lines_and_completes_the_one_cut_short(tiny_disk: Path) -> None:
    said: list[str] = []
    log = EventLog(tiny_disk / "events.jsonl", warn=said.append)
    log(event(0))
    filler = fill(tiny_disk)
    for i in range(1, 120):  # the rest of the log's page fills, one line is cut, then nothing is written
        log(event(i))
    assert len(said) == 1 and "No space left on device" in said[0] and log.trouble
    assert len(lines_so_far := (tiny_disk / "events.jsonl").read_bytes().splitlines()) < 120
    assert not lines_so_far[-1].endswith(b"}"), "a line was cut short by the full disk"
    filler.unlink()
    log(event(120))
    assert said[1] == f"the event log {tiny_disk / 'events.jsonl'} is written again" and log.trouble is None
    log.close()
    assert [e["t"] for e in lines(tiny_disk / "events.jsonl")] == [float(i) for i in range(121)]


def test_an_event_log_closed_while_the_disk_is_full_ends_with_a_whole_line(tiny_disk: Path) -> None:
    log = EventLog(tiny_disk / "events.jsonl", warn=lambda message: None)
    log(event(0))
    fill(tiny_disk)
    for i in range(1, 120):
        log(event(i))
    log.close()
    written = lines(tiny_disk / "events.jsonl")
    assert [e["t"] for e in written] == [float(i) for i in range(len(written))] and 1 < len(written) < 120


# --- a live game --------------------------------------------------------------------------------------------


class Play:
    """A ``moderator play`` subprocess whose output is read as it comes."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "moderator", "play", *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.out: list[str] = []
        self.err: list[str] = []
        self._new: queue.Queue[tuple[str, str]] = queue.Queue()
        for name, stream in (("out", self.proc.stdout), ("err", self.proc.stderr)):
            threading.Thread(target=self._read, args=(name, stream), daemon=True).start()

    def _read(self, name: str, stream: IO[str]) -> None:
        for line in stream:
            self._new.put((name, line))

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def wait_for(self, text: str, stream: str = "out", count: int = 1, timeout: float = 20.0) -> None:
        """Wait until ``text`` has appeared ``count`` times on stdout or stderr (the process's output, not a timer)."""
        end = time.monotonic() + timeout
        while sum(text in line for line in getattr(self, stream)) < count:
            try:
                name, line = self._new.get(timeout=max(0.0, end - time.monotonic()))
            except queue.Empty:
                self.proc.kill()
                pytest.fail(f"no {text!r} on std{stream}:\n{''.join(self.out)}\n{''.join(self.err)}")
            getattr(self, name).append(line)

    def quit(self) -> int:
        self.send("quit")
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGKILL)
            raise
        self.wait_for("Game", timeout=5)  # its last line
        return self.proc.returncode


def test_a_game_whose_disk_fills_up_goes_on_and_catches_up(tiny_disk: Path) -> None:
    state, events = tiny_disk / "game.json", tiny_disk / "events.jsonl"
    game = Play("--players", PLAYERS, "--seed", "3", "--state", str(state), "--events", str(events))
    game.wait_for("(game saved to")
    rooms = Journal(state).load().state["rooms"]
    a, b = rooms["A"]["members"], rooms["B"]["members"]
    game.send("start the game")
    game.wait_for("Round 1.")

    # Full: the leaders are appointed, announced, and kept in memory.
    filler = fill(tiny_disk)
    game.send(f"A: I appoint {a[0]} as leader")
    game.wait_for(f"{a[0]} is the leader of room A.")
    game.wait_for("saving the game failed", stream="err")
    game.send(f"B: I appoint {b[0]} as leader")
    game.wait_for(f"{b[0]} is the leader of room B.")
    game.send("A: how much time is left")
    game.wait_for("left in round 1.")
    assert Journal(state).load().state["rooms"]["A"]["leader"] is None, "nothing could be saved"
    filler.unlink()  # and within a second (the heartbeat), the game is saved again
    game.wait_for("saving works again", stream="err")
    saved = Journal(state).load().state
    assert (saved["rooms"]["A"]["leader"], saved["rooms"]["B"]["leader"]) == (a[0], b[0])

    # Full again, for the offer; then room on the disk again.
    filler = fill(tiny_disk)
    game.send(f"A: {a[0]} offers leadership to {a[1]}")
    game.wait_for(f"{a[0]} offers leadership to {a[1]}.")
    game.wait_for("saving the game failed", stream="err", count=2)
    filler.unlink()
    game.wait_for("saving works again", stream="err", count=2)
    assert Journal(state).load().state["rooms"]["A"]["offer"] == [a[0], a[1]]
    game.send(f"A: {a[1]} accepts")
    game.wait_for(f"{a[1]} is the new leader of room A.")
    assert game.quit() == 0

    err = "".join(game.err)
    assert "Traceback" not in err and "internal error" not in err, err
    assert err.count("saving the game failed") == 2 and "No space left on device" in err
    assert err.count("cannot write the event log") == err.count("is written again")
    logged = lines(events)
    leaders = [(e["room"], e["player"], e["how"]) for e in logged if e["type"] == "leader"]
    assert leaders == [("A", a[0], "appointed"), ("B", b[0], "appointed"), ("A", a[1], "abdicated")]
    assert [e["t"] for e in logged] == sorted(e["t"] for e in logged)


def test_a_game_whose_state_directory_turns_read_only_goes_on_and_catches_up(tiny_disk: Path) -> None:
    """In-process, on a virtual clock: a filesystem cannot be made read-only while a process (the lock file) writes
    to it, so this game holds no lock; the journal and its disk are real."""
    from test_live_saving import live

    journal = Journal(tiny_disk / "game.json")
    game, err = live(journal)
    remount(tiny_disk, "ro")
    try:
        game.feed("I appoint Alice as leader")
        assert game.engine.state.rooms["A"].leader == "Alice"
        assert "saving the game failed (cannot save the game to" in err.getvalue()
        assert "Read-only file system" in err.getvalue()
        game.clock.set(5.0)  # type: ignore[attr-defined]
        game.tick()  # the heartbeat retries, and fails again: said once
        assert err.getvalue().count("saving the game failed") == 1
    finally:
        remount(tiny_disk, "rw")
    game.clock.set(6.5)  # type: ignore[attr-defined]
    game.tick()
    assert "saving works again" in err.getvalue()
    assert Journal(journal.path).load().state["rooms"]["A"]["leader"] == "Alice"
    assert not list(tiny_disk.glob(".game-*.tmp")), "no temporary file was left"


def test_a_game_logging_to_dev_full_plays_on_with_one_warning(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "moderator", "play", "--players", PLAYERS, "--state",
                           str(tmp_path / "game.json"), "--events", "/dev/full"],
                          input="start the game\nhow much time is left\nstatus\nquit\n", capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ("moderator: warning: cannot write the event log /dev/full: No space left on device; the "
                           "game goes on, and its events are kept and written as soon as the log can take them\n")
    assert "3 minutes left in round 1." in done.stdout
    assert "the event log is not being written" in done.stdout, "the host's view shows it"


def test_a_game_started_on_a_full_disk_is_played_and_says_at_the_end_what_was_not_saved(tiny_disk: Path) -> None:
    from test_play_saved_game import play

    fill(tiny_disk)
    state = tiny_disk / "game.json"
    status, out, err = play("--players", PLAYERS, "--state", str(state), stdin="start the game\nquit\n")
    assert status == 0, err
    assert err.count("saving the game failed") == 1 and "No space left on device" in err
    assert "Round 1." in out and "(game saved to" not in out
    assert out.rstrip().endswith(f"The latest changes could not be saved (cannot save the game to {state}: No space "
                                 "left on device); nothing of it was saved.")
    assert not state.exists() and not list(tiny_disk.glob(".game-*.tmp"))
