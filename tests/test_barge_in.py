"""Full duplex in scripted games: players talk over the moderator, whose own voice reaches their microphones
through a simulated room (``simulate --echo``), and the game still hears them (issue 9)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from test_voice_simulate import comparable

import moderator.commands.simulate as simulate_command
from moderator.cli import main
from moderator.env import Environment
from moderator.voice_input import VoiceDelivery

VOICE = Path(__file__).parent / "scenarios" / "voice"

pytestmark = pytest.mark.skipif(shutil.which("flite") is None,
                                reason="flite is not installed (apt-get install flite); it is the players' voice")


def simulate(scenario: Path, out: Path, *extra: str) -> list[dict[str, Any]]:
    env = Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())
    assert main(["simulate", str(scenario), "--events", str(out), "--quiet", *extra], env=env) == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def spoken_game(scenario: Path, out: Path, monkeypatch: pytest.MonkeyPatch, *extra: str,
                ) -> tuple[list[dict[str, Any]], VoiceDelivery]:
    """The game said by flite's rms into microphones that hear the moderator at 0 dB; and who said what when."""
    deliveries: list[VoiceDelivery] = []
    make = simulate_command._voice_delivery

    def keep(*args: Any, **kwargs: Any) -> VoiceDelivery:
        deliveries.append(make(*args, **kwargs))
        return deliveries[-1]

    monkeypatch.setattr(simulate_command, "_voice_delivery", keep)
    events = simulate(scenario, out, "--input", "voice", "--voice", "flite:rms", "--engine", "pocketsphinx",
                      "--echo", "0", *extra)
    return events, deliveries[0]


def over_the_moderator(events: list[dict[str, Any]], said: list[tuple[str | None, float, float]]) -> list[int]:
    """The steps whose words started while the moderator was speaking in that room."""
    playing = [(e["room"], e["start"], e["end"]) for e in events if e["type"] == "spoken"]
    return [i for i, (room, start, _) in enumerate(said)
            if any(r == room and a < start < b for r, a, b in playing)]




@pytest.mark.slow
@pytest.mark.parametrize("game", ["eight_players_overlap", "thirteen_players_overlap"])
def test_a_game_talked_over_the_moderator_at_0_db_decides_what_the_typed_game_decides(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, game: str) -> None:
    scenario = VOICE / f"{game}.yaml"
    typed = simulate(scenario, tmp_path / "typed.jsonl")
    spoken, delivery = spoken_game(scenario, tmp_path / "spoken.jsonl", monkeypatch)
    over = over_the_moderator(spoken, delivery.said)
    assert len(over) >= len(delivery.said) / 3, f"only {len(over)} of {len(delivery.said)} commands overlapped"
    without_speech = [e for e in spoken if e["type"] != "spoken"]
    assert comparable(without_speech) == comparable(typed)
    assert [e for e in typed if e["type"] == "result"], "the script plays to the end"
    assert not [e for e in spoken if e.get("key") == "pardon"], "nothing was missed for the moderator's talking"


def test_a_question_during_the_help_list_cuts_it_short_and_is_answered(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    events, delivery = spoken_game(VOICE / "help_barge_in.yaml", tmp_path / "help.jsonl", monkeypatch)
    [help_list] = [e for e in events if e["type"] == "spoken" and e["key"] == "help"]
    asked = delivery.said[2]
    assert help_list["start"] < asked[1] < help_list["end"], "the question was asked while the list played"
    assert help_list.get("cut") is True
    [answer] = [e for e in events if e["type"] == "command" and e["intent"] == "time"]
    assert help_list["end"] == pytest.approx(answer["t"], abs=0.05), "cut when the question was understood"
    [reply] = [e for e in events if e["type"] == "spoken" and e["key"] == "time.left"]
    assert reply["room"] == "A" and reply["start"] - answer["t"] < 0.4, "and answered at once"
    announced = next(e for e in events if e["type"] == "announce" and e["key"] == "help")
    full = len(announced["text"]) * 0.06  # even spoken fast, the whole list would have lasted this long
    assert help_list["end"] - help_list["start"] < full


@pytest.mark.slow
def test_the_moderators_own_voice_alone_is_never_a_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole round in which only the moderator talks (briefing, warnings, countdown, time's up with its
    cue, the request for hostages), heard at full level: what the canceller leaves of it is never a command,
    nor a "sorry, say that again"."""
    events, _ = spoken_game(VOICE / "moderator_alone.yaml", tmp_path / "alone.jsonl", monkeypatch)
    assert sum(e["type"] == "spoken" for e in events) > 20, "the moderator talked"
    heard = [e for e in events if e["type"] in ("command", "rejected") or e.get("key") == "pardon"]
    assert [e.get("text") for e in heard] == ["i appoint alice as leader"]
