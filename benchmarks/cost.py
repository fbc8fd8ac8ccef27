"""Cost of listening: real-time factor per room, CPU with both rooms listening, peak memory, launch to listening.

Run alone:  .venv/bin/python -m benchmarks.cost [--seconds S] [--acoustic-model MODEL] [--second-opinion whisper]

Everything is measured in a fresh child process, so its peak RSS is that of a moderator listening to
two rooms (engine, grammar, recognizer, endpointers); the audio is made beforehand and loaded from a file. The audio
is party talk and commands from the synthetic players with 8-talker babble under it at 12 dB.

Full duplex (``moderator play`` with speakers): room A's audio again, with the moderator talking about half
the time (its announcements, by its own synthesizer) heard through a simulated room
(``moderator.audio.room.EchoRoom``, 20-60 ms away, RT60 0.3 s). ``rtf_echo_one_room`` is the echo path
alone (``EchoPath.cancel``: Speex's filter, the delay tracking and the residual-echo estimate),
``rtf_canceller_one_room`` the canceller's filter alone within it, and ``rtf_one_room_aec`` the whole
listening path with it (``Listener.feed`` with an ``EchoPath``), beside ``rtf_one_room`` without.

The sound card's callbacks are Python: they wait while anything holds the interpreter's lock. ``longest_stall_ms``
is the longest a thread waiting 1 ms at a time went without its turn while both rooms were decoded in this
process (as ``simulate`` and these figures do); ``longest_stall_ms_live`` the same with pocketsphinx in decoding
processes of its own, as ``moderator play`` runs it, and ``decoder_processes_peak_rss_mb_live`` their memory,
on top of ``peak_rss_mb``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import subprocess
import sys
import tempfile
import threading
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


def moderator_track(seconds: float, seed: int) -> tuple[list[tuple[float, np.ndarray]], np.ndarray, float, float]:
    """The moderator's announcements placed so that it talks about half of ``seconds`` (each followed by a
    pause about as long), after a ``lead`` of set-up talk (the briefing, before clock time 0, on which the
    canceller adapts); what room A's microphone hears of them from ``-lead``; that microphone's delay; ``lead``."""
    from benchmarks.barge_in import ANNOUNCEMENTS, WARM_UP, moderator_voice
    from moderator.audio.clip import Clip
    from moderator.audio.endpoint import RATE
    from moderator.audio.reference import PlayedAudio, Unplayed
    from moderator.audio.room import EchoRoom
    from moderator.voice_input import CHUNK

    say = moderator_voice()
    rng = np.random.default_rng(seed)
    played = PlayedAudio(Unplayed(), keep=2 * seconds + 120)
    warm = say(WARM_UP).resample(RATE)
    lead = float(np.ceil((warm.duration + 0.5) / CHUNK) * CHUNK)
    phrases: list[tuple[float, np.ndarray]] = [(-lead + 0.2, warm.samples)]
    t = 0.3
    while t < seconds:
        clip = say(ANNOUNCEMENTS[int(rng.integers(len(ANNOUNCEMENTS)))]).resample(RATE)
        phrases.append((t, clip.samples))
        t += clip.duration * (1 + float(rng.uniform(0.8, 1.2)))
    for at, samples in phrases:
        played.play("A", Clip(samples, RATE), at)
    room = EchoRoom(played, 0.0, seed=seed)
    return phrases, room.echo("A", -lead, round((lead + seconds) * RATE)), room.delays["A"], lead


def echo_cost(audio: np.ndarray, phrases: list[tuple[float, np.ndarray]], delay: float, lead: float,
              listener_for: Any) -> dict[str, float]:
    """Real-time factors of the echo path alone, of its canceller alone, and of the listening path with it,
    on one room's ``audio`` (its microphone from clock time ``-lead``, the moderator's echo in it) and the
    moderator's ``phrases``. The set-up talk before time 0 is not timed: the canceller adapts on it, as in a game."""
    from moderator.adapters.echo import make_echo_canceller
    from moderator.audio.clip import Clip
    from moderator.audio.echo import LEAD, EchoPath
    from moderator.audio.endpoint import RATE
    from moderator.audio.reference import PlayedAudio, Unplayed
    from moderator.voice_input import CHUNK

    def played() -> PlayedAudio:
        out = PlayedAudio(Unplayed(), keep=2 * len(audio) / RATE + 120)
        for start, samples in phrases:
            out.play("A", Clip(samples, RATE), start)
        return out

    step, first = round(CHUNK * RATE), round(lead * RATE)
    seconds = (len(audio) - first) / RATE

    def timed(feed: Any) -> float:
        """CPU seconds of ``feed(chunk, t)`` over the audio from time 0 (after the untimed set-up)."""
        for i in range(0, first, step):
            feed(audio[i : i + step], i / RATE - lead)
        cpu = time.process_time()
        for i in range(first, len(audio), step):
            feed(audio[i : i + step], i / RATE - lead)
        return time.process_time() - cpu

    path = EchoPath(played(), ("A",), lambda: make_echo_canceller("auto"), {"A": delay})
    echo = timed(lambda chunk, t: path.cancel("A", chunk, t))
    canceller, reference = make_echo_canceller("auto"), played()
    filtering = timed(lambda chunk, t: canceller.process(chunk, reference.reference(("A",), t - (delay - LEAD),
                                                                                      len(chunk))))
    listener = listener_for(("A",), EchoPath(played(), ("A",), lambda: make_echo_canceller("auto"), {"A": delay}))
    listening = timed(lambda chunk, t: listener.feed("A", chunk, RATE, t))
    talking = sum(max(0.0, min(at + len(p) / RATE, seconds) - max(at, 0.0)) for at, p in phrases)
    return {"rtf_echo_one_room": round(echo / seconds, 4), "rtf_canceller_one_room": round(filtering / seconds, 4),
            "rtf_one_room_aec": round(listening / seconds, 4), "moderator_talking_share": round(talking / seconds, 3)}


