"""The speaking queue in games (issue 9): the briefing before round 1, stale answers dropped, help that fits,
and whole scripted games simulated with a voice, where no reply is held back. Virtual clocks only."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeSynth, RecordingOut

from moderator.adapters.clock import VirtualClock
from moderator.audio.clip import Clip
from moderator.cli import main
from moderator.env import Environment
from moderator.game.engine import Engine
from moderator.game.rules import make_plan
from moderator.scenario import load_scenario
from moderator.settings import VoiceSettings
from moderator.simulate import advance, run_scenario
from moderator.speaking import Voice, make_voice
from moderator.speech.catalog import load_catalog
from moderator.speech.grammar import load_grammar
from moderator.voice.speaker import CONTEXTUAL, GAP, PUNCTUAL, Speaker
from moderator.voice.spoken import ceil_ms

GRAMMAR, CATALOG = load_grammar(), load_catalog()
ROOMS = {"A": ["Alice", "Bob", "Carol", "Dave"], "B": ["Erin", "Frank", "Grace", "Heidi"]}
SCENARIOS = Path(__file__).parent / "scenarios"
GAMES = [*sorted(SCENARIOS.glob("*.yaml")), Path(__file__).parent.parent / "scenarios" / "eight_players.yaml"]

Events = list[dict[str, Any]]


@pytest.fixture
def fake_tts() -> Callable[..., FakeSynth]:
    """What an Environment makes its voices with here: the FakeSynth (``make_synthesizer``'s signature)."""
    return lambda *args, **kwargs: FakeSynth()


class Voiced:
    """An 8-player game on a virtual clock with a voice (the FakeSynth into a RecordingOut)."""

    def __init__(self, cache: Path, **plan: Any) -> None:
        self.clock = VirtualClock()
        self.engine = Engine.new(make_plan(8, **plan), ROOMS, clock=self.clock, grammar=GRAMMAR, catalog=CATALOG)
        self.events: Events = []
        self.engine.subscribe(self.events.append)
        self.out = RecordingOut()
        self.voice: Voice = make_voice(self.engine, self.out, synth=FakeSynth(), cache_dir=cache)
        self.engine.begin()

    def say(self, text: str, room: str | None = None) -> bool:
        return self.engine.handle_text(text, room)

    def at(self, t: float) -> None:
        advance(self.engine, self.clock, t)

    def of(self, type_: str, key: str | None = None) -> Events:
        return [e for e in self.events if e["type"] == type_ and (key is None or e.get("key") == key)]


# --- the briefing before round 1 ------------------------------------------------------------------------------


def test_round_1_starts_when_the_briefing_has_been_said(tmp_path: Path) -> None:
    g = Voiced(tmp_path)
    briefing = g.voice.speaker.measure("briefing", g.engine.briefing_text())
    assert briefing > 10
    assert g.say("start the game", "A")
    assert g.of("round_start") == [] and g.engine.in_state("briefing"), "not while the briefing is said"
    g.at(200)
    [start] = g.of("round_start")
    assert start["t"] == ceil_ms(briefing) == round(g.of("spoken", "briefing")[0]["end"] + GAP, 3)
    assert all(s["end"] <= start["t"] for s in g.of("spoken", "briefing"))
    assert [s["start"] for s in g.of("spoken", "round.start")] == [start["t"], start["t"]]
    assert g.of("announce", "round.start")[0]["scheduled"] == start["t"]
    assert g.of("round_end")[0]["t"] == round(start["t"] + 180, 3), "the round has its whole length"


def test_round_1_waits_for_a_briefing_still_rendering_even_when_timers_are_handled_early() -> None:
    """Live: the briefing is rendered in the background, and the play loop handles timers up to 1.15 s ahead."""
    gate: Future[None] = Future()
    clock = VirtualClock()
    engine = Engine.new(make_plan(8), ROOMS, clock=clock, grammar=GRAMMAR, catalog=CATALOG)
    events: Events = []
    engine.subscribe(events.append)

    def slow(text: str) -> Clip:
        gate.result(timeout=10)
        return FakeSynth().render(text, VoiceSettings())

    with ThreadPoolExecutor(1) as pool:
        speaker = Speaker(clock=clock, out=RecordingOut(), lookup=lambda text: None, render=slow, background=pool,
                          horizon=0.3, context=engine.phase,
                          on_spoken=lambda spoken: engine.emit(spoken.event()))
        engine.announcer = speaker
        engine.begin()
        assert engine.handle_text("start the game")
        for _ in range(20):
            clock.advance(0.1)
            engine.tick(1.15)
            speaker.pump()
        assert engine.in_state("briefing"), "its length is not known yet"
        gate.set_result(None)
        while speaker.rendering:
            speaker.pump()
        while engine.in_state("briefing") and clock.now() < 60:
            clock.advance(0.05)
            engine.tick(0.15)
            speaker.pump()
    briefing = speaker.playing("A", 2.5)
    assert briefing is not None and briefing.key == "briefing" and briefing.start >= 2.0
    [start] = [e for e in events if e["type"] == "round_start"]
    assert start["t"] == ceil_ms(briefing.end + GAP)


def test_a_briefing_cut_short_lets_round_1_start_at_once(tmp_path: Path) -> None:
    g = Voiced(tmp_path)
    g.at(3.0)
    assert g.voice.speaker.cut("A") and g.voice.speaker.cut("B")  # "start the game", heard over the briefing
    assert g.say("start the game", "A")
    g.at(5.0)
    assert [e["t"] for e in g.of("round_start")] == [3.0 + GAP], "the usual pause after the cut, no more"
    assert [(s["room"], s.get("cut")) for s in g.of("spoken", "briefing")] == [("A", True), ("B", True)]


def test_without_a_voice_round_1_starts_at_once_and_nothing_is_reported_spoken() -> None:
    events: Events = []
    run_scenario(load_scenario(GAMES[-1]), grammar=GRAMMAR, catalog=CATALOG, listeners=[events.append])
    assert events[0]["t"] == 0.0
    assert next(e for e in events if e["type"] == "round_start")["t"] == 0.0
    assert not [e for e in events if e["type"] == "spoken"]
    assert "scheduled" not in next(e for e in events if e.get("key") == "round.start")


# --- stale answers --------------------------------------------------------------------------------------------


def test_answers_about_the_round_are_not_said_after_it_has_ended(tmp_path: Path) -> None:
    g = Voiced(tmp_path, durations=[60, 60, 60])
    g.say("start the game")
    g.at(30)
    t0 = g.of("round_start")[0]["t"]
    g.at(t0 + 57.2)
    assert not g.say("hostages Bob", "A")  # a long refusal...
    g.at(t0 + 57.5)
    assert g.say("how much time is left", "A")  # ...that these answers wait behind, past the round's end
    assert g.say("what can I say", "A")
    assert g.say("how much time is left", "B")  # room B is quiet: answered at once
    g.at(t0 + 90)
    assert [e["room"] for e in g.of("announce", "time.left")] == ["A", "B"]
    assert [s["room"] for s in g.of("spoken", "time.left")] == ["B"]
    assert g.of("announce", "help") and not g.of("spoken", "help")
    assert {("A", "time.left", "context"), ("A", "help", "context")} <= set(g.voice.speaker.dropped)
    over = {s["room"]: s["start"] for s in g.of("spoken", "time.over")}
    assert over["B"] == round(t0 + 60, 3), "time's up is always said: on time where the room is quiet..."
    refusal = g.of("spoken", "refuse.not_now")[0]
    assert over["A"] == round(refusal["end"] + GAP, 3), "...and right after the phrase playing, where it is not"


def test_questions_asked_during_the_briefing_are_answered_before_round_1(tmp_path: Path) -> None:
    g = Voiced(tmp_path)
    assert g.say("what can I say", "A")  # waits for the briefing...
    assert g.say("start the game", "A")  # ...and round 1 waits for the answer
    g.at(100)
    [help_a] = g.of("spoken", "help")
    assert help_a["end"] + GAP <= g.of("round_start")[0]["t"]


# --- help ------------------------------------------------------------------------------------------------------


def test_help_gives_the_three_to_five_commands_that_fit_now_best_first() -> None:
    clock = VirtualClock()
    engine = Engine.new(make_plan(8), ROOMS, clock=clock, grammar=GRAMMAR, catalog=CATALOG)
    engine.begin()

    def helps(room: str | None = None) -> list[str]:
        intents = engine.helpful_intents(room)
        assert 3 <= len(intents) <= 5, intents
        assert set(intents) <= set(engine.allowed_intents())
        return intents

    assert helps()[0] == "start"
    engine.handle_text("start the game")
    assert helps("A")[:3] == ["appoint", "time", "pause"]
    engine.handle_text("I appoint Alice as leader", "A")
    assert helps("A")[:4] == ["time", "pause", "offer", "usurp"]
    assert helps("B")[0] == "appoint", "room B still has no leader"
    assert engine.help_text("B").startswith('"I appoint Alice as leader", "how much time is left"')
    engine.handle_text("Alice offers leadership to Bob", "A")
    assert helps("A")[:2] == ["accept", "refuse"]
    engine.handle_text("pause")
    assert helps("A")[0] == "resume"
    engine.handle_text("resume")
    advance(engine, clock, 200)
    assert helps("A")[:2] == ["hostages", "time"]
    assert helps("B")[:2] == ["appoint", "hostages"]
    engine.handle_text("hostages Bob", "A")
    engine.handle_text("I appoint Erin as leader", "B")
    engine.handle_text("hostages Grace", "B")
    assert helps()[0] == "met"
    text = engine.help_text()
    assert text.startswith('"leaders have met"') and text.count(",") <= 3


def test_help_said_in_a_room_is_about_that_room(tmp_path: Path) -> None:
    g = Voiced(tmp_path)
    g.say("start the game")
    g.at(30)
    g.say("I appoint Alice as leader", "A")
    g.say("what can I say", "B")
    assert g.of("announce", "help")[-1]["text"].startswith('You can say: "I appoint Alice as leader"')


# --- whole scripted games with a voice --------------------------------------------------------------------------


def _contextual(key: str) -> bool:
    return key in CONTEXTUAL or any(key.startswith(p) for p in CONTEXTUAL if p.endswith("."))


def late_replies(events: Events, slack: float = 1.0) -> list[str]:
    """What the players would notice: a reply heard more than ``slack`` s after its event while its room had
    nothing else to say first; a time warning or countdown number said late; a phrase never said that was not
    allowed to be dropped (a stale answer, a late warning); a room talking over itself."""
    problems: list[str] = []
    spoken = {r: [e for e in events if e["type"] == "spoken" and e["room"] == r] for r in "AB"}
    used: set[int] = set()
    for a in (e for e in events if e["type"] == "announce"):
        for room in ("A", "B") if a["room"] == "both" else (a["room"],):
            due = a.get("scheduled", a["t"])
            window = slack if a.get("scheduled") is not None and a["key"] in PUNCTUAL else float("inf")
            s = next((s for s in spoken[room] if id(s) not in used and s["key"] == a["key"]
                      and due - 0.002 <= s["start"] <= due + window), None)
            if s is None:
                if not (_contextual(a["key"]) or (a["key"] in PUNCTUAL and window == slack)):
                    problems.append(f"never said in room {room}: {a}")
                continue
            used.add(id(s))
            if s["start"] - due <= slack:
                continue
            # Allowed only when it started as soon as the phrase before it in its room was over.
            after = [o for o in spoken[room] if o is not s and o["end"] > a["t"]
                     and 0 <= s["start"] - o["end"] <= GAP + 0.002]
            if not after:
                problems.append(f"{s['start'] - due:.2f} s late in room {room} with nothing before it: {a}")
    for room, said in spoken.items():
        problems += [f"said in room {room} without an announcement on time: {s}" for s in said if id(s) not in used]
        ordered = sorted(said, key=lambda s: s["start"])
        problems += [f"room {room} talks over itself: {x} / {y}"
                     for x, y in pairwise(ordered) if y["start"] < x["end"] - 0.002]
    return problems


def simulate(path: Path, out: Path, make_synthesizer: Callable[..., FakeSynth]) -> Events:
    env = Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO(),
                      make_synthesizer=make_synthesizer)
    code = main(["simulate", str(path), "--audio-out", str(out / "audio"), "--cache-dir", str(out / "cache"),
                 "--quiet"], env=env)
    assert code == 0, env.stderr.getvalue()
    return [json.loads(line) for line in (out / "audio" / "events.jsonl").read_text().splitlines()]


