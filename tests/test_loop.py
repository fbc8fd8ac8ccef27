"""The listening loop with real endpointing and a scripted recognizer (the engines have their own suites)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from fake_recognizer import QueuedRecognizer, ScriptedRecognizer
from fakes import RecordingOut
from tests_support import eight_player_engine, hostage_phase_engine

from moderator.audio.clip import Clip
from moderator.audio.echo import ECHO_TAIL, EchoPath
from moderator.audio.endpoint import FRAME, RATE, RISE_MIN, Endpointer, Utterance, webrtc_classifier
from moderator.audio.reference import PlayedAudio
from moderator.loop import (
    ANSWER_CONFIDENCE,
    ASK_WAITS,
    LOUD_RISE,
    PARDON_AGAIN_AFTER,
    SECOND_OPINION_HOLD,
    TALKED_OVER_CONFIDENCE,
    UNSURE,
    Listener,
)
from moderator.ports import LooksTwice, Transcript

#: The endpointer's hangovers and look-ahead, as the product sets them.
LONG, SHORT, LOOK = Endpointer.hangover, Endpointer.short_hangover, Endpointer.early_look

def spoken(tmp_path: Path, text: str) -> np.ndarray:
    if shutil.which("flite") is None:
        pytest.skip("flite is not installed (apt-get install flite); it synthesizes the test speech")
    wav = tmp_path / f"{abs(hash(text))}.wav"
    subprocess.run(["flite", "-voice", "rms", "-t", text, "-o", str(wav)], check=True)
    return Clip.read(wav).resample(16000).samples


def stream(listener: Listener, mic: str | None, audio: np.ndarray, rate: int, t0: float = 0.0) -> None:
    step = rate // 10  # 100 ms chunks, as a microphone delivers them
    for i in range(0, len(audio), step):
        listener.feed(mic, audio[i : i + step], rate, t0 + i / rate)


def test_spoken_commands_reach_the_game_and_the_recognizer_expects_the_phase(tmp_path: Path) -> None:
    engine = eight_player_engine()
    events: list[dict] = []
    engine.subscribe(events.append)
    engine.begin()
    rec = ScriptedRecognizer(["start the game", "i appoint alice as leader"])
    listener = Listener(engine, rec, new_endpointer=lambda: Endpointer(webrtc_classifier()))
    rate = 16000
    gap = np.zeros(rate, np.float32)
    stream(listener, "A", np.concatenate([gap, spoken(tmp_path, "start the game"), gap,
                                          spoken(tmp_path, "I appoint Alice as leader"), gap]), rate)
    heard = [e for e in events if e["type"] == "heard"]
    assert [h["text"] for h in heard] == ["start the game", "i appoint alice as leader"]
    assert [e["intent"] for e in events if e["type"] == "command"] == ["start", "appoint"]
    # Each phase's intents, once per roster (the room's names, and every name: Listener._other_room).
    phases = [intents for i, intents in enumerate(rec.expected) if i == 0 or intents != rec.expected[i - 1]]
    assert "start" in phases[0] and "appoint" not in phases[0]
    assert "appoint" in phases[1] and "start" not in phases[1]


def test_half_duplex_ignores_the_room_while_the_moderator_speaks(tmp_path: Path) -> None:
    engine = eight_player_engine()
    engine.begin()
    rec = ScriptedRecognizer(["start the game"])
    # Without a canceller (--aec off): room A's speaker talks until 5.0 s, counting its echo's tail.
    played = PlayedAudio(RecordingOut())
    played.play("A", Clip.tone((440.0,), 5.0 - ECHO_TAIL, RATE, level=0.01), 0.0)
    listener = Listener(engine, rec, new_endpointer=lambda: Endpointer(webrtc_classifier()),
                        echo=EchoPath(played, ("A", "B")))
    words = spoken(tmp_path, "start the game")
    stream(listener, "A", np.concatenate([words, np.zeros(16000, np.float32)]), 16000, t0=1.0)
    assert rec.texts == ["start the game"], "nothing was recognized while room A's speaker talked"
    stream(listener, "A", np.concatenate([words, np.zeros(16000, np.float32)]), 16000, t0=6.0)
    assert rec.texts == []
    assert engine.in_state("round.running")


def test_unparseable_transcripts_are_rejected_and_change_nothing(tmp_path: Path) -> None:
    engine = eight_player_engine()
    events: list[dict] = []
    engine.subscribe(events.append)
    engine.begin()
    rec = ScriptedRecognizer(["start the the drink"])
    listener = Listener(engine, rec, mics=(None,), new_endpointer=lambda: Endpointer(webrtc_classifier()))
    stream(listener, None, np.concatenate([spoken(tmp_path, "start the game"), np.zeros(16000, np.float32)]), 16000)
    assert events[-2]["type"] == "rejected" and engine.in_state("briefing")


class Recording(ScriptedRecognizer):
    """Also records the grammar and roster it was told to expect."""

    def expect(self, grammar, roster, intents=None) -> None:  # type: ignore[no-untyped-def]
        super().expect(grammar, roster, intents)
        self.grammar, self.roster = grammar, list(roster)


def at_round_end(listener_args: dict | None = None) -> tuple[Listener, Recording, list[dict]]:
    engine = eight_player_engine()
    events: list[dict] = []
    engine.subscribe(events.append)
    engine.begin()
    for line, room in (("start the game", "A"), ("I appoint Alice as leader", "A")):
        engine.handle_text(line, room)
    rec = Recording([])
    listener = Listener(engine, rec, new_endpointer=lambda: Endpointer(webrtc_classifier()), **(listener_args or {}))
    return listener, rec, events


def utterance(t: float = 1.0) -> Utterance:
    return Utterance(np.zeros(RATE, np.float32), t - 1.0, t)


def test_an_utterance_that_does_not_stand_out_from_the_room_is_not_decoded() -> None:
    listener, rec, events = at_round_end()
    rec.texts = ["how much time is left", "how much time is left"]
    party = Utterance(np.zeros(RATE, np.float32), 1.0, 2.0, rise=RISE_MIN - 0.5)
    assert not listener.hear("A", party)
    assert len(rec.texts) == 2 and not [e for e in events if e["type"] == "heard"], "never decoded, never heard"
    player = Utterance(np.zeros(RATE, np.float32), 3.0, 4.0, rise=RISE_MIN + 0.5)
    assert listener.hear("A", player) and len(rec.texts) == 1


def test_a_doubtful_utterance_gets_sorry_once_and_chatter_gets_nothing() -> None:
    listener, _, events = at_round_end()
    pardons = lambda: [e for e in events if e.get("key") == "pardon"]  # noqa: E731
    assert not listener.understood("A", Transcript("", UNSURE - 0.1), 1.0)
    assert pardons() == [], "a low score is chatter: ignored"
    listener.understood("A", Transcript("", UNSURE), 2.0)
    listener.understood("A", Transcript("", 0.49), 3.0)
    listener.understood("A", Transcript("start the the", 0.9), 4.0)
    assert len(pardons()) == 1 and pardons()[0]["room"] == "A", "'sorry, say that again' at most once"
    listener.understood("B", Transcript("", 0.49), 4.0)
    assert len(pardons()) == 2, "each room is asked on its own"
    assert listener.understood("A", Transcript("how much time is left", 0.9), 5.0)
    listener.understood("A", Transcript("", 0.49), 6.0)
    assert len(pardons()) == 3, "after a command gets through, the next doubt is asked about again"
    listener.understood("A", Transcript("", 0.49), 6.0 + PARDON_AGAIN_AFTER)
    assert len(pardons()) == 4, "and again after a while"


def test_sorry_asks_for_the_microphone_to_be_nearer_when_the_utterance_barely_stood_above_a_loud_room() -> None:
    listener, rec, events = at_round_end()
    rec.texts = ["start the the", "start the the"]
    pardons = lambda: [e for e in events if e.get("key") == "pardon"]  # noqa: E731
    # Babble at 6 dB peak-frame SNR: the command stands about 11 dB above the room. The key is still "pardon".
    assert not listener.hear("A", Utterance(np.zeros(RATE, np.float32), 1.0, 2.0, rise=LOUD_RISE - 3.0))
    assert not listener.hear("B", Utterance(np.zeros(RATE, np.float32), 1.0, 2.0, rise=LOUD_RISE + 3.0))
    loud, quiet = pardons()
    assert loud["room"] == "A" and "microphone" in loud["text"] and loud["text"] != quiet["text"]
    assert quiet["room"] == "B" and quiet["text"] == listener.engine.text("pardon")
    # Where the endpointer could not say how loud the room was, the plain wording.
    listener.understood("A", Transcript("", 0.49), 1.0 + PARDON_AGAIN_AFTER, None)
    assert pardons()[-1]["text"] == listener.engine.text("pardon")


def test_with_a_wake_word_only_addressed_commands_count() -> None:
    listener, rec, events = at_round_end({"wake_word": "moderator"})
    assert not listener.understood("A", Transcript("how much time is left", 0.9), 1.0)
    assert events[-1]["type"] == "rejected" and "wake word" in events[-1]["reason"]
    assert not [e for e in events if e.get("key") == "pardon"], "talk not addressed to the moderator is ignored"
    assert listener.understood("A", Transcript("moderator how much time is left", 0.9), 2.0)
    command = [e for e in events if e["type"] == "command"][-1]
    assert command["intent"] == "time" and command["text"] == "how much time is left"
    rec.texts = ["moderator pause"]
    assert listener.hear("A", utterance(3.0))
    assert "moderator pause" in dict(rec.grammar.expand(["Alice"], ["pause"]))


def test_the_recognizer_listens_for_the_room_s_names_and_the_round_s_hostage_count() -> None:
    listener, rec, _ = at_round_end()
    rec.texts = ["three votes for carol"]
    listener.hear("A", utterance())
    assert rec.roster == ["Alice", "Bob", "Carol", "Dave"]
    votes = {p.slots["votes"] for _, p in rec.grammar.expand(rec.roster, ["usurp"])}
    assert votes == {1, 2, 3, 4}, "no more votes than the room has players"
    listener.engine.clock.set(180.0)  # type: ignore[attr-defined]
    listener.engine.tick()
    rec.texts = ["hostage bob"]
    listener.hear("B", utterance(2.0))
    assert rec.roster == ["Erin", "Frank", "Grace", "Heidi"]
    assert {len(p.slots["players"]) for _, p in rec.grammar.expand(rec.roster, ["hostages"])} == {1}


def test_an_expected_answer_is_taken_below_the_engine_threshold_and_nothing_else_is() -> None:
    listener, _, events = at_round_end()
    engine = listener.engine
    assert not listener.understood("A", Transcript("", 0.4, guess="pause"), 1.0), "only answers get the lower bar"
    engine.clock.set(180.0)  # type: ignore[attr-defined]
    engine.tick()
    assert listener.understood("A", Transcript("hostages bob", 0.9), 2.0)
    assert not listener.understood("A", Transcript("", ANSWER_CONFIDENCE - 0.05, guess="yes"), 3.0)
    assert engine.state.rooms["A"].hostages is None
    assert listener.understood("A", Transcript("", ANSWER_CONFIDENCE + 0.05, guess="yes"), 4.0)
    assert engine.state.rooms["A"].hostages == ["Bob"]
    assert [e["intent"] for e in events if e["type"] == "command"][-1] == "confirm"


class Streaming(ScriptedRecognizer):
    """A streaming recognizer whose partial result is the whole text once ``words_after`` chunks came."""

    def __init__(self, texts: list[str], words_after: int = 10) -> None:
        super().__init__(texts)
        self.words_after, self.calls, self.forks = words_after, [], []
        self.partial = texts[0] if texts else ""

    def fork(self) -> Streaming:
        other = Streaming(self.texts, self.words_after)
        self.forks.append(other)
        return other

    def begin(self) -> None:
        self.calls.append("begin")
        self.accepted = 0

    def accept(self, samples: np.ndarray, rate: int) -> str:
        self.accepted += 1
        return self.partial if self.accepted >= self.words_after else ""

    def finish(self) -> None:
        self.calls.append("finish")


def utterances_of(listener: Listener, mic: str, audio: np.ndarray, step: int = RATE // 10,
                  closed: list[float] | None = None) -> list[Utterance]:
    """Feed ``audio`` in chunks of ``step`` samples; ``closed`` gets the audio time at the end of each chunk
    that closed an utterance."""
    out: list[Utterance] = []
    for i in range(0, len(audio), step):
        got = listener.feed(mic, audio[i : i + step], RATE, i / RATE)
        out += got
        if closed is not None and got:
            closed.append(min(len(audio), i + step) / RATE)
    return out


def test_a_whole_command_ends_the_utterance_sooner_with_one_recognizer_per_microphone(tmp_path: Path) -> None:
    audio = np.concatenate([np.zeros(RATE, np.float32), spoken(tmp_path, "pause"), np.zeros(RATE, np.float32)])
    batch_listener, _, _ = at_round_end()
    batch = Listener(batch_listener.engine, ScriptedRecognizer(["pause"]),
                     new_endpointer=lambda: Endpointer(webrtc_classifier()))
    slow_at: list[float] = []
    assert len(utterances_of(batch, "A", audio, FRAME, slow_at)) == 1
    assert batch.engine.in_state("round.paused")

    stream_listener, _, _ = at_round_end()
    rec = Streaming(["pause"], words_after=3)
    live = Listener(stream_listener.engine, rec, new_endpointer=lambda: Endpointer(webrtc_classifier()))
    assert [live.recognizers[m] for m in ("A", "B")] == rec.forks, "each room decodes on its own"
    fast_at: list[float] = []
    decoded: list[float] = []
    recognize = rec.forks[0].recognize
    rec.forks[0].recognize = lambda *a: decoded.append(live.endpointers["A"]._t) or recognize(*a)  # type: ignore[method-assign]
    [fast] = utterances_of(live, "A", audio, FRAME, fast_at)
    assert live.engine.in_state("round.paused")
    assert rec.forks[0].calls == ["begin", "finish"] and rec.forks[1].calls == []
    assert slow_at[0] - fast_at[0] == pytest.approx(LONG - SHORT, abs=0.031), "a short pause instead of 0.6 s"
    # The whole command was decoded once, ahead: LOOK after the words, while the short hangover passed.
    assert len(decoded) == 1 and fast_at[0] - decoded[0] == pytest.approx(SHORT - LOOK, abs=0.031)
    assert fast.end == pytest.approx(decoded[0], abs=0.031), "the utterance decoded ahead is the one acted on"


class SecondLook(Streaming):
    """A streaming recognizer with a slow second opinion (``LooksTwice``): it notes whether each decode was ahead."""

    def __init__(self, texts: list[str], words_after: int = 10) -> None:
        super().__init__(texts, words_after)
        self.ahead, self.decodes = False, []

    def fork(self) -> SecondLook:
        other = SecondLook(self.texts, self.words_after)
        self.forks.append(other)
        return other

    def recognize(self, samples: np.ndarray, rate: int) -> Transcript:
        self.decodes.append("ahead" if self.ahead else "at the close")
        return super().recognize(samples, rate)


def test_a_recognizer_that_looks_twice_decodes_ahead_without_its_second_look_and_again_at_the_close(
        tmp_path: Path) -> None:
    audio = np.concatenate([np.zeros(RATE, np.float32), spoken(tmp_path, "pause"), np.zeros(RATE, np.float32)])
    base, _, _ = at_round_end()
    rec = SecondLook(["pause", "pause"], words_after=3)
    live = Listener(base.engine, rec, new_endpointer=lambda: Endpointer(webrtc_classifier()))
    assert isinstance(live.recognizers["A"], LooksTwice)
    closed: list[float] = []
    assert len(utterances_of(live, "A", audio, FRAME, closed)) == 1
    assert live.engine.in_state("round.paused")
    assert rec.forks[0].decodes == ["ahead", "at the close"] and not rec.forks[0].ahead


def test_hostages_short_of_the_rounds_count_wait_for_the_long_pause(tmp_path: Path) -> None:
    listener, _, _ = at_round_end()
    engine = listener.engine
    engine.handle_text("I appoint Erin as leader", "B")
    engine.clock.set(engine.state.deadline + 1)  # type: ignore[attr-defined]
    engine.tick()
    assert engine.in_state("hostages")
    rec = Streaming(["hostages bob"], words_after=3)
    live = Listener(engine, rec, new_endpointer=lambda: Endpointer(webrtc_classifier()))
    live._partial["A"] = "hostages bob"
    assert engine.hostages_due() == 1 and live._complete("A"), "one hostage due: 'hostages Bob' is whole"
    engine.hostages_due = lambda: 2  # type: ignore[method-assign]
    assert not live._complete("A"), "two due: the second name is probably coming"
    live._partial["A"] = "hostages bob and carol"
    assert live._complete("A")
    live._partial["A"] = "hostages bob and"
    assert not live._complete("A"), "not a command yet"


def test_a_command_heard_while_a_long_phrase_plays_cuts_it_before_it_is_acted_on() -> None:
    listener, _, _ = at_round_end()
    order: list[str] = []
    listener.engine.subscribe(lambda e: order.append(e["type"]) if e["type"] == "command" else None)
    cut = Listener(listener.engine, ScriptedRecognizer([]), new_endpointer=lambda: None,  # type: ignore[arg-type,return-value]
                   barge_in=lambda room: bool(order.append(f"cut {room}")))
    assert cut.understood("A", Transcript("how much time is left", 0.9), 1.0)
    assert order == ["cut A", "command"]
    shared = Listener(listener.engine, ScriptedRecognizer([]), mics=(None,), new_endpointer=lambda: None,  # type: ignore[arg-type,return-value]
                      barge_in=lambda room: bool(order.append(f"cut {room}")))
    order.clear()
    shared.understood(None, Transcript("how much time is left", 0.9), 2.0)
    assert order == ["cut A", "cut B", "command"], "a shared microphone hears both rooms' speakers"
    order.clear()
    cut.understood("A", Transcript("", 0.1), 3.0)
    assert order == [], "chatter cuts nothing"


class Doubtful(ScriptedRecognizer):
    """Hears each of its transcripts as a whole sentence of the grammar rejected for its confidence."""

    def __init__(self, heard: list[tuple[str, float]]) -> None:
        super().__init__([])
        self.heard = list(heard)

    def recognize(self, samples: np.ndarray, rate: int) -> Transcript:
        guess, confidence = self.heard.pop(0)
        return Transcript("", confidence, guess=guess)


def test_a_near_miss_said_over_the_moderator_is_taken_and_the_same_in_silence_is_not() -> None:
    """What the canceller leaves of the moderator lowers a player's confidence: a whole sentence said over it is
    taken from TALKED_OVER_CONFIDENCE up (see there); in silence, or under that, it still gets "sorry"."""
    rng = np.random.default_rng(7)
    played = PlayedAudio(RecordingOut())
    played.play("A", Clip(rng.normal(0, 0.1, 3 * RATE).astype(np.float32), RATE), 0.0)  # the moderator, 0-3 s
    path = EchoPath(played, ("A",), None, {"A": 0.0})
    mic = 0.3 * played.reference(("A",), 0.0, 8 * RATE)
    for i in range(0, len(mic), 1600):
        path.cancel("A", mic[i : i + 1600], i / RATE)  # the path learns how loud the moderator is in the room
    assert path.talked_over("A", 1.0, 2.0) and path.talked_over("A", 2.5, 4.0)
    assert not path.talked_over("A", 5.0, 6.5), "after its last sound and its reverberation"
    listener, _, events = at_round_end({"echo": path})
    listener.recognizers["A"] = Doubtful([("how much time is left", TALKED_OVER_CONFIDENCE),
                                          ("how much time is left", TALKED_OVER_CONFIDENCE),
                                          ("pause", TALKED_OVER_CONFIDENCE - 0.02)])
    commands = lambda: [e["intent"] for e in events if e["type"] == "command"]  # noqa: E731

    def said(end: float) -> Utterance:  # a player as loud as the moderator in the microphone
        return Utterance(rng.normal(0, 0.03, RATE).astype(np.float32), end - 1.0, end)

    assert listener.hear("A", said(2.0)), "said over the moderator: taken"
    assert commands() == ["start", "appoint", "time"]
    assert not listener.hear("A", said(6.5)), "the same in silence: not taken"
    assert [e["room"] for e in events if e.get("key") == "pardon"] == ["A"], "but asked again"
    assert not listener.hear("A", said(2.5)), "over the moderator, under the bar: not taken"
    assert commands() == ["start", "appoint", "time"]


class ByRoster:
    """Hears ``room`` with a room's names and ``wide`` with every name of the game (``Listener._other_room``)."""

    name = "by-roster"

    def __init__(self, room: Transcript, wide: Transcript) -> None:
        self.room, self.wide, self.roster, self.decodes = room, wide, [], 0

    def expect(self, grammar, roster, intents=None) -> None:  # type: ignore[no-untyped-def]
        self.roster = list(roster)

    def recognize(self, samples: np.ndarray, rate: int) -> Transcript:
        self.decodes += 1
        return self.wide if len(self.roster) == 8 else self.room


