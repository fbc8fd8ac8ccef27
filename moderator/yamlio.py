"""YAML loading shared by every data family (grammars, voices, statecharts, scenarios).

PyYAML follows YAML 1.1, where ``yes``/``no``/``on``/``off`` are booleans. Those
words are commands here, so this loader keeps them as strings and only
``true``/``false`` are booleans.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from moderator.errors import ModeratorError


class _StrictBoolLoader(yaml.SafeLoader):
    """SafeLoader where only true/false (any case) are booleans."""


_StrictBoolLoader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_StrictBoolLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)


def loads(text: str, *, source: str, error: type[ModeratorError]) -> Any:
    """Parse YAML text; a syntax error becomes ``error`` naming ``source`` and the line."""
    try:
        return yaml.load(text, Loader=_StrictBoolLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        problem = getattr(exc, "problem", None) or str(exc)
        raise error(f"{where}: invalid YAML: {problem}") from exc


def load_file(path: Path, *, error: type[ModeratorError]) -> Any:
    """Read and parse a YAML file; a missing file or bad YAML raises ``error``."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise error(f"cannot read {path}: {exc.strerror or exc}") from exc
    return loads(text, source=str(path), error=error)
