"""Whisper's side of the adaptation benchmark, decided again on pocketsphinx's recorded transcripts (issue 10).

Run:  nice -n 5 .venv/bin/python -m benchmarks.replay record FILE.json [--split dev|test] [--commands N]
          [--groups G ...] [--conds LABEL ...]
      nice -n 5 .venv/bin/python -m benchmarks.replay replay FILE.json [--set NAME=VALUE ...] [--rows OUT.jsonl]
          [--oracle OUT.jsonl]

``record`` runs ``benchmarks.adaptation``'s commands through ``auto+whisper`` (pocketsphinx auto, Whisper's second
opinion: ``moderator.adapters.asr_whisper.SecondOpinion``) and keeps, for every utterance the endpointer closes,
pocketsphinx's transcript, by the utterance's audio and what was expected, with each command's outcome. ``replay``
says and mixes the same commands again (the voices' audio is cached on disk), endpoints them, and gives the second
opinion the recorded transcripts in place of pocketsphinx: a change on Whisper's side (its weighing, its checks) is
measured for Whisper's time alone, about a third of the run. ``--set NAME=VALUE`` sets a constant of
``moderator.adapters.asr_whisper`` first (``--set DECODED_LISTS=8``). It prints the right (wrong) counts per
condition, the recorded ones beside them, and every command whose outcome changed; on the recorded code the two
agree, which is the check that a replay is the run it stands for. It also counts the "did you say ...?" questions the
weighing offers (``asr_whisper.ASK``; ``questions``), about the command said and about others, and the outcome with
each answered by the player and heard by the game's listener (``adaptation.answered``; an answer to a question the
recorded run did not ask is decoded anew by pocketsphinx, and counted). ``--oracle`` also
weighs the command that was
said against each utterance, as the weighing weighs the commands it finds (``Oracle``): a command whose said form
does not clear the weighing's bars is beyond any change to what is weighed.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import adaptation as A
from benchmarks import voices as V
from moderator.ports import Transcript


class Recorded:
    """pocketsphinx's side of ``SecondOpinion``: the real recognizer, whose transcripts go into ``book`` (``first``
    given), or the transcripts of ``book`` alone (``first`` None)."""

    name = "auto"

    def __init__(self, first: Any, book: dict[str, list[Any]], anew: Callable[[], Any] | None = None) -> None:
        self.first, self.book = first, book
        self._expected = ""
        #: Without ``first``: makes the real recognizer for an answer's utterance that is not in the recording (to a
        #: question the recorded run did not ask: ``adaptation.answered``); ``decoded_anew`` counts them.
        self.anew, self.decoded_anew = anew, 0
        self._anew: Any = None
        self._expect_args: tuple[Any, ...] = ()
        #: The transcript given last (the oracle's hints).
        self.last = Transcript("", 0.0)

    @property
    def chosen(self) -> str:
        return getattr(self.first, "chosen", self.name) if self.first is not None else self.name

    def expect(self, grammar: Any, roster: Sequence[str], intents: Sequence[str] | None = None) -> None:
        if self.first is not None:
            self.first.expect(grammar, roster, intents)
        self._expected = json.dumps([list(roster), None if intents is None else list(intents)])
        self._expect_args = (grammar, roster, intents)

    def recognize(self, samples: np.ndarray, rate: int) -> Transcript:
        data = np.ascontiguousarray(samples, np.float32)
        key = hashlib.blake2b(f"{self._expected}|{rate}|".encode() + data.tobytes(), digest_size=16).hexdigest()
        # Only the answers' decodes, which the game's listener makes with its phase's intents (``adaptation._hear``
        # decodes the commands with the whole grammar): a command's utterance not held means a stale recording.
        if self.first is None and key not in self.book and self.anew is not None and self._expect_args[2] is not None:
            self._anew = self._anew or self.anew()
            self._anew.expect(*self._expect_args)
            self.decoded_anew += 1
            self.last = self._anew.recognize(samples, rate)
            return self.last
        if self.first is None:
            if key not in self.book:
                raise SystemExit("an utterance that is not in the recording: the voices, noises or endpointer "
                                 "have changed since it was made; record it again")
            text, confidence, guess = self.book[key]
            self.last = Transcript(text, confidence, guess=guess)
            return self.last
        heard = self.first.recognize(samples, rate)
        self.book[key] = [heard.text, heard.confidence, heard.guess]
        self.last = heard
        return heard

    def fork(self) -> Recorded:
        return Recorded(None if self.first is None else self.first.fork(), self.book)

    def close(self) -> None:
        if self.first is not None:
            self.first.close()


class Oracle:
    """What the weighing could reach (``replay --oracle``): for each utterance Whisper heard, the command that was
    said, weighed against it as the weighing weighs (``FasterWhisper.weigh``, ``weigh_silent``, ``word_scores``),
    and whether the commands the weighing weighs first (``WhisperRecognizer.candidates``; the decoded lists and
    names not counted) held it. A command not right whose said form clears the weighing's three bars
    (``clears_bars``) was lost to what was weighed or to the other rules; one whose said form does not is
    beyond the weighing as it stands, whatever it weighs."""

    def __init__(self, opinion: Any, first: Recorded) -> None:
        self.opinion, self.first = opinion, first
        self.name = opinion.name
        self.lines: list[dict[str, Any]] = []
        self._now: tuple[int, A.Item, A.Cond] | None = None

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.opinion, attribute)

    def hearing(self, index: int, item: A.Item, cond: A.Cond) -> None:
        self._now = (index, item, cond)

    def expect(self, grammar: Any, roster: Sequence[str], intents: Sequence[str] | None = None) -> None:
        self.opinion.expect(grammar, roster, intents)

    def recognize(self, samples: np.ndarray, rate: int) -> Transcript:
        from moderator.adapters import asr_whisper as W

        out = self.opinion.recognize(samples, rate)
        if self._now is None or self.opinion.over_the_moderator:
            return out
        index, item, cond = self._now
        second = self.opinion.second
        heard = second._hear(samples, rate)  # the utterance just heard: no decode again
        said = W._written(item.text)
        score = second.model.weigh(heard, [said])[0]
        silence = second.model.weigh_silent(heard, said)
        near = any(parsed.intent == item.intent and parsed.slots == item.slots
                   for _, parsed in second.candidates([self.first.last.text, self.first.last.guess]))
        self.lines.append({
            "i": index, "cond": cond.label, "voice": item.voice, "text": item.text, "heard": out.text,
            "pocketsphinx": self.first.last.text, "guess": self.first.last.guess, "whisper": heard.text,
            "whisper_logprob": round(heard.logprob, 3), "said_logprob": round(float(score), 3),
            "evidence": round(float(score - silence), 3),
            "words": [round(float(audio), 2) for audio, _ in second.model.word_scores(heard, said)],
            "weighed": near,
            "clears": W.clears_bars(score, heard.logprob, lambda: score - silence)})
        return out

    def summary(self, rows: list[dict[str, Any]]) -> dict[str, tuple[int, int, int]]:
        """Per condition: the commands not right, those with an utterance whose said form clears the bars, and
        those of them the weighing weighed."""
        lines: dict[tuple[int, str], list[dict[str, Any]]] = {}
        for line in self.lines:
            lines.setdefault((line["i"], line["cond"]), []).append(line)
        out: dict[str, tuple[int, int, int]] = {}
        for row in rows:
            if row["outcome"] == "right":
                continue
            heard = lines.get((row["i"], row["cond"]), [])
            clears = [line for line in heard if line["clears"]]
            missed, reach, weighed = out.get(row["cond"], (0, 0, 0))
            out[row["cond"]] = (missed + 1, reach + bool(clears), weighed + any(line["weighed"] for line in clears))
        return out


def _items(split: str, commands: int | None, groups: Sequence[str] | None,
           beds: bool = True) -> tuple[list[A.Item], dict, int]:
    """The commands of the split (as ``benchmarks.adaptation`` deals them), its noise beds (none without ``beds``:
    only clean and room conditions) and its seed."""
    wanted = list(groups or (A.DEV_GROUPS[:2] if split == "dev" else V.GROUPS))
    if "unseen: kokoro" in wanted and not V.kokoro_available():
        raise SystemExit(f"kokoro is not available at {V.KOKORO_PYTHON}: KOKORO=1 bash scripts/build_party_model.sh "
                         "--help sets it up, or leave its group out with --groups")
    return A.split_items(split == "dev", wanted, commands=commands, beds=beds)


def _conds(split: str, labels: Sequence[str] | None) -> tuple[A.Cond, ...]:
    every = A.DEV_CONDS if split == "dev" else A.TEST_CONDS
    labels = labels or ("clean + hiss", "babble 12 dB", "babble 6 dB")
    unknown = set(labels) - {c.label for c in every}
    if unknown:
        raise SystemExit(f"no condition {sorted(unknown)}: the conditions are {[c.label for c in every]}")
    return tuple(c for c in every if c.label in labels)


def _run(first: Any, book: dict[str, list[Any]], split: str, commands: int | None, groups: Sequence[str] | None,
         labels: Sequence[str], sink: Path | None = None,
         oracle: list[Oracle] | None = None) -> list[dict[str, Any]]:
    """The commands of the split in the conditions ``labels``, heard by pocketsphinx (``first``, or the transcripts
    of ``book``) and Whisper's second opinion; with ``oracle`` (a list), through an ``Oracle``, put in it."""
    from moderator.adapters.asr_whisper import SecondOpinion, WhisperRecognizer

    conds = _conds(split, labels)
    items, beds, seed = _items(split, commands, groups, any(c.kind in ("babble", "music") for c in conds))
    from moderator.listening import pocketsphinx_recognizer

    recorded = Recorded(first, book, anew=None if first is not None else lambda: pocketsphinx_recognizer(A.AUTO))
    opinion: Any = SecondOpinion(recorded, WhisperRecognizer())
    hearing = None
    if oracle is not None:
        opinion = Oracle(opinion, recorded)
        oracle.append(opinion)
        hearing = opinion.hearing
    log = lambda m: print(f"[{time.strftime('%H:%M:%S')}] {m}", file=sys.stderr, flush=True)  # noqa: E731
    log(f"{len(items)} commands x {len(labels)} conditions")
    rows = A.evaluate({}, items, conds, beds, seed=seed, log=log, sink=sink, recs={"agree": opinion},
                      hearing=hearing)
    if first is None:
        print(f"{recorded.decoded_anew} utterances not in the recording, decoded anew by pocketsphinx (answers to "
              "questions the recorded run did not ask)")
    return rows