def _heard_in_a(room: Transcript, wide: Transcript, seconds: float = 2.0) -> tuple[Transcript | None, ByRoster]:
    engine = eight_player_engine()
    engine.begin()
    engine.handle_text("start the game", "A")
    rec = ByRoster(room, wide)
    listener = Listener(engine, rec, new_endpointer=lambda: Endpointer(webrtc_classifier()))  # type: ignore[arg-type]
    said = Utterance(np.zeros(round(seconds * RATE), np.float32), 0.0, seconds)
    return listener._transcribe("A", said, False), rec


def test_a_name_of_the_other_room_heard_more_surely_by_the_wider_decode_wins() -> None:
    erin = Transcript("i appoint erin as leader", 0.85)
    heard, rec = _heard_in_a(Transcript("i appoint carol as leader", 0.7), erin)
    assert heard == erin and rec.decodes == 2  # then the engine refuses it: Erin is in room B


def test_the_rooms_decode_stays_unless_the_wider_one_hears_the_other_room_more_surely() -> None:
    carol = Transcript("i appoint carol as leader", 0.7)
    for wide in (Transcript("i appoint carol as leader", 0.6),   # the same words: the room's confidence stays
                 Transcript("i appoint erin as leader", 0.65),   # less sure than the room's decode
                 Transcript("i appoint bob as leader", 0.9)):    # another name of this room: not its business
        assert _heard_in_a(carol, wide)[0] == carol


