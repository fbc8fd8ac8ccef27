"""The speaking queue (issue 9): replies at once, causal order per room, stale phrases dropped, barge-in,
and the outputs' ``stop``. Virtual clocks only: time moves when a test moves it."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fakes import FakeSynth, RecordingOut

from moderator.adapters.clock import VirtualClock
from moderator.audio.clip import Clip
from moderator.audio.timeline import TimelineOut
from moderator.errors import SynthesisError
from moderator.game.events import to_json
from moderator.settings import VoiceSettings
from moderator.voice.speaker import GAP, LONG, Speaker
from moderator.voice.spoken import Spoken, ceil_ms

VOICE = VoiceSettings()
SYNTH = FakeSynth()
LONG_TEXT = "A very long explanation that takes several seconds to say, about the rules of usurping."
PARLEY = "Leaders, go to the hallway and meet, without your hostages."


def render(text: str) -> Clip:
    return SYNTH.render(text, VOICE)


def make(**kw: Any) -> tuple[Speaker, RecordingOut, VirtualClock, list[Spoken]]:
    clock, out, spoken = VirtualClock(0.0), RecordingOut(), []
    kw.setdefault("lookup", lambda text: None)
    kw.setdefault("render", render)
    sp = Speaker(clock=clock, out=out, on_spoken=spoken.append, **kw)
    return sp, out, clock, spoken


def until_quiet(sp: Speaker, clock: VirtualClock) -> None:
    """Move the clock to each moment the speaker has something to do, as a simulation does."""
    while (t := sp.next_wake()) is not None:
        clock.set(max(t, clock.now()))
        sp.pump()


def order(spoken: list[Spoken], room: str) -> list[str]:
    return [s.key for s in spoken if s.room == room]


# --- causal order ---------------------------------------------------------------------------------------------


def test_a_phrase_still_rendering_holds_its_rooms_queue_lock_before_parley() -> None:
    """Issue 9: "Hostages locked: Grace." rendered in the background while the parley was cached."""
    gate: Future[None] = Future()

    def slow(text: str) -> Clip:
        gate.result(timeout=10)
        return render(text)

    with ThreadPoolExecutor(1) as pool:
        sp, out, clock, spoken = make(lookup={PARLEY: render(PARLEY)}.get, render=slow, background=pool,
                                      horizon=0.3)
        sp.announce("B", "hostages.locked", "Hostages locked: Grace.")
        sp.announce("both", "parley", PARLEY)
        assert [room for room, _, _ in out.played] == ["A"], "room A is free; room B waits for the lock phrase"
        assert sp.idle_at("B") == float("inf") and sp.idle_at("A") < 10, "its length is not known yet"
        clock.set(0.5)
        sp.pump()
        assert [room for room, _, _ in out.played] == ["A"]
        gate.set_result(None)
        while sp.rendering:
            sp.pump()
        until_quiet(sp, clock)
    assert order(spoken, "B") == ["hostages.locked", "parley"]
    assert order(spoken, "A") == ["parley"]
    lock, parley = [s for s in spoken if s.room == "B"]
    assert parley.start == pytest.approx(lock.end + GAP)


def test_a_timed_phrase_goes_ahead_of_waiting_replies_but_never_ahead_of_the_round_start() -> None:
    sp, _, clock, spoken = make(horizon=0.3)
    sp.announce("A", "refuse.not_now", LONG_TEXT)
    sp.announce("A", "round.start", "Round 2. 35 seconds. Each room sends 1 hostage.")
    sp.announce("A", "undone", "Undone.")
    sp.announce("A", "pardon", "Sorry, say that again.")
    first_end = render(LONG_TEXT).duration
    clock.set(first_end - 0.6)
    sp.announce("A", "leader.nag", "Room A has no leader yet.", at=first_end - 0.45)
    until_quiet(sp, clock)
    assert order(spoken, "A") == ["refuse.not_now", "round.start", "leader.nag", "undone", "pardon"]


def test_a_timed_phrase_takes_back_a_reply_handed_ahead_that_has_not_started() -> None:
    sp, out, clock, spoken = make(horizon=0.3)
    sp.announce("A", "refuse.not_now", LONG_TEXT)
    end = out.played[0][1].duration
    clock.set(end - 0.1)
    sp.announce("A", "undone", "Undone.")  # handed ahead: to start at end + GAP
    (_, undone, at), = out.played[1:]
    assert at == pytest.approx(end + GAP)
    clock.set(end)
    sp.announce("A", "time.warning", "30 seconds left.", at=end + GAP + 0.05)
    assert out.stopped == [("A", undone, end)], "taken back before it was heard"
    until_quiet(sp, clock)
    warning, again = [s for s in spoken if s.key != "refuse.not_now"]
    assert (warning.key, warning.start) == ("time.warning", pytest.approx(end + GAP + 0.05))
    assert again.key == "undone" and again.start == pytest.approx(warning.end + GAP)


def test_a_phrase_that_fails_to_render_is_dropped_in_both_rooms_and_the_queue_goes_on() -> None:
    def broken(text: str) -> Clip:
        if text == PARLEY:
            raise SynthesisError("espeak died")
        return render(text)

    warnings: list[str] = []
    with ThreadPoolExecutor(1) as pool:
        sp, _, clock, spoken = make(render=broken, background=pool, warn=warnings.append)
        sp.announce("both", "parley", PARLEY)
        sp.announce("A", "undone", "Undone.")
        while sp.rendering:
            sp.pump()
        until_quiet(sp, clock)
    assert warnings == ["could not say 'parley': espeak died"]
    assert [(room, why) for room, _, why in sp.dropped] == [("A", "failed"), ("B", "failed")]
    assert [s.key for s in spoken] == ["undone"]


# --- replies at once, warnings follow, stale ones dropped -----------------------------------------------------


def test_a_reply_is_said_at_once_and_a_warning_due_meanwhile_follows_it_immediately() -> None:
    sp, _, clock, spoken = make(horizon=0.3)
    reply = render("Alice is the leader of room A.").duration
    clock.set(10.0)
    sp.announce("A", "leader.appointed", "Alice is the leader of room A.")  # a warning is due in 1.5 s
    assert [s for _, _, _, s, _ in sp.log] == [10.0], "the reply does not wait for the warning"
    clock.set(11.35)
    sp.announce("A", "time.warning", "30 seconds left.", at=11.5)
    sp.announce("B", "time.warning", "30 seconds left.", at=11.5)
    until_quiet(sp, clock)
    first, warning_a = [s for s in spoken if s.room == "A"]
    assert (first.key, first.start) == ("leader.appointed", 10.0)
    assert 10.0 + reply > 11.5
    assert warning_a.start == pytest.approx(10.0 + reply + GAP), "right after the reply, not mixed into it"
    [warning_b] = [s for s in spoken if s.room == "B"]
    assert warning_b.start == 11.5, "room B was free: on time"


def test_late_countdown_numbers_are_dropped_and_times_up_is_always_said() -> None:
    sp, _, clock, spoken = make(horizon=0.3)
    sp.announce("A", "help", LONG_TEXT)
    length = render(LONG_TEXT).duration
    for n, due in ((3, length - 2.0), (2, length - 1.0), (1, length)):
        clock.set(max(clock.now(), due - 0.15))
        sp.pump()
        sp.announce("A", "time.count", str(n), at=due)
    clock.set(length + 0.85)
    sp.announce("A", "time.over", "Time's up! Round 1 is over.", at=length + 1.0)
    until_quiet(sp, clock)
    assert order(spoken, "A") == ["help", "time.count", "time.over"]
    assert [(k, why) for _, k, why in sp.dropped] == [("time.count", "stale"), ("time.count", "stale")]
    count = next(s for s in spoken if s.key == "time.count")
    assert count.start - length <= 1.0


def test_an_answer_is_dropped_when_the_context_it_was_asked_in_has_changed() -> None:
    phase = [(1, "round")]
    sp, _, clock, spoken = make(horizon=0.3, context=lambda: phase[0])
    sp.announce("A", "refuse.not_now", LONG_TEXT)
    sp.announce("A", "time.left", "2 seconds left in round 1.")
    sp.announce("A", "leader.appointed", "Alice is the leader of room A.")
    sp.announce("B", "time.left", "2 seconds left in round 1.")
    clock.set(2.0)
    phase[0] = (1, "hostages")  # time is up while room A still explains
    until_quiet(sp, clock)
    assert order(spoken, "A") == ["refuse.not_now", "leader.appointed"]
    assert order(spoken, "B") == ["time.left"], "said at once, while it was true"
    assert ("A", "time.left", "context") in sp.dropped


# --- barge-in -------------------------------------------------------------------------------------------------


def test_cut_stops_a_long_phrase_reports_it_cut_and_frees_the_room() -> None:
    sp, out, clock, spoken = make(horizon=0.3)
    sp.announce("both", "briefing", LONG_TEXT)
    sp.announce("A", "help", "You can say: I appoint Alice as leader, how much time is left, pause.")
    sp.announce("A", "undone", "Undone.")
    length = render(LONG_TEXT).duration
    clock.set(2.0)
    now = sp.playing("A")
    assert now is not None and (now.key, now.interruptible, now.end) == ("briefing", True, length)
    assert sp.busy_until["A"] == length
    assert sp.cut("A") is True
    briefing_a = next(clip for room, clip, _ in out.played if room == "A")
    assert out.stopped == [("A", briefing_a, 2.0)]
    assert spoken == [Spoken("A", "briefing", 0.0, 2.0, cut=True)]
    assert to_json(spoken[0].event(), 2.0) == {"t": 2.0, "type": "spoken", "room": "A", "key": "briefing",
                                                "start": 0.0, "end": 2.0, "cut": True}
    # Room A talks on only for the short reply that was waiting; room B hears the briefing to its end.
    assert sp.busy_until["A"] == pytest.approx(2.0 + GAP + render("Undone.").duration)
    assert sp.busy_until["B"] == length
    assert ("A", "help", "cut") in sp.dropped, "a long phrase waiting goes too"
    until_quiet(sp, clock)
    undone = next(s for s in spoken if s.key == "undone")
    assert undone.start == pytest.approx(2.0 + GAP), "the short reply is said at once"
    assert to_json(next(s for s in spoken if s.room == "B").event(), 9.0) == {
        "t": 9.0, "type": "spoken", "room": "B", "key": "briefing", "start": 0.0,
        "end": pytest.approx(length, abs=1e-3)}, "not cut: no 'cut' field"


def test_timed_and_short_phrases_are_never_cut() -> None:
    sp, out, clock, spoken = make(horizon=0.3)
    sp.announce("A", "time.over", "Time's up! Round 1 is over.", at=0.0)
    clock.set(1.0)
    assert sp.playing("A").key == "time.over" and not sp.playing("A").interruptible  # type: ignore[union-attr]
    assert sp.cut("A") is False
    assert out.stopped == [] and spoken == []
    until_quiet(sp, clock)
    sp.announce("B", "undone", "Undone.")
    assert render("Undone.").duration < LONG
    clock.advance(0.2)
    assert sp.cut("B") is False and out.stopped == []
    sp.announce("A", "round.start", "Round 2. 2 minutes. Each room sends 1 hostage, or 2 if you are many.")
    assert render("Round 2. 2 minutes. Each room sends 1 hostage, or 2 if you are many.").duration > LONG
    clock.advance(0.5)
    assert sp.cut("A") is False, "the round start is never cut"


def test_cut_with_nothing_playing_returns_false_and_playing_sees_the_recent_past() -> None:
    sp, _, clock, spoken = make()
    assert sp.cut("A") is False and sp.playing("A") is None
    sp.announce("A", "undone", "Undone.")
    clock.set(5.0)
    sp.pump()
    assert [s.key for s in spoken] == ["undone"]
    assert sp.playing("A") is None
    past = sp.playing("A", 0.1)
    assert past is not None and past.key == "undone" and past.start == 0.0


def test_idle_at_is_when_everything_said_so_far_is_over() -> None:
    sp, _, _, _ = make(horizon=0.0)
    assert sp.idle_at() == 0.0
    sp.announce("both", "briefing", LONG_TEXT)
    sp.announce("B", "undone", "Undone.")
    first = render(LONG_TEXT).duration + GAP
    assert sp.idle_at("A") == ceil_ms(first)
    assert sp.idle_at() == ceil_ms(first + render("Undone.").duration + GAP)
    assert sp.measure("briefing", LONG_TEXT) == ceil_ms(first)


def test_flush_hands_everything_over_and_reports_it() -> None:
    sp, out, _, spoken = make(horizon=0.0)
    sp.announce("A", "refuse.not_now", LONG_TEXT)
    sp.announce("A", "undone", "Undone.")
    assert len(out.played) == 1
    sp.flush()
    assert [s.key for s in spoken] == ["refuse.not_now", "undone"]
    assert sp.idle and sp.next_wake() is None


# --- the outputs' stop ----------------------------------------------------------------------------------------


def test_timeline_stop_truncates_the_clip_at_the_cut(tmp_path: Path) -> None:
    out = TimelineOut(tmp_path, t0=0.0, rate=1000)
    clip = Clip(np.ones(2000, dtype=np.float32), 1000)
    other = Clip(np.ones(2000, dtype=np.float32), 1000)
    out.play("A", clip, 1.0)
    out.play("B", clip, 1.0)
    out.play("A", other, 4.0)
    out.stop("A", clip, 1.5)
    out.stop("A", other, 9.0)  # already over: nothing happens
    out.stop("B", other, 1.0)  # not in that room
    rooms = out.mix()
    assert rooms["A"][1000:1500].min() == 1.0 and rooms["A"][1500:4000].max() == 0.0
    assert rooms["A"][4000:6000].min() == 1.0
    assert rooms["B"][1000:3000].min() == 1.0


def test_sound_device_stop_cuts_on_the_sample_and_a_clip_cut_before_it_starts_is_never_heard(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from test_sound_out import RATE, FakeSD, make_out

    from moderator.adapters.audio_system import AudioSystem

    sd = FakeSD()
    clock = VirtualClock(10.0)
    out = make_out(clock, system=AudioSystem(sounddevice=lambda: sd, pulse=lambda: None))
    stream = sd.streams[0]
    clip, later = (Clip(np.full(RATE, 0.5, dtype=np.float32), RATE) for _ in range(2))
    out.play("A", clip, at=10.0)  # stream time 1000.0
    out.play("A", later, at=12.0)
    first = stream.pull(1024, dac=1000.0)
    assert np.all(first[:, 0] == 0.5)
    out.stop("A", clip, 10.0 + 1500 / RATE)  # in the next buffer, 476 frames in
    out.stop("A", later, 11.0)  # before it starts
    out.stop("B", clip, 10.0)  # another room: nothing
    second = stream.pull(1024, dac=1000.0 + 1024 / RATE)
    assert np.all(second[:476, 0] == 0.5) and np.all(second[476:, 0] == 0)
    assert np.all(stream.pull(RATE * 3, dac=1000.0 + 2048 / RATE) == 0), "the cut clip is never heard"
    assert [room for room, _, _ in out.starts] == ["A"]
    assert not out._routes["A"][0].busy()
