"""``moderator simulate``: play a scripted game on a virtual clock and write its event log."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from moderator.env import Environment
from moderator.errors import ScenarioError
from moderator.scenario import load_scenario
from moderator.simulate import run_scenario
from moderator.speech.catalog import load_catalog
from moderator.speech.grammar import load_grammar


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``simulate`` subcommand."""
    p = sub.add_parser(
        "simulate",
        help="play a scripted game (scenario YAML) on a virtual clock",
        description="Play a whole game from a scenario file on a virtual clock, with no waiting and no "
        "devices, and write every event to a JSON Lines log. The transcript of what the moderator "
        "says is printed. Exit status 0 when the script ran to its end, even if commands were refused.",
    )
    p.add_argument("scenario", type=Path, help="the scenario file (YAML)")
    p.add_argument("--events", type=Path, metavar="OUT.jsonl", help="write the event log here ('-' for stdout)")
    p.add_argument("--input", choices=("text", "voice"), default="text",
                   help="text: each 'say' goes straight to the parser (default); voice: spoken and recognised")
    p.add_argument("--voice", default="flite:slt", help="synthetic voice for --input voice (ENGINE:VOICE)")
    p.add_argument("--noise", help="noise for --input voice: a WAV file or 'babble'")
    p.add_argument("--snr", type=float, help="signal-to-noise ratio in dB for --noise")
    p.add_argument("--seed", type=int, help="override the scenario's seed (room split)")
    p.add_argument("--lang", default="en", help="language of the grammar and the phrases (default en)")
    p.add_argument("--quiet", action="store_true", help="do not print the transcript")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, env: Environment) -> int:
    """Run the scenario; write events; print the transcript."""
    if args.input == "voice":
        raise ScenarioError("--input voice needs speech recognition, which this version does not have yet; "
                            "use --input text")
    scenario = load_scenario(args.scenario)
    if args.seed is not None:
        scenario = type(scenario)(**{**scenario.__dict__, "seed": args.seed})
    grammar, catalog = load_grammar(args.lang), load_catalog(args.lang)
    out = None
    if args.events is not None and str(args.events) != "-":
        try:
            out = args.events.open("w", encoding="utf-8")
        except OSError as exc:
            raise ScenarioError(f"cannot write the event log {args.events}: {exc.strerror}") from exc

    to_stdout = str(args.events) == "-"

    def write(event: dict[str, Any]) -> None:
        if out is not None:
            out.write(json.dumps(event, ensure_ascii=False) + "\n")
        elif to_stdout:
            env.stdout.write(json.dumps(event, ensure_ascii=False) + "\n")
        if not args.quiet and not to_stdout and event["type"] in ("announce", "command", "rejected"):
            env.stdout.write(transcript_line(event) + "\n")

    try:
        run_scenario(scenario, grammar=grammar, catalog=catalog, listeners=[write])
    finally:
        if out is not None:
            out.close()
    return 0


def transcript_line(event: dict[str, Any]) -> str:
    """One readable line: what was said to the moderator (<) and what it said (>)."""
    who = {"A": "room A", "B": "room B", "both": "both"}.get(event["room"], event["room"])
    if event["type"] == "announce":
        return f"{event['t']:7.1f}  {who:>6} > {event['text']}"
    mark = "" if event["type"] == "command" else "   (refused)"
    return f"{event['t']:7.1f}  {who:>6} < {event['text']}{mark}"
