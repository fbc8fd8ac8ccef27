"""The ``moderator`` command line: the one place errors become exit codes."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence

from moderator import __version__
from moderator.env import Environment
from moderator.errors import ModeratorError

#: Subcommand modules under ``moderator.commands``, in the order ``--help`` lists them.
COMMANDS = ("plan", "play", "simulate", "demo", "say", "devices", "listen", "recognize", "models", "diagram")


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="moderator",
        description=(
            "A hands-free, offline moderator for Two Rooms and a Boom: it plans the deck, "
            "runs the timed rounds, enforces the rules and narrates the reveal."
        ),
    )
    parser.add_argument("--version", action="version", version=f"moderator {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(f"moderator.commands.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None, env: Environment | None = None) -> int:
    """Run the CLI and return the exit status."""
    env = env or Environment()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args, env))
    except ModeratorError as exc:
        print(f"moderator: error: {exc}", file=env.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("moderator: interrupted; the game is saved and can be resumed with --resume", file=env.stderr)
        return 130
