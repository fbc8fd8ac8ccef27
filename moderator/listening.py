"""Assembles speech input: choosing a recognizer, and the listening loop for scripted or live audio."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from moderator.errors import ModeratorError
from moderator.game.engine import READ_BACK
from moderator.ports import Recognizer

SECOND_OPINIONS = ("auto", "whisper", "off")


def add_recognizer_options(p: argparse.ArgumentParser, *, read_back: bool = True,
                           second_opinion: str = "auto") -> None:
    """``--engine``, ``--vosk-model``, ``--acoustic-model``, ``--second-opinion`` (default ``second_opinion``),
    ``--wake-word``, and ``--read-back`` and ``--questions`` where a game is played."""
    p.add_argument("--engine", choices=("auto", "pocketsphinx", "vosk"), default="auto",
                   help="speech recognizer: auto (vosk if a vosk model is installed, else the built-in "
                   "pocketsphinx), pocketsphinx or vosk")
    p.add_argument("--vosk-model", type=Path, metavar="PATH",
                   help="a vosk model directory (default: one installed with 'moderator models download')")
    p.add_argument("--acoustic-model", default="auto", metavar="MODEL",
                   help="pocketsphinx's acoustic model: auto (the default: each utterance is heard with 'default' "
                   "when the room under it is quiet or its noise steady, a fan or air conditioning, with 'party' "
                   "when a party is loud), default (the wheel's en-us), "
                   "party (adapted to party babble, music and rooms: better in every noisy room measured, a little "
                   "worse on clean human readings; docs/benchmarks/adaptation.md) or the path of a model directory "
                   "(en-us/ and cmudict-en-us.dict)")
    default = ("auto, the default: whisper where its extra is installed, as scripts/setup.sh does, else off"
               if second_opinion == "auto" else f"default: {second_opinion}")
    p.add_argument("--second-opinion", choices=SECOND_OPINIONS, default=second_opinion,
                   help=f"{default}. whisper: "
                   "hear every utterance again with Whisper (base): where pocketsphinx heard no command, "
                   "Whisper's counts when the game's parser reads it whole; where it heard one, Whisper's other "
                   "words drop it (party talk), as do words that hold little of it over audio that makes it "
                   "no likelier than silence (for a short command, audio without each of its words), and another "
                   "command or only other players' names written unsure; "
                   "where neither gave one (or one was dropped), Whisper weighs the phase's commands "
                   "nearest what both heard against the audio, and takes the likeliest when the audio, not the "
                   "prompt, makes it likely (less likely, for a command pocketsphinx reached too). More commands "
                   "in a loud room and fewer false ones "
                   "(docs/benchmarks/second-opinion.md), each answered about 0.3 s later. Needs "
                   "pip install 'moderator[whisper]'. off: pocketsphinx (or vosk) alone")
    p.add_argument("--wake-word", nargs="?", const="moderator", metavar="WORD",
                   help="spoken commands count only after this word, e.g. 'moderator, pause' (default word: "
                   "moderator); answers such as 'yes' need none. For noisy rooms")
    if not read_back:
        return
    p.add_argument("--read-back", choices=READ_BACK,
                   help="read a hostage choice back and wait for 'yes' before it locks: spoken (commands heard "
                   "by a microphone; the default), always (typed ones too) or never")
    p.add_argument("--questions", choices=("on", "off"), default="on",
                   help="on (the default): where Whisper's second opinion nearly heard a command, but not surely "
                   "enough to act on it, ask \"Did you say: ...?\" in that room and act on a 'yes' (not in the "
                   "reveal). Answered in the same babble, 7 more test commands of 150 got through so at 12 dB, and "
                   "8 at 6 dB; party talk was asked about about once an hour (docs/benchmarks/changes.md). off: never "
                   "ask")


def resolve_second_opinion(choice: str | None) -> str | None:
    """What ``--second-opinion`` ``choice`` comes to: "whisper", or None for none. "auto" is Whisper where its extra
    is installed: over party talk it takes false accepts from about 8.5 an hour to under 0.5, and 12 dB babble from
    58 to about 120 right of 150 test commands, for about 0.3 s more before each reply (docs/decisions.md)."""
    if choice in (None, "off"):
        return None
    if choice == "auto":
        from moderator.adapters.asr_whisper import installed

        return "whisper" if installed() else None
    return choice


def described(recognizer: Recognizer) -> str:
    """The recognizer as the start of a game names it: its engine, and Whisper when it gives a second opinion."""
    from moderator.ports import LooksTwice

    return f"{recognizer.name} and Whisper" if isinstance(recognizer, LooksTwice) else recognizer.name


def make_recognizer(engine: str, vosk_model: Path | None = None, acoustic: str = "auto", *,
                    live: bool = False, second_opinion: str | None = None,
                    warn: Callable[[str], None] | None = None) -> Recognizer:
    """The recognizer for ``engine``; ``auto`` prefers vosk when a model is given or installed. ``acoustic`` is
    pocketsphinx's acoustic model (``moderator.acoustic.acoustic_model``), or "auto": the default model and the
    party model, chosen per utterance by the room's level (``moderator.adapters.asr_by_noise``). ``live``:
    microphones and speakers run meanwhile, so pocketsphinx decodes whole utterances in a process of its own (it
    would hold the thread that feeds the sound card; vosk releases it). ``second_opinion`` "whisper" (or "auto" with
    Whisper installed, ``resolve_second_opinion``): Whisper hears pocketsphinx's (or vosk's) utterances again, giving
    a command where it heard none and checking each one it heard (``moderator.adapters.asr_whisper.SecondOpinion``);
    None or "off": the engine alone. With "auto", a Whisper that is installed but will not load (its model damaged,
    the cache not writable) is told to ``warn`` and left out: the game starts with the engine alone, as it would
    where Whisper is not installed. Asked for by name, it is an error.

    Raises:
        WhisperModelError: ``second_opinion`` "whisper", and Whisper is missing or will not load.
    """
    recognizer = _engine(engine, vosk_model, acoustic, live)
    if resolve_second_opinion(second_opinion) == "whisper":
        from moderator.adapters.asr_whisper import SecondOpinion, WhisperModelError, load_whisper

        try:
            second = load_whisper()
        except WhisperModelError as exc:
            if second_opinion != "auto":
                recognizer.close()
                raise
            if warn is not None:
                warn(f"{exc}; listening without Whisper's second opinion (--second-opinion off hides this)")
            return recognizer
        return SecondOpinion(recognizer, second)  # type: ignore[return-value]
    return recognizer


def _engine(engine: str, vosk_model: Path | None, acoustic: str, live: bool) -> Recognizer:
    if engine in ("auto", "vosk"):
        from moderator.adapters.asr_vosk import VoskRecognizer
        from moderator.models import installed_model

        model = vosk_model or installed_model()
        if model is not None:
            return VoskRecognizer(model)
        if engine == "vosk":
            raise ModeratorError("no vosk model is installed: run 'moderator models download', "
                                 "or pass --vosk-model PATH (or use --engine pocketsphinx)")
    return pocketsphinx_recognizer(acoustic, worker=live)


def pocketsphinx_recognizer(acoustic: str = "auto", *, worker: bool = False) -> Recognizer:
    """pocketsphinx on the ``--acoustic-model`` named: "auto" is the default and the party model, chosen per
    utterance by the room's level (``moderator.adapters.asr_by_noise.ByNoiseLevel``); anything else, one model
    (``moderator.acoustic.acoustic_model``). ``worker``: decode in a process of its own.

    Raises:
        AcousticModelError: the model cannot be found or is incomplete.
    """
    from moderator.acoustic import AUTO, acoustic_model
    from moderator.adapters.asr_pocketsphinx import PocketsphinxRecognizer

    if acoustic == AUTO:
        from moderator.adapters.asr_by_noise import ByNoiseLevel

        return ByNoiseLevel(PocketsphinxRecognizer(acoustic_model("default"), worker=worker),
                            PocketsphinxRecognizer(acoustic_model("party"), worker=worker))
    return PocketsphinxRecognizer(acoustic_model(acoustic), worker=worker)
