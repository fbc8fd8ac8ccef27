"""Assembles speech input: choosing a recognizer, and the listening loop for scripted or live audio."""

from __future__ import annotations

import argparse
from pathlib import Path

from moderator.errors import ModeratorError
from moderator.game.engine import READ_BACK
from moderator.ports import Recognizer


def add_recognizer_options(p: argparse.ArgumentParser, *, read_back: bool = True) -> None:
    """``--engine``, ``--vosk-model``, ``--wake-word``, and ``--read-back`` where a game is played."""
    p.add_argument("--engine", choices=("auto", "pocketsphinx", "vosk"), default="auto",
                   help="speech recognizer: auto (vosk if a vosk model is installed, else the built-in "
                   "pocketsphinx), pocketsphinx or vosk")
    p.add_argument("--vosk-model", type=Path, metavar="PATH",
                   help="a vosk model directory (default: one installed with 'moderator models download')")
    p.add_argument("--acoustic-model", default="default", metavar="MODEL",
                   help="pocketsphinx's acoustic model: default (the wheel's en-us), party (adapted to party "
                   "babble, music and rooms: better in every noisy room measured, a little worse on clean human "
                   "readings; docs/benchmarks/adaptation.md) or the path of a model directory (en-us/ and "
                   "cmudict-en-us.dict)")
    p.add_argument("--wake-word", nargs="?", const="moderator", metavar="WORD",
                   help="spoken commands count only after this word, e.g. 'moderator, pause' (default word: "
                   "moderator); answers such as 'yes' need none. For noisy rooms")
    if not read_back:
        return
    p.add_argument("--read-back", choices=READ_BACK,
                   help="read a hostage choice back and wait for 'yes' before it locks: spoken (commands heard "
                   "by a microphone; the default), always (typed ones too) or never")


def make_recognizer(engine: str, vosk_model: Path | None = None, acoustic: str = "default", *,
                    live: bool = False) -> Recognizer:
    """The recognizer for ``engine``; ``auto`` prefers vosk when a model is given or installed. ``acoustic`` is
    pocketsphinx's acoustic model (``moderator.acoustic.acoustic_model``). ``live``: microphones and speakers
    run meanwhile, so pocketsphinx decodes whole utterances in a process of its own (it would hold the thread
    that feeds the sound card; vosk releases it)."""
    if engine in ("auto", "vosk"):
        from moderator.adapters.asr_vosk import VoskRecognizer
        from moderator.models import installed_model

        model = vosk_model or installed_model()
        if model is not None:
            return VoskRecognizer(model)
        if engine == "vosk":
            raise ModeratorError("no vosk model is installed: run 'moderator models download', "
                                 "or pass --vosk-model PATH (or use --engine pocketsphinx)")
    from moderator.acoustic import acoustic_model
    from moderator.adapters.asr_pocketsphinx import PocketsphinxRecognizer

    return PocketsphinxRecognizer(acoustic_model(acoustic), worker=live)