class StallWatch:
    """The longest time a thread that asks to wake every millisecond waits for its turn: how long the listening
    path holds the interpreter's lock at a stretch, which the sound card's callbacks wait for in a live game."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> StallWatch:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        last = time.perf_counter()
        while not self._stop.is_set():
            time.sleep(0.001)
            now = time.perf_counter()
            self.longest, last = max(self.longest, now - last), now


def in_real_time(listener: Any, audio: dict[str, np.ndarray], t0: float) -> tuple[float, float, float]:
    """Both rooms' audio to ``listener``, each 0.1 s chunk handed over when it is complete; (elapsed wall
    seconds, CPU seconds of this process, longest stall in seconds)."""
    from moderator.audio.endpoint import RATE
    from moderator.voice_input import CHUNK

    step = round(CHUNK * RATE)
    with StallWatch() as watch:
        cpu, wall = time.process_time(), time.perf_counter()
        for n, i in enumerate(range(0, len(audio["A"]), step)):
            delay = wall + (n + 1) * CHUNK - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            for room in ("A", "B"):
                listener.feed(room, audio[room][i : i + step], RATE, t0 + i / RATE)
        elapsed, cpu_used = time.perf_counter() - wall, time.process_time() - cpu
    return elapsed, cpu_used, watch.longest


def decoder_processes_mb(listener: Any) -> float:
    """The peak resident memory of the decoding processes behind ``listener`` (``moderator play``'s), summed."""
    total = 0.0
    recs = [listener.recognizer, *listener.recognizers.values()]
    recs += [inner for r in recs for inner in (getattr(r, "quiet", None), getattr(r, "loud", None)) if inner]  # auto
    for rec in {id(r): r for r in recs}.values():
        proc = getattr(getattr(rec, "_sphinx", None), "process", None)
        if proc is not None:
            for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1]) / 1024
    return total


