"""Does ending a whole command after a short pause lose commands? Acceptance through the listening path of
``moderator play`` (a streaming recognizer's partial results; a whole command closed after ``short_hangover``
of non-speech and decoded ahead at ``early_look``), against the long hangover alone, per setting.

Run:  .venv/bin/python -m benchmarks.endpointing [--per-template N] [--json FILE]

The commands, voices, rosters and babble are the acceptance suite's (``benchmarks.acceptance``), clean over a
microphone's hiss and in babble at 12 dB peak-frame SNR, each with the full grammar (every intent). A command
counts when the one utterance heard parses to it; a command that was cut in two by the early close counts as
missed (or wrong). The choice of ``Endpointer.short_hangover`` and ``Endpointer.early_look`` is made on these
figures (docs/decisions.md, "Ending an utterance").
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import acceptance, pool
from benchmarks.corpus import ROSTERS, babble, spoken
from benchmarks.pool import W
from moderator.adapters.sound_in import BLOCK
from moderator.audio.endpoint import RATE, Endpointer, Utterance, webrtc_classifier
from moderator.audio.mix import hiss, noise_for, noise_gain
from moderator.speech.grammar import Parsed
from moderator.voice_input import LEAD_IN, TAIL

#: (label, short hangover, look-ahead); None: the long hangover alone (no grammar-aware close).
SETTINGS: tuple[tuple[str, float | None, float | None], ...] = (
    ("long hangover only (0.6 s)", None, None),
    ("short 0.2 s, decoded ahead at 0.06 s", 0.2, 0.06),
    ("short 0.25 s, decoded ahead at 0.06 s (the game's)", 0.25, 0.06),
)
CONDITIONS = (acceptance.Condition(None, True, acceptance.HISS_DBFS), acceptance.Condition(12, True))
SEED = 0


def _hear(setting: tuple[str, float | None, float | None], roster: tuple[str, ...], stream: np.ndarray,
          speech_end: int) -> tuple[list[Parsed], list[str], int]:
    """Utterances of ``stream`` through the endpointer as the listening loop wires it (partial results from a
    stream of the worker's forked pocketsphinx recognizer); the parses, texts, and early closes."""
    _, short, look = setting
    recognizer, grammar = W["streaming"], W["grammar"]
    partial: list[str] = [""]
    ahead: dict[str, Any] = {}

    def whole() -> bool:
        return isinstance(grammar.parse(partial[0], list(roster)), Parsed) if partial[0] else False

    def on_audio(audio: np.ndarray, first: bool) -> None:
        if first:
            recognizer.begin()
        partial[0] = recognizer.accept(audio, RATE)

    def prepare(utterance: Utterance) -> None:
        ahead["utterance"], ahead["heard"] = utterance, recognizer.recognize(utterance.samples, RATE)

    endpointer = Endpointer(webrtc_classifier())
    if short is not None and look is not None:
        endpointer.short_hangover, endpointer.early_look = short, look
        endpointer.complete, endpointer.on_audio, endpointer.prepare = whole, on_audio, prepare
        endpointer.on_end = recognizer.finish
    step = round(BLOCK * RATE)
    parses, texts, early = [], [], 0
    for i in range(0, len(stream), step):
        for utterance in endpointer.feed(stream[i : i + step], i / RATE):
            done_ahead = ahead.get("utterance") is utterance
            early += done_ahead
            heard = ahead["heard"] if done_ahead else recognizer.recognize(utterance.samples, RATE)
            if heard.text:
                texts.append(heard.text)
                parsed = grammar.parse(heard.text, list(roster))
                if isinstance(parsed, Parsed):
                    parses.append(parsed)
        if i >= speech_end and not endpointer.in_speech and (texts or i > speech_end + 2 * RATE):
            break
    recognizer.finish()
    return parses, texts, early


def measure(job: tuple[int, Any]) -> list[dict[str, Any]]:
    """Every condition and setting for one command (in a worker of ``benchmarks.pool``)."""
    index, command = job
    if "streaming" not in W:
        W["streaming"] = W["recognizers"]["pocketsphinx"].fork()
    W["streaming"].expect(W["grammar"], list(command.roster))
    speech = spoken(command.text, command.voice)
    clean = np.concatenate([np.zeros(round(LEAD_IN * RATE), np.float32), speech, np.zeros(round(TAIL * RATE) + 8 * RATE,
                                                                                       np.float32)])
    rows = []
    for cond_i, cond in enumerate(CONDITIONS):
        rng = np.random.default_rng([SEED, index, cond_i])
        if cond.snr is None:
            bed = hiss(len(clean), cond.hiss or -120.0, rng)
        else:
            bed = noise_for(W["noise"], len(clean), rng)
            under = slice(0, round((LEAD_IN + TAIL) * RATE) + len(speech))
            bed *= noise_gain(speech, bed[under], cond.snr, peak=True)
        stream = clean + bed
        for setting in SETTINGS:
            parses, texts, early = _hear(setting, command.roster, stream, round(LEAD_IN * RATE) + len(speech))
            right = len(parses) == 1 and parses[0].intent == command.intent and parses[0].slots == command.slots
            rows.append({"i": index, "cond": cond.label, "setting": setting[0], "voice": command.voice,
                         "text": command.text,
                         "heard": " | ".join(texts), "early": early,
                         "outcome": "right" if right else ("wrong" if parses else "missed")})
    return rows


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Right / wrong / missed per condition and setting, and what each short setting lost against the long
    hangover alone (the same command, condition and voice)."""
    table: dict[str, dict[str, Any]] = {}
    for cond in CONDITIONS:
        table[cond.label] = {}
        base = {r["i"]: r for r in rows if r["cond"] == cond.label and r["setting"] == SETTINGS[0][0]}
        for label, *_ in SETTINGS:
            mine = [r for r in rows if r["cond"] == cond.label and r["setting"] == label]
            counts = Counter(r["outcome"] for r in mine)
            table[cond.label][label] = {
                "n": len(mine), "right": counts["right"], "wrong": counts["wrong"], "missed": counts["missed"],
                "closed_early": sum(1 for r in mine if r["early"]),
                "lost": [{k: r[k] for k in ("text", "voice", "heard")} for r in mine
                         if r["outcome"] != "right" and base[r["i"]]["outcome"] == "right"],
                "gained": sum(1 for r in mine if r["outcome"] == "right"
                              and base[r["i"]]["outcome"] != "right"),
            }
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-template", type=int, default=1, help="sentences per template and roster")
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    started = time.perf_counter()
    cmds, _ = acceptance.jobs(per_template=args.per_template, rosters=ROSTERS, seed=SEED)
    noise = babble(acceptance.BABBLE_SECONDS, seed=SEED)
    results = pool.run({"pocketsphinx": None}, noise, [(measure, (i, c)) for i, c in enumerate(cmds)],
                       processes=args.processes, label="commands")
    report = {"commands": len(cmds), "seconds": round(time.perf_counter() - started, 1),
              "results": summarize([r for part in results for r in part])}
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    for cond, per in report["results"].items():
        for label, cell in per.items():
            print(f"{cond:24} {label:40} right {cell['right']}/{cell['n']}  wrong {cell['wrong']}  "
                  f"closed early {cell['closed_early']}  lost {len(cell['lost'])}  gained {cell['gained']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
