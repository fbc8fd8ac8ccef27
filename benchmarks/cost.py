"""Cost of listening: real-time factor per room, CPU with both rooms listening, peak memory, launch to listening.

Run alone:  .venv/bin/python -m benchmarks.cost [--seconds S]

Everything is measured in a fresh child process, so its peak RSS is that of a moderator listening to
two rooms (engine, grammar, recognizer, endpointers); the audio is made beforehand and loaded from a file. The audio
is party talk and commands from the synthetic players with 8-talker babble under it at 12 dB.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SNR = 12.0
LINES = (
    "I appoint Alice as leader", "did anyone see where I left my drink", "how much time is left",
    "I think Bob is lying about his card", "hostages Bob and Carol", "this music is really great",
    "Carol offers leadership to Dave", "who wants another slice of pizza", "pause", "resume",
)
VOICES = ("flite:rms", "flite:slt", "espeak-ng:en-us", "flite:awb")


def memory_mb(field: str = "VmHWM") -> float:
    """This process's peak (VmHWM) or current (VmRSS) resident memory in MB.

    Not ``getrusage``: Linux carries ru_maxrss over fork and exec, so a child would report its parent's peak.
    """
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def room_audio(seconds: float, seed: int) -> np.ndarray:
    """Lines with pauses, babble under them at ``SNR`` dB (peak-frame), at 16 kHz."""
    from benchmarks.corpus import babble, spoken
    from moderator.audio.endpoint import RATE
    from moderator.audio.mix import scale_noise

    rng = np.random.default_rng(seed)
    parts, n = [], 0
    while n < seconds * RATE:
        line = spoken(LINES[int(rng.integers(len(LINES)))], VOICES[int(rng.integers(len(VOICES)))])
        gap = np.zeros(int(rng.integers(RATE, 3 * RATE)), np.float32)
        parts += [line, gap]
        n += len(line) + len(gap)
    speech = np.concatenate(parts)[: round(seconds * RATE)]
    noise = babble(seconds, seed=seed + 100)
    return speech + scale_noise(speech, noise, SNR, peak=True)


def child(audio_file: Path, engine_name: str, vosk_model: Path | None) -> None:
    """Load, say "listening", then measure the audio in ``audio_file``; prints one JSON line at the end."""
    from benchmarks.corpus import ROSTERS
    from benchmarks.phases import phase_engine
    from moderator.audio.endpoint import RATE, Endpointer, webrtc_classifier
    from moderator.listening import make_recognizer
    from moderator.loop import Listener
    from moderator.voice_input import CHUNK

    def listener_for(mics: tuple[str, ...]) -> Listener:
        engine = phase_engine("round", ROSTERS[0])
        return Listener(engine, recognizer, mics=mics, new_endpointer=lambda: Endpointer(webrtc_classifier()))

    recognizer = make_recognizer(engine_name, vosk_model)
    both = listener_for(("A", "B"))
    step = round(CHUNK * RATE)
    for mic in ("A", "B"):  # the first chunk of each microphone compiles what the phase allows
        both.feed(mic, np.zeros(step, np.float32), RATE, 0.0)
        both._expect_current_phase(mic)
    print("listening", flush=True)
    rss_listening = memory_mb("VmRSS")

    loaded = np.load(audio_file)
    audio = {room: loaded[room] for room in ("A", "B")}
    seconds = len(audio["A"]) / RATE
    # Real-time factor: one room's audio, as fast as it goes, on this one core.
    one = listener_for(("A",))
    cpu = time.process_time()
    for i in range(0, len(audio["A"]), step):
        one.feed("A", audio["A"][i : i + step], RATE, i / RATE)
    rtf = (time.process_time() - cpu) / seconds
    # Both rooms in real time: each 0.1 s chunk is handed over when it is complete.
    cpu, wall = time.process_time(), time.perf_counter()
    for n, i in enumerate(range(0, len(audio["A"]), step)):
        delay = wall + (n + 1) * CHUNK - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        for room in ("A", "B"):
            both.feed(room, audio[room][i : i + step], RATE, 10.0 + i / RATE)
    elapsed = time.perf_counter() - wall
    report = {
        "engine": engine_name, "seconds": seconds, "rtf_one_room": round(rtf, 4),
        "cpu_percent_both_rooms": round(100 * (time.process_time() - cpu) / elapsed, 1),
        "realtime_lag_s": round(elapsed - seconds, 3),
        "rss_mb_listening": round(rss_listening, 1),
        "peak_rss_mb": round(memory_mb("VmHWM"), 1),
    }
    print(json.dumps(report), flush=True)


def run(seconds: float = 30.0, engine_name: str = "pocketsphinx", vosk_model: Path | None = None) -> dict[str, Any]:
    """Make the rooms' audio; launch the child; time it to "listening"; collect its figures."""
    with tempfile.TemporaryDirectory() as tmp:
        audio_file = Path(tmp) / "rooms.npz"
        np.savez(audio_file, A=room_audio(seconds, 1), B=room_audio(seconds, 2))
        return _launch(audio_file, engine_name, vosk_model)


def _launch(audio_file: Path, engine_name: str, vosk_model: Path | None) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "benchmarks.cost", "--child", "--audio", str(audio_file), "--engine", engine_name]
    cmd += ["--vosk-model", str(vosk_model)] if vosk_model else []
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    to_listening = time.perf_counter() - start
    rest = proc.stdout.read()
    if proc.wait() != 0 or first.strip() != "listening":
        raise RuntimeError(f"the cost benchmark's child failed: {first}{rest}")
    report = json.loads(rest.strip().splitlines()[-1])
    report["launch_to_listening_s"] = round(to_listening, 2)
    return report


def main() -> int:
    """Run alone, or (``--child``) be the measured process."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--engine", default="pocketsphinx")
    parser.add_argument("--vosk-model", type=Path)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--audio", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.audio, args.engine, args.vosk_model)
    else:
        print(json.dumps(run(args.seconds, args.engine, args.vosk_model), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