def child(audio_file: Path, engine_name: str, vosk_model: Path | None, acoustic: str = "auto",
          second_opinion: str | None = None) -> None:
    """Load, say "listening", then measure the audio in ``audio_file``; prints one JSON line at the end."""
    from benchmarks.corpus import ROSTERS
    from benchmarks.phases import phase_engine
    from moderator.audio.echo import EchoPath
    from moderator.audio.endpoint import RATE, Endpointer, webrtc_classifier
    from moderator.listening import make_recognizer
    from moderator.loop import Listener
    from moderator.voice_input import CHUNK

    def listener_for(mics: tuple[str, ...], echo: EchoPath | None = None, rec: Any = None) -> Listener:
        engine = phase_engine("round", ROSTERS[0])
        return Listener(engine, rec or recognizer, mics=mics, new_endpointer=lambda: Endpointer(webrtc_classifier()),
                        echo=echo)

    recognizer = make_recognizer(engine_name, vosk_model, acoustic, second_opinion=second_opinion)
    both = listener_for(("A", "B"))
    step = round(CHUNK * RATE)
    for mic in ("A", "B"):  # the first chunk of each microphone compiles what the phase allows
        both.feed(mic, np.zeros(step, np.float32), RATE, 0.0)
        both.listen_for_current_phase(mic)
    print("listening", flush=True)
    rss_listening = memory_mb("VmRSS")

    loaded = np.load(audio_file)
    audio = {room: loaded[room] for room in ("A", "B")}
    seconds = len(audio["A"]) / RATE
    # Both rooms in real time: each 0.1 s chunk is handed over when it is complete.
    elapsed, cpu_both, stall = in_real_time(both, audio, 10.0)
    # The moderator's peak: the listeners below are the benchmark's own (each forks recognizers of its own).
    peak = memory_mb("VmHWM")
    # As ``moderator play`` listens: pocketsphinx in decoding processes of its own (moderator.adapters.sphinx).
    live = listener_for(("A", "B"), rec=make_recognizer(engine_name, vosk_model, acoustic, live=True,
                                                        second_opinion=second_opinion))
    _, _, stall_live = in_real_time(live, audio, 10.0)
    live_processes = decoder_processes_mb(live)
    # Real-time factor: one room's audio, as fast as it goes, on this one core.
    one = listener_for(("A",))
    cpu = time.process_time()
    for i in range(0, len(audio["A"]), step):
        one.feed("A", audio["A"][i : i + step], RATE, i / RATE)
    rtf = (time.process_time() - cpu) / seconds
    # Full duplex: the same room hearing the moderator, with its echo cancelled.
    phrases = [(float(start), samples) for start, samples in
               zip(loaded["ref_starts"], np.split(loaded["ref_audio"], np.cumsum(loaded["ref_lengths"])[:-1]),
                   strict=True)]
    duplex = echo_cost(loaded["A_echo"], phrases, float(loaded["delay"]), float(loaded["lead"]), listener_for)
    report = {
        "engine": engine_name, "acoustic_model": acoustic, "second_opinion": second_opinion,
        "seconds": seconds, "rtf_one_room": round(rtf, 4), **duplex,
        "cpu_percent_both_rooms": round(100 * cpu_both / elapsed, 1),
        "realtime_lag_s": round(elapsed - seconds, 3),
        "rss_mb_listening": round(rss_listening, 1),
        "peak_rss_mb": round(peak, 1),
        "longest_stall_ms": round(1000 * stall),
        "longest_stall_ms_live": round(1000 * stall_live),
        "decoder_processes_peak_rss_mb_live": round(live_processes, 1),
    }
    print(json.dumps(report), flush=True)


def run(seconds: float = 30.0, engine_name: str = "pocketsphinx", vosk_model: Path | None = None,
        acoustic: str = "auto", second_opinion: str | None = None) -> dict[str, Any]:
    """Make the rooms' audio; launch the child; time it to "listening"; collect its figures (``acoustic``:
    pocketsphinx's ``--acoustic-model``)."""
    with tempfile.TemporaryDirectory() as tmp:
        audio_file = Path(tmp) / "rooms.npz"
        a = room_audio(seconds, 1)
        phrases, echo, delay, lead = moderator_track(seconds, 1)
        # Room A's microphone again, hearing the moderator: its set-up talk alone first, then over the party.
        heard = np.concatenate([np.zeros(len(echo) - len(a), np.float32), a]) + echo
        np.savez(audio_file, A=a, B=room_audio(seconds, 2), A_echo=heard, delay=delay, lead=lead,
                 ref_starts=np.array([s for s, _ in phrases]), ref_lengths=np.array([len(p) for _, p in phrases]),
                 ref_audio=np.concatenate([p for _, p in phrases]))
        return _launch(audio_file, engine_name, vosk_model, acoustic, second_opinion)


def _launch(audio_file: Path, engine_name: str, vosk_model: Path | None, acoustic: str = "auto",
            second_opinion: str | None = None) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "benchmarks.cost", "--child", "--audio", str(audio_file), "--engine", engine_name,
           "--acoustic-model", acoustic]
    cmd += ["--second-opinion", second_opinion] if second_opinion else []
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
    parser.add_argument("--acoustic-model", default="auto", help="pocketsphinx's: auto (the app's default), default, "
                        "party or a PATH")
    parser.add_argument("--second-opinion", choices=("whisper",), default=None,
                        help="as `moderator play --second-opinion`: Whisper hears every utterance again")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--audio", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.audio, args.engine, args.vosk_model, args.acoustic_model, args.second_opinion)
    else:
        print(json.dumps(run(args.seconds, args.engine, args.vosk_model, args.acoustic_model, args.second_opinion),
                         indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
