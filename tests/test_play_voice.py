"""``moderator play`` with microphones: spoken commands reach the game on its own thread, a failed microphone
leaves the keyboard, set-up errors stop the game before it starts, and the real PulseAudio device path."""

from __future__ import annotations

import io
import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fake_recognizer import ScriptedRecognizer
from fake_sd_in import FakeInSD
from fakes import FakeAudioIn
from pulse import CTRL_C, PulseBench, dump_threads
from test_listen import PLAYERS, padded, spoken

from moderator import cli
from moderator.adapters.audio_system import AudioSystem
from moderator.env import Environment
from moderator.game.rules import split_rooms
from moderator.journal import Journal, Saved

#: A seed whose room split puts Alice in room A (checked below, so a change to the split shows here).
SEED = 3


def env(stdin: str = "", **factories: Any) -> Environment:
    """Streams for the CLI, and fakes for the factories of devices and engines (``Environment``'s)."""
    return Environment(stdin=io.StringIO(stdin), stdout=io.StringIO(), stderr=io.StringIO(), **factories)


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_the_seed_puts_alice_in_room_a() -> None:
    assert "Alice" in split_rooms(PLAYERS.split(","), random.Random(SEED))[0]


class LateMic(FakeAudioIn):
    """A fake microphone whose audio arrives on the second read (after the first typed line)."""

    def __init__(self, mics: tuple[str | None, ...]) -> None:
        super().__init__(mics)
        self.reads = 0

    def read(self, timeout: float = 0.0) -> list[Any]:
        self.reads += 1
        return [] if self.reads == 1 else super().read(timeout)


def test_a_spoken_command_reaches_the_game_and_a_failed_mic_leaves_the_keyboard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mic = LateMic(("A",))
    mic.push("A", padded(spoken("I appoint Alice as leader")))
    opened: list[Any] = []

    def open_mics(devices: Any, clock: Any, log: Any, system: Any) -> FakeAudioIn:
        opened.append(devices.room_a_in)
        return mic

    recognizer = ScriptedRecognizer(["i appoint alice as leader"])
    state, log = tmp_path / "game.json", tmp_path / "events.jsonl"
    e = env("start the game\nstatus\nA: 3 votes for Heidi\nstatus\n", open_mics=open_mics,
            make_recognizer=lambda engine, model, acoustic, **kw: recognizer)
    original_read = mic.read

    def read(timeout: float = 0.0) -> list[Any]:
        chunks = original_read(timeout)
        if mic.reads == 3:
            mic.fail("A")  # the microphone dies after the spoken command
        return chunks

    monkeypatch.setattr(mic, "read", read)
    saved_leaders: list[str | None] = []
    save = Journal.save

    def spy(self: Journal, saved: Saved) -> None:
        saved_leaders.append(saved.state["rooms"]["A"]["leader"])
        save(self, saved)

    monkeypatch.setattr(Journal, "save", spy)
    code = cli.main(["play", "--players", PLAYERS, "--seed", str(SEED), "--room-a-in", "USB", "--state", str(state),
                     "--events", str(log)], e)
    out = e.stdout.getvalue()
    assert code == 0, e.stderr.getvalue()
    assert opened == ["USB"]
    assert "(listening: room A, with scripted; typed commands work too)" in out
    assert "[room A heard] i appoint alice as leader (0.90)" in out
    assert "[room A] Alice is the leader of room A." in out
    got = events(log)
    assert {"type": "leader", "room": "A", "player": "Alice", "how": "appointed"}.items() <= next(
        ev for ev in got if ev["type"] == "leader").items()
    assert [leader for leader in dict.fromkeys(saved_leaders) if leader] == ["Alice", "Heidi"]  # each journaled
    first_status, second_status = out.split("round running")[1:3]
    assert "microphone is not working" not in first_status
    assert "room A's microphone is not working: type its commands as 'A: ...'" in second_status
    assert [ev["player"] for ev in got if ev["type"] == "leader"] == ["Alice", "Heidi"]  # typed after the failure
    assert recognizer.expected[0] is None  # every name and command compiled before the game
    assert mic.closed


def test_without_microphones_play_stays_keyboard_only(tmp_path: Path) -> None:
    def refuse(*args: Any) -> None:
        raise AssertionError("no microphone or recognizer may be opened")

    e = env("start the game\n", open_mics=refuse, make_recognizer=refuse)
    assert cli.main(["play", "--players", PLAYERS, "--state", str(tmp_path / "g.json")], e) == 0
    assert "listening" not in e.stdout.getvalue()
    assert "Round 1." in e.stdout.getvalue()


