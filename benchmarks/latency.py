"""Latency, in real time: end of a spoken command -> ``command`` event -> first sample of the spoken reply.

Run alone:  .venv/bin/python -m benchmarks.latency [--commands N] [--json FILE] [--aec auto|speex|webrtc|off]
            [--second-opinion whisper]

A game on the wall clock, with the moderator's voice through ``SoundDeviceOut`` on PulseAudio null sinks
(tests/pulse.py, as ``benchmarks.announce_latency``), and both rooms' microphones fed by a synthetic player in
``moderator play``'s microphone blocks (0.05 s), each handed over when its last sample would have arrived. The
listening loop is the one ``moderator play`` builds: ``moderator.mics.make_listener`` with the moderator's
voice, so full duplex with echo cancellation (``--aec``), grammar-aware endpointing and a streaming recognizer
per microphone. Each microphone also hears the moderator through a simulated room
(``moderator.audio.room.EchoRoom``: 20-60 ms away, RT60 0.3 s; the player ``--ser`` dB over it) and a
microphone's hiss, and the delay is found first with the set-up chirp, as ``moderator play`` does. Players
wait until the moderator has finished before they speak (this measures latency, not talking over the
moderator: see ``benchmarks.barge_in``). The microphone's own capture buffer is not included (the audio
reaches the Listener the moment its chunk is complete).

Where the time goes, per command (``breakdown_ms``), in the order it is spent:

- ``hangover``: end of speech -> the endpointer closes the utterance (``Endpointer.short_hangover`` of
  non-speech when the partial result is a whole command, else 0.6 s), in audio time;
- ``chunk``: the rest of the microphone chunk the utterance closed in;
- ``loop``: that chunk complete -> handed to the Listener (the loop's period, the other microphone);
- ``decode``: handed over -> ``command`` event: echo cancellation and streaming decode of that chunk,
  the final decode of the whole utterance (``recognize``: grammar and phone-loop searches) unless it was
  done ahead (a whole command is decoded ``Endpointer.early_look`` into the pause, while the rest of
  the short hangover passes: ``decoded_ahead``), the parse;
- ``reply_wait``: ``command`` event -> the reply handed to the output: a reply not rendered yet is
  synthesized in the background first (``render_ms``; ``cached`` says whether it was);
- ``output``: handed to the output -> its first DAC sample (PortAudio's buffer).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from moderator.audio.mix import MIC_HISS_DBFS, hiss

ROOT = Path(__file__).resolve().parents[1]
ROSTER = ("Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi")
#: Commands that are legal in this order and each get a spoken reply; the cycle repeats.
OPENING = (("A", "start the game"), ("A", "I appoint Alice as leader"), ("B", "I appoint Erin as leader"))
CYCLE = (("A", "how much time is left"), ("B", "pause"), ("A", "resume"), ("B", "repeat that"),
         ("A", "Alice offers leadership to Carol"), ("A", "Carol refuses"), ("B", "how much time do we have"))
VOICE = "flite:rms"
GAP = 0.5  # players wait this long after the moderator has finished
GIVE_UP = 6.0  # seconds after the end of speech without a command: a miss
SER = 0.0  # dB: the players as loud in the microphone as the moderator's voice (peak-frame power)
HISS_DBFS = MIC_HISS_DBFS  # the microphones' own noise
CHIRP_SECONDS = 1.2  # the set-up chirp, into each room in turn
#: The parts of ``to_reply`` in the order they are spent (see the module's docstring).
PARTS = ("hangover", "chunk", "loop", "decode", "reply_wait", "output")


def speech_end(samples: np.ndarray, rate: int, below_peak_db: float = 40.0) -> float:
    """Seconds to the end of the last 10 ms frame within ``below_peak_db`` of the loudest one."""
    frame = rate // 100
    n = len(samples) // frame
    energy = np.sqrt(np.mean(np.square(samples[: n * frame].reshape(n, frame)), axis=1)) + 1e-12
    loud = np.nonzero(20 * np.log10(energy / energy.max()) > -below_peak_db)[0]
    return float((loud[-1] + 1) * frame / rate) if len(loud) else 0.0


class Probe:
    """Times the product's steps from outside: wraps methods of the listener, the recognizers, the speaker
    and the output on their instances (the product's code is not changed). Times are on the game clock,
    durations in ms of ``perf_counter``."""

    def __init__(self, clock: Any) -> None:
        self.clock = clock
        self.lock = threading.Lock()
        self.stage: dict[str, float] = {}
        """Durations (ms) in the current ``Listener.feed`` call, by step."""
        self.closed: dict[str, Any] | None = None
        """The utterance heard in the current feed call: its end (audio time) and whether it closed early."""
        self.early: dict[Any, bool] = {}
        self.commands: list[dict[str, Any]] = []
        self.announced: list[dict[str, Any]] = []
        self.lookups: list[tuple[float, str, bool]] = []
        """(clock time, text, found) of each phrase the speaker looked for among those rendered."""
        self.renders: list[tuple[str, float, float, float]] = []
        """(text, clock time started, clock time done, ms) of each phrase synthesized during the game."""
        self.handed: list[tuple[str, float, float]] = []
        """(room, clock time handed to the output, time asked for) of each clip."""

    def timed(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn``, adding its duration to the current feed's ``name``."""
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.stage[name] = self.stage.get(name, 0.0) + 1000 * (time.perf_counter() - start)
        return wrapper

    def attach(self, listener: Any, voice: Any) -> None:
        """Wrap what is to be timed."""
        if listener.echo is not None:
            listener.echo.cancel = self.timed("cancel", listener.echo.cancel)
        for recognizer in listener.recognizers.values():
            if callable(getattr(recognizer, "accept", None)):
                recognizer.accept = self.timed("accept", recognizer.accept)
            recognizer.recognize = self.timed("recognize", recognizer.recognize)
        for mic, endpointer in listener.endpointers.items():
            if endpointer.complete is not None:
                endpointer.complete = self._complete(mic, endpointer.complete)
        hear, prepare = listener.hear, listener._prepare
        ahead_ms: dict[Any, float] = {}

        def heard(mic: Any, utterance: Any) -> bool:
            ahead = listener._ahead[mic]
            self.closed = {"closed_at": listener.endpointers[mic]._t, "early": self.early.pop(mic, False),
                           "ahead_ms": ahead_ms.pop(mic, None) if ahead is not None and ahead[0] is utterance else None}
            return hear(mic, utterance)

        def prepared(mic: Any, utterance: Any) -> None:
            start = time.perf_counter()
            prepare(mic, utterance)
            ahead_ms[mic] = 1000 * (time.perf_counter() - start)

        listener.hear = heard
        for endpointer in listener.endpointers.values():
            if endpointer.prepare is not None:
                mic = next(m for m, e in listener.endpointers.items() if e is endpointer)
                endpointer.prepare = lambda utterance, mic=mic: prepared(mic, utterance)
        speaker = voice.speaker
        lookup, render, play = speaker.lookup, speaker.render, voice.out.play

        def looked_up(text: str) -> Any:
            clip = lookup(text)
            self.lookups.append((self.clock.now(), text, clip is not None))
            return clip

        def rendered(text: str) -> Any:  # in the background renderer's thread
            at, start = self.clock.now(), time.perf_counter()
            clip = render(text)
            with self.lock:
                self.renders.append((text, at, self.clock.now(), 1000 * (time.perf_counter() - start)))
            return clip

        def played(room: str, clip: Any, at: float) -> None:
            self.handed.append((room, self.clock.now(), at))
            play(room, clip, at)

        speaker.lookup, speaker.render, voice.out.play = looked_up, rendered, played

    def _complete(self, mic: Any, complete: Callable[[], bool]) -> Callable[[], bool]:
        def wrapper() -> bool:
            whole = complete()
            self.early[mic] = whole  # asked only after the short hangover: True closes the utterance now
            return whole
        return wrapper

    def on_event(self, event: dict[str, Any]) -> None:
        """Engine events: a command (with the current feed's steps so far), and announcements."""
        if event["type"] == "command":
            self.commands.append({"at": self.clock.now(), "text": event["text"], "room": event["room"],
                                  "stage": dict(self.stage), "closed": self.closed})
        elif event["type"] == "announce":
            self.announced.append({"at": self.clock.now(), "key": event["key"], "text": event["text"],
                                   "room": event["room"]})


def child(count: int, out: Path, engine_name: str, vosk_model: Path | None, aec: str, ser: float | None,
          second_opinion: str | None = None) -> None:
    """The game itself; runs in a process that sees the bench's devices."""
    from benchmarks.corpus import spoken
    from moderator.adapters.clock import SystemClock
    from moderator.adapters.sound_in import BLOCK as CHUNK  # what `moderator play` reads from a microphone
    from moderator.adapters.sound_out import SoundDeviceOut
    from moderator.audio.clip import Clip
    from moderator.audio.delay import chirp, estimate_delay
    from moderator.audio.endpoint import RATE
    from moderator.audio.room import EchoRoom
    from moderator.calibrate import FOUND
    from moderator.game.engine import Engine
    from moderator.game.rules import make_plan
    from moderator.listening import make_recognizer
    from moderator.mics import make_listener
    from moderator.speaking import make_voice
    from moderator.speech.catalog import load_catalog
    from moderator.speech.grammar import load_grammar
    from moderator.speech.prerender import setup_phrases

    script = list(OPENING) + [CYCLE[i % len(CYCLE)] for i in range(max(0, count - len(OPENING)))]
    clips = {text: spoken(text, VOICE) for _, text in script}
    clock = SystemClock()
    rooms = {"A": list(ROSTER[:4]), "B": list(ROSTER[4:])}
    engine = Engine.new(make_plan(8, rounds=3, durations=[3600] * 3), rooms, clock=clock, grammar=load_grammar(),
                        catalog=load_catalog())
    probe = Probe(clock)
    heard: list[str] = []
    engine.subscribe(probe.on_event)
    engine.subscribe(lambda e: heard.append(f"{e['text']!r} ({e['confidence']})") if e["type"] == "heard" else None)
    device_log: list[str] = []
    speakers = SoundDeviceOut(clock, room_a="roomA", room_b="roomB", log=device_log.append)
    rng = np.random.default_rng(0)
    lines: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as cache:
        engine.begin()  # before the voice is attached: the 20 s briefing would only make the players wait
        voice = make_voice(engine, speakers, cache_dir=Path(cache), live=True)
        prerendered = voice.prerender(engine, engine.schedule)
        setup = set(setup_phrases(engine.catalog, engine.state, engine.schedule))
        recognizer = make_recognizer(engine_name, vosk_model, second_opinion=second_opinion)
        recognizer.expect(engine.grammar, engine.state.players)  # as `moderator play` does before the game
        listener = make_listener(engine, recognizer, ("A", "B"), voice, aec=aec)
        probe.attach(listener, voice)
        room = EchoRoom(voice.out, ser, seed=0) if ser is not None else None
        step = round(CHUNK * RATE)
        t = clock.now() + 0.2  # audio time of the next chunk, on the game clock
        delays: dict[str, float | None] = {}
        if room is not None and listener.echo is not None and aec != "off":
            # The set-up chirp, as `moderator play` plays it (moderator.calibrate.measure_delays): it plays in
            # the rooms, and the microphones below hear it through the simulated room while it does.
            sweep = Clip(chirp(RATE, seconds=0.3, level=0.3), RATE)
            for i, name in enumerate(("A", "B")):
                at = t + 0.2 + i * CHIRP_SECONDS / 2
                voice.out.play(name, sweep, at)
                voice.out.history()[-1].peak_power = 0.0  # a test signal, not the moderator's speaking level
                n = round((CHIRP_SECONDS / 2 - 0.2) * RATE)
                mic = room.echo(name, at, n) + hiss(n, HISS_DBFS, rng)
                delay, confidence = estimate_delay(voice.out.reference((name,), at, n), mic, RATE)
                delays[name] = round(delay, 4) if confidence >= FOUND else None
                if confidence >= FOUND:
                    listener.echo.set_delay(name, delay)
        line, playing, quiet_since = 0, None, None
        before, offset, said_at, ready_at = 0, 0, 0.0, t + CHIRP_SECONDS + 0.2
        while line < len(script) or playing is not None:
            while clock.now() < t + CHUNK:  # the chunk is complete when its last sample has arrived
                time.sleep(0.002)
                voice.pump()
            engine.tick()
            voice.pump()
            busy = not voice.speaker.idle or max(voice.speaker.busy_until.values()) > t
            quiet_since = None if busy else (quiet_since if quiet_since is not None else t)
            if (playing is None and line < len(script) and quiet_since is not None and t - quiet_since >= GAP
                    and t >= ready_at):
                where, text = script[line]
                clip = clips[text] * (room.speech_gain(clips[text]) if room is not None else 1.0)
                playing, said_at, offset = (where, text, clip), t, 0
                before = len(probe.commands)
                heard.clear()
            chunks = {name: hiss(step, HISS_DBFS, rng) for name in ("A", "B")}
            if room is not None:
                chunks = {name: chunk + room.echo(name, t, step) for name, chunk in chunks.items()}
            if playing is not None:
                where, text, clip = playing
                piece = clip[offset : offset + step]
                chunks[where][: len(piece)] += piece
                offset += step
                end = said_at + speech_end(clip, RATE)
                if len(probe.commands) > before or t > end + GIVE_UP:
                    lines.append({"room": where, "text": text, "speech_end": end,
                                  "recognized": heard[-1] if heard else None,
                                  "commands": (before, len(probe.commands))})
                    if len(probe.commands) == before:  # missed: typed instead, so the game follows the script
                        engine.handle_text(text, where)
                    playing, line, quiet_since = None, line + 1, None
            for mic, chunk in chunks.items():
                probe.stage, probe.closed = {"fed_at": clock.now(), "chunk_end": t + CHUNK}, None
                listener.feed(mic, chunk, RATE, t)
            t += CHUNK
        voice.finish(timeout=30)
        time.sleep(1.0)
        speakers.close()
        voice.close()
    rows = [_row(entry, probe, speakers.starts, setup) for entry in lines]
    out.write_text(json.dumps({
        "engine": engine_name, "second_opinion": second_opinion, "voice": VOICE, "aec": aec,
        "ser_db": ser, "chirp_delays": delays,
        "room_delays": {k: round(v, 4) for k, v in room.delays.items()} if room is not None else {},
        "cancelling": {str(m): listener.echo.cancelling(m) for m in ("A", "B")} if listener.echo else {},
        "prerendered": {"phrases": prerendered.rendered + prerendered.cached, "seconds": round(prerendered.seconds, 2)},
        "commands": rows, "device_messages": device_log}, indent=2) + "\n")


def _row(entry: dict[str, Any], probe: Probe, starts: list[tuple[str, float, float]],
         setup: set[str]) -> dict[str, Any]:
    """One spoken command: its times, and where they went."""
    end = entry["speech_end"]
    row: dict[str, Any] = {"room": entry["room"], "text": entry["text"], "speech_end": round(end, 4),
                           "recognized": entry["recognized"], "command_ms": None, "reply_ms": None}
    lo, hi = entry["commands"]
    if hi == lo:
        return row
    command = probe.commands[lo]
    at, stage, closed = command["at"], command["stage"], command["closed"] or {}
    ms = lambda a, b: round(1000 * (b - a), 1)  # noqa: E731
    row.update(heard=command["text"], command_ms=ms(end, at), endpoint_ms=ms(end, stage["fed_at"]))
    parts: dict[str, float | None] = {
        "hangover": ms(end, closed["closed_at"]) if closed else None,
        "chunk": ms(closed["closed_at"], stage["chunk_end"]) if closed else None,
        "loop": ms(stage["chunk_end"], stage["fed_at"]),
        "decode": ms(stage["fed_at"], at),
    }
    row["early_endpoint"] = closed.get("early")
    row["decoded_ahead_ms"] = None if closed.get("ahead_ms") is None else round(closed["ahead_ms"], 1)
    row["decode_steps_ms"] = {k: round(stage.get(k, 0.0), 1) for k in ("cancel", "accept", "recognize")}
    # The reply: the first announcement after the command, the first clip handed over, its first DAC sample.
    reply = next((a for a in probe.announced if a["at"] >= at - 1e-3), None)
    if reply is not None:
        found = [hit for t, text, hit in probe.lookups if text == reply["text"] and t >= at - 1e-3]
        row["reply"] = {"key": reply["key"], "text": reply["text"], "in_setup_phrases": reply["text"] in setup,
                        "cached": found[0] if found else None}
        render = [r for r in probe.renders if r[0] == reply["text"] and r[1] >= at - 1e-3]
        row["reply"]["render_ms"] = round(render[0][3], 1) if render else None
    handed = min((h for _, h, _ in probe.handed if h >= at - 1e-3), default=None)
    dac = min((started for _, asked, started in starts if asked >= at - 1e-3), default=None)
    parts["reply_wait"] = ms(at, handed) if handed is not None else None
    parts["output"] = ms(handed, dac) if handed is not None and dac is not None else None
    row["reply_ms"] = ms(end, dac) if dac is not None else None
    row["breakdown_ms"] = parts
    return row


def _audio_path(parts: dict[str, float | None]) -> float | None:
    """The parts of one command's wait that are neither decoding nor synthesis (ms)."""
    mine = [v for v in (parts.get(p) for p in ("hangover", "chunk", "loop", "output")) if v is not None]
    return round(sum(mine), 1) if len(mine) == 4 else None


def percentiles(values: list[float]) -> dict[str, Any]:
    """p50, p95, max (ms) and n."""
    if not values:
        return {"p50": None, "p95": None, "max": None, "n": 0}
    q = np.quantile(values, [0.5, 0.95])
    return {"p50": round(float(q[0]), 1), "p95": round(float(q[1]), 1), "max": round(max(values), 1),
            "n": len(values)}


def summarize(raw: dict[str, Any]) -> dict[str, Any]:
    """The figures of a run: percentiles of the totals and of each part, and the replies' rendering."""
    rows = raw["commands"]
    heard = [r for r in rows if r["command_ms"] is not None]
    replied = [r for r in heard if r["reply_ms"] is not None]

    def column(rs: list[dict[str, Any]], get: Callable[[dict[str, Any]], float | None]) -> dict[str, Any]:
        return percentiles([v for v in (get(r) for r in rs) if v is not None])

    breakdown = {part: column(replied, lambda r, p=part: r["breakdown_ms"].get(p)) for part in PARTS}
    steps = {step: column(heard, lambda r, s=step: r["decode_steps_ms"][s])
             for step in ("cancel", "accept", "recognize")}
    cached = [r for r in replied if r.get("reply", {}).get("cached")]
    rendered = [r for r in replied if r.get("reply", {}).get("cached") is False]
    shares = [r["endpoint_ms"] / r["reply_ms"] for r in replied if r["reply_ms"] > 0]
    p50s = {part: cell["p50"] or 0.0 for part, cell in breakdown.items()}
    return {
        "engine": raw["engine"], "second_opinion": raw.get("second_opinion"), "voice": raw["voice"],
        "aec": raw.get("aec"), "ser_db": raw.get("ser_db"),
        "chirp_delays": raw.get("chirp_delays"), "room_delays": raw.get("room_delays"),
        "cancelling_at_end": raw.get("cancelling"), "spoken": len(rows), "recognized": len(heard),
        "to_command_ms": column(heard, lambda r: r["command_ms"]),
        "to_reply_ms": column(replied, lambda r: r["reply_ms"]),
        "endpointing_ms": column(heard, lambda r: r.get("endpoint_ms")),
        # The endpointer's part of the whole wait, per command (its median), and of the parts' medians.
        "endpointing_share": round(float(np.median(shares)), 3) if shares else None,
        "early_endpoints": sum(1 for r in heard if r.get("early_endpoint")),
        # Final decodes done ahead, while the short hangover passed (``Endpointer.prepare``), and their cost.
        "decoded_ahead": sum(1 for r in heard if r.get("decoded_ahead_ms") is not None),
        "decoded_ahead_ms": column(heard, lambda r: r.get("decoded_ahead_ms")),
        "breakdown_ms": breakdown,
        "breakdown_share_of_p50": {part: round(v / sum(p50s.values()), 3) if sum(p50s.values()) else None
                                   for part, v in p50s.items()},
        "decode_steps_ms": steps,
        # What is left of ``to_reply`` with no decoding and no synthesis at all: endpointer, chunking, output.
        "audio_path_only_ms": column(replied, lambda r: _audio_path(r["breakdown_ms"])),
        "replies": {
            "cached": len(cached), "rendered_on_the_fly": len(rendered),
            "in_setup_phrases": sum(1 for r in replied if r.get("reply", {}).get("in_setup_phrases")),
            "render_ms": column(rendered, lambda r: r["reply"]["render_ms"]),
            "to_reply_cached_ms": column(cached, lambda r: r["reply_ms"]),
            "to_reply_rendered_ms": column(rendered, lambda r: r["reply_ms"]),
            "reply_wait_cached_ms": column(cached, lambda r: r["breakdown_ms"]["reply_wait"]),
            "reply_wait_rendered_ms": column(rendered, lambda r: r["breakdown_ms"]["reply_wait"]),
            "keys_rendered_on_the_fly": sorted({r["reply"]["key"] for r in rendered}),
        },
        "prerendered_at_setup": raw.get("prerendered"),
        "output_underruns": sum("ran dry" in m for m in raw["device_messages"]),
    }


def run(count: int = 25, engine_name: str = "pocketsphinx", vosk_model: Path | None = None, *, aec: str = "auto",
        ser: float | None = SER, second_opinion: str | None = None) -> dict[str, Any]:
    """Set up the bench, play the commands in a child process, and summarize."""
    from benchmarks.pulse_bench import pulse_bench

    with tempfile.TemporaryDirectory() as tmp, pulse_bench() as bench:
        out = Path(tmp) / "latency.json"
        cmd = [sys.executable, "-m", "benchmarks.latency", "--child", "--commands", str(count), "--json", str(out),
               "--engine", engine_name, "--aec", aec] + (["--vosk-model", str(vosk_model)] if vosk_model else [])
        cmd += ["--no-echo"] if ser is None else ["--ser", str(ser)]
        cmd += ["--second-opinion", second_opinion] if second_opinion else []
        subprocess.run(cmd, env=bench.env, cwd=ROOT, check=True)
        raw = json.loads(out.read_text())
    return {**summarize(raw), "commands": raw["commands"]}


def main() -> int:
    """Run alone, or (``--child``) be the game under the bench."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commands", type=int, default=25)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--engine", default="pocketsphinx")
    parser.add_argument("--vosk-model", type=Path)
    parser.add_argument("--aec", choices=("auto", "speex", "webrtc", "off"), default="auto",
                        help="echo cancellation, as `moderator play --aec` (off: half-duplex)")
    parser.add_argument("--ser", type=float, default=SER,
                        help="the players' level over the moderator's echo in the microphone, dB")
    parser.add_argument("--no-echo", action="store_true", help="microphones that do not hear the moderator")
    parser.add_argument("--second-opinion", choices=("whisper",), default=None,
                        help="as `moderator play --second-opinion`: Whisper hears every utterance again")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    ser = None if args.no_echo else args.ser
    if args.child:
        child(args.commands, args.json, args.engine, args.vosk_model, args.aec, ser, args.second_opinion)
        return 0
    report = run(args.commands, args.engine, args.vosk_model, aec=args.aec, ser=ser, second_opinion=args.second_opinion)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "commands"}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
