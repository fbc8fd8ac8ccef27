"""``simulate --noise``: the microphones hear the party between commands too, as live ones do, with no gap in
either room's stream (a gap made the endpointer forget an utterance that the noise still kept open)."""

from __future__ import annotations

import shutil
from itertools import pairwise

import numpy as np
import pytest
from fake_recognizer import ScriptedRecognizer
from tests_support import eight_player_engine

from moderator.adapters.player_voice import speak
from moderator.audio.endpoint import RATE, Endpointer, webrtc_classifier
from moderator.loop import Listener
from moderator.scenario import Step
from moderator.voice_input import LEAD_IN, PARTY_BEFORE, VoiceDelivery


class Recording(Listener):
    """A Listener that notes, per microphone, the audio time span of every chunk it is fed and its level."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.chunks: dict[str | None, list[tuple[float, float, float]]] = {"A": [], "B": []}

    def feed(self, mic, samples, rate, t):  # type: ignore[no-untyped-def]
        self.chunks[mic].append((t, t + len(samples) / rate, float(np.sqrt(np.mean(np.square(samples))))))
        return super().feed(mic, samples, rate, t)


def delivered(noise: np.ndarray | None, said: list | None = None) -> Recording:
    if shutil.which("flite") is None:
        pytest.skip("flite is not installed (apt-get install flite); it is the players' voice")
    engine = eight_player_engine()
    engine.begin()
    listener = Recording(engine, ScriptedRecognizer([""] * 50),
                         new_endpointer=lambda: Endpointer(webrtc_classifier()))
    delivery = VoiceDelivery(listener, lambda text: speak(text, "flite:rms"), noise=noise, snr=12.0)
    delivery(engine, engine.clock, Step(0, 1.0, "A", say="start the game"))  # type: ignore[arg-type]
    delivery.fill(engine, engine.clock, 12.0)
    delivery(engine, engine.clock, Step(1, 12.0, "B", say="pause"))  # type: ignore[arg-type]
    if said is not None:
        said += delivery.said
    return listener


def test_with_noise_both_rooms_hear_the_party_without_a_gap() -> None:
    noise = np.random.default_rng(0).normal(0, 0.1, 10 * RATE).astype(np.float32)
    listener = delivered(noise)
    for mic in ("A", "B"):
        spans = listener.chunks[mic]
        assert spans, f"room {mic}'s microphone heard nothing"
        assert all(abs(b[0] - a[1]) < 1e-6 for a, b in pairwise(spans)), f"a gap in room {mic}'s stream"
        assert spans[-1][1] >= 12.0
        between = [level for start, end, level in spans if start >= 6.0 and end <= 11.0]
        assert between and min(between) > 0.0  # the party, not silence, between the two lines


def test_without_noise_only_the_speakers_microphone_hears_each_line() -> None:
    listener = delivered(None)
    assert all(start < 6.0 for start, _, _ in listener.chunks["A"])  # nothing fed between the lines
    assert all(start >= 12.0 for start, _, _ in listener.chunks["B"])


def test_with_noise_the_party_is_heard_before_the_first_line_and_only_the_first() -> None:
    """A party does not start when the host first speaks: the endpointer hears PARTY_BEFORE seconds of it first."""
    noise = np.random.default_rng(1).normal(0, 0.1, 10 * RATE).astype(np.float32)
    said: list = []
    listener = delivered(noise, said)
    (room, first, _), (_, second, _) = said
    assert room == "A" and first == PARTY_BEFORE + LEAD_IN  # said as the clock's time 0 came
    assert second >= 12.0 + LEAD_IN and second < 12.0 + LEAD_IN + 1.0, "later lines: only their lead-in"
    for mic in ("A", "B"):
        before = [level for start, end, level in listener.chunks[mic] if end <= PARTY_BEFORE]
        assert len(before) >= 10 * PARTY_BEFORE - 1 and min(before) > 0.0, mic
    quiet: list = []
    delivered(None, quiet)
    assert quiet[0][1] == LEAD_IN, "no party, no wait"
