"""A real ``kill -9`` of ``moderator play`` mid-round, then ``--resume``: nothing may be lost."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from moderator.journal import Journal

PLAYERS = "Alice,Bob,Carol,Dave,Erin,Frank,Grace,Heidi"
pytestmark = pytest.mark.slow


class Game:
    """A ``moderator play`` subprocess driven through a pipe."""

    def __init__(self, state: Path, *args: str) -> None:
        self.state = state
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "moderator", "play", "--state", str(state), *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def saved(self) -> dict[str, Any]:
        return json.loads(self.state.read_text())

    def wait_saved(self, check: Any, timeout: float = 20.0) -> dict[str, Any]:
        """Wait for the process to journal a state that passes ``check`` (a process, not a timer)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.state.exists():
                try:
                    data = self.saved()
                except ValueError:  # pragma: no cover - the journal is replaced atomically
                    pytest.fail("the journal was read half-written")
                if check(data):
                    return data
            if self.proc.poll() is not None:
                pytest.fail(f"moderator play exited early: {self.proc.stderr.read() if self.proc.stderr else ''}")
            time.sleep(0.02)
        pytest.fail("the game was not saved in time")

    def kill9(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        assert self.proc.returncode == -signal.SIGKILL

    def finish(self) -> str:
        out, err = self.proc.communicate(timeout=30)
        assert self.proc.returncode == 0, err
        return out


def _backdate(state: Path, seconds: float) -> None:
    """The machine stays down ``seconds`` longer: game time is wall time minus the saved epoch."""
    journal = Journal(state)
    data = json.loads(state.read_text())
    data["epoch"] -= seconds
    journal.path.write_text(json.dumps(data))


def _seconds(text: str) -> int:
    m = re.search(r"(?:(\d+) minutes? ?)?(?:(\d+) seconds?)? left in round", text)
    assert m, text
    return int(m.group(1) or 0) * 60 + int(m.group(2) or 0)


def test_kill_mid_round_and_resume_with_time_charged(tmp_path: Path) -> None:
    state, events = tmp_path / "game.json", tmp_path / "events.jsonl"
    game = Game(state, "--players", PLAYERS, "--seed", "3", "--events", str(events))
    rooms = game.wait_saved(lambda d: d["state"]["machine"] == "briefing")["state"]["rooms"]
    a, b = rooms["A"]["members"], rooms["B"]["members"]
    game.send("start the game")
    game.send(f"A: {a[1]} appoints {a[0]} as leader")
    game.send(f"B: I appoint {b[0]} as leader")
    game.send(f"B: {b[0]} offers leadership to {b[1]}")
    before = game.wait_saved(lambda d: d["state"]["rooms"]["B"]["offer"] is not None)
    game.kill9()
    killed_at = time.time()

    # Down for 60 s more than the real gap.
    _backdate(state, 60)
    resumed = Game(state, "--resume", "--events", str(events))  # a resumed game logs only where it is told
    resumed.send(f"B: {b[1]} accepts")
    resumed.send("A: how much time is left")
    resumed.send("quit")
    out = resumed.finish()
    down = time.time() - killed_at + 60

    after = Journal(state).load().state
    assert after["rooms"]["A"]["leader"] == a[0]
    assert after["rooms"]["B"]["leader"] == b[1], "the open offer survived the crash and was accepted"
    assert after["rooms"]["A"]["members"] == a and after["rooms"]["B"]["members"] == b
    assert after["round"] == 1 and after["machine"] == "round.running"

    left_at_kill = before["state"]["deadline"] - before["saved_at"]
    answers = [line for line in out.splitlines() if "left in round" in line]
    assert answers, out
    for line in answers:
        # The answer is rounded up to the second; the gap between kill and answer is small but real.
        assert left_at_kill - down - 3 <= _seconds(line) <= left_at_kill - 60 + 1, (line, left_at_kill, down)

    log = [json.loads(line) for line in events.read_text().splitlines()]
    times = [e["t"] for e in log]
    assert times == sorted(times), "the resumed game continues the same timeline"
    leaders = [(e["room"], e["player"], e["how"]) for e in log if e["type"] == "leader"]
    assert leaders == [("A", a[0], "appointed"), ("B", b[0], "appointed"), ("B", b[1], "abdicated")]


def test_resume_paused_keeps_the_time_the_round_had_at_the_kill(tmp_path: Path) -> None:
    state = tmp_path / "game.json"
    game = Game(state, "--players", PLAYERS, "--seed", "4")
    game.send("start the game")
    before = game.wait_saved(lambda d: d["state"]["round"] == 1)
    # The round runs on with nothing to save: only the heartbeat records that it still runs. Real time passes
    # for the process (no game timer is waited for).
    time.sleep(2.5)
    game.kill9()
    left_at_kill = before["state"]["deadline"] - (time.time() - before["epoch"])
    assert left_at_kill < before["state"]["deadline"] - before["saved_at"] - 2, "the last save is 2.5 s older"
    _backdate(state, 90)
    resumed = Game(state, "--resume", "--paused")
    resumed.send("how much time is left")
    resumed.send("quit")
    out = resumed.finish()
    after = Journal(state).load().state
    assert after["machine"] == "round.paused"
    assert abs(after["remaining"] - left_at_kill) < 1.0, "the time at the kill, known within a second"
    answers = [line for line in out.splitlines() if "The game is paused with" in line]
    assert answers and all(abs(_seconds(line) - left_at_kill) <= 1.5 for line in answers), (answers, left_at_kill)


def test_a_second_moderator_cannot_open_a_running_game(tmp_path: Path) -> None:
    state = tmp_path / "game.json"
    game = Game(state, "--players", PLAYERS, "--seed", "7")
    game.wait_saved(lambda d: d["state"]["machine"] == "briefing")
    before = state.read_bytes()
    for argv in (["--resume"], ["--resume", "--paused"], ["--players", PLAYERS, "--new"]):
        second = subprocess.run([sys.executable, "-m", "moderator", "play", "--state", str(state), *argv],
                                input="start the game\nquit\n", capture_output=True, text=True, timeout=60)
        assert (second.returncode, second.stderr) == (
            1, f"moderator: error: this game is open in another moderator (pid {game.proc.pid}): {state}\n")
    assert state.read_bytes() == before and not list(tmp_path.glob("game.2*.json")), "nothing was touched"
    game.send("start the game")
    game.send("quit")
    game.finish()
    assert Journal(state).load().state["round"] == 1, "the first moderator's changes are all saved"
    after = subprocess.run([sys.executable, "-m", "moderator", "play", "--state", str(state), "--resume"],
                           input="quit\n", capture_output=True, text=True, timeout=60)
    assert after.returncode == 0, after.stderr  # once it has ended, the game may be resumed


def test_kill_during_hostage_selection_keeps_the_locked_choice(tmp_path: Path) -> None:
    state = tmp_path / "game.json"
    game = Game(state, "--players", PLAYERS, "--seed", "5")
    rooms = game.wait_saved(lambda d: d["state"]["machine"] == "briefing")["state"]["rooms"]
    a, b = rooms["A"]["members"], rooms["B"]["members"]
    game.send("start the game")
    game.send(f"I appoint {a[0]} as leader")
    game.send(f"I appoint {b[0]} as leader")
    game.wait_saved(lambda d: d["state"]["rooms"]["B"]["leader"] == b[0])
    game.kill9()

    # The machine was down past the end of round 1: time is up as soon as it is back.
    _backdate(state, 200)
    second = Game(state, "--resume")
    second.send(f"A: hostage {a[2]}")
    second.wait_saved(lambda d: d["state"]["rooms"]["A"]["hostages"] == [a[2]])
    second.kill9()

    third = Game(state, "--resume")
    third.send(f"B: hostage {b[1]}")  # room A's choice was locked before the crash: the parley starts now
    third.send("leaders have met")
    third.send("quit")
    out = third.finish()
    assert "Leaders, go to the hallway" in out
    after = Journal(state).load().state
    assert after["round"] == 2 and after["machine"] == "round.running"
    assert a[2] in after["rooms"]["B"]["members"] and b[1] in after["rooms"]["A"]["members"]


def test_play_speaks_into_a_timeline_and_says_the_last_words_before_it_stops(tmp_path: Path) -> None:
    from moderator.audio.clip import Clip, rms_db

    out = tmp_path / "audio"
    game = Game(tmp_path / "game.json", "--players", PLAYERS, "--seed", "6", "--audio-out", str(out),
                "--cache-dir", str(tmp_path / "cache"))
    game.send("start the game")
    game.send("A: how much time is left")
    game.send("quit")
    game.finish()
    timeline = json.loads((out / "timeline.json").read_text())
    room_a, room_b = Clip.read(out / "roomA.wav"), Clip.read(out / "roomB.wav")
    assert timeline["seconds"] > 10, "the briefing and the answer were all said (round 1 waits for the briefing)"
    assert rms_db(room_a.samples) > -40 and rms_db(room_b.samples) > -40
    # The answer to room A's question is heard in room A only, at the end of its timeline.
    tail = round(1.0 * room_a.rate)
    assert rms_db(room_a.samples[-tail:]) > rms_db(room_b.samples[-tail:]) + 20
