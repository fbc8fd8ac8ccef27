"""Assembles speech input: choosing a recognizer, and the listening loop for scripted or live audio."""

from __future__ import annotations

import argparse
from pathlib import Path

from moderator.errors import ModeratorError
from moderator.ports import Recognizer


def add_recognizer_options(p: argparse.ArgumentParser) -> None:
    """``--engine`` and ``--vosk-model``."""
    p.add_argument("--engine", choices=("auto", "pocketsphinx", "vosk"), default="auto",
                   help="speech recognizer: auto (vosk if a vosk model is installed, else the built-in "
                   "pocketsphinx), pocketsphinx or vosk")
    p.add_argument("--vosk-model", type=Path, metavar="PATH",
                   help="a vosk model directory (default: one installed with 'moderator models download')")


def make_recognizer(engine: str, vosk_model: Path | None = None) -> Recognizer:
    """The recognizer for ``engine``; ``auto`` prefers vosk when a model is given or installed."""
    if engine in ("auto", "vosk"):
        from moderator.adapters.asr_vosk import VoskRecognizer
        from moderator.models import installed_model

        model = vosk_model or installed_model()
        if model is not None:
            return VoskRecognizer(model)
        if engine == "vosk":
            raise ModeratorError("no vosk model is installed: run 'moderator models download', "
                                 "or pass --vosk-model PATH (or use --engine pocketsphinx)")
    from moderator.adapters.asr_pocketsphinx import PocketsphinxRecognizer

    return PocketsphinxRecognizer()