def test_a_sure_a_hopeless_or_a_long_decode_is_not_decoded_again() -> None:
    erin = Transcript("i appoint erin as leader", 0.99)
    for room, seconds in ((Transcript("i appoint carol as leader", 0.95), 2.0),
                          (Transcript("", 0.2, guess="i appoint carol as leader"), 2.0),
                          (Transcript("i appoint carol as leader", 0.7), 5.0),
                          (Transcript("how much time is left", 0.5), 2.0)):
        heard, rec = _heard_in_a(room, erin, seconds)
        assert heard == room and rec.decodes == 1, room


def test_more_votes_than_the_room_has_heard_more_surely_by_the_wider_decode_wins() -> None:
    """ "five votes" said in a room of 4 is heard as said (and refused: too many votes), not as "three"."""
    five = Transcript("five votes for bob", 0.8)
    heard, _ = _heard_in_a(Transcript("three votes for bob", 0.7), five)
    assert heard == five


class _Echo:
    """An echo path whose player's span is the whole utterance, talked over or not."""

    def __init__(self, over: bool) -> None:
        self.over = over

    def player_span(self, mic, samples, start):  # type: ignore[no-untyped-def]
        return 0, len(samples)

    def talked_over(self, mic, start, end) -> bool:  # type: ignore[no-untyped-def]
        return self.over


