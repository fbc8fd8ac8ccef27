"""The process environment the CLI runs in, injectable so tests can swap it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from moderator.ports import AudioIn, Recognizer


def _make_recognizer(*args: Any, **kwargs: Any) -> Recognizer:
    from moderator.listening import make_recognizer

    return make_recognizer(*args, **kwargs)


def _open_mics(*args: Any, **kwargs: Any) -> AudioIn:
    from moderator.mics import open_mics

    return open_mics(*args, **kwargs)


@dataclass
class Environment:
    """Standard streams, whether stdout is an interactive terminal, and the factories of what touches devices
    and engines: a command asks its environment for them, so a test passes fakes here instead of patching
    modules.

    Attributes:
        make_recognizer: ``moderator.listening.make_recognizer``'s signature (engine, vosk model, acoustic
            model, ``live=``).
        open_mics: ``moderator.mics.open_mics``'s (the parsed options, the clock, ``log=``).
    """

    stdin: TextIO = field(default_factory=lambda: sys.stdin)
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    make_recognizer: Callable[..., Recognizer] = _make_recognizer
    open_mics: Callable[..., AudioIn] = _open_mics

    @property
    def interactive(self) -> bool:
        """True when both stdin and stdout are terminals."""
        return bool(self.stdin.isatty() and self.stdout.isatty())
