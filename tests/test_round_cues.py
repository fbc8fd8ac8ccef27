"""A round's cues are one list: what the round's clock says on its own is exactly what set-up pre-renders.

``round_cues`` lists what a round says by itself (its start, the time warnings, the countdown, the reminder to
appoint a leader, time's up). The engine says them from that list and ``setup_phrases`` renders them from it; these
tests play whole games on a virtual clock and fail if the phrases said and the phrases pre-rendered ever differ.
"""

from __future__ import annotations

from typing import Any

import pytest

from moderator.adapters.clock import VirtualClock
from moderator.game.engine import Engine
from moderator.game.phrase import Phrase
from moderator.game.round_clock import Cue, round_cues
from moderator.game.rules import make_plan
from moderator.game.statechart import load_statechart
from moderator.settings import Schedule
from moderator.simulate import advance
from moderator.speech.catalog import load_catalog
from moderator.speech.grammar import load_grammar
from moderator.speech.prerender import setup_phrases

GRAMMAR, CHART = load_grammar(), load_statechart()
CATALOGS = {lang: load_catalog(lang) for lang in ("en", "it", "fr", "zh")}
ROSTER = ["Alice", "Bob", "Carol", "Dave", "Eve", "Fay", "Gus", "Hal", "Ida", "Jon", "Kim", "Lou", "Max", "Ned",
          "Oscar", "Pam", "Quinn", "Rose", "Sam", "Tina", "Uma", "Vic", "Walt", "Xena", "Yuri", "Zoe", "Abel", "Beth",
          "Cody", "Dora"]
#: The keys a round's cues use; nothing else says them.
CUE_KEYS = {"round.start", "round.start_untimed", "time.warning", "time.count", "leader.nag", "time.over"}
SCHEDULES = {  # the default is also docs/settings.example.yaml's
    "default": Schedule(),
    "long warnings, short countdown, no reminder": Schedule(warnings=(240, 120, 45, 20, 5), countdown=3, leader_nag=0),
    "silent but for a late reminder": Schedule(warnings=(), countdown=0, leader_nag=90),
    "a warning and the countdown on the same second": Schedule(warnings=(30, 5), countdown=10, leader_nag=5),
}
#: Every player count with the default schedule; with the others, one from each row of the hostage tables.
GAMES = [(n, "default") for n in range(6, 31)] + [
    (n, schedule) for schedule in list(SCHEDULES)[1:] for n in (6, 9, 11, 13, 17, 22, 30)]
VARIANTS: dict[str, dict[str, Any]] = {
    "3 rounds": {},
    "5 rounds": {"rounds": 5},
    "20 s rounds": {"round_seconds": 20},
    "no timer": {"no_timer": True},
}


