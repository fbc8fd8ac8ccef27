"""``moderator recognize``: run speech recognition on WAV files (or typed text) and show the parsed command."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from moderator import jsonl
from moderator.env import Environment
from moderator.errors import ModeratorError, UsageError
from moderator.listening import add_recognizer_options
from moderator.roster import parse_names
from moderator.speech.grammar import Grammar, NoParse, load_grammar


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``recognize`` subcommand."""
    p = sub.add_parser("recognize", help="recognize commands in WAV files (a microphone-free speech test)",
                       description="Recognize each WAV file against the command grammar and show what was heard "
                       "and how it parses, e.g. moderator recognize take1.wav --players Alice,Bob,Carol. "
                       "With --text, parse a typed line instead.")
    p.add_argument("files", nargs="*", metavar="FILE.wav", help="recorded utterances, one command each")
    p.add_argument("--text", help="parse this typed line instead of audio")
    p.add_argument("--players", required=True, help="the roster, comma separated: Alice,Bob,Carol")
    add_recognizer_options(p)
    p.add_argument("--lang", default="en", help="grammar language (default en)")
    p.add_argument("--json", action="store_true", help="print one JSON object per file")
    p.set_defaults(func=run)


def result(grammar: Grammar, roster: list[str], file: str | None, heard: str, confidence: float,
           raw: str | None = None, doubtful: bool = False, question: str = "") -> dict[str, Any]:
    """The report of one utterance: ``heard`` re-parsed against the full grammar (``doubtful``: the recognizer
    found ``raw`` doubtful, ``Transcript.doubtful``; ``question``: a command it nearly heard,
    ``Transcript.question``)."""
    parsed = grammar.parse(heard, roster)
    rejected = parsed.reason if isinstance(parsed, NoParse) else None
    if not heard and raw:
        rejected = (f"doubtful ({confidence:.2f}): heard '{raw}', but those words alone fit the sound poorly "
                    "(talk around them?)" if doubtful else f"low confidence ({confidence:.2f}): heard '{raw}'")
    if not heard and question:
        rejected = f"{rejected or 'no command'}; nearly heard '{question}' (a game asks \"did you say ...?\")"
    return {
        "file": file,
        "heard": heard,
        "confidence": round(confidence, 3),
        "intent": None if isinstance(parsed, NoParse) else parsed.intent,
        "slots": None if isinstance(parsed, NoParse) else parsed.slots,
        "rejected": rejected,
    }


def run(args: argparse.Namespace, env: Environment) -> int:
    """Recognize and print. An utterance that does not parse is a result (``rejected``), not an error: exit 0."""
    roster = parse_names(args.players)
    if not roster:
        raise UsageError("--players needs the players' names, comma separated: Alice,Bob,Carol")
    if bool(args.files) == bool(args.text is not None):
        raise UsageError("give WAV files or --text LINE (one of the two)")
    grammar = load_grammar(args.lang)
    results = []
    if args.text is not None:
        results.append(result(grammar, roster, None, args.text, 1.0))
    else:
        from moderator.audio.clip import Clip

        clips = []
        for name in args.files:
            try:
                found = Path(name).is_file()
            except OSError as exc:  # a name too long for the file system, say
                raise ModeratorError(f"cannot read WAV {name}: {exc.strerror or exc}") from exc
            if not found:
                raise ModeratorError(f"no such file: {name}")
            clips.append((name, Clip.read(Path(name))))
        recognizer = env.make_recognizer(args.engine, args.vosk_model, args.acoustic_model,
                                         second_opinion=args.second_opinion, warn=env.log)
        recognizer.expect(grammar, roster)
        for name, clip in clips:
            transcript = recognizer.recognize(clip.samples, clip.rate)
            last = getattr(recognizer, "last", None)
            raw = getattr(last, "text", None) if not transcript.text else None
            results.append(result(grammar, roster, name, transcript.text, transcript.confidence, raw,
                                  transcript.doubtful, transcript.question))
    for item in results:
        if args.json:
            print(jsonl.line(item), file=env.stdout)
        else:
            where = f"{item['file']}: " if item["file"] else ""
            outcome = (f"{item['intent']} {json.dumps(item['slots'], ensure_ascii=False)}" if item["intent"]
                       else f"rejected: {item['rejected']}")
            print(f"{where}heard '{item['heard']}' ({item['confidence']:.2f}) -> {outcome}", file=env.stdout)
    return 0
