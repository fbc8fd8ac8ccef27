"""How late do timed announcements start? A full 5-round game, in real time, on PulseAudio null sinks.

Run:  .venv/bin/python -m benchmarks.announce_latency [--quick] [--json FILE]

It starts PulseAudio with two private null sinks (tests/pulse.py), then plays an
11-player, 5-round game with one speaker per room through the real path: the
engine on the wall clock, the Speaker, pre-rendered phrases, and
``SoundDeviceOut``. Scripted players start the game, appoint leaders, name hostages and meet, each
as soon as the moderator has finished speaking (as people do). For every announcement fired by a timer (time
warnings, the countdown, "time's up") it compares the timer's scheduled time
with the moment the first sample of its audio reaches the DAC, as PortAudio
estimates it (``outputBufferDacTime`` of the callback that starts the clip).

It reports p50/p95/max of that lateness, split into: the loop noticing the timer
(tick; negative or zero when the look-ahead handled it in time), waiting for
the room's previous utterance (queue), and the output (scheduling and buffer).
Also: the time to render the set-up phrases, cold and warm.
The full run takes about 8 minutes; ``--quick`` (short rounds) about 2.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PLAYERS = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy", "Mallory"]
FULL = (90, 80, 75, 70, 70)  # every round long enough for the 60 s warning to be said
QUICK = (20, 18, 16, 14, 12)
#: The phrases timers say, all rendered before the game (hostage calls that follow "time's up" name the leader).
TIMED = {"time.warning", "time.count", "time.over"}


def percentiles(values: list[float]) -> dict[str, float]:
    """p50, p95 and max, in milliseconds."""
    if not values:
        return {"p50": float("nan"), "p95": float("nan"), "max": float("nan"), "n": 0}
    ordered = sorted(values)

    def pick(q: float) -> float:
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]

    return {"p50": round(pick(0.5) * 1000, 1), "p95": round(pick(0.95) * 1000, 1),
            "max": round(ordered[-1] * 1000, 1), "n": len(ordered)}


def child(quick: bool, out: Path) -> None:
    """The game itself; runs in a process that sees the bench's devices."""
    from moderator.adapters.clock import SystemClock
    from moderator.adapters.sound_out import SoundDeviceOut
    from moderator.game.engine import Engine
    from moderator.game.rules import make_plan
    from moderator.settings import LiveTiming, Schedule
    from moderator.speaking import make_voice
    from moderator.speech.catalog import load_catalog
    from moderator.speech.grammar import load_grammar

    durations = QUICK if quick else FULL
    schedule = Schedule(warnings=(10,), countdown=5) if quick else Schedule()
    rooms = {"A": PLAYERS[:6], "B": PLAYERS[6:]}
    clock = SystemClock()
    engine = Engine.new(make_plan(11, rounds=5, durations=durations), rooms, clock=clock, grammar=load_grammar(),
                        catalog=load_catalog(), schedule=schedule)
    events: list[dict[str, Any]] = []
    engine.subscribe(events.append)
    speakers = SoundDeviceOut(clock, room_a="roomA", room_b="roomB", log=lambda m: print(m, file=sys.stderr))
    with tempfile.TemporaryDirectory() as cache:
        voice = make_voice(engine, speakers, cache_dir=Path(cache), live=True)
        cold = voice.prerender(engine, schedule)
        warm_voice = make_voice(engine, speakers, cache_dir=Path(cache), live=True)  # a new process, same cache
        warm = warm_voice.prerender(engine, schedule)
        warm_voice.close()
        engine.announcer = voice.speaker
        engine.begin()
        lead = LiveTiming.lead  # the same look-ahead as `moderator play`
        while not engine.in_state("result"):
            due = engine.next_due()
            time.sleep(0.05 if due is None else min(0.05, max(0.0, due - lead - clock.now())))
            engine.tick(lead)
            voice.pump()
            # Players answer once they have heard the moderator out, as people do.
            if voice.speaker.idle and max(voice.speaker.busy_until.values()) <= clock.now():
                _play_the_players(engine)
        voice.finish(timeout=600)
        speakers.close()
        voice.close()
    report = _measure(events, voice.speaker.log, speakers.starts, voice.speaker.dropped)
    report.update({
        "game": {"players": 11, "rounds": 5, "durations": list(durations), "warnings": list(schedule.warnings),
                 "countdown": schedule.countdown, "quick": quick},
        "prerender": {"phrases": cold.rendered + cold.cached, "cold_seconds": round(cold.seconds, 3),
                      "warm_seconds": round(warm.seconds, 3), "synthesizer": voice.synth.name},
        "target_ms": 50,
    })
    out.write_text(json.dumps(report, indent=2) + "\n")