def test_words_said_over_the_moderator_keep_the_longer_preroll_and_others_do_not() -> None:
    from types import SimpleNamespace

    before, words = np.full(3360, 0.1, np.float32), np.full(RATE, 0.2, np.float32)
    utterance = Utterance(words, 1.0, 2.0, before)
    over = Listener._players_part(SimpleNamespace(echo=_Echo(True), endpointers={}), "A", utterance, True)  # type: ignore[arg-type]
    quiet = Listener._players_part(SimpleNamespace(echo=_Echo(False), endpointers={}), "A", utterance, False)  # type: ignore[arg-type]
    assert over is not None and np.array_equal(over, np.concatenate([before, words]))
    assert quiet is not None and np.array_equal(quiet, words)


class ByIntents:
    """Hears ``phase`` with the phase's grammar and ``answer`` with the answers alone (``Listener._answer``)."""

    name = "by-intents"

    def __init__(self, phase: Transcript, answer: Transcript) -> None:
        self.phase, self.answer, self.intents, self.grammar, self.decodes = phase, answer, None, None, []

    def expect(self, grammar, roster, intents=None) -> None:  # type: ignore[no-untyped-def]
        self.grammar, self.intents = grammar, None if intents is None else list(intents)

    def recognize(self, samples: np.ndarray, rate: int) -> Transcript:
        self.decodes.append(self.intents)
        return self.answer if self.intents == ["confirm"] else self.phase


