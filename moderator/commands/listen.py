"""``moderator listen``: the mic check before a game; shows live what each microphone hears and what it parses to."""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from moderator import jsonl
from moderator.audio.endpoint import RATE
from moderator.audio.resample import StreamResampler
from moderator.commands.recognize import result
from moderator.env import Environment
from moderator.errors import UsageError
from moderator.listening import add_recognizer_options, described
from moderator.mics import add_mic_options, check_names, new_endpointer
from moderator.outputs import device_options
from moderator.ports import AudioIn, Clock, HearsTheRoom, MicChunk, Recognizer
from moderator.roster import load_roster, parse_names
from moderator.speech.grammar import Grammar, load_grammar

#: Seconds between level readings.
LEVEL_EVERY = 1.0
#: The level meter spans this many dB below full scale.
METER_DB = 60.0
METER_WIDTH = 20


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``listen`` subcommand."""
    p = sub.add_parser(
        "listen",
        help="mic check: show live what each room's microphone hears and what it parses to",
        description="The mic check before a game. Shows, per room, how loud the microphone hears the room "
        "(once a second) and each utterance: the words recognized, the confidence (and with --acoustic-model auto "
        "which model heard it: party when a party is loud, not a steady hum), and the command they parse to "
        "(intent and slots) or why they do not. Every command of the language is listened for, "
        "whatever the phase. No game runs. Stop with Ctrl-C, or give --seconds.",
    )
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--players", help="the players' names, comma separated")
    who.add_argument("--roster", type=Path, help="a roster file: one name per line, or a YAML/JSON list")
    add_mic_options(p)
    add_recognizer_options(p, read_back=False)
    p.add_argument("--seconds", type=float, metavar="N", help="stop after N seconds (default: until Ctrl-C)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object per utterance (no level readings): room, start, end, heard, "
                   "confidence, intent, slots, rejected, and with --acoustic-model auto the model that heard it "
                   "(default or party)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, env: Environment) -> int:
    """Open the recognizer and the microphones, then report until --seconds pass or Ctrl-C."""
    from moderator.adapters.clock import SystemClock

    if args.seconds is not None and not (math.isfinite(args.seconds) and args.seconds > 0):
        raise UsageError(f"--seconds takes a positive number of seconds, e.g. 30; got {args.seconds}")
    roster = load_roster(args.roster) if args.roster else parse_names(args.players)
    if not roster:
        raise UsageError("--players needs the players' names, comma separated: Alice,Bob,Carol")
    devices = device_options(args)
    if not devices.microphones:
        raise UsageError("name the microphones to check: --room-a-in and/or --room-b-in, or one shared --mic "
                          "('moderator devices' lists them)")
    grammar = load_grammar("en")
    if args.wake_word:
        grammar = grammar.addressed(args.wake_word)
    recognizer = env.make_recognizer(args.engine, args.vosk_model, args.acoustic_model,
                                     second_opinion=args.second_opinion, warn=env.log)
    check_names(recognizer, roster)
    recognizer.expect(grammar, roster)
    clock = SystemClock()
    mics = env.open_mics(devices, clock, log=env.log, system=env.audio)
    check = MicCheck(mics, recognizer, grammar, roster, clock, env.stdout, as_json=args.json)
    rooms = ", ".join("shared" if m is None else f"room {m}" for m in mics.mics)
    print(f"(listening: {rooms}, with {described(recognizer)}; say a command, e.g. 'I appoint {roster[0]} as leader')",
          file=env.stderr if args.json else env.stdout, flush=True)  # --json: stdout holds only the results
    try:
        check.run(args.seconds)
    except KeyboardInterrupt:
        pass
    finally:
        mics.close()
    return 0


class MicCheck:
    """Endpoints each microphone's audio, recognizes every utterance against the whole grammar, and reports."""

    def __init__(self, mics: AudioIn, recognizer: Recognizer, grammar: Grammar, roster: list[str], clock: Clock,
                 out: TextIO, *, as_json: bool = False, endpointer: Callable[[], Any] = new_endpointer) -> None:
        self.mics, self.recognizer, self.grammar, self.roster = mics, recognizer, grammar, roster
        self.clock, self.out, self.as_json = clock, out, as_json
        self.endpointers = {mic: endpointer() for mic in mics.mics}
        self.resamplers = {mic: StreamResampler(RATE) for mic in mics.mics}  # a device's rate, as one stream each
        self.t0 = clock.now()
        self._energy: dict[str | None, list[float]] = {mic: [0.0, 0.0] for mic in mics.mics}  # sum of squares, n
        self._next_level = self.t0 + LEVEL_EVERY
        self.reports: list[dict[str, Any]] = []

    def run(self, seconds: float | None = None) -> None:
        """Report until ``seconds`` have passed (None: forever)."""
        end = math.inf if seconds is None else self.t0 + seconds
        while self.clock.now() < end:
            self.step(self.mics.read(timeout=min(0.1, max(0.0, end - self.clock.now()))))

    def step(self, chunks: list[MicChunk]) -> None:
        """Handle the chunks read, and print the levels when due."""
        for chunk in chunks:
            samples, t = self.resamplers[chunk.mic](chunk.samples, chunk.rate, chunk.t)
            energy = self._energy[chunk.mic]
            energy[0] += float(np.sum(np.square(samples, dtype=np.float64)))
            energy[1] += len(samples)
            for utterance in self.endpointers[chunk.mic].feed(samples, t):
                self.report(chunk.mic, utterance.samples, utterance.start, utterance.end, utterance.rise)
        if not self.as_json and self.clock.now() >= self._next_level:
            while self._next_level <= self.clock.now():
                self._next_level += LEVEL_EVERY
            self.out.write(self.levels() + "\n")
            self.out.flush()

    def levels(self) -> str:
        """One line: each microphone's level since the last reading, in dBFS with a bar; then starts afresh."""
        parts = []
        for mic, (total, n) in self._energy.items():
            db = 10 * math.log10(total / n) if n and total > 0 else -math.inf
            bars = 0 if db == -math.inf else max(0, min(METER_WIDTH, round((db + METER_DB) / METER_DB * METER_WIDTH)))
            where = "shared" if mic is None else f"room {mic}"
            shown = "silent" if db == -math.inf else f"{db:4.0f} dB"
            heard = "(no audio)" if not n else f"{shown} |{'#' * bars}{' ' * (METER_WIDTH - bars)}|"
            parts.append(f"{where} {heard}")
            self._energy[mic] = [0.0, 0.0]
        return f"{self.clock.now() - self.t0:6.1f}  level  " + "   ".join(parts)

    def report(self, mic: str | None, samples: np.ndarray, start: float, end: float,
               rise: float | None = None) -> dict[str, Any]:
        """Recognize one utterance, parse it against the whole grammar, and print the result; ``rise``: how far it
        stood above the room before it (``Utterance.rise``), for a recognizer that listens by the room's level."""
        if isinstance(self.recognizer, HearsTheRoom):
            self.recognizer.room_rise = rise
        transcript = self.recognizer.recognize(samples, RATE)
        last = getattr(self.recognizer, "last", None)
        raw = getattr(last, "text", None) if not transcript.text else None
        item = result(self.grammar, self.roster, None, transcript.text, transcript.confidence, raw, transcript.doubtful)
        del item["file"]
        item = {"room": mic, "start": round(start - self.t0, 2), "end": round(end - self.t0, 2), **item}
        if (model := getattr(self.recognizer, "chosen", None)) is not None:  # --acoustic-model auto
            item["model"] = model
        if not item["heard"] and not item["rejected"]:
            item["rejected"] = "nothing recognized"
        self.reports.append(item)
        if self.as_json:
            self.out.write(jsonl.line(item) + "\n")
        else:
            where = "shared" if mic is None else f"room {mic}"
            outcome = (f"{item['intent']} {json.dumps(item['slots'], ensure_ascii=False)}" if item["intent"]
                       else f"rejected: {item['rejected']}")
            model = f", {item['model']} model" if "model" in item else ""
            self.out.write(f"{item['start']:6.1f}  {where}  heard '{item['heard']}' "
                           f"({item['confidence']:.2f}{model}) -> {outcome}\n")
        self.out.flush()
        return item
