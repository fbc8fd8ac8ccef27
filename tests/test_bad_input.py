"""Bad input files (issue 15): every one is a one-line error, exit 1, and the file is left as it was.

Rosters, settings and scenarios that are not UTF-8, too large, nested too deeply or hold values of the wrong
kind; names a game cannot use. Bad command-line values (exit 2) and WAV files are in ``test_bad_values.py``.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from moderator import cli, limits
from moderator.env import Environment
from moderator.errors import ExitStatus

SIX = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank"]
SCENARIO = "players: [Alice, Bob, Carol, Dave, Erin, Frank]\noptions: {mics: shared}\nsteps:\n  - {at: 1, say: pause}\n"


def run(*argv: str) -> tuple[int, str]:
    """The CLI in-process: (status, stderr). A SystemExit (argparse) counts as its code."""
    env = Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())
    try:
        status = cli.main(list(argv), env)
    except SystemExit as exc:
        status = int(exc.code or 0)
    return status, env.stderr.getvalue()


def refused(argv: list[str], path: Path, *words: str, status: int = ExitStatus.ERROR) -> str:
    """Run ``argv``; assert one error line with ``words`` and the exit ``status``, and ``path`` unchanged."""
    before = path.read_bytes()
    code, err = run(*argv)
    assert code == status, err
    assert err.startswith("moderator: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word in err, err
    assert path.read_bytes() == before
    return err


def roster(tmp_path: Path, name: str, data: bytes) -> list[str]:
    path = tmp_path / name
    path.write_bytes(data)
    return ["play", "--roster", str(path), "--state", str(tmp_path / "game.json")]


def simulate(tmp_path: Path, data: bytes | str) -> tuple[list[str], Path]:
    path = tmp_path / "game.yaml"
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return ["simulate", str(path), "--quiet", "--events", str(tmp_path / "events.jsonl")], path


# --- not UTF-8 text -------------------------------------------------------------------------------------------------

NOT_UTF8 = {
    "binary": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x80\x81", "not UTF-8 text"),
    "latin-1": ("Alice\nJosé\nBob\n".encode("latin-1"), "not UTF-8 text (byte 0xe9)"),
    "utf-16": ("Alice\nBob\n".encode("utf-16"), "UTF-16 text; save it as UTF-8"),
    "nul": (b"Alice\nBob\x00\n", "holds a NUL byte"),
}


@pytest.mark.parametrize("kind", NOT_UTF8)
@pytest.mark.parametrize("suffix", [".txt", ".yaml", ".json"])
def test_a_roster_that_is_not_utf8_text_is_one_line(tmp_path: Path, kind: str, suffix: str) -> None:
    data, words = NOT_UTF8[kind]
    argv = roster(tmp_path, f"friends{suffix}", data)
    refused(argv, tmp_path / f"friends{suffix}", f"friends{suffix}", words)
    assert not (tmp_path / "game.json").exists()


@pytest.mark.parametrize("kind", NOT_UTF8)
def test_a_settings_file_that_is_not_utf8_text_is_one_line(tmp_path: Path, kind: str) -> None:
    data, words = NOT_UTF8[kind]
    argv, _ = simulate(tmp_path, SCENARIO)
    (tmp_path / "settings.yaml").write_bytes(data)
    refused([*argv, "--settings", str(tmp_path / "settings.yaml")], tmp_path / "settings.yaml", words)


@pytest.mark.parametrize("kind", NOT_UTF8)
def test_a_scenario_that_is_not_utf8_text_is_one_line(tmp_path: Path, kind: str) -> None:
    data, words = NOT_UTF8[kind]
    argv, path = simulate(tmp_path, data)
    refused(argv, path, "game.yaml", words)


def test_a_utf8_byte_order_mark_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "friends.txt"
    path.write_bytes(b"\xef\xbb\xbf" + "\n".join(SIX).encode())
    from moderator.roster import load_roster

    assert load_roster(path) == SIX


# --- limits ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("what", "limit"), [("roster", limits.ROSTER_MAX_BYTES),
                                            ("settings file", limits.SETTINGS_MAX_BYTES),
                                            ("scenario", limits.SCENARIO_MAX_BYTES)])
def test_a_file_over_its_size_limit_is_refused_unread(tmp_path: Path, what: str, limit: int) -> None:
    padding = b"#" * limit + b"\n"  # a comment: without the limit, each file would be fine
    if what == "roster":
        path = tmp_path / "friends.txt"
        argv = roster(tmp_path, path.name, "\n".join(SIX).encode() + b"\n" + padding)
    elif what == "settings file":
        argv, _ = simulate(tmp_path, SCENARIO)
        path = tmp_path / "settings.yaml"
        path.write_bytes(b"schedule: {countdown: 3}\n" + padding)
        argv += ["--settings", str(path)]
    else:
        argv, path = simulate(tmp_path, SCENARIO.encode() + padding)
    refused(argv, path, f"the {what} is larger than", "the most moderator reads")


def test_a_scenario_with_too_many_steps_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("moderator.scenario.SCENARIO_MAX_STEPS", 3)  # the real one: 10,000 steps take 2 s to parse
    argv, path = simulate(tmp_path, SCENARIO + "  - {at: 2, say: resume}\n" * 3)
    refused(argv, path, "4 steps; a scenario has at most 3")


def test_yaml_nested_5000_deep_is_one_line(tmp_path: Path) -> None:
    argv, path = simulate(tmp_path, "players: " + "[" * 5000 + "]" * 5000 + "\n")
    refused(argv, path, "game.yaml:1: invalid YAML", f"nested more than {limits.YAML_MAX_DEPTH} deep")
    argv = roster(tmp_path, "friends.json", b"[" * 5000 + b"]" * 5000)
    refused(argv, tmp_path / "friends.json", "invalid JSON", "nested too deeply")


def test_an_integer_of_5000_digits_is_one_line(tmp_path: Path) -> None:
    argv, path = simulate(tmp_path, SCENARIO.replace("at: 1", "at: " + "9" * 5000))
    refused(argv, path, "invalid YAML: a number with too many digits")


# --- scenario values ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("options", "words"), [
    ("{durations: [a, b, c]}", ["option 'durations'", "1 to 3600 seconds", "got 'a'"]),
    ("{durations: [.nan, 60, 60]}", ["got nan"]),
    ("{durations: [.inf, 60, 60]}", ["got inf"]),
    ("{durations: [[1], 60, 60]}", ["got [1]"]),
    ("{durations: [true, 60, 60]}", ["got True"]),
    ("{durations: [0.4, 60, 60]}", ["got 0.4"]),  # was a round of 0 s
    ("{round_seconds: 100000}", ["option 'round_seconds'", "got 100000"]),
    ("{hostage_table: 1999}", ["option 'hostage_table' must be str"]),
    ("{hostage_table: newest}", ["option 'hostage_table' must be current or 2014"]),
])
def test_scenario_options_of_the_wrong_kind_are_one_line(tmp_path: Path, options: str, words: list[str]) -> None:
    argv, path = simulate(tmp_path, SCENARIO.replace("{mics: shared}", options.replace("}", ", mics: shared}")))
    refused(argv, path, *words)


def test_durations_are_rounded_to_whole_seconds(tmp_path: Path) -> None:
    from moderator.scenario import scenario_from_dict

    data = {"players": SIX, "options": {"durations": [90.4, 1, 60.0]}, "steps": []}
    assert scenario_from_dict(data).options.durations == (90, 1, 60)


@pytest.mark.parametrize(("rooms", "words"), [
    ("{A: 5, B: 3}", ["room A must be a list of player names, got 5"]),
    ("{A: [Alice, Bob, Carol], B: [Dave, Erin, {x: 1}]}", ["room B must be a list of player names"]),
    ("{A: [Alice, Bob, Carol, Dave, Erin, Frank], B: Zed}", ["room B must be a list", "'Zed'"]),
])
def test_rooms_that_are_not_lists_of_names_are_one_line(tmp_path: Path, rooms: str, words: list[str]) -> None:
    argv, path = simulate(tmp_path, SCENARIO.replace("options:", f"rooms: {rooms}\noptions:"))
    refused(argv, path, *words)


@pytest.mark.parametrize(("step", "words"), [
    ("{at: 1, say: [a, b]}", ["step 1: 'say' must be text", "got ['a', 'b']"]),
    ("{at: 1, say: null}", ["step 1: 'say' must be text", "got None"]),
    ("{at: 1, say: 12}", ["got 12"]),
    ("{at: 1, say: \"pause\\e[2J\"}", ["step 1: 'say' holds ESC (U+001B)"]),
    ("{at: 1, audio: [a.wav]}", ["step 1: 'audio' must be text"]),
    ("{at: .nan, say: pause}", ["step 1: 'at' must be a number of seconds from -7200 to 7200, got nan"]),
    ("{at: .inf, say: pause}", ["got inf"]),  # wrote "Infinity" into the event log: not JSON
    ("{at: -.inf, say: pause}", ["got -inf"]),
    ("{at: 100000, say: pause}", ["got 100000"]),
    ("{at: [1], say: pause}", ["'at' must be a number of seconds or 'setup', got [1]"]),
    ("{at: 1, room: [A], say: pause}", ["room must be A or B, got ['A']"]),
    ("{at: 1, say: pause, 7: x, null: y}", ["step 1: unknown keys: 7, None"]),
])
def test_steps_with_values_of_the_wrong_kind_are_one_line(tmp_path: Path, step: str, words: list[str]) -> None:
    argv, path = simulate(tmp_path, SCENARIO.replace("{at: 1, say: pause}", step))
    refused(argv, path, *words)
    assert not (tmp_path / "events.jsonl").exists()  # refused before anything ran


def test_a_huge_shared_structure_is_shown_short(tmp_path: Path) -> None:
    # Each level refers to the one below 9 times: printed in full, the message would be 9**7 values long (the
    # old code did, in 0.5 s; with 9**12 it ran out of memory).
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 7)]
    argv, path = simulate(tmp_path, "name:\n" + "".join(f"  {line}\n" for line in levels)
                          + SCENARIO.replace("{at: 1, say: pause}", "{at: 1, say: *a6}"))
    err = refused(argv, path, "'say' must be text")
    assert len(err) < 400


# --- settings values ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("schedule", "words"), [
    ("{countdown: 100000}", ["'countdown' must be a whole number of seconds from 0 (off) to 60"]),
    ("{countdown: true}", ["'countdown' must be a whole number"]),
    ("{leader_nag: .nan}", ["'leader_nag' must be a whole number of seconds from 0 (off) to 3600"]),
    ("{warnings: [true, 30]}", ["'warnings' must be a list of whole seconds from 1 to 3600"]),
    ("{warnings: [99999999999999999999]}", ["'warnings' must be a list"]),
    (f"{{warnings: {list(range(1, 30))}}}", ["at most 20 time warnings, not 29"]),
    ("{warnings: [60], \"\\e[2J\": 1}", ["unknown schedule settings: '\\x1b[2J'"]),
])
def test_settings_out_of_range_are_one_line(tmp_path: Path, schedule: str, words: list[str]) -> None:
    argv, _ = simulate(tmp_path, SCENARIO)
    path = tmp_path / "settings.yaml"
    path.write_text(f"schedule: {schedule}\n")
    refused([*argv, "--settings", str(path)], path, str(path), *words)


# --- names ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["Yes", "no", "YES", "No"])
def test_players_named_yes_or_no_are_refused_with_a_suggestion(tmp_path: Path, name: str) -> None:
    names = ",".join([*SIX[:5], name])
    suggestion = f"call them {name}2 or {'Yesenia' if name.lower() == 'yes' else 'Noah'}"
    code, err = run("play", "--players", names, "--state", str(tmp_path / "game.json"))
    assert (code, err.count("\n")) == (ExitStatus.USAGE, 1), err
    assert f"--players: entry 6: a player named '{name}' could not answer 'yes' or 'no'" in err and suggestion in err
    refused(roster(tmp_path, "friends.txt", names.replace(",", "\n").encode()), tmp_path / "friends.txt",
            "friends.txt: line 6: a player named", suggestion)
    argv, path = simulate(tmp_path, SCENARIO.replace("Frank", name))
    refused(argv, path, "game.yaml: player 6: a player named", suggestion)
    assert not (tmp_path / "game.json").exists()


def test_control_characters_in_names_are_refused_naming_the_entry(tmp_path: Path) -> None:
    code, err = run("play", "--players", "Alice,Bob,Ca\x1b[31mrol,Dave,Erin,Frank", "--state", str(tmp_path / "g"))
    assert code == ExitStatus.USAGE
    assert err == ("moderator: error: --players: entry 3: 'Ca\\x1b[31mrol' holds ESC (U+001B); "
                   "a name must be plain text\n")
    assert "\x1b" not in err
    refused(roster(tmp_path, "friends.txt", "Alice\nBob\nCa\x9brol\nDave\nErin\nFrank\n".encode()),
            tmp_path / "friends.txt", "line 3: 'Ca\\x9brol' holds", "(U+009B)")
    refused(roster(tmp_path, "friends.yaml", b'[Alice, Bob, "Carol\\u202e", Dave, Erin, Frank]'),
            tmp_path / "friends.yaml", "entry 3:", "RIGHT-TO-LEFT OVERRIDE (U+202E)")
    argv, path = simulate(tmp_path, SCENARIO.replace("Carol", '"Ca\\trol"'))
    refused(argv, path, "player 3: 'Ca\\trol' holds a tab (U+0009)")


@pytest.mark.parametrize(("entries", "words"), [
    ("[Alice, null, Carol, Dave, Erin, Frank]", ["entry 2 is empty"]),
    ("[Alice, {x: 1}, Carol, Dave, Erin, Frank]", ["entry 2 is {'x': 1}, not a name"]),
    ("[Alice, true, Carol, Dave, Erin, Frank]", ["entry 2 is True, not a name"]),
    ("[Alice, 42, Carol, Dave, Erin, Frank]", ["entry 2 is 42, not a name", "in quotes"]),
    ("{players: [Alice, [Bob], Carol, Dave, Erin, Frank]}", ["entry 2 is ['Bob'], not a name"]),
])
def test_yaml_roster_entries_that_are_not_text_are_refused(tmp_path: Path, entries: str, words: list[str]) -> None:
    refused(roster(tmp_path, "friends.yaml", entries.encode()), tmp_path / "friends.yaml", *words)


def test_json_roster_entries_that_are_not_text_are_refused(tmp_path: Path) -> None:
    refused(roster(tmp_path, "friends.json", b'["Alice", null, "Carol", "Dave", "Erin", "Frank"]'),
            tmp_path / "friends.json", "entry 2 is empty")
    refused(roster(tmp_path, "friends.json", b'["Alice", 1.5, "Carol", "Dave", "Erin", "Frank"]'),
            tmp_path / "friends.json", "entry 2 is 1.5, not a name")


@pytest.mark.parametrize(("players", "where"), [
    ("Alice,,Bob,Carol,Dave,Erin,Frank", "entry 2"),
    ("Alice,Bob,Carol,Dave,Erin,Frank,", "entry 7"),
    (",Alice,Bob,Carol,Dave,Erin,Frank", "entry 1"),
    ("Alice, ,Bob,Carol,Dave,Erin,Frank", "entry 2"),
])
def test_a_blank_entry_is_an_error_naming_its_position(tmp_path: Path, players: str, where: str) -> None:
    code, err = run("play", "--players", players, "--state", str(tmp_path / "game.json"))
    assert code == ExitStatus.USAGE
    assert err == (f"moderator: error: --players: {where} is empty; separate names with one comma, "
                   "e.g. Alice,Bob,Carol\n")
    refused(roster(tmp_path, "friends.txt", ("# our party\n\n" + players + "\n").encode()), tmp_path / "friends.txt",
            f"friends.txt: line 3, {where} is empty")


def test_blank_lines_and_comments_in_a_roster_file_are_fine(tmp_path: Path) -> None:
    from moderator.roster import load_roster

    path = tmp_path / "friends.txt"
    path.write_text("# Saturday\nAlice, Bob\n\nCarol  # the host\r\nDave\n\n\nErin,Frank\n")
    assert load_roster(path) == SIX


def test_force_applies_to_a_roster_file(tmp_path: Path) -> None:
    path = tmp_path / "friends.txt"
    path.write_text("\n".join(f"Player{i}" for i in range(1, 32)) + "\n")
    state = tmp_path / "game.json"
    refused(["play", "--roster", str(path), "--state", str(state)], path, "31 players is too many", "--force")
    code, err = run("play", "--roster", str(path), "--force", "--state", str(state))
    assert (code, err) == (0, "")
    assert "Player31" in state.read_text()


def test_force_applies_to_a_scenario(tmp_path: Path) -> None:
    names = ", ".join(f"P{i}" for i in range(1, 32))
    argv, path = simulate(tmp_path, SCENARIO.replace("Alice, Bob, Carol, Dave, Erin, Frank", names))
    refused(argv, path, "31 players: a game needs 6 to 30 (more with the option force: true)")
    argv, path = simulate(tmp_path, SCENARIO.replace("Alice, Bob, Carol, Dave, Erin, Frank", names)
                          .replace("{mics: shared}", "{mics: shared, force: true}"))
    assert run(*argv) == (0, "")


# --- the last resort ------------------------------------------------------------------------------------------------


def test_an_unforeseen_failure_while_reading_a_file_is_still_one_line(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("players")

    monkeypatch.setattr("moderator.scenario.scenario_from_dict", broken)
    argv, path = simulate(tmp_path, SCENARIO)
    refused(argv, path, "game.yaml: cannot read it (KeyError: 'players'); this is a bug in moderator",
            "--traceback")
    code, err = run("--traceback", *argv)
    assert code == ExitStatus.ERROR
    assert err.startswith("Traceback (most recent call last):\n") and "in broken" in err
    assert err.endswith("output of --traceback\n")
