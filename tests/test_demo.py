"""``moderator demo``: the per-room WAV timelines agree with the event log."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from moderator.audio.clip import Clip
from moderator.cli import main
from moderator.env import Environment

SPEECH_DB = -40.0  # a 50 ms frame louder than this is sound
SILENCE_DB = -70.0


def run_demo(out: Path, cache: Path, *extra: str) -> str:
    env = Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())
    code = main(["demo", "--audio-out", str(out), "--cache-dir", str(cache), *extra], env=env)
    assert code == 0, env.stderr.getvalue()
    return env.stdout.getvalue()


def loudest(clip: Clip, start: float, end: float) -> float:
    """The loudest 50 ms frame (dBFS) of clip between start and end seconds."""
    a, b = max(0, round(start * clip.rate)), round(end * clip.rate)
    seg = clip.samples[a:b]
    frame = round(0.05 * clip.rate)
    if len(seg) < frame:
        return float("-inf")
    frames = seg[: len(seg) // frame * frame].reshape(-1, frame)
    rms = np.sqrt(np.mean(np.square(frames, dtype=np.float64), axis=1)).max()
    return 20 * np.log10(rms) if rms > 0 else float("-inf")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("demo")
    run_demo(base / "out", base / "cache", "--quiet")
    out = base / "out"
    return {
        "timeline": json.loads((out / "timeline.json").read_text()),
        "events": [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()],
        "A": Clip.read(out / "roomA.wav"),
        "B": Clip.read(out / "roomB.wav"),
        "transcript": (out / "transcript.txt").read_text(),
        "dir": out,
    }


def test_files_cover_the_whole_game_from_its_first_event(demo: dict[str, Any]) -> None:
    events, t0 = demo["events"], demo["timeline"]["t0"]
    assert t0 == events[0]["t"]
    for room in "AB":
        assert demo[room].duration >= events[-1]["t"] - t0
    assert [e for e in events if e["type"] != "spoken"][-1]["type"] in ("announce", "result")
    assert events[-1]["type"] == "spoken", "the log goes on until the last words have been said"
    assert "Red team wins" in demo["transcript"]


def test_the_briefing_is_said_before_round_1_which_starts_at_0(demo: dict[str, Any]) -> None:
    events = demo["events"]
    briefings = [e for e in events if e["type"] == "spoken" and e["key"] == "briefing"]
    assert [b["room"] for b in briefings] == ["A", "B"] and briefings[0]["start"] == events[0]["t"] < -10
    start = next(e for e in events if e["type"] == "round_start")
    assert start["t"] == 0.0 and all(b["end"] <= 0.0 for b in briefings)
    heard = [e["start"] for e in events if e["type"] == "spoken" and e["key"] == "round.start"]
    assert heard[:2] == [0.0, 0.0], "round 1 is announced when it starts"


def test_what_was_spoken_is_in_the_files_and_no_reply_is_held_back(demo: dict[str, Any]) -> None:
    from test_speaking_queue_games import late_replies

    t0 = demo["timeline"]["t0"]
    spoken = [e for e in demo["events"] if e["type"] == "spoken"]
    assert len(spoken) > 100
    for e in spoken:
        assert loudest(demo[e["room"]], e["start"] - t0, min(e["end"], e["start"] + 1.0) - t0) > SPEECH_DB, e
    assert late_replies(demo["events"]) == []


def test_every_announcement_is_heard_in_its_room_at_its_time(demo: dict[str, Any]) -> None:
    t0 = demo["timeline"]["t0"]
    announces = [e for e in demo["events"] if e["type"] == "announce"]
    assert len(announces) > 50
    for e in announces:
        rooms = "AB" if e["room"] == "both" else e["room"]
        for room in rooms:
            # Utterances queue per room with short gaps, so within a second of its time the room is speaking.
            level = loudest(demo[room], e["t"] - t0, e["t"] - t0 + 1.0)
            assert level > SPEECH_DB, (room, e)


def test_announcements_for_one_room_are_not_heard_in_the_other(demo: dict[str, Any]) -> None:
    t0 = demo["timeline"]["t0"]
    announces = [e for e in demo["events"] if e["type"] == "announce"]
    checked = 0
    for e in announces:
        if e["room"] == "both":
            continue
        other = "B" if e["room"] == "A" else "A"
        # Only where the other room has nothing of its own still being said.
        if any(o["room"] in (other, "both") and e["t"] - 15 <= o["t"] <= e["t"] + 1 for o in announces):
            continue
        assert loudest(demo[other], e["t"] - t0, e["t"] - t0 + 1.0) < SILENCE_DB, e
        checked += 1
    assert checked >= 5


def test_the_time_up_cue_comes_before_the_words(demo: dict[str, Any]) -> None:
    t0 = demo["timeline"]["t0"]
    over = [e for e in demo["events"] if e["type"] == "announce" and e["key"] == "time.over"]
    assert len(over) == 3
    clip = demo["A"]
    for e in over:
        start = round((e["t"] - t0) * clip.rate)
        seg = clip.samples[start : start + round(0.18 * clip.rate)]
        spectrum = np.abs(np.fft.rfft(seg))
        peak = np.fft.rfftfreq(len(seg), 1 / clip.rate)[spectrum.argmax()]
        assert abs(peak - 660) < 15 or abs(peak - 990) < 15, peak  # the first beep: 660 Hz + its fifth


@pytest.mark.parametrize("lang", ["it", "fr", "zh"])
def test_demo_speaks_other_languages(tmp_path: Path, lang: str) -> None:
    run_demo(tmp_path / "out", tmp_path / "cache", "--quiet", "--lang", lang)
    events = [json.loads(line) for line in (tmp_path / "out" / "events.jsonl").read_text().splitlines()]
    first = next(e for e in events if e["type"] == "announce")
    assert "Welcome" not in first["text"]
    room_a = Clip.read(tmp_path / "out" / "roomA.wav")
    assert loudest(room_a, 0, 3) > SPEECH_DB