def questions(rows: list[dict[str, Any]]) -> dict[str, tuple[int, int, int]]:
    """Per condition, the "did you say ...?" questions (``Transcript.question``): the commands not taken that were
    asked about as said (a "yes" would take them), the questions about another command (answered "no"), and the
    commands not right."""
    out: dict[str, tuple[int, int, int]] = {}
    for row in rows:
        right, other, missed = out.get(row["cond"], (0, 0, 0))
        taken = row["outcome"] != "missed"
        meant = row.get("asked_right", [])
        out[row["cond"]] = (right + (not taken and any(meant)), other + sum(not m for m in meant),
                            missed + (row["outcome"] != "right"))
    return out


def _counts(rows: list[dict[str, Any]], key: str = "outcome") -> dict[str, tuple[int, int, int]]:
    """Per condition: right, wrong, all (by ``key``: "outcome", or "answered" for the outcome with the questions
    answered; a recording made before the questions were answered has no "answered")."""
    out: dict[str, tuple[int, int, int]] = {}
    for row in rows:
        right, wrong, n = out.get(row["cond"], (0, 0, 0))
        outcome = row.get(key, row["outcome"])
        out[row["cond"]] = (right + (outcome == "right"), wrong + (outcome == "wrong"), n + 1)
    return out


def _print_answered(rows: list[dict[str, Any]], before: list[dict[str, Any]] | None = None) -> None:
    """The counts with each question answered by the player and heard (``adaptation.answered``)."""
    was = _counts(before, "answered") if before else {}
    for cond, (right, wrong, n) in _counts(rows, "answered").items():
        replies = [r for r in rows if r["cond"] == cond and r.get("reply")]
        yes = [r for r in replies if r["reply"] == "yes"]
        print(f"with the questions answered, {cond}: {right} ({wrong}) of {n}"
              + (f", recorded {was[cond][0]} ({was[cond][1]})" if cond in was else "")
              + f"; {len(yes)} answered yes ({sum(r['answered'] == 'right' for r in yes)} taken), "
              f"{len(replies) - len(yes)} no ({sum(r['answered'] == 'wrong' for r in replies if r['reply'] == 'no')}"
              " taken as another command)")


