"""Speech recognition with vosk: a phrase list compiled from the grammar, one utterance at a time.

What vosk does, as tried here with vosk 0.3.45:

- ``KaldiRecognizer(model, rate, phrases_json)`` turns the phrase list into a small language model;
  a word the model's lexicon lacks is dropped with a WARNING on stderr (``[unk]`` too, in models
  without it). So words are checked first with ``Model.vosk_model_find_word`` (-1: unknown) and
  only known words are passed: the terminal stays clean and unknown names are reported by us.
- ``SetLogLevel(-1)`` hides vosk's INFO chatter; warnings would still print.
- ``AcceptWaveform`` may end an utterance early at a pause and return True; that part's text is in
  ``Result()``, the rest in ``FinalResult()``, which also resets the recognizer.

A phrase list is only a bigram model, so the text returned is parsed again against the grammar.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from moderator.audio.clip import Clip
from moderator.audio.pcm import to_pcm16
from moderator.models import ModelError, is_model_dir, search_dirs
from moderator.ports import Transcript
from moderator.speech.grammar import Grammar
from moderator.speech.grammar_data import ALL_INTENT_SLOTS, ROSTER_TYPES
from moderator.speech.template import normalize

__all__ = ["ModelError", "VoskRecognizer", "transcript_from_results"]

RATE = 16000
UNK = "[unk]"
SENTENCES_PER_TEMPLATE = 30
"""Sampled sentences per template in the phrase list: enough word pairs, a quick compile."""
NAME_SUGGESTION = "use a nickname the model knows, or 'player seven'"


def _missing_model_message(path: Path, detail: str = "") -> str:
    where = ", ".join(str(d) for d in search_dirs())
    return (
        f"no usable vosk model at {path}{detail}. Models are looked for in: {where}. "
        "Install one with 'moderator models download', or pass --vosk-model PATH"
    )


class VoskRecognizer:
    """The ``Recognizer`` port on vosk; listens only for the phrases of the last ``expect``."""

    def __init__(self, model_path: Path) -> None:
        """Load the model at ``model_path``.

        Raises:
            ModelError: the path is not a vosk model, or vosk cannot load it.
        """
        import vosk  # the engine loads only when a recognizer is made

        self._vosk = vosk
        path = Path(model_path)
        if not is_model_dir(path):
            raise ModelError(_missing_model_message(path, " (it needs am/final.mdl and conf/)"))
        vosk.SetLogLevel(-1)
        try:
            self._model = vosk.Model(str(path))
        except Exception as exc:  # vosk raises a bare Exception("Failed to create a model")
            raise ModelError(_missing_model_message(path, f" ({exc})")) from exc
        self.path = path
        self.name = f"vosk:{path.name}"
        self.phrases: list[str] = []
        """The phrase list of the last ``expect``, as passed to vosk."""
        self._recognizer: Any = None
        self._recognizers: dict[tuple[object, ...], tuple[list[str], Any]] = {}

    # -- vocabulary -----------------------------------------------------------------

    def knows(self, word: str) -> bool:
        """True if the model's lexicon has ``word`` (lowercase)."""
        return bool(self._model.vosk_model_find_word(word) >= 0)

    def check_vocabulary(self, words: Iterable[str]) -> list[str]:
        """The words (lowercased, in order, once each) that the model does not know."""
        return [w for w in dict.fromkeys(word.lower() for word in words) if not self.knows(w)]

    def unknown_names(self, roster: Sequence[str]) -> dict[str, str]:
        """Each roster name with a word the model cannot hear, and what to do about it."""
        problems = {}
        for name in roster:
            if missing := self.check_vocabulary(normalize(name)):
                quoted = ", ".join(f"'{w}'" for w in missing)
                problems[name] = f"the speech model does not know {quoted}: {NAME_SUGGESTION}"
        return problems

    # -- the port ---------------------------------------------------------------------

    def expect(self, grammar: Grammar, roster: Sequence[str], intents: Sequence[str] | None = None) -> None:
        """Build the phrase list for these intents and roster, and a recognizer for it (once for each:
        the listening loop switches back and forth between rooms and phases)."""
        # The grammar itself is the key (not its id): the cache keeps it alive, so no new one gets its id.
        key = (grammar, tuple(roster), None if intents is None else tuple(intents))
        if key not in self._recognizers:
            phrases = phrase_list(grammar, roster, intents, self.knows)
            if not phrases:  # vosk crashes (segfault) on an empty phrase list
                raise ModelError(f"the vosk model {self.path.name} knows none of the words of the commands: "
                                 "is it an English model? (moderator models download)")
            if self.knows(UNK):
                phrases.append(UNK)
            recognizer = self._vosk.KaldiRecognizer(self._model, RATE, json.dumps(phrases, ensure_ascii=False))
            recognizer.SetWords(True)
            self._recognizers[key] = (phrases, recognizer)
        self.phrases, self._recognizer = self._recognizers[key]

    def recognize(self, samples: np.ndarray, rate: int) -> Transcript:
        """Recognize one utterance of mono float32 samples at ``rate`` Hz."""
        if self._recognizer is None:
            raise RuntimeError("VoskRecognizer.recognize called before expect()")
        clip = Clip(np.asarray(samples, dtype=np.float32), rate).resample(RATE)
        pcm = to_pcm16(clip.samples)
        results = []
        step = RATE  # bytes: half a second of 16-bit samples
        for start in range(0, len(pcm), step):
            if self._recognizer.AcceptWaveform(pcm[start : start + step]):
                results.append(self._recognizer.Result())
        results.append(self._recognizer.FinalResult())
        return transcript_from_results(results)


