"""``moderator diagram``: render the statechart YAML as a Mermaid diagram."""

from __future__ import annotations

import argparse

from moderator.env import Environment
from moderator.game.statechart import diagram_path, load_statechart


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``diagram`` subcommand."""
    p = sub.add_parser("diagram", help="print (or --write) the statechart diagram generated from its YAML")
    p.add_argument("--chart", default="two_rooms", help="the statechart name under statecharts/ (default two_rooms)")
    p.add_argument("--write", action="store_true", help="write statecharts/<chart>.md instead of printing")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, env: Environment) -> int:
    """Print or write the diagram."""
    text = load_statechart(args.chart).to_markdown()
    if args.write:
        diagram_path(args.chart).write_text(text, encoding="utf-8")
        print(f"wrote {diagram_path(args.chart)}", file=env.stdout)
    else:
        env.stdout.write(text)
    return 0
