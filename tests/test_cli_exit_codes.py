"""The CLI's error boundary: a wrong command line exits 2, a failure while running 1, Ctrl-C 130 (with what
``play`` saved), and ``--traceback`` adds the Python stack."""

from __future__ import annotations

import io
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from moderator import cli
from moderator.commands import plan as plan_cmd
from moderator.commands import play as play_cmd
from moderator.env import Environment
from moderator.errors import ExitStatus, UsageError

PLAYERS = "Alice,Bob,Carol,Dave,Erin,Frank,Grace,Heidi"


def env(stdin: io.StringIO | None = None) -> Environment:
    return Environment(stdin=stdin or io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())


def run(*argv: str, stdin: io.StringIO | None = None) -> tuple[int, str]:
    """Run the CLI in-process; return (status, stderr)."""
    e = env(stdin)
    status = cli.main(list(argv), e)
    return status, e.stderr.getvalue()


# --- usage errors: 2 ------------------------------------------------------------------------------------------------


def test_an_option_argparse_refuses_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["plan", "--players", "8", "--rounds", "4"], env())
    assert info.value.code == ExitStatus.USAGE
    assert "argument --rounds: invalid choice: 4" in capsys.readouterr().err


def test_a_usage_error_found_while_running_exits_2(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(args: object, e: Environment) -> int:
        raise UsageError("--this and --that do not go together")

    monkeypatch.setattr(plan_cmd, "run", refuse)
    assert run("plan", "--players", "8") == (2, "moderator: error: --this and --that do not go together\n")


@pytest.mark.parametrize(("argv", "message"), [
    (["play"], "say who plays: --players"),
    (["play", "--players", PLAYERS, "--audio-out", "{tmp}/out", "--room-a-out", "1"], "or --audio-out, not both"),
    (["play", "--players", PLAYERS, "--mic", "0", "--room-a-in", "1"], "--mic is one microphone for both rooms"),
    (["recognize", "--players", "Bob,Carol"], "give WAV files or --text LINE"),
    (["simulate", "{tmp}/game.yaml", "--noise", "babble"], "--noise and --snr go together"),
    (["plan", "--players", "9", "--durations", "3m,2m,1m"], "--durations takes whole seconds"),
    (["listen", "--players", PLAYERS], "name the microphones to check"),
])
def test_options_that_do_not_go_together_exit_2(argv: list[str], message: str, tmp_path: Path) -> None:
    argv = [a.format(tmp=tmp_path) for a in argv]
    if argv[0] == "play":
        argv += ["--state", str(tmp_path / "g.json")]  # never the user's saved game
    status, err = run(*argv)
    assert status == ExitStatus.USAGE, err
    assert err.startswith("moderator: error: ") and message in err
    assert not (tmp_path / "g.json").exists()


def test_the_real_process_exits_2_on_a_wrong_command_line(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "moderator", "plan", "--players", "8", "--no-such-option"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "unrecognized arguments: --no-such-option" in done.stderr


# --- runtime errors: 1 ----------------------------------------------------------------------------------------------


def test_a_roster_file_that_cannot_be_read_exits_1(tmp_path: Path) -> None:
    status, err = run("play", "--roster", str(tmp_path / "nobody.txt"), "--state", str(tmp_path / "g.json"))
    assert status == ExitStatus.ERROR == 1
    assert err == f"moderator: error: cannot read roster {tmp_path / 'nobody.txt'}: No such file or directory\n"


def test_resuming_without_a_saved_game_exits_1(tmp_path: Path) -> None:
    status, err = run("play", "--resume", "--state", str(tmp_path / "g.json"))
    assert (status, err) == (1, f"moderator: error: there is no saved game at {tmp_path / 'g.json'}; "
                                "start one with 'moderator play'\n")


def test_the_real_process_exits_1_on_a_runtime_error(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "moderator", "play", "--resume", "--state", str(tmp_path / "g.json")],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("moderator: error: there is no saved game")


# --- --traceback ----------------------------------------------------------------------------------------------------


def test_an_error_is_one_line_and_traceback_adds_the_stack(tmp_path: Path) -> None:
    argv = ["play", "--roster", str(tmp_path / "nobody.txt"), "--state", str(tmp_path / "g.json")]
    status, plain = run(*argv)
    assert status == 1 and len(plain.splitlines()) == 1 and "Traceback" not in plain
    for traced in (["--traceback", *argv], [*argv, "--traceback"]):  # before or after the subcommand
        status, err = run(*traced)
        assert status == 1
        assert err.startswith("Traceback (most recent call last):\n")
        assert "moderator.errors.RosterError: cannot read roster" in err
        assert "FileNotFoundError" in err  # the cause, chained
        assert err.endswith(plain)


def test_traceback_before_the_subcommand_survives_its_parser() -> None:
    args = cli.build_parser().parse_args(["--traceback", "plan", "--players", "8"])
    assert args.traceback is True
    assert cli.build_parser().parse_args(["plan", "--players", "8"]).traceback is False


# --- Ctrl-C: 130, and only play talks of a saved game ---------------------------------------------------------------


class CtrlCAfter(io.StringIO):
    """Typed input whose reader gets Ctrl-C after the given lines."""

    def __iter__(self) -> Iterator[str]:
        yield from self.getvalue().splitlines(keepends=True)
        raise KeyboardInterrupt


def test_ctrl_c_in_another_command_says_nothing_of_a_game(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(args: object, e: Environment) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(plan_cmd, "run", interrupted)
    assert run("plan", "--players", "8") == (130, "moderator: interrupted\n")


def test_ctrl_c_during_a_game_names_the_saved_game(tmp_path: Path) -> None:
    state = tmp_path / "g.json"
    status, err = run("play", "--players", PLAYERS, "--state", str(state), stdin=CtrlCAfter("start the game\n"))
    assert status == 130
    assert err == (f"moderator: interrupted; the game is saved in {state}: continue it with "
                   f"'moderator play --resume --state {state}'\n")
    status, err = run("play", "--resume", "--state", str(state), stdin=CtrlCAfter(""))
    assert status == 130 and "the game is saved in" in err  # resumed, then interrupted: still saved


def test_ctrl_c_before_the_game_is_saved_says_nothing_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: object) -> object:
        raise KeyboardInterrupt

    state = tmp_path / "g.json"
    state.write_text("{}")  # an earlier file, which --new keeps aside only once the new game is saved
    monkeypatch.setattr(play_cmd, "split_rooms", interrupted)
    status, err = run("play", "--players", PLAYERS, "--state", str(state), "--new")
    assert (status, err) == (130, "moderator: interrupted before the game started; nothing was saved\n")
    assert state.read_text() == "{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json", "g.json.lock"], "no backup was made"


def test_ctrl_c_with_traceback_shows_where_it_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(args: object, e: Environment) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(plan_cmd, "run", interrupted)
    status, err = run("--traceback", "plan", "--players", "8")
    assert status == 130
    assert err.startswith("Traceback (most recent call last):\n") and "in interrupted" in err
    assert err.endswith("KeyboardInterrupt\nmoderator: interrupted\n")


def test_ctrl_c_while_saving_fails_does_not_say_the_game_is_saved(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from moderator.errors import JournalError
    from moderator.journal import Journal

    state = tmp_path / "g.json"
    status, _ = run("play", "--players", PLAYERS, "--state", str(state), stdin=CtrlCAfter("start the game\n"))
    assert status == 130 and state.exists()

    def full(*args: object, **kwargs: object) -> None:
        raise JournalError(f"cannot save the game to {state}: No space left on device")

    monkeypatch.setattr(Journal, "save", full)
    status, err = run("play", "--resume", "--state", str(state), stdin=CtrlCAfter("A: I appoint Alice as leader\n"))
    assert status == 130
    last = err.splitlines()[-1]
    assert last == (f"moderator: interrupted; the latest changes could not be saved (cannot save the game to {state}: "
                    f"No space left on device); {state} holds the game as last saved"), err


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path: Path) -> None:
    """``moderator presets --cards | head -1``: no traceback, the status a shell gives a broken pipe (141)."""
    proc = subprocess.Popen([sys.executable, "-m", "moderator", "presets", "--cards"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=tmp_path)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first line (Python takes far longer to start)
    err = proc.stderr.read().decode()
    assert (proc.wait(timeout=60), err) == (141, "")
