"""The process environment the CLI runs in, injectable so tests can swap it."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TextIO


@dataclass
class Environment:
    """Standard streams and whether stdout is an interactive terminal."""

    stdin: TextIO = field(default_factory=lambda: sys.stdin)
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)

    @property
    def interactive(self) -> bool:
        """True when both stdin and stdout are terminals."""
        return bool(self.stdin.isatty() and self.stdout.isatty())
