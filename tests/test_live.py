"""The live game's one owner (``moderator.live.LiveGame``): its tick order, and a game rebuilt after an internal
error, which every part must follow (issue 11). A virtual clock throughout: nothing sleeps."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fake_recognizer import ScriptedRecognizer
from fakes import FakeAudioIn, FakeSynth, RecordingOut

from moderator.adapters.clock import VirtualClock
from moderator.audio.endpoint import RATE, Utterance
from moderator.game.engine import Engine
from moderator.game.rules import make_plan
from moderator.game.state import GameState
from moderator.journal import Journal, Saved
from moderator.live import LiveGame
from moderator.loop import Listener
from moderator.play import EventLog
from moderator.ports import Clock, Transcript
from moderator.settings import LiveTiming, Schedule
from moderator.speaking import make_voice
from moderator.speech.catalog import load_catalog
from moderator.speech.grammar import load_grammar

GRAMMAR, CATALOG = load_grammar(), load_catalog()
ROOMS = {"A": ["Alice", "Bob", "Carol", "Dave"], "B": ["Erin", "Frank", "Grace", "Heidi"]}
#: One warning (60 s left, at 120 s of round 1's 180) and time's up: the only timers, so the test can name them.
SCHEDULE = Schedule(warnings=(60,), countdown=0, leader_nag=0)


def test_live_timing_keeps_the_measured_values() -> None:
    t = LiveTiming()
    assert (t.lead, t.recognition_lead, t.speaker_horizon, t.poll, t.view_refresh) == (0.15, 1.0, 0.3, 0.05, 0.25)
    assert t.lead == LiveGame.LEAD
    assert t.wait(None, 10.0) == 0.05
    assert t.wait(10.17, 10.0) == pytest.approx(0.02)  # until the lead before the timer
    assert t.wait(10.1, 10.0) == 0.0


class WholeChunks:
    """An endpointer that takes every chunk for a whole utterance."""

    in_speech = False

    def feed(self, audio: np.ndarray, t: float) -> list[Utterance]:
        return [Utterance(audio, t, t + len(audio) / RATE)]

    def reset(self) -> None:
        pass


def say(mics: FakeAudioIn, t: float) -> None:
    """Half a second of "speech" in room A's microphone at clock time ``t`` (the recognizer decides the words)."""
    mics.push("A", np.full(RATE // 2, 0.1, np.float32), t=t, chunk=0.5)


def test_a_game_rebuilt_after_an_internal_error_is_followed_by_every_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = VirtualClock()
    engine = Engine.new(make_plan(8), ROOMS, clock=clock, grammar=GRAMMAR, catalog=CATALOG, schedule=SCHEDULE)
    engine.begin()
    engine.handle_text("start the game")  # no voice yet: round 1 starts at once, and ends at 180 s
    assert engine.state.deadline == 180.0
    voice = make_voice(engine, RecordingOut(), synth=FakeSynth(), cache_dir=tmp_path / "cache")  # renders at once
    voice.speaker.horizon = LiveTiming().speaker_horizon  # and hands phrases over as early as a live one
    mics = FakeAudioIn(("A",))
    listener = Listener(engine, ScriptedRecognizer(["how much time is left"]), mics=("A",),  # type: ignore[arg-type]
                        new_endpointer=WholeChunks)
    rebuilt: list[Engine] = []

    def rebuild(saved: Saved, on: Clock) -> Engine:
        rebuilt.append(Engine(GameState.from_dict(saved.state), clock=on, grammar=GRAMMAR, catalog=CATALOG,
                              schedule=SCHEDULE))
        return rebuilt[-1]

    log_path = tmp_path / "events.jsonl"
    err = io.StringIO()
    game = LiveGame(engine, Journal(tmp_path / "game.json"), epoch=0.0, lang="en", events=log_path, rebuild=rebuild,
                    sinks=[EventLog(log_path)], voice=voice, mics=mics, listener=listener, err=err)
    game.save()
    old = engine
    by_old: list[dict[str, Any]] = []
    old.subscribe(by_old.append)

    # A bug in the middle of "pause": the old engine has stopped the round's clock, and its timers, when it fails.
    def bug(key: str) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(old.rounds, "_say_left", bug)
    clock.set(100.0)
    game.tick()
    game.feed("pause")
    assert "internal error; the last command was ignored" in err.getvalue() and "RuntimeError: a bug" in err.getvalue()
    assert rebuilt and game.engine is rebuilt[0]
    assert old.in_state("round.paused") and old.next_due() is None, "the bug struck after the pause took effect"
    assert game.engine.in_state("round.running"), "the last save had the round running"
    since_rebuild = len(by_old)

    # Waiting: the next timer (the warning at 120 s) exists only in the new engine.
    clock.set(120.0 - game.timing.lead - 0.02)
    assert game.wait_time() == pytest.approx(0.02)
    clock.set(120.0 - game.timing.lead + 0.01)
    game.tick()  # the warning is handled ahead: it is announced, and its audio is scheduled on its time
    assert [(room, key, at, start) for room, key, at, start, _ in voice.speaker.log] == [
        ("A", "time.warning", 120.0, 120.0), ("B", "time.warning", 120.0, 120.0)]

    # The voice reports what was heard to the new engine, whose events are the game's.
    clock.set(125.0)
    game.tick()
    # The listening loop hands what it heard to the new engine: the round runs there (the old one is paused).
    say(mics, 130.0)
    clock.set(130.6)
    game.tick()
    # The voice's idea of "now" (the phase, which makes an answer stale) is the new engine's: the time left, asked
    # behind a long help list, is dropped when time is up before it could be said.
    clock.set(178.0)
    game.feed("A: what can I say")
    help_ends = next(start + length for room, key, _, start, length in voice.speaker.log if key == "help")
    assert help_ends > 181.0
    clock.set(178.5)
    game.feed("A: how much time is left")
    clock.set(179.9)
    game.tick()
    while not voice.speaker.idle:  # as the phrases ahead of it end, the time left comes up for its turn
        clock.set(clock.now() + 0.5)
        game.tick()
    assert game.engine.in_state("hostages")
    assert ("A", "time.left", "context") in voice.speaker.dropped

    assert by_old[since_rebuild:] == [], "the replaced engine took no part in the game after the rebuild"
    log = [json.loads(line) for line in log_path.read_text().splitlines()]
    after = [e for e in log if e["t"] >= 119.0]
    assert [(e["t"], e["room"]) for e in after if e["type"] == "announce" and e["key"] == "time.warning"] == [
        (120.0, "both")]
    spoken = [(e["room"], e["key"], e["start"]) for e in after if e["type"] == "spoken"]
    assert spoken[:2] == [("A", "time.warning", 120.0), ("B", "time.warning", 120.0)]
    assert ("A", "time.left", 130.6) in [(e["room"], e.get("key"), e["t"]) for e in after if e["type"] == "announce"]
    assert [e["type"] for e in after if e["type"] == "round_end"] == ["round_end"]
    assert Journal(tmp_path / "game.json").load().state == game.engine.snapshot()  # saved from the new engine


def test_timers_due_while_an_utterance_is_recognized_are_handled_first(tmp_path: Path) -> None:
    """Recognition holds the game's thread; a timer due meanwhile must not wait for it."""
    from tests_support import eight_player_engine

    engine = eight_player_engine()
    log: list[dict[str, Any]] = []
    engine.begin()
    engine.handle_text("start the game", "A")

    class SlowRecognizer:
        name = "slow"

        def expect(self, grammar: Any, roster: Any, intents: Any = None) -> None:
            pass

        def recognize(self, samples: np.ndarray, rate: int) -> Transcript:
            engine.clock.set(engine.clock.now() + 0.8)  # type: ignore[attr-defined]
            return Transcript("how much time is left", 0.9)

    listener = Listener(engine, SlowRecognizer(), new_endpointer=lambda: None)  # type: ignore[arg-type]
    game = LiveGame(engine, Journal(tmp_path / "game.json"), epoch=0.0, lang="en", events=None,
                    rebuild=lambda saved, clock: engine, sinks=[log.append], listener=listener)
    engine.clock.set(179.5)  # type: ignore[attr-defined]
    game.tick()
    assert not engine.in_state("hostages")
    listener.hear("A", Utterance(np.zeros(RATE, np.float32), 178.0, 179.5))
    kinds = [e["type"] for e in log]
    assert kinds.index("round_end") < kinds.index("heard"), "time's up was handled before the decoding began"
    over = next(e for e in log if e.get("key") == "time.over")
    assert over["t"] == over["scheduled"] == 180.0


def test_a_rebuilt_engine_must_run_on_the_games_clock(tmp_path: Path) -> None:
    from tests_support import eight_player_engine

    engine = eight_player_engine()
    game = LiveGame(engine, Journal(tmp_path / "game.json"), epoch=0.0, lang="en", events=None,
                    rebuild=lambda saved, clock: engine)
    with pytest.raises(ValueError, match="one clock"):
        game.adopt(Engine(engine.state, clock=VirtualClock(), grammar=GRAMMAR, catalog=CATALOG))
