"""``--second-opinion auto``, the default of ``play``, ``listen`` and ``recognize``: Whisper where its extra is
installed, pocketsphinx alone where it is not; ``simulate`` and Room 25 keep it off unless asked
(moderator/listening.py, docs/decisions.md "On by default where it is installed")."""

from __future__ import annotations

import argparse
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
from moderator.playing import live_timing

PLAYERS = "Alice,Bob,Carol,Dave,Erin,Frank,Grace,Heidi"


@pytest.mark.parametrize(("installed", "choice", "resolved"), [
    (True, "auto", "whisper"), (False, "auto", None), (True, "off", None), (True, None, None),
    (True, "whisper", "whisper"), (False, "whisper", "whisper")])
def test_auto_is_whisper_where_its_extra_is_installed(monkeypatch: pytest.MonkeyPatch, installed: bool,
                                                     choice: str | None, resolved: str | None) -> None:
    monkeypatch.setattr(asr_whisper, "installed", lambda: installed)
    assert resolve_second_opinion(choice) == resolved
    # The live game's pacing follows what it comes to, not the word given.
    timing = live_timing(argparse.Namespace(second_opinion=choice))
    plain = live_timing(argparse.Namespace(second_opinion=None))
    assert (timing.recognition_lead > plain.recognition_lead) == (resolved == "whisper")


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
