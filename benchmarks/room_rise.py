"""How far a command stands above the room it is said in (``Utterance.rise``), per condition: what
``moderator.loop.LOUD_RISE`` (the loud room's "come closer to the microphone") is chosen on.

Run:  .venv/bin/python -m benchmarks.room_rise [--split dev|test]

Each command of the split (``benchmarks.adaptation``'s, as ``benchmarks.replay`` deals them: the dev split's flite and
espeak-ng groups, or the test split's five groups) is said in each condition as the adaptation benchmark mixes it,
after 8 s of the same room (the endpointer's median needs the room before the words, as in a game), and every
utterance that stands out from the room (``Utterance.stands_out``) gives its rise. Prints the 5th, 25th, 50th, 75th
and 95th percentiles per condition. Endpointing only: no recognizer, about two minutes for the dev split.
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks import adaptation as A
from benchmarks import voices as V
from benchmarks.acceptance import endpointed
from benchmarks.replay import _items

PERCENTILES = (5, 25, 50, 75, 95)


def rises(split: str) -> dict[str, list[float]]:
    """Each condition's label, and the rise of every utterance that stood out from the room in it."""
    items, beds, seed = _items(split, None, None)
    base = A.DEV_CONDS if split == "dev" else A.TEST_CONDS
    conds = [c for c in base if c.kind != "room"]
    if split == "dev":  # the test split's 18 dB, which the dev conditions lack
        conds.insert(1, A.Cond("babble 18 dB", "babble", 18))
    out: dict[str, list[float]] = {c.label: [] for c in conds}
    for i, item in enumerate(items):
        speech = V.say(item.text, item.voice)
        for cond in conds:
            signal, tail = A.listen(i, speech, cond, beds, seed)
            stream = np.concatenate([tail, signal, tail])  # the room first: the median the rise is measured over
            out[cond.label] += [u.rise for _, closed in endpointed(stream) for u in closed
                                if u.stands_out and u.rise is not None]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.room_rise", description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    args = parser.parse_args(argv)
    print(f"| condition | utterances | rise (dB), percentiles {'/'.join(map(str, PERCENTILES))} |")
    print("| --- | --- | --- |")
    for label, values in rises(args.split).items():
        cells = "/".join(f"{p:.1f}" for p in np.percentile(values, PERCENTILES)) if values else "-"
        print(f"| {label} | {len(values)} | {cells} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
