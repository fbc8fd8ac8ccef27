"""Room 25 (seeds/004): whole scripted games through ``moderator simulate``, in both modes, at 4 and 8 characters
(cooperation's countdown stops at 6, so its games are at 4 and 6): the countdown's length, the turn order after
every turn, each required reveal when it falls due, and the winner with the reason."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from moderator.cli import main
from moderator.env import Environment

EIGHT = ["Ann", "Ben", "Cal", "Dan", "Eve", "Fay", "Gus", "Hal"]


def simulate(tmp_path: Path, scenario: dict[str, Any], *extra: str) -> list[dict[str, Any]]:
    """Run ``scenario`` through the command line; its events."""
    path, out = tmp_path / "game.yaml", tmp_path / "events.jsonl"
    path.write_text(yaml.safe_dump(scenario), encoding="utf-8")
    env = Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())
    code = main(["simulate", str(path), "--events", str(out), "--quiet", *extra], env=env)
    assert code == 0, env.stderr.getvalue()
    return [json.loads(line) for line in out.read_text().splitlines()]


def game(mode: str, players: list[str], lines: list[str], guards: int | None = None, **options: Any) -> dict[str, Any]:
    """A scenario saying ``lines`` one second apart, after "start the game"."""
    steps = [{"at": "setup", "say": "start the game"}] + [{"at": i + 1, "say": line} for i, line in enumerate(lines)]
    data: dict[str, Any] = {"game": "room25", "mode": mode, "players": players, "steps": steps}
    if guards is not None:
        data["guards"] = guards
    if options:
        data["options"] = options
    return data


def full_turn(living: int, *, between: tuple[str, ...] = ()) -> list[str]:
    """A quiet turn: everyone programmed, then every first and second action done (``between``: said after the
    first player's first action)."""
    return ["everyone programmed", "done", *between, *["done"] * (2 * living - 1)]


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def check_rotation(events: list[dict[str, Any]]) -> None:
    """After every turn the first player becomes the last (the dead leave the order)."""
    dead: set[str] = set()
    previous: list[str] | None = None
    for event in events:
        if event["type"] == "tracked" and event["what"] == "dead":
            dead.add(event["player"])
        if event["type"] == "turn_start":
            if previous is not None:
                living = [p for p in previous if p not in dead]
                assert event["order"] == living[1:] + living[:1], event
            previous = event["order"]


def following(events: list[dict[str, Any]], event: dict[str, Any]) -> dict[str, Any]:
    """The next event after ``event`` that is not speech or a state."""
    at = events.index(event)
    return next(e for e in events[at + 1:] if e["type"] not in ("announce", "state"))


def refusals(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(e["text"], e["key"]) for e in of(events, "rejected")]


def test_suspicion_four_guards_win_by_two_kills(tmp_path: Path) -> None:
    players = ["Ann", "Ben", "Cal", "Dan"]
    lines = ["Ann uses adrenaline", "everyone programmed", "done", "Ben was killed", "done", "done",  # action 1
             "done", "done", "done", "done",  # action 2, then Ann's Adrenaline action
             "Ann uses adrenaline", "we escaped", "everyone programmed",  # turn 2: Cal, Dan, Ann
             "done", "Dan is dead", "done", "Ben is a prisoner", "Dan is a prisoner", "done"]
    events = simulate(tmp_path, game("suspicion", players, lines, guards=1))
    starts = of(events, "turn_start")
    assert [(e["turn"], e["turns_left"]) for e in starts] == [(1, 10), (2, 9)]  # 10 turns for 4-6 characters
    assert starts[1]["order"] == ["Cal", "Dan", "Ann"]
    check_rotation(events)
    assert [e["name"] for e in of(events, "phase")] == [
        "programming", "action_1", "action_2", "adrenaline", "countdown", "programming", "action_1"]
    kill = next(e for e in of(events, "tracked") if e["player"] == "Dan")
    assert following(events, kill) == {**following(events, kill), "type": "reveal_required", "player": "Ben",
                                       "reason": "second_death"}
    prisoner = next(e for e in of(events, "revealed") if e["player"] == "Ben")
    assert following(events, prisoner)["type"] == "reveal_required"
    assert following(events, prisoner)["player"] == "Dan"
    assert following(events, prisoner)["reason"] == "first_killed_prisoner"
    assert len(of(events, "reveal_required")) == 2
    [result] = of(events, "result")
    assert (result["winner"], result["reason"], result["turn"]) == ("guards", "two_prisoners_killed", 2)
    assert refusals(events) == [("Ann uses adrenaline", "room25.refuse.adrenaline_used"),
                                ("we escaped", "room25.refuse.escape_alone"),
                                ("done", "room25.refuse.reveal_first"),
                                ("done", "room25.refuse.not_now")]  # the game is over
    second = next(e for e in of(events, "rejected") if e["key"] == "room25.refuse.adrenaline_used")
    assert second["reason"] == ("Ann already used the Adrenaline token, in turn 1: it can be used only once per game.")


def test_suspicion_eight_escape_on_the_last_turn_with_one_prisoner_missing(tmp_path: Path) -> None:
    lines: list[str] = []
    lines += full_turn(8) + full_turn(8)
    lines += full_turn(8, between=("Ann reached room 25", "Ben reached room 25", "we escaped"))  # turn 3
    lines += full_turn(8)
    lines += full_turn(8, between=("Cal reached room 25", "Dan reached room 25", "Eve reached room 25"))  # turn 5
    lines += full_turn(8, between=("Fay reached room 25", "Gus is a guard", "Hal is a prisoner"))  # turn 6: masks
    lines += full_turn(8, between=("we escaped",))  # turn 7: only on the last turn
    lines += ["everyone programmed", "done", "we escaped"]  # turn 8
    events = simulate(tmp_path, game("suspicion", EIGHT, lines, guards=2))
    starts = of(events, "turn_start")
    assert [e["turns_left"] for e in starts] == [8, 7, 6, 5, 4, 3, 2, 1]  # 8 turns for 8 characters
    assert [e["turn"] for e in starts] == list(range(1, 9))
    check_rotation(events)
    assert starts[-1]["order"] == EIGHT[7:] + EIGHT[:7]
    fay = next(e for e in of(events, "tracked") if e["player"] == "Fay")
    masks = of(events, "reveal_required")
    assert [(e["player"], e["reason"]) for e in masks] == [("Gus", "masks"), ("Hal", "masks")]
    assert following(events, fay) == masks[0]
    assert refusals(events) == [("we escaped", "room25.refuse.escape_missing"),
                                ("we escaped", "room25.refuse.escape_last_turn")]
    [result] = of(events, "result")
    assert (result["winner"], result["reason"], result["turn"]) == ("prisoners", "escaped_last_turn", 8)


def test_suspicion_eight_first_killed_a_guard_and_the_countdown_runs_out(tmp_path: Path) -> None:
    lines = full_turn(8, between=("Ann is dead",))[:-1]  # Ann dies after her first action: 7 second actions
    lines += full_turn(7, between=("Cal was killed", "Ann is a guard"))[:-1]
    lines += [line for _ in range(6) for line in full_turn(6)]
    events = simulate(tmp_path, game("suspicion", EIGHT, lines, guards=1))
    starts = of(events, "turn_start")
    assert len(starts) == 8 and starts[0]["turns_left"] == 8
    check_rotation(events)
    assert [(e["player"], e["reason"]) for e in of(events, "reveal_required")] == [("Ann", "second_death")]
    assert of(events, "revealed") == [{**of(events, "revealed")[0], "player": "Ann", "identity": "guard"}]
    [result] = of(events, "result")
    assert (result["winner"], result["reason"], result["turn"]) == ("guards", "countdown", 8)
    assert refusals(events) == []


def test_cooperation_four_the_countdown_runs_out(tmp_path: Path) -> None:
    players = ["Ann", "Ben", "Cal", "Dan"]
    lines = [line for _ in range(8) for line in full_turn(4)]
    events = simulate(tmp_path, game("cooperation", players, lines))
    starts = of(events, "turn_start")
    assert [e["turns_left"] for e in starts] == [8, 7, 6, 5, 4, 3, 2, 1]  # 8 turns for 4 characters
    check_rotation(events)
    assert of(events, "reveal_required") == []
    [result] = of(events, "result")
    assert (result["winner"], result["reason"]) == ("guards", "countdown")
    said = [e for e in of(events, "announce") if e["key"].startswith("room25.result")]
    assert said[0]["key"] == "room25.result.countdown_cooperation"  # no guards: "the prisoners lose"


def test_cooperation_six_escape_and_two_kills(tmp_path: Path) -> None:
    six = EIGHT[:6]
    reach = tuple(f"{p} reached room 25" for p in six)
    lines = [*full_turn(6), "everyone programmed", "done", *reach[:5], "we escaped", reach[5], "we escaped"]
    events = simulate(tmp_path, game("cooperation", six, lines))
    assert of(events, "turn_start")[0]["turns_left"] == 6  # 6 turns for 6 characters
    check_rotation(events)
    assert refusals(events) == [("we escaped", "room25.refuse.escape_missing")]
    [result] = of(events, "result")
    assert (result["winner"], result["reason"], result["turn"]) == ("prisoners", "escaped", 2)

    lines = ["everyone programmed", "Ann is dead", "Ben is dead"]
    events = simulate(tmp_path, game("cooperation", six, lines))
    assert of(events, "reveal_required") == []  # everyone is a prisoner: nothing to reveal
    [result] = of(events, "result")
    assert (result["winner"], result["reason"]) == ("guards", "two_prisoners_killed")


def test_the_programming_timer_counts_down_pauses_and_ends_the_phase(tmp_path: Path) -> None:
    steps = [{"at": "setup", "say": "start the game"}, {"at": 4, "say": "pause"}, {"at": 30, "say": "resume"},
             {"at": 31, "say": "how much time is left"}, {"at": 60, "say": "done"}]
    scenario = {"game": "room25", "mode": "suspicion", "guards": 2, "players": ["Ann", "Ben", "Cal", "Dan", "Eve"],
                "options": {"programming_seconds": 20}, "steps": steps}
    events = simulate(tmp_path, scenario)
    timed = [(e["t"], e["key"], e["text"]) for e in of(events, "announce") if "scheduled" in e]
    # 16 s were left at the pause; the phase ends 16 s after "resume".
    assert timed == [(36.0, "room25.timer.left", "10 seconds left to program."),
                     *[(46.0 - n, "room25.timer.count", str(n)) for n in (5, 4, 3, 2, 1)],
                     (46.0, "room25.timer.up", "Time is up: programming is over."),
                     (46.0, "room25.call.action_1", "Ann, your first action.")]
    assert [(e["t"], e["name"]) for e in of(events, "phase")] == [(0.0, "programming"), (46.0, "action_1")]
    answer = [e["text"] for e in of(events, "announce") if e["key"] == "room25.time.programming"]
    assert answer == ["15 seconds left to program."]


@pytest.mark.parametrize(("line", "key"), [
    ("programmed", "room25.refuse.who_programmed"),
    ("Ann is a prisoner", "room25.refuse.no_reveal"),
    ("Zed is dead", "refuse.parse"),
    ("Ann left room 25", "room25.refuse.not_in"),
    ("pause", "room25.refuse.no_timer"),
    ("undo", "room25.refuse.nothing_to_undo"),
])
def test_refusals_say_why(tmp_path: Path, line: str, key: str) -> None:
    events = simulate(tmp_path, game("suspicion", ["Ann", "Ben", "Cal", "Dan"], [line], guards=1))
    [refused] = of(events, "rejected")
    assert refused["key"] == key and refused["reason"]
    assert of(events, "announce")[-1]["key"] == key  # and said


def test_undo_takes_back_the_last_change_of_the_phase(tmp_path: Path) -> None:
    lines = ["Ann programmed", "Ann reached room 25", "undo", "Ann left room 25", "Ben programmed", "undo",
             "undo", "undo"]
    events = simulate(tmp_path, game("suspicion", ["Ann", "Ben", "Cal", "Dan"], lines, guards=1))
    assert [(e["intent"], e["slots"]) for e in of(events, "undo")] == [
        ("reached", {"player": "Ann"}), ("programmed", {"player": "Ben"}), ("programmed", {"player": "Ann"})]
    assert refusals(events) == [("Ann left room 25", "room25.refuse.not_in"),
                                ("undo", "room25.refuse.nothing_to_undo")]


@pytest.mark.parametrize(("change", "message"), [
    ({"mode": "chaos"}, "unknown Room 25 mode 'chaos'"),
    ({"players": ["Ann", "Ben", "Cal"]}, "for 4 to 8 characters, not 3"),
    ({"mode": "cooperation"}, "cooperation mode has no guards"),
    ({"mode": "cooperation", "guards": None, "players": EIGHT}, "stops at 6 characters"),
    ({"guards": 3}, "--guards 1 or 2 (one to two guards, seeds/004), not 3"),
])
def test_a_bad_room25_scenario_is_one_clear_error(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    scenario = {**game("suspicion", ["Ann", "Ben", "Cal", "Dan"], ["done"], guards=1), **change}
    scenario = {k: v for k, v in scenario.items() if v is not None}
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(scenario), encoding="utf-8")
    env = Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())
    assert main(["simulate", str(path), "--quiet"], env=env) == 1
    err = env.stderr.getvalue().strip()
    assert message in err and str(path) in err and len(err.splitlines()) == 1