def game_events(events: Events) -> Events:
    """The game's own events from round 1 on: what a voice must not change."""
    out = []
    first = next(i for i, e in enumerate(events) if e["type"] == "state" and e["state"] == "round")
    for e in events[first:]:
        if e["type"] == "spoken":
            continue
        if e["type"] == "announce" and e["key"].startswith("round.start"):
            e = {k: v for k, v in e.items() if k != "scheduled"}
        out.append(e)
    return out


@pytest.mark.parametrize("path", GAMES, ids=lambda p: p.stem)
def test_a_whole_game_with_a_voice_holds_no_reply_back(path: Path, tmp_path: Path,
                                                        fake_tts: Callable[..., FakeSynth]) -> None:
    events = simulate(path, tmp_path, fake_tts)
    text: Events = []
    run_scenario(load_scenario(path), grammar=GRAMMAR, catalog=CATALOG, listeners=[text.append])
    assert game_events(events) == game_events(text), "the script's times mean the same with a voice"
    times = [e["t"] for e in events]
    assert times == sorted(times), "event times never go back"
    spoken = [e for e in events if e["type"] == "spoken"]
    assert spoken and all({"room", "key", "start", "end"} <= set(e) and e["start"] < e["end"] <= e["t"] + 1e-9
                          for e in spoken)
    first_round = next(e for e in events if e["type"] == "round_start")
    assert max(e["end"] for e in spoken if e["key"] == "briefing") <= first_round["t"] == 0.0
    assert events[0]["t"] == json.loads((tmp_path / "audio" / "timeline.json").read_text())["t0"] < 0
    assert late_replies(events) == []


