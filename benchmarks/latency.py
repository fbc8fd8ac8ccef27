"""Latency, in real time: end of a spoken command -> ``command`` event -> first sample of the spoken reply.

Run alone:  .venv/bin/python -m benchmarks.latency [--commands N] [--json FILE]

A game on the wall clock, with the moderator's voice through ``SoundDeviceOut`` on PulseAudio null
sinks (tests/pulse.py, as ``benchmarks.announce_latency``), and both rooms' microphones fed by a
synthetic player through the ``Listener`` in 0.1 s chunks, each handed over when its last sample
would have arrived. Players wait until the moderator has finished before they speak. The microphone's
own capture buffer is not included (the audio reaches the Listener the moment its chunk is complete).
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

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ROSTER = ("Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi")
#: Commands that are legal in this order and each get a spoken reply; the cycle repeats.
OPENING = (("A", "start the game"), ("A", "I appoint Alice as leader"), ("B", "I appoint Erin as leader"))
CYCLE = (("A", "how much time is left"), ("B", "pause"), ("A", "resume"), ("B", "repeat that"),
         ("A", "Alice offers leadership to Carol"), ("A", "Carol refuses"), ("B", "how much time do we have"))
VOICE = "flite:rms"
GAP = 0.5  # players wait this long after the moderator has finished
GIVE_UP = 6.0  # seconds after the end of speech without a command: a miss


def speech_end(samples: np.ndarray, rate: int, below_peak_db: float = 40.0) -> float:
    """Seconds to the end of the last 10 ms frame within ``below_peak_db`` of the loudest one."""
    frame = rate // 100
    n = len(samples) // frame
    energy = np.sqrt(np.mean(np.square(samples[: n * frame].reshape(n, frame)), axis=1)) + 1e-12
    loud = np.nonzero(20 * np.log10(energy / energy.max()) > -below_peak_db)[0]
    return float((loud[-1] + 1) * frame / rate) if len(loud) else 0.0


def child(count: int, out: Path, engine_name: str, vosk_model: Path | None) -> None:
    """The game itself; runs in a process that sees the bench's devices."""
    from benchmarks.corpus import spoken
    from moderator.adapters.clock import SystemClock
    from moderator.adapters.sound_out import SoundDeviceOut
    from moderator.audio.endpoint import RATE, Endpointer, webrtc_classifier
    from moderator.game.engine import Engine
    from moderator.game.rules import make_plan
    from moderator.listening import make_recognizer
    from moderator.loop import Listener
    from moderator.speaking import make_voice
    from moderator.speech.catalog import load_catalog
    from moderator.speech.grammar import load_grammar
    from moderator.voice_input import CHUNK

    script = list(OPENING) + [CYCLE[i % len(CYCLE)] for i in range(max(0, count - len(OPENING)))]
    clips = {text: spoken(text, VOICE) for _, text in script}
    clock = SystemClock()
    rooms = {"A": list(ROSTER[:4]), "B": list(ROSTER[4:])}
    engine = Engine.new(make_plan(8, rounds=3, durations=[3600] * 3), rooms, clock=clock, grammar=load_grammar(),
                        catalog=load_catalog())
    commands: list[tuple[float, dict[str, Any]]] = []
    heard: list[str] = []
    engine.subscribe(lambda e: commands.append((clock.now(), e)) if e["type"] == "command" else None)
    engine.subscribe(lambda e: heard.append(f"{e['text']!r} ({e['confidence']})") if e["type"] == "heard" else None)
    device_log: list[str] = []
    speakers = SoundDeviceOut(clock, room_a="roomA", room_b="roomB", log=device_log.append)
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as cache:
        engine.begin()  # before the voice is attached: the 20 s briefing would only make the players wait
        voice = make_voice(engine, speakers, cache_dir=Path(cache), live=True)
        voice.prerender(engine, engine.schedule)
        listener = Listener(engine, make_recognizer(engine_name, vosk_model), mics=("A", "B"),
                            new_endpointer=lambda: Endpointer(webrtc_classifier()),
                            speaking_until=lambda room: voice.speaker.busy_until[room])
        step = round(CHUNK * RATE)
        silence = np.zeros(step, np.float32)
        t = clock.now()  # audio time of the next chunk, on the game clock
        line, playing, said_at, quiet_since, handed_over = 0, None, 0.0, None, 0.0
        while line < len(script) or playing is not None:
            while clock.now() < t + CHUNK:  # the chunk is complete when its last sample has arrived
                time.sleep(0.002)
                voice.pump()
            engine.tick()
            voice.pump()
            busy = not voice.speaker.idle or max(voice.speaker.busy_until.values()) > t
            quiet_since = None if busy else (quiet_since if quiet_since is not None else t)
            if playing is None and line < len(script) and quiet_since is not None and t - quiet_since >= GAP:
                room, text = script[line]
                playing, said_at, offset = (room, text, clips[text]), t, 0
                before = len(commands)
                heard.clear()
            chunks = {"A": silence, "B": silence}
            if playing is not None:
                room, text, clip = playing
                piece = clip[offset : offset + step]
                chunks[room] = np.pad(piece, (0, step - len(piece)))
                offset += step
                end = said_at + speech_end(clip, RATE)
                if len(commands) > before or t > end + GIVE_UP:
                    results.append(_measure(room, text, end, commands[before:], speakers.starts))
                    if results[-1]["command_ms"] is not None:
                        results[-1]["endpoint_ms"] = round((handed_over - end) * 1000, 1)
                    results[-1]["recognized"] = heard[-1] if heard else None
                    if len(commands) == before:  # missed: typed instead, so the game follows the script
                        engine.handle_text(text, room)
                    playing, line, quiet_since = None, line + 1, None
            fed_at, before_feed = clock.now(), len(commands)
            for mic, chunk in chunks.items():
                listener.feed(mic, chunk, RATE, t)
            if len(commands) > before_feed:  # the chunk that ended the utterance: when it was handed over
                handed_over = fed_at
            t += CHUNK
        voice.finish(timeout=30)
        time.sleep(1.0)
        speakers.close()
        voice.close()
    for r in results:  # replies whose first sample came after the command was measured
        if r["reply_ms"] is None and r["command_ms"] is not None:
            r["reply_ms"] = _reply(r, speakers.starts)
    out.write_text(json.dumps({"engine": engine_name, "voice": VOICE, "commands": results,
                               "device_messages": device_log}, indent=2) + "\n")


