"""``--second-opinion auto``, the default of ``play``, ``listen`` and ``recognize``: Whisper where its extra is
installed, pocketsphinx alone where it is not; ``simulate`` and Room 25 keep it off unless asked
(moderator/listening.py, docs/decisions.md "On by default where it is installed")."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from fake_recognizer import ScriptedRecognizer
from fakes import FakeAudioIn

from moderator import cli
from moderator.adapters import asr_whisper
from moderator.env import Environment
from moderator.listening import described, resolve_second_opinion
from moderator.playing import Hearing, live_timing

PLAYERS = "Alice,Bob,Carol,Dave,Erin,Frank,Grace,Heidi"


@pytest.mark.parametrize(("installed", "choice", "resolved"), [
    (True, "auto", "whisper"), (False, "auto", None), (True, "off", None), (True, None, None),
    (True, "whisper", "whisper"), (False, "whisper", "whisper")])
def test_auto_is_whisper_where_its_extra_is_installed(monkeypatch: pytest.MonkeyPatch, installed: bool,
                                                     choice: str | None, resolved: str | None) -> None:
    monkeypatch.setattr(asr_whisper, "installed", lambda: installed)
    assert resolve_second_opinion(choice) == resolved


def test_the_live_games_pacing_follows_the_recognizer_built_not_the_word_given() -> None:
    """A lead for Whisper only where a microphone's recognizer asks it: not in a game heard from the keyboard alone,
    nor where ``auto`` left Whisper out (not installed, or it would not load)."""
    from moderator.adapters.asr_whisper import SecondOpinion

    first, mics = ScriptedRecognizer([]), FakeAudioIn((None,))
    plain = live_timing([Hearing(first, mics)])
    assert live_timing([]) == plain
    whisper = live_timing([Hearing(SecondOpinion(first, object()), mics)])  # type: ignore[arg-type]  (never asked)
    assert whisper.recognition_lead > plain.recognition_lead


def test_the_games_and_checks_default_to_auto_and_a_scripted_game_to_off() -> None:
    parser = cli.build_parser()
    assert parser.parse_args(["play", "--players", PLAYERS]).second_opinion == "auto"
    assert parser.parse_args(["listen", "--players", PLAYERS, "--mic", "x"]).second_opinion == "auto"
    assert parser.parse_args(["recognize", "--players", PLAYERS, "a.wav"]).second_opinion == "auto"
    assert parser.parse_args(["simulate", "eight_players"]).second_opinion == "off"
    with pytest.raises(SystemExit):
        parser.parse_args(["play", "--players", PLAYERS, "--second-opinion", "maybe"])


def test_the_listening_line_says_whether_whisper_listens_too() -> None:
    from moderator.adapters.asr_whisper import SecondOpinion

    first = ScriptedRecognizer([])
    assert described(first) == first.name
    both = SecondOpinion(first, object())  # type: ignore[arg-type]  (never asked here)
    assert described(both) == f"{first.name} and Whisper"


def _asked(tmp_path: Path, *args: str) -> list[Any]:
    """What ``play`` with a microphone asks the recognizer factory for: its keyword arguments, one call each."""
    asked: list[Any] = []

    def make(engine: str, model: Any, acoustic: str, **kw: Any) -> ScriptedRecognizer:
        asked.append(kw.get("second_opinion"))
        return ScriptedRecognizer([])

    env = Environment(stdin=io.StringIO("quit\n"), stdout=io.StringIO(), stderr=io.StringIO(),
                      open_mics=lambda *a, **kw: FakeAudioIn((None,)), make_recognizer=make)
    assert cli.main(["play", "--mic", "default", "--state", str(tmp_path / "game.json"), *args], env) == 0, \
        env.stderr.getvalue()
    return asked


def test_a_two_rooms_game_passes_the_choice_on(tmp_path: Path) -> None:
    assert _asked(tmp_path, "--players", PLAYERS) == ["auto"]
    assert _asked(tmp_path / "off", "--players", PLAYERS, "--second-opinion", "off") == ["off"]


def test_a_room25_game_hears_without_whisper_unless_asked(tmp_path: Path) -> None:
    room25 = ("--game", "room25", "--mode", "cooperation", "--players", "Ann,Ben,Cal,Dan")
    assert _asked(tmp_path, *room25) == ["off"]
    assert _asked(tmp_path / "asked", *room25, "--second-opinion", "whisper") == ["whisper"]


def _unwritable_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whisper's cache under a file, so joining the model fails as on a read-only home; Whisper "installed"."""
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "a-file" / "cache"))
    monkeypatch.setattr(asr_whisper, "installed", lambda: True)


def test_a_whisper_that_will_not_load_leaves_auto_with_pocketsphinx_and_says_why(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from moderator.listening import make_recognizer

    _unwritable_cache(tmp_path, monkeypatch)
    told: list[str] = []
    recognizer = make_recognizer("pocketsphinx", acoustic="default", second_opinion="auto", warn=told.append)
    try:
        assert described(recognizer) == "pocketsphinx"
        assert len(told) == 1 and "listening without Whisper's second opinion" in told[0], told
    finally:
        recognizer.close()


def test_a_whisper_asked_for_by_name_that_will_not_load_is_an_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from moderator.listening import make_recognizer

    _unwritable_cache(tmp_path, monkeypatch)
    with pytest.raises(asr_whisper.WhisperModelError):
        make_recognizer("pocketsphinx", acoustic="default", second_opinion="whisper")


def test_recognize_goes_on_without_a_whisper_that_will_not_load(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """From the command line: ``recognize`` (default ``auto``) answers, with the reason on stderr; with
    ``--second-opinion whisper`` it stops with that reason and no traceback."""
    import numpy as np

    from moderator.audio.clip import Clip

    _unwritable_cache(tmp_path, monkeypatch)
    wav = tmp_path / "quiet.wav"
    Clip(np.zeros(16000, np.float32), 16000).write(wav)
    outcomes = []
    for extra in ((), ("--second-opinion", "whisper")):
        env = Environment(stdin=io.StringIO(""), stdout=io.StringIO(), stderr=io.StringIO())
        status = cli.main(["recognize", str(wav), "--players", "Alice,Bob", "--engine", "pocketsphinx",
                           "--acoustic-model", "default", *extra], env)
        outcomes.append((status, env.stderr.getvalue()))
    (status, err), (asked_status, asked_err) = outcomes
    assert status == 0 and "listening without Whisper's second opinion" in err, err
    assert asked_status != 0 and "Whisper" in asked_err and "Traceback" not in asked_err, asked_err


def test_an_unwritable_cache_is_a_clear_error_for_the_party_model(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The party model is laid out in the user's cache beside the wheel's dictionary: where that cannot be written,
    ``recognize`` says so and how to go on, with no traceback."""
    import numpy as np

    from moderator.audio.clip import Clip

    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "a-file" / "cache"))
    wav = tmp_path / "quiet.wav"
    Clip(np.zeros(16000, np.float32), 16000).write(wav)
    env = Environment(stdin=io.StringIO(""), stdout=io.StringIO(), stderr=io.StringIO())
    status = cli.main(["recognize", str(wav), "--players", "Alice,Bob", "--engine", "pocketsphinx",
                       "--acoustic-model", "party", "--second-opinion", "off"], env)
    err = env.stderr.getvalue()
    assert status != 0 and "XDG_CACHE_HOME" in err and "--acoustic-model default" in err, err
    assert "Traceback" not in err, err
