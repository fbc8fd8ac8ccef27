"""Command acceptance: spoken commands, in party babble, through endpointer -> recognizer -> grammar.

``python -m benchmarks`` runs it among the whole suite. On its own, for a recognizer setting's before and after
(the suite's commands, babble and seed; about 3 minutes a run on 2 cores)::

    .venv/bin/python -m benchmarks.acceptance [--snrs clean 18 12 6] [--decoder fillprob=1e-2] [--json FILE]

``--decoder KEY=VALUE`` sets a pocketsphinx decoder option over the shipped ones
(``moderator.adapters.sphinx.DECODER_SETTINGS``), to measure it before shipping it (docs/benchmarks/changes.md).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchmarks.corpus import ROSTERS, Command, basic_grammar, commands, spoken
from benchmarks.pool import W
from moderator.audio.endpoint import RATE, Endpointer, Utterance, webrtc_classifier
from moderator.audio.mix import MIC_HISS_DBFS, noise_for, noise_gain, snr_db
from moderator.audio.mix import hiss as mic_hiss
from moderator.speech.grammar import Grammar, Parsed
from moderator.voice_input import CHUNK, LEAD_IN, TAIL

#: Seconds of the room (its babble, hiss or silence) heard before each command: the endpointer follows the room's
#: level from it, and the listener measures how far an utterance stands out from it (``Utterance.rise``).
ROOM_BEFORE = 4.0

#: SNRs of the issue, in dB; None is clean speech.
SNRS: tuple[float | None, ...] = (None, 24, 18, 12, 6, 0)
BABBLE_SECONDS = 60.0


@dataclass(frozen=True)
class Condition:
    """A noise level: the SNR of babble and its definition (peak-frame or average power), or no babble
    and (``hiss``) a microphone's white-noise floor at that level in dBFS."""

    snr: float | None
    peak: bool = True
    hiss: float | None = None

    @property
    def label(self) -> str:
        """ "clean", "clean + hiss -60 dBFS", "12 dB peak", "12 dB avg"."""
        if self.snr is None:
            return "clean" if self.hiss is None else f"clean + hiss {self.hiss:g} dBFS"
        return f"{self.snr:g} dB {'peak' if self.peak else 'avg'}"


#: Synthetic speech is padded with digital silence, which no microphone delivers: the same commands
#: over a quiet microphone's hiss show how much of the clean figure that accounts for.
HISS_DBFS = MIC_HISS_DBFS


def conditions(snrs: Sequence[float | None] = SNRS, *, average: bool = False, hiss: bool = True) -> list[Condition]:
    """Each SNR by the peak-frame definition, (``hiss``) clean over a mic's hiss, and (``average``) the
    noisy ones by average power."""
    out = [Condition(s, True) for s in snrs]
    if hiss:
        out.insert(1, Condition(None, True, HISS_DBFS))
    if average:
        out += [Condition(s, False) for s in snrs if s is not None]
    return out


def endpointed(stream: np.ndarray) -> Iterator[tuple[int, list[Utterance]]]:
    """``stream`` fed to the game's endpointer as the listener feeds a microphone, ``CHUNK`` seconds at a time: for
    each chunk, its first sample's index and the utterances it closed (often none)."""
    endpointer = Endpointer(webrtc_classifier())
    step = round(CHUNK * RATE)
    for i in range(0, len(stream), step):
        yield i, endpointer.feed(stream[i : i + step], i / RATE)


def over_words(signal: np.ndarray, tail: np.ndarray, said: tuple[float, float]) -> list[Utterance]:
    """The utterances the endpointer closes over ``said`` (seconds in ``signal``), going on into ``tail`` only until
    one has closed."""
    utterances: list[Utterance] = []
    for i, closed in endpointed(np.concatenate([signal, tail])):
        utterances += [u for u in closed if u.start < said[1] and u.end > said[0]]
        if i >= len(signal) and utterances:
            break
    return utterances


def _hear(recognizer: Any, grammar: Grammar, roster: Sequence[str], signal: np.ndarray, tail: np.ndarray,
          said: tuple[float, float] = (0.0, float("inf")), asked: list[str] | None = None,
          ) -> tuple[list[Parsed], list[str], float, float]:
    """Endpoint ``signal`` (then ``tail`` until the utterance ends) and recognize each utterance that overlaps
    ``said`` (the command's seconds in ``signal``) and stands out from the room before it, as the game's
    ``Listener`` does (``Utterance.stands_out``). The commands the recognizer offered as questions ("did you say
    ...?", ``Transcript.question``) go into ``asked``.

    Returns the parses, the texts heard, the best confidence and the recognizer's CPU seconds.
    """
    parses, texts, best, cpu = [], [], 0.0, 0.0
    for utterance in over_words(signal, tail, said):
        if not utterance.stands_out:
            continue
        start = time.process_time()
        heard = recognizer.recognize(utterance.samples, RATE)
        cpu += time.process_time() - start
        best = max(best, heard.confidence)
        if asked is not None and heard.question and not heard.text:
            asked.append(heard.question)
        if heard.text:
            texts.append(heard.text)
            parsed = grammar.parse(heard.text, list(roster))
            if isinstance(parsed, Parsed):
                parses.append(parsed)
    return parses, texts, best, cpu


