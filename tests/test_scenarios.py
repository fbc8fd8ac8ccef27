"""Whole scripted games (tests/scenarios/*.yaml) played with run_scenario in text mode.

Each test asserts on the event log (docs: /work/shared/scenario-format.md): the states
entered, when rounds start and end, every leader change, hostage lock and exchange, the
final rooms, the result, and why every refused command was refused.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from moderator.adapters.clock import VirtualClock
from moderator.cli import main
from moderator.env import Environment
from moderator.errors import ScenarioError
from moderator.game.engine import Engine
from moderator.game.rules import make_plan
from moderator.scenario import load_scenario
from moderator.simulate import run_scenario
from moderator.speech.catalog import load_catalog
from moderator.speech.grammar import load_grammar

HERE = Path(__file__).parent / "scenarios"
EIGHT_PLAYERS = Path(__file__).parent.parent / "scenarios" / "eight_players.yaml"
GRAMMAR = load_grammar()
CATALOG = load_catalog()

Events = list[dict[str, Any]]


# --- helpers ----------------------------------------------------------------------------------


def play(path: Path) -> Events:
    """Play a scenario file and return its event log."""
    events: Events = []
    run_scenario(load_scenario(path), grammar=GRAMMAR, catalog=CATALOG, listeners=[events.append])
    return events


def of(events: Events, type_: str) -> Events:
    return [e for e in events if e["type"] == type_]


def states(events: Events) -> list[str]:
    return [e["state"] for e in of(events, "state")]


def round_starts(events: Events) -> list[tuple[float, int, int | None, dict[str, int]]]:
    return [(e["t"], e["round"], e["seconds"], e["hostages"]) for e in of(events, "round_start")]


def round_ends(events: Events) -> list[tuple[float, int]]:
    return [(e["t"], e["round"]) for e in of(events, "round_end")]


def leaders(events: Events) -> list[tuple[float, str, str, str]]:
    return [(e["t"], e["room"], e["player"], e["how"]) for e in of(events, "leader")]


def hostages(events: Events) -> list[tuple[float, str, list[str]]]:
    return [(e["t"], e["room"], e["players"]) for e in of(events, "hostages")]


def exchanges(events: Events) -> list[tuple[float, list[str], list[str]]]:
    return [(e["t"], e["to_A"], e["to_B"]) for e in of(events, "exchange")]


def only(events: Events, type_: str) -> dict[str, Any]:
    found = of(events, type_)
    assert len(found) == 1, found
    return found[0]


def announced(events: Events, key: str) -> list[tuple[float, str, str]]:
    return [(e["t"], e["room"], e["text"]) for e in of(events, "announce") if e["key"] == key]


def announced_events(events: Events, key: str) -> Events:
    return [e for e in of(events, "announce") if e["key"] == key]


def expected_states(rounds: list[tuple[str, int]], *, gambler: bool = False) -> list[str]:
    """The state events of a whole game: per round, which room locked first and how many pauses."""
    out = ["setup", "briefing"]
    for first, pauses in rounds:
        second = "B" if first == "A" else "A"
        out += ["round", "round.running", *["round.paused", "round.running"] * pauses]
        out += ["hostages", "hostages.A", "hostages.A.choosing", "hostages.B", "hostages.B.choosing",
                f"hostages.{first}.locked", f"hostages.{second}.locked", "parley", "exchange"]
    return [*out, "game_over", *(["prediction"] if gambler else []), "reveal", "result"]


def assert_rejections(events: Events, expected: list[tuple[float, str, str | None, list[str]]]) -> None:
    """Exactly these commands were refused: (t, phrase key, room, words the reason must mention)."""
    rejected = of(events, "rejected")
    assert [(e["t"], e["key"]) for e in rejected] == [(t, f"refuse.{key}") for t, key, _, _ in expected]
    for event, (_, _, room, words) in zip(rejected, expected, strict=True):
        assert event["room"] == (room or "both"), event
        assert event["text"], event
        for word in words:
            assert word in event["reason"], f"{word!r} not in the reason {event['reason']!r}"
        # The refusal is also said aloud, in the room that asked.
        assert (event["t"], event["room"], event["reason"]) in [
            (a["t"], a["room"], a["text"]) for a in of(events, "announce")]


def assert_contract(events: Events) -> None:
    """Every event has t and type, time never goes back, rejected events are complete."""
    last = float("-inf")
    for event in events:
        assert isinstance(event["t"], float) and isinstance(event["type"], str), event
        assert event["t"] >= last, event
        last = event["t"]
        if event["type"] == "rejected":
            assert {"room", "text", "reason"} <= set(event), event
        if event["type"] == "exchange":
            assert len(event["to_A"]) == len(event["to_B"]), event


def run_cli(*argv: str) -> tuple[int, str, str]:
    env = Environment(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
    code = main(list(argv), env=env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


# --- complete games -----------------------------------------------------------------------------


def test_eight_players_three_rounds() -> None:
    events = play(EIGHT_PLAYERS)
    assert_contract(events)
    assert states(events) == expected_states([("A", 0), ("A", 0), ("A", 1)])
    one = {"A": 1, "B": 1}
    assert round_starts(events) == [(0.0, 1, 180, one), (200.0, 2, 120, one), (340.0, 3, 60, one)]
    # Round 3 ran 340-350 and 410-460: paused 60 s, so it ends at 460, not 400.
    assert round_ends(events) == [(180.0, 1), (320.0, 2), (460.0, 3)]
    assert leaders(events) == [
        (5.0, "A", "Alice", "appointed"), (8.0, "B", "Erin", "appointed"),
        (42.0, "B", "Frank", "abdicated"), (230.0, "B", "Heidi", "usurped"),
    ]
    assert hostages(events) == [
        (183.0, "A", ["Bob"]), (184.0, "B", ["Grace"]), (330.0, "A", ["Dave"]), (331.0, "B", ["Bob"]),
        (480.0, "A", ["Grace"]), (481.0, "B", ["Erin"]),
    ]
    assert exchanges(events) == [(200.0, ["Grace"], ["Bob"]), (340.0, ["Bob"], ["Dave"]), (490.0, ["Erin"], ["Grace"])]
    assert only(events, "game_over")["rooms"] == {"A": ["Alice", "Carol", "Bob", "Erin"],
                                                  "B": ["Frank", "Heidi", "Dave", "Grace"]}
    result = only(events, "result")
    assert (result["winner"], result["president"], result["bomber"]) == ("red", "Bob", "Carol")
    assert "gambler" not in result
    assert_rejections(events, [
        (50.0, "givesy_backsy", "B", ["Frank", "Erin", "givesy-backsies"]),
        (60.0, "not_now", "A", ["name hostages", "still running"]),
        (181.0, "hostage_leader", "A", ["Alice", "room A", "leader"]),
        (182.0, "hostage_wrong_room", "A", ["Erin", "room B", "room A"]),
        (185.0, "hostages_locked", "A", ["Room A", "Bob"]),
    ])
    assert announced(events, "time.paused") == [(400.0, "A", "The game is paused with 50 seconds left in round 3.")]


def test_eight_players_event_log_file_matches(tmp_path: Path) -> None:
    """``moderator simulate --events`` writes the same log, one JSON object per line."""
    out = tmp_path / "events.jsonl"
    code, _, stderr = run_cli("simulate", str(EIGHT_PLAYERS), "--events", str(out), "--quiet")
    assert (code, stderr) == (0, "")
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert written == json.loads(json.dumps(play(EIGHT_PLAYERS)))


def test_thirteen_players_five_rounds_gambler_right() -> None:
    events = play(HERE / "thirteen_players_five_rounds.yaml")
    assert_contract(events)
    assert states(events) == expected_states([("A", 0)] * 5, gambler=True)
    two, one = {"A": 2, "B": 2}, {"A": 1, "B": 1}
    assert round_starts(events) == [
        (0.0, 1, 300, two), (310.0, 2, 240, two), (560.0, 3, 180, two), (750.0, 4, 120, one), (880.0, 5, 60, one),
    ]
    assert round_ends(events) == [(300.0, 1), (550.0, 2), (740.0, 3), (870.0, 4), (940.0, 5)]
    assert leaders(events) == [(3.0, "A", "Alice", "appointed"), (4.0, "B", "Heidi", "appointed")]
    assert hostages(events) == [
        (302.0, "A", ["Bob", "Carol"]), (303.0, "B", ["Ivan", "Judy"]),
        (551.0, "A", ["Dave", "Erin"]), (552.0, "B", ["Ken", "Liam"]),
        (741.0, "A", ["Frank", "Grace"]), (742.0, "B", ["Mia", "Bob"]),
        (871.0, "A", ["Ivan"]), (872.0, "B", ["Carol"]),
        (941.0, "A", ["Judy"]), (942.0, "B", ["Dave"]),
    ]
    assert exchanges(events) == [
        (310.0, ["Ivan", "Judy"], ["Bob", "Carol"]), (560.0, ["Ken", "Liam"], ["Dave", "Erin"]),
        (750.0, ["Mia", "Bob"], ["Frank", "Grace"]), (880.0, ["Carol"], ["Ivan"]), (950.0, ["Dave"], ["Judy"]),
    ]
    assert only(events, "game_over")["rooms"] == {
        "A": ["Alice", "Ken", "Liam", "Mia", "Bob", "Carol", "Dave"],
        "B": ["Heidi", "Erin", "Frank", "Grace", "Ivan", "Judy"],
    }
    assert announced(events, "reveal.gambler") and not announced(events, "reveal.gambler_buried")
    result = only(events, "result")
    assert (result["winner"], result["gambler"], result["president"], result["bomber"]) == (
        "blue", "right", "Alice", "Erin")
    assert announced(events, "result.gambler_right")
    assert_rejections(events, [
        (301.0, "hostage_count", "A", ["Room A", "2 hostages", "named 1"]),
        (955.0, "not_now", "A", ["President", "Gambler must predict first"]),
    ])


@pytest.mark.parametrize(
    ("name", "table", "counts"),
    [
        ("thirteen_players_five_rounds.yaml", "current", [2, 2, 2, 1, 1]),
        ("thirteen_players_2014_table.yaml", "2014", [2, 2, 1, 1, 1]),
    ],
)
def test_thirteen_players_hostage_tables(name: str, table: str, counts: list[int]) -> None:
    assert load_scenario(HERE / name).options.hostage_table == table
    events = play(HERE / name)
    assert [start[3] for start in round_starts(events)] == [{"A": n, "B": n} for n in counts]
    # Every lock follows the table, in both rooms.
    locks = [len(players) for _, _, players in hostages(events)]
    assert locks == [n for n in counts for _ in "AB"]


def test_thirteen_players_2014_table_game() -> None:
    events = play(HERE / "thirteen_players_2014_table.yaml")
    assert_contract(events)
    assert states(events) == expected_states([("A", 0)] * 5, gambler=True)
    assert exchanges(events) == [
        (310.0, ["Ivan", "Judy"], ["Bob", "Carol"]), (560.0, ["Ken", "Liam"], ["Dave", "Erin"]),
        (750.0, ["Mia"], ["Frank"]), (880.0, ["Carol"], ["Ivan"]), (950.0, ["Dave"], ["Judy"]),
    ]
    assert only(events, "game_over")["rooms"] == {
        "A": ["Alice", "Grace", "Ken", "Liam", "Mia", "Carol", "Dave"],
        "B": ["Heidi", "Bob", "Erin", "Frank", "Ivan", "Judy"],
    }
    result = only(events, "result")
    assert (result["winner"], result["gambler"]) == ("blue", "wrong")
    assert announced(events, "result.gambler_wrong")
    assert_rejections(events, [(741.0, "hostage_count", "A", ["Room A", "exactly 1 hostage", "named 2"])])


def test_twenty_two_players_red_wins() -> None:
    events = play(HERE / "twenty_two_players.yaml")
    assert_contract(events)
    assert states(events) == expected_states([("A", 1), ("A", 0), ("A", 0)])
    assert round_starts(events) == [
        (0.0, 1, 180, {"A": 3, "B": 3}), (220.0, 2, 120, {"A": 2, "B": 2}), (350.0, 3, 60, {"A": 1, "B": 1}),
    ]
    # Paused from 60 to 90: round 1 ends 30 s late.
    assert round_ends(events) == [(210.0, 1), (340.0, 2), (410.0, 3)]
    assert announced(events, "time.paused") == [(70.0, "B", "The game is paused with 2 minutes left in round 1.")]
    assert announced(events, "resumed") == [(90.0, "both", "Game resumed. 2 minutes left.")]
    assert leaders(events) == [
        (2.0, "A", "Alice", "appointed"),
        (3.0, "B", "Liam", "appointed"),
        (12.0, "B", "Mia", "abdicated"),
        (31.0, "A", "Bob", "usurped"),
        (231.0, "B", "Liam", "abdicated"),  # giving it back is fine in the next round
    ]
    assert announced(events, "offer.refused") == [(22.0, "B", "Nina refuses. Mia stays leader.")]
    assert hostages(events) == [
        (215.0, "A", ["Carol", "Dave", "Erin"]), (216.0, "B", ["Nina", "Oscar", "Pam"]),
        (341.0, "A", ["Nina", "Oscar"]), (342.0, "B", ["Carol", "Dave"]),
        (411.0, "A", ["Pam"]), (412.0, "B", ["Erin"]),
    ]
    assert exchanges(events) == [
        (220.0, ["Nina", "Oscar", "Pam"], ["Carol", "Dave", "Erin"]),
        (350.0, ["Carol", "Dave"], ["Nina", "Oscar"]),
        (420.0, ["Erin"], ["Pam"]),
    ]
    assert only(events, "game_over")["rooms"] == {
        "A": ["Alice", "Bob", "Frank", "Grace", "Heidi", "Ivan", "Judy", "Ken", "Carol", "Dave", "Erin"],
        "B": ["Liam", "Mia", "Quinn", "Rita", "Sam", "Tina", "Uma", "Vic", "Nina", "Oscar", "Pam"],
    }
    result = only(events, "result")
    assert (result["winner"], result["president"], result["bomber"]) == ("red", "Carol", "Erin")
    assert "gambler" not in result
    assert_rejections(events, [
        (4.0, "wrong_room", "A", ["Mia", "room B", "room A"]),
        (5.0, "has_leader", "A", ["Room A", "Alice"]),
        (14.0, "givesy_backsy", "B", ["Mia", "Liam"]),
        (30.0, "not_majority", "A", ["5 votes", "room A", "11 players", "6 are needed"]),
        (150.0, "not_now", "A", ["name hostages", "still running"]),
        (211.0, "hostage_count", "A", ["Room A", "3 hostages", "named 2"]),
        (212.0, "hostage_leader", "A", ["Bob", "room A", "leader"]),
        (213.0, "hostage_wrong_room", "A", ["Liam", "room B", "room A"]),
        (214.0, "hostage_twice", "A", ["Carol", "twice"]),
        (217.0, "hostages_locked", "A", ["Room A", "Carol, Dave and Erin"]),
        (421.0, "not_now", "A", ["predict"]),
        (431.0, "same_card", "B", ["Carol", "President"]),
    ])


def test_shared_mic_game() -> None:
    events = play(HERE / "shared_mic.yaml")
    assert load_scenario(HERE / "shared_mic.yaml").options.shared_mic
    assert_contract(events)
    assert states(events) == expected_states([("A", 0)] * 3)
    assert leaders(events) == [(5.0, "A", "Alice", "appointed"), (8.0, "B", "Frank", "appointed")]
    assert [(e["t"], e["room"]) for e in announced_events(events, "ask.which_room")] == [(6.0, "both")]
    assert [(e["t"], e["room"]) for e in announced_events(events, "ask.who_leader")] == [(7.0, "B")]
    # The room of each hostage command follows from the names.
    assert [(e["t"], e["room"]) for e in of(events, "command") if e["intent"] == "hostages"] == [
        (182.0, "A"), (183.0, "B"), (311.0, "A"), (312.0, "B"), (381.0, "A"), (382.0, "B")]
    assert exchanges(events) == [(190.0, ["Grace"], ["Bob"]), (320.0, ["Bob"], ["Carol"]), (390.0, ["Erin"], ["Grace"])]
    assert only(events, "game_over")["rooms"] == {"A": ["Alice", "Dave", "Bob", "Erin"],
                                                  "B": ["Frank", "Heidi", "Carol", "Grace"]}
    result = only(events, "result")
    assert (result["winner"], result["president"], result["bomber"]) == ("red", "Bob", "Dave")
    assert_rejections(events, [
        (10.0, "mixed_rooms", None, ["Alice", "Erin", "room A", "room B"]),
        (12.0, "has_leader", None, ["Room A", "Alice"]),
        (181.0, "mixed_rooms", None, ["Bob", "Erin"]),
    ])


def test_no_timer_rounds_end_when_both_rooms_are_ready() -> None:
    events = play(HERE / "no_timer.yaml")
    assert_contract(events)
    assert states(events) == expected_states([("A", 0)] * 3)
    one = {"A": 1, "B": 1}
    assert round_starts(events) == [(0.0, 1, None, one), (5003.0, 2, None, one), (5203.0, 3, None, one)]
    # No clock: round 1 is still running at t=5000 until room B is ready too.
    assert round_ends(events) == [(5001.0, 1), (5201.0, 2), (5303.0, 3)]
    assert not announced(events, "time.warning") and not announced(events, "time.count")
    assert not announced(events, "time.over"), "no time's up without a timer"
    assert [(t, room) for t, room, _ in announced(events, "time.untimed")] == [(10.0, "B")]
    assert [t for t, _, _ in announced(events, "round.ready")] == [102.0, 5001.0, 5101.0, 5201.0, 5301.0, 5303.0]
    assert [e["t"] for e in events if e["type"] == "hostages"] == [101.0, 5000.0, 5100.0, 5200.0, 5300.0, 5302.0]
    assert exchanges(events) == [(5003.0, ["Frank"], ["Bob"]), (5203.0, ["Bob"], ["Carol"]),
                                 (5304.0, ["Carol"], ["Dave"])]
    assert only(events, "result")["winner"] == "red"
    assert_rejections(events, [
        (1.0, "no_leader", "A", ["Room A"]),
        (100.0, "ready_hostages_first", "A", ["Room A", "hostage"]),
        (103.0, "already_ready", "A", ["Room A"]),
        (104.0, "room_ready", "A", ["Room A"]),
    ])


def test_bury_with_the_gambler_buried_reveals_without_prediction() -> None:
    """8 players + bury = 9 cards with a Gambler; if the Gambler is the buried card nobody predicts."""
    scenario = load_scenario(HERE / "bury_gambler_buried.yaml")
    assert scenario.options.bury
    events = play(HERE / "bury_gambler_buried.yaml")
    assert_contract(events)
    assert states(events) == expected_states([("A", 0)] * 3, gambler=True)
    assert [t for t, _, _ in announced(events, "reveal.gambler_buried")] == [390.0]
    assert of(events, "rejected") == []
    result = only(events, "result")
    assert (result["t"], result["winner"], result["president"], result["bomber"]) == (401.0, "blue", "Alice", "Erin")
    assert "gambler" not in result


def test_bury_with_the_gambler_dealt_predicts_first() -> None:
    events = play(HERE / "bury_gambler_plays.yaml")
    assert_contract(events)
    assert states(events) == expected_states([("A", 0)] * 3, gambler=True)
    result = only(events, "result")
    assert (result["winner"], result["gambler"]) == ("blue", "wrong")
    assert of(events, "rejected") == []


def test_undo_takes_back_only_what_is_not_locked() -> None:
    events = play(HERE / "undo.yaml")
    assert_contract(events)
    assert states(events) == expected_states([("A", 0)] * 3)
    assert leaders(events) == [
        (5.0, "A", "Alice", "appointed"),
        (6.0, "A", None, "undone"),
        (8.0, "A", "Bob", "appointed"),
        (9.0, "B", "Erin", "appointed"),
        (11.0, "B", "Frank", "abdicated"),
        (12.0, "B", "Erin", "undone"),
    ]
    assert [e["t"] for e in of(events, "undo")] == [6.0, 12.0]
    assert hostages(events)[:2] == [(181.0, "A", ["Carol"]), (183.0, "B", ["Frank"])]
    assert exchanges(events)[0] == (190.0, ["Frank"], ["Carol"])
    assert_rejections(events, [
        (7.0, "nothing_to_undo", "A", ["nothing to undo"]),
        (182.0, "nothing_to_undo", "A", ["Locked choices cannot be undone"]),
    ])
    assert only(events, "result")["winner"] == "blue"


@pytest.mark.parametrize("path", [*sorted(HERE.glob("*.yaml")), EIGHT_PLAYERS], ids=lambda p: p.stem)
def test_every_scenario_ends_with_a_result(path: Path) -> None:
    """Every complete scenario runs through the CLI with status 0 and ends with exactly one result."""
    code, _, stderr = run_cli("simulate", str(path), "--events", "-", "--quiet")
    assert (code, stderr) == (0, "")
    events = play(path)
    assert_contract(events)
    assert len(of(events, "result")) == 1 and events[-1]["type"] == "announce"
    assert states(events)[-1] == "result"


# --- invalid scenario files ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("bad_yaml.yaml", ["invalid YAML", "bad_yaml.yaml:"]),
        ("unknown_player.yaml", ["room A", "unknown player", "Zed"]),
        ("decreasing_at.yaml", ["step 3", "earlier", "15"]),
        ("missing_audio.yaml", ["step 2", "no_such_clip.wav", "not found"]),
        ("five_players.yaml", ["5 players", "6 to 30"]),
    ],
)
def test_invalid_scenario_files_are_refused(name: str, words: list[str], tmp_path: Path) -> None:
    path = HERE / "invalid" / name
    code, _, stderr = run_cli("simulate", str(path), "--events", str(tmp_path / "out.jsonl"))
    assert code != 0
    assert stderr.startswith("moderator: error: ")
    assert str(path) in stderr, stderr
    for word in words:
        assert word in stderr, stderr
    assert "Traceback" not in stderr


def test_steps_without_a_room_follow_the_names_said_as_typed_lines_do(tmp_path: Path) -> None:
    """docs/scenario-format.md, "Additions": a step may leave out `room` with per-room microphones too; its room
    follows from the names said, and is `both` when no name tells it. A recording still needs its room."""
    path = tmp_path / "no_room.yaml"
    path.write_text("""
