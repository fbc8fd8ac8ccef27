"""Answers to a read-back in party babble (issue 10): is a "yes" or "no" said after the moderator read back a hostage
choice taken as said, and is the party's talk said into the microphone meanwhile taken as an answer?

Run: ``nice -n 10 .venv/bin/python -m benchmarks.answers [--split dev|test] [--repeats N] [--out FILE]``

Each item is a game in the hostage phase whose room A has a choice read back (``read_back: always``): the room's
sound for ``ROOM_BEFORE`` seconds, then one line, then the room until the endpointer closes the utterance, all fed to
the game's own ``Listener`` (pocketsphinx, the default acoustic model, the endpointer as ``benchmarks.acceptance``
sets it: no streaming). The lines are "yes" and "no" said ``--repeats`` times by each voice, and party talk that
holds no command, said once by each voice. An answer is *right* when the first command it set off is that answer,
*wrong* when it is another command. Party talk counts when it set off any command (an answer above all).

Each item is heard twice: as the listener now hears it, and without the second decode of a read-back's answer
(``Listener._answer``), so that the two columns differ by that alone.

The splits (benchmarks/voices.py): *dev* is what the second decode was chosen on (the dev voices, babble seed 7, the
dev chatter); *test* is held out: flite's held-out voices and the suite's espeak-ng voices, the suite's babble
(seed 0), and the suite's chatter lines.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.acceptance import HISS_DBFS, ROOM_BEFORE
from benchmarks.corpus import ROSTERS, babble, basic_grammar, spoken
from benchmarks.phases import phase_engine
from benchmarks.voices import DEV_CHATTER, DEV_ESPEAK, ESPEAK_TEST, FLITE_HELD_OUT, FLITE_SEEN
from moderator.audio.endpoint import RATE, Endpointer, webrtc_classifier
from moderator.audio.mix import hiss, noise_for, noise_gain
from moderator.voice_input import CHATTER, CHUNK, LEAD_IN, TAIL

ROOT = Path(__file__).resolve().parents[1]
CONDITIONS: tuple[float | None, ...] = (None, 18.0, 12.0)
"""Clean over a microphone's hiss (None), and 8-talker babble at these peak-frame SNRs."""
ANSWERS = {"yes": "yes", "no": "no"}
#: Other commands a player may say while a read-back waits, and their intents: they must not be taken as an answer.
OTHERS = {"undo": "undo", "repeat that": "repeat", "what can I say": "help", "how much time is left": "time"}
SPLITS: dict[str, dict[str, Any]] = {
    "dev": {"voices": FLITE_SEEN + DEV_ESPEAK, "babble_seed": 7,
            "chatter": (*DEV_CHATTER, "oh really", "okay then", "me too", "whatever you say", "I guess so",
                        "hold on a second")},
    "test": {"voices": FLITE_HELD_OUT + ESPEAK_TEST, "babble_seed": 0, "chatter": CHATTER},
}
BABBLE_SECONDS = 120.0

W: dict[str, Any] = {}


class Batch:
    """The recognizer without its streaming methods: the listener then decodes whole utterances only, as
    ``benchmarks.acceptance`` does (and needs no decoder of its own per microphone)."""

    def __init__(self, recognizer: Any) -> None:
        self.inner, self.name = recognizer, recognizer.name

    def expect(self, *args: Any) -> None:
        self.inner.expect(*args)

    def recognize(self, samples: np.ndarray, rate: int) -> Any:
        return self.inner.recognize(samples, rate)


def _init(babble_seed: int, second_opinion: bool = False, settings: tuple[tuple[str, Any], ...] = ()) -> None:
    from moderator.listening import make_recognizer

    if second_opinion:
        from moderator.acoustic import AUTO
        from moderator.adapters import asr_whisper
        from moderator.listening import pocketsphinx_recognizer

        for name, value in settings:
            setattr(asr_whisper, name, value)
        recognizer: Any = asr_whisper.SecondOpinion(pocketsphinx_recognizer(AUTO), asr_whisper.WhisperRecognizer())
    else:
        recognizer = make_recognizer("pocketsphinx", None, "default")
    W.update(noise=babble(BABBLE_SECONDS, seed=babble_seed), grammar=basic_grammar(), recognizer=Batch(recognizer))


