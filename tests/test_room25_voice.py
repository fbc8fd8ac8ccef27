"""A Room 25 game said by synthetic voices through the recognizer (pocketsphinx, listening with the room25 grammar on
the one table microphone) gives the same events as the same game typed."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from moderator.cli import main
from moderator.env import Environment

SCENARIO = Path(__file__).parent / "scenarios" / "room25" / "voice.yaml"


def simulate(tmp_path: Path, *extra: str) -> list[dict[str, Any]]:
    out = tmp_path / f"events{len(extra)}.jsonl"
    env = Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())
    code = main(["simulate", str(SCENARIO), "--events", str(out), "--quiet", *extra], env=env)
    assert code == 0, env.stderr.getvalue()
    return [json.loads(line) for line in out.read_text().splitlines()]


def comparable(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every event but what the recognizer heard, without times, and commands without their transcript's spelling."""
    out = []
    for event in events:
        if event["type"] == "heard":
            continue
        event = {k: v for k, v in event.items() if k not in ("t", "scheduled")}
        if event["type"] in ("command", "rejected"):
            event.pop("text")
        out.append(event)
    return out


@pytest.mark.parametrize("voice", ["flite:slt", "flite:rms"])
def test_a_spoken_room25_game_gives_the_typed_events(tmp_path: Path, voice: str) -> None:
    if shutil.which("flite") is None:
        pytest.skip("flite is not installed (apt-get install flite); it is the players' voice")
    typed = simulate(tmp_path)
    spoken = simulate(tmp_path, "--input", "voice", "--voice", voice, "--engine", "pocketsphinx")
    assert comparable(spoken) == comparable(typed)
    assert len([e for e in spoken if e["type"] == "heard"]) == 14, "every step was heard as one utterance"
    kinds = {e["type"] for e in typed}
    assert {"turn_start", "phase", "tracked", "reveal_required", "revealed", "result"} <= kinds
    [result] = [e for e in spoken if e["type"] == "result"]
    assert (result["winner"], result["reason"]) == ("guards", "two_prisoners_killed")
