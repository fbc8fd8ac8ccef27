"""``moderator listen``, the mic check: levels and utterances parsed against the whole grammar; its errors;
and the real path through a PulseAudio pipe-source microphone."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fake_recognizer import ScriptedRecognizer
from fake_sd_in import FakeInSD
from fakes import FakeAudioIn
from pulse import PulseBench

from moderator import cli
from moderator.adapters.audio_system import AudioSystem
from moderator.adapters.clock import VirtualClock
from moderator.audio.resample import StreamResampler
from moderator.commands.listen import MicCheck
from moderator.env import Environment
from moderator.speech.grammar import load_grammar

ROSTER = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi"]
PLAYERS = ",".join(ROSTER)


def spoken(text: str) -> np.ndarray:
    """``text`` said by flite's rms voice, at 16 kHz."""
    if shutil.which("flite") is None:
        pytest.skip("flite is not installed (apt-get install flite); it synthesizes the test speech")
    from moderator.adapters.player_voice import speak

    return speak(text, "flite:rms").resample(16000).samples


def padded(samples: np.ndarray) -> np.ndarray:
    gap = np.zeros(16000, np.float32)
    return np.concatenate([gap, samples, gap])


def env() -> Environment:
    return Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())


def test_each_utterance_is_shown_with_what_it_parses_to_or_why_not() -> None:
    mics = FakeAudioIn(("A", "B"))
    mics.push("A", padded(spoken("I appoint Alice as leader")), t=100.0)
    mics.push("B", padded(spoken("pass the chips please")), t=100.0)
    out = io.StringIO()
    clock = VirtualClock(100.0)
    check = MicCheck(mics, ScriptedRecognizer(["i appoint alice as leader", "pass the chips please"]),
                     load_grammar(), ROSTER, clock, out, as_json=True)
    check.step(mics.read())
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(r["room"], r["heard"], r["intent"], r["slots"]) for r in lines] == [
        ("A", "i appoint alice as leader", "appoint", {"player": "Alice"}),
        ("B", "pass the chips please", None, None),
    ]
    assert lines[1]["rejected"]
    assert 0.7 < lines[0]["start"] < 1.2 and lines[0]["end"] > lines[0]["start"] + 1.0
    assert lines[0]["confidence"] == 0.9


def test_levels_are_shown_once_a_second_per_room() -> None:
    mics = FakeAudioIn(("A", "B"))
    clock = VirtualClock(0.0)
    out = io.StringIO()
    check = MicCheck(mics, ScriptedRecognizer([]), load_grammar(), ROSTER, clock, out)
    mics.push("A", np.full(8000, 0.1, np.float32))
    check.step(mics.read())
    assert out.getvalue() == ""
    clock.advance(1.0)
    check.step([])
    assert out.getvalue() == "   1.0  level  room A  -20 dB |#############       |   room B (no audio)\n"
    mics.push("A", np.zeros(1600, np.float32))
    clock.advance(1.0)
    check.step(mics.read())
    assert out.getvalue().splitlines()[-1] == "   2.0  level  room A silent |                    |   room B (no audio)"


def test_a_shared_microphone_reports_without_a_room() -> None:
    mics = FakeAudioIn((None,))
    mics.push(None, padded(spoken("hostages Bob and Carol")))
    out = io.StringIO()
    MicCheck(mics, ScriptedRecognizer(["hostages bob and carol"]), load_grammar(), ROSTER, VirtualClock(), out
             ).step(mics.read())
    assert out.getvalue().endswith("shared  heard 'hostages bob and carol' (0.90) -> hostages "
                                   '{"players": ["Bob", "Carol"]}\n')


class Fed:
    """An endpointer that only records what it is fed."""

    def __init__(self) -> None:
        self.fed: list[tuple[np.ndarray, float]] = []

    def feed(self, audio: np.ndarray, t: float) -> list:
        self.fed.append((audio, t))
        return []


def test_each_microphone_is_resampled_as_one_stream_on_exact_times() -> None:
    mics = FakeAudioIn(("A", "B"))
    rng = np.random.default_rng(3)
    a = rng.uniform(-0.5, 0.5, 48000).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, 44100).astype(np.float32)
    mics.push("A", a, rate=48000, t=5.0, chunk=4801 / 48000)  # odd chunk sizes, no whole 16 kHz sample count
    mics.push("B", b, rate=44100, t=5.0, chunk=301 / 44100)
    check = MicCheck(mics, ScriptedRecognizer([]), load_grammar(), ROSTER, VirtualClock(5.0), io.StringIO(),
                     endpointer=Fed)
    check.step(mics.read())
    for mic, x, rate in (("A", a, 48000), ("B", b, 44100)):
        whole = StreamResampler(16000)
        head, _ = whole(x, rate, 5.0)
        expected = np.concatenate([head, whole.flush()[0]])
        fed = check.endpointers[mic].fed  # type: ignore[attr-defined]
        got = np.concatenate([audio for audio, _ in fed])
        np.testing.assert_allclose(got, expected[: len(got)], rtol=0, atol=1e-6)
        assert len(expected) - len(got) < 50  # only the last millisecond or so waits for more
        at = 5.0
        for audio, t in fed:  # each chunk's time stamp is that of its first 16 kHz sample
            if len(audio):
                assert t == pytest.approx(at, abs=1e-9)
                at = t + len(audio) / 16000


def test_listen_needs_a_microphone_and_names_unknown_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    e = env()
    assert cli.main(["listen", "--players", PLAYERS, "--engine", "pocketsphinx"], e) == 2  # a usage error
    assert "name the microphones to check: --room-a-in" in e.stderr.getvalue()
    e = env()
    e.audio = AudioSystem(sounddevice=FakeInSD, pulse=lambda: None)  # no Pulse server: PortAudio only
    assert cli.main(["listen", "--players", PLAYERS, "--engine", "pocketsphinx", "--mic", "nope"], e) == 1
    assert e.stderr.getvalue() == (
        "moderator: error: unknown input device (microphone) 'nope'; available: 0 pulse, 2 USB Mic, 3 Webcam Mic, "
        "4 default\n"
    )


def test_listen_reports_a_missing_vosk_model(tmp_path: Path) -> None:
    e = env()
    code = cli.main(["listen", "--players", PLAYERS, "--engine", "vosk", "--vosk-model", str(tmp_path / "none"),
                     "--mic", "0"], e)
    assert code == 1
    assert f"no usable vosk model at {tmp_path / 'none'}" in e.stderr.getvalue()


# --- the real device path ----------------------------------------------------------------------------------------


@pytest.mark.pulse
def test_listen_through_a_pipe_source_microphone_prints_the_parsed_command(bench: PulseBench) -> None:
    speech = spoken("I appoint Alice as leader")
    with bench.pipe_mic("micListen") as mic:
        proc = subprocess.Popen(
            [sys.executable, "-m", "moderator", "listen", "--players", PLAYERS, "--room-b-in", "micListen",
             "--engine", "pocketsphinx", "--seconds", "4", "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=bench.env,
        )
        assert proc.stderr is not None
        banner = proc.stderr.readline()
        assert banner.startswith("(listening: room B, with pocketsphinx"), banner + proc.stderr.read()
        mic.say(np.concatenate([np.zeros(8000, np.float32), speech]))
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    [result] = [json.loads(line) for line in out.splitlines()]
    # (how well the words are recognized is tests/test_recognize_pocketsphinx.py's business)
    assert (result["room"], result["intent"], result["slots"]["player"]) == ("B", "appoint", "Alice"), result
