"""Commands said just after talk in a quiet room: which acoustic model hears them, and which one auto chooses.

    python -m benchmarks.after_talk [--limit 150] [--every 2] [--processes 2] [--out docs/benchmarks/after-talk.md]

A room full of conversation can be quiet: no babble under the words, only the microphone's floor, but someone was
talking a moment before the command. The room the listener measured before the words is then the talk, so a command
rises little above it (``Utterance.rise``: 8-23 dB in a fresh19 minute of the long false-accept audio), though the
utterance itself spreads like a quiet room (``spread_db``: 34-43 dB). This is what the rule of ``quiet_room`` is
chosen on for that room. Dev side only: the dev split's commands and voices (flite rms/awb, the dev espeak-ng
variants, the dev MBROLA voices; ``benchmarks.adaptation.dev_items``) and the dev side's human voice (Allison's
prompts as a closed set of sentences, ``benchmarks.human_dev``).

- Each command or prompt: 2 s of the room; then (``after talk``) one to three lines of the dev chatter said by one
  or two other dev voices, each 6 dB under to 3 dB over the command's loudest frame, with 0.2-1.5 s between them
  and 0.3-1.5 s before the command; or (``floor only``) 8 s of the room. Then the command, as a line of the voice
  tests (``as_said``), and 8 s of the room. ``after talk, room``: all of it in a reverberant room (RT60 0.3-0.8 s,
  0.5-3 m, as the long false-accept audio's rooms). Over a microphone floor of -65 to -50 dBFS. Seeded.
- Endpointed as the game endpoints (``benchmarks.acceptance.endpointed``). Every utterance that stands out is
  decoded in turn by the original model and by the party model (the talk too: the decoder's live cepstral mean
  carries over, as in a game), with the party model's fallback to the original as ``ByNoiseLevel`` has it. A
  command counts when the utterances over its words parse as exactly it (Allison's: decode to exactly its sentence).
- The rules, applied to each utterance over the words: *auto* (``quiet_room`` as shipped: the rise or the spread
  says quiet, or the floor is steady), *rise alone* (the rise decides where it is known, the spread only where it is
  not: the rule of 2026-11-28), *spread alone* (the room unknown).
"""

from __future__ import annotations

import argparse
import datetime
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import voices as V
from benchmarks.acceptance import endpointed
from benchmarks.adaptation import as_said
from benchmarks.pool import W
from moderator.adapters.asr_by_noise import quiet_room
from moderator.audio.endpoint import RATE
from moderator.audio.mix import peak_frame_power
from moderator.voice_input import LEAD_IN

SEED = 4646
#: (label, talk before the command, a reverberant room).
CONDS = (("floor only", False, False), ("after talk", True, False), ("after talk, room", True, True))
GAP = (0.3, 1.5)
"""Seconds between the last line of talk and the command."""


LEVEL_FRAME = round(0.03 * RATE)
"""The frames whose loudest sets a line of talk's level against the command's (the endpointer's 30 ms)."""


def heard_after(index: int, said: np.ndarray, cond: int, talkers: Sequence[str], lines: Sequence[str],
                say: Callable[[str, str], np.ndarray] = V.say) -> tuple[np.ndarray, tuple[float, float]]:
    """The microphone's stream for one command (``said``) in condition ``CONDS[cond]``, and the seconds of its words
    in it. ``talkers`` say ``lines`` before it."""
    _, talk, room = CONDS[cond]
    rng = np.random.default_rng([SEED, index, cond])
    silence = lambda seconds: np.zeros(round(seconds * RATE), np.float32)  # noqa: E731
    before = [silence(2.0)]
    if talk:
        speakers = [str(v) for v in rng.choice(talkers, size=int(rng.integers(1, 3)), replace=False)]
        for _ in range(int(rng.integers(1, 4))):
            line = say(lines[int(rng.integers(len(lines)))], speakers[int(rng.integers(len(speakers)))])
            gain = np.sqrt(peak_frame_power(said, LEVEL_FRAME) / peak_frame_power(line, LEVEL_FRAME))
            line = line * (gain * 10 ** (rng.uniform(-6, 3) / 20))
            before += [line.astype(np.float32), silence(rng.uniform(0.2, 1.5))]
        before[-1] = silence(rng.uniform(*GAP))
    else:
        before.append(silence(8.0))
    head = np.concatenate(before)
    stream = np.concatenate([head, as_said(said), silence(8.0)])
    if room:
        h = V.room_response(float(rng.uniform(0.3, 0.8)), float(rng.uniform(0.5, 3.0)),
                            seed=int(rng.integers(1 << 30)))
        stream = V.reverberate(stream, h)[: len(stream)]
    stream = stream + rng.standard_normal(len(stream)) * 10 ** (rng.uniform(-65, -50) / 20)
    start = len(head) / RATE + LEAD_IN
    return stream.astype(np.float32), (start, start + len(said) / RATE)


