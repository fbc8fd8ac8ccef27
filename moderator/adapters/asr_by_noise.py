"""pocketsphinx with two acoustic models, chosen for each utterance by how loud the room is under it.

The party model (``moderator/acoustic/party``) beats the original en-us model in every noisy room measured, and
on clean synthetic voices, but it loses a little on the only real human speech here (pocketsphinx-testdata's
readings: word error 21.9% -> 26.0%), and much on a human voice over a steady floor. So ``--acoustic-model auto``
(the default) listens with the original in a quiet room or over a steady floor, and with the party model at a loud
party, per utterance (docs/decisions.md, "The acoustic model follows the room").

The room's level is read two ways, and either one saying "quiet" is enough. The listener measured it before the
words: how far the utterance stands above the room's median level of the seconds before it (``Utterance.rise``, set
as ``room_rise``; unknown for a stream's first second, or audio handed over whole). And it is read off the utterance
itself: the endpointer keeps 0.3 s of the room before the words and 0.6 s after them (or pads an utterance ended
early with the room's background), so its quiet frames are the room and its loud ones the player; ``spread_db`` is
how far they stand apart. Each misses a quiet room the other sees: a long utterance has few quiet frames, and a
human reading of 6-8 s in a quiet room spreads like a party (30-32 dB) though it rises 41 dB above the room; a
command said just after talk in a quiet room rises little above the room before it (whose median is the talk)
though it spreads like a quiet room (benchmarks.after_talk). ``floor_swing_db`` is how much the quiet frames swing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from moderator.audio.mix import frame_powers
from moderator.ports import Transcript

if TYPE_CHECKING:
    from moderator.adapters.asr_pocketsphinx import Derived, PocketsphinxRecognizer, Scores
    from moderator.speech.grammar import Grammar

QUIET_SPREAD_DB = 34.0
"""An utterance whose loud frames stand this many dB or more above its quiet ones (``spread_db``) was said in a
quiet room: the original model hears it; under it, the party model. Chosen on the dev split (flite rms/awb and
the dev espeak-ng voices, dev babble and music; /work/scratch notes in docs/benchmarks/changes.md, "The acoustic
model follows the room"): clean commands over a -60 dBFS microphone floor spread 37.6 dB or more (1st
percentile), commands in babble at 18 dB or louder and in music at most 29.9 dB (99th percentile); 34 dB is the
middle of that gap. Every threshold in it gives the same dev result."""

QUIET_RISE_DB = 31.0
"""An utterance that stood this many dB or more above the room before it (``Utterance.rise``) was said in a quiet
room: the original model hears it; under it, the party model. Chosen on the dev split with the room heard 8 s
before each command (/work/scratch notes in docs/benchmarks/changes.md, "The room before the words chooses the
model"): clean and reverberant commands over the -60 dBFS microphone floor rose 36.9 dB or more, commands in babble
at 18 dB or louder and in music at 12 dB at most 25.5 dB; 31 dB is the middle of that gap (the test split's, seen
after: 36.7 and 25.3)."""

AGREE_WORDS = 2
"""The fewest words of a party path cut short that the original model's command must go on from: one word ("the",
"hostage") is too little to agree on (on dev the one word let in a wrong hostage choice), and each costs a decode
with the original."""

FRAME_SECONDS = 0.03
"""The frames whose levels ``spread_db`` compares (the endpointer's)."""

STEADY_SWING_DB = 3.3
"""An utterance whose quiet frames swing less than this (``floor_swing_db``) was said over a steady floor (a fan,
air conditioning, a microphone's own hiss), not at a party: the original model hears it, however loud the floor.
The party model was adapted on babble and music said over synthetic voices; over a steady floor it loses on a
human voice (Asterisk's Allison prompts as commands, the dev side's human voice, ``benchmarks.human_dev``: at 18 dB
white, pink and brown noise the original got 97, 119 and 119 of 121 right, the party model 67, 109 and 112), though
it still wins on the synthetic dev voices (docs/benchmarks/changes.md, "A steady floor goes to the original model").
Chosen on the dev split: steady floors (white, pink and brown noise at 12-24 dB) swing 1.6-3.8 dB, and 98% of them
less than 3.3; the dev babble swings 6.7 dB or more, the dev music 3.5 dB or more, so none of either goes over."""

SWING_BANDS = (250.0, 4250.0, 500.0)
"""The bands ``floor_swing_db`` reads the quiet frames in: 500 Hz wide, from 250 Hz to 4250 Hz (speech's)."""


def spread_db(samples: np.ndarray, rate: int) -> float:
    """How far the utterance's loud frames (95th percentile of the 30 ms frames' levels) stand above its quiet ones
    (10th percentile), in dB: about 44 dB for a command over a quiet microphone, 24 dB in 18 dB babble, 18 dB in
    12 dB babble. Digital silence counts as -120 dBFS; an utterance shorter than a frame spreads 0 dB."""
    frame = max(round(FRAME_SECONDS * rate), 1)
    if len(samples) < frame:
        return 0.0
    levels = 10 * np.log10(np.maximum(frame_powers(samples, frame), 1e-12))
    return float(np.percentile(levels, 95) - np.percentile(levels, 10))


def floor_swing_db(samples: np.ndarray, rate: int) -> float:
    """How much the utterance's quiet frames swing: in each 500 Hz band of ``SWING_BANDS``, how far the 25th
    percentile of the 30 ms frames' levels stands above the 2nd, in dB; the median over the bands. A steady floor
    swings about 2 dB (a frame's level varies by chance alone), babble and music more (talkers and notes come and
    go between the player's words). Infinite for an utterance of fewer than 10 frames (too few to tell)."""
    frame = max(round(FRAME_SECONDS * rate), 1)
    count = len(samples) // frame
    if count < 10:
        return float("inf")
    frames = np.asarray(samples[: count * frame], np.float64).reshape(count, frame) * np.hanning(frame)
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    hz = np.fft.rfftfreq(frame, 1.0 / rate)
    low, high, width = SWING_BANDS
    swings = []
    for start in np.arange(low, min(high, rate / 2), width):
        band = (hz >= start) & (hz < start + width)
        if band.any():
            levels = 10 * np.log10(np.maximum(power[:, band].sum(axis=1), 1e-12))
            swings.append(np.percentile(levels, 25) - np.percentile(levels, 2))
    return float(np.median(swings)) if swings else float("inf")


def quiet_room(samples: np.ndarray, rate: int, quiet_spread: float = QUIET_SPREAD_DB,
               steady_swing: float = STEADY_SWING_DB, *, rise: float | None = None,
               quiet_rise: float = QUIET_RISE_DB) -> bool:
    """Whether the original model hears the utterance: it was said in a quiet room (it stood ``quiet_rise`` dB or
    more above the room before it, ``rise``, when that is known; or it spreads ``quiet_spread`` dB or more), or over
    a steady floor (its quiet frames swing less than ``steady_swing`` dB): not a party's noise. The one rule of
    ``ByNoiseLevel``, which benchmarks.adaptation applies to the human readings too.

    Either measure saying "quiet" is enough: a long reading that leaves no pause spreads like a party and rises like
    a quiet room, and a command said just after talk in a quiet room rises little above the talk and spreads like a
    quiet room (benchmarks.after_talk)."""
    quiet = (rise is not None and rise >= quiet_rise) or spread_db(samples, rate) >= quiet_spread
    return quiet or floor_swing_db(samples, rate) < steady_swing


class ByNoiseLevel:
    """The ``Recognizer`` port (and the streaming one) over two ``PocketsphinxRecognizer``: ``quiet`` hears an
    utterance said in a quiet room (it rose ``QUIET_RISE_DB`` above the room before it, ``room_rise``, or it spreads
    ``quiet_spread`` dB, ``spread_db``) or over a steady floor (``quiet_room``), ``loud`` the
    others.

    Both listen for the same grammar and names, and get the same made-up pronunciations. Decoding while the player
    speaks (``begin``, ``accept``) only tells the endpointer when a command is whole, before the utterance's level
    is known: it runs on the model that the level of this microphone's last utterance chose (a room's level
    changes slowly; at worst an utterance waits for the long hangover). ``chosen`` names the model that heard the
    last utterance.

    When the party model's best path stops short of a whole command after at least ``AGREE_WORDS`` words, the
    original model decodes the utterance too, and its command is taken if it begins with every word the party model
    heard and goes on past them (``going_on_from``): in babble the party model's silence can take in a command's
    last word ("the bomber is" for "the bomber is Carol"), which the original may still hear. Then ``chosen`` is
    "default"; streaming stays on the model the room's level chose.
    """

    name = "pocketsphinx"

    def __init__(self, quiet: PocketsphinxRecognizer, loud: PocketsphinxRecognizer, *,
                 quiet_spread: float = QUIET_SPREAD_DB) -> None:
        self.quiet, self.loud = quiet, loud
        self.quiet_spread = quiet_spread
        self._last = quiet
        self._by_level = quiet
        """The model the last utterance's level chose (``model_for``): the next utterance streams on it."""
        self._streaming: PocketsphinxRecognizer | None = None
        self.over_the_moderator = False
        """Set by the listener for the utterance it decodes next: the moderator was audible in this microphone while
        it was said. Then ``quiet`` hears it whatever its level: what the echo canceller leaves of the moderator's
        voice is not a party's noise, and the rules that keep it from being taken for a command were tuned on the
        original model (with the party model, the moderator's own help list left "repeat" at 0.65 in
        tests/test_play_echo_pulse.py)."""
        self.room_rise: float | None = None
        """Set by the listener for the utterance it decodes next (``moderator.ports.HearsTheRoom``): how far it stood
        above the room before it, in dB; None: unknown, read the room off the utterance."""

    # -- which model -----------------------------------------------------------------

    def model_for(self, samples: np.ndarray, rate: int) -> PocketsphinxRecognizer:
        """The recognizer that hears this utterance."""
        if self.over_the_moderator or quiet_room(samples, rate, self.quiet_spread, rise=self.room_rise):
            return self.quiet
        return self.loud

    @property
    def chosen(self) -> str:
        """The name of the model that heard the last utterance ("default" before any)."""
        return "party" if self._last is self.loud else "default"

    @property
    def last(self) -> Scores | None:
        """The scores behind the last ``recognize`` (``PocketsphinxRecognizer.last``) of the model that heard it."""
        return self._last.last

    @property
    def derived(self) -> dict[str, Derived]:
        return self.quiet.derived

    # -- the port --------------------------------------------------------------------

    def expect(self, grammar: Grammar, roster: Sequence[str], intents: Sequence[str] | None = None) -> None:
        for rec in (self.quiet, self.loud):
            rec.expect(grammar, roster, intents)

    def recognize(self, samples: np.ndarray, rate: int) -> Transcript:
        self._last = self._by_level = self.model_for(samples, rate)
        heard = self._last.recognize(samples, rate)
        if self._last is self.loud and len(heard.partial.split()) >= AGREE_WORDS and not heard.text:
            # The party model's path stopped short of a whole command ("the bomber is"): its silence, trained on
            # babble, can take in a last word said under the party. The original model's whole command counts
            # when it goes on from those very words, so the two models agree on all the party model heard.
            other = self.quiet.recognize(samples, rate, going_on_from=heard.partial)
            if other.text:
                self._last = self.quiet
                return other
        return heard

    def missing_words(self, candidates: Iterable[str]) -> list[str]:
        return self.quiet.missing_words(candidates)

    def add_word(self, word: str, phones: str) -> None:
        for rec in (self.quiet, self.loud):
            rec.add_word(word, phones)

    def ensure_words(self, needed: Iterable[str]) -> list[Derived]:
        made = self.quiet.ensure_words(needed)
        for derived in made:
            self.loud.add_word(derived.word, derived.phones)
            self.loud.derived[derived.word] = derived
        return made

    def close(self) -> None:
        for rec in (self.quiet, self.loud):
            rec.close()

    # -- streaming ---------------------------------------------------------------------

    def fork(self) -> ByNoiseLevel:
        """Another one on the same models, with decoders of its own (one per microphone)."""
        return ByNoiseLevel(self.quiet.fork(), self.loud.fork(), quiet_spread=self.quiet_spread)

    def begin(self) -> None:
        self._streaming = self._by_level
        self._streaming.begin()

    def accept(self, samples: np.ndarray, rate: int) -> str:
        if self._streaming is None:
            return self.quiet.accept(samples, rate)  # raises: begin() first
        return self._streaming.accept(samples, rate)

    def finish(self) -> None:
        if self._streaming is not None:
            self._streaming.finish()
            self._streaming = None
