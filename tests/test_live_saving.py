"""Nothing lost, nothing frozen (issue 15): a live game whose saves or event log fail goes on from memory, says so
once, retries, and says when it works again; its heartbeat records the time it last ran. A virtual clock
throughout: nothing sleeps."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from moderator.adapters.clock import VirtualClock
from moderator.errors import JournalError
from moderator.game.engine import Engine
from moderator.game.rules import make_plan
from moderator.game.state import GameState
from moderator.journal import Journal, Saved
from moderator.live import LiveGame
from moderator.play import EventLog
from moderator.ports import Clock
from moderator.speech.catalog import load_catalog
from moderator.speech.grammar import load_grammar

GRAMMAR, CATALOG = load_grammar(), load_catalog()
ROOMS = {"A": ["Alice", "Bob", "Carol", "Dave"], "B": ["Erin", "Frank", "Grace", "Heidi"]}


class FailingDisk(Journal):
    """A real journal whose disk can be made to fail (full, or read-only) and come back."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.failing = False
        self.attempts = 0

    def save(self, saved: Saved) -> None:
        self.attempts += 1
        if self.failing:
            raise JournalError(f"cannot save the game to {self.path}: No space left on device")
        super().save(saved)


def rebuild(saved: Saved, clock: Clock) -> Engine:
    return Engine(GameState.from_dict(saved.state), clock=clock, grammar=GRAMMAR, catalog=CATALOG)


def live(journal: Journal, **kwargs: Any) -> tuple[LiveGame, io.StringIO]:
    """Round 1 running from t=0 (180 s), saved."""
    engine = Engine.new(make_plan(8), ROOMS, clock=VirtualClock(), grammar=GRAMMAR, catalog=CATALOG)
    engine.begin()
    err = io.StringIO()
    game = LiveGame(engine, journal, epoch=1_700_000_000.0, lang="en", events=None, rebuild=rebuild, err=err,
                    game="g1", **kwargs)
    game.feed("start the game")
    assert engine.in_state("round.running")
    return game, err


def on_disk(journal: Journal) -> dict[str, Any]:
    return json.loads(journal.path.read_text())["state"]


def test_a_failing_save_keeps_the_game_in_memory_says_so_once_and_retries_until_it_works(tmp_path: Path) -> None:
    journal = FailingDisk(tmp_path / "game.json")
    game, err = live(journal)
    clock = game.clock
    journal.failing = True
    game.feed("I appoint Alice as leader")  # announced, and not saved
    game.feed("Frank appoints Erin as leader")
    assert game.engine.state.rooms["A"].leader == "Alice" and game.engine.state.rooms["B"].leader == "Erin"
    assert on_disk(journal)["rooms"]["A"]["leader"] is None
    warnings = [line for line in err.getvalue().splitlines() if "saving the game failed" in line]
    assert len(warnings) == 1, err.getvalue()
    assert "No space left on device" in warnings[0] and "the game goes on from memory" in warnings[0]
    assert any("the game is not being saved" in alert for alert in game.alerts())

    # The heartbeat retries, once a second, without a change in the game.
    tried = journal.attempts
    for t in (0.5, 0.8, 1.2, 1.5, 1.9):  # heartbeats at 0.5 and 1.5
        clock.set(t)  # type: ignore[attr-defined]
        game.tick()
    assert journal.attempts == tried + 2

    journal.failing = False
    clock.set(2.6)  # type: ignore[attr-defined]
    game.tick()
    assert on_disk(journal)["rooms"]["A"]["leader"] == "Alice" and on_disk(journal)["rooms"]["B"]["leader"] == "Erin"
    assert err.getvalue().count("saving works again") == 1
    assert not any("not being saved" in alert for alert in game.alerts())
    assert game.engine.in_state("round.running")


def test_a_bug_while_saves_fail_falls_back_to_the_game_in_memory_not_the_stale_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    journal = FailingDisk(tmp_path / "game.json")
    game, err = live(journal)
    journal.failing = True
    game.feed("I appoint Alice as leader")

    def bug(*args: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(game.engine.rounds, "_say_left", bug)
    game.feed("pause")
    assert "internal error" in err.getvalue()
    assert game.engine.state.rooms["A"].leader == "Alice", "the change announced before the bug is kept"
    journal.failing = False
    game.feed("Frank appoints Erin as leader")
    assert on_disk(journal)["rooms"]["A"]["leader"] == "Alice"


def test_the_heartbeat_records_the_time_once_a_second_without_rewriting_the_save(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "game.json")
    journal.lock()
    try:
        game, _ = live(journal)
        before = journal.path.stat()
        for t in (10.0, 10.5, 11.2, 11.9):
            game.clock.set(t)  # type: ignore[attr-defined]
            game.tick()
        assert Journal(journal.path).load().saved_at == 11.2, "11.9 is less than a second after 11.2"
        after = journal.path.stat()
        assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns), "the save was not rewritten"
        game.clock.set(12.5)  # type: ignore[attr-defined]
        game.close()  # the last heartbeat, at the end
        assert Journal(journal.path).load().saved_at == 12.5
    finally:
        journal.unlock()


def test_an_output_that_fails_is_said_once_and_undoes_nothing(tmp_path: Path) -> None:
    def broken(event: dict[str, Any]) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    game, err = live(Journal(tmp_path / "game.json"), sinks=[broken])
    game.feed("I appoint Alice as leader")
    game.feed("Frank appoints Erin as leader")
    assert game.engine.state.rooms["A"].leader == "Alice" and game.engine.state.rooms["B"].leader == "Erin"
    assert "internal error" not in err.getvalue()
    assert err.getvalue().count("an output of the game's events failed") == 1


def test_an_event_log_on_a_full_disk_does_not_freeze_the_round(tmp_path: Path) -> None:
    said: list[str] = []
    log = EventLog(Path("/dev/full"), warn=said.append)
    game, err = live(Journal(tmp_path / "game.json"), sinks=[log])
    game.feed("I appoint Alice as leader")
    game.clock.set(180.5)  # type: ignore[attr-defined]
    game.tick()  # time is up: the round ends, as it must
    assert game.engine.in_state("hostages")
    assert game.engine.state.rooms["A"].leader == "Alice"
    assert "internal error" not in err.getvalue()
    assert len(said) == 1 and said[0].startswith("warning: cannot write the event log /dev/full: No space left")
    assert log.alerts() == ["the event log is not being written: cannot write the event log /dev/full: "
                            "No space left on device"]
    log.close()


def test_an_event_log_that_cannot_be_written_is_an_error_where_no_one_is_warned() -> None:
    from moderator.errors import ModeratorError

    log = EventLog(Path("/dev/full"), mode="w")  # a simulation: its log is its result
    with pytest.raises(ModeratorError, match=r"^cannot write the event log /dev/full: No space left on device$"):
        log({"t": 0.0, "type": "state", "state": "setup"})
    log.close()


@pytest.mark.parametrize("path", ["/proc/version", "/proc"])
def test_an_event_log_that_cannot_be_one_is_refused_at_once(path: str) -> None:
    from moderator.errors import ModeratorError

    with pytest.raises(ModeratorError, match=f"^cannot write the event log {path}: "):
        EventLog(Path(path))
