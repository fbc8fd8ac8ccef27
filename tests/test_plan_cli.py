"""Tests for ``moderator plan``: every player count, both tables, bury on and off, and the refusals."""

from __future__ import annotations

import importlib.util
import io
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from moderator import cli
from moderator.env import Environment

ROOT = Path(__file__).resolve().parents[1]

# Written out literally from rules.md section 4, not read from the code, so a wrong tables.yaml fails here.
THREE_ROUNDS = {
    range(6, 11): [1, 1, 1],
    range(11, 22): [2, 1, 1],
    range(22, 31): [3, 2, 1],
}
FIVE_ROUNDS = {
    "current": {
        range(11, 14): [2, 2, 2, 1, 1],
        range(14, 18): [3, 2, 2, 1, 1],
        range(18, 22): [4, 3, 2, 1, 1],
        range(22, 31): [5, 4, 3, 2, 1],
    },
    "2014": {
        range(11, 14): [2, 2, 1, 1, 1],
        range(14, 18): [3, 2, 2, 1, 1],
        range(18, 22): [4, 3, 2, 1, 1],
        range(22, 31): [5, 4, 3, 2, 1],
    },
}
SECONDS = {3: [180, 120, 60], 5: [300, 240, 180, 120, 60]}
KNOWN_CARDS = {
    "president",
    "bomber",
    "blue_team",
    "red_team",
    "gambler",
    "presidents_daughter",
    "martyr",
}

Run = Callable[..., tuple[int, str, str]]


def expected_hostages(players: int, rounds: int, table: str) -> list[int]:
    rows = THREE_ROUNDS if rounds == 3 else FIVE_ROUNDS[table]
    (row,) = [hostages for span, hostages in rows.items() if players in span]
    return row


def all_setups() -> list[tuple[int, int, str, bool]]:
    return [
        (players, rounds, table, bury)
        for players in range(6, 31)
        for rounds in ((3, 5) if players > 10 else (3,))
        for table in ("current", "2014")
        for bury in (False, True)
    ]


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch) -> Run:
    """Run the real CLI in-process with only ``plan`` registered; return (status, stdout, stderr)."""
    monkeypatch.setattr(cli, "COMMANDS", ("plan",))

    def call(*argv: str) -> tuple[int, str, str]:
        env = Environment(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
        status = cli.main(["plan", *argv], env=env)
        return status, env.stdout.getvalue(), env.stderr.getvalue()

    return call


def plan_json(run: Run, *argv: str) -> dict:
    status, out, err = run(*argv, "--json")
    assert (status, err) == (0, "")
    assert out.count("\n") == 1
    return json.loads(out)


@pytest.mark.parametrize(("players", "rounds", "table", "bury"), all_setups())
def test_every_setup(run: Run, players: int, rounds: int, table: str, bury: bool) -> None:
    argv = [
        "--players",
        str(players),
        "--rounds",
        str(rounds),
        "--hostage-table",
        table,
    ]
    data = plan_json(run, *argv, *(["--bury"] if bury else []))

    assert data["players"] == players
    assert data["rounds"] == [
        {"round": i + 1, "seconds": s, "hostages": h}
        for i, (s, h) in enumerate(zip(SECONDS[rounds], expected_hostages(players, rounds, table), strict=True))
    ]
    assert data["color_share"] is (players > 10)
    assert data["buried"] == (1 if bury else 0)
    assert data["hostage_table"] == table

    deck = data["deck"]
    size = players + 1 if bury else players
    assert set(deck) <= KNOWN_CARDS
    assert all(count > 0 for count in deck.values())
    assert sum(deck.values()) == size
    assert deck["president"] == deck["bomber"] == 1
    assert deck["blue_team"] == deck["red_team"]
    assert deck.get("gambler", 0) == size % 2
    assert deck.get("presidents_daughter", 0) == deck.get("martyr", 0) == (1 if bury else 0)


def test_eight_players_is_the_rulebook_example(run: Run) -> None:
    assert plan_json(run, "--players", "8")["deck"] == {
        "president": 1,
        "bomber": 1,
        "blue_team": 3,
        "red_team": 3,
    }


def test_round_minutes_sets_every_round(run: Run) -> None:
    data = plan_json(run, "--players", "14", "--rounds", "5", "--round-minutes", "3")
    assert [r["seconds"] for r in data["rounds"]] == [180] * 5
    assert [r["hostages"] for r in data["rounds"]] == [3, 2, 2, 1, 1]


def test_custom_durations_and_no_timer(run: Run) -> None:
    custom = plan_json(run, "--players", "9", "--durations", "240,180,60")
    untimed = plan_json(run, "--players", "9", "--no-timer")
    assert [r["seconds"] for r in custom["rounds"]] == [240, 180, 60]
    assert [r["seconds"] for r in untimed["rounds"]] == [None, None, None]


def test_force_allows_31_players_with_the_22_plus_row(run: Run) -> None:
    data = plan_json(run, "--players", "31", "--force")
    assert [r["hostages"] for r in data["rounds"]] == [3, 2, 1]
    assert sum(data["deck"].values()) == 31
    five = plan_json(run, "--players", "31", "--force", "--rounds", "5")
    assert [r["hostages"] for r in five["rounds"]] == [5, 4, 3, 2, 1]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--players", "5"],
            "5 players is too few: Two Rooms and a Boom needs 6 to 30 players",
        ),
        (
            ["--players", "31"],
            "31 players is too many: Two Rooms and a Boom needs 6 to 30 players; use --force",
        ),
        (
            ["--players", "9", "--rounds", "5"],
            "5 rounds need more than 10 players; with 9 players play 3 rounds",
        ),
        (
            ["--players", "9", "--durations", "180,60"],
            "3 rounds need 3 durations, got 2 (for example 180,120,60)",
        ),
        (
            ["--players", "9", "--durations", "3m,2m,1m"],
            "--durations takes whole seconds separated by commas",
        ),
        (["--players", "9", "--round-minutes", "0"], "must be positive"),
    ],
)
def test_refusals_say_what_is_allowed(run: Run, argv: list[str], message: str) -> None:
    status, out, err = run(*argv)
    assert status != 0
    assert out == ""
    assert err.startswith("moderator: error: ")
    assert message in err


def test_timing_variants_cannot_be_combined(run: Run, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        run("--players", "9", "--no-timer", "--durations", "180,120,60")
    assert info.value.code != 0
    assert "not allowed with" in capsys.readouterr().err


def test_human_output_without_a_terminal_has_no_colour_codes(run: Run) -> None:
    status, out, err = run("--players", "13", "--bury")
    assert (status, err) == (0, "")
    assert "\x1b[" not in out
    for text in (
        "3 min",
        "President's Daughter",
        "Martyr",
        "Bomber",
        "Blue Team",
        "Red Team",
    ):
        assert text in out
    assert "Colour share and colour reveal: allowed" in out
    assert "Buried cards: 1" in out
    assert "two rooms of 7 and 6" in out


def test_human_output_says_when_colour_share_is_not_allowed(run: Run) -> None:
    _, out, _ = run("--players", "8", "--no-timer")
    assert "not allowed" in out
    assert "no timer" in out
    assert "Buried cards: none" in out


@pytest.mark.skipif(
    any(importlib.util.find_spec(f"moderator.commands.{name}") is None for name in cli.COMMANDS),
    reason="not every subcommand module exists yet",
)
def test_python_dash_m_moderator_plan_json() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "moderator", "plan", "--players", "8", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["deck"] == {
        "president": 1,
        "bomber": 1,
        "blue_team": 3,
        "red_team": 3,
    }