def measure(job: tuple[int, Command, list[Condition], tuple[str, ...], int]) -> list[dict[str, Any]]:
    """Every engine, grammar and condition for one command (in a worker of ``benchmarks.pool``)."""
    index, command, conds, phase_conds, seed = job
    grammar: Grammar = W["grammar"]
    speech = spoken(command.text, command.voice)
    pad = lambda n: np.zeros(round(n * RATE), np.float32)  # noqa: E731
    # The room goes on for ROOM_BEFORE seconds before the command, as at a party.
    clean = np.concatenate([pad(ROOM_BEFORE + LEAD_IN), speech, pad(TAIL)])
    said = (ROOM_BEFORE + LEAD_IN, ROOM_BEFORE + LEAD_IN + len(speech) / RATE)
    under = slice(round(ROOM_BEFORE * RATE), len(clean))
    rows = []
    for cond_i, cond in enumerate(conds):
        rng = np.random.default_rng([seed, index, cond_i])
        if cond.snr is None and cond.hiss is None:
            signal, tail, other = clean, pad(8.0), None
        elif cond.snr is None:
            floor = mic_hiss(len(clean) + 8 * RATE, cond.hiss, rng)
            signal, tail, other = clean + floor[: len(clean)], floor[len(clean) :], None
        else:
            bed = noise_for(W["noise"], len(clean) + 8 * RATE, rng)
            # Scaled as scale_noise does, over the stretch under the command; the tail keeps the same level.
            bed *= noise_gain(speech, bed[under], cond.snr, peak=cond.peak)
            signal, tail = clean + bed[: len(clean)], bed[len(clean) :]
            other = snr_db(speech, bed[under], peak=not cond.peak)
        for engine, recognizer in W["recognizers"].items():
            for mode in ("full", "phase") if cond.label in phase_conds else ("full",):
                if mode == "full":
                    intents = None
                elif command.intent in W["phases"][command.roster]:
                    intents = W["phases"][command.roster][command.intent][1]
                else:
                    continue  # never listened for in any phase (e.g. a read-back answer)
                recognizer.expect(grammar, list(command.roster), intents)
                parses, texts, conf, cpu = _hear(recognizer, grammar, command.roster, signal, tail, said)
                right = len(parses) == 1 and parses[0].intent == command.intent and parses[0].slots == command.slots
                outcome = "right" if right else ("wrong" if parses else "missed")
                rows.append({
                    "i": index, "engine": engine, "grammar": mode, "cond": cond.label, "voice": command.voice,
                    "intent": command.intent, "text": command.text, "heard": " | ".join(texts),
                    "outcome": outcome, "confidence": round(conf, 3), "cpu": cpu,
                    "seconds": len(speech) / RATE, "other_snr": other,
                })
    return rows


#: Where the phase grammar is measured too (clean only: 12 and 6 dB would add about a minute).
PHASE_CONDITIONS = ("clean",)


def jobs(*, per_template: int = 3, rosters: tuple = ROSTERS, conds: list[Condition] | None = None,
         phase_conds: Sequence[str] = PHASE_CONDITIONS, seed: int = 0) -> tuple[list[Command], list[Any]]:
    """The commands, and a pool job per command: every condition with the full grammar, and the phase
    grammar at ``phase_conds``."""
    cmds = commands(basic_grammar(), per_template=per_template, rosters=rosters, seed=seed)
    conds = conds or conditions()
    return cmds, [(measure, (i, c, conds, tuple(phase_conds), seed)) for i, c in enumerate(cmds)]


def _rate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    counts = Counter(r["outcome"] for r in rows)
    n = len(rows)
    return {"n": n, "right": counts["right"], "wrong": counts["wrong"], "missed": counts["missed"],
            "rate": round(counts["right"] / n, 4) if n else None}


