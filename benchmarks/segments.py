"""Whether the endpointer is what loses commands in loud babble (issue 10): Whisper alone on each command's
endpointed utterances, and on the span of its words.

Run:  nice -n 5 .venv/bin/python -m benchmarks.segments [--split dev|test] [--conds LABEL ...] [--out OUT.jsonl]

For each command of the split (as ``benchmarks.adaptation`` deals and mixes them), in each condition: the utterances
the endpointer closes over its words (``benchmarks.acceptance.over_words``, as ``_hear`` finds them), whether any
stands out from the room (``Utterance.stands_out``: only those are decoded), and Whisper's recognizer with its rules
(``WhisperRecognizer.recognize``, no pocketsphinx) on each of them and on the words' own span, 0.3 s before them to
0.6 s after (the padding the listener keeps). If Whisper were right far more often on the span, the endpointer would
be the limit; on the dev split it is not (docs/benchmarks/changes.md, 2026-11-30).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import adaptation as A
from benchmarks import replay as R
from benchmarks import voices as V
from benchmarks.acceptance import over_words
from benchmarks.corpus import basic_grammar
from moderator.speech.grammar import Parsed
from moderator.voice_input import LEAD_IN

RATE = 16000
BEFORE, AFTER = 0.3, 0.6


def _right(grammar: Any, item: A.Item, text: str) -> bool:
    """Whether ``text`` parses as the command ``item`` is."""
    parsed = grammar.parse(text, list(item.roster)) if text else None
    return isinstance(parsed, Parsed) and (parsed.intent, parsed.slots) == (item.intent, item.slots)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.segments", description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--conds", nargs="*", default=["babble 12 dB", "babble 6 dB"], metavar="LABEL")
    parser.add_argument("--out", type=Path, default=None, help="a JSON line per command and condition")
    args = parser.parse_args(argv)
    from moderator.adapters.asr_whisper import WhisperRecognizer

    conds = R._conds(args.split, args.conds)
    items, beds, seed = R._items(args.split, None, None, True)
    grammar, whisper = basic_grammar(), WhisperRecognizer()
    rows = []
    for i, item in enumerate(items):
        speech = V.say(item.text, item.voice)
        said = (LEAD_IN, LEAD_IN + len(speech) / RATE)
        roster = list(item.roster)
        for cond in conds:
            signal, tail = A.listen(i, speech, cond, beds, seed)
            stream = np.concatenate([signal, tail])
            utterances = over_words(signal, tail, said)
            whisper.expect(grammar, roster)
            heard = [(u.stands_out, whisper.recognize(u.samples, RATE).text) for u in utterances]
            span = stream[max(0, round((said[0] - BEFORE) * RATE)) : round((said[1] + AFTER) * RATE)]
            on_span = whisper.recognize(span, RATE).text
            rows.append({"i": i, "voice": item.voice, "cond": cond.label, "text": item.text,
                         "utterances": [[round(u.start, 2), round(u.end, 2), out, text]
                                        for u, (out, text) in zip(utterances, heard, strict=True)],
                         "stands_out": any(out for out, _ in heard),
                         "right": any(out and _right(grammar, item, text) for out, text in heard),
                         "span": on_span, "span_right": _right(grammar, item, on_span)})
            if args.out is not None:
                with open(args.out, "a") as fh:
                    fh.write(json.dumps(rows[-1]) + "\n")
        if (i + 1) % 25 == 0:
            print(f"  {i + 1}/{len(items)} commands", file=sys.stderr, flush=True)
    for cond in conds:
        mine = [r for r in rows if r["cond"] == cond.label]
        print(f"{cond.label}: {len(mine)} commands, {sum(not r['utterances'] for r in mine)} with no utterance over "
              f"the words, {sum(bool(r['utterances']) and not r['stands_out'] for r in mine)} with none standing out; "
              f"Whisper alone right on the endpointed utterances {sum(r['right'] for r in mine)}, on the words' span "
              f"{sum(r['span_right'] for r in mine)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
