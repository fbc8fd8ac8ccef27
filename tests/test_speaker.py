"""The Speaker: phrases to clips, queued per room, pre-rendered ones never waiting on synthesis."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

import pytest
from fakes import FakeSynth, RecordingOut

from moderator.adapters.clock import VirtualClock
from moderator.audio.clip import Clip
from moderator.settings import VoiceSettings
from moderator.voice.speaker import GAP, Speaker, time_up_cue

VOICE = VoiceSettings()


def speaker(**kw: object) -> tuple[Speaker, RecordingOut, VirtualClock, FakeSynth]:
    clock, out, synth = VirtualClock(100.0), RecordingOut(), FakeSynth()
    ready: dict[str, Clip] = {}
    sp = Speaker(clock=clock, out=out, lookup=ready.get, render=lambda t: synth.render(t, VOICE), **kw)  # type: ignore[arg-type]
    sp.ready = ready  # type: ignore[attr-defined]
    return sp, out, clock, synth


def test_both_rooms_speak_at_once_and_each_room_queues_its_own() -> None:
    sp, out, clock, _ = speaker()
    sp.announce("both", "round.start", "Round 1. 3 minutes.")
    sp.announce("A", "leader.appointed", "Alice is the leader of room A.")
    (ra, c1, t1), (rb, _, t2), (ra2, _, t3) = out.played
    assert (ra, rb, ra2) == ("A", "B", "A")
    assert t1 == t2 == 100.0, "the rooms do not wait for each other"
    assert t3 == 100.0 + c1.duration + GAP, "room A's second utterance waits for its first"
    clock.set(200.0)
    sp.announce("B", "time.warning", "1 minute left.")
    assert out.played[-1][2] == 200.0


def test_time_up_starts_with_the_cue() -> None:
    sp, out, _, _ = speaker()
    sp.announce("A", "time.over", "Time's up!")
    clip = out.played[0][1]
    cue = time_up_cue()
    assert clip.duration > cue.duration
    assert (clip.samples[: len(cue.samples)] == cue.samples).all()


def test_with_a_background_renderer_prerendered_warnings_are_not_held_up() -> None:
    gate: Future[None] = Future()

    def slow_render(text: str) -> Clip:
        gate.result(timeout=5)  # synthesis is still running...
        return FakeSynth().render(text, VOICE)

    clock, out = VirtualClock(10.0), RecordingOut()
    warning = FakeSynth().render("30 seconds left.", VOICE)
    with ThreadPoolExecutor(1) as pool:
        sp = Speaker(clock=clock, out=out, lookup={"30 seconds left.": warning}.get, render=slow_render,
                     background=pool)
        sp.announce("A", "refuse.parse", "I did not understand that.")
        sp.announce("A", "time.warning", "30 seconds left.", at=10.0)
        assert [(room, at) for room, _, at in out.played] == [("A", 10.0)], "the warning plays on time"
        sp.pump()
        assert len(out.played) == 1
        gate.set_result(None)
        clock.set(10.4)
        while sp.rendering:
            sp.pump()
    assert len(out.played) == 2
    assert out.played[1][2] >= 10.4


def test_a_timed_phrase_goes_ahead_of_a_backlog_and_starts_on_time() -> None:
    clock, out, synth = VirtualClock(0.0), RecordingOut(), FakeSynth()
    sp = Speaker(clock=clock, out=out, lookup=lambda t: None, render=lambda t: synth.render(t, VOICE), horizon=0.3)
    for text in ["A long explanation of why that was refused.", "Another long explanation.", "And a third one."]:
        sp.announce("A", "refuse.not_now", text)
    assert len(out.played) == 1, "only the phrase that starts now is handed to the output"
    first_end = out.played[0][1].duration + GAP
    due = first_end + 0.5  # the warning is due while the backlog is still waiting
    clock.set(due - 0.15)  # the loop handles the timer a little ahead
    sp.announce("A", "time.warning", "10 seconds left.", at=due)
    clock.set(due)
    sp.pump()
    keys = [key for _, key, _, _, _ in sp.log]
    assert keys[:2] == ["refuse.not_now", "time.warning"]
    warning = next(entry for entry in sp.log if entry[1] == "time.warning")
    assert warning[3] == due, "it starts exactly on time, not after the backlog"
    while any(sp.queues.values()):
        clock.advance(0.1)
        sp.pump()
    assert [k for _, k, _, _, _ in sp.log].count("refuse.not_now") == 3


def test_a_reply_starts_at_once_even_when_a_warning_is_due_and_the_warning_follows_it() -> None:
    clock, out, synth = VirtualClock(0.0), RecordingOut(), FakeSynth()
    sp = Speaker(clock=clock, out=out, lookup=lambda t: None, render=lambda t: synth.render(t, VOICE), horizon=0.3)
    long = "A very long explanation that takes several seconds to say, about the rules of usurping."
    length = synth.render(long, VOICE).duration
    assert length > 5
    sp.announce("A", "refuse.not_now", long)
    assert [(k, s) for _, k, _, s, _ in sp.log] == [("refuse.not_now", 0.0)], "no waiting for the timer at t=4"
    clock.set(3.85)
    sp.announce("A", "time.count", "5", at=4.0)  # due while the reply plays: it would follow it 1.6 s late
    sp.announce("A", "time.over", "Time's up!", at=4.0)
    while not sp.idle:
        clock.advance(0.05)
        sp.pump()
    assert [k for _, k, _, _, _ in sp.log] == ["refuse.not_now", "time.over"]
    assert sp.log[1][3] == pytest.approx(length + GAP), "time's up follows the reply at once"
    assert ("A", "time.count", "stale") in sp.dropped, "a countdown number more than 1 s late is not said"


def test_a_failed_speaker_is_shown_to_the_host() -> None:
    from tests_support import eight_player_engine

    from moderator.speaking import Voice
    from moderator.view import render_text

    class FailingOut(RecordingOut):
        failed_rooms = frozenset({"B"})

    engine = eight_player_engine()
    voice = Voice(FakeSynth(), None, VOICE, None, None, FailingOut())  # type: ignore[arg-type]
    assert voice.alerts() == ["room B's speaker is not working; its announcements are not heard"]
    assert "room B's speaker is not working" in render_text(engine, alerts=voice.alerts())
