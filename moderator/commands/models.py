"""``moderator models``: list the speech models installed and known, and download one, verified."""

from __future__ import annotations

import argparse
from pathlib import Path

from moderator import models
from moderator.env import Environment


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``models`` subcommand with ``list`` and ``download``."""
    p = sub.add_parser(
        "models",
        help="list or download the vosk speech recognition models",
        description=(
            "Speech recognition needs a vosk model on disk. 'list' shows the installed ones and the "
            "ones moderator can download; 'download' fetches one, checks its SHA-256 and unpacks it."
        ),
    )
    actions = p.add_subparsers(dest="models_command", metavar="ACTION", required=True)
    ls = actions.add_parser("list", help="installed models, where they are looked for, and downloadable ones")
    ls.set_defaults(func=run)
    dl = actions.add_parser(
        "download",
        help="download, verify and unpack a model",
        description=(
            "Download a vosk model from alphacephei.com, check its size and SHA-256, and unpack it "
            "into the models folder. A model whose checksum is not known needs --sha256."
        ),
    )
    dl.add_argument("name", nargs="?", default=models.DEFAULT_MODEL,
                    help=f"model name (default {models.DEFAULT_MODEL})")
    dl.add_argument("--sha256", metavar="HEX", help="the expected SHA-256 of the zip (needed for unknown models)")
    dl.add_argument("--dir", type=Path, metavar="DIR", help=f"install into DIR (default {models.models_dir()})")
    dl.set_defaults(func=run)


def render_list(installed: list[Path], dirs: list[Path]) -> str:
    """The text of ``moderator models list``."""
    lines = ["Installed models:"]
    lines += [f"  {path.name}  ({path})" for path in installed] or ["  (none)"]
    lines.append("Looked for in:")
    lines += [f"  {folder}" for folder in dirs]
    lines.append("Downloadable (moderator models download NAME):")
    names = {path.name for path in installed}
    for name, info in models.MODELS.items():
        size = f"{info['size'] / 1e6:.0f} MB" if info.get("size") else "size unknown"
        check = "sha256 pinned" if info.get("sha256") else "no checksum: needs --sha256"
        mark = ", installed" if name in names else ""
        lines.append(f"  {name}  [{info.get('lang') or '?'}, {size}, {check}{mark}]")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace, env: Environment) -> int:
    """List models, or download one."""
    if args.models_command == "list":
        dirs = models.search_dirs()
        env.stdout.write(render_list(models.installed_models(dirs), dirs))
        return 0
    dest = args.dir or models.models_dir()
    if models.is_model_dir(dest / args.name):
        print(f"{args.name} is already installed in {dest / args.name}", file=env.stdout)
        return 0
    info = models.model_info(args.name, args.sha256)
    print(f"downloading {info['url']} into {dest} ...", file=env.stderr)
    path = models.download(args.name, dest, sha256=args.sha256)
    print(f"installed {args.name} in {path}", file=env.stdout)
    return 0