#: The columns of the report: each model alone, then the rules that choose one per utterance (``chosen``).
RULES = ("original", "party", "auto", "rise alone", "spread alone")


def chosen(samples: np.ndarray, rise: float | None) -> dict[str, bool]:
    """Whether each rule gives the utterance to the original model, all by the shipped ``quiet_room``: *auto* as
    it is, *rise alone* with the spread never saying quiet where the rise is known, *spread alone* with the room
    unknown."""
    spread_alone = quiet_room(samples, RATE)
    rise_alone = spread_alone if rise is None else quiet_room(samples, RATE, quiet_spread=np.inf, rise=rise)
    return {"auto": quiet_room(samples, RATE, rise=rise), "rise alone": rise_alone, "spread alone": spread_alone}


def to_original(rule: str, utterance: dict[str, Any]) -> bool:
    """Whether ``rule`` (of ``RULES``) gives the utterance, as ``_hear`` measured it, to the original model."""
    return rule == "original" or (rule != "party" and utterance[rule])


# -- workers -----------------------------------------------------------------------------------------------------


#: The talkers before each command: the dev voices and the dev MBROLA speaker (``voices.DEV_RECORDED``).
TALKERS = tuple(sorted(set(V.DEV_VOICES) | set(V.DEV_RECORDED)))


def _init(sentences: Sequence[str], talkers: Sequence[str] = TALKERS) -> None:
    from benchmarks.corpus import basic_grammar
    from benchmarks.human_dev import sentence_decoders
    from benchmarks.long_false_accepts import chatter_lines
    from moderator.acoustic import acoustic_model
    from moderator.adapters.asr_by_noise import ByNoiseLevel
    from moderator.adapters.asr_pocketsphinx import PocketsphinxRecognizer

    class Party(ByNoiseLevel):
        """The party model, with ``ByNoiseLevel``'s fallback to the original on a command cut short."""

        def model_for(self, samples: np.ndarray, rate: int) -> PocketsphinxRecognizer:
            return self.loud

    W.update(grammar=basic_grammar(), talkers=list(talkers),
             lines=[*V.DEV_CHATTER, *chatter_lines(V.DEV_ROSTER, count=60, seed=V.DEV_SEED)[0]],
             commands={"original": PocketsphinxRecognizer(acoustic_model("default")),
                       "party": Party(PocketsphinxRecognizer(acoustic_model("default")),
                                      PocketsphinxRecognizer(acoustic_model("party")))})
    if sentences:
        W["sentences"] = sentence_decoders(sentences, Path(tempfile.mkdtemp(prefix="after-talk-")))


def _hear(job: tuple[int, dict[str, Any], int]) -> dict[str, Any]:
    """One command in one condition: each utterance over its words, what each model heard in it, and how the
    room measured."""
    from benchmarks.adaptation import decoded

    index, item, cond = job
    said = item.pop("samples") if "samples" in item else V.say(item["text"], item["voice"])
    talkers = [v for v in W["talkers"] if v != item.get("voice")]
    stream, words = heard_after(index, said, cond, talkers, W["lines"])
    if "sentence" in item:
        hear = {name: (lambda s, d=d: decoded(d, s)) for name, d in W["sentences"].items()}
    else:
        for rec in W["commands"].values():
            rec.expect(W["grammar"], item["roster"])
        hear = {name: (lambda s, r=r: r.recognize(s, RATE).text) for name, r in W["commands"].items()}
    over = []
    for _, closed in endpointed(stream):
        for u in closed:
            if not u.stands_out:
                continue
            texts = {name: fn(u.samples) for name, fn in hear.items()}  # the talk too: the live mean carries over
            if u.start < words[1] and u.end > words[0]:
                over.append({"rise": u.rise, **chosen(u.samples, u.rise), **texts})
    return {**item, "cond": CONDS[cond][0], "over": over}


# -- the run -----------------------------------------------------------------------------------------------------


def right(row: dict[str, Any], texts: Sequence[str], grammar: Any) -> bool:
    """Whether the texts heard over the words are the command said (a prompt: exactly its sentence)."""
    from moderator.speech.grammar import Parsed

    if "sentence" in row:
        return " ".join(t for t in texts if t) == row["sentence"]
    parses = [p for t in texts if t for p in [grammar.parse(t, row["roster"])] if isinstance(p, Parsed)]
    return len(parses) == 1 and parses[0].intent == row["intent"] and parses[0].slots == row["slots"]


