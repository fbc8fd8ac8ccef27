"""The speech cache renders each (engine, voice, text) once, survives damage and writes atomically."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from fakes import FakeSynth

from moderator.audio.clip import AudioError
from moderator.errors import SynthesisError
from moderator.settings import VoiceSettings
from moderator.voice.cache import RenderCache, cache_key, default_cache_dir

EN = VoiceSettings("en-us", 170, 1.0)


def ticking(step: float = 0.5):
    """A fake timer that moves ``step`` seconds each time it is read."""
    ticks = itertools.count()
    return lambda: next(ticks) * step


@pytest.fixture
def synth() -> FakeSynth:
    return FakeSynth()


@pytest.fixture
def cache(tmp_path: Path, synth: FakeSynth) -> RenderCache:
    return RenderCache(tmp_path / "speech", synth)


def all_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def test_first_get_renders_and_stores(cache, synth):
    clip = cache.get("Round one.", EN)
    assert synth.texts() == ["Round one."]
    key = cache_key("fake", EN, "Round one.")
    assert cache.path_for("Round one.", EN) == cache.directory / key[:2] / f"{key}.wav"
    assert all_files(cache.directory) == [cache.path_for("Round one.", EN)]
    assert clip.duration > 0.3


def test_second_get_hits_memory(cache, synth):
    first = cache.get("Round one.", EN)
    assert cache.get("Round one.", EN) is first
    assert len(synth.calls) == 1


def test_a_new_cache_reads_the_disk_instead_of_rendering(tmp_path, synth):
    first = RenderCache(tmp_path, synth).get("Round one.", EN)
    again = RenderCache(tmp_path, synth).get("Round one.", EN)
    assert len(synth.calls) == 1
    assert again.rate == first.rate
    np.testing.assert_allclose(again.samples, first.samples, atol=1 / 16384)  # 16-bit on disk


def test_the_key_covers_engine_voice_and_text():
    keys = {
        cache_key("fake", EN, "Round one."),
        cache_key("fake", EN, "Round two."),
        cache_key("espeak-ng", EN, "Round one."),
        cache_key("fake", VoiceSettings("it", 170, 1.0), "Round one."),
        cache_key("fake", VoiceSettings("en-us", 171, 1.0), "Round one."),
        cache_key("fake", VoiceSettings("en-us", 170, 0.9), "Round one."),
    }
    assert len(keys) == 6
    assert all(len(k) == 64 and int(k, 16) >= 0 for k in keys)


def test_different_voice_settings_render_again(cache, synth):
    cache.get("Round one.", EN)
    cache.get("Round one.", VoiceSettings("en-us", 200, 1.0))
    cache.get("Round one.", VoiceSettings("it", 170, 1.0))
    assert len(synth.calls) == 3
    assert len(all_files(cache.directory)) == 3


def test_different_engines_do_not_share_clips(tmp_path):
    class OtherSynth(FakeSynth):
        name = "other"

    fake, other = FakeSynth(), OtherSynth()
    RenderCache(tmp_path, fake).get("Round one.", EN)
    RenderCache(tmp_path, other).get("Round one.", EN)
    assert len(fake.calls) == len(other.calls) == 1


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: p.write_bytes(b"not a wav file"),
        lambda p: p.write_bytes(b""),
        lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]),  # cut short
        lambda p: p.write_bytes(p.read_bytes()[:44]),  # header only
    ],
    ids=["garbage", "empty", "truncated", "no-samples"],
)
def test_a_damaged_file_is_rendered_again(tmp_path, synth, damage):
    good = RenderCache(tmp_path, synth).get("Round one.", EN)
    damage(RenderCache(tmp_path, synth).path_for("Round one.", EN))
    fresh = RenderCache(tmp_path, synth)
    assert fresh.contains("Round one.", EN)  # the file is there until it is read
    clip = fresh.get("Round one.", EN)
    assert len(synth.calls) == 2
    assert len(clip.samples) == len(good.samples)
    # ... and the repaired file is used from then on.
    RenderCache(tmp_path, synth).get("Round one.", EN)
    assert len(synth.calls) == 2


def test_contains(cache):
    assert not cache.contains("Round one.", EN)
    cache.get("Round one.", EN)
    assert cache.contains("Round one.", EN)
    assert not cache.contains("Round one.", VoiceSettings("it"))


def test_prerender_reports_rendered_and_cached(tmp_path, synth):
    phrases = ["Round one.", "Round two.", "Round three.", "Round one."]  # a repeat counts once
    report = RenderCache(tmp_path, synth).prerender(phrases, EN, timer=ticking())
    assert (report.rendered, report.cached, report.seconds) == (3, 0, 0.5)

    warm = RenderCache(tmp_path, synth)
    report = warm.prerender([*phrases, "Game paused."], EN, timer=ticking(0.25))
    assert (report.rendered, report.cached, report.seconds) == (1, 3, 0.25)
    assert len(synth.calls) == 4
    # Prerendered clips are in memory: get no longer reads the disk.
    for path in all_files(tmp_path):
        path.unlink()
    warm.get("Round two.", EN)
    assert len(synth.calls) == 4


def test_prerender_stops_at_a_synthesis_error(cache):
    with pytest.raises(SynthesisError, match="xx"):
        cache.prerender(["Round one."], VoiceSettings("xx"), timer=ticking())


def test_writes_leave_no_temporary_files(cache):
    for i in range(20):
        cache.get(f"Hostage {i}", EN)
    files = all_files(cache.directory)
    assert len(files) == 20
    assert all(f.suffix == ".wav" and not f.name.startswith(".") for f in files)


def test_a_failed_write_leaves_no_temporary_file(cache, monkeypatch):
    import os

    def refuse(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(AudioError, match="No space left"):
        cache.get("Round one.", EN)
    assert all_files(cache.directory) == []


def test_an_unwritable_directory_is_an_audio_error(tmp_path, synth):
    blocker = tmp_path / "file"
    blocker.write_text("in the way")
    with pytest.raises(AudioError, match="cannot write speech cache file"):
        RenderCache(blocker / "speech", synth).get("Round one.", EN)


def test_default_cache_dir_is_the_users_cache():
    path = default_cache_dir()
    assert path.name == "speech"
    assert "moderator" in path.parts


def test_find_returns_only_what_is_already_rendered(tmp_path: Path) -> None:
    synth = FakeSynth()
    cache = RenderCache(tmp_path, synth)
    voice = VoiceSettings()
    assert cache.find("Time's up!", voice) is None
    assert synth.calls == [], "find never renders"
    rendered = cache.get("Time's up!", voice)
    assert RenderCache(tmp_path, synth).find("Time's up!", voice).duration == rendered.duration
    assert len(synth.calls) == 1


def test_quotation_marks_are_for_the_eye_and_never_synthesized(cache, synth):
    """A synthesizer reads quotes as pauses (espeak-ng: a read-back 0.6 s longer); the quoted and the plain text
    are one rendering."""
    cache.get('Say "yes" to lock, or « no » to choose again; 「start the game」.', EN)
    assert synth.texts() == ["Say yes to lock, or no to choose again; start the game."]
    cache.get("Say yes to lock, or no to choose again; start the game.", EN)
    assert len(synth.calls) == 1
