"""The listening loop: audio chunk -> endpointer -> recognizer -> re-parse -> engine (-> announcements)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from moderator.audio.clip import Clip
from moderator.audio.endpoint import RATE, Endpointer, Utterance
from moderator.game.engine import Engine
from moderator.game.state import ROOMS
from moderator.ports import Recognizer, Transcript
from moderator.speech.grammar import ANSWERS, Grammar, Parsed
from moderator.speech.template import normalize

#: After the moderator stops speaking, its own voice may still echo in the room this long.
ECHO_TAIL = 0.3

#: A transcript rejected for low confidence, but scoring at least this, was probably meant for the
#: moderator: it gets "sorry, say that again". Under it, it is taken for chatter and ignored. On
#: pocketsphinx's scale (0.5 is its own threshold), of 152 chatter lines said by 4 flite voices, the
#: few that were not rejected outright (most score 0) scored at most 0.44; right commands that
#: missed the threshold scored 0.35 to 0.49 (see docs/benchmarks for the full distribution).
UNSURE = 0.45

#: An answer to the moderator's question ("yes", "no", a name, a room) is taken down to this confidence,
#: under the engine's threshold: it is expected, and a short word scores lower than a sentence (flite's
#: awb and kal voices said "yes" at 0.35 to 0.46). Chatter swallowed as silence scores 0 and is still out.
ANSWER_CONFIDENCE = 0.3

#: "Sorry, say that again" is said at most once in a row per microphone; after this long without a
#: command it may be said again.
PARDON_AGAIN_AFTER = 20.0

#: Phases in which every name may be said in either room (the reveal, after the last exchange).
_ANY_ROOM = ("game_over", "prediction", "reveal", "result")


class Listener:
    """Feeds each microphone's audio to the game.

    ``mics`` are the rooms with a microphone, or ``(None,)`` for one shared microphone (the room then
    follows from the names said). Half-duplex: while the moderator speaks in a room (``speaking_until``),
    that room's microphone is ignored, so it never hears itself. The recognizer is told to expect only
    the commands that fit the current phase, with the names of that room's players; what it returns is
    parsed again against the grammar. With a ``wake_word``, a command counts only when it starts with
    it (answers to a question, such as "yes", do not need it).
    """

    def __init__(
        self,
        engine: Engine,
        recognizer: Recognizer,
        *,
        mics: tuple[str | None, ...] = ROOMS,
        new_endpointer: Callable[[], Endpointer],
        speaking_until: Callable[[str], float] | None = None,
        wake_word: str | None = None,
    ) -> None:
        self.engine = engine
        self.recognizer = recognizer
        self.endpointers = {mic: new_endpointer() for mic in mics}
        self.speaking_until = speaking_until
        self.wake_word = normalize(wake_word.lower()) if wake_word else []
        self.grammar = engine.grammar.addressed(wake_word) if wake_word else engine.grammar
        self._expecting: tuple[object, ...] | None = None
        self._narrowed: dict[tuple[int, int | None], Grammar] = {}
        self._pardoned: dict[str | None, float] = {}
        #: Called just before an utterance is recognized, which holds the thread for a while (the live
        #: game handles the timers due meanwhile first, so that their audio is scheduled on time).
        self.before_recognizing: Callable[[], None] | None = None

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
        if self.before_recognizing is not None:
            self.before_recognizing()
        self._expect_current_phase(mic)
        heard = self.recognizer.recognize(utterance.samples, RATE)
        guess = {"guess": heard.guess} if heard.guess and not heard.text else {}
        self.engine.emit("heard", room=mic or "both", text=heard.text, confidence=round(heard.confidence, 3), **guess)
        return self.understood(mic, heard, utterance.end)

    def understood(self, mic: str | None, heard: Transcript, t: float) -> bool:
        """Act on a transcript: a command goes to the engine; a doubtful one gets "sorry" at most once."""
        players = self.engine.state.players
        if not heard.text and heard.guess and heard.confidence >= ANSWER_CONFIDENCE:
            answer = self.grammar.parse(heard.guess, players)
            if isinstance(answer, Parsed) and answer.intent in ANSWERS:
                return self._act(mic, answer)
        if not heard.text:
            if heard.confidence >= UNSURE:
                self._pardon(mic, t)
            return False
        parsed = self.grammar.parse(heard.text, players)
        if isinstance(parsed, Parsed):
            return self._act(mic, parsed)
        addressed, _ = self._addressed(heard.text)
        reason = parsed.reason if addressed else "it did not start with the wake word"
        self.engine.emit("rejected", room=mic or "both", text=heard.text, reason=reason, key="refuse.parse",
                         intent=None)
        if addressed:
            self._pardon(mic, t)
        return False

    def _act(self, mic: str | None, parsed: Parsed) -> bool:
        """Hand a parsed command to the engine, as said after the wake word."""
        _, command = self._addressed(parsed.text)
        accepted = self.engine.handle(Parsed(parsed.intent, parsed.slots, command), mic, spoken=True)
        self._pardoned.pop(mic, None)
        return accepted

    def _addressed(self, text: str) -> tuple[bool, str]:
        """Whether ``text`` starts with the wake word (always true without one), and the words after it."""
        words = normalize(text)
        if [w.lower() for w in words[: len(self.wake_word)]] == self.wake_word:
            return True, " ".join(words[len(self.wake_word) :])
        return False, " ".join(words)

    def _pardon(self, mic: str | None, t: float) -> None:
        last = self._pardoned.get(mic)
        if last is not None and t - last < PARDON_AGAIN_AFTER:
            return
        self._pardoned[mic] = t
        self.engine.say(mic or "both", "pardon")

    def _expect_current_phase(self, mic: str | None) -> None:
        """Listen for what can be said now: the phase's commands, the room's names, and no more votes
        or hostages than there can be."""
        engine, state = self.engine, self.engine.state
        if mic is None or any(engine.in_state(phase) for phase in _ANY_ROOM):
            roster: Sequence[str] = state.players
        else:
            roster = state.rooms[mic].members
        numbers = max(len(room.members) for room in state.rooms.values()) if mic is None else len(roster)
        listed = engine.hostages_due() if engine.in_state("hostages") else None
        if (numbers, listed) not in self._narrowed:
            self._narrowed[numbers, listed] = self.grammar.narrowed(numbers=numbers, max_listed=listed)
        grammar = self._narrowed[numbers, listed]
        wanted = (grammar, tuple(roster), tuple(engine.allowed_intents()))
        if wanted != self._expecting:
            self.recognizer.expect(grammar, list(roster), list(wanted[2]))
            self._expecting = wanted

    def _moderator_speaking(self, mic: str | None, t: float) -> bool:
        if self.speaking_until is None:
            return False
        rooms = ROOMS if mic is None else (mic,)
        return any(self.speaking_until(room) + ECHO_TAIL > t for room in rooms)
