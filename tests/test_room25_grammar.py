"""Room 25's command language (grammars/room25.en.yaml): every phrase parses typed, back to its intent and slots,
no sentence means two things, the slot names are the engine's, and spoken by flite voices pocketsphinx hears
each canonical command as it was said."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from moderator.speech.compile import to_jsgf, words
from moderator.speech.grammar import Parsed, load_grammar
from moderator.speech.grammar_data import ROOM25_INTENT_SLOTS
from moderator.speech.template import normalize

ROSTER = ["Ann", "Ben", "Cal", "Dan", "Eve", "Fay", "Gus", "Hal"]
GRAMMAR = load_grammar("en", "room25")
#: Every command of issue 14, as a player says it.
CANONICAL = [
    "start the game", "Ann programmed", "everyone programmed", "done", "I am done", "skip", "Ben uses adrenaline",
    "Cal is dead", "Dan was killed", "Eve reached room twenty five", "Fay left room twenty five",
    "Gus is a prisoner", "Hal is a guard", "we escaped", "pause", "resume", "how much time is left", "repeat",
    "what can I say", "undo",
]  # fmt: skip


def test_the_intents_and_slots_are_the_engines() -> None:
    assert set(GRAMMAR.intents) == set(ROOM25_INTENT_SLOTS)
    for text, parsed in GRAMMAR.expand(ROSTER):
        spec = ROOM25_INTENT_SLOTS[parsed.intent]
        assert set(parsed.slots) <= set(spec), text
        assert {name for name, (_, required) in spec.items() if required} <= set(parsed.slots), text


def test_every_sampled_sentence_parses_back_to_one_intent() -> None:
    count = 0
    for text, expected in GRAMMAR.expand(ROSTER):
        assert GRAMMAR.parse(text, ROSTER) == expected, text
        assert {(p.intent, repr(p.slots)) for p in GRAMMAR.parse_all(text, ROSTER)} == {
            (expected.intent, repr(expected.slots))}, text
        count += 1
    assert count > 200


@pytest.mark.parametrize(("text", "intent", "slots"), [
    ("Ann reached room 25", "reached", {"player": "Ann"}),
    ("ann left room twenty-five", "left", {"player": "Ann"}),
    ("Ann has programmed", "programmed", {"player": "Ann"}),
    ("programmed", "programmed", {}),
    ("Ben uses the adrenaline token", "adrenaline", {"player": "Ben"}),
    ("Cal was a guard", "identity", {"player": "Cal", "side": "guard"}),
])
def test_typed_variants(text: str, intent: str, slots: dict[str, str]) -> None:
    assert GRAMMAR.parse(text, ROSTER) == Parsed(intent, slots, text)


pocketsphinx = pytest.importorskip("pocketsphinx")


def test_every_spoken_sample_sentence_is_accepted_by_the_jsgf() -> None:
    fsg = pocketsphinx.Decoder(lm=None, loglevel="FATAL").parse_jsgf(to_jsgf(GRAMMAR, ROSTER))
    said = [" ".join(w.lower() for w in normalize(t)) for t, _ in GRAMMAR.expand(ROSTER)]
    said = [s for s in said if not re.search(r"\d", s)]  # "room 25" is typed; it is said "twenty five"
    assert [s for s in said if not fsg.accept(s)] == []
    assert {w for s in said for w in s.split()} <= words(GRAMMAR, ROSTER)


@pytest.mark.skipif(shutil.which("flite") is None, reason="flite is not installed")
@pytest.mark.parametrize("voice", ["slt", "rms"])
def test_canonical_commands_are_heard_as_said(tmp_path: Path, voice: str) -> None:
    from moderator.adapters.asr_pocketsphinx import PocketsphinxRecognizer
    from moderator.audio.clip import Clip

    recognizer = PocketsphinxRecognizer()
    recognizer.expect(GRAMMAR, ROSTER)
    misses = []
    for i, line in enumerate(CANONICAL):
        path = tmp_path / f"{i}.wav"
        subprocess.run(["flite", "-voice", voice, "-t", line, "-o", str(path)], check=True, timeout=30)
        clip = Clip.read(path)
        heard = recognizer.recognize(clip.samples, clip.rate)
        want, got = GRAMMAR.parse(line, ROSTER), GRAMMAR.parse(heard.text, ROSTER)
        if not (isinstance(got, Parsed) and isinstance(want, Parsed) and (got.intent, got.slots) == (
                want.intent, want.slots)):
            misses.append(f"{line!r} -> {heard.text!r} ({heard.confidence:.2f})")
    # One bare short word may be lost (measured: slt loses "done", rms "undo", each rejected, never misheard; the
    # voice test says "I am done"): at most one miss.
    print(f"\n{voice}: {len(CANONICAL) - len(misses)} of {len(CANONICAL)}", *misses, sep="\n  ")
    assert len(misses) <= 1, misses