def whisper_settings(parser: argparse.ArgumentParser, settings: Sequence[str]) -> list[tuple[str, Any]]:
    """``--set NAME=VALUE ...``: each a constant of ``moderator.adapters.asr_whisper`` and its value (a Python
    literal); a name it does not have is the parser's error."""
    from moderator.adapters import asr_whisper

    out = []
    for setting in settings:
        name, _, value = setting.partition("=")
        if not hasattr(asr_whisper, name):
            parser.error(f"moderator.adapters.asr_whisper has no {name}")
        out.append((name, ast.literal_eval(value)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.replay", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    rec = sub.add_parser("record", help="run auto+whisper and keep pocketsphinx's transcripts")
    rec.add_argument("file", type=Path)
    rec.add_argument("--split", choices=("test", "dev"), default="test")
    rec.add_argument("--commands", type=int, default=None,
                     help="the first N commands of the seeded order (test: 30 is the README's run)")
    rec.add_argument("--groups", nargs="*", default=None,
                     help="voice groups (dev default: its flite and espeak-ng groups)")
    rec.add_argument("--conds", nargs="*", default=None, metavar="LABEL",
                     help="default: clean + hiss, babble 12 dB, babble 6 dB")
    rep = sub.add_parser("replay", help="decide Whisper's side again on the recorded transcripts")
    rep.add_argument("file", type=Path)
    rep.add_argument("--set", nargs="*", default=[], metavar="NAME=VALUE",
                     help="a constant of moderator.adapters.asr_whisper, set first (a Python literal)")
    rep.add_argument("--rows", type=Path, default=None, help="write the replayed rows here (JSON lines)")
    rep.add_argument("--oracle", type=Path, default=None, metavar="OUT.jsonl",
                     help="also weigh the command said against each utterance, as the weighing weighs, write a line "
                     "per utterance here, and say how many commands not right it could have taken (Oracle)")
    args = parser.parse_args(argv)
    if args.what == "record":
        book: dict[str, list[Any]] = {}
        from moderator.listening import pocketsphinx_recognizer

        labels = [c.label for c in _conds(args.split, args.conds)]
        rows = _run(pocketsphinx_recognizer(A.AUTO), book, args.split, args.commands, args.groups, labels)
        args.file.write_text(json.dumps({"split": args.split, "commands": args.commands, "groups": args.groups,
                                         "conds": labels, "rows": rows, "book": book}))
        for cond, (right, wrong, n) in _counts(rows).items():
            print(f"{cond}: {right} ({wrong}) of {n}")
        _print_answered(rows)
        return 0
    from moderator.adapters import asr_whisper

    for name, value in whisper_settings(parser, args.set):
        setattr(asr_whisper, name, value)
    recording = json.loads(args.file.read_text())
    oracle: list[Oracle] | None = [] if args.oracle else None
    rows = _run(None, recording["book"], recording["split"], recording["commands"], recording["groups"],
                recording["conds"], args.rows, oracle)
    before, after = _counts(recording["rows"]), _counts(rows)
    for cond, (right, wrong, n) in after.items():
        was = before.get(cond, (0, 0, 0))
        print(f"{cond}: {right} ({wrong}) of {n}, recorded {was[0]} ({was[1]})")
    for old, new in zip(recording["rows"], rows, strict=True):
        if old["outcome"] != new["outcome"] or old["heard"] != new["heard"]:
            print(f"  {new['cond']} | {new['voice']} | {new['text']!r}: {old['outcome']} {old['heard']!r} -> "
                  f"{new['outcome']} {new['heard']!r}")
    for cond, (right, other, missed) in questions(rows).items():
        print(f"questions, {cond}: {right} of the {missed} commands not right asked about as said (a \"yes\" takes "
              f"them), {other} questions about another command")
    _print_answered(rows, recording["rows"])
    if oracle:
        args.oracle.write_text("".join(json.dumps(line) + "\n" for line in oracle[0].lines))
        for cond, (missed, reach, weighed) in oracle[0].summary(rows).items():
            print(f"oracle, {cond}: {missed} not right; the said command clears the weighing's bars for {reach} "
                  f"of them, {weighed} of those among the commands weighed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
