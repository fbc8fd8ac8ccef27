"""Where the project's data directories (grammars, voices, statecharts) live."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GRAMMARS = ROOT / "grammars"
VOICES = ROOT / "voices"
STATECHARTS = ROOT / "statecharts"
