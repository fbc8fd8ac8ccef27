"""Keeps alsa-lib's diagnostics off the terminal: counted and kept here instead of printed over the prompt.

alsa-lib reports trouble ("underrun occurred", "Unknown PCM roomC", ...) through
one process-wide error handler, by default a ``fprintf(stderr, ...)``. PortAudio
talks to ALSA (and through it to PulseAudio), so during a game those lines
would land in the middle of the interactive prompt. ``install()`` replaces that
handler with a quiet one that counts the messages and keeps the last few, for
``count()``, ``recent()`` and the live view's ``alerts()``.

Install it before ``import sounddevice``: PortAudio scans the ALSA devices when
it initializes, and alsa-lib complains about every configured PCM that has no
card behind it (some 65 "Unknown PCM cards.pcm.rear"-like lines on a machine
without a sound card). ``with startup():`` around the import installs the
handler and files those messages as the scan's: counted, but not an alert.
Where libasound.so.2 is missing (macOS, Windows, a Linux without ALSA) all of
this does nothing.

The handler is variadic in C (``file, line, function, err, fmt, ...``); a ctypes
callback cannot be. It declares the five fixed arguments and, on x86-64 and
64-bit ARM Linux where a variadic integer or pointer argument travels exactly
like a fixed one, a few more machine words that hold the first integer/pointer
arguments of the message: enough to format it as alsa-lib would. Reading a
word the caller did not pass yields an unused register or a word of the
caller's stack frame, never an invalid address; a word is only dereferenced
(``%s``) when the format says the caller passed a string there. Elsewhere, and
for formats with floating-point conversions, the format string itself is kept.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import ctypes.util
import platform
import re
import sys
import threading
from collections import deque
from collections.abc import Iterator

#: How many message texts ``recent()`` keeps.
KEEP = 20

#: Machine words after ``fmt`` the callback reads where that is safe (see the module docstring).
_EXTRA_WORDS = 6 if sys.platform.startswith("linux") and platform.machine() in ("x86_64", "aarch64") else 0

_lock = threading.Lock()
_count = 0
_underruns = 0
_at_startup = 0
_in_startup = 0  # how many startup() blocks are open
_recent: deque[str] = deque(maxlen=KEEP)
_lib: ctypes.CDLL | None = None
_handler: object = None  # the ctypes callback once made: never released, as a thread in alsa-lib may be calling it
_active = False
_tried = False

_HANDLER_TYPE = ctypes.CFUNCTYPE(
    None,
    ctypes.c_char_p,  # file
    ctypes.c_int,  # line
    ctypes.c_char_p,  # function
    ctypes.c_int,  # err
    ctypes.c_char_p,  # fmt
    *([ctypes.c_size_t] * _EXTRA_WORDS),
)

_CONVERSION = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d*))?(hh|h|ll|l|j|z|t|L|q)?([diouxXcspeEfFgGaA%])")


def _load() -> ctypes.CDLL | None:
    for name in ("libasound.so.2", ctypes.util.find_library("asound")):  # the lookup runs ldconfig: only if needed
        if name:
            with contextlib.suppress(OSError):
                return ctypes.CDLL(name)
    return None


def install() -> bool:
    """Route alsa-lib's messages into this module from now on (again is harmless); False where there is no libasound."""
    global _lib, _handler, _active, _tried
    with _lock:
        if _active:
            return True
        if _tried and _lib is None:
            return False
        _tried = True
        lib = _lib or _load()
        if lib is None or not hasattr(lib, "snd_lib_error_set_handler"):
            return False
        if _handler is None:
            lib.snd_lib_error_set_handler.argtypes = [_HANDLER_TYPE]
            lib.snd_lib_error_set_handler.restype = ctypes.c_int
            lib.snd_strerror.argtypes = [ctypes.c_int]
            lib.snd_strerror.restype = ctypes.c_char_p
            _handler = _HANDLER_TYPE(_on_message)
            # Registered before sounddevice registers its own exit hook (this runs before its import), so this runs
            # after PortAudio terminates: its last messages are still caught, and no ALSA thread calls into a
            # finalized interpreter.
            atexit.register(uninstall)
        _lib = lib
        _active = lib.snd_lib_error_set_handler(_handler) == 0
        return _active


@contextlib.contextmanager
def startup() -> Iterator[bool]:
    """``install()``, and file the messages of the block as PortAudio's device scan (see ``during_startup``)."""
    global _in_startup
    ok = install()
    with _lock:
        _in_startup += 1
    try:
        yield ok
    finally:
        with _lock:
            _in_startup -= 1


