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
from moderator.inputs import one_line, read_text
from moderator.limits import YAML_MAX_DEPTH


class _StrictBoolLoader(yaml.SafeLoader):
    """SafeLoader where only true/false (any case) are booleans, and nesting is limited to ``YAML_MAX_DEPTH``
    (composing a node is recursive: 5,000 levels would overflow Python's stack)."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node:
        self._depth += 1
        try:
            if self._depth > YAML_MAX_DEPTH:
                raise yaml.composer.ComposerError(None, None, f"lists and mappings nested more than "
                                                  f"{YAML_MAX_DEPTH} deep", self.peek_event().start_mark)
            return super().compose_node(parent, index)  # type: ignore[no-any-return]
        finally:
            self._depth -= 1


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
        raise error(f"{where}: invalid YAML: {one_line(problem)}") from exc
    except ValueError as exc:  # a date such as 2024-13-01, or an integer of more than 4,300 digits
        problem = "a number with too many digits" if "digits" in str(exc) else one_line(str(exc))
        raise error(f"{source}: invalid YAML: {problem}") from exc


def load_file(path: Path, *, error: type[ModeratorError], what: str | None = None,
              max_bytes: int | None = None) -> Any:
    """Read and parse a YAML file; a missing, too large (``max_bytes``) or non-UTF-8 file, or bad YAML, raises
    ``error`` (``what`` names the kind of file in the messages)."""
    text = read_text(path, error=error, what=what, max_bytes=max_bytes)
    return loads(text, source=str(path), error=error)
