"""The ``AudioOut`` port's contract, run against the outputs the tests and the game use in place of speakers
(the recording fake, ``PlayedAudio``, the WAV timeline, the silent ``Unplayed``) and the real adapter,
``SoundDeviceOut``, on PulseAudio null sinks.

Every adapter runs the same scenarios (``SCENARIOS``: clock times, clips, stops), is closed twice, and is
then asked what each room heard, as 16 kHz samples: the fake and ``PlayedAudio`` from their records, the
timeline from its WAV files, the sound card from ``written`` (what its callback really wrote, with the DAC
time of each frame). The same assertions then hold for all. The sound card runs in a subprocess that sees
the bench's devices (PortAudio reads the ALSA configuration when it loads); it imports this module and runs
the same scenarios there.
"""

from __future__ import annotations

import base64
import json
import math
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from fakes import RecordingOut

from moderator.adapters.clock import VirtualClock
from moderator.audio.clip import Clip
from moderator.audio.reference import PlayedAudio, Unplayed, band_limited
from moderator.audio.timeline import TimelineOut

if TYPE_CHECKING:
    from pulse import PulseBench

RATE = 16000
"""What each room heard is compared at this rate."""
CLIP_RATE = 22050
"""Clips are made at another rate than the output's, as the synthesizer makes them."""
LEVEL = 0.3
QUIET_DB = -60.0
ONSET = 0.010
"""How far from its clock time a clip may start (a sound card's DAC estimate is good to a few ms)."""
LEAD = 0.3
"""Scenarios start this long after ``now``: a sound card schedules ahead of its buffer."""

Settle = Callable[[float], None]


def tone(freq: float, seconds: float) -> Clip:
    return Clip.tone((freq,), seconds, CLIP_RATE, level=LEVEL)


# -- the scenarios: what is played, stopped and when (the same for every adapter) ---------------------------


def one_clip(out: Any, now: float, settle: Settle) -> dict[str, Any]:
    """One clip in room A; room B says nothing."""
    t = now + LEAD
    began = time.perf_counter()
    out.play("A", tone(440, 0.3), t)
    took = time.perf_counter() - began
    settle(t + 0.4)
    return {"t": t, "window": (t - 0.2, t + 0.5), "play_seconds": took}


def overlapping(out: Any, now: float, settle: Settle) -> dict[str, Any]:
    """Two clips in room A, the second starting while the first plays: mixed."""
    t = now + LEAD
    out.play("A", tone(440, 0.4), t)
    out.play("A", tone(660, 0.4), t + 0.1)
    settle(t + 0.6)
    return {"t": t, "window": (t - 0.1, t + 0.6)}


def stopped(out: Any, now: float, settle: Settle) -> dict[str, Any]:
    """A long clip cut short while another plays on; a stop in the wrong room, and one after the clip ended,
    change nothing."""
    t = now + LEAD
    long, other, short = tone(440, 1.0), tone(660, 0.6), tone(880, 0.2)
    out.play("A", long, t)
    out.play("A", other, t)
    out.play("B", short, t)
    out.stop("A", long, t + 0.3)  # ahead of time: it is cut on that clock time
    out.stop("B", other, t + 0.1)  # not in room B: nothing happens
    settle(t + 0.5)
    out.stop("B", short, t + 0.5)  # it ended at t + 0.2: nothing happens
    settle(t + 1.1)
    return {"t": t, "window": (t - 0.1, t + 1.1)}


def closed_at_once(out: Any, now: float, settle: Settle) -> dict[str, Any]:
    """A clip queued, and the output closed before it even starts: close lets it play to its end."""
    t = now + LEAD
    out.play("A", tone(440, 0.3), t)
    return {"t": t, "window": (t - 0.1, t + 0.4)}


SCENARIOS: dict[str, Callable[[Any, float, Settle], dict[str, Any]]] = {
    f.__name__: f for f in (one_clip, overlapping, stopped, closed_at_once)
}


def execute(name: str, out: Any, now: float, settle: Settle, heard: Callable[[Any, float, float], Any]) -> dict:
    """Run scenario ``name`` on ``out``, close it twice, and ask what each room heard over its window."""
    info = SCENARIOS[name](out, now, settle)
    out.close()
    out.close()  # twice is harmless
    a, b = info["window"]
    rooms = heard(out, a, b)
    info["rooms"] = None if rooms is None else {room: encode(samples) for room, samples in rooms.items()}
    return info


def encode(samples: np.ndarray) -> str:
    return base64.b64encode(np.asarray(samples, "<f4").tobytes()).decode()


def decode(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), "<f4")


# -- what each adapter says each room heard, at 16 kHz from clock time a to b --------------------------------


def samples_between(a: float, b: float) -> int:
    return round((b - a) * RATE)


