"""A fake of the ``Recognizer`` port: it "hears" the transcripts it was given, in order."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from moderator.ports import Transcript


class ScriptedRecognizer:
    """Returns the given transcripts in order, and records the intents it was told to expect (None: all)."""

    name = "scripted"

    def __init__(self, texts: list[str]) -> None:
        self.texts = list(texts)
        self.expected: list[list[str] | None] = []

    def expect(self, grammar: object, roster: object, intents: Iterable[str] | None = None) -> None:
        self.expected.append(None if intents is None else list(intents))

    def recognize(self, samples: np.ndarray, rate: int) -> Transcript:
        assert rate == 16000 and len(samples) > 16000 // 4  # a whole utterance, at the endpointer's rate
        return Transcript(self.texts.pop(0), 0.9)


class QueuedRecognizer:
    """Gives the transcripts given, whole, in turn, one per decode, and keeps the intents each decode listened for
    (questions, guesses and doubts included, which ``ScriptedRecognizer``'s texts cannot carry)."""

    name = "queued"

    def __init__(self, *heard: Transcript) -> None:
        self.heard, self.intents = list(heard), None
        self.decodes: list[list[str] | None] = []

    def expect(self, grammar: object, roster: object, intents: Iterable[str] | None = None) -> None:
        self.intents = None if intents is None else list(intents)

    def recognize(self, samples: np.ndarray, rate: int) -> Transcript:
        self.decodes.append(self.intents)
        return self.heard.pop(0)
