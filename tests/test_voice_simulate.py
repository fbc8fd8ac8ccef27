"""``moderator simulate --input voice``: synthetic players through endpointing and pocketsphinx give the
same game as typed commands, and party chatter triggers nothing."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from moderator.cli import main
from moderator.env import Environment
from moderator.scenario import load_scenario

SCENARIO = Path(__file__).parent / "scenarios" / "voice" / "opening.yaml"
CHATTER = {"did anyone see where I left my drink", "I think Bob is lying about his card"}


def simulate(tmp_path: Path, *extra: str) -> list[dict[str, Any]]:
    out = tmp_path / f"events{len(extra)}.jsonl"
    env = Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())
    code = main(["simulate", str(SCENARIO), "--events", str(out), "--quiet", *extra], env=env)
    assert code == 0, env.stderr.getvalue()
    return [json.loads(line) for line in out.read_text().splitlines()]


def game(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What changed the game: accepted commands and their consequences, without times."""
    keep = ("command", "leader", "round_start", "state")
    return [(e["type"], e.get("intent"), json.dumps(e.get("slots"), sort_keys=True), e.get("room"),
             e.get("player"), e.get("state")) for e in events if e["type"] in keep]


@pytest.mark.parametrize("voice", ["flite:slt", "flite:rms"])
def test_voice_run_matches_the_typed_run_and_chatter_does_nothing(tmp_path: Path, voice: str) -> None:
    if shutil.which("flite") is None:
        pytest.skip("flite is not installed (apt-get install flite); it is the players' voice")
    typed = simulate(tmp_path)
    spoken = simulate(tmp_path, "--input", "voice", "--voice", voice, "--engine", "pocketsphinx")
    assert game(spoken) == game(typed)
    heard = [e for e in spoken if e["type"] == "heard"]
    assert len(heard) >= 9, "every step was heard as one utterance"
    # Chatter is rejected by the recognizer (empty) or by the grammar (rejected): never a command.
    commands = [e for e in spoken if e["type"] == "command"]
    assert len(commands) == len([e for e in typed if e["type"] == "command"])
    assert not [e for e in typed if e["type"] == "command" and e["text"] in CHATTER]


#: Announcements whose words depend on the exact second they were asked (a voice command lands a
#: couple of seconds after the typed one).
_TIMELY = {"time.left", "time.paused", "paused", "resumed"}


def comparable(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every event of the game, without times, transcripts, and the answers to chatter.

    A typed chatter line is refused with the parser's reason (``refuse.parse``); spoken, the recognizer
    rejects it and the game hears nothing. Both leave the game unchanged, so those events are left out.
    """
    out = []
    for event in events:
        if event["type"] == "heard" or event.get("key") == "refuse.parse":
            continue
        event = {k: v for k, v in event.items() if k not in ("t", "scheduled")}
        if event["type"] in ("command", "rejected") or event.get("key") in _TIMELY:
            event.pop("text")
        out.append(event)
    return out


#: The games and the voices that play them all the way through (two voices each, to keep the suite short;
#: the 8-player game by slt loses "pause", and the 13-player one by awb loses a "yes": docs/benchmarks).
WHOLE_GAMES = {
    "eight_players": ["flite:rms", "flite:kal"],
    "thirteen_players": ["flite:rms", "flite:slt"],
}


@pytest.mark.parametrize(("name", "voice"), [(n, v) for n, voices in WHOLE_GAMES.items() for v in voices])
def test_a_whole_game_by_voice_is_the_typed_game_event_for_event(tmp_path: Path, name: str, voice: str) -> None:
    """tests/scenarios/voice/*.yaml: every line said by a flite voice, recognized by pocketsphinx."""
    if shutil.which("flite") is None:
        pytest.skip("flite is not installed (apt-get install flite); it is the players' voice")
    whole = SCENARIO.parent / f"{name}.yaml"

    def run(*extra: str) -> list[dict[str, Any]]:
        out = tmp_path / f"whole{len(extra)}.jsonl"
        env = Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())
        assert main(["simulate", str(whole), "--events", str(out), "--quiet", *extra], env=env) == 0
        return [json.loads(line) for line in out.read_text().splitlines()]

    typed = run()
    spoken = run("--input", "voice", "--voice", voice, "--engine", "pocketsphinx")
    assert comparable(spoken) == comparable(typed)
    assert [e for e in typed if e["type"] == "result"], "the script plays to the end"
    # Chatter is turned away by the recognizer itself: no transcript, no "sorry", no refusal.
    assert not [e for e in spoken if e.get("key") in ("pardon", "refuse.parse")]
    assert len([e for e in spoken if e["type"] == "heard"]) == len(load_scenario(whole).steps)


def test_with_the_wake_word_only_commands_said_after_it_are_taken(tmp_path: Path) -> None:
    if shutil.which("flite") is None:
        pytest.skip("flite is not installed (apt-get install flite); it is the players' voice")
    scenario = tmp_path / "wake.yaml"
    scenario.write_text(
        "players: [Alice, Bob, Carol, Dave, Erin, Frank, Grace, Heidi]\n"
        "rooms: {A: [Alice, Bob, Carol, Dave], B: [Erin, Frank, Grace, Heidi]}\n"
        "options: {wake_word: moderator}\n"
        "steps:\n"
        "  - {at: setup, room: A, say: 'moderator, start the game'}\n"
        "  - {at: 5, room: A, say: 'I appoint Bob as leader'}\n"           # not addressed: ignored
        "  - {at: 10, room: A, say: 'moderator, I appoint Alice as leader'}\n"
        "  - {at: 15, room: B, say: 'did anyone see where I left my drink'}\n")
    out = tmp_path / "events.jsonl"
    env = Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())
    assert main(["simulate", str(scenario), "--events", str(out), "--quiet", "--input", "voice",
                 "--voice", "flite:rms", "--engine", "pocketsphinx"], env=env) == 0
    events = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(e["intent"], e["slots"]) for e in events if e["type"] == "command"] == [
        ("start", {}), ("appoint", {"player": "Alice"})]
    assert [e["player"] for e in events if e["type"] == "leader"] == ["Alice"]


OTHER_ROOM = Path(__file__).parent / "scenarios" / "voice" / "other_room_names.yaml"


@pytest.mark.parametrize("voice", ["flite:slt", "flite:rms"])
def test_a_name_of_the_other_room_is_heard_as_said_and_refused_with_the_reason(tmp_path: Path, voice: str) -> None:
    """Issue 12, rule 1.3: "I appoint Erin as leader" said in room A (Erin is in B) is refused because Erin is in
    room B; it is not heard as a room-A name and obeyed. So is "hostage Heidi"."""
    if shutil.which("flite") is None:
        pytest.skip("flite is not installed (apt-get install flite); it is the players' voice")
    out = tmp_path / "events.jsonl"
    env = Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())
    code = main(["simulate", str(OTHER_ROOM), "--events", str(out), "--quiet", "--input", "voice", "--voice", voice,
                 "--engine", "pocketsphinx"], env=env)
    assert code == 0, env.stderr.getvalue()
    events = [json.loads(line) for line in out.read_text().splitlines()]
    refused = [(e["intent"], e["key"]) for e in events if e["type"] == "rejected" and e.get("intent")]
    assert refused == [("appoint", "refuse.wrong_room"), ("hostages", "refuse.hostage_wrong_room")], [
        (e["type"], e.get("text")) for e in events if e["type"] in ("heard", "rejected", "command")]
    assert [(e["room"], e["player"]) for e in events if e["type"] == "leader"] == [("A", "Alice"), ("B", "Dave")]
