"""``moderator play`` and the saved game (issue 15): a new game never silently replaces an unfinished one, a
damaged save is refused and left as it is, a resumed game keeps its settings and writes no file it was not
told to, and an event log that cannot be written does not stop the game. In-process: ``cli.main`` with
in-memory streams."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest

from moderator import cli
from moderator.adapters.clock import VirtualClock
from moderator.env import Environment
from moderator.game.engine import Engine
from moderator.game.rules import make_plan
from moderator.journal import Journal, Saved
from moderator.speech.catalog import load_catalog
from moderator.speech.grammar import load_grammar

PLAYERS = "Alice,Bob,Carol,Dave,Erin,Frank,Grace,Heidi"


def play(*argv: str, stdin: str = "quit\n") -> tuple[int, str, str]:
    """Run ``moderator play`` in-process; return (status, stdout, stderr)."""
    env = Environment(stdin=io.StringIO(stdin), stdout=io.StringIO(), stderr=io.StringIO())
    status = cli.main(["play", *argv], env)
    return status, env.stdout.getvalue(), env.stderr.getvalue()  # type: ignore[attr-defined]


def started(state: Path, *argv: str) -> dict:
    status, _, err = play("--players", PLAYERS, "--seed", "1", "--state", str(state), *argv,
                          stdin="start the game\nquit\n")
    assert status == 0, err
    return json.loads(state.read_text())


# --- a new game over a saved one -------------------------------------------------------------------------------


def test_a_new_game_refuses_to_replace_an_unfinished_one_and_names_it(tmp_path: Path) -> None:
    state = tmp_path / "g.json"
    first = started(state)
    before = state.read_bytes()
    status, _, err = play("--players", "Zed,Yan,Xia,Wim,Vic,Uma", "--state", str(state))
    assert status == 1
    assert err.count("\n") == 1 and err.startswith(f"moderator: error: an unfinished game is saved in {state} (")
    names = ", ".join(first["state"]["players"])
    assert f"(8 players: {names}; round 1 of 3; saved " in err
    assert f"({Journal(state).load().describe()})" in err  # when: the save's time, or its last heartbeat
    assert f"continue it with 'moderator play --resume --state {state}', or add --new" in err
    assert state.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json", "g.json.lock"]


def test_new_keeps_the_unfinished_game_beside_it_and_starts_afresh(tmp_path: Path) -> None:
    state = tmp_path / "g.json"
    started(state)
    before = state.read_bytes()
    status, out, err = play("--players", "Zed,Yan,Xia,Wim,Vic,Uma", "--state", str(state), "--new")
    assert status == 0, err
    backups = sorted(tmp_path.glob("g.2*.json"))
    assert len(backups) == 1 and backups[0].read_bytes() == before
    assert f"(the earlier game is kept in {backups[0]})" in out
    assert json.loads(state.read_text())["state"]["players"] != json.loads(before)["state"]["players"]
    assert sorted(Journal(state).load().state["players"]) == ["Uma", "Vic", "Wim", "Xia", "Yan", "Zed"]


def test_a_finished_game_is_replaced_without_asking(tmp_path: Path) -> None:
    from test_journal import finished

    state = tmp_path / "g.json"
    Journal(state).save(finished())
    status, _, err = play("--players", PLAYERS, "--state", str(state))
    assert status == 0, err
    assert Journal(state).load().state["machine"] == "briefing"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json", "g.json.lock"], "no backup of a finished game"


def test_a_file_that_is_not_a_saved_game_is_not_replaced_without_new(tmp_path: Path) -> None:
    state = tmp_path / "notes.json"
    state.write_text('{"shopping": ["eggs"]}')
    status, _, err = play("--players", PLAYERS, "--state", str(state))
    assert status == 1 and err.count("\n") == 1
    assert f"{state} is not a saved game of this version of moderator; to start a new game here anyway, add --new" \
        in err
    assert state.read_text() == '{"shopping": ["eggs"]}'


@pytest.mark.parametrize(("argv", "message"), [
    (["--players", PLAYERS, "--paused"], "--paused goes with --resume"),
    (["--resume", "--new"], "--new starts a new game, --resume continues the saved one"),
])
def test_options_that_do_not_go_together_with_a_saved_game_exit_2(tmp_path: Path, argv: list[str],
                                                                  message: str) -> None:
    status, _, err = play(*argv, "--state", str(tmp_path / "g.json"))
    assert status == 2 and err.startswith("moderator: error: ") and message in err
    assert not list(tmp_path.iterdir()), "nothing was written"


# --- resuming --------------------------------------------------------------------------------------------------


def test_a_damaged_save_is_refused_on_resume_in_one_line_and_left_as_it_is(tmp_path: Path) -> None:
    state = tmp_path / "g.json"
    data = started(state)
    data["state"]["rooms"]["A"]["leader"] = "Zed"
    state.write_text(json.dumps(data))
    before = state.read_bytes()
    status, _, err = play("--resume", "--state", str(state))
    assert status == 1
    assert err == (f"moderator: error: the saved game {state} is damaged: state.rooms.A.leader: 'Zed' is not in "
                   "room A\n")
    assert state.read_bytes() == before


def test_a_resumed_game_writes_its_old_event_log_only_when_told(tmp_path: Path) -> None:
    state, events = tmp_path / "g.json", tmp_path / "events.jsonl"
    started(state, "--events", str(events))
    logged = events.read_text()
    status, out, err = play("--resume", "--state", str(state), stdin="how much time is left\nquit\n")
    assert status == 0, err
    assert events.read_text() == logged, "a path read from the save file is not written"
    assert (f"(the saved game logged its events to {events}; to go on logging them there, resume with --events "
            f"{events})") in out
    status, out, err = play("--resume", "--state", str(state), "--events", str(events),
                            stdin="how much time is left\nquit\n")
    assert status == 0, err
    assert events.read_text().startswith(logged) and len(events.read_text()) > len(logged)
    assert "the saved game logged its events" not in out


def at_hostages(state: Path, options: dict) -> None:
    """A saved game at the end of round 1, both rooms led: the leaders name their hostages now."""
    rooms = {"A": ["Alice", "Bob", "Carol", "Dave"], "B": ["Erin", "Frank", "Grace", "Heidi"]}
    engine = Engine.new(make_plan(8), rooms, clock=VirtualClock(), grammar=load_grammar(), catalog=load_catalog())
    engine.begin()
    assert engine.handle_text("start the game")
    assert engine.handle_text("I appoint Alice as leader", "A")
    assert engine.handle_text("I appoint Erin as leader", "B")
    engine.clock.set(181.0)  # type: ignore[attr-defined]
    engine.tick()
    assert engine.in_state("hostages")
    Journal(state).save(Saved(engine.snapshot(), epoch=time.time() - 200, saved_at=181.0, lang="en", events=None,
                              game="g1", options=options))


@pytest.mark.parametrize(("again", "reads_back"), [([], True), (["--read-back", "never"], False)])
def test_a_resumed_game_keeps_its_read_back_unless_told_otherwise(tmp_path: Path, again: list[str],
                                                                   reads_back: bool) -> None:
    state = tmp_path / "g.json"
    at_hostages(state, {"read_back": "always"})
    status, out, err = play("--resume", "--state", str(state), *again, stdin="A: hostage Bob\nquit\n")
    assert status == 0, err
    assert ('Room A, I heard Bob. Say "yes" to lock' in out) is reads_back, out
    assert (Journal(state).load().state["rooms"]["A"]["hostages"] is None) is reads_back


def test_read_back_and_the_schedule_are_saved_with_the_game(tmp_path: Path) -> None:
    settings = tmp_path / "settings.yaml"
    settings.write_text("schedule:\n  warnings: [90, 20]\n  countdown: 3\n  leader_nag: 0\n")
    state = tmp_path / "g.json"
    data = started(state, "--read-back", "always", "--settings", str(settings))
    assert data["options"] == {"read_back": "always",
                               "schedule": {"warnings": [90, 20], "countdown": 3, "leader_nag": 0}}
    status, _, err = play("--resume", "--state", str(state))
    assert status == 0, err
    assert json.loads(state.read_text())["options"] == data["options"], "a resume without the options keeps them"


def test_leftovers_of_a_save_cut_by_a_kill_are_removed_at_the_next_start(tmp_path: Path) -> None:
    state = tmp_path / "g.json"
    started(state)
    leftover = tmp_path / ".g-k1ll3d_1.tmp"
    leftover.write_text('{"format": 1, "epo')
    status, _, err = play("--resume", "--state", str(state))
    assert status == 0, err
    assert not leftover.exists()


# --- the event log ---------------------------------------------------------------------------------------------


def test_an_event_log_on_a_full_device_warns_once_and_the_game_goes_on(tmp_path: Path) -> None:
    state = tmp_path / "g.json"
    status, out, err = play("--players", PLAYERS, "--state", str(state), "--events", "/dev/full",
                            stdin="start the game\nA: how much time is left\nB: how much time is left\nquit\n")
    assert status == 0, err
    assert err == ("moderator: warning: cannot write the event log /dev/full: No space left on device; the game "
                   "goes on, and its events are kept and written as soon as the log can take them\n")
    assert out.count("3 minutes left in round 1.") == 2
    assert Journal(state).load().state["round"] == 1


def test_an_event_log_that_is_not_a_file_to_append_to_is_one_line(tmp_path: Path) -> None:
    status, _, err = play("--players", PLAYERS, "--state", str(tmp_path / "g.json"), "--events", "/proc/version")
    assert (status, err) == (1, "moderator: error: cannot write the event log /proc/version: Invalid argument\n")
