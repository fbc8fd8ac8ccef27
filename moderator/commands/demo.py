"""``moderator demo``: a complete scripted 8-player game, spoken, written to one WAV per room. No devices needed."""

from __future__ import annotations

import argparse
from pathlib import Path

from moderator.commands.simulate import simulate
from moderator.env import Environment
from moderator.outputs import add_speech_options
from moderator.resources import SCENARIOS
from moderator.scenario import load_scenario

DEMO = SCENARIOS / "eight_players.yaml"


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``demo`` subcommand."""
    p = sub.add_parser(
        "demo",
        help="play a complete scripted 8-player game and write what each room heard to WAV files",
        description="Play scenarios/eight_players.yaml on a virtual clock with the moderator's voice, and "
        "write roomA.wav and roomB.wav (what each room heard, and when), timeline.json (t0: the event-log "
        "time of the first sample), events.jsonl and transcript.txt. Needs no sound card.",
    )
    p.add_argument("--scenario", type=Path, default=DEMO, help="another scenario to play (default: the demo)")
    p.add_argument("--quiet", action="store_true", help="do not print the transcript")
    add_speech_options(p, devices=False)
    # simulate() options that the demo does not offer: typed lines, no noise.
    p.set_defaults(func=run, events=None, input="text", noise=None, snr=None, echo=None, aec="auto",
                   voice="flite:slt", engine="auto", vosk_model=None)


def run(args: argparse.Namespace, env: Environment) -> int:
    """Play the demo."""
    if args.audio_out is None:
        args.audio_out = Path("demo-output") / args.lang
    return simulate(load_scenario(args.scenario), args, env)