def summarize(rows: list[dict[str, Any]], cmds: list[Command], conds: list[Condition],
              seconds: float) -> dict[str, Any]:
    """Acceptance by engine, grammar and condition; by voice; by intent; the SNR the other way; misses."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[(r["engine"], r["grammar"], r["cond"])].append(r)
        groups[(r["engine"], r["grammar"], r["cond"], "voice", r["voice"])].append(r)
        groups[(r["engine"], r["grammar"], r["cond"], "intent", r["intent"])].append(r)
    out: dict[str, Any] = {}
    for engine in sorted({r["engine"] for r in rows}):
        per: dict[str, Any] = {}
        for mode in sorted({r["grammar"] for r in rows if r["engine"] == engine}):
            table: dict[str, Any] = {}
            for cond in conds:
                key = (engine, mode, cond.label)
                if key not in groups:
                    continue
                cell = _rate(groups[key])
                others = [r["other_snr"] for r in groups[key] if r["other_snr"] is not None]
                if others:
                    cell["other_definition_snr_db_mean"] = round(float(np.mean(others)), 1)
                cell["by_voice"] = {k[4]: _rate(v)["rate"] for k, v in groups.items()
                                    if len(k) == 5 and k[:3] == key and k[3] == "voice"}
                cell["by_intent"] = {k[4]: _rate(v)["rate"] for k, v in groups.items()
                                     if len(k) == 5 and k[:3] == key and k[3] == "intent"}
                table[cond.label] = cell
            per[mode] = table
        mine = [r for r in rows if r["engine"] == engine and r["grammar"] == "full"]
        cpu, audio = sum(r["cpu"] for r in mine), sum(r["seconds"] for r in mine)
        clean = [r for r in mine if r["cond"] == "clean"]
        per["recognizer_rtf"] = round(cpu / audio, 4) if audio else None
        per["confidence_clean"] = _quantiles([r["confidence"] for r in clean])
        per["confidence_clean_hist"] = hist([r["confidence"] for r in clean])
        per["misses_clean"] = [{k: r[k] for k in ("text", "voice", "heard", "outcome", "confidence")}
                               for r in clean if r["outcome"] != "right"]
        out[engine] = per
    return {
        "commands": len(cmds),
        "voices": sorted({c.voice for c in cmds}),
        "rosters": [list(r) for r in sorted({c.roster for c in cmds})],
        "intents": dict(Counter(c.intent for c in cmds)),
        "conditions": [c.label for c in conds],
        "babble": {"seconds": BABBLE_SECONDS, "talkers": 8},
        "engines": out,
        "seconds": round(seconds, 1),
    }


def _quantiles(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    q = np.quantile(values, [0.05, 0.25, 0.5, 0.75, 0.95])
    return {k: round(float(v), 3) for k, v in zip(("p5", "p25", "p50", "p75", "p95"), q, strict=True)}


def hist(values: list[float]) -> dict[str, Any]:
    """Counts of confidences in tenths (0.0-0.1, ..., 0.9-1.0)."""
    counts = np.histogram(values, bins=10, range=(0.0, 1.0))[0] if values else np.zeros(10, int)
    return {"bins": [round(i / 10, 1) for i in range(10)], "counts": [int(c) for c in counts], "n": len(values)}


def decoder_setting(text: str) -> tuple[str, Any]:
    """``fillprob=1e-8`` -> ("fillprob", 1e-8): a number, true/false, or else the text."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, not {text!r}")
    lowered = value.lower()
    if lowered in ("true", "false"):
        return key, lowered == "true"
    try:
        return key, float(value) if any(c in value for c in ".eE") else int(value)
    except ValueError:
        return key, value


def table(rows: list[dict[str, Any]], conds: list[Condition]) -> list[str]:
    """One line per condition: right / wrong of all commands, and per voice family (flite, espeak-ng)."""
    lines = []
    for cond in conds:
        cells = []
        for family in ("all", "flite", "espeak-ng"):
            c = _rate([r for r in rows if r["cond"] == cond.label and family in ("all", r["voice"].split(":")[0])])
            cells.append(f"{family} {c['right']}/{c['n']} right, {c['wrong']} wrong")
        lines.append(f"{cond.label}: " + "; ".join(cells))
    return lines


def main(argv: list[str] | None = None) -> int:
    from benchmarks import pool
    from benchmarks.corpus import babble

    parser = argparse.ArgumentParser(prog="python -m benchmarks.acceptance", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--snrs", nargs="+", default=["clean", "18", "12", "6"],
                        help="peak-frame SNRs in dB, or 'clean' (also heard over a microphone's hiss)")
    parser.add_argument("--seed", type=int, default=0, help="the commands' and noise's seed (0: the suite's)")
    parser.add_argument("--decoder", type=decoder_setting, action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--json", default=None, help="also write every row here")
    args = parser.parse_args(argv)
    try:
        snrs = tuple(None if s == "clean" else float(s) for s in args.snrs)
    except ValueError:
        parser.error(f"--snrs takes numbers or 'clean', not {' '.join(args.snrs)}")
    started = time.perf_counter()
    conds = conditions(snrs, hiss=None in snrs)
    cmds, jobs_ = jobs(seed=args.seed, conds=conds, phase_conds=())
    decoder = dict(args.decoder)
    results = pool.run({"pocketsphinx": None}, babble(BABBLE_SECONDS, seed=args.seed), jobs_,
                       processes=args.processes, label="commands", decoder=decoder)
    rows = [r for part in results for r in part]
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"decoder": decoder, "seed": args.seed, "rows": rows}, out)
    print(f"{len(cmds)} commands, seed {args.seed}, decoder settings over the shipped ones: {decoder or 'none'} "
          f"({time.perf_counter() - started:.0f} s)")
    print("\n".join(table(rows, conds)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