def _signal(text: str, voice: str, snr: float | None, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """The room, then ``text``, then the room again (8 s of it to close the utterance); and when the words end."""
    speech = spoken(text, voice)
    pad = lambda n: np.zeros(round(n * RATE), np.float32)  # noqa: E731
    clean = np.concatenate([pad(ROOM_BEFORE + LEAD_IN), speech, pad(TAIL + 8.0)])
    if snr is None:
        room = hiss(len(clean), HISS_DBFS, rng)
    else:
        room = noise_for(W["noise"], len(clean), rng)
        under = slice(round(ROOM_BEFORE * RATE), round((ROOM_BEFORE + LEAD_IN + TAIL) * RATE) + len(speech))
        room *= noise_gain(speech, room[under], snr, peak=True)
    return clean + room, ROOM_BEFORE + LEAD_IN + len(speech) / RATE


def _commands(signal: np.ndarray, said_end: float, second: bool) -> list[tuple[str, dict[str, Any]]]:
    """The commands a listener in room A's read-back takes from ``signal`` (``second``: with ``Listener._answer``)."""
    roster = ROSTERS[0]
    engine = phase_engine("hostages", roster, W["grammar"])
    engine.read_back = "always"
    room = engine.state.rooms["A"]
    engine.handle_text("hostages " + next(p for p in room.members if p != room.leader), "A")
    assert room.pending, "the benchmark game did not read its hostage choice back"
    listener = room_a_listener(engine, W["recognizer"])
    if not second:
        listener._read_back_waits = lambda mic: False  # type: ignore[method-assign]
    taken: list[tuple[str, dict[str, Any]]] = []
    engine.subscribe(lambda e: taken.append((e["intent"], e["slots"])) if e["type"] == "command" else None)
    feed_room_a(listener, signal, said_end)
    return taken


def room_a_listener(engine: Any, recognizer: Any) -> Any:
    """The game's own ``Listener`` on ``engine``, with one microphone, room A's, and the game's endpointer."""
    from moderator.loop import Listener

    return Listener(engine, recognizer, mics=("A",), new_endpointer=lambda: Endpointer(webrtc_classifier()))


def feed_room_a(listener: Any, signal: np.ndarray, said_end: float, done: Callable[[], bool] = lambda: False) -> None:
    """``signal`` fed to ``listener``'s room A microphone ``CHUNK`` seconds at a time, as a microphone delivers it,
    until an utterance closes after ``said_end`` (seconds: the line's words are over) or ``done()``."""
    step = round(CHUNK * RATE)
    for i in range(0, len(signal), step):
        closed = listener.feed("A", signal[i : i + step], RATE, i / RATE)
        if done() or (closed and i / RATE > said_end):
            break


def measure(job: tuple[str, str, float | None, str, int]) -> dict[str, Any]:
    kind, text, snr, voice, k = job
    rng_seed = [k, int(snr or 0), sum(map(ord, voice + text))]
    signal, said_end = _signal(text, voice, snr, np.random.default_rng(rng_seed))
    row: dict[str, Any] = {"kind": kind, "text": text, "snr": snr, "voice": voice, "k": k}
    for label, second in (("before", False), ("after", True)):
        taken = _commands(signal, said_end, second)
        first = taken[0] if taken else None
        if kind == "answer":
            row[label] = ("missed" if first is None else
                          "right" if first == ("confirm", {"answer": ANSWERS[text]}) else "wrong")
        elif kind == "other":
            row[label] = "missed" if first is None else "right" if first[0] == OTHERS[text] else "wrong"
        else:
            row[label] = "answer" if any(i == "confirm" for i, _ in taken) else "command" if taken else "nothing"
        row[label + "_taken"] = [f"{i} {s}" for i, s in taken]
    return row


def _label(snr: float | None) -> str:
    return f"clean + hiss {HISS_DBFS:g} dBFS" if snr is None else f"{snr:g} dB peak"


def report(rows: list[dict[str, Any]], split: str, repeats: int, command: str, seconds: float) -> str:
    voices = SPLITS[split]["voices"]
    conditions = list(dict.fromkeys(r["snr"] for r in rows))
    lines = ["# Answers to a read-back in party babble", "",
             f"Command: `{command}` ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {seconds:.0f} s). How it is "
             "measured: benchmarks/answers.py (docstring). *Before*: without the second decode of a read-back's "
             "answer (`Listener._answer`); *after*: as the listener hears now.", "",
             f"Split **{split}**: {len(voices)} voices ({', '.join(voices)}), each answer said {repeats} times by "
             "each.",
             "", "| condition | line | before: right / wrong of N | after: right / wrong of N |",
             "| --- | --- | --- | --- |"]
    for snr in conditions:
        for text in ANSWERS:
            rs = [r for r in rows if r["kind"] == "answer" and r["snr"] == snr and r["text"] == text]
            cells = [f"{sum(r[c] == 'right' for r in rs)} / {sum(r[c] == 'wrong' for r in rs)} of {len(rs)}"
                     for c in ("before", "after")]
            lines.append(f"| {_label(snr)} | \"{text}\" | {cells[0]} | {cells[1]} |")
    lines += ["", "Party talk said into room A's microphone while its read-back waits "
              f"({len(SPLITS[split]['chatter'])} lines, each said once by each voice): lines that set off an answer "
              "(any command).", "", "| condition | lines | before | after |", "| --- | --- | --- | --- |"]
    for snr in conditions:
        rs = [r for r in rows if r["kind"] == "chatter" and r["snr"] == snr]
        cells = [f"{sum(r[c] == 'answer' for r in rs)} ({sum(r[c] != 'nothing' for r in rs)})"
                 for c in ("before", "after")]
        lines.append(f"| {_label(snr)} | {len(rs)} | {cells[0]} | {cells[1]} |")
    wrong = Counter(t for r in rows if r["kind"] == "answer" and r["after"] == "wrong" for t in r["after_taken"][:1])
    lines += ["", "What the wrong answers were taken as (after): "
              + (", ".join(f"{t} ×{n}" for t, n in wrong.most_common()) or "none") + "."]
    others = [r for r in rows if r["kind"] == "other"]
    if others:
        lines += ["", "Other commands said while the read-back waits, each said "
                  f"{max(r['k'] for r in others) + 1} times by each voice: right / wrong of N (the first command "
                  "taken).", "", "| condition | line | before | after |", "| --- | --- | --- | --- |"]
        for snr in conditions:
            for text in OTHERS:
                rs = [r for r in others if r["snr"] == snr and r["text"] == text]
                cells = [f"{sum(r[c] == 'right' for r in rs)} / {sum(r[c] == 'wrong' for r in rs)} of {len(rs)}"
                         for c in ("before", "after")]
                lines.append(f"| {_label(snr)} | \"{text}\" | {cells[0]} | {cells[1]} |")
        taken = Counter(t for r in others if r["after"] == "wrong" for t in r["after_taken"][:1])
        lines += ["", "What the other commands were wrongly taken as (after): "
                  + (", ".join(f"{t} ×{n}" for t, n in taken.most_common()) or "none") + "."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from benchmarks.replay import whisper_settings

    parser = argparse.ArgumentParser(prog="python -m benchmarks.answers", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=sorted(SPLITS), default="test")
    parser.add_argument("--repeats", type=int, default=6, help="how many times each voice says each answer")
    parser.add_argument("--other-repeats", type=int, default=2,
                        help="how many times each voice says each other command (OTHERS; 0: none)")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--second-opinion", action="store_true",
                        help="the app's default recognizer: auto with Whisper's second opinion (default: pocketsphinx "
                        "with the original model, as the read-back's second decode was chosen)")
    parser.add_argument("--snrs", type=float, nargs="*", default=None, metavar="DB",
                        help="babble SNRs, besides clean over hiss (default: 18 12)")
    parser.add_argument("--set", nargs="*", default=[], metavar="NAME=VALUE",
                        help="with --second-opinion, a constant of moderator.adapters.asr_whisper (a Python literal)")
    parser.add_argument("--out", type=Path, default=None, help="also write the report here")
    args = parser.parse_args(argv)
    split = SPLITS[args.split]
    conditions = CONDITIONS if args.snrs is None else (None, *args.snrs)
    settings = tuple(whisper_settings(parser, args.set))
    jobs = [("answer", text, snr, voice, k) for snr in conditions for text in ANSWERS for voice in split["voices"]
            for k in range(args.repeats)]
    jobs += [("other", text, snr, voice, k) for snr in conditions for text in OTHERS for voice in split["voices"]
             for k in range(args.other_repeats)]
    jobs += [("chatter", line, snr, voice, 0) for snr in conditions for line in split["chatter"]
             for voice in split["voices"]]
    started = time.perf_counter()
    with ProcessPoolExecutor(args.processes, initializer=_init,
                             initargs=(split["babble_seed"], args.second_opinion, settings)) as pool:
        rows = list(pool.map(measure, jobs, chunksize=4))
    command = "python -m benchmarks.answers " + " ".join(argv if argv is not None else sys.argv[1:])
    text = report(rows, args.split, args.repeats, command.strip(), time.perf_counter() - started)
    if args.out is not None:
        args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