def test_with_a_voice_turn_1_starts_after_the_briefing_and_the_game_is_the_same(tmp_path: Path) -> None:
    """``--audio-out``: the moderator speaks at the one table (both outputs); the clock starts earlier by the
    briefing's length, so turn 1 still starts at 0 and the script's times keep their meaning."""
    scenario = game("suspicion", ["Ann", "Ben", "Cal", "Dan"], [
        "everyone programmed", "done", "Ben was killed", "done", "done", "done", "done", "done", "Dan is dead",
        "Ben is a prisoner", "Dan is a prisoner"], guards=1)
    typed = simulate(tmp_path, scenario)
    spoken = simulate(tmp_path, scenario, "--audio-out", str(tmp_path / "audio"))
    kept = ("turn_start", "phase", "tracked", "reveal_required", "revealed", "result", "command", "rejected")
    assert [{k: v for k, v in e.items() if k != "t"} for e in spoken if e["type"] in kept] == \
        [{k: v for k, v in e.items() if k != "t"} for e in typed if e["type"] in kept]
    assert abs(of(spoken, "turn_start")[0]["t"]) < 0.01
    assert of(spoken, "announce")[0]["t"] < -10  # the briefing, before turn 1
    said = of(spoken, "spoken")
    assert {e["room"] for e in said} == {"A", "B"} and said[-1]["key"] == "room25.result.two_prisoners_killed"
    assert (tmp_path / "audio" / "roomA.wav").stat().st_size > 100_000


