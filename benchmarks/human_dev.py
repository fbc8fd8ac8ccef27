"""A human voice for choosing, not testing: Asterisk's prompts said by Allison Smith, heard as a closed set of
commands by the original model, the party model and auto (the app's default: the one ``quiet_room`` chooses).

    python -m benchmarks.human_dev [--every 2] [--conds LABEL ...] [--out docs/benchmarks/human-dev.md]

Every other voice of the dev split is synthetic, and a model adapted on synthetic voices can gain on them and lose
on people (docs/benchmarks/changes.md). The test split's human recordings (pocketsphinx-testdata) are a test, never
heard while choosing; this is the human voice that choosing may hear. Debian's ``asterisk-core-sounds-en-g722``
holds 16 kHz G.722 recordings of the prompts (decoded by the ``G722`` wheel, a bit-exact implementation of the ITU
codec), and ``asterisk-core-sounds-en`` their transcripts.

- The set: each prompt whose transcript is two words or more, all in the dictionary, with no digit and no sound
  effect in brackets (every ``--every``-th of them, 121 at the default 2), said as a line of the voice tests
  (``benchmarks.adaptation.as_said``: 0.5 s of the room before the words, 1.0 s after) over the suite's -60 dBFS
  microphone hiss.
- The task: the prompts as a grammar of whole sentences, one of which was said (as a command of the game is one of
  the phase's); a prompt counts when the decode is exactly its sentence.
- The conditions: clean; steady floors (white, pink and brown noise: a microphone's hiss, air conditioning, a rumble)
  at 18 and 12 dB peak-frame SNR; the dev split's babble at 18 and 12 dB and its music at 12 dB. Seeded.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.acceptance import HISS_DBFS
from moderator.audio.endpoint import RATE
from moderator.audio.mix import hiss, noise_for, noise_gain, steady_noise

SOUNDS = Path("/usr/share/asterisk/sounds/en_US_f_Allison")
TRANSCRIPTS = Path("/usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz")
INSTALL = "apt-get install asterisk-core-sounds-en asterisk-core-sounds-en-g722; pip install G722"
SEED = 808
#: (label, kind, peak-frame SNR in dB): kind is "clean", a colour of ``steady_noise``, "babble" or "music".
CONDS = (("clean", "clean", None), ("white 18 dB", "white", 18.0), ("pink 18 dB", "pink", 18.0),
         ("brown 18 dB", "brown", 18.0), ("white 12 dB", "white", 12.0), ("pink 12 dB", "pink", 12.0),
         ("brown 12 dB", "brown", 12.0), ("babble 18 dB", "babble", 18.0), ("babble 12 dB", "babble", 12.0),
         ("music 12 dB", "music", 12.0))


def prompts(lines: Sequence[str], known: set[str]) -> list[tuple[str, str]]:
    """(file name, sentence) of each transcript line ("name: Text.") that reads as a command could: two words or
    more, each in ``known`` (the dictionary), no digit, no sound effect ("[beep]")."""
    out = []
    for line in lines:
        name, colon, text = line.partition(":")
        if not colon or line.startswith(";") or "[" in text or re.search(r"\d", text):
            continue
        words = re.sub(r"[^a-z' ]", " ", text.lower().replace("-", " ")).split()
        if len(words) >= 2 and all(w in known for w in words):
            out.append((name.strip(), " ".join(words)))
    return out


def allison_prompts(every: int = 2) -> list[tuple[str, np.ndarray, str]]:
    """(name, 16 kHz samples as recorded, sentence) of every ``every``-th prompt."""
    import G722
    import pocketsphinx

    if not TRANSCRIPTS.exists() or not SOUNDS.exists():
        raise SystemExit(f"Allison's prompts are missing: {INSTALL}")
    dictionary = Path(pocketsphinx.get_model_path()) / "en-us" / "cmudict-en-us.dict"
    known = {line.split()[0].split("(")[0] for line in dictionary.read_text().splitlines() if line.strip()}
    with gzip.open(TRANSCRIPTS, "rt") as fh:
        lines = fh.read().splitlines()
    found = [(name, text) for name, text in prompts(lines, known) if (SOUNDS / f"{name}.g722").exists()]
    return [(name, np.asarray(G722.G722(RATE, 64000).decode((SOUNDS / f"{name}.g722").read_bytes()), np.float32)
             / 32768, text) for name, text in found[::every]]


def allison_set(every: int = 2) -> list[tuple[str, np.ndarray, str]]:
    """(name, 16 kHz samples said as a line of the voice tests over the microphone hiss, sentence) of every
    ``every``-th prompt."""
    from benchmarks.adaptation import as_said

    rng = np.random.default_rng(SEED)
    out = []
    for name, recorded, text in allison_prompts(every):
        said = as_said(recorded)
        out.append((name, said + hiss(len(said), HISS_DBFS, rng), text))
    return out


def sentence_decoders(sentences: Sequence[str], folder: Path) -> dict[str, Any]:
    """pocketsphinx decoders of the original ("original") and the party model ("party") for a grammar of whole
    ``sentences``, one of which is said (its JSGF file written in ``folder``)."""
    import pocketsphinx

    from moderator.acoustic import acoustic_model

    wheel = Path(pocketsphinx.get_model_path()) / "en-us"
    grammar = folder / "prompts.gram"
    grammar.write_text("#JSGF V1.0;\ngrammar prompts;\npublic <prompt> = "
                       + " | ".join(f"( {s} )" for s in sentences) + ";\n")
    return {name: pocketsphinx.Decoder(hmm=str(root / "en-us"), jsgf=str(grammar),
                                       dict=str(wheel / "cmudict-en-us.dict"), loglevel="FATAL")
            for name, root in (("original", wheel), ("party", acoustic_model("party")))}


def heard_in(data: list[tuple[str, np.ndarray, str]], kind: str, snr: float | None,
             beds: dict[str, np.ndarray]) -> list[tuple[str, np.ndarray, str]]:
    """``data`` in one condition: each prompt with its own seeded stretch of the noise at ``snr`` dB peak-frame."""
    if kind == "clean":
        return data
    out = []
    for k, (name, samples, text) in enumerate(data):
        rng = np.random.default_rng([SEED, k])
        noise = noise_for(beds[kind], len(samples), rng) if kind in beds else steady_noise(len(samples), kind, rng)
        out.append((name, samples + noise * noise_gain(samples, noise, float(snr or 0), peak=True), text))
    return out


def measure(data: list[tuple[str, np.ndarray, str]], conds: Sequence[tuple[str, str, float | None]],
            log: Any = print) -> dict[str, dict[str, int]]:
    """Per condition: prompts right of the original, the party model, and auto (the one ``quiet_room`` chose), how
    many auto gave the original, and auto by the room's level alone (as before the steady-floor rule)."""
    from benchmarks.adaptation import decoded, dev_beds
    from moderator.adapters.asr_by_noise import quiet_room

    with tempfile.TemporaryDirectory() as tmp:
        decoders = sentence_decoders(sorted({text for _, _, text in data}), Path(tmp))
        beds = dev_beds() if any(kind in ("babble", "music") for _, kind, _ in conds) else {}
        out: dict[str, dict[str, int]] = {}
        for label, kind, snr in conds:
            cell = dict.fromkeys(("original", "party", "auto", "auto chose the original", "by level alone"), 0)
            for _, samples, text in heard_in(data, kind, snr, beds):
                right = {name: decoded(decoder, samples) == text for name, decoder in decoders.items()}
                for name, is_right in right.items():
                    cell[name] += is_right
                original = quiet_room(samples, RATE)
                cell["auto"] += right["original" if original else "party"]
                cell["auto chose the original"] += original
                by_level = quiet_room(samples, RATE, steady_swing=-np.inf)  # never steady: the level alone
                cell["by level alone"] += right["original" if by_level else "party"]
            out[label] = cell
            log(f"  {label}: {cell}")
    return out


