"""The listening loop with real endpointing and a scripted recognizer (the engines have their own suites)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from tests_support import eight_player_engine

from moderator.audio.clip import Clip
from moderator.audio.endpoint import RATE, Endpointer, webrtc_classifier
from moderator.loop import Listener
from moderator.ports import Transcript


class ScriptedRecognizer:
    """Returns the given transcripts in order, and records what it was told to expect."""

    name = "scripted"

    def __init__(self, texts: list[str]) -> None:
        self.texts = list(texts)
        self.expected: list[list[str]] = []

    def expect(self, grammar, roster, intents=None) -> None:  # type: ignore[no-untyped-def]
        self.expected.append(list(intents or []))

    def recognize(self, samples: np.ndarray, rate: int) -> Transcript:
        assert rate == RATE and len(samples) > RATE // 4
        return Transcript(self.texts.pop(0), 0.9)


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
    assert "start" in rec.expected[0] and "appoint" not in rec.expected[0]
    assert "appoint" in rec.expected[1] and "start" not in rec.expected[1]


def test_half_duplex_ignores_the_room_while_the_moderator_speaks(tmp_path: Path) -> None:
    engine = eight_player_engine()
    engine.begin()
    rec = ScriptedRecognizer(["start the game"])
    speaking = {"A": 5.0, "B": 0.0}
    listener = Listener(engine, rec, new_endpointer=lambda: Endpointer(webrtc_classifier()),
                        speaking_until=speaking.__getitem__)
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