def _read_back_in_a(phase: Transcript, answer: Transcript) -> tuple[Listener, ByIntents, list[dict]]:
    engine, events = hostage_phase_engine()
    assert engine.handle_text("hostages Bob", "A", spoken=True) and engine.state.rooms["A"].pending == ["Bob"]
    rec = ByIntents(phase, answer)
    listener = Listener(engine, rec, new_endpointer=lambda: Endpointer(webrtc_classifier()))  # type: ignore[arg-type]
    return listener, rec, events


def test_a_reply_to_a_read_back_that_the_phase_grammar_missed_is_decoded_again_with_yes_and_no_alone() -> None:
    listener, rec, events = _read_back_in_a(Transcript("", 0.0, partial="no that's"), Transcript("yes", 0.8))
    assert listener.hear("A", utterance())
    assert [e["players"] for e in events if e["type"] == "hostages"] == [["Bob"]], "locked on the second decode's yes"
    assert rec.decodes[-1] == ["confirm"] and rec.intents != ["confirm"], "then back to the phase's grammar"
    assert [e["text"] for e in events if e["type"] == "heard"] == ["yes"]


def test_the_second_decode_is_only_for_a_room_whose_read_back_waits_and_only_when_nothing_else_was_heard() -> None:
    # Room B has no read-back waiting: its talk is never decoded as an answer.
    listener, rec, events = _read_back_in_a(Transcript("", 0.0), Transcript("yes", 0.8))
    assert not listener.hear("B", utterance()) and ["confirm"] not in rec.decodes
    # A command heard whole, or an answer the phase's grammar already heard, is not decoded again.
    for phase in (Transcript("how much time is left", 0.9), Transcript("", ANSWER_CONFIDENCE, guess="no")):
        listener, rec, events = _read_back_in_a(phase, Transcript("yes", 0.8))
        assert listener.hear("A", utterance()) and rec.decodes == [rec.decodes[0]], phase
        assert not [e for e in events if e["type"] == "hostages"], "no yes taken"
    # The second decode rejected too: nothing is taken.
    listener, rec, events = _read_back_in_a(Transcript("", 0.2), Transcript("", 0.4, guess="yes"))
    assert not listener.hear("A", utterance()) and rec.decodes[-1] == ["confirm"]
    assert listener.engine.state.rooms["A"].pending == ["Bob"]
    # Once answered, nothing waits: the next utterance is decoded once.
    listener, rec, events = _read_back_in_a(Transcript("", 0.0), Transcript("no", 0.9))
    assert listener.hear("A", utterance()) and listener.engine.state.rooms["A"].pending is None
    decodes = len(rec.decodes)
    assert not listener.hear("A", utterance(3.0)) and len(rec.decodes) == decodes + 1


def test_a_doubtful_answer_is_taken_only_by_the_decode_that_listens_for_answers_alone() -> None:
    """``Transcript.doubtful``: passed the confidence but not the alignment (pocketsphinx's ``ALIGNED_LIMIT``). A "yes"
    alone in babble is doubtful; the answers-only decode takes it, as it took it before the alignment check."""
    from moderator.adapters.asr_pocketsphinx import DOUBTFUL

    listener, rec, events = _read_back_in_a(Transcript("", 0.0), Transcript("", DOUBTFUL, guess="yes", doubtful=True))
    assert listener.hear("A", utterance()) and rec.decodes[-1] == ["confirm"]
    assert [e["players"] for e in events if e["type"] == "hostages"] == [["Bob"]]
    # A guess as low that its confidence alone rejected is not: the second decode keeps the recognizer's bar.
    listener, rec, events = _read_back_in_a(Transcript("", 0.0), Transcript("", DOUBTFUL, guess="yes"))
    assert not listener.hear("A", utterance()) and listener.engine.state.rooms["A"].pending == ["Bob"]
    # A doubtful command is not taken, and is not doubtful enough for "sorry, say that again".
    listener, rec, events = _read_back_in_a(Transcript("", DOUBTFUL, guess="repeat that", doubtful=True),
                                            Transcript("", 0.0))
    before = len(events)
    assert not listener.hear("B", utterance())
    assert [e["type"] for e in events[before:]] == ["heard"], "no command, no \"sorry\""


def test_a_doubtful_transcript_sits_between_the_bar_for_an_expected_answer_and_the_bar_for_sorry() -> None:
    from moderator.adapters.asr_pocketsphinx import DOUBTFUL, REJECT_BELOW

    assert ANSWER_CONFIDENCE <= DOUBTFUL < min(UNSURE, TALKED_OVER_CONFIDENCE, REJECT_BELOW)


