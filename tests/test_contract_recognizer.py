"""The ``Recognizer`` port's contract, run against the fake (``ScriptedRecognizer``) and the real adapter
(pocketsphinx, in the game's process and in a decoding process of its own).

Each adapter is given the same lines: the real one hears them said by flite, the fake is scripted with them.
Where the fake does not keep a promise of the port, its test is a strict xfail that says what it lacks (the
fix belongs in ``tests/fake_recognizer.py``; the xfail then fails, and is removed).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from fake_recognizer import ScriptedRecognizer

from moderator.audio.clip import Clip
from moderator.audio.resample import StreamResampler
from moderator.ports import Transcript
from moderator.speech.grammar import Grammar, Parsed, load_grammar
from moderator.speech.template import normalize

RATE = 16000
ROSTER = ["Alice", "Bob", "Carol"]
NEW_NAME = "Xiomara"  # not in pocketsphinx's dictionary either: its pronunciation is made up


@dataclass
class Adapter:
    """How a contract test gets a recognizer of one kind, and says a line to it."""

    id: str
    kind: type
    make: Callable[[], Any]
    say: Callable[[Any, str, int], np.ndarray]
    """The audio of ``text`` at ``rate`` Hz, as this recognizer will hear it."""
    fake: bool = False
    made: list[Any] = field(default_factory=list)

    @property
    def streams(self) -> bool:
        return all(callable(getattr(self.kind, m, None)) for m in ("begin", "accept", "finish", "fork"))

    def new(self) -> Any:
        rec = self.make()
        self.made.append(rec)
        return rec


def scripted_line(rec: ScriptedRecognizer, text: str, rate: int) -> np.ndarray:
    """The fake "hears" its script: the line goes on it, and the audio is a second of quiet noise."""
    rec.texts.append(" ".join(w.lower() for w in normalize(text)))
    return np.random.default_rng(0).normal(0, 1e-3, rate).astype(np.float32)


@pytest.fixture(scope="module")
def flite(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Any, str, int], np.ndarray]:
    """A line said by flite's rms voice, at any rate (cached per line)."""
    if shutil.which("flite") is None:
        pytest.skip("flite is not installed (apt-get install flite); it says the lines to the real recognizer")
    folder = tmp_path_factory.mktemp("contract-flite")
    clips: dict[str, Clip] = {}

    def say(rec: Any, text: str, rate: int) -> np.ndarray:
        if text not in clips:
            path = folder / f"{len(clips)}.wav"
            subprocess.run(["flite", "-voice", "rms", "-t", text, "-o", str(path)], check=True, timeout=30)
            clips[text] = Clip.read(path)
        clip = clips[text]
        if clip.rate == rate:
            return clip.samples
        # Band-limited, as a sound card records it (linear interpolation up would add images above 8 kHz).
        to_rate = StreamResampler(rate)
        head, _ = to_rate(clip.samples, clip.rate, 0.0)
        return np.concatenate([head, to_rate.flush()[0]])

    return say


@pytest.fixture(params=["fake", "pocketsphinx", "pocketsphinx-worker"])
def adapter(request: pytest.FixtureRequest) -> Iterator[Adapter]:
    if request.param == "fake":
        made = Adapter("fake", ScriptedRecognizer, lambda: ScriptedRecognizer([]), scripted_line, fake=True)
    else:
        pytest.importorskip("pocketsphinx")
        from moderator.adapters.asr_pocketsphinx import PocketsphinxRecognizer

        worker = request.param.endswith("worker")
        made = Adapter(request.param, PocketsphinxRecognizer, lambda: PocketsphinxRecognizer(worker=worker),
                       request.getfixturevalue("flite"))
    yield made
    for rec in made.made:
        if callable(close := getattr(rec, "close", None)):
            close()


@pytest.fixture(scope="module")
def grammar() -> Grammar:
    return load_grammar("en")


def fake_lacks(request: pytest.FixtureRequest, adapter: Adapter, what: str) -> None:
    """Mark this test a strict xfail for the fake, which does not keep this promise of the port."""
    if adapter.fake:
        request.node.add_marker(pytest.mark.xfail(strict=True, reason=f"ScriptedRecognizer {what}"))


def valid(heard: object) -> Transcript:
    """A ``Transcript`` as the port describes it: lowercase words, a confidence from 0 to 1."""
    assert isinstance(heard, Transcript)
    assert heard.text == heard.text.lower() and heard.text == heard.text.strip()
    assert 0.0 <= heard.confidence <= 1.0
    assert not (heard.text and heard.guess), "a guess is only for a rejected (empty) transcript"
    return heard


# -- batch: one utterance at a time ------------------------------------------------------------------------


def test_recognize_before_expect_is_a_clear_error(request: pytest.FixtureRequest, adapter: Adapter) -> None:
    fake_lacks(request, adapter, "does not check that expect() came first")
    rec = adapter.new()
    audio = adapter.say(rec, "start the game", RATE)
    with pytest.raises(Exception, match=r"expect\(\)"):
        rec.recognize(audio, RATE)


def test_an_expected_command_comes_back_as_a_transcript_the_grammar_parses(adapter: Adapter, grammar: Grammar) -> None:
    rec = adapter.new()
    rec.expect(grammar, ROSTER)
    for line, intent in (("start the game", "start"), ("hostages Bob and Carol", "hostages")):
        heard = valid(rec.recognize(adapter.say(rec, line, RATE), RATE))
        parsed = grammar.parse(heard.text, ROSTER)
        assert isinstance(parsed, Parsed) and parsed.intent == intent, heard
        assert heard.confidence >= 0.5