players: [Alice, Bob, Carol, Dave, Erin, Frank, Grace, Heidi]
rooms: {A: [Alice, Bob, Carol, Dave], B: [Erin, Frank, Grace, Heidi]}
steps:
  - {at: setup, say: "start the game"}
  - {at: 5, say: "Bob appoints Alice as leader"}
  - {at: 6, say: "Frank appoints Erin as leader"}
  - {at: 7, say: "pause"}
""")
    events = play(path)
    assert [(e["room"], e["intent"]) for e in events if e["type"] == "command"] == [
        ("both", "start"), ("A", "appoint"), ("B", "appoint"), ("both", "pause")]
    (tmp_path / "a.wav").write_bytes(b"")
    path.write_text(path.read_text() + '  - {at: 8, audio: a.wav}\n')
    with pytest.raises(ScenarioError, match=r"step 5: .*an 'audio' step needs 'room: A' or 'room: B'"):
        load_scenario(path)


def test_a_spoken_step_without_a_room_is_said_in_the_room_of_its_first_name() -> None:
    from moderator.scenario import Step
    from moderator.voice_input import VoiceDelivery

    scenario = load_scenario(HERE / "no_timer.yaml")
    engine = Engine.new(make_plan(8), scenario.rooms, clock=VirtualClock(), grammar=GRAMMAR, catalog=CATALOG)
    said_in = lambda text: VoiceDelivery.room_said_in(engine, Step(1, 0.0, None, text))  # noqa: E731
    assert said_in("Frank appoints Erin as leader") == "B"
    assert said_in("hostages Bob and Carol") == "A"
    assert said_in("start the game") == "A", "no name: room A's microphone"


def test_the_packaged_advanced_game_is_won_by_blue_with_its_card_share_questions_answered() -> None:
    """scenarios/the_standard.yaml: the preset's deck, a reveal by the players, the Doctor's and the Engineer's
    questions; the President shared with the Doctor ("yes"), the Bomber not with the Engineer ("no"): blue."""
    events = play(EIGHT_PLAYERS.with_name("the_standard.yaml"))
    (result,) = of(events, "result")
    assert result["winner"] == "blue" and result["characters"] == {
        "Carol": {"card": "president", "team": "blue", "won": True},
        "Frank": {"card": "bomber", "team": "red", "won": False}}
    assert [e["key"] for e in of(events, "announce") if e["key"].startswith("reveal.ask")] == [
        "reveal.ask_shared", "reveal.ask_shared"]
    assert not of(events, "rejected")