def test_a_short_command_heard_while_a_read_back_waits_gives_way_to_an_answer_heard_with_yes_and_no_alone() -> None:
    # In babble a "yes" comes out of the phase's grammar as "undo that": the answers alone hear the yes, which locks.
    listener, rec, events = _read_back_in_a(Transcript("undo that", 0.97), Transcript("yes", 0.8))
    assert listener.hear("A", utterance())
    assert [e["players"] for e in events if e["type"] == "hostages"] == [["Bob"]]
    assert rec.decodes[-1] == ["confirm"] and [e["intent"] for e in events if e["type"] == "command"][-1] == "confirm"
    # An "undo" that the answers alone do not hear as one stays an undo: the choice is taken back.
    listener, rec, events = _read_back_in_a(Transcript("undo", 0.9), Transcript("", 0.2, guess="no"))
    assert listener.hear("A", utterance()) and rec.decodes[-1] == ["confirm"]
    assert [e["intent"] for e in events if e["type"] == "command"][-1] == "undo"
    assert listener.engine.state.rooms["A"].pending is None and not [e for e in events if e["type"] == "hostages"]
    # Other commands, and the same commands when no read-back waits, are decoded once.
    for phase, room in ((Transcript("how much time is left", 0.9), "A"), (Transcript("repeat that", 0.9), "B")):
        listener, rec, events = _read_back_in_a(phase, Transcript("yes", 0.8))
        assert listener.hear(room, utterance()) and ["confirm"] not in rec.decodes, phase
        assert not [e for e in events if e["type"] == "hostages"]
    listener, rec, events = _read_back_in_a(Transcript("repeat that", 0.9), Transcript("", 0.0))
    assert listener.hear("A", utterance()) and rec.decodes[-1] == ["confirm"], "decoded again, and repeated as heard"
    assert [e["intent"] for e in events if e["type"] == "command"][-1] == "repeat"


class _Tells(ByRoster):
    """A recognizer that hears what was said over the moderator otherwise (as ``ByNoiseLevel`` does), and keeps the
    flag the listener set for each decode."""

    def __init__(self) -> None:
        super().__init__(Transcript("", 0.0), Transcript("", 0.0))
        self.over_the_moderator, self.seen = False, []
        self.room_rise: float | None = None

    def recognize(self, samples: np.ndarray, rate: int) -> Transcript:
        self.seen.append((self.over_the_moderator, self.room_rise))
        return super().recognize(samples, rate)


def test_the_listener_tells_a_recognizer_that_asks_whether_the_moderator_was_talking_and_how_loud_the_room_was(
) -> None:
    from moderator.ports import HearsOverTheModerator, HearsTheRoom

    for told in (HearsOverTheModerator, HearsTheRoom):
        assert isinstance(_Tells(), told) and not isinstance(ByRoster(*[Transcript("", 0.0)] * 2), told)
    engine = eight_player_engine()
    engine.begin()
    rec = _Tells()
    listener = Listener(engine, rec, new_endpointer=lambda: Endpointer(webrtc_classifier()))  # type: ignore[arg-type]
    listener.echo = _Echo(True)  # type: ignore[assignment]
    said = Utterance(np.full(RATE, 0.1, np.float32), 0.0, 1.0, rise=41.5)
    listener._transcribe("A", said, True)
    listener._transcribe("A", Utterance(said.samples, 0.0, 1.0), False)  # the room unheard: no rise
    assert rec.seen == [(True, 41.5), (False, None)]



