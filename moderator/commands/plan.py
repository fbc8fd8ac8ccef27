"""The ``moderator plan`` subcommand: the deck, rounds and hostage counts for a player count."""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from moderator.env import Environment
from moderator.errors import UsageError
from moderator.game.plan_view import render_plan
from moderator.game.rules import (
    GIVESY_BACKSIES,
    HOSTAGE_TABLES,
    MAX_PLAYERS,
    MIN_PLAYERS,
    ROUND_COUNTS,
    GamePlan,
    plan_for,
)
from moderator.inputs import shown
from moderator.limits import ROUND_MAX_SECONDS, ROUND_MIN_SECONDS
from moderator.settings import GameOptions


def register(subparsers: Any) -> None:
    """Add the ``plan`` subcommand."""
    parser = subparsers.add_parser(
        "plan",
        help="show the deck, rounds and hostages for a number of players",
        description=(
            "Plan a game of Two Rooms and a Boom: which cards to deal, how long each round lasts, "
            "how many hostages each room sends, and whether colour share is allowed."
        ),
    )
    add_plan_options(parser, players=True)
    parser.add_argument("--json", action="store_true", help="print the plan as one line of JSON")
    parser.set_defaults(func=run)


def add_plan_options(parser: argparse.ArgumentParser, *, players: bool) -> None:
    """The set-up options shared by ``plan`` and ``play`` (``--players N`` only for ``plan``)."""
    if players:
        parser.add_argument(
            "--players",
            type=int,
            required=True,
            metavar="N",
            help=f"number of players, {MIN_PLAYERS} to {MAX_PLAYERS} (more only with --force)",
        )
    parser.add_argument(
        "--rounds",
        type=int,
        choices=ROUND_COUNTS,
        default=3,
        help="3 rounds (basic, default) or 5 rounds (advanced, needs more than 10 players)",
    )
    parser.add_argument(
        "--bury",
        action="store_true",
        help="bury one card: deal a deck one card larger, with the President's Daughter and the Martyr",
    )
    parser.add_argument(
        "--hostage-table",
        choices=HOSTAGE_TABLES,
        default="current",
        help="hostage counts from the current edition (default) or the 2014 leader card",
    )
    parser.add_argument(
        "--givesy-backsies",
        choices=GIVESY_BACKSIES,
        default="en",
        help="after an abdication: en (default) the new leader cannot hand it straight back this round; "
        "fr (newer edition) whoever handed it over cannot lead again this round, by vote either",
    )
    timing = parser.add_mutually_exclusive_group()
    timing.add_argument(
        "--round-minutes",
        type=float,
        metavar="M",
        help=f"variant: every round lasts M minutes, at most {ROUND_MAX_SECONDS // 60} (hostage counts unchanged)",
    )
    timing.add_argument(
        "--durations",
        metavar="SECONDS,...",
        help=f"variant: custom round lengths in seconds ({ROUND_MIN_SECONDS} to {ROUND_MAX_SECONDS}), one per "
        "round, e.g. 240,180,60",
    )
    timing.add_argument(
        "--no-timer",
        action="store_true",
        help="variant: no clock; a round ends when both leaders have announced hostages and are ready",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help=f"allow more than {MAX_PLAYERS} players (the 22+ hostage row applies)",
    )
    parser.add_argument(
        "--preset",
        metavar="ID",
        help="the advanced game: deal a preset's cards (`moderator presets` lists them and their player counts)",
    )
    parser.add_argument(
        "--characters",
        metavar="ID,ID,...",
        help="the advanced game: add these cards to the President, the Bomber and the team cards, e.g. "
        "doctor,engineer (`moderator presets --cards` lists them)",
    )


def options_from_args(args: argparse.Namespace) -> GameOptions:
    """The GameOptions the set-up flags ask for."""
    if args.preset is not None and args.characters is not None:
        raise UsageError("--preset and --characters do not go together: a preset already says its characters")
    return GameOptions(
        rounds=args.rounds,
        bury=args.bury,
        hostage_table=args.hostage_table,
        round_seconds=None if args.round_minutes is None else round_minutes(args.round_minutes),
        durations=None if args.durations is None else tuple(parse_durations(args.durations)),
        no_timer=args.no_timer,
        force=args.force,
        givesy_backsies=args.givesy_backsies,
        preset=None if args.preset is None else parse_preset(args.preset),
        characters=() if args.characters is None else tuple(parse_characters(args.characters)),
    )


def plan_from_args(args: argparse.Namespace, *, players: int) -> GamePlan:
    """The GamePlan the set-up flags ask for."""
    return plan_for(players, options_from_args(args))


def round_minutes(minutes: float) -> int:
    """``--round-minutes`` in whole seconds (rounded): a finite number, from 1 s to ``ROUND_MAX_SECONDS``."""
    if not math.isfinite(minutes) or minutes <= 0:
        raise UsageError(f"--round-minutes must be positive, a number of minutes such as 2.5; got {minutes}")
    if minutes * 60 < ROUND_MIN_SECONDS:
        raise UsageError(f"--round-minutes {minutes:g} is a round of {minutes * 60:.2g} s; a round lasts at least "
                         f"{ROUND_MIN_SECONDS} s")
    if minutes * 60 > ROUND_MAX_SECONDS + 0.5:
        raise UsageError(f"--round-minutes {minutes:g} is too long: a round lasts at most "
                         f"{ROUND_MAX_SECONDS // 60} minutes")
    return round(minutes * 60)


def parse_durations(text: str) -> list[int]:
    """Parse ``--durations`` ("240,180,60") into seconds, each from 1 to ``ROUND_MAX_SECONDS``."""
    try:
        seconds = [int(part) for part in text.split(",")]
    except ValueError:
        raise UsageError(
            f"--durations takes whole seconds separated by commas, e.g. 180,120,60; got {shown(text)}"
        ) from None
    wrong = [s for s in seconds if not ROUND_MIN_SECONDS <= s <= ROUND_MAX_SECONDS]
    if wrong:
        raise UsageError(f"--durations: a round lasts {ROUND_MIN_SECONDS} to {ROUND_MAX_SECONDS} seconds; "
                         f"got {shown(wrong[0])}")
    return seconds


def parse_preset(text: str) -> str:
    """``--preset``: one id as ``moderator presets`` lists it (whether it exists is the rules' to say)."""
    preset = text.strip()
    if not preset:
        raise UsageError("--preset takes a preset id, e.g. the_standard (`moderator presets` lists them)")
    return preset


def parse_characters(text: str) -> list[str]:
    """``--characters`` ("doctor,engineer") into card ids, each once; an empty entry is refused."""
    ids = [part.strip() for part in text.split(",")]
    if not all(ids):
        raise UsageError(f"--characters takes card ids separated by commas, e.g. doctor,engineer; got {shown(text)}")
    twice = sorted({c for c in ids if ids.count(c) > 1})
    if twice:
        raise UsageError(f"--characters names {', '.join(twice)} twice: each card is in the deck once")
    return ids


def run(args: argparse.Namespace, env: Environment) -> int:
    """Build the plan and print it as JSON or as tables."""
    plan = plan_from_args(args, players=args.players)
    if args.json:
        print(json.dumps(plan.to_dict()), file=env.stdout)
    else:
        render_plan(plan, env.stdout)
    return 0
