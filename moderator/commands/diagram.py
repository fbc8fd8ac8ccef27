"""``moderator diagram``: render the statechart YAML as a Mermaid diagram."""

from __future__ import annotations

import argparse

from moderator.env import Environment
from moderator.game.statechart import CHARTS, diagram_path, load_statechart


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``diagram`` subcommand."""
    p = sub.add_parser("diagram", help="print (or --write) the statechart diagrams generated from their YAML")
    p.add_argument("--chart", choices=CHARTS,
                   help=f"one statechart under statecharts/ (default: every one, {', '.join(CHARTS)})")
    p.add_argument("--write", action="store_true", help="write statecharts/<chart>.md instead of printing")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, env: Environment) -> int:
    """Print or write the diagrams."""
    for chart in [args.chart] if args.chart else CHARTS:
        text = load_statechart(chart).to_markdown()
        if args.write:
            diagram_path(chart).write_text(text, encoding="utf-8")
            print(f"wrote {diagram_path(chart)}", file=env.stdout)
        else:
            env.stdout.write(text)
    return 0