def tally(rows: Sequence[dict[str, Any]]) -> dict[tuple[str, str], dict[str, int]]:
    """Per (condition, group): commands, each rule's commands right, and utterances auto gave the original."""
    from benchmarks.corpus import basic_grammar

    grammar = basic_grammar()
    out: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in rows:
        cell = out[row["cond"], row["group"]]
        cell["commands"] += 1
        cell["utterances"] += len(row["over"])
        cell["auto chose the original"] += sum(u["auto"] for u in row["over"])
        for rule in RULES:
            cell[rule] += right(row, [u["original" if to_original(rule, u) else "party"] for u in row["over"]],
                                grammar)
    return {key: dict(cell) for key, cell in out.items()}


def items(limit: int, every: int) -> list[dict[str, Any]]:
    """The dev split's commands (``limit`` of them, each also said by a dev MBROLA voice) and every ``every``-th of
    Allison's prompts (0: none)."""
    from benchmarks.adaptation import dev_items
    from benchmarks.corpus import basic_grammar

    out: list[dict[str, Any]] = [
        {"group": it.group, "voice": it.voice, "text": it.text, "intent": it.intent, "slots": it.slots,
         "roster": list(it.roster)} for it in dev_items(basic_grammar(), by_family=True, recorded=True, limit=limit)]
    if every:
        from benchmarks.human_dev import allison_prompts

        out += [{"group": "Allison (human)", "name": name, "samples": samples, "sentence": text}
                for name, samples, text in allison_prompts(every)]
    return out


def measure(todo: Sequence[dict[str, Any]], processes: int = 2, log: Callable[[str], None] = print,
            talkers: Sequence[str] = TALKERS) -> list[dict[str, Any]]:
    """Each command of ``todo`` in every condition (``CONDS``), ``talkers`` talking before it."""
    sentences = sorted({it["sentence"] for it in todo if "sentence" in it})
    jobs = [(k, dict(it), c) for k, it in enumerate(todo) for c in range(len(CONDS))]
    started = time.perf_counter()
    out = []
    with ProcessPoolExecutor(processes, initializer=_init, initargs=(sentences, tuple(talkers))) as pool:
        for n, row in enumerate(pool.map(_hear, jobs, chunksize=4), 1):
            out.append(row)
            if n % 100 == 0 or n == len(jobs):
                log(f"  {n}/{len(jobs)} ({time.perf_counter() - started:.0f} s)")
    return out


def markdown(cells: dict[tuple[str, str], dict[str, int]], meta: dict[str, Any]) -> str:
    names = list(RULES)
    lines = ["# Commands just after talk in a quiet room", "",
             f"Command: `{meta['command']}` ({meta['date']}, {meta['wall_seconds']:.0f} s).", "",
             "How it is measured: benchmarks/after_talk.py (docstring). Commands right of each; *auto* is the shipped "
             "rule (the room before the words or the utterance's spread says quiet, or a steady floor), *rise "
             "alone* the rule it replaced, *spread alone* the room unknown. The last column counts the utterances "
             "over the words, and how many of them auto gave the original model.", "",
             "| condition | voices | commands | " + " | ".join(names) + " | auto chose the original |",
             "| --- | --- | --- | " + " | ".join("---" for _ in names) + " | --- |"]
    for (cond, group), c in sorted(cells.items(), key=lambda kv: ([x[0] for x in CONDS].index(kv[0][0]), kv[0][1])):
        lines.append(f"| {cond} | {group} | {c['commands']} | " + " | ".join(str(c.get(n, 0)) for n in names)
                     + f" | {c['auto chose the original']} of {c['utterances']} |")
    return "\n".join([*lines, ""])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.after_talk", description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=150, help="dev commands sampled (default 150: 126 distinct, "
                                                                "each said by a dev voice and a dev MBROLA voice)")
    parser.add_argument("--every", type=int, default=2, help="every N-th of Allison's prompts (0: none)")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks/after-talk.md"))
    args = parser.parse_args(argv)
    started = time.perf_counter()
    todo = items(args.limit, args.every)
    print(f"{len(todo)} commands x {len(CONDS)} conditions")
    cells = tally(measure(todo, args.processes))
    meta = {"command": "python -m benchmarks.after_talk" + "".join(f" {a}" for a in (argv or sys.argv[1:])),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "wall_seconds": time.perf_counter() - started}
    args.out.write_text(markdown(cells, meta))
    print(markdown(cells, meta))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
