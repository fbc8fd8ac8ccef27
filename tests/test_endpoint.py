"""Endpointing with the real WebRTC VAD on synthesized speech, fed in real-time-sized chunks."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from moderator.audio.clip import Clip
from moderator.audio.endpoint import RATE, Endpointer, webrtc_classifier


def speech(tmp_path: Path, text: str) -> np.ndarray:
    if shutil.which("flite") is None:
        pytest.skip("flite is not installed (apt-get install flite); it synthesizes the test speech")
    wav = tmp_path / "s.wav"
    subprocess.run(["flite", "-voice", "slt", "-t", text, "-o", str(wav)], check=True)
    return Clip.read(wav).resample(RATE).samples


def feed_all(ep: Endpointer, audio: np.ndarray, chunk: int = 1600) -> list:
    out = []
    for i in range(0, len(audio), chunk):
        out += ep.feed(audio[i : i + chunk], i / RATE)
    return out


def test_two_commands_with_a_pause_are_two_utterances_at_the_right_times(tmp_path: Path) -> None:
    a = speech(tmp_path, "I appoint Alice as leader")
    b = speech(tmp_path, "hostages Bob and Carol")
    silence = np.zeros(RATE, np.float32)
    audio = np.concatenate([silence, a, silence, silence, b, silence])
    got = feed_all(Endpointer(webrtc_classifier()), audio)
    assert len(got) == 2
    starts = [1.0, 3.0 + len(a) / RATE]
    for utt, start in zip(got, starts, strict=True):
        assert abs(utt.start - start) < 0.4, (utt.start, start)
    assert abs(got[0].end - (1.0 + len(a) / RATE)) < 0.8


def test_silence_and_noise_floor_give_nothing() -> None:
    rng = np.random.default_rng(0)
    audio = (rng.normal(0, 0.001, RATE * 3)).astype(np.float32)
    assert feed_all(Endpointer(webrtc_classifier()), audio) == []


def test_reset_drops_speech_in_progress_and_a_gap_restarts(tmp_path: Path) -> None:
    a = speech(tmp_path, "how much time is left")
    ep = Endpointer(webrtc_classifier())
    half = len(a) // 2
    assert ep.feed(a[:half], 0.0) == []
    ep.reset()
    assert ep.feed(np.zeros(RATE, np.float32), 10.0) == []


def test_an_endless_talker_is_cut_at_max_seconds() -> None:
    ep = Endpointer(lambda frame: True, max_seconds=2.0)
    got = feed_all(ep, np.full(RATE * 5, 0.1, np.float32))
    assert len(got) == 2 and all(abs((u.end - u.start) - 2.0) < 0.05 for u in got)