def test_the_check_catches_a_reply_held_back() -> None:
    announce = {"t": 10.0, "type": "announce", "room": "A", "key": "undone", "text": "Undone."}
    held = [announce, {"t": 12.5, "type": "spoken", "room": "A", "key": "undone", "start": 12.0, "end": 12.5}]
    assert late_replies(held) and "2.00 s late" in late_replies(held)[0]
    queued = [{"t": 9.0, "type": "announce", "room": "A", "key": "help", "text": "You can say: ..."}, *held,
              {"t": 11.85, "type": "spoken", "room": "A", "key": "help", "start": 9.0, "end": 11.85}]
    assert late_replies(queued) == [], "it waited for the room's previous phrase only"
    lost = [announce]
    assert late_replies(lost) == [f"never said in room A: {announce}"]
    late_count = [{"t": 5.0, "type": "announce", "room": "A", "key": "time.count", "text": "5", "scheduled": 5.0},
                  {"t": 7.0, "type": "spoken", "room": "A", "key": "time.count", "start": 6.5, "end": 7.0}]
    assert late_replies(late_count) == [f"said in room A without an announcement on time: {late_count[1]}"]
    assert late_replies(late_count[:1]) == [], "a late number is dropped, not said late"


def test_play_with_a_voice_logs_what_was_spoken(tmp_path: Path, fake_tts: Callable[..., FakeSynth]) -> None:
    env = Environment(stdin=io.StringIO("start the game\nA: what can I say\nquit\n"), stdout=io.StringIO(),
                      stderr=io.StringIO(), make_synthesizer=fake_tts)
    code = main(["play", "--players", "Alice,Bob,Carol,Dave,Erin,Frank,Grace,Heidi", "--seed", "6",
                 "--state", str(tmp_path / "game.json"), "--events", str(tmp_path / "events.jsonl"),
                 "--audio-out", str(tmp_path / "audio"), "--cache-dir", str(tmp_path / "cache")], env=env)
    assert code == 0, env.stderr.getvalue()
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    spoken = [(e["room"], e["key"]) for e in events if e["type"] == "spoken"]
    assert spoken == [("A", "briefing"), ("B", "briefing"), ("A", "help")], "flushed when the game stops"
    assert not [e for e in events if e["type"] == "round_start"], "quit before the briefing was over"


class CreepingClock(VirtualClock):
    """Like a wall clock, it has moved on a little every time it is read."""

    def now(self) -> float:
        self._now += 1e-5
        return self._now


@pytest.mark.parametrize("voiced", [False, True])
def test_on_a_clock_that_never_stands_still_round_1_starts_once_quiet(voiced: bool, tmp_path: Path) -> None:
    """A live game's clock moves between two reads: a quiet room must mean "now", not a timer chased forever."""
    clock = CreepingClock()
    engine = Engine.new(make_plan(8), ROOMS, clock=clock, grammar=GRAMMAR, catalog=CATALOG)
    voice = make_voice(engine, RecordingOut(), synth=FakeSynth(), cache_dir=tmp_path) if voiced else None
    engine.begin()
    if voice is not None:
        voice.speaker.cut("A")
        voice.speaker.cut("B")
        clock.advance(GAP)
    assert engine.handle_text("start the game")
    assert engine.in_state("round") and engine.next_due() is not None
    assert engine.timers.pending()[0].name != "start"
    if voice is not None:
        voice.close()
