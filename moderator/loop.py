"""The listening loop: audio chunk -> endpointer -> recognizer -> re-parse -> engine (-> announcements)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from moderator.audio.clip import Clip
from moderator.audio.endpoint import RATE, Endpointer, Utterance
from moderator.game.engine import Engine
from moderator.game.state import ROOMS
from moderator.ports import Recognizer

#: After the moderator stops speaking, its own voice may still echo in the room this long.
ECHO_TAIL = 0.3


class Listener:
    """Feeds each microphone's audio to the game.

    ``mics`` are the rooms with a microphone, or ``(None,)`` for one shared microphone (the room then
    follows from the names said). Half-duplex: while the moderator speaks in a room (``speaking_until``),
    that room's microphone is ignored, so it never hears itself. The recognizer is told to expect only
    the commands that fit the current phase; what it returns is parsed again by the engine's grammar.
    """

    def __init__(
        self,
        engine: Engine,
        recognizer: Recognizer,
        *,
        mics: tuple[str | None, ...] = ROOMS,
        new_endpointer: Callable[[], Endpointer],
        speaking_until: Callable[[str], float] | None = None,
    ) -> None:
        self.engine = engine
        self.recognizer = recognizer
        self.endpointers = {mic: new_endpointer() for mic in mics}
        self.speaking_until = speaking_until
        self._expecting: tuple[tuple[str, ...], tuple[str, ...]] | None = None

    def feed(self, mic: str | None, samples: np.ndarray, rate: int, t: float) -> list[Utterance]:
        """Audio from ``mic`` whose first sample is at audio time ``t``; returns the utterances handled."""
        endpointer = self.endpointers[mic]
        if self._moderator_speaking(mic, t):
            endpointer.reset()
            return []
        audio = Clip(samples.astype(np.float32), rate).resample(RATE).samples
        utterances = endpointer.feed(audio, t)
        for utterance in utterances:
            self.hear(mic, utterance)
        return utterances

    def hear(self, mic: str | None, utterance: Utterance) -> bool:
        """Recognize one utterance and hand it to the game; True when a command was accepted."""
        self._expect_current_phase()
        heard = self.recognizer.recognize(utterance.samples, RATE)
        self.engine.emit("heard", room=mic or "both", text=heard.text, confidence=round(heard.confidence, 3))
        if not heard.text:
            return False
        return self.engine.handle_text(heard.text, mic)

    def _expect_current_phase(self) -> None:
        wanted = (tuple(self.engine.state.players), tuple(self.engine.allowed_intents()))
        if wanted != self._expecting:
            self.recognizer.expect(self.engine.grammar, list(wanted[0]), list(wanted[1]))
            self._expecting = wanted

    def _moderator_speaking(self, mic: str | None, t: float) -> bool:
        if self.speaking_until is None:
            return False
        rooms = ROOMS if mic is None else (mic,)
        return any(self.speaking_until(room) + ECHO_TAIL > t for room in rooms)
