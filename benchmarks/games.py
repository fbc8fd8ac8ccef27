"""Whole games said in party babble (issue 10): does a game said by voices the acoustic model never trained on, at
18 dB of babble, decide what the typed game decides?

Run: ``nice -n 10 .venv/bin/python -m benchmarks.games [--snr 18] [--repeats 0 2] [--models default party auto+whisper]
[--voices unheard|unheard2|unheard3|unheard4] [--out docs/benchmarks/games.md]``

Each game is a voice scenario of tests/scenarios/voice (every line as a player says it, the hostage read-back's
"yes" included), played by ``moderator simulate --input voice --noise babble --snr S``, once per voice, acoustic
model and ``--repeats`` (how many more times a player says a command the moderator neither took nor refused, or
refused as words the player did not say; with repeats, a scripted "yes" to a read-back of other hostages than the
leader chose is a "no" and the choice again: ``VoiceDelivery``).
The game's decisions are each room's leaders and locked hostages, round by round, and the result: the winner, the
President and the Bomber (the winner alone until 2026-11-29, evening: a wrong reveal can give the right winner); a run
counts as the typed game's when all of them are the same. The voices are those no model trained or was tuned on
(benchmarks/voices.py): flite's held-out ``kal`` and ``slt``, and espeak-ng variants of the suite's test set
(``simulate --voice`` takes flite and espeak-ng voices only, so the unseen Festival and Kokoro families of
benchmarks/adaptation.py are not here).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks.voices import FLITE_HELD_OUT, UNHEARD_GAME_VOICES

ROOT = Path(__file__).resolve().parents[1]
GAMES = ("eight_players", "thirteen_players")
VOICES = (*FLITE_HELD_OUT, "espeak-ng:en-us+f3,speed=150,pitch=70", "espeak-ng:en-gb+m3,speed=190,pitch=35")


def decisions(events: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """Per room, the leaders and locked hostages in order, each with its round; and the result: the winner, the
    President and the Bomber (a wrong reveal can give the right winner: the President named is in the room the right
    one is in)."""
    out: dict[str, list[Any]] = {"A": [], "B": [], "result": []}
    round_no = 0
    for e in events:
        if e["type"] == "round_start":
            round_no += 1
        elif e["type"] == "leader":
            out[e["room"]].append((round_no, "leader", e["player"]))
        elif e["type"] == "hostages":
            out[e["room"]].append((round_no, "hostages", sorted(e["players"])))
        elif e["type"] == "result":
            out["result"].append([e.get("winner"), e.get("president"), e.get("bomber")])
    return out


def first_difference(typed: dict[str, list[Any]], spoken: dict[str, list[Any]]) -> list[Any] | None:
    """The first decision the spoken game made otherwise than the typed one (room A's, then B's, then the winner),
    as [where, typed, spoken]; None when there is none. A decision the spoken game never made is None."""
    return next(([where, a, b] for where in ("A", "B", "result")
                 for a, b in zip(typed[where], spoken[where] + [None] * len(typed[where]), strict=False) if a != b),
                None)


def _simulate(game: str, *extra: str) -> list[dict[str, Any]]:
    from moderator.cli import main
    from moderator.env import Environment

    with tempfile.TemporaryDirectory(prefix="games-") as tmp:
        out = Path(tmp) / "events.jsonl"
        env = Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())
        scenario = ROOT / "tests" / "scenarios" / "voice" / f"{game}.yaml"
        code = main(["simulate", str(scenario), "--events", str(out), "--quiet", *extra], env=env)
        if code != 0:
            raise RuntimeError(f"simulate {game} {' '.join(extra)}: {env.stderr.getvalue()}")
        return [json.loads(line) for line in out.read_text().splitlines()]


def run_one(job: tuple[str, str, str, float, int]) -> dict[str, Any]:
    """One game said by one voice, with one model, at ``snr``, with ``repeats``."""
    game, voice, model, snr, repeats = job
    typed = decisions(_simulate(game))
    started = time.perf_counter()
    acoustic, _, second = model.partition("+")  # "auto+whisper": --acoustic-model auto --second-opinion whisper
    events = _simulate(game, "--input", "voice", "--voice", voice, "--engine", "pocketsphinx", "--acoustic-model",
                       acoustic, *(["--second-opinion", second] if second else []), "--noise", "babble", "--snr",
                       str(snr), "--repeats", str(repeats))
    spoken = decisions(events)
    agreed = sum(1 for room in ("A", "B") for a, b in zip(typed[room], spoken[room], strict=False) if a == b)
    return {"game": game, "voice": voice, "model": model, "snr": snr, "repeats": repeats,
            "same": spoken == typed, "decisions": sum(len(typed[r]) for r in ("A", "B")), "agreed": agreed,
            "first_wrong": first_difference(typed, spoken),
            "commands": sum(e["type"] == "command" for e in events),
            "questions": sum(e["type"] == "announce" and e["key"] == "asked" for e in events),
            "seconds": round(time.perf_counter() - started)}


def report(rows: list[dict[str, Any]], command: str) -> str:
    lines = ["# Whole games said in party babble", "",
             f"Command: `{command}` ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}). How it is measured: "
             "benchmarks/games.py (docstring). Each cell: *same game* (yes/no), then the decisions made as in the "
             "typed game, in order, before the first that differs / all of them.", "",
             "| game | voice | model | repeats | same game | decisions in order | commands taken | "
             "\"did you say ...?\" asked | first difference |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r['game']} | {r['voice']} | {r['model']} | {r['repeats']} | "
                     f"{'yes' if r['same'] else 'no'} | {r['agreed']} / {r['decisions']} | {r['commands']} | "
                     f"{r.get('questions', 0)} | {r['first_wrong'] or ''} |")
    same = sum(r["same"] for r in rows)
    lines += ["", f"{same} of {len(rows)} runs decided what the typed game decides."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.games", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--snr", type=float, default=18.0)
    parser.add_argument("--repeats", type=int, nargs="+", default=[0, 2])
    parser.add_argument("--models", nargs="+", default=["default", "party"],
                        help="acoustic models (--acoustic-model), each optionally +whisper (--second-opinion whisper)")
    parser.add_argument("--games", nargs="+", default=list(GAMES))
    parser.add_argument("--voices", nargs="+", default=list(VOICES), metavar="VOICE",
                        help="simulate --voice specs, or the name of a set of two espeak-ng variants no split "
                        f"uses ({', '.join(UNHEARD_GAME_VOICES)}: benchmarks.voices.UNHEARD_GAME_VOICES)")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks" / "games.md")
    args = parser.parse_args(argv)
    voices = [u for v in args.voices for u in UNHEARD_GAME_VOICES.get(v, (v,))]
    jobs = [(g, v, m, args.snr, n) for g in args.games for v in voices for m in args.models for n in args.repeats]
    with ProcessPoolExecutor(args.processes) as pool:
        rows = list(pool.map(run_one, jobs))
    command = "python -m benchmarks.games " + " ".join(argv if argv is not None else sys.argv[1:])
    text = report(rows, command.strip())
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
