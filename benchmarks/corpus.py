"""The benchmark's material: voices, rosters, spoken commands, party chatter, babble and human recordings."""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from moderator.adapters.player_voice import speak
from moderator.audio.clip import Clip
from moderator.audio.endpoint import RATE
from moderator.audio.pcm import from_pcm16
from moderator.speech.grammar import Grammar, load_grammar
from moderator.voice_input import CHATTER, make_babble

#: The synthetic players: the four flite voices, and espeak-ng variants at different speeds and pitches.
VOICES = (
    "flite:slt",
    "flite:rms",
    "flite:awb",
    "flite:kal",
    "espeak-ng:en-us",
    "espeak-ng:en-us+f3,speed=150,pitch=70",
    "espeak-ng:en-gb+m3,speed=190,pitch=35",
    "espeak-ng:en-us+f4,speed=165,pitch=85",
)

#: Rosters from the common to the rare (names the dictionary lacks get espeak-ng pronunciations).
ROSTERS = (
    ("Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi"),
    ("Xiomara", "Zoltan", "Priya", "Mateo", "Siobhan", "Kwame", "Ingrid", "Tomasz", "Yuki", "Oluwaseun"),
    ("Jack", "Jill", "Sam", "Max", "Lily", "Noah", "Emma", "Liam", "Olivia", "Ethan", "Ava", "Lucas"),
    ("Mallory", "Trent", "Peggy", "Victor", "Walter", "Sybil", "Rupert", "Wendy", "Oscar"),
)
SENTENCES_PER_TEMPLATE = 3

#: Party talk with no command in it, some of it about the game and its players (roster 0), as at a real table.
PARTY_TALK = (
    *CHATTER,
    "where did you put the bottle opener",
    "I was sure you were the bomber last time",
    "my phone is almost out of battery",
    "honestly that was the best round so far",
    "does anyone want something from the kitchen",
    "I need to sit down for a minute",
    "Alice told me she has a red card",
    "the music is way too loud in here",
    "we should play this again next weekend",
    "Frank keeps looking at the door",
    "I never trust anyone who smiles like that",
    "let me tell you what happened at work today",
    "this cheese is amazing, where did you buy it",
    "who was the president in the last game",
    "Grace and Heidi are definitely on the same team",
    "I am going to get some fresh air",
    "can somebody open a window please",
    "that is exactly what a spy would say",
    "the leader in our room is hopeless",
    "I think we have about two minutes",
    "show me your card and I will show you mine",
    "do you remember the rules for the gambler",
    "Carol, come here for a second",
    "I will trade you my snack for your secret",
    "nobody in this room is telling the truth",
    "let's ask Dave, he always knows",
    "we lost because Bob went to the wrong room",
    "my sister is coming over later tonight",
    "the blue team always wins when Erin plays",
    "I really like your shirt, is it new",
)

#: Human recordings in Debian's pocketsphinx-testdata (LibriVox readings, spoken cards, digits).
HUMAN_DIR = Path("/usr/share/pocketsphinx/test/data")


@dataclass(frozen=True)
class Command:
    """One spoken command of the acceptance set, with the parse it must give."""

    text: str
    intent: str
    slots: dict[str, Any]
    roster: tuple[str, ...]
    voice: str


def basic_grammar() -> Grammar:
    """The basic game's command language, as a basic game listens for it: without the advanced game's commands
    and with only the basic deck's cards (the benchmarks measure the game most hosts play, and stay comparable
    with their figures from before the advanced game)."""
    from moderator.game.hints import ADVANCED_INTENTS
    from moderator.game.rules import make_plan

    grammar = load_grammar("en")
    return grammar.narrowed(cards=frozenset(make_plan(8).deck),
                            intents=[i for i in grammar.intents if i not in ADVANCED_INTENTS])


def commands(grammar: Grammar, *, per_template: int = SENTENCES_PER_TEMPLATE, rosters: tuple = ROSTERS,
             seed: int = 0) -> list[Command]:
    """Every template, ``per_template`` sentences per roster, each spoken by one voice (a seeded deal)."""
    out: list[Command] = []
    for i, roster in enumerate(rosters):
        for text, parsed in grammar.expand(list(roster), limit_per_template=per_template,
                                           rng=random.Random(seed * 1000 + i)):
            out.append(Command(text, parsed.intent, parsed.slots, tuple(roster), ""))
    rng = random.Random(seed)
    voices = [VOICES[i % len(VOICES)] for i in range(len(out))]
    rng.shuffle(voices)
    return [Command(c.text, c.intent, c.slots, c.roster, v) for c, v in zip(out, voices, strict=True)]


@lru_cache(maxsize=4096)
def spoken(text: str, voice: str) -> np.ndarray:
    """``text`` said by ``voice``, at 16 kHz (cached: babble reuses the same lines)."""
    return speak(text, voice).resample(RATE).samples


def babble(seconds: float, *, talkers: int = 8, seed: int = 0) -> np.ndarray:
    """Multi-talker party babble from all the benchmark's voices and party talk, talkers 0-6 dB apart."""
    return make_babble(seconds, lambda text, voice: Clip(spoken(text, voice), RATE), talkers=talkers, seed=seed,
                       voices=VOICES, lines=PARTY_TALK, spread_db=6.0)


def human_recordings() -> list[tuple[str, np.ndarray]]:
    """(name, 16 kHz samples) of every recording in pocketsphinx-testdata; empty when it is not installed."""
    out: list[tuple[str, np.ndarray]] = []
    if not HUMAN_DIR.is_dir():
        return out
    for path in sorted(HUMAN_DIR.rglob("*.wav")):
        out.append((str(path.relative_to(HUMAN_DIR)), Clip.read(path).resample(RATE).samples))
    for path in sorted(HUMAN_DIR.rglob("*.raw")):
        # Sphinx's raw test files are headerless 16 kHz 16-bit mono.
        pcm = from_pcm16(path.read_bytes()[: path.stat().st_size // 2 * 2])
        out.append((str(path.relative_to(HUMAN_DIR)), pcm))
    return out
