"""One JSON Lines line: the event log, ``simulate``'s, ``listen``'s and ``recognize``'s output."""

from __future__ import annotations

import json
from typing import Any

#: Line boundaries for ``str.splitlines`` that JSON leaves unescaped (the control characters below U+0020 are
#: escaped by JSON itself).
_SEPARATORS = ("\x85", "\u2028", "\u2029")


def line(obj: Any) -> str:
    """``obj`` as one line of JSON, without its trailing newline. Text stays readable (not ``\\u``-escaped), but NEL
    and the Unicode line and paragraph separators are escaped: they are valid inside a JSON string, yet a reader that
    splits lines as Python's ``str.splitlines`` does would cut the line there (a player may type them)."""
    text = json.dumps(obj, ensure_ascii=False)
    for separator in _SEPARATORS:
        text = text.replace(separator, f"\\u{ord(separator):04x}")
    return text
