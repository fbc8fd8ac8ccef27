"""The pocketsphinx recognizer: a JSGF grammar compiled from ``grammars/``, and pronunciations for new names."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from moderator.adapters.sphinx import (
    FILLER,
    PHONES,
    VITERBI,
    Decoded,
    DecoderProcess,
    Decoders,
    RecognitionError,
)
from moderator.audio.mix import frame_powers
from moderator.ports import Transcript
from moderator.speech.compile import to_jsgf, words
from moderator.speech.template import normalize

if TYPE_CHECKING:
    from moderator.speech.grammar import Grammar

RATE = 16000
"""The rate of the en-us acoustic model."""

REJECT_BELOW = 0.5
"""Transcripts under this confidence come back with empty text; see ``confidence_from_llr``."""

# Confidence is a log-likelihood ratio per second of audio: the best path through the
# grammar against the best path through a free loop of phones (no phone language model).
# Speech that fits the grammar costs the grammar little; chatter forced into the grammar
# costs a lot. Measured on flite voices slt/rms/awb/kal (tests/test_recognize_pocketsphinx.py):
# commands mostly score -0.14 to +0.04, chatter -0.50 to -0.15; a few short commands
# ("undo", "yes") dip to -0.26. The logistic curve puts 0.5 at LLR_MIDPOINT.
LLR_MIDPOINT = -0.15
LLR_SLOPE = 22.0


CALIBRATION = "calibration.json"
"""An acoustic model's own confidence calibration, in its ``en-us/`` directory; see ``read_calibration``."""


def goes_on_from(text: str, start: str) -> bool:
    """Whether the words of ``text`` begin with all the words of ``start`` and go on past them."""
    words_, first = text.split(), start.split()
    return len(words_) > len(first) and words_[: len(first)] == first


def confidence_from_llr(llr: float, midpoint: float = LLR_MIDPOINT, slope: float = LLR_SLOPE) -> float:
    """Map the grammar-vs-phone-loop ratio to 0..1 (0.5 at ``midpoint``, 0.9 at 0.1 above it for the default
    slope). The defaults are the original en-us model's; an adapted model may carry its own (``read_calibration``)."""
    if llr == float("-inf"):
        return 0.0
    return 1 / (1 + math.exp(-slope * (llr - midpoint)))


def read_calibration(model: Path) -> tuple[float, float]:
    """The (midpoint, slope) of ``confidence_from_llr`` for the acoustic model directory ``model`` (the one holding
    ``mdef``, ``means`` ...): from ``model/calibration.json`` when there is one, e.g.
    ``{"llr_midpoint": -0.25, "llr_slope": 22.0}`` (``llr_slope`` optional; other keys, such as a note on how the
    values were chosen, are ignored), else ``LLR_MIDPOINT`` and ``LLR_SLOPE``. An adapted model scores the grammar
    and the phone loop differently from the original, so the original's midpoint can reject its right commands.

    Raises:
        RecognitionError: the file is not JSON, not an object, or its numbers are missing or not finite
            (the slope must also be positive).
    """
    path = model / CALIBRATION
    if not path.is_file():
        return LLR_MIDPOINT, LLR_SLOPE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecognitionError(f"{path}: not a readable JSON calibration file ({exc})") from exc
    if not isinstance(data, dict) or "llr_midpoint" not in data:
        raise RecognitionError(f'{path}: a calibration file is a JSON object with "llr_midpoint" (a number) and '
                               'optionally "llr_slope" (a positive number)')
    values = []
    for key, default in (("llr_midpoint", LLR_MIDPOINT), ("llr_slope", LLR_SLOPE)):
        value = data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise RecognitionError(f"{path}: {key} must be a finite number, not {value!r}")
        values.append(float(value))
    if values[1] <= 0:
        raise RecognitionError(f"{path}: llr_slope must be positive, not {values[1]!r}")
    return values[0], values[1]


@dataclass(frozen=True)
class Derived:
    """A pronunciation made up for a word the dictionary lacks."""

    word: str
    phones: str
    method: str
    """``dictionary parts``, ``espeak-ng`` or ``letters``."""