def play(players: int, schedule: Schedule, lang: str = "en", **plan: Any) -> tuple[Engine, list[dict[str, Any]]]:
    """A whole game on a virtual clock: every round runs out (paused once, in round 1), or, untimed, ends when
    both rooms are ready; no leader until the hostages are due, so round 1 reminds both rooms."""
    clock = VirtualClock()
    names = ROSTER[:players]
    engine = Engine.new(make_plan(players, **plan), {"A": names[: players // 2], "B": names[players // 2:]},
                        clock=clock, grammar=GRAMMAR, catalog=CATALOGS[lang], chart=CHART, schedule=schedule)
    events: list[dict[str, Any]] = []
    engine.subscribe(events.append)
    engine.begin()

    def say(text: str, room: str | None = None) -> None:
        assert engine.handle_text(text, room), (text, events[-1])

    def appoint_leaders() -> None:
        for room in "AB":
            if engine.state.rooms[room].leader is None:
                say(f"I appoint {engine.state.rooms[room].members[0]} as leader", room)

    say("start the game")
    while not any(e["type"] == "game_over" for e in events):
        if engine.state.deadline is None:  # untimed: each leader names the hostages, then says the room is ready
            appoint_leaders()
            for room in "AB":
                leader = engine.state.rooms[room].leader
                picks = [p for p in engine.state.rooms[room].members if p != leader][: engine.hostages_due()]
                say("hostages " + " and ".join(picks), room)
                say(f"room {room} is ready")
            assert engine.in_state("parley")
            say("leaders have met")
            continue
        else:
            if engine.state.round == 1:
                advance(engine, clock, engine.state.deadline - 45)
                say("pause")
                advance(engine, clock, clock.now() + 100)
                say("resume")
            advance(engine, clock, engine.state.deadline)
        assert engine.in_state("hostages")
        appoint_leaders()
        for room in "AB":
            leader = engine.state.rooms[room].leader
            picks = [p for p in engine.state.rooms[room].members if p != leader][: engine.hostages_due()]
            say("hostages " + " and ".join(picks), room)
        say("leaders have met")
    return engine, events


def cues_said(events: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(e["room"], e["key"], e["text"]) for e in events if e["type"] == "announce" and e["key"] in CUE_KEYS]


def expected(engine: Engine) -> list[tuple[str, str, str]]:
    """What the round cues promise in a game played by ``play``: each round's start, each timer that fits in the
    round, in the order they fall due, and time's up."""
    catalog, said = engine.catalog, []
    for spec in engine.state.plan["rounds"]:
        cues = round_cues(catalog, engine.schedule, spec)
        timed = [c for c in cues if c.name not in ("start", "time_up") and c.seconds is not None
                 and c.seconds < spec["seconds"]]
        for cue in ([c for c in cues if c.name == "start"] + sorted(timed, key=lambda c: -(c.seconds or 0))
                    + [c for c in cues if c.name == "time_up"]):
            said.append((cue.room, cue.phrase.key, cue.phrase.text(catalog)))
    return said


#: Every game of GAMES in every variant the rules allow (5 rounds need more than 10 players).
PLAYABLE = [(players, schedule, variant) for players, schedule in GAMES for variant in VARIANTS
            if not (VARIANTS[variant].get("rounds") == 5 and players <= 10)]


@pytest.mark.parametrize(("players", "schedule", "variant"), PLAYABLE, ids=str)
def test_every_phrase_a_round_says_on_its_own_was_pre_rendered(players: int, schedule: str, variant: str) -> None:
    plan = VARIANTS[variant]
    engine, events = play(players, SCHEDULES[schedule], **plan)
    rendered = set(setup_phrases(engine.catalog, engine.state, engine.schedule))
    said = cues_said(events)
    assert said, "the game said none of its cues"
    assert [s for s in said if s[2] not in rendered] == []
    assert said == expected(engine), "the engine said something else than its round cues"


@pytest.mark.parametrize("lang", sorted(CATALOGS))
def test_in_every_language(lang: str) -> None:
    engine, events = play(13, Schedule(), lang, rounds=5)
    rendered = set(setup_phrases(engine.catalog, engine.state, engine.schedule))
    assert [s for s in cues_said(events) if s[2] not in rendered] == []
    assert cues_said(events) == expected(engine)


def test_a_round_lists_its_cues_in_the_order_its_timers_are_set() -> None:
    en = CATALOGS["en"]
    cues = round_cues(en, Schedule(warnings=(60, 30), countdown=2, leader_nag=30),
                      {"round": 1, "seconds": 180, "hostages": 1})
    assert [(c.name, c.seconds, c.room) for c in cues] == [
        ("start", None, "both"), ("warn", 60, "both"), ("warn", 30, "both"), ("count", 2, "both"),
        ("count", 1, "both"), ("nag", 30, "A"), ("nag", 30, "B"), ("time_up", 0, "both")]
    assert cues[1] == Cue("warn", 60, "both", Phrase("time.warning", {"left": "1 minute"}))
    assert [c.phrase.text(en) for c in cues[:2]] == ["Round 1. 3 minutes. Each room sends 1 hostage.", "1 minute left."]
    assert all(c.leaderless == (c.name == "nag") for c in cues)
    untimed = round_cues(en, Schedule(), {"round": 2, "seconds": None, "hostages": 2})
    assert [(c.name, c.phrase.key) for c in untimed] == [("start", "round.start_untimed")], "no time's up"


def test_a_reminder_is_said_only_in_a_room_still_without_a_leader() -> None:
    clock = VirtualClock()
    engine = Engine.new(make_plan(8), {"A": ROSTER[:4], "B": ROSTER[4:8]}, clock=clock, grammar=GRAMMAR,
                        catalog=CATALOGS["en"])
    events: list[dict[str, Any]] = []
    engine.subscribe(events.append)
    engine.begin()
    assert engine.handle_text("start the game") and engine.handle_text("I appoint Bob as leader", "A")
    assert engine.state.deadline == 180.0
    advance(engine, clock, 151.0)
    assert [(e["room"], e["text"]) for e in events if e["type"] == "announce" and e["key"] == "leader.nag"] == [
        ("B", CATALOGS["en"].render("leader.nag", room="B"))]
    assert engine.state.fired[-1] == "nag:30"


@pytest.mark.parametrize("lang", sorted(CATALOGS))
def test_a_two_rooms_game_renders_none_of_room25s_phrases(lang: str) -> None:
    engine, _ = play(8, SCHEDULES["default"])
    catalog = CATALOGS[lang]
    rendered = set(setup_phrases(catalog, engine.state, engine.schedule))
    own = {text for key, text in catalog.phrases.items() if not key.startswith("room25.")}
    room25 = {text for key, text in catalog.phrases.items() if key.startswith("room25.")} - own
    assert room25 and not rendered & room25