def markdown(result: dict[str, dict[str, int]], n: int, meta: dict[str, Any]) -> str:
    lines = ["# A human voice on the dev side: Allison's prompts as commands", "",
             f"Command: `{meta['command']}` ({meta['date']}, {meta['wall_seconds']:.0f} s).", "",
             f"How it is measured: benchmarks/human_dev.py (docstring). {n} prompts, each right when decoded as "
             "exactly its sentence from a grammar of all of them; *auto* is the model `quiet_room` chose for each.",
             "*By level alone* is auto as it was before an utterance over a steady floor went to the original model "
             "(`STEADY_SWING_DB`).", "",
             "| condition | original | party | auto | auto chose the original | by level alone |",
             "| --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {label} | {c['original']} | {c['party']} | {c['auto']} | {c['auto chose the original']} | "
              f"{c['by level alone']} |" for label, c in result.items()]
    return "\n".join([*lines, ""])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.human_dev", description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=int, default=2, help="every N-th prompt (default 2: 121 prompts)")
    parser.add_argument("--conds", nargs="+", metavar="LABEL", help="only these conditions (default: all)")
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks/human-dev.md"))
    args = parser.parse_args(argv)
    conds = [c for c in CONDS if not args.conds or c[0] in args.conds]
    if args.conds and len(conds) != len(args.conds):
        parser.error(f"unknown condition; the conditions are: {', '.join(c[0] for c in CONDS)}")
    started = time.perf_counter()
    data = allison_set(args.every)
    print(f"{len(data)} prompts x {len(conds)} conditions")
    result = measure(data, conds)
    meta = {"command": "python -m benchmarks.human_dev" + "".join(f" {a}" for a in (argv or sys.argv[1:])),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "wall_seconds": time.perf_counter() - started}
    args.out.write_text(markdown(result, len(data), meta))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