def test_the_engine_offers_what_the_shared_loops_use() -> None:
    """What ``LiveGame``, the listening loop, the voice and ``simulate`` call on an engine, Room 25's has too."""
    from moderator.adapters.clock import VirtualClock
    from moderator.room25.engine import Room25Engine
    from moderator.room25.rules import plan_for
    from moderator.speech.catalog import load_catalog
    from moderator.speech.grammar import load_grammar

    engine = Room25Engine.new(plan_for("cooperation", 4, None), ["Ann", "Ben", "Cal", "Dan"], clock=VirtualClock(),
                              grammar=load_grammar("en", "room25"), catalog=load_catalog("en"))
    for name in ("clock", "grammar", "catalog", "announcer", "version", "last_t", "emit", "subscribe", "handle",
                 "handle_text", "tick", "next_due", "in_state", "allowed_intents", "snapshot", "phase", "say",
                 "begin", "start_game", "time_left", "setup_phrases", "briefing_seconds", "view_text"):
        assert hasattr(engine, name), name
    assert engine.state.rooms == {} and engine.state.players == ["Ann", "Ben", "Cal", "Dan"]
    assert "deck" not in engine.state.plan  # the listening loop narrows cards only for a game with a deck
    engine.begin()
    assert engine.allowed_intents() == ["start", "time", "repeat", "help"]


@pytest.mark.parametrize(("mode", "characters", "guards", "turns", "tiles"), [
    ("suspicion", 4, 1, 10, "room25.tiles.suspicion_4_5"), ("suspicion", 5, 2, 10, "room25.tiles.suspicion_4_5"),
    ("suspicion", 6, 1, 10, "room25.tiles.suspicion_6"), ("suspicion", 7, 2, 9, "room25.tiles.none"),
    ("suspicion", 8, 2, 8, "room25.tiles.none"), ("cooperation", 4, None, 8, "room25.tiles.none"),
    ("cooperation", 5, None, 7, "room25.tiles.none"), ("cooperation", 6, None, 6, "room25.tiles.none"),
])
def test_the_set_up_follows_the_seed(tmp_path: Path, mode: str, characters: int, guards: int | None, turns: int,
                                     tiles: str) -> None:
    events = simulate(tmp_path, game(mode, EIGHT[:characters], [], guards=guards))
    said = [e["key"] for e in of(events, "announce")]
    assert said[:6] == [f"room25.briefing.{mode}", "room25.setup.start", tiles, "room25.setup.first_look",
                        "room25.setup.order", "room25.turn.start"]
    assert of(events, "turn_start")[0]["turns_left"] == turns
