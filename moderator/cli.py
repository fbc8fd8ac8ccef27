"""The ``moderator`` command line: the one place errors become exit codes."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from moderator import __version__
from moderator.env import Environment
from moderator.errors import ExitStatus, Interrupted, ModeratorError

#: Subcommand modules under ``moderator.commands``, in the order ``--help`` lists them.
COMMANDS = ("plan", "presets", "play", "simulate", "demo", "say", "devices", "listen", "recognize", "models", "diagram")

_TRACEBACK_HELP = "on an error, print the Python stack too (for a bug report)"


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="moderator",
        description=(
            "A hands-free, offline moderator for Two Rooms and a Boom: it plans the deck, "
            "runs the timed rounds, enforces the rules and narrates the reveal."
        ),
        epilog="Exit status: 0 done, 1 an error while running (a file, a device, the saved game, the "
        "recognizer), 2 a wrong command line, 130 interrupted (Ctrl-C).",
    )
    parser.add_argument("--version", action="version", version=f"moderator {__version__}")
    parser.add_argument("--traceback", action="store_true", help=_TRACEBACK_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(f"moderator.commands.{name}").register(sub)
    for command in sub.choices.values():
        # Also after the subcommand; SUPPRESS keeps a --traceback given before it from being reset.
        command.add_argument("--traceback", action="store_true", default=argparse.SUPPRESS, help=_TRACEBACK_HELP)
    return parser


def main(argv: Sequence[str] | None = None, env: Environment | None = None) -> int:
    """Run the CLI and return the exit status (an ``ExitStatus``).

    A wrong command line found by argparse exits 2 from ``parse_args`` (``SystemExit``), as argparse does;
    one found later is a ``UsageError``, also 2. Any other ``ModeratorError`` is a runtime error, 1.
    """
    env = env or Environment()
    parser = build_parser()
    args = parser.parse_args(argv)
    journal = _play_journal(args)
    before = _stat(journal)
    try:
        return int(args.func(args, env))
    except ModeratorError as exc:
        if args.traceback:
            traceback.print_exc(file=env.stderr)
        print(f"moderator: error: {exc}", file=env.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt as exc:
        if args.traceback:
            traceback.print_exc(file=env.stderr)
        note = exc.note if isinstance(exc, Interrupted) else _what_was_saved(args, journal, before)
        print(f"moderator: interrupted{note}", file=env.stderr)
        return int(ExitStatus.INTERRUPTED)
    except BrokenPipeError:
        # The reader of the output went away (``moderator presets | head -3``): stop quietly, as other command-line
        # tools do; a game says what was saved.
        if env.stdout is sys.stdout:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing more to flush at exit
        if journal is not None:
            print(f"moderator: the output was closed{_what_was_saved(args, journal, before)}", file=env.stderr)
        return int(ExitStatus.BROKEN_PIPE)


def _play_journal(args: argparse.Namespace) -> Path | None:
    """Where ``play`` saves its game; None for every other command, which saves nothing."""
    if args.command != "play":
        return None
    from moderator.journal import default_path

    if args.state is None and getattr(args, "game", None) == "room25":
        from moderator.room25.play import default_state

        return default_state()
    return Path(args.state or default_path())


def _stat(path: Path | None) -> tuple[int, int, int] | None:
    """What tells one version of a file from another: each save replaces the file (a new inode)."""
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


def _what_was_saved(args: argparse.Namespace, journal: Path | None, before: tuple[int, int, int] | None) -> str:
    """The end of the Ctrl-C message: for ``play``, whether a game was saved and how to continue it."""
    if journal is None:
        return ""
    after = _stat(journal)
    if after is not None and (args.resume or after != before):
        return f"; the game is saved in {journal}: continue it with 'moderator play --resume --state {journal}'"
    return " before the game started; nothing was saved"
