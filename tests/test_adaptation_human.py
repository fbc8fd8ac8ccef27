"""The human-speech check of benchmarks.adaptation: the recordings heard as recorded, in babble, and as the game hears
them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from benchmarks.adaptation import (
    AUTO_PATH,
    FLOOR_COLOURS,
    FLOOR_SNR,
    HUMAN_SNR,
    as_the_game_hears,
    human_set,
    human_wer,
    in_babble,
    over_steady_floors,
)
from moderator.adapters.asr_by_noise import QUIET_RISE_DB, quiet_room
from moderator.audio.clip import Clip
from moderator.audio.endpoint import RATE
from moderator.audio.mix import noise_gain, steady_noise
from moderator.voice_input import LEAD_IN, TAIL


def _speech(seconds: float, seed: int) -> np.ndarray:
    """Loud and quiet 30 ms frames, like words and the gaps between them."""
    rng = np.random.default_rng(seed)
    envelope = np.repeat(rng.choice([0.02, 0.5], size=round(seconds / 0.03)), round(0.03 * RATE))
    return (rng.standard_normal(len(envelope)) * envelope).astype(np.float32)


def test_each_recording_gets_its_own_stretch_of_babble_at_the_snr():
    data = [("a", _speech(2.0, 1), "one two"), ("b", _speech(3.0, 2), "three")]
    bed = np.random.default_rng(9).standard_normal(20 * RATE).astype(np.float32)
    mixed = in_babble(data, bed)
    assert [(n, t) for n, _, t in mixed] == [("a", "one two"), ("b", "three")]
    for (_, clean, _), (_, noisy, _) in zip(data, mixed, strict=True):
        assert noisy.shape == clean.shape
        added = noisy - clean
        assert noise_gain(clean, added, HUMAN_SNR, peak=True) == pytest.approx(1.0, rel=1e-3)
    first = (mixed[0][1] - data[0][1])[: 2 * RATE]
    second = (mixed[1][1] - data[1][1])[: 2 * RATE]
    assert not np.allclose(first / np.std(first), second / np.std(second))  # not the same stretch
    again = in_babble(data, bed)
    assert all(np.array_equal(x[1], y[1]) for x, y in zip(mixed, again, strict=True))  # seeded


def test_each_recording_is_heard_over_each_steady_floor_as_an_utterance():
    data = [("a", _speech(2.0, 1), "one two"), ("b", _speech(3.0, 2), "three")]
    mixed = over_steady_floors(data)
    assert [n for n, _, _ in mixed] == [f"{n} ({c})" for c in FLOOR_COLOURS for n in ("a", "b")]
    for k, (_, noisy, text) in enumerate(mixed):
        _, clean, said = data[k % 2]
        assert text == said
        lead, tail = round(LEAD_IN * RATE), round(TAIL * RATE)
        assert len(noisy) == lead + len(clean) + tail  # the floor before and after the words, as an utterance
        floor = noisy.copy()
        floor[lead : lead + len(clean)] -= clean
        assert noise_gain(clean, floor, FLOOR_SNR, peak=True) == pytest.approx(1.0, rel=1e-3)
        assert np.std(noisy[:lead]) > 0  # the floor is there before the words
    again = over_steady_floors(data)
    assert all(np.array_equal(x[1], y[1]) for x, y in zip(mixed, again, strict=True))  # seeded


def test_steady_noise_has_its_colour_and_unit_level():
    rng = np.random.default_rng(0)
    slopes = {}
    for colour in ("white", "pink", "brown"):
        noise = steady_noise(RATE * 4, colour, rng)
        assert np.sqrt(np.mean(noise**2)) == pytest.approx(1.0, rel=1e-3)
        power = np.abs(np.fft.rfft(noise)) ** 2
        hz = np.fft.rfftfreq(len(noise), 1 / RATE)
        low, high = power[(hz > 200) & (hz < 400)].mean(), power[(hz > 3200) & (hz < 6400)].mean()
        slopes[colour] = 10 * np.log10(low / high) / 4  # dB per octave, over the four octaves between the bands
    assert slopes["white"] == pytest.approx(0.0, abs=0.5)
    assert slopes["pink"] == pytest.approx(3.0, abs=0.5)
    assert slopes["brown"] == pytest.approx(6.0, abs=0.5)
    with pytest.raises(ValueError, match="colour"):
        steady_noise(10, "purple", rng)


@pytest.mark.skipif(shutil.which("flite") is None, reason="flite is not installed")
def test_the_word_errors_count_the_given_recordings_and_rise_in_loud_babble(tmp_path):
    pytest.importorskip("pocketsphinx")
    wav = tmp_path / "line.wav"
    subprocess.run(["flite", "-voice", "slt", "-t", "go forward ten meters", "-o", str(wav)], check=True)
    clip = Clip.read(wav).resample(RATE)
    pad = np.zeros(RATE // 2, np.float32)
    data = [("slt", np.concatenate([pad, clip.samples, pad]), "go forward ten meters")]
    bed = np.random.default_rng(3).standard_normal(10 * RATE).astype(np.float32)
    clean = human_wer({"original": None}, data)["original"]
    loud = human_wer({"original": None}, in_babble(data, bed, snr=-10.0))["original"]
    assert clean["words"] == loud["words"] == 4
    assert clean["errors"] <= 1
    assert loud["errors"] > clean["errors"]
    assert [f["ref"] for f in clean["files"]] == ["go forward ten meters"]


READINGS = Path("/usr/share/pocketsphinx/test/data")


@pytest.mark.skipif(not READINGS.exists(), reason="Debian's pocketsphinx-testdata is not installed (scripts/setup.sh)")
def test_the_game_hears_a_human_reading_after_the_room_and_auto_gives_a_quiet_room_to_the_original_model():
    pytest.importorskip("pocketsphinx")
    data = [r for r in human_set() if r[0] in ("cards/003", "librivox/sense_and_sensibility_01_austen_64kb-0870")]
    heard = as_the_game_hears(data)
    assert [(n, t) for n, _, t in heard] == [(n, t) for n, _, t in data]
    for (_, pieces, _), (_, samples, _) in zip(heard, data, strict=True):
        assert len(pieces) == 1  # one utterance each, with the room heard before it
        piece, rise = pieces[0]
        assert rise is not None and rise >= QUIET_RISE_DB
        assert len(samples) < len(piece) < len(samples) + 2 * RATE  # the words and some of the room around them
    assert as_the_game_hears(data, draw=1)[0][0].endswith("(draw 1)")
    reading = heard[0][1][0][0]
    assert not quiet_room(reading, RATE)  # the LibriVox reading alone spreads like a party ...
    result = human_wer({"auto": AUTO_PATH}, heard)["auto"]
    assert [f["model"] for f in result["files"]] == ["default", "default"]  # ... but the room before it was quiet
    assert result["files"][1]["hyp"] == "seven of clubs"