def heard_by_recording(out: RecordingOut, a: float, b: float) -> dict[str, np.ndarray]:
    """The fake keeps the requests: each clip at its time, up to the first stop that named it in its room."""
    n = samples_between(a, b)
    rooms = {room: np.zeros(n, np.float32) for room in "AB"}
    for room, clip, at in out.played:
        end = at + clip.duration
        for where, cut, when in out.stopped:
            if where == room and cut is clip and when < end:
                end = max(at, when)
        kept = clip.samples[: round((end - at) * clip.rate)]
        rooms[room] += band_limited(kept, clip.rate, at, a, n)
    return rooms


def heard_by_reference(out: PlayedAudio, a: float, b: float) -> dict[str, np.ndarray]:
    return {room: out.reference([room], a, samples_between(a, b)) for room in "AB"}


def heard_by_timeline(out: TimelineOut, a: float, b: float) -> dict[str, np.ndarray]:
    """The files ``close`` wrote: sample 0 is clock time ``t0`` of timeline.json."""
    meta = json.loads((out.directory / "timeline.json").read_text(encoding="utf-8"))
    rooms = {}
    for room, name in meta["files"].items():
        clip = Clip.read(out.directory / name)
        rooms[room] = band_limited(clip.samples, clip.rate, meta["t0"], a, samples_between(a, b))
    return rooms


def heard_by_speakers(out: Any, a: float, b: float) -> dict[str, np.ndarray]:
    """What the sound card's callback wrote, frame by frame, at the DAC time of each."""
    n = samples_between(a, b)
    rooms = {room: np.zeros(n, np.float32) for room in "AB"}
    for room in rooms:
        for start, rate, samples in out.written(room, a, b):
            rooms[room] += band_limited(samples, rate, start, a, n)
    return rooms


def run_on_speakers() -> dict[str, Any]:
    """Every scenario on ``SoundDeviceOut`` with rooms A and B on the bench's null sinks (in the subprocess)."""
    from moderator.adapters.clock import SystemClock
    from moderator.adapters.sound_out import SoundDeviceOut
    from moderator.errors import DeviceError

    results: dict[str, Any] = {}
    logs: list[str] = []
    for name in SCENARIOS:
        clock = SystemClock()
        out = SoundDeviceOut(clock, room_a="roomA", room_b="roomB", log=logs.append)
        results[name] = execute(name, out, clock.now(), lambda t, c=clock: time.sleep(max(0.0, t - c.now())),
                                heard_by_speakers)
    try:
        SoundDeviceOut(SystemClock(), room_a="no-such-speaker", room_b="roomB", log=logs.append)
    except DeviceError as exc:
        results["unknown device"] = str(exc)
    results["logs"] = logs
    return results


SPEAKERS = r"""
import json, sys
sys.path.insert(0, "tests")
from test_contract_audio_out import run_on_speakers
print(json.dumps(run_on_speakers()))
"""


# -- the adapters -------------------------------------------------------------------------------------------


def run_in_process(make: Callable[[VirtualClock], Any], heard: Callable[[Any, float, float], Any] | None) -> dict:
    results: dict[str, Any] = {}
    for name in SCENARIOS:
        clock = VirtualClock(100.0)
        results[name] = execute(name, make(clock), clock.now(), lambda t, c=clock: c.set(max(c.now(), t)),
                                heard or (lambda out, a, b: None))
    return results


IN_PROCESS: dict[str, tuple[Callable[[VirtualClock], Any], Callable[[Any, float, float], Any] | None]] = {
    "RecordingOut": (lambda clock: RecordingOut(), heard_by_recording),
    "PlayedAudio": (lambda clock: PlayedAudio(RecordingOut()), heard_by_reference),
    "TimelineOut": (lambda clock: TimelineOut(Path(tempfile.mkdtemp(prefix="contract-")), t0=clock.now()),
                    heard_by_timeline),
    "Unplayed": (lambda clock: Unplayed(), None),
}


