"""The listening loop: audio chunk -> endpointer -> recognizer -> re-parse -> engine (-> announcements)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from moderator.audio.echo import RESIDUAL_MARGIN, SPAN_AFTER, EchoPath, rooms_heard
from moderator.audio.endpoint import RATE, Endpointer, Utterance
from moderator.audio.resample import StreamResampler
from moderator.game.actions import names_said as actions_names
from moderator.game.engine import Engine
from moderator.game.events import OMITTED, Heard, Rejected
from moderator.game.state import ROOMS
from moderator.ports import HearsOverTheModerator, HearsTheRoom, LooksTwice, Recognizer, Transcript
from moderator.speech.grammar import ANSWERS, Grammar, Parsed
from moderator.speech.template import normalize

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

#: A command said over the moderator is taken down to this confidence. What the canceller leaves of the
#: moderator's voice (20 dB and more under it) is speech the grammar cannot explain and the free phone loop
#: can, so it lowers the confidence of the player's words under it: at -6 dB signal-to-echo, 7 of the 29 right
#: commands that were not taken had their very words at 0.42-0.49. Chosen on benchmarks.barge_in's commands
#: and chatter of seed 1 (the suite reports seed 0): at 0.45, 43 instead of 41 of 70 commands at -6 dB and 48
#: instead of 44 at 0 dB, no more wrong commands, and none of 280 chatter lines said over the moderator taken;
#: at 0.40 one chatter line was taken, and a wrong command more. In silence the bar stays the engine's.
TALKED_OVER_CONFIDENCE = 0.45

#: "Sorry, say that again" is said at most once in a row per microphone; after this long without a
#: command it may be said again.
PARDON_AGAIN_AFTER = 20.0
#: An utterance that stands less than this many dB above the room before it (``Utterance.rise``) was said in a
#: room too loud to hear it well: its "sorry, say that again" asks the player to come closer to the microphone
#: (``pardon.loud``; each halving of the distance gains about 6 dB). On the dev split's commands (2026-11-28,
#: ``python -m benchmarks.room_rise``), each utterance's rise, 5th to 95th percentile: clean over hiss 38.5-46.2 dB,
#: babble at 18 dB peak-frame SNR 19.3-23.5, at 12 dB 14.0-18.6, at 6 dB 8.8-12.9, music at 12 dB 11.1-20.6. With
#: Whisper's second opinion the test split's commands are heard 80% of the time at 12 dB and 35% at 6 dB.
LOUD_RISE = 14.0
#: With a slow second opinion (``LooksTwice``: Whisper), an utterance closed early (``Endpointer.short_hangover``)
#: stays provisional for this long (``Endpointer.provisional``): a talker who goes on as loud by then continues it
#: ("Grace, ... Frank and Dave are plotting" is not a "repeat"). The decode runs meanwhile, so only the part of the
#: hold longer than the decode delays the reply. It was the long hangover's remainder (0.35 s) while Whisper's
#: encoder heard 30 s and took longer than that; over 15 s, Whisper takes about 0.25 s on two x86 cores (237 / 288
#: ms p50 / p95 over a 13-player game's utterances; pocketsphinx mostly decodes ahead), and the hold of
#: 0.35 s was most of every reply (``python -m benchmarks.latency --second-opinion whisper``: 695 / 757 ms p50 /
#: p95, against 609 / 661 at 0.25 and 586 / 636 at 0.15). 0.25 keeps a pause of up to 0.5 s inside a sentence
#: from splitting it (the false-accept hours' talk pauses 0.2-1.8 s between lines): whole games 16 of 20 as at 0.35,
#: and 6.5 hours unheard (``--split fresh25``) gave no false accept (docs/benchmarks/changes.md, 2026-11-29, night).
SECOND_OPINION_HOLD = 0.25
#: A command naming someone and heard with less confidence than this is decoded again with every name of the
#: game, to hear a name of the other room as said (``Loop._other_room``).
WIDER_BELOW = 0.9
#: ... from this confidence up (below it, a decode of party noise that happened to fit a command) ...
WIDER_ABOVE = 0.3
#: ... and when it is no longer than a command with names (a long stretch of party talk is not decoded twice).
WIDER_MAX_SECONDS = 3.5

#: Commands that a "yes" or "no" said in party noise is heard as, by the whole phase's grammar, while a read-back
#: waits (``Loop._answer``): short, with no name, so the noise around the answer fills the rest ("undo that" for
#: "yes"). Such a command, heard while a read-back waits, is decoded again with "yes" and "no" alone, and an answer
#: heard then is taken instead. Chosen on the dev split of ``python -m benchmarks.answers``
#: (docs/benchmarks/changes.md, "A read-back's answer heard as undo").
MISHEARD_ANSWERS = frozenset({"undo", "repeat"})

#: How long a "did you say ...?" question (``Listener._ask``) waits for its "yes" or "no", from the end of the
#: utterance it asks about: the question itself takes about 3 s to say, and a player answers at once or not at all.
ASK_WAITS = 12.0

#: Phases in which every name may be said in either room (the reveal, after the last exchange).
_ANY_ROOM = ("game_over", "prediction", "reveal", "result")
#: Phases in which no "did you say ...?" is asked (``Listener._ask``): the reveal's. There the gathered group's talk is
#: full of names, roles and "yes", and a reveal taken on a "yes" heard in that talk decides the game at once, with no
#: undo. Over the fresh29 hours (6.5 h of talk, music, babble and human readings, a sixth of it in each phase), 9 of
#: the 15 questions asked were reveals ("Bob is the bomber" in talk about the cards); none was answered "yes" there.
NOT_ASKED_IN = _ANY_ROOM


def _deck(state: Any) -> frozenset[str] | None:
    """The cards of the game's deck, for the recognizer to listen for (None: a game without cards, Room 25)."""
    deck = state.plan.get("deck")
    return None if deck is None else frozenset(deck)