@dataclass(frozen=True)
class Scores:
    """The raw numbers behind the last transcript, for tuning and reports."""

    text: str
    """What the grammar search heard, before any rejection."""
    frames: int
    grammar: float
    """Log path score of the grammar search (natural log)."""
    phones: float
    """Log path score of the free phone loop over the same audio (natural log)."""
    llr: float
    """(grammar - phones) per 100 frames (one second)."""
    complete: bool
    """The words form a whole sentence of the grammar (pocketsphinx returns the best
    partial path when no path reaches the end)."""
    confidence: float
    absorbed: float = float("-inf")
    """The loudest 0.3 s the grammar search called silence, or covered with a word past ``STRETCH`` frames a phone,
    in dB against its words (see ``absorbed_speech``): near 0 dB, speech was swallowed around a short command."""
    aligned: float = float("nan")
    """The words alone forced over the utterance, against the phone loop, per 100 frames (``ALIGNED_LIMIT``); NaN
    when not measured (a transcript rejected before it)."""


# -- pronunciations ---------------------------------------------------------------

# espeak-ng's IPA (``espeak-ng -v en-us -q --ipa``) to the CMU ArpaBet of the en-us
# model. Longest symbols are matched first; stress marks are dropped, and a length
# mark that no entry takes is skipped.
IPA_TO_ARPABET: dict[str, str] = {
    "eɪ": "EY", "aɪ": "AY", "ɔɪ": "OY", "aʊ": "AW", "oʊ": "OW", "əʊ": "OW",
    "tʃ": "CH", "dʒ": "JH", "ɪə": "IY AH", "eə": "EH R", "ʊə": "UH R", "ɜː": "ER",
    "ɑː": "AA", "ɔː": "AO", "iː": "IY", "uː": "UW", "aː": "AA", "ər": "ER",
    "ɚ": "ER", "ɝ": "ER", "ɜ": "ER", "a": "AA", "æ": "AE", "ɑ": "AA", "ɒ": "AA",
    "ɔ": "AO", "ə": "AH", "ʌ": "AH", "ɐ": "AH", "ɛ": "EH", "e": "EH", "ɪ": "IH",
    "ᵻ": "IH", "i": "IY", "ʊ": "UH", "u": "UW", "o": "OW", "y": "UW", "ø": "ER",
    "b": "B", "d": "D", "ð": "DH", "f": "F", "ɡ": "G", "g": "G", "h": "HH",
    "j": "Y", "k": "K", "l": "L", "ɫ": "L", "m": "M", "n": "N", "ŋ": "NG",
    "p": "P", "ɹ": "R", "r": "R", "ɾ": "T", "s": "S", "ʃ": "SH", "t": "T",
    "θ": "TH", "v": "V", "w": "W", "z": "Z", "ʒ": "ZH", "x": "K", "ç": "HH",
    "ɬ": "L", "ʍ": "W",
}  # fmt: skip

# The last resort: spelling to sound, digraphs first.
LETTERS_TO_ARPABET: dict[str, str] = {
    "ch": "CH", "sh": "SH", "th": "TH", "ph": "F", "ng": "NG", "ee": "IY", "oo": "UW",
    "a": "AE", "b": "B", "c": "K", "d": "D", "e": "EH", "f": "F", "g": "G", "h": "HH",
    "i": "IH", "j": "JH", "k": "K", "l": "L", "m": "M", "n": "N", "o": "AA", "p": "P",
    "q": "K", "r": "R", "s": "S", "t": "T", "u": "AH", "v": "V", "w": "W", "x": "K S",
    "y": "IY", "z": "Z",
}  # fmt: skip


def _greedy(text: str, table: dict[str, str]) -> str:
    """Translate ``text`` by longest-match lookup; unknown symbols are skipped, repeats merged."""
    longest = max(map(len, table))
    phones: list[str] = []
    i = 0
    while i < len(text):
        for size in range(min(longest, len(text) - i), 0, -1):
            if (symbol := text[i : i + size]) in table:
                for phone in table[symbol].split():
                    if not phones or phones[-1] != phone:
                        phones.append(phone)
                i += size
                break
        else:
            i += 1
    return " ".join(phones)


def ipa_to_arpabet(ipa: str) -> str:
    """ArpaBet phones for espeak-ng IPA output, e.g. ``zˈoʊltən`` -> ``Z OW L T AH N``."""
    return _greedy(ipa.replace("ˈ", "").replace("ˌ", ""), IPA_TO_ARPABET)


def letters_to_arpabet(word: str) -> str:
    """A naive pronunciation from the spelling (accents stripped)."""
    plain = unicodedata.normalize("NFKD", word.lower()).encode("ascii", "ignore").decode()
    return _greedy(plain, LETTERS_TO_ARPABET)