def trimmed(samples: np.ndarray) -> np.ndarray:
    """Without the synthesizer's own silence around the words (10 ms frames 40 dB under the peak)."""
    level = 20 * np.log10(np.sqrt(np.mean(samples[: len(samples) // 160 * 160].reshape(-1, 160) ** 2, axis=1)) + 1e-9)
    loud = np.nonzero(level > level.max() - 40)[0]
    return samples[loud[0] * 160 : (loud[-1] + 1) * 160]


def test_with_a_slow_second_opinion_a_command_closed_early_waits_for_the_talker_to_stop(tmp_path: Path) -> None:
    """A voice that pauses after a word ("Grace, ... Frank and Dave are plotting") is not a command said alone: with
    a second opinion, the early close is provisional while it decodes (``SECOND_OPINION_HOLD``)."""
    words, talk = (trimmed(spoken(tmp_path, said)) for said in ("pause", "Frank and Dave are plotting something"))
    room, gap = np.zeros(RATE, np.float32), np.zeros(round(0.4 * RATE), np.float32)

    base, _, events = at_round_end()
    rec = SecondLook(["pause", "pause"] + ["frank and dave are plotting something"] * 4, words_after=3)
    live = Listener(base.engine, rec, new_endpointer=lambda: Endpointer(webrtc_classifier()))
    assert live.endpointers["A"].provisional == pytest.approx(SECOND_OPINION_HOLD)
    got = utterances_of(live, "A", np.concatenate([room, words, gap, talk, room]), FRAME)
    assert next(e["text"] for e in events if e["type"] == "heard") == "pause", "heard, and held"
    assert len(got) == 2 and got[1].start == got[0].start, "the talk continued the utterance"
    assert [e["intent"] for e in events if e["type"] == "command"] == ["start", "appoint"], "no pause"
    assert base.engine.in_state("round.running")

    # "pause ... the game": the whole it became is a command, held and taken in its turn.
    base, _, events = at_round_end()
    rec = SecondLook(["pause"] * 8, words_after=3)
    live = Listener(base.engine, rec, new_endpointer=lambda: Endpointer(webrtc_classifier()))
    got = utterances_of(live, "A", np.concatenate([room, words, gap, talk, room]), FRAME)
    assert len(got) == 2 and got[1].start == got[0].start and got[1].provisional_until is not None
    assert [e["intent"] for e in events if e["type"] == "command"] == ["start", "appoint", "pause"]
    assert live.withdrawn == ["pause"], "the first part's, not the whole's"

    base, _, events = at_round_end()
    live = Listener(base.engine, SecondLook(["pause", "pause"], words_after=3),
                    new_endpointer=lambda: Endpointer(webrtc_classifier()))
    audio = np.concatenate([room, words, room])
    fed, paused_at = 0, None
    while fed < len(audio):
        live.feed("A", audio[fed : fed + FRAME], RATE, fed / RATE)
        fed += FRAME
        if paused_at is None and base.engine.in_state("round.paused"):
            paused_at = fed / RATE
    assert [e["intent"] for e in events if e["type"] == "command"] == ["start", "appoint", "pause"]
    closed = live.endpointers["A"]
    assert paused_at is not None, "nobody went on: taken"
    # Taken once the long hangover has passed after the words, as the close without the short hangover would be.
    spoken_end = 1.0 + len(words) / RATE
    assert spoken_end + LONG - 0.1 < paused_at < spoken_end + LONG + 0.1 and closed.now is not None


class HeardAs(SecondLook):
    """A slow second opinion whose decodes are the transcripts given, in order (guesses included)."""

    def __init__(self, heard: list[Transcript]) -> None:
        super().__init__(["pause"] * len(heard), words_after=3)
        self.heard = list(heard)

    def fork(self) -> HeardAs:
        other = HeardAs(self.heard)
        self.forks.append(other)
        return other

    def recognize(self, samples: np.ndarray, rate: int) -> Transcript:
        super().recognize(samples, rate)
        return self.heard.pop(0)


def test_a_command_continued_by_what_adds_no_command_of_its_own_stands(tmp_path: Path) -> None:
    """"hostages Dave and Erin", then a burst of babble as loud: the whole, decoded, is no command, and its rejected
    guess is the very command dropped for it. That command stands; a guess of another command does not restore it."""
    words = trimmed(spoken(tmp_path, "pause"))
    burst = trimmed(spoken(tmp_path, "Frank and Dave are plotting something"))
    room, gap = np.zeros(RATE, np.float32), np.zeros(round(0.4 * RATE), np.float32)
    for guess, taken in (("pause", ["start", "appoint", "pause"]), ("time left", ["start", "appoint"])):
        base, _, events = at_round_end()
        first = Transcript("pause", 0.9)
        live = Listener(base.engine, HeardAs([first, first] + [Transcript("", 0.3, guess=guess)] * 4),
                        new_endpointer=lambda: Endpointer(webrtc_classifier()))
        got = utterances_of(live, "A", np.concatenate([room, words, gap, burst, room]), FRAME)
        assert len(got) == 2 and got[1].start == got[0].start and got[1].continued == 1
        assert [e["intent"] for e in events if e["type"] == "command"] == taken, guess
        assert (live.withdrawn, live.restored) == (([], ["pause"]) if guess == "pause" else (["pause"], [])), guess


def test_the_moderators_voice_starting_again_does_not_continue_a_players_command() -> None:
    """The moderator's reply can start within the 0.35 s a command closed early is held: its own voice is not the
    player going on, so no onset continues a command while the moderator is audible."""
    from types import SimpleNamespace

    base, _, _ = at_round_end()
    live = Listener(base.engine, SecondLook([], words_after=3), new_endpointer=lambda: Endpointer(webrtc_classifier()))
    assert live.endpointers["A"].may_continue is not None
    assert live.endpointers["A"].may_continue(1.0, 1.5), "without an echo path, any loud onset may go on"
    assert not Listener._not_the_moderator(SimpleNamespace(echo=_Echo(True)), "A", 1.0, 1.5)  # type: ignore[arg-type]
    assert Listener._not_the_moderator(SimpleNamespace(echo=_Echo(False)), "A", 1.0, 1.5)  # type: ignore[arg-type]


def test_a_held_command_is_taken_when_the_audio_ends_and_an_answer_is_never_held(tmp_path: Path) -> None:
    base, _, _ = at_round_end()
    live = Listener(base.engine, SecondLook(["pause", "pause"], words_after=3),
                    new_endpointer=lambda: Endpointer(webrtc_classifier()))
    words = spoken(tmp_path, "pause")
    end = np.concatenate([np.zeros(RATE, np.float32), words, np.zeros(round(0.3 * RATE), np.float32)])
    assert len(utterances_of(live, "A", end, FRAME)) == 1 and not base.engine.in_state("round.paused")
    live.flush()
    assert base.engine.in_state("round.paused")
    assert not live._holds(Transcript("yes", 0.9)) and live._holds(Transcript("how much time is left", 0.9))


def _asked_in_b(*then: Transcript, **options: object) -> tuple[Listener, QueuedRecognizer, list[dict]]:
    """Room B's leader nearly heard ("did you say ...?" asked about it at t = 1), then ``then`` decoded in turn."""
    listener, _, events = at_round_end(dict(options))
    rec = QueuedRecognizer(Transcript("", 0.4, guess="frank appoints", question="frank appoints erin as leader"), *then)
    listener.recognizer = rec
    listener.recognizers = dict.fromkeys(listener.recognizers, rec)  # type: ignore[arg-type]
    assert not listener.hear("B", utterance(1.0))
    return listener, rec, events


def test_a_command_nearly_heard_is_asked_about_and_a_yes_heard_with_the_answers_alone_acts_on_it() -> None:
    listener, rec, events = _asked_in_b(Transcript("", 0.0), Transcript("yes", 0.8))
    asked = [e for e in events if e.get("key") == "asked"]
    assert [(e["room"], e["text"]) for e in asked] == [("B", "Did you say: Frank appoints Erin as leader? Yes or no.")]
    assert listener.engine.state.rooms["B"].leader is None, "a question is not a command"
    assert not [e for e in events if e.get("key") == "pardon"], "the question stands for \"sorry, say that again\""
    assert listener.hear("B", utterance(5.0))
    assert rec.decodes[-1] == ["confirm"], "the answer, missed by the phase's grammar, heard with yes and no alone"
    assert listener.engine.state.rooms["B"].leader == "Erin"
    command = [e for e in events if e["type"] == "command"][-1]
    assert (command["room"], command["intent"], command["text"]) == ("B", "appoint", "frank appoints erin as leader")
    assert listener.asked("B") is None, "answered: nothing waits"


def test_a_no_to_the_question_asks_for_the_command_again_and_acts_on_nothing() -> None:
    listener, _, events = _asked_in_b(Transcript("", 0.0), Transcript("no", 0.8))
    assert not listener.hear("B", utterance(5.0))
    assert events[-1]["key"] == "asked.no" and events[-1]["room"] == "B"
    assert listener.engine.state.rooms["B"].leader is None and listener.asked("B") is None
    assert not [e for e in events if e["type"] == "command"][2:], "only the set-up's two commands"


def test_a_question_ends_at_another_command_or_after_a_while_and_waits_only_in_its_room() -> None:
    # Another command in its place: acted on as heard, and the question dropped.
    listener, rec, events = _asked_in_b(Transcript("how much time is left", 0.9))
    assert listener.hear("B", utterance(4.0)) and listener.asked("B") is None
    assert [e["intent"] for e in events if e["type"] == "command"][-1] == "time"
    # Room A's talk is not decoded as an answer to room B's question.
    listener, rec, events = _asked_in_b(Transcript("", 0.0))
    assert not listener.hear("A", utterance(4.0)) and ["confirm"] not in rec.decodes
    # Too late: not decoded as an answer, nor with "yes" and "no" among the phase's commands, and the question is
    # gone once a command comes.
    listener, rec, events = _asked_in_b(Transcript("", 0.0), Transcript("yes", 0.8))
    assert not listener.hear("B", utterance(1.0 + ASK_WAITS + 1.0 + 1.0)) and ["confirm"] not in rec.decodes
    assert "confirm" not in (rec.decodes[-1] or []) and listener.asked("B") is None
    assert listener.engine.state.rooms["B"].leader is None


def test_while_a_question_waits_its_yes_and_no_are_commands_of_the_phase_in_its_room_alone() -> None:
    """A clean "no" decoded with the round's commands alone came out as "help" (``benchmarks.adaptation.answered``),
    which dropped the question and said the help: while it waits, the room's phase grammar has "yes" and "no" too."""
    listener, rec, events = _asked_in_b(Transcript("", 0.0), Transcript("no", 0.9))
    assert not listener.hear("A", utterance(3.0)) and "confirm" not in (rec.decodes[-1] or [])
    assert not listener.hear("B", utterance(4.0))
    assert "confirm" in (rec.decodes[-1] or []) and "appoint" in (rec.decodes[-1] or []), "the phase's, and the answers"
    assert events[-1]["key"] == "asked.no" and listener.asked("B") is None
    listener.listen_for_current_phase("B")
    assert "confirm" not in listener._expecting["B"][2], "answered: the phase's commands alone again"


def test_no_question_is_asked_with_asking_off_or_while_a_read_back_waits_for_its_own_yes() -> None:
    listener, _, events = _asked_in_b(ask=False)
    assert not [e for e in events if e.get("key") == "asked"] and listener.asked("B") is None
    engine, events = hostage_phase_engine()
    assert engine.handle_text("hostages Bob", "A", spoken=True) and engine.state.rooms["A"].pending == ["Bob"]
    rec = QueuedRecognizer(Transcript("", 0.4, question="three votes for bob"))
    listener = Listener(engine, rec, new_endpointer=lambda: Endpointer(webrtc_classifier()))  # type: ignore[arg-type]
    rec.heard.insert(1, Transcript("", 0.0))  # the answers-only decode of the read-back's room hears nothing
    assert not listener.hear("A", utterance()) and listener.asked("A") is None
    assert not [e for e in events if e.get("key") == "asked"]


def test_a_question_about_an_utterance_closed_early_waits_for_the_talker_to_stop(tmp_path: Path) -> None:
    """Not "did you say ...?" in the middle of what the player is still saying: the question is held as a command is
    (``SECOND_OPINION_HOLD``), and dropped, not asked, when the talker goes on."""
    words = trimmed(spoken(tmp_path, "pause"))
    talk = trimmed(spoken(tmp_path, "Frank and Dave are plotting something"))
    room, gap = np.zeros(RATE, np.float32), np.zeros(round(0.4 * RATE), np.float32)
    near = Transcript("", 0.4, question="pause")
    base, _, events = at_round_end()
    live = Listener(base.engine, HeardAs([near, near] + [Transcript("how much time is left", 0.9)] * 4),
                    new_endpointer=lambda: Endpointer(webrtc_classifier()))
    got = utterances_of(live, "A", np.concatenate([room, words, gap, talk, room]), FRAME)
    assert len(got) == 2 and got[1].start == got[0].start, "the talk continued the utterance"
    assert not [e for e in events if e.get("key") == "asked"] and live.asked("A") is None
    assert [e["intent"] for e in events if e["type"] == "command"][-1] == "time" and live.withdrawn == []
    # Nobody goes on: asked once the hold has passed.
    base, _, events = at_round_end()
    live = Listener(base.engine, HeardAs([near, near]), new_endpointer=lambda: Endpointer(webrtc_classifier()))
    assert len(utterances_of(live, "A", np.concatenate([room, words, room]), FRAME)) == 1
    assert [e["text"] for e in events if e.get("key") == "asked"] == ["Did you say: pause? Yes or no."]
    assert live.asked("A") is not None and live._holds(Transcript("", 0.4, question="pause"))


def test_no_question_is_asked_in_the_reveal_where_a_yes_in_the_group_s_talk_would_decide_the_game() -> None:
    from benchmarks.phases import phase_engine

    for phase, asked in (("reveal", False), ("hostages", True)):
        engine = phase_engine(phase, ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi"])
        events: list[dict] = []
        engine.subscribe(events.append)
        question = "the bomber is bob" if phase == "reveal" else "hostages bob"
        listener = Listener(engine, QueuedRecognizer(Transcript("", 0.4, question=question)),  # type: ignore[arg-type]
                            mics=(None,), new_endpointer=lambda: Endpointer(webrtc_classifier()))
        assert not listener.hear(None, utterance(1.0))
        assert (listener.asked(None) is not None) is asked, phase
        assert len([e for e in events if e.get("key") == "asked"]) == asked, phase
