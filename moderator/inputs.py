"""Reading the files a user gives moderator: within a size limit, as UTF-8 text, every failure one line.

The loaders of rosters, settings and scenarios read through ``read_text`` and validate what they parse into
typed values. ``reading`` is only the last resort behind them: an exception nobody foresaw while reading a
file still ends as a one-line error naming the file (a bug to report, with ``--traceback``).
"""

from __future__ import annotations

import codecs
import reprlib
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from moderator.errors import ModeratorError

_UTF16_32 = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
             (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))


def read_text(path: Path, *, error: type[ModeratorError], what: str | None = None,
              max_bytes: int | None = None) -> str:
    """The text of ``path``, which must be UTF-8 (a UTF-8 byte-order mark is dropped) and hold no NUL.

    Args:
        what: the kind of file for the messages ("roster", "scenario"); None: just "file".
        max_bytes: refuse a larger file without reading the rest of it.

    Raises:
        error: the file cannot be read, is too large, or is not UTF-8 text; one line that names it.
    """
    path = Path(path)
    kind = what or "file"
    try:
        with path.open("rb") as fh:
            data = fh.read() if max_bytes is None else fh.read(max_bytes + 1)
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise error(f"cannot read {what + ' ' if what else ''}{path}: {reason}") from exc
    if max_bytes is not None and len(data) > max_bytes:
        raise error(f"{path}: the {kind} is larger than {size_text(max_bytes)}, the most moderator reads")
    for bom, name in _UTF16_32:
        if data.startswith(bom):
            raise error(f"{path}: the {kind} is {name} text; save it as UTF-8")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(f"{path}:{line}: the {kind} is not UTF-8 text (byte 0x{data[exc.start]:02x}); "
                    "save it as UTF-8") from None
    if "\0" in text:
        line = text.count("\n", 0, text.index("\0")) + 1
        raise error(f"{path}:{line}: the {kind} holds a NUL byte: it is a binary file, not text")
    return text


def size_text(n: int) -> str:
    """A byte count for people: 64 KiB, 1 MB."""
    if n % 1024 == 0 and n < 1_000_000:
        return f"{n // 1024} KiB"
    if n % (1024 * 1024) == 0:
        return f"{n // (1024 * 1024)} MiB"
    return f"{n / 1_000_000:g} MB"


@contextmanager
def reading(path: Path, error: type[ModeratorError]) -> Iterator[None]:
    """Last resort around reading and validating ``path``: any unforeseen exception becomes ``error``.

    A ``ModeratorError`` passes unchanged; so does Ctrl-C.
    """
    try:
        yield
    except ModeratorError:
        raise
    except Exception as exc:
        raise error(f"{path}: cannot read it ({type(exc).__name__}: {one_line(str(exc))}); this is a bug "
                    "in moderator: please report it with the file, and the output of --traceback") from exc


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 40
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 4
_REPR.maxlevel = 2


def shown(value: Any) -> str:
    """``value`` for an error message: short, one line, control characters escaped (``repr`` style), and
    cheap even for a huge or deeply shared structure from a YAML file."""
    return one_line(_REPR.repr(value))


def one_line(text: str) -> str:
    """``text`` on one line: line breaks and other runs of white space become one space."""
    return " ".join(text.split())


def control_character(text: str) -> str | None:
    """How the first character of ``text`` that would act on a terminal (or reorder what it shows) is named,
    e.g. ``ESC (U+001B)``; None when it has none. Tabs and line breaks count: a name has no use for them."""
    for c in text:
        if unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp") or "\u202a" <= c <= "\u202e" \
                or "\u2066" <= c <= "\u2069":
            return f"{_C0_NAMES.get(c, unicodedata.name(c, 'a control character'))} (U+{ord(c):04X})"
    return None


_C0_NAMES = {"\t": "a tab", "\n": "a line break", "\r": "a carriage return", "\x1b": "ESC", "\x7f": "DEL",
             "\x00": "NUL"}
