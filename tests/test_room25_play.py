"""``moderator play --game room25``: a typed game through the live loop, saved and logged; bad set-ups are one
clear line with the exit status of moderator/errors.py."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from moderator.cli import main
from moderator.env import Environment

FOUR = "Ann,Ben,Cal,Dan"


def play(tmp_path: Path, *args: str, lines: str = "") -> tuple[int, Environment]:
    env = Environment(stdin=io.StringIO(lines), stdout=io.StringIO(), stderr=io.StringIO())
    code = main(["play", "--game", "room25", "--state", str(tmp_path / "game.json"), *args], env=env)
    return code, env


def test_a_typed_game_runs_through_the_live_loop_to_its_result(tmp_path: Path) -> None:
    lines = "\n".join(["start the game", "Ann programmed", "status", "everyone programmed", "done",
                       "Ben is dead", "Dan was killed", "Ben is a prisoner", "Dan is a prisoner"]) + "\n"
    events = tmp_path / "events.jsonl"
    code, env = play(tmp_path, "--mode", "suspicion", "--guards", "1", "--players", FOUR, "--events", str(events),
                     lines=lines)
    assert code == 0, env.stderr.getvalue()
    out = env.stdout.getvalue()
    assert "[both] Ann, your first action." in out and "Game over. Thanks for playing!" in out
    assert "Room 25 · suspicion · turn 1 of 10 · programming" in out  # "status"
    logged = [json.loads(line) for line in events.read_text().splitlines()]
    kept = ("reveal_required", "result")
    assert [(e["type"], e.get("player"), e.get("reason")) for e in logged if e["type"] in kept] == [
        ("reveal_required", "Ben", "second_death"), ("reveal_required", "Dan", "first_killed_prisoner"),
        ("result", None, "two_prisoners_killed")]
    saved = json.loads((tmp_path / "game.json").read_text())
    assert saved["state"]["machine"] == "result" and saved["state"]["plan"]["game"] == "room25"


def test_an_unfinished_game_is_not_replaced_without_new_and_resumes(tmp_path: Path) -> None:
    args = ("--mode", "cooperation", "--players", FOUR)
    assert play(tmp_path, *args, lines="start the game\nAnn programmed\nBen reached room 25\n")[0] == 0
    code, env = play(tmp_path, *args)
    assert code == 1 and "add --new" in env.stderr.getvalue() and "--game room25 --resume" in env.stderr.getvalue()
    code, env = play(tmp_path, "--resume", lines="Ann programmed\neveryone programmed\nstatus\n")
    out = env.stdout.getvalue()
    assert code == 0, env.stderr.getvalue()
    assert "[both] The game is back after an interruption." in out and "Turn 1 of 8: 8 turns left" in out
    assert "[both] Ann already programmed." in out and "[both] Ann, your first action." in out
    assert "Room 25: Ben" in out  # the view ("status"): what was tracked before the stop
    # A Two Rooms "play --resume" finds the Room 25 game too.
    env = Environment(stdin=io.StringIO("done\n"), stdout=io.StringIO(), stderr=io.StringIO())
    assert main(["play", "--resume", "--state", str(tmp_path / "game.json")], env=env) == 0
    assert "[both] Ben, your first action." in env.stdout.getvalue()
    code, env = play(tmp_path, *args, "--new")
    assert code == 0 and "the earlier game is kept in" in env.stdout.getvalue()


@pytest.mark.parametrize(("args", "status", "message"), [
    (("--mode", "suspicion", "--guards", "1", "--players", "Ann,Ben,Cal"), 1, "for 4 to 8 characters, not 3"),
    (("--mode", "cooperation", "--guards", "1", "--players", FOUR), 2, "cooperation mode has no guards"),
    (("--mode", "cooperation", "--players", "A,B,C,D,E,F,G"), 1, "stops at 6 characters"),
    (("--mode", "suspicion", "--players", FOUR), 2, "needs --guards 1 or 2"),
    (("--players", FOUR), 2, "needs --mode"),
    (("--mode", "suspicion", "--guards", "1", "--players", FOUR, "--room-a-in", "1"), 2, "its microphone with --mic"),
    (("--mode", "suspicion", "--guards", "1", "--resume"), 2, "leave out --mode, --guards"),
    (("--mode", "suspicion", "--guards", "1", "--players", FOUR, "--web", "127.0.0.1:0"), 2, "no Room 25 pages"),
    (("--resume",), 1, "there is no saved game"),
])
def test_bad_set_ups_are_one_clear_line(tmp_path: Path, args: tuple[str, ...], status: int,
                                        message: str | None) -> None:
    code, env = play(tmp_path, *args)
    err = env.stderr.getvalue().strip().splitlines()
    assert code == status
    if message is not None:
        assert len(err) == 1 and message in err[0], err


def test_room25_options_need_the_game(tmp_path: Path) -> None:
    env = Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())
    assert main(["play", "--mode", "suspicion", "--players", "A,B,C,D,E,F"], env=env) == 2
    assert "--mode is a Room 25 option: add --game room25" in env.stderr.getvalue()


@pytest.mark.parametrize(("field", "value", "message"), [
    ("machine", "turn.nowhere", "state.machine: 'turn.nowhere' is not a state of Room 25"),
    ("dead", ["Zed"], "state.dead: must list players of the game"),
    ("turn", 11, "state.turn: must be 0 to 10"),
])
def test_a_damaged_room25_save_is_refused_naming_the_field(tmp_path: Path, field: str, value: object,
                                                           message: str) -> None:
    assert play(tmp_path, "--mode", "suspicion", "--guards", "1", "--players", FOUR, lines="start the game\n")[0] == 0
    path = tmp_path / "game.json"
    data = json.loads(path.read_text())
    data["state"][field] = value
    path.write_text(json.dumps(data))
    code, env = play(tmp_path, "--resume")
    assert code == 1 and message in env.stderr.getvalue() and "damaged" in env.stderr.getvalue()


def test_a_two_rooms_game_never_replaces_an_unfinished_room25_save(tmp_path: Path) -> None:
    assert play(tmp_path, "--mode", "cooperation", "--players", FOUR, lines="start the game\n")[0] == 0
    env = Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())
    code = main(["play", "--players", "A1,B1,C1,D1,E1,F1", "--state", str(tmp_path / "game.json")], env=env)
    assert code == 1
    assert "an unfinished game is saved" in env.stderr.getvalue() and "Room 25, turn 1 of 8" in env.stderr.getvalue()
