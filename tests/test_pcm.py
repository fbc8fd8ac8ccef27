"""The one float <-> 16-bit PCM conversion: bit for bit what each call site computed before it moved there."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from moderator.audio.clip import Clip
from moderator.audio.pcm import from_pcm16, to_int16, to_pcm16

ROOT = Path(__file__).resolve().parents[1]


def samples(dtype: type, seed: int = 0) -> np.ndarray:
    """Random samples over and beyond full scale, with the edges and the values that round or truncate."""
    rng = np.random.default_rng(seed)
    edges = [0.0, -0.0, 1.0, -1.0, 1.5, -1.5, 32767 / 32768, -32768 / 32768, 0.5 / 32767, -0.5 / 32767,
             0.5 / 32768, -0.5 / 32768, 1.5 / 32768, 2.5 / 32768, -2.5 / 32768, 1e-9, -1e-9]
    return np.concatenate([rng.uniform(-1.2, 1.2, 20000), rng.normal(0, 0.05, 20000), edges]).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_to_pcm16_is_what_wav_files_the_vad_and_the_recognizers_computed(dtype: type) -> None:
    x = samples(dtype)
    old = (np.clip(x, -1, 1) * 32767).astype("<i2").tobytes()  # clip.py, endpoint.py, asr_*.py
    assert to_pcm16(x) == old
    assert to_int16(x).tobytes() == old and to_int16(x).dtype == np.dtype("<i2")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rounded_is_what_the_echo_canceller_computed(dtype: type) -> None:
    x = samples(dtype, seed=1)
    old = np.clip(np.round(x * 32768), -32768, 32767).astype(np.int16)  # adapters/echo.py, benchmarks/aec_compare.py
    new = to_int16(x, rounded=True)
    assert new.dtype == old.dtype and np.array_equal(new, old)
    assert to_pcm16(x, rounded=True) == old.tobytes()


def test_from_pcm16_is_what_every_reader_computed() -> None:
    pcm = np.random.default_rng(2).integers(-32768, 32768, 20000).astype("<i2")
    old = np.frombuffer(pcm.tobytes(), "<i2").astype(np.float32) / 32768  # clip.py, benchmarks/corpus.py
    for data in (pcm.tobytes(), bytearray(pcm.tobytes()), memoryview(pcm.tobytes()), pcm):
        new = from_pcm16(data)
        assert new.dtype == np.float32 and np.array_equal(new, old)
    assert from_pcm16(b"").shape == (0,)


def test_the_16_bit_grid_survives_a_rounded_round_trip() -> None:
    pcm = np.arange(-32768, 32768, dtype=np.int16)
    assert np.array_equal(to_int16(from_pcm16(pcm), rounded=True), pcm)


def test_a_wav_file_is_written_and_read_as_before(tmp_path: Path) -> None:
    clip = Clip(samples(np.float32, seed=3), 16000)
    path = tmp_path / "x.wav"
    clip.write(path)
    raw = path.read_bytes()
    assert raw.endswith((np.clip(clip.samples, -1, 1) * 32767).astype("<i2").tobytes())
    back = Clip.read(path)
    assert np.array_equal(back.samples, np.frombuffer(raw[-2 * len(clip.samples):], "<i2").astype(np.float32) / 32768)




def test_no_other_module_converts_by_hand() -> None:
    by_hand = re.compile(r"\*\s*3276[78]\b|/\s*32768\b")
    found = {str(path.relative_to(ROOT)) for path in (ROOT / "moderator").rglob("*.py")
             if path.name != "pcm.py" and by_hand.search(path.read_text(encoding="utf-8"))}
    assert not found, f"use moderator.audio.pcm in {sorted(found)}"