def _play_the_players(engine: Any) -> None:
    """What the players do as soon as the moderator asks."""
    state = engine.state
    if engine.in_state("briefing"):
        engine.handle_text("start the game")
    elif engine.in_state("round.running") and state.round == 1 and not state.rooms["A"].leader:
        engine.handle_text("I appoint Alice as leader", "A")
        engine.handle_text("I appoint Grace as leader", "B")
    elif engine.in_state("hostages"):
        for room, r in state.rooms.items():
            if r.hostages is None:
                picks = [p for p in r.members if p != r.leader][: engine.hostages_due()]
                engine.handle_text("hostages " + " and ".join(picks), room)
    elif engine.in_state("parley"):
        engine.handle_text("leaders have met")
    elif engine.in_state("prediction"):
        engine.handle_text("gambler predicts red")
    elif engine.in_state("reveal"):
        engine.handle_text(f"the president is {state.rooms['A'].members[0]}")
        engine.handle_text(f"the bomber is {state.rooms['B'].members[0]}")


def _measure(events: list[dict[str, Any]], spoken: list[tuple], starts: list[tuple],
             dropped: list[tuple[str, str, str]] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    """Match each timed announcement to the clip the speaker queued and the moment the device started it.

    A phrase the speaker dropped (a time warning that would have come more than 1 s late, behind a reply
    still playing in its room) was never queued: it is counted apart, as ``timed_announcements_dropped``."""
    announces = [e for e in events if e["type"] == "announce"]
    expanded = [(e, room) for e in announces for room in (("A", "B") if e["room"] == "both" else (e["room"],))]
    assert len(expanded) == len(spoken) + len(dropped), (len(expanded), len(spoken), len(dropped))
    gone = {(room, key) for room, key, _ in dropped}
    # Timed phrases are pre-rendered, so the speaker queued them while the event was emitted: same room, key, time.
    queued = {(room, key, round(requested, 3)): (requested, start) for room, key, requested, start, _ in spoken}
    dac = {(room, round(at, 6)): started for room, at, started in starts}
    total, tick, queue, output = [], [], [], []
    missing = 0
    for event, room in expanded:
        if event["key"] not in TIMED:
            continue
        if (room, event["key"], event["t"]) not in queued and (room, event["key"]) in gone:
            continue  # dropped, counted below
        requested, start = queued[(room, event["key"], event["t"])]
        started = dac.get((room, round(start, 6)))
        if started is None:
            missing += 1
            continue
        total.append(started - event["scheduled"])
        tick.append(requested - event["scheduled"])
        queue.append(start - requested)
        output.append(started - start)
    return {
        "lateness_ms": percentiles(total),
        "components_ms": {"tick": percentiles(tick), "queue": percentiles(queue), "output": percentiles(output)},
        "timed_announcements_not_started": missing,
        "timed_announcements_dropped": sum(1 for _, key, _ in dropped if key in TIMED),
        "all_announcements": len(expanded),
    }


def main() -> int:
    """Set up the bench and run the game in a child process."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short rounds (about a minute)")
    parser.add_argument("--json", type=Path, default=ROOT / "docs" / "benchmarks" / "announce_latency.json")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.quick, args.json)
        return 0
    from benchmarks.pulse_bench import pulse_bench

    args.json.parent.mkdir(parents=True, exist_ok=True)
    with pulse_bench() as bench:
        cmd = [sys.executable, "-m", "benchmarks.announce_latency", "--child", "--json", str(args.json.resolve())]
        if args.quick:
            cmd.append("--quick")
        subprocess.run(cmd, env=bench.env, cwd=ROOT, check=True)
    report = json.loads(args.json.read_text())
    lat, comp = report["lateness_ms"], report["components_ms"]
    print(f"timed announcements: {lat['n']} (target: audio starts within {report['target_ms']} ms of schedule)")
    print(f"lateness   p50 {lat['p50']} ms  p95 {lat['p95']} ms  max {lat['max']} ms")
    for name, value in comp.items():
        print(f"  {name:<7}  p50 {value['p50']} ms  p95 {value['p95']} ms  max {value['max']} ms")
    pre = report["prerender"]
    print(f"set-up phrases: {pre['phrases']} rendered in {pre['cold_seconds']} s cold, {pre['warm_seconds']} s warm "
          f"({pre['synthesizer']})")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