def test_a_resumed_game_listens_too(tmp_path: Path) -> None:
    state = tmp_path / "game.json"
    assert cli.main(["play", "--players", PLAYERS, "--seed", str(SEED), "--state", str(state)],
                    env("start the game\nquit\n")) == 0
    mic = LateMic((None,))
    mic.push(None, padded(spoken("pause")))
    e = env("status\nstatus\n", open_mics=lambda args, clock, log, system: mic,
            make_recognizer=lambda engine, model, acoustic, **kw: ScriptedRecognizer(["pause"]))
    assert cli.main(["play", "--resume", "--mic", "default", "--state", str(state)], e) == 0, e.stderr.getvalue()
    assert "(listening: one microphone for both rooms" in e.stdout.getvalue()
    assert "round paused" in e.stdout.getvalue()
    assert mic.closed


# --- clear errors before the game starts ---------------------------------------------------------------------------


def refused_before_the_game(tmp_path: Path, *args: str, status: int = 1, audio: AudioSystem | None = None) -> str:
    """Run play with ``args``; it must fail with ``status`` (1: at run time, 2: a usage error), having
    started, said and saved nothing."""
    state = tmp_path / "game.json"
    e = env("start the game\n")
    if audio is not None:
        e.audio = audio
    code = cli.main(["play", "--players", PLAYERS, "--state", str(state), "--events", str(tmp_path / "ev.jsonl"),
                     *args], e)
    assert code == status
    assert e.stdout.getvalue() == ""
    assert not state.exists() and not (tmp_path / "ev.jsonl").exists()
    return e.stderr.getvalue()


def test_an_unknown_microphone_is_an_error_that_lists_them(tmp_path: Path) -> None:
    fake = AudioSystem(sounddevice=FakeInSD, pulse=lambda: None)  # no Pulse server: PortAudio only
    err = refused_before_the_game(tmp_path, "--room-a-in", "USB Mic", "--room-b-in", "nope", "--engine",
                                  "pocketsphinx", audio=fake)
    assert err == ("moderator: error: unknown input device (microphone) 'nope'; available: 0 pulse, 2 USB Mic, "
                   "3 Webcam Mic, 4 default\n")
    err = refused_before_the_game(tmp_path, "--mic", "USB Mic", "--room-b-in", "Webcam", "--engine", "pocketsphinx",
                                  status=2, audio=fake)
    assert "--mic is one microphone for both rooms" in err


def test_a_missing_vosk_model_is_an_error(tmp_path: Path) -> None:
    err = refused_before_the_game(tmp_path, "--mic", "0", "--engine", "vosk", "--vosk-model", str(tmp_path / "nope"))
    assert err.startswith(f"moderator: error: no usable vosk model at {tmp_path / 'nope'}")
    assert "moderator models download" in err


def test_names_a_vosk_model_cannot_hear_are_an_error_with_a_suggestion(tmp_path: Path) -> None:
    from test_vosk import ko_model_path

    err = refused_before_the_game(tmp_path, "--mic", "0", "--engine", "vosk", "--vosk-model", str(ko_model_path()))
    assert err.startswith("moderator: error: vosk:model cannot hear 8 of the names:\n  Alice: the speech model "
                          "does not know 'alice': use a nickname the model knows, or 'player seven'\n")
    assert "--engine pocketsphinx" in err


# --- the real device path: a spoken command through a PulseAudio pipe-source microphone -----------------------------


@pytest.mark.pulse
def test_a_command_spoken_into_a_real_microphone_makes_the_game_react(bench: PulseBench, tmp_path: Path) -> None:
    speech = spoken("I appoint Alice as leader")
    log = tmp_path / "events.jsonl"
    with bench.pipe_mic("micPlay") as mic:
        proc = subprocess.Popen(
            [*CTRL_C, sys.executable, "-m", "moderator", "play", "--players", PLAYERS, "--seed", str(SEED),
             "--room-a-in", "micPlay", "--engine", "pocketsphinx", "--events", str(log),
             "--state", str(tmp_path / "game.json")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=bench.env,
        )
        try:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write("start the game\n")
            proc.stdin.close()  # the end of typed input: the game goes on by voice
            while "game saved to" not in (line := proc.stdout.readline()):
                assert line, f"play ended early: {proc.stderr.read() if proc.stderr else ''}"
            mic.say(np.concatenate([np.zeros(8000, np.float32), speech]))
            deadline = time.monotonic() + 15
            while not any(ev["type"] == "leader" for ev in events(log)) and time.monotonic() < deadline:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                time.sleep(0.05)  # waits for the subprocess to hear and write, not for a game timer
            proc.send_signal(signal.SIGINT)  # the host stops the game
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                dump_threads(proc)
                raise AssertionError("play did not end within 20 s of Ctrl-C; its threads:\n"
                                     f"{proc.stderr.read() if proc.stderr else ''}") from None
            out, err = proc.stdout.read(), proc.stderr.read() if proc.stderr else ""
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted; the game is saved" in err
    got = events(log)
    leader = [ev for ev in got if ev["type"] == "leader"]
    assert [(ev["room"], ev["player"]) for ev in leader] == [("A", "Alice")], got
    heard = next(ev for ev in got if ev["type"] == "heard")
    assert (heard["room"], heard["text"]) == ("A", "i appoint alice as leader")
    assert "[room A heard] i appoint alice as leader" in out
