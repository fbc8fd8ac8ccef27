"""The save file (issue 15): checked against the game's invariants on load, held by one process, its heartbeat,
the files a kill leaves behind, and what a new game may replace. No process is started and nothing sleeps."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from tests_support import eight_player_engine

from moderator.errors import JournalError
from moderator.journal import Journal, Saved


def mid_round() -> Saved:
    """Round 1 running with 100 s left, room A led by Alice; saved at game time 80."""
    engine = eight_player_engine()
    engine.begin()
    assert engine.handle_text("start the game", "A")
    assert engine.handle_text("I appoint Alice as leader", "A")
    engine.clock.set(80.0)  # type: ignore[attr-defined]
    return Saved(engine.snapshot(), epoch=1_700_000_000.0, saved_at=80.0, lang="en", events=None, game="g1",
                 options={"read_back": "always"})


def saved_file(tmp_path: Path, change: Callable[[dict[str, Any]], None] | None = None) -> Path:
    path = tmp_path / "game.json"
    Journal(path).save(mid_round())
    if change is not None:
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data))
    return path


def test_a_saved_game_reads_back_as_it_was_written(tmp_path: Path) -> None:
    path = saved_file(tmp_path)
    saved = Journal(path).load()
    assert saved == mid_round()
    assert not saved.finished
    assert saved.describe() == ("8 players: Alice, Bob, Carol, Dave, Erin, Frank, Grace, Heidi; round 1 of 3; saved "
                                f"{datetime.fromtimestamp(1_700_000_080.0):%Y-%m-%d %H:%M}")


def _set(*keys: str | int, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        node = data
        for key in keys[:-1]:
            node = node[key]
        node[keys[-1]] = value  # type: ignore[index]
    return change


def _both_rooms(data: dict[str, Any]) -> None:
    data["state"]["rooms"]["B"]["members"].append("Alice")


def _deep(data: dict[str, Any]) -> None:
    data["state"]["plan"] = json.loads("[" * 900 + "]" * 900)


DAMAGED = [
    # (what is wrong, the change, the field the message names, what it says)
    ("a leader who is not in the game", _set("state", "rooms", "A", "leader", value="Zed"),
     "state.rooms.A.leader", "'Zed' is not in room A"),
    ("a leader from the other room", _set("state", "rooms", "B", "leader", value="Alice"),
     "state.rooms.B.leader", "'Alice' is not in room B"),
    ("a player in both rooms", _both_rooms, "state.rooms.B.members", "'Alice' is in both rooms"),
    ("a room member who is not a player", _set("state", "players", 7, value="Zed"),
     "state.rooms.B.members", "'Heidi' is not a player"),
    ("an empty room", _set("state", "rooms", "A", "members", value=[]), "state.rooms.A.members", "the room is empty"),
    ("members: null", _set("state", "rooms", "A", "members", value=None), "state.rooms.A.members", "must be a list"),
    ("round -1", _set("state", "round", value=-1), "state.round", "must be from 0 to 3"),
    ("round 99", _set("state", "round", value=99), "state.round", "must be from 0 to 3"),
    ("round 0 mid-round", _set("state", "round", value=0), "state.round", "does not fit the phase"),
    ("round true", _set("state", "round", value=True), "state.round", "must be a whole number"),
    ('hostages: "Bob"', _set("state", "rooms", "A", "hostages", value="Bob"), "state.rooms.A.hostages",
     "must be a list"),
    ("hostages locked mid-round", _set("state", "rooms", "A", "hostages", value=["Bob"]), "state.rooms.A.hostages",
     "locked exactly"),
    ("a NaN epoch", _set("epoch", value=math.nan), "epoch", "must be a finite number"),
    ("epoch: Infinity", _set("epoch", value=math.inf), "epoch", "must be a finite number"),
    ('deadline: "soon"', _set("state", "deadline", value="soon"), "state.deadline", "must be a finite number"),
    ("a deadline with no end", _set("state", "deadline", value=1e12), "state.deadline", "more than the round's 180 s"),
    ("no deadline while the round runs", _set("state", "deadline", value=None), "state.deadline", "is set exactly"),
    ("machine: 5", _set("state", "machine", value=5), "state.machine", "5 is not a state of the game"),
    ("a machine state that does not exist", _set("state", "machine", value="round.sleeping"), "state.machine",
     "not a state of the game"),
    ("plan: {}", _set("state", "plan", value={}), "state.plan.players", "is missing"),
    ("a round of no length", _set("state", "plan", "rounds", 0, "seconds", value=0), "state.plan.rounds[0].seconds",
     "must be from 1"),
    ("JSON nested far too deep", _deep, "state.plan", "must be an object"),
    ("saved_at: null", _set("saved_at", value=None), "saved_at", "must be a finite number"),
    ("a language that does not exist", _set("lang", value="xx"), "lang", "'xx' is not a language"),
    ("read_back: sometimes", _set("options", "read_back", value="sometimes"), "options.read_back", "must be one of"),
    ("an unknown field", _set("state", "bonus", value=1), "state", "unknown field 'bonus'"),
    ("events: 5", _set("events", value=5), "events", "must be a non-empty string"),
    ("a president who is not a player", _set("state", "president", value="Zed"), "state.president",
     "'Zed' is not a player"),
]


@pytest.mark.parametrize(("change", "field", "says"), [d[1:] for d in DAMAGED], ids=[d[0] for d in DAMAGED])
def test_a_damaged_save_is_refused_naming_the_file_and_the_field_and_is_left_as_it_is(
        tmp_path: Path, change: Callable[[dict[str, Any]], None], field: str, says: str) -> None:
    path = saved_file(tmp_path, change)
    before = path.read_bytes()
    with pytest.raises(JournalError) as info:
        Journal(path).load()
    message = str(info.value)
    assert message.startswith(f"the saved game {path} is damaged: {field}: "), message
    assert says in message and "\n" not in message
    assert path.read_bytes() == before


def test_json_nested_thousands_deep_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    path.write_text('{"format": 1, "state": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(JournalError, match=f"^the saved game {path} is damaged: it is nested too deeply$"):
        Journal(path).load()


@pytest.mark.parametrize(("text", "says"), [
    ("", "is damaged: not JSON"), ("[1, 2]", "is not a saved game of this version"),
    ('{"format": 2}', "is not a saved game of this version"), ("\xff", "is damaged: not JSON")])
def test_what_is_not_a_save_file_says_so(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "game.json"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(JournalError, match=says):
        Journal(path).load()


def test_a_huge_file_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    with path.open("wb") as fh:
        fh.truncate(9 * 1024 * 1024)
    with pytest.raises(JournalError, match="is too large to be a saved game"):
        Journal(path).load()


# --- one process at a time --------------------------------------------------------------------------------


def test_a_locked_game_is_refused_to_a_second_holder_naming_the_first(tmp_path: Path) -> None:
    path = saved_file(tmp_path)
    first, second = Journal(path), Journal(path)
    first.lock()
    try:
        with pytest.raises(JournalError) as info:
            second.lock()
        assert str(info.value) == f"this game is open in another moderator (pid {os.getpid()}): {path}"
    finally:
        first.unlock()
    second.lock()  # released: now it may
    second.unlock()


# --- the heartbeat ---------------------------------------------------------------------------------------


def test_the_heartbeat_is_the_time_a_game_was_last_known_to_run(tmp_path: Path) -> None:
    path = saved_file(tmp_path)  # saved at 80
    journal = Journal(path)
    journal.lock()
    assert journal.beat("g1", 84.5)
    journal.unlock()  # as a kill -9 would: the lock file and its heartbeat stay
    assert Journal(path).load().saved_at == 84.5
    again = Journal(path)
    again.lock()  # the next moderator keeps the heartbeat it found until its own first one
    assert again.load().saved_at == 84.5
    assert again.beat("another game", 99.0)
    assert again.load().saved_at == 80.0, "another game's heartbeat says nothing of this one"
    again.unlock()


def test_a_heartbeat_without_the_lock_is_not_written(tmp_path: Path) -> None:
    journal = Journal(saved_file(tmp_path))
    assert not journal.beat("g1", 90.0)
    assert journal.load().saved_at == 80.0


@pytest.mark.parametrize("record", [b"", b"garbage", b'{"pid": 1, "game": "g1", "t": "late"}',
                                    b'{"pid": 1, "game": "g1", "t": NaN}', b'{"pid": 1, "game": "g1", "t": 70.0}'])
def test_a_heartbeat_that_is_damaged_or_older_than_the_save_is_ignored(tmp_path: Path, record: bytes) -> None:
    path = saved_file(tmp_path)
    path.with_name("game.json.lock").write_bytes(record)
    assert Journal(path).load().saved_at == 80.0


# --- leftovers and backups -------------------------------------------------------------------------------------


def test_temporary_files_of_a_cut_save_are_removed_and_no_one_elses(tmp_path: Path) -> None:
    path = saved_file(tmp_path)
    ours = [tmp_path / ".game-abcd1234.tmp", tmp_path / ".game-x_y9zzzz.tmp"]
    others = [tmp_path / ".game-1-abcd1234.tmp", tmp_path / ".other-abcd1234.tmp", tmp_path / "notes.tmp"]
    for p in ours + others:
        p.write_text("{")
    assert sorted(Journal(path).remove_leftovers()) == sorted(ours)
    assert all(p.exists() for p in others) and not any(p.exists() for p in ours)


def test_a_backup_is_named_with_the_time_and_never_replaces_another(tmp_path: Path) -> None:
    path = saved_file(tmp_path)
    at = datetime(2025, 6, 14, 21, 30, 5)
    first = Journal(path).back_up(at)
    assert first == tmp_path / "game.20250614-213005.json" and not path.exists()
    saved_file(tmp_path)
    assert Journal(path).back_up(at) == tmp_path / "game.20250614-213005-2.json"
    assert json.loads(first.read_text())["state"]["players"][0] == "Alice"


def test_what_a_new_game_may_replace(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "game.json")
    assert journal.claim(new=False) is False, "nothing there"
    saved_file(tmp_path)
    with pytest.raises(JournalError, match=r"an unfinished game is saved in .*game.json \(8 players: Alice, .*; "
                       r"round 1 of 3; saved .*\): continue it with 'moderator play --resume --state .*', or add "
                       r"--new to start a new game"):
        journal.claim(new=False)
    assert journal.claim(new=True) is True, "--new: kept aside first"
    (tmp_path / "game.json").write_text("{}")
    with pytest.raises(JournalError, match="is not a saved game of this version of moderator; to start a new game"):
        journal.claim(new=False)
    assert journal.claim(new=True) is True
    journal.save(finished())
    assert journal.claim(new=False) is False, "a finished game is replaced without asking"


def finished() -> Saved:
    """The packaged 8-player scenario, played to its result."""
    from moderator.scenario import load_scenario
    from moderator.simulate import run_scenario
    from moderator.speech.catalog import load_catalog
    from moderator.speech.grammar import load_grammar

    engine = run_scenario(load_scenario(Path("eight_players")), grammar=load_grammar(), catalog=load_catalog())
    assert engine.in_state("result")
    return Saved(engine.snapshot(), epoch=1_700_000_000.0, saved_at=engine.clock.now(), lang="en", events=None)