def uninstall() -> None:
    """Give alsa-lib its default handler (printing to stderr) back."""
    global _active
    with _lock:
        if _lib is not None and _active:
            _lib.snd_lib_error_set_handler(ctypes.cast(None, _HANDLER_TYPE))
        _active = False


def installed() -> bool:
    """Whether alsa-lib's messages come here."""
    return _active


def count() -> int:
    """How many messages alsa-lib has reported since ``install()`` (or ``reset()``)."""
    return _count


def underruns() -> int:
    """How many of them were playback underruns (or capture overruns): "underrun occurred", "overrun occurred"."""
    return _underruns


def during_startup() -> int:
    """How many of them came during ``startup()`` blocks: the device scan's complaints about absent cards."""
    return _at_startup


def recent() -> list[str]:
    """The last ``KEEP`` messages, oldest first, as alsa-lib would print them without its "ALSA lib " prefix."""
    with _lock:
        return list(_recent)


def reset() -> None:
    """Forget the messages so far."""
    global _count, _underruns, _at_startup
    with _lock:
        _count = _underruns = _at_startup = 0
        _recent.clear()


def alerts() -> list[str]:
    """For the live view: one line if alsa-lib reported anything since its device scan, else nothing."""
    n, runs = _count - _at_startup, _underruns
    if not n:
        return []
    warnings = f"{n} ALSA warning{'s' * (n != 1)}"
    if runs == n:
        return [f"audio: {warnings} (underruns) hidden"]
    last = recent()[-1:] or [""]
    detail = f"{runs} underrun{'s' * (runs != 1)}; last: " if runs else "last: "
    return [f"audio: {warnings} hidden ({detail}{_shorten(last[0])})"]


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _on_message(
    file: bytes | None, line: int, function: bytes | None, err: int, fmt: bytes | None, *words: int
) -> None:
    """The handler alsa-lib calls (in whichever thread hit the trouble); it must never raise."""
    global _count, _underruns, _at_startup
    try:
        text = _format(fmt or b"", words)
        if err and _lib is not None:
            text += f": {(_lib.snd_strerror(err) or b'').decode(errors='replace')}"
        where = f"{(file or b'?').decode(errors='replace')}:{line}:({(function or b'?').decode(errors='replace')})"
        message = f"{where} {text}"
        run = "underrun occurred" in text or "overrun occurred" in text
    except Exception:  # a message lost is better than an exception unwinding into C
        message, run = "(unreadable ALSA message)", False
    with _lock:
        _count += 1
        _underruns += run
        _at_startup += _in_startup > 0
        _recent.append(message)


def _format(fmt: bytes, words: tuple[int, ...]) -> str:
    """``fmt`` filled from ``words`` like printf, or ``fmt`` itself where the words cannot say what was passed."""
    raw = fmt.decode(errors="replace")
    args = iter(words)
    out: list[str] = []
    end = 0
    try:
        for m in _CONVERSION.finditer(raw):
            flags, width, precision, length, conv = m.groups()
            out.append(raw[end : m.start()])
            end = m.end()
            if conv == "%":
                out.append("%")
                continue
            if conv in "eEfFgGaA" or length == "L":
                return raw  # floating-point arguments travel in other registers
            if width == "*":
                width = str(_signed(next(args), 32))
            if precision == "*":
                precision = str(_signed(next(args), 32))
            spec = "%" + flags + (width or "") + (f".{precision}" if precision is not None else "")
            word = next(args)
            bits = {"hh": 8, "h": 16, None: 32}.get(length, 64)
            if conv == "s":
                value = "(null)" if not word else ctypes.string_at(word).decode(errors="replace")
                out.append((spec + "s") % value)
            elif conv == "p":
                out.append(f"{word:#x}" if word else "(nil)")
            elif conv == "c":
                out.append((spec + "c") % chr(word & 0xFF))
            elif conv in "di":
                out.append((spec + "d") % _signed(word, bits))
            else:
                value = word & ((1 << bits) - 1)
                out.append((spec + ("d" if conv == "u" else conv)) % value)
    except (StopIteration, ValueError, TypeError):
        return raw
    out.append(raw[end:])
    return "".join(out)


def _signed(word: int, bits: int) -> int:
    word &= (1 << bits) - 1
    return word - (1 << bits) if word >> (bits - 1) else word