def test_chatter_gives_a_transcript_too(adapter: Adapter, grammar: Grammar) -> None:
    rec = adapter.new()
    rec.expect(grammar, ROSTER)
    valid(rec.recognize(adapter.say(rec, "did anyone see where I left my drink", RATE), RATE))


def test_audio_at_any_rate_is_heard(request: pytest.FixtureRequest, adapter: Adapter, grammar: Grammar) -> None:
    fake_lacks(request, adapter, "asserts 16 kHz audio (the listening loop's rate), where the port takes any rate")
    rec = adapter.new()
    rec.expect(grammar, ROSTER)
    for rate in (22050, 44100, 48000):
        assert valid(rec.recognize(adapter.say(rec, "start the game", rate), rate)).text == "start the game", rate


def test_empty_and_near_empty_audio_give_empty_text(request: pytest.FixtureRequest, adapter: Adapter,
                                                    grammar: Grammar) -> None:
    fake_lacks(request, adapter, "asserts a whole utterance (over 0.25 s) and pops its script")
    rec = adapter.new()
    rec.expect(grammar, ROSTER)
    for n in (0, 1, 159, 1600):  # nothing, less than a 10 ms frame, 0.1 s of silence
        assert valid(rec.recognize(np.zeros(n, np.float32), RATE)).text == "", n


def test_a_new_roster_changes_what_can_be_heard(request: pytest.FixtureRequest, adapter: Adapter,
                                               grammar: Grammar) -> None:
    fake_lacks(request, adapter, "returns its script whatever roster it was told to expect")
    rec = adapter.new()
    line = f"hostage {NEW_NAME}"
    rec.expect(grammar, ROSTER)
    assert valid(rec.recognize(adapter.say(rec, line, RATE), RATE)).text != line.lower()
    rec.expect(grammar, [*ROSTER, NEW_NAME])
    assert valid(rec.recognize(adapter.say(rec, line, RATE), RATE)).text == line.lower()
    rec.expect(grammar, ROSTER)  # and back: the name is gone again
    assert valid(rec.recognize(adapter.say(rec, line, RATE), RATE)).text != line.lower()


def test_only_the_expected_intents_are_heard(request: pytest.FixtureRequest, adapter: Adapter,
                                            grammar: Grammar) -> None:
    fake_lacks(request, adapter, "records the intents it is told to expect but returns its script regardless")
    rec = adapter.new()
    rec.expect(grammar, ROSTER, ["start"])  # before the game
    assert valid(rec.recognize(adapter.say(rec, "pause", RATE), RATE)).text == ""
    assert valid(rec.recognize(adapter.say(rec, "start the game", RATE), RATE)).text == "start the game"
    rec.expect(grammar, ROSTER, [intent for intent in grammar.intents if intent != "start"])  # once it has begun
    assert valid(rec.recognize(adapter.say(rec, "pause", RATE), RATE)).text == "pause"
    assert valid(rec.recognize(adapter.say(rec, "start the game", RATE), RATE)).text == ""


# -- streaming: decoding while the player speaks ------------------------------------------------------------


@pytest.fixture
def streaming(adapter: Adapter) -> Adapter:
    if not adapter.streams:
        pytest.skip(f"{adapter.id} does not stream (no begin/accept/finish/fork): the listening loop decodes "
                    "each utterance once it has ended")
    return adapter


def chunks(audio: np.ndarray, size: int = RATE // 10) -> list[np.ndarray]:
    return [audio[i : i + size] for i in range(0, len(audio), size)]


def test_a_stream_needs_expect_then_begin(streaming: Adapter, grammar: Grammar) -> None:
    rec = streaming.new()
    rec.expect(grammar, ROSTER)
    other = rec.fork()
    streaming.made.append(other)
    with pytest.raises(Exception, match=r"expect\(\)"):  # a fork listens for nothing until told what
        other.begin()
    other.expect(grammar, ROSTER)
    with pytest.raises(Exception, match=r"begin\(\)"):
        other.accept(np.zeros(RATE // 10, np.float32), RATE)
    other.finish()  # no stream open: nothing to end


def test_a_stream_gives_the_words_so_far_and_ends_as_recognize_would(streaming: Adapter, grammar: Grammar) -> None:
    rec = streaming.new()
    rec.expect(grammar, ROSTER)
    audio = streaming.say(rec, "start the game", RATE)
    rec.begin()
    partials = [rec.accept(piece, RATE) for piece in chunks(audio)]
    rec.finish()
    rec.finish()  # twice is harmless
    assert all(isinstance(p, str) and p == p.lower() for p in partials)
    assert partials[-1] == "start the game" and partials[0] != partials[-1]
    assert valid(rec.recognize(audio, RATE)).text == "start the game"


def test_forks_stream_two_rooms_at_once(streaming: Adapter, grammar: Grammar) -> None:
    rec = streaming.new()
    rec.expect(grammar, ROSTER)
    room_a, room_b = rec.fork(), rec.fork()
    streaming.made += [room_a, room_b]
    assert room_a is not room_b and room_a is not rec
    said = {"a": streaming.say(room_a, "start the game", RATE), "b": streaming.say(room_b, "pause", RATE)}
    last = {"a": "", "b": ""}
    for fork in (room_a, room_b):
        fork.expect(grammar, ROSTER)
        fork.begin()
    pieces = {key: chunks(audio) for key, audio in said.items()}
    for i in range(max(map(len, pieces.values()))):  # both rooms speak at once: interleaved
        for key, fork in (("a", room_a), ("b", room_b)):
            if i < len(pieces[key]):
                last[key] = fork.accept(pieces[key][i], RATE)
    for fork in (room_a, room_b):
        fork.finish()
    assert last == {"a": "start the game", "b": "pause"}