def _measure(room: str, text: str, end: float, heard: list[tuple[float, dict[str, Any]]],
             starts: list[tuple[str, float, float]]) -> dict[str, Any]:
    row: dict[str, Any] = {"room": room, "text": text, "speech_end": round(end, 4), "command_ms": None,
                           "reply_ms": None, "heard": heard[0][1]["text"] if heard else None}
    if heard:
        row["command_at"] = heard[0][0]
        row["command_ms"] = round((heard[0][0] - end) * 1000, 1)
        row["reply_ms"] = _reply(row, starts)
    return row


def _reply(row: dict[str, Any], starts: list[tuple[str, float, float]]) -> float | None:
    """The first clip the output started after the command, in ms after the end of speech."""
    after = [started for _, at, started in starts if at >= row["command_at"] - 1e-3]
    return round((min(after) - row["speech_end"]) * 1000, 1) if after else None


def percentiles(values: list[float]) -> dict[str, Any]:
    """p50, p95, max (ms) and n."""
    if not values:
        return {"p50": None, "p95": None, "max": None, "n": 0}
    q = np.quantile(values, [0.5, 0.95])
    return {"p50": round(float(q[0]), 1), "p95": round(float(q[1]), 1), "max": round(max(values), 1),
            "n": len(values)}


def run(count: int = 25, engine_name: str = "pocketsphinx", vosk_model: Path | None = None) -> dict[str, Any]:
    """Set up the bench, play the commands in a child process, and summarize."""
    sys.path.insert(0, str(ROOT / "tests"))
    from pulse import pulse_bench

    with tempfile.TemporaryDirectory() as tmp, pulse_bench() as bench:
        out = Path(tmp) / "latency.json"
        cmd = [sys.executable, "-m", "benchmarks.latency", "--child", "--commands", str(count), "--json", str(out),
               "--engine", engine_name] + (["--vosk-model", str(vosk_model)] if vosk_model else [])
        subprocess.run(cmd, env=bench.env, cwd=ROOT, check=True)
        raw = json.loads(out.read_text())
    rows = raw["commands"]
    return {
        "engine": engine_name, "voice": raw["voice"], "spoken": len(rows),
        "recognized": sum(1 for r in rows if r["command_ms"] is not None),
        "to_command_ms": percentiles([r["command_ms"] for r in rows if r["command_ms"] is not None]),
        "to_reply_ms": percentiles([r["reply_ms"] for r in rows if r["reply_ms"] is not None]),
        "endpointing_ms": percentiles([r["endpoint_ms"] for r in rows if r.get("endpoint_ms") is not None]),
        "output_underruns": sum("ran dry" in m for m in raw["device_messages"]),
        "commands": rows,
    }


def main() -> int:
    """Run alone, or (``--child``) be the game under the bench."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commands", type=int, default=25)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--engine", default="pocketsphinx")
    parser.add_argument("--vosk-model", type=Path)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.commands, args.json, args.engine, args.vosk_model)
        return 0
    report = run(args.commands, args.engine, args.vosk_model)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "commands"}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