def phrase_list(
    grammar: Grammar,
    roster: Sequence[str],
    intents: Sequence[str] | None,
    knows: Any = None,
    per_template: int = SENTENCES_PER_TEMPLATE,
) -> list[str]:
    """Sampled sentences of ``intents`` plus every name and list phrase their slots take.

    Sentences give vosk word pairs; the names and list phrases make sure every word that can be
    said is in the list even when sampling missed it. Digits are left out (their spoken words are
    in). With ``knows``, words it rejects are dropped, so vosk never warns about them.
    """
    wanted = list(grammar.intents if intents is None else intents)
    phrases = [text for text, _ in grammar.expand(roster, wanted, limit_per_template=per_template)]
    types = {slot_type for intent in wanted for slot_type, _ in ALL_INTENT_SLOTS[intent].values()}
    if types & ROSTER_TYPES:
        phrases += list(roster)
    for slot_type in sorted(types - ROSTER_TYPES):
        phrases += [p for values in grammar.lists.get(slot_type, {}).values() for p in values]
    out: dict[str, None] = {}
    for phrase in phrases:
        words = [w.lower() for w in normalize(phrase) if not any(c.isdigit() for c in w)]
        if knows is not None:
            words = [w for w in words if knows(w)]
        if words:
            out[" ".join(words)] = None
    return list(out)


def transcript_from_results(results: Iterable[str]) -> Transcript:
    """Join vosk's JSON results into one Transcript: lowercase words, ``[unk]`` dropped.

    Confidence is the mean of the per-word ``conf`` (needs ``SetWords(True)``); 0 with no words.
    Results without a word list count as fully confident for their text.
    """
    words: list[str] = []
    confs: list[float] = []
    for raw in results:
        data = json.loads(raw) if raw else {}
        if "result" in data:
            for item in data["result"]:
                word = str(item.get("word", "")).lower()
                if word and word != UNK:
                    words.append(word)
                    confs.append(float(item.get("conf", 1.0)))
        else:
            for word in str(data.get("text", "")).lower().split():
                if word != UNK:
                    words.append(word)
                    confs.append(1.0)
    if not words:
        return Transcript("", 0.0)
    return Transcript(" ".join(words), min(1.0, max(0.0, sum(confs) / len(confs))))