@pytest.fixture(scope="module")
def speakers(request: pytest.FixtureRequest) -> dict[str, Any]:
    bench: PulseBench = request.getfixturevalue("bench")  # skips, saying why, without PulseAudio
    proc = bench.run(SPEAKERS, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(params=[*IN_PROCESS, pytest.param("SoundDeviceOut", marks=pytest.mark.pulse)])
def results(request: pytest.FixtureRequest) -> dict[str, Any]:
    if request.param == "SoundDeviceOut":
        return request.getfixturevalue("speakers")
    return run_in_process(*IN_PROCESS[request.param])


def rooms_of(results: dict[str, Any], name: str) -> tuple[float, float, dict[str, np.ndarray]]:
    """The scenario's start ``t``, its window's start, and what each room heard (skips an output that plays
    nothing)."""
    info = results[name]
    if info["rooms"] is None:
        pytest.skip("this output plays nothing, by design: only that it takes every call is checked")
    return info["t"], info["window"][0], {room: decode(samples) for room, samples in info["rooms"].items()}


def span(samples: np.ndarray, start: float, a: float, b: float) -> np.ndarray:
    """The samples from clock time ``a`` to ``b`` (``start``: the clock time of sample 0)."""
    return samples[round((a - start) * RATE) : round((b - start) * RATE)]


def db(samples: np.ndarray) -> float:
    rms = float(np.sqrt(np.mean(np.square(samples, dtype=np.float64)))) if len(samples) else 0.0
    return 20 * math.log10(rms) if rms > 0 else float("-inf")


def amplitude(samples: np.ndarray, freq: float) -> float:
    """The amplitude of the ``freq`` Hz sine in ``samples``."""
    t = np.arange(len(samples)) / RATE
    return float(2 * abs(np.dot(samples, np.exp(-2j * np.pi * freq * t))) / len(samples))


def near(value: float, expected: float = LEVEL) -> bool:
    return abs(value - expected) < 0.1 * expected


def onset(samples: np.ndarray, start: float) -> float:
    """The clock time of the first sample louder than a sixth of the clips' level (2 ms into their fade-in)."""
    loud = np.flatnonzero(np.abs(samples) > LEVEL / 6)
    assert len(loud), "nothing was heard"
    return start + loud[0] / RATE


# -- the contract -------------------------------------------------------------------------------------------


def test_play_never_waits_for_the_clip(results: dict[str, Any]) -> None:
    for name in SCENARIOS:
        assert name in results, f"{name} did not run"
    assert results["one_clip"]["play_seconds"] < 0.15  # the clip lasts 0.3 s and starts 0.3 s later


def test_a_clip_plays_in_its_room_from_its_clock_time(results: dict[str, Any]) -> None:
    t, start, rooms = rooms_of(results, "one_clip")
    a = rooms["A"]
    assert abs(onset(a, start) - (t + 0.002)) < ONSET
    assert near(amplitude(span(a, start, t + 0.05, t + 0.25), 440))
    assert db(span(a, start, start, t - ONSET)) < QUIET_DB, "nothing before it"
    assert db(span(a, start, t + 0.3 + ONSET, start + 0.7)) < QUIET_DB, "nothing after it"
    assert db(rooms["B"]) < QUIET_DB, "nothing in the other room"


def test_overlapping_clips_are_mixed(results: dict[str, Any]) -> None:
    t, start, rooms = rooms_of(results, "overlapping")
    a = rooms["A"]
    first = span(a, start, t + 0.02, t + 0.08)
    both = span(a, start, t + 0.15, t + 0.35)
    second = span(a, start, t + 0.42, t + 0.48)
    assert near(amplitude(first, 440)) and amplitude(first, 660) < 0.1 * LEVEL
    assert near(amplitude(both, 440)) and near(amplitude(both, 660))
    assert amplitude(second, 440) < 0.1 * LEVEL and near(amplitude(second, 660))
    assert db(rooms["B"]) < QUIET_DB


def test_stop_cuts_one_clip_short_and_the_others_play_on(results: dict[str, Any]) -> None:
    t, start, rooms = rooms_of(results, "stopped")
    a, b = rooms["A"], rooms["B"]
    before = span(a, start, t + 0.05, t + 0.25)
    after = span(a, start, t + 0.3 + ONSET, t + 0.55)
    assert near(amplitude(before, 440)) and near(amplitude(before, 660))
    assert amplitude(after, 440) < 0.1 * LEVEL, "cut at its stop time"
    assert near(amplitude(after, 660)), "the other clip, named in a stop for room B, plays on"
    assert db(span(a, start, t + 0.6 + ONSET, t + 1.05)) < QUIET_DB, "nothing of the cut clip's rest"
    assert near(amplitude(span(b, start, t + 0.05, t + 0.15), 880)), "a stop after its end changed nothing"
    assert db(span(b, start, t + 0.2 + ONSET, t + 1.05)) < QUIET_DB


def test_close_lets_queued_clips_play_to_their_end(results: dict[str, Any]) -> None:
    t, start, rooms = rooms_of(results, "closed_at_once")
    a = rooms["A"]
    assert abs(onset(a, start) - (t + 0.002)) < ONSET
    assert near(amplitude(span(a, start, t + 0.02, t + 0.28), 440)), "the whole clip, to its end"


@pytest.mark.pulse
def test_an_unknown_device_is_a_clear_error(speakers: dict[str, Any]) -> None:
    message = speakers["unknown device"]
    assert message.startswith("unknown output device 'no-such-speaker'; available: ")
    assert "roomA" in message and "roomB" in message  # what there is to choose from
    assert speakers["logs"] == []