def espeak_ipa(word: str) -> str | None:
    """espeak-ng's IPA for ``word`` (US English), or None when espeak-ng is missing or fails."""
    exe = shutil.which("espeak-ng") or shutil.which("espeak")
    if exe is None:
        return None
    try:
        done = subprocess.run([exe, "-q", "-v", "en-us", "--ipa", word], capture_output=True, text=True,
                              timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


# -- the recognizer ----------------------------------------------------------------


def _default_model() -> Path:
    import pocketsphinx

    return Path(pocketsphinx.get_model_path()) / "en-us"



FRAME = RATE // 100
"""Samples in one 10 ms decoder frame."""
WINDOW = 30
"""Frames (0.3 s) in the stretch of "silence" that ``absorbed_speech`` looks at."""
ABSORBED_LIMIT = -4.0
"""A transcript whose "silence" has a stretch this loud (dB against its words) is rejected. Measured
on 4 flite voices x 29 commands and 18 chatter sentences (clean): commands -23 dB or quieter, the 12
chatter lines the phone-loop ratio let through -1.5 to +2.9 dB; all 12 rejected, no command lost.
In 12 dB babble, chatter accepted went from 19/72 to 3/72 and wrong commands from 12 to 3, for 1
right command lost of 37."""


STRETCH = 15
"""Frames (0.15 s) per phone beyond which a word of the grammar search's path is stretched over more than itself:
``absorbed_speech`` counts the rest of it as the search's silence. Measured on the training split's commands and
party talk and the false-accept benchmark's dev hour (docs/benchmarks/changes.md, "A word stretched over the rest of
the sentence")."""


def absorbed_speech(pcm: bytes, segments: Sequence[tuple[str, int, int]],
                    phones: Callable[[str], int] | None = None) -> float:
    """The loudest ``WINDOW`` frames the search aligned to silence or noise, in dB against the mean
    power of its words; -inf when no such stretch is that long.

    A grammar search must explain all the audio with the grammar, and it can call what does not
    fit "silence". Chatter that ends in something like a command ("... blue team" -> "time left")
    then scores well: its words fit, and the rest is silence. Real silence is far quieter than the
    words around it; swallowed speech is as loud as they are.

    It can also stretch a word over the rest ("let's undo that whole conversation" -> "undo" and a "that" of 1.3 s).
    With ``phones`` (the number of phones of a word of the path), a word's frames past ``STRETCH`` per phone count as
    silence too, and only the frames before as its word; not in a path of one word, which a player may draw out
    ("nooo"), and where no other words of the sentence are left to swallow.
    """
    power = _frame_power(pcm)
    n = len(power)
    words, silences = [], []
    fillers = [bool(FILLER.fullmatch(w.split("(")[0])) for w, _, _ in segments]
    if fillers.count(False) < 2:
        phones = None  # a word said alone may be drawn out: espeak-ng's en-us+f4 says "no" for 0.6 s
    for (w, a, b), filler in zip(segments, fillers, strict=True):
        b = min(b, n - 1)
        if a >= n:
            continue
        if filler:
            silences.append((a, b))
        elif phones is not None and b >= (end := a + STRETCH * max(phones(w), 1)):
            words.append((a, end - 1))
            silences.append((end, b))
        else:
            words.append((a, b))
    if not words:
        return float("-inf")
    word_power = float(np.mean(np.concatenate([power[a : b + 1] for a, b in words])))
    loudest = float("-inf")
    sums = np.concatenate([[0.0], np.cumsum(power)])
    for a, b in silences:
        if b - a + 1 >= WINDOW:
            means = (sums[a + WINDOW : b + 2] - sums[a : b + 2 - WINDOW]) / WINDOW
            loudest = max(loudest, float(means.max()))
    return 10 * math.log10(loudest / word_power) if loudest > 0 else float("-inf")


ALIGNED_LIMIT = -0.06
"""A transcript is doubtful (``DOUBTFUL``), not a command, when its words alone, forced over the utterance
(``Decoders.align``: silence allowed between them, no noise words), score this much under the free phone loop per
100 frames. The grammar search can
explain talk around a command's words as noise, and its score carries the grammar's own costs; the alignment has
neither. Chosen on the training split's commands and the false-accept dev hours: at most about 1% of the right
commands lost (docs/benchmarks/changes.md, "The words alone, forced over the utterance")."""

DOUBTFUL = 0.4
"""The confidence of a transcript that fails ``ALIGNED_LIMIT`` (``Transcript.doubtful``): not chatter, but not a
command. The listener takes it only where an answer is expected (a read-back's "yes", from
``loop.ANSWER_CONFIDENCE``, 0.3), and neither says "sorry" for it (``loop.UNSURE``, 0.45) nor takes it as words said
over the moderator (0.45): in babble a "yes" alone is aligned over the noise around it as poorly as talk around a
"repeat"."""


QUIET_TAIL_DB = 20.0
"""A cut path's last words said over silence: this many dB or more under its other words (``quiet_tail``). In a quiet
room the lattice can end "resume" with a "the" laid over the silence after it (a -70 dBFS floor: 0.2 dB over the
room, the words 50 dB over it); in babble the words stand far less over what follows them. Set between the two
from the dev split's commands over microphone floors (docs/benchmarks/changes.md, "A last word laid over silence")."""


def _frame_power(pcm: bytes) -> np.ndarray:
    """The mean power of each 10 ms frame (+1, so that digital silence has a logarithm)."""
    return frame_powers(np.frombuffer(pcm, "<i2"), FRAME) + 1.0


def quiet_tail(pcm: bytes, segments: Sequence[tuple[str, int, int]]) -> bool:
    """Whether the path's last words lie over silence: ``QUIET_TAIL_DB`` or more under the words before them.

    A path cut short of a sentence ("resume the") is then a whole command with silence after it that the lattice
    took for the start of a longer one ("resume the game")."""
    power = _frame_power(pcm)
    spans = [(a, min(b, len(power) - 1)) for w, a, b in segments
             if not FILLER.fullmatch(w.split("(")[0]) and a < len(power)]
    for cut in range(len(spans) - 1, 0, -1):
        said = float(np.mean(np.concatenate([power[a : b + 1] for a, b in spans[:cut]])))
        tail = float(np.mean(np.concatenate([power[a : b + 1] for a, b in spans[cut:]])))
        if 10 * math.log10(said / tail) >= QUIET_TAIL_DB:
            return True
    return False


def _to_pcm16(samples: np.ndarray, rate: int) -> bytes:
    from moderator.audio.clip import Clip
    from moderator.audio.pcm import to_pcm16

    return to_pcm16(Clip(np.asarray(samples, dtype=np.float32).reshape(-1), rate).resample(RATE).samples)


class PocketsphinxRecognizer:
    """The ``Recognizer`` port on pocketsphinx 5 with a JSGF grammar search.

    Each ``recognize`` decodes twice: with the grammar, and with a free phone loop,
    whose score difference gives the confidence (see ``confidence_from_llr``). Its midpoint and slope are the
    model's own when ``en-us/calibration.json`` is there (``read_calibration``), else ``LLR_MIDPOINT`` and
    ``LLR_SLOPE``: they are this recognizer's ``llr_midpoint`` and ``llr_slope``. When the grammar search's lattice
    path stops short of a whole sentence after naming a player, the search's own path is decoded too
    (``moderator.adapters.sphinx.VITERBI``).

    Args:
        model_dir: a directory holding the acoustic model ``en-us/`` and ``cmudict-en-us.dict``
            (the layout of ``<wheel>/model/en-us``); default: the model shipped in the
            pocketsphinx wheel.
        reject_below: transcripts with a lower confidence come back with empty text.
        worker: decode in a child process (``moderator.adapters.sphinx.DecoderProcess``), so that the game's
            thread, and the sound card's callbacks, run meanwhile: for live audio. The results are the same.
    """

    name = "pocketsphinx"

    def __init__(self, model_dir: Path | str | None = None, *, reject_below: float = REJECT_BELOW,
                 worker: bool = False) -> None:
        try:
            import pocketsphinx  # noqa: F401
        except ImportError as exc:
            raise RecognitionError("pocketsphinx is not installed (pip install pocketsphinx)") from exc
        root = Path(model_dir) if model_dir is not None else _default_model()
        self.reject_below = reject_below
        self.derived: dict[str, Derived] = {}
        """Pronunciations made up for words the dictionary lacked, by word."""
        self.last: Scores | None = None
        """The scores behind the last ``recognize``."""
        self._searches: dict[tuple[Any, ...], str] = {}
        self._active: str | None = None
        self._root = root
        self._worker = worker
        self.llr_midpoint, self.llr_slope = read_calibration(root / "en-us")
        files = (str(root / "en-us"), str(root / "cmudict-en-us.dict"))
        self._sphinx: Decoders | DecoderProcess = DecoderProcess(*files) if worker else Decoders(*files)
        self._stream = False
        self._phones: tuple[bytes, float] | None = None  # the last utterance and its phone loop's score
        self._names: frozenset[str] = frozenset()  # the words of the expected roster's names
        self._phone_counts: dict[str, int] = {}  # the phones of each word of the search's paths, as looked up

    # -- dictionary ---------------------------------------------------------------

    def missing_words(self, candidates: Iterable[str]) -> list[str]:
        """The words (lowercase) the pronunciation dictionary lacks, sorted."""
        return sorted(self._sphinx.missing(sorted({w.lower() for w in candidates})))

    def add_word(self, word: str, phones: str) -> None:
        """Add a pronunciation (space-separated ArpaBet phones) for ``word``."""
        self._sphinx.add_word(word.lower(), phones)
        self._phone_counts.clear()

    def derive(self, word: str) -> Derived:
        """Make up a pronunciation: espeak-ng's, else two dictionary words, else the spelling.

        espeak-ng comes first because splitting a name at any point finds odd parts
        ("xio" + "mara"); the split is kept for when espeak-ng is not installed.
        """
        word = word.lower()
        ipa = espeak_ipa(word)
        if ipa and (phones := ipa_to_arpabet(ipa)):
            return Derived(word, phones, "espeak-ng")
        for cut in range(3, len(word) - 2):  # both parts at least 3 letters: "ann" + "marie"
            head, tail = (self._sphinx.lookup(part) for part in (word[:cut], word[cut:]))
            if head and tail:
                return Derived(word, f"{head} {tail}", "dictionary parts")
        return Derived(word, letters_to_arpabet(word) or "AH", "letters")

    def ensure_words(self, needed: Iterable[str]) -> list[Derived]:
        """Derive and add a pronunciation for each needed word the dictionary lacks."""
        made = []
        for word in self.missing_words(needed):
            derived = self.derive(word)
            self.add_word(word, derived.phones)
            self.derived[word] = derived
            made.append(derived)
        return made

    # -- the port ------------------------------------------------------------------

    def expect(self, grammar: Grammar, roster: Sequence[str], intents: Sequence[str] | None = None) -> None:
        """Compile (once per grammar, roster and intents) and switch to the JSGF search."""
        # The grammar itself is the key (not its id): the cache keeps it alive, so no new one gets its id.
        key = (grammar, tuple(roster), None if intents is None else tuple(intents))
        if key not in self._searches:
            self.ensure_words(words(grammar, roster, intents))
            name = f"jsgf{len(self._searches)}"
            self._sphinx.add_jsgf(name, to_jsgf(grammar, roster, intents))
            self._searches[key] = name
        self._active = self._searches[key]
        self._names = frozenset(w.lower() for name in roster for w in normalize(name))

    def recognize(self, samples: np.ndarray, rate: int, *, going_on_from: str | None = None) -> Transcript:
        """Decode one utterance with the expected grammar; low-confidence results come back empty. ``going_on_from``:
        only a sentence whose words begin with these and go on past them is judged (``goes_on_from``); any other
        comes back empty without its confidence measured, which spares the phone loop (``ByNoiseLevel``)."""
        if self._active is None:
            raise RecognitionError("call expect() before recognize(): no grammar is loaded")
        pcm = _to_pcm16(samples, rate)
        if len(pcm) < 2 * RATE // 100:  # under 10 ms: not even one frame
            self.last = Scores("", 0, float("-inf"), 0.0, float("-inf"), False, 0.0)
            return Transcript("", 0.0)
        heard = self._sphinx.decode(self._active, pcm)
        transcript, self.last = self._judge(heard, pcm, going_on_from)
        if not heard.complete and (self._names & set(heard.text.split()) or quiet_tail(pcm, heard.segments)):
            # The lattice's path stopped short of a command naming someone, or went on over the silence after the
            # words: the search's own path may be whole. It counts only when it is taken; otherwise the cut path
            # stands (the listener decodes a path with a name again with every name of the game, and the search's
            # own path would score lower than that decode needs).
            viterbi = self._sphinx.decode(self._active + VITERBI, pcm)
            if viterbi.complete and (judged := self._judge(viterbi, pcm, going_on_from))[0].text:
                transcript, self.last = judged
        return transcript

    def _judge(self, heard: Decoded, pcm: bytes, going_on_from: str | None = None) -> tuple[Transcript, Scores]:
        """The transcript of one search's result over ``pcm``, and its scores: the confidence against the phone loop,
        and the checks (a whole sentence, no speech swallowed as silence). With ``going_on_from``, a result whose
        words do not go on from those comes back empty, unjudged."""
        text, grammar_score, frames = heard.text, heard.score, heard.frames
        if not text:
            return Transcript("", 0.0), Scores("", frames, grammar_score, 0.0, float("-inf"), False, 0.0)
        if going_on_from is not None and not goes_on_from(text, going_on_from):
            return Transcript("", 0.0), Scores(text, frames, grammar_score, 0.0, float("-inf"), heard.complete, 0.0)
        phone_score = self._phone_score(pcm)
        absorbed = absorbed_speech(pcm, heard.segments, self._phone_count)  # the grammar search's alignment
        llr = 100 * (grammar_score - phone_score) / max(frames, 1)
        complete = heard.complete
        fits = complete and absorbed < ABSORBED_LIMIT
        confidence = confidence_from_llr(llr, self.llr_midpoint, self.llr_slope) if fits else 0.0
        aligned, doubtful = float("nan"), False
        if confidence >= self.reject_below:  # only what would be taken: an alignment is one more decode
            aligned = 100 * (self._sphinx.align(text, pcm) - phone_score) / max(frames, 1)
            if doubtful := aligned < ALIGNED_LIMIT:
                confidence = min(confidence, DOUBTFUL)
        scores = Scores(text, frames, grammar_score, phone_score, llr, complete, confidence, absorbed, aligned)
        if confidence >= self.reject_below:
            return Transcript(text, confidence), scores
        return Transcript("", confidence, guess=text if complete else "", partial="" if complete else text,
                          doubtful=doubtful), scores

    def _phone_count(self, word: str) -> int:
        """The number of phones of ``word`` as the search's path names it ("that(2)": that pronunciation)."""
        if word not in self._phone_counts:
            found = self._sphinx.lookup(word) or self._sphinx.lookup(word.split("(")[0])
            self._phone_counts[word] = len(found.split()) if found else 0
        return self._phone_counts[word]

    def _phone_score(self, pcm: bytes) -> float:
        """The free phone loop's score of ``pcm``, decoded once for the last utterance: the listener may decode one
        utterance again with another grammar (every name of the game, or only the answers), and the loop does not
        depend on the grammar. It is most of a decode's time."""
        if self._phones is None or self._phones[0] != pcm:
            self._phones = (pcm, self._sphinx.decode(PHONES, pcm).score)
        return self._phones[1]

    def close(self) -> None:
        """Stop the decoding process, if any (it starts again if the recognizer is used after)."""
        self._sphinx.close()

    # -- streaming: decode while the player speaks ------------------------------------

    def fork(self) -> PocketsphinxRecognizer:
        """Another recognizer on the same model, with the pronunciations made up so far, and decoders of
        its own: one per microphone, so that two rooms can be decoded while both speak."""
        other = PocketsphinxRecognizer(self._root, reject_below=self.reject_below, worker=self._worker)
        for derived in self.derived.values():
            other.add_word(derived.word, derived.phones)
        other.derived = dict(self.derived)
        other._sphinx.open_stream()  # now, not at the first word: it takes 0.1-0.2 s
        return other

    def begin(self) -> None:
        """Start an utterance: audio given to ``accept`` is decoded as it arrives, for partial results."""
        if self._active is None:
            raise RecognitionError("call expect() before begin(): no grammar is loaded")
        self._sphinx.begin(self._active)  # an utterance left open (its listener went away) is ended first
        self._stream = True

    def accept(self, samples: np.ndarray, rate: int) -> str:
        """Decode more of the utterance; returns the words heard so far (the best partial path)."""
        if not self._stream:
            raise RecognitionError("call begin() before accept()")
        return self._sphinx.accept(_to_pcm16(samples, rate))

    def finish(self) -> None:
        """End the utterance begun with ``begin``. Its result is ``recognize``'s on the whole utterance:
        the partial results only tell when the player has finished, since a stream's running cepstral
        mean scored short answers lower ("yes" 0.48 against 0.72 for flite's rms) and lost whole commands
        in scripted games."""
        if not self._stream:
            return
        self._stream = False
        self._sphinx.finish()