def over_the_moderator(heard: Transcript) -> Transcript:
    """What ``heard`` counts as when it was said over the moderator: a whole sentence of the grammar rejected
    only for a confidence from ``TALKED_OVER_CONFIDENCE`` up is taken (see there)."""
    if not heard.text and heard.guess and heard.confidence >= TALKED_OVER_CONFIDENCE:
        return Transcript(heard.guess, heard.confidence)
    return heard


class Listener:
    """Feeds each microphone's audio to the game.

    ``mics`` are the rooms with a microphone, or ``(None,)`` for one shared microphone (the room then
    follows from the names said). The recognizer is told to expect only the commands that fit the
    current phase, with the names of that room's players; what it returns is parsed again against the
    grammar. With a ``wake_word``, a command counts only when it starts with it (answers to a question,
    such as "yes", do not need it).

    The moderator's own voice: with an ``echo`` path, each microphone's audio has what the moderator
    played cancelled out of it, so players can be heard while it talks (full duplex). Until a room's
    canceller has adapted (or without one), that microphone is ignored while the moderator speaks there
    (half-duplex), and a player heard over the
    moderator meanwhile is asked to say it again. A command heard while a long phrase plays cuts that
    phrase short (``barge_in(room)``) before it is acted on.

    A command the recognizer nearly took (``Transcript.question``) is asked about: "Did you say: ...?", and a
    "yes" acts on it (``ask``; ``_ask``).

    With a streaming recognizer (pocketsphinx), each utterance is decoded while it is spoken, one
    recognizer per microphone, and it ends after a short pause once what was said is a whole command.
    """

    def __init__(
        self,
        engine: Engine,
        recognizer: Recognizer,
        *,
        mics: tuple[str | None, ...] = ROOMS,
        new_endpointer: Callable[[], Endpointer],
        wake_word: str | None = None,
        echo: EchoPath | None = None,
        barge_in: Callable[[str], bool] | None = None,
        ask: bool = True,
    ) -> None:
        self.engine = engine
        self.recognizer = recognizer
        self.streaming = all(callable(getattr(recognizer, m, None)) for m in ("begin", "accept", "finish", "fork"))
        # A stream is one utterance at a time: each microphone decodes on a recognizer of its own.
        self.recognizers: dict[str | None, Any] = {
            mic: recognizer.fork() if self.streaming else recognizer  # type: ignore[attr-defined]
            for mic in mics}
        if self.streaming and callable(close := getattr(recognizer, "close", None)):
            close()  # the forks decode: a decoding process of the original would sit idle (it restarts if used)
        self.endpointers = {mic: new_endpointer() for mic in mics}
        self.resamplers = {mic: StreamResampler(RATE) for mic in mics}  # a device's rate, as one stream each
        if echo is not None:
            for mic, endpointer in self.endpointers.items():
                if endpointer is not None:
                    endpointer.echo_floor = partial(echo.residual_db, mic)
                    endpointer.echo_margin = RESIDUAL_MARGIN
        # With a slow second opinion, an early close is provisional while it decodes (``SECOND_OPINION_HOLD``).
        twice = isinstance(recognizer, LooksTwice)
        for mic, endpointer in self.endpointers.items():
            if twice and endpointer is not None:
                endpointer.provisional = SECOND_OPINION_HOLD
                endpointer.on_continue = partial(self._continued, mic)
                endpointer.may_continue = partial(self._not_the_moderator, mic)
        if self.streaming:
            for mic, endpointer in self.endpointers.items():
                if endpointer is not None:
                    endpointer.on_audio = partial(self._stream, mic)
                    endpointer.complete = partial(self._complete, mic)
                    endpointer.on_end = partial(self._abandon, mic)
                    endpointer.prepare = partial(self._prepare, mic)
        self.echo = echo
        self.barge_in = barge_in
        self.wake_word = normalize(wake_word.lower()) if wake_word else []
        self.grammar = engine.grammar.addressed(wake_word) if wake_word else engine.grammar
        self._expecting: dict[str | None, tuple[object, ...] | None] = dict.fromkeys(mics)
        self._partial: dict[str | None, str | None] = dict.fromkeys(mics)
        #: An utterance decoded ahead while the short hangover passes (see ``Endpointer.prepare``): the
        #: utterance, what the recognizer was expecting then, and the transcript.
        self._ahead: dict[str | None, tuple[Utterance, object, Transcript | None] | None] = dict.fromkeys(mics)
        self._pardoned: dict[str | None, float] = {}
        #: A command heard in an utterance closed early, held while the talker may still go on
        #: (``Endpointer.provisional``): the utterance and its transcript.
        self._held: dict[str | None, tuple[Utterance, Transcript] | None] = dict.fromkeys(mics)
        #: The start of the latest utterance that the talker went on from (``Endpointer.on_continue``), and how many
        #: times it was continued then: an utterance of that start continued fewer times is a part of the whole.
        self._continued_from: dict[str | None, tuple[float, int] | None] = dict.fromkeys(mics)
        #: The held commands dropped because their talker went on (what a benchmark reports as withdrawn).
        self.withdrawn: list[str] = []
        #: The latest held command dropped so, and its utterance: the whole it became may stand for it (``_restored``).
        self._dropped: dict[str | None, tuple[Utterance, Transcript] | None] = dict.fromkeys(mics)
        #: The dropped commands that the whole said again (``_restored``): a benchmark's count.
        self.restored: list[str] = []
        #: The command each microphone's room was asked about ("did you say ...?", ``_ask``), and when.
        self._asked: dict[str | None, tuple[Parsed, float]] = {}
        #: Whether a command the recognizer nearly took (``Transcript.question``) is asked about (``_ask``).
        self.ask = ask
        #: Called just before an utterance is recognized, which holds the thread for a while (the live
        #: game handles the timers due meanwhile first, so that their audio is scheduled on time).
        self.before_recognizing: Callable[[], None] | None = None

    def feed(self, mic: str | None, samples: np.ndarray, rate: int, t: float) -> list[Utterance]:
        """Audio from ``mic`` whose first sample is at audio time ``t``; returns the utterances handled."""
        endpointer = self.endpointers[mic]
        audio, t = self.resamplers[mic](samples, rate, t)
        if self.echo is not None:
            audio, t = self.echo.cancel(mic, audio, t)
        if self.echo is not None and self.echo.speaking(mic, t) and not self.echo.cancelling(mic):
            if endpointer.in_speech:
                self._abandon(mic)
            endpointer.reset()
            return []
        if self.echo is not None and self.echo.take_overheard(mic):
            self._pardon(mic, t)  # someone spoke while it could not listen: never drop that silently
        utterances = endpointer.feed(audio, t)
        for utterance in utterances:
            self._release(mic)
            self.hear(mic, utterance)
        self._release(mic)
        return utterances

    def flush(self) -> None:
        """Act now on the commands held while their talker might go on (the audio ends: nobody will)."""
        for mic in self._held:
            self._release(mic, at_once=True)

    def _release(self, mic: str | None, *, at_once: bool = False) -> None:
        """Act on ``mic``'s held command once its utterance is final (``Utterance.provisional_until`` has passed
        without the talker going on, or what began after it did not go on from it: ``Endpointer.may_go_on``)."""
        held = self._held[mic]
        if held is None:
            return
        if not at_once and self.endpointers[mic].may_go_on(held[0]):
            return
        self._held[mic] = None
        self.understood(mic, held[1], held[0].end, held[0].rise)

    def _continued(self, mic: str | None, start: float, times: int) -> None:
        """The talker went on after an utterance closed early: its held command, if any, was a pause in talk."""
        self._continued_from[mic] = (start, times)
        held = self._held[mic]
        if held is not None and held[0].start == start and held[0].continued < times:
            self._held[mic] = None
            if held[1].text:  # a question (``Transcript.question``) is only dropped: the whole decides
                self._withdraw(mic, *held)

    def _withdraw(self, mic: str | None, utterance: Utterance, heard: Transcript) -> None:
        """Drop a command heard in the first part of what the talker went on with; the whole may restore it."""
        self._dropped[mic] = (utterance, heard)
        self.withdrawn.append(heard.text)

    def _not_the_moderator(self, mic: str | None, t0: float, t1: float) -> bool:
        """Whether an onset between ``t0`` and ``t1`` may be the talker going on: not while the moderator was
        audible, whose own voice starting again would otherwise continue the player's command (``may_continue``)."""
        return self.echo is None or not self.echo.talked_over(mic, t0, t1)

    def hear(self, mic: str | None, utterance: Utterance) -> bool:
        """Recognize one utterance and hand it to the game; True when a command was accepted. An utterance that
        does not stand out from the room (``Utterance.stands_out``: the party's babble or music) is not decoded. A
        command in an utterance that is still provisional (closed early, with a slow second opinion) is held, not
        accepted yet: ``feed`` acts on it once the talker has not gone on (``_release``)."""
        ahead, self._ahead[mic] = self._ahead[mic], None
        if not utterance.stands_out:
            return False
        if self._asking(mic, utterance.start) is None:
            self._asked.pop(mic, None)  # a question no longer awaits its answer: "yes" and "no" are no commands now
        over = self._talked_over(mic, utterance)
        if ahead is not None and ahead[0] is utterance:
            self.listen_for_current_phase(mic)  # the phase may have changed since (time's up): then decode again
            again = ahead[1] != self._expecting[mic] or isinstance(self.recognizers[mic], LooksTwice)
            heard = self._transcribe(mic, utterance, over) if again else ahead[2]  # a second look: only it now
        else:
            heard = self._transcribe(mic, utterance, over)
        if heard is None:
            return False  # what the canceller left of the moderator's own voice: never a command
        if over:
            heard = over_the_moderator(heard)
        guess = heard.guess if heard.guess and not heard.text else OMITTED
        self.engine.emit(Heard(mic or "both", heard.text, round(heard.confidence, 3), guess))
        heard = self._restored(mic, utterance, heard)
        if utterance.provisional_until is not None and self._holds(heard):
            went_on = self._continued_from[mic]
            if went_on is not None and went_on[0] == utterance.start and utterance.continued < went_on[1]:
                if heard.text:  # the talker went on already (in the same chunk of audio)
                    self._withdraw(mic, utterance, heard)
            else:
                self._held[mic] = (utterance, heard)
            return False
        return self.understood(mic, heard, utterance.end, utterance.rise)

    def _restored(self, mic: str | None, utterance: Utterance, heard: Transcript) -> Transcript:
        """``heard``, or the command dropped when the talker went on after it, where the whole utterance is no
        command but its rejected guess is that very command: then what followed added no words of its own (a burst of
        the party's babble after "hostages Dave and Erin" continued it, and the whole, decoded, was only guessed)."""
        dropped = self._dropped[mic]
        if dropped is None or dropped[0].start != utterance.start or utterance.continued <= dropped[0].continued:
            return heard
        self._dropped[mic] = None
        players = self.engine.state.players
        whole = self.grammar.parse(heard.text, players) if heard.text else None
        if isinstance(whole, Parsed) or not heard.guess:
            return heard
        guessed, first = self.grammar.parse(heard.guess, players), self.grammar.parse(dropped[1].text, players)
        if not (isinstance(guessed, Parsed) and isinstance(first, Parsed)
                and (guessed.intent, guessed.slots) == (first.intent, first.slots)):
            return heard
        self.withdrawn.remove(dropped[1].text)
        self.restored.append(dropped[1].text)
        return dropped[1]

    def _holds(self, heard: Transcript) -> bool:
        """Whether ``heard`` is a command to hold while its talker may go on: any but an answer to the moderator's
        question, which is expected; or a command to ask about (``Transcript.question``), not asked while the talker
        may still be talking."""
        if self._guessed_answer(heard) is not None:
            return False
        if not heard.text:
            return bool(heard.question) and self.ask
        parsed = self.grammar.parse(heard.text, self.engine.state.players)
        return isinstance(parsed, Parsed) and parsed.intent not in ANSWERS

    def _talked_over(self, mic: str | None, utterance: Utterance) -> bool:
        """Whether the moderator was audible in ``mic`` while the utterance was said (``EchoPath.talked_over``)."""
        return self.echo is not None and self.echo.talked_over(mic, utterance.start, utterance.end)

    def _transcribe(self, mic: str | None, utterance: Utterance, over: bool) -> Transcript | None:
        """What the recognizer makes of an utterance, with the commands of the current phase; None when it is
        only what the canceller left of the moderator's own voice. ``over``: said over the moderator."""
        if self.before_recognizing is not None:
            self.before_recognizing()
        self.listen_for_current_phase(mic)  # the phase may have changed while the player spoke (time's up)
        samples = self._players_part(mic, utterance, over)
        if samples is None:
            return None
        recognizer = self.recognizers[mic]
        if isinstance(recognizer, HearsOverTheModerator):  # auto: what the canceller leaves is no party
            recognizer.over_the_moderator = over
        if isinstance(recognizer, HearsTheRoom):  # auto: the room before the words chooses the model
            recognizer.room_rise = utterance.rise
        # The partial results (if any) have done their work: the whole utterance decides.
        heard = recognizer.recognize(samples, RATE)
        return self._answer(mic, samples, self._other_room(mic, samples, heard), utterance.start)

    def _other_room(self, mic: str | None, samples: np.ndarray, heard: Transcript) -> Transcript:
        """A command that names someone, heard with only this room's names, is decoded again with every name of
        the game (and votes up to every player) when it is not sure. "I appoint Erin as leader" said in room A,
        where Erin is not, must be heard as said and refused with the reason, not heard as a room-A name and
        obeyed. The wider decode wins only when it hears other words, naming someone of the other room or more
        votes than the room has, with a higher confidence: a larger grammar lowers every confidence, so it has to
        be heard clearly. The same words keep the room's decode and its confidence."""
        said = heard.text or heard.guess
        engine, state = self.engine, self.engine.state
        if (mic is None or not (said or heard.partial) or heard.confidence >= WIDER_BELOW
                or len(samples) > WIDER_MAX_SECONDS * RATE or any(engine.in_state(phase) for phase in _ANY_ROOM)):
            return heard
        room = state.rooms[mic].members
        if said:
            parsed = self.grammar.parse(said, state.players)
            if heard.confidence < WIDER_ABOVE or not isinstance(parsed, Parsed) or not actions_names(parsed.slots):
                return heard
        elif not engine.in_state("hostages") or not (
                {w.lower() for w in normalize(heard.partial)} & {p.lower() for p in state.players}):
            # A path that did not fit the grammar is worth a second look only for a hostage choice ("hostage
            # frank and" for "hostage Heidi"): in party noise, most appointments lose their last word too.
            return heard
        recognizer = self.recognizers[mic]
        recognizer.expect(self._wide_grammar(), list(state.players), list(engine.allowed_intents()))
        other = recognizer.recognize(samples, RATE)
        self._expecting[mic] = None
        self.listen_for_current_phase(mic)  # back to the room's grammar (compiled already: a switch)
        same = [w.lower() for w in normalize(other.text)] == [w.lower() for w in normalize(said)]
        if not other.text or same or other.confidence <= heard.confidence:
            return heard
        again = self.grammar.parse(other.text, state.players)
        if not isinstance(again, Parsed):
            return heard
        outsiders = [p for p in actions_names(again.slots) if p not in room]
        too_many = int(again.slots.get("votes", 0)) > len(room)
        return other if outsiders or too_many else heard

    def _answer(self, mic: str | None, samples: np.ndarray, heard: Transcript, t: float) -> Transcript:
        """While a read-back or a question (``_ask``) waits for ``mic``'s room (at ``t``, the utterance's start), an
        utterance heard as no command at all is decoded once more
        with only the answers the read-back asks for ("yes" and "no"; ``Grammar.as_prompted``), and taken at the
        recognizer's own bar. In party babble a "yes" sits in an utterance the party keeps open for a second or
        more, and the whole phase's grammar explains that noise as more words ("no that's", "undo that") or as no
        whole sentence; with "yes" and "no" alone it can only call it silence. Chosen on the dev split of
        ``python -m benchmarks.answers`` (one-word answers, "wrong" and "nope" among them, took party talk for a "no"
        19 times in 256 lines; "yes" and "no" alone, once in 384). On its test split, in 18 dB babble, "yes" was taken
        26 times of 36 instead of 15, "no" 30 instead of 13, with no more wrong answers, and none of 180 lines of
        party talk was taken (docs/benchmarks/answers.md).

        An utterance heard as one of ``MISHEARD_ANSWERS`` ("undo that", "repeat") is decoded again too, and an answer
        heard then is taken instead: in babble the phase's grammar took a "yes" for "undo that", which took the choice
        back and lost the round's hostages in whole games.

        An answer the recognizer found doubtful (``Transcript.doubtful``: "yes" alone aligns over babble as poorly as
        talk around a "repeat") is taken here too: this decode listens for nothing else. Without it, "yes" at 12 dB
        went 34 -> 30 of 36 with the alignment check (docs/benchmarks/changes.md)."""
        if self._guessed_answer(heard) is not None or not (self._read_back_waits(mic) or self._asking(mic, t)):
            return heard
        if heard.text:
            parsed = self.grammar.parse(heard.text, self.engine.state.players)
            if not isinstance(parsed, Parsed) or parsed.intent not in MISHEARD_ANSWERS:
                return heard
        state = self.engine.state
        recognizer = self.recognizers[mic]
        recognizer.expect(self.grammar.as_prompted(["confirm"]), list(state.players), ["confirm"])
        answer = recognizer.recognize(samples, RATE)
        self._expecting[mic] = None
        self.listen_for_current_phase(mic)  # back to the phase's grammar (compiled already: a switch)
        return answer if answer.text or (answer.doubtful and self._guessed_answer(answer) is not None) else heard

    def _read_back_waits(self, mic: str | None) -> bool:
        """Whether a hostage choice read back in ``mic``'s room (any room, on a shared microphone) waits for its
        "yes" or "no"."""
        if "confirm" not in self.grammar.intents:
            return False
        rooms = getattr(self.engine.state, "rooms", {})
        return any(getattr(room, "pending", None) for name, room in rooms.items() if mic is None or name == mic)

    def _guessed_answer(self, heard: Transcript) -> Parsed | None:
        """An answer to a question the whole phase's grammar heard, rejected but from ``ANSWER_CONFIDENCE`` up
        (it is expected, and a short word scores lower than a sentence): ``understood`` takes it."""
        if heard.text or not heard.guess or heard.confidence < ANSWER_CONFIDENCE:
            return None
        answer = self.grammar.parse(heard.guess, self.engine.state.players)
        return answer if isinstance(answer, Parsed) and answer.intent in ANSWERS else None

    def _prepare(self, mic: str | None, utterance: Utterance) -> None:
        """Decode ahead an utterance that the short hangover may close (see ``Endpointer.prepare``); without a slow
        second opinion (``LooksTwice``), which most of these decodes would waste."""
        if not utterance.stands_out:
            return
        recognizer = self.recognizers[mic]
        twice = isinstance(recognizer, LooksTwice)  # its second opinion waits for the close (``hear``)
        if twice:
            recognizer.ahead = True
        try:
            heard = self._transcribe(mic, utterance, self._talked_over(mic, utterance))
        finally:
            if twice:
                recognizer.ahead = False
        self._ahead[mic] = (utterance, self._expecting[mic], heard)

    def understood(self, mic: str | None, heard: Transcript, t: float, rise: float | None = None) -> bool:
        """Act on a transcript: a command goes to the engine; a doubtful one gets "sorry" at most once (asking for
        the microphone to be nearer when its utterance stood only ``rise`` dB above a loud room, ``LOUD_RISE``)."""
        players = self.engine.state.players
        loud = rise is not None and rise < LOUD_RISE
        if (answer := self._guessed_answer(heard)) is not None:
            replied = self._replied(mic, answer, t)
            return self._act(mic, answer) if replied is None else replied
        if not heard.text:
            if heard.question and self._ask(mic, heard.question, t):
                return False
            if heard.confidence >= UNSURE:
                self._pardon(mic, t, loud=loud)
            return False
        parsed = self.grammar.parse(heard.text, players)
        if isinstance(parsed, Parsed):
            replied = self._replied(mic, parsed, t)
            return self._act(mic, parsed) if replied is None else replied
        addressed, _ = self._addressed(heard.text)
        reason = parsed.reason if addressed else "it did not start with the wake word"
        self.engine.emit(Rejected(mic or "both", heard.text, reason, "refuse.parse", None))
        if addressed:
            self._pardon(mic, t, loud=loud)
        return False

    def _ask(self, mic: str | None, question: str, t: float) -> bool:
        """Ask ``mic``'s room "Did you say: ...?" about a command the recognizer nearly took (``question``, heard in
        an utterance that ended at ``t``), to act on it at a "yes" (``_replied``); not while a read-back waits there
        for its own "yes" (the answer would be ambiguous), not in the reveal (``NOT_ASKED_IN``), and not with ``ask``
        off. True when asked."""
        parsed = self.grammar.parse(question, self.engine.state.players)
        if (not self.ask or not isinstance(parsed, Parsed) or parsed.intent in ANSWERS
                or self._read_back_waits(mic) or any(self.engine.in_state(phase) for phase in NOT_ASKED_IN)):
            return False
        self._asked[mic] = (parsed, t)
        _, words = self._addressed(parsed.text)
        spelled = {"i": "I", **{p.casefold(): p for p in self.engine.state.players}}
        command = " ".join(spelled.get(w.casefold(), w) for w in words.split())
        self.engine.say(mic or "both", "asked", command=command)
        return True

    def asked(self, mic: str | None) -> Parsed | None:
        """The command ``mic``'s room was last asked about ("did you say ...?") and has not answered yet."""
        asked = self._asked.get(mic)
        return asked[0] if asked is not None else None

    def _asking(self, mic: str | None, t: float) -> Parsed | None:
        """The command ``mic``'s room was asked about ("did you say ...?") if its answer is still awaited at ``t``
        (``ASK_WAITS``)."""
        asked = self._asked.get(mic)
        return asked[0] if asked is not None and t - asked[1] <= ASK_WAITS else None

    def _replied(self, mic: str | None, parsed: Parsed, t: float) -> bool | None:
        """A command or answer heard in ``mic`` at ``t`` while a question waits there (``_ask``): its "yes" acts on the
        command asked about (True when the engine accepts it), its "no" gets "then say it again" (False). None when no
        question waits, or ``parsed`` answers none: the question is dropped, and ``parsed`` is acted on as it is."""
        asked = self._asking(mic, t)
        self._asked.pop(mic, None)
        if asked is None or parsed.intent != "confirm":
            return None
        if parsed.slots.get("answer") == "yes":
            return self._act(mic, asked)
        self.engine.say(mic or "both", "asked.no")
        return False

    def _act(self, mic: str | None, parsed: Parsed) -> bool:
        """Hand a parsed command to the engine, as said after the wake word."""
        _, command = self._addressed(parsed.text)
        if self.barge_in is not None:
            for room in rooms_heard(mic):
                self.barge_in(room)
        accepted = self.engine.handle(Parsed(parsed.intent, parsed.slots, command), mic, spoken=True)
        self._pardoned.pop(mic, None)
        return accepted

    def _addressed(self, text: str) -> tuple[bool, str]:
        """Whether ``text`` starts with the wake word (always true without one), and the words after it."""
        words = normalize(text)
        if [w.lower() for w in words[: len(self.wake_word)]] == self.wake_word:
            return True, " ".join(words[len(self.wake_word) :])
        return False, " ".join(words)

    def _pardon(self, mic: str | None, t: float, *, loud: bool = False) -> None:
        """ "Sorry, say that again" (the announcement ``pardon``; in a loud room, worded to bring the player
        nearer the microphone), at most once in a row per microphone."""
        last = self._pardoned.get(mic)
        if last is not None and t - last < PARDON_AGAIN_AFTER:
            return
        self._pardoned[mic] = t
        self.engine.say(mic or "both", "pardon", self.engine.text("pardon.loud" if loud else "pardon"))

    def listen_for_current_phase(self, mic: str | None) -> None:
        """Tell ``mic``'s recognizer what can be said now: the phase's commands, the room's names, and no
        more votes or hostages than there can be. Each utterance does this itself; call it to have the
        grammar compiled ahead (a benchmark before it measures)."""
        engine, state = self.engine, self.engine.state
        if mic is None or any(engine.in_state(phase) for phase in _ANY_ROOM):
            roster: Sequence[str] = state.players
        else:
            roster = state.rooms[mic].members
        # A game without rooms (Room 25: one table) counts its players.
        numbers = max((len(room.members) for room in state.rooms.values()), default=len(state.players)) \
            if mic is None else len(roster)
        listed = engine.hostages_due() if engine.in_state("hostages") else None
        grammar = self.grammar.narrowed(numbers=numbers, max_listed=listed, cards=_deck(state))
        intents = tuple(engine.allowed_intents())
        if mic in self._asked and "confirm" not in intents and "confirm" in self.grammar.intents:
            # A question waits ("did you say ...?"): its "yes" and "no" are commands of the phase until it is
            # answered. Without them a clean "no" came out as "help", which dropped the question and said the help.
            intents += ("confirm",)
        wanted = (grammar, tuple(roster), intents)
        if wanted != self._expecting[mic]:
            if len(roster) < len(state.players):  # compiled now, not while a player waits (``_other_room``)
                self.recognizers[mic].expect(self._wide_grammar(), list(state.players), list(wanted[2]))
            self.recognizers[mic].expect(grammar, list(roster), list(wanted[2]))
            self._expecting[mic] = wanted

    def _wide_grammar(self) -> Grammar:
        """The commands with every name of the game and votes up to every player (``_other_room``)."""
        state = self.engine.state
        return self.grammar.narrowed(numbers=len(state.players), cards=_deck(state))

    def _players_part(self, mic: str | None, utterance: Utterance, over: bool) -> np.ndarray | None:
        """The utterance without what the canceller left of the moderator before and after the player's
        words (it would be decoded as more words: "Frank accepts the"), ending in the room's quiet as
        the recognizer expects; None when there is nothing but that. ``over``: said over the moderator."""
        if self.echo is None:
            return utterance.samples
        said = round((utterance.end - utterance.start) * RATE)  # the rest is padding
        span = self.echo.player_span(mic, utterance.samples[:said], utterance.start)
        if span is None:
            return None
        lo, hi = span
        # Said over the moderator, a first sound ("st-", "gr-") is quiet under its residual and may begin before
        # the endpointer heard speech: the words keep the longer preroll then.
        before = utterance.before if lo == 0 and over else utterance.samples[:0]
        if hi >= said:  # it ends with the player: the endpointer's own ending stays
            return np.concatenate([before, utterance.samples[lo:]])
        return self.endpointers[mic].pad(np.concatenate([before, utterance.samples[lo:hi]]),
                                         quiet=round(SPAN_AFTER * RATE))

    # -- decoding while the player speaks -------------------------------------------------------

    def _stream(self, mic: str | None, audio: np.ndarray, first: bool) -> None:
        """The endpointer's audio of an open utterance goes to ``mic``'s recognizer as it comes."""
        recognizer = self.recognizers[mic]
        if first:
            self._abandon(mic)
            self._ahead[mic] = None
            self.listen_for_current_phase(mic)
            recognizer.begin()
        self._partial[mic] = recognizer.accept(audio, RATE)

    def _complete(self, mic: str | None) -> bool:
        """Whether what ``mic`` heard so far is already a whole command (so a short pause ends it)."""
        text = self._partial[mic]
        if not text:
            return False
        parsed = self.grammar.parse(text, self.engine.state.players)
        if not isinstance(parsed, Parsed):
            return False
        # "hostages Bob" when two are due: the player is probably still thinking of the second name.
        named = parsed.slots.get("players")
        return not (parsed.intent == "hostages" and isinstance(named, list)
                    and self.engine.in_state("hostages") and len(named) < self.engine.hostages_due())

    def _abandon(self, mic: str | None) -> None:
        """End the stream of ``mic``'s utterance, if one is being decoded."""
        if self._partial[mic] is not None:
            self._partial[mic] = None
            self.recognizers[mic].finish()
