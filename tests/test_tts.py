"""The Synthesizer contract, run against the fake and both real adapters, and the engine choice."""

from __future__ import annotations

import os
import shutil
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from fakes import FakeSynth

from moderator.adapters import tts
from moderator.adapters.tts import EspeakCliSynth, Pyttsx3Process, Pyttsx3Synth, make_synthesizer
from moderator.audio.clip import rms_db
from moderator.errors import SynthesisError
from moderator.ports import Synthesizer
from moderator.settings import VoiceSettings

SENTENCE = "Round one. Three minutes. Each room sends one hostage."
EN = VoiceSettings("en-us", 170, 1.0)
FAKE_PYTTSX3 = Path(__file__).parent / "fake_pyttsx3"


@pytest.fixture
def fake_pyttsx3(monkeypatch):
    """Makes the speech process import tests/fake_pyttsx3 instead of pyttsx3, doing what ``mode`` says (see its
    docstring); this process's own pyttsx3 is untouched."""

    def use(mode: str) -> None:
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(FAKE_PYTTSX3),
                                                                        os.environ.get("PYTHONPATH")])))
        monkeypatch.setenv("FAKE_PYTTSX3", mode)

    return use


class SynthesizerContract:
    """What every Synthesizer does; each adapter's test class inherits it and says how to make one."""

    def make(self) -> Synthesizer:
        raise NotImplementedError

    @pytest.fixture
    def synth(self):
        synth = self.make()
        yield synth
        synth.close()

    def test_renders_speech(self, synth):
        clip = synth.render(SENTENCE, EN)
        assert 0.3 < clip.duration < 10
        assert clip.samples.dtype == np.float32
        assert rms_db(clip.samples) > -35  # silence is -inf; espeak speaks at about -22 dBFS

    def test_has_a_name(self, synth):
        assert isinstance(synth.name, str) and synth.name

    def test_longer_text_gives_a_longer_clip(self, synth):
        short = synth.render("Time's up.", EN)
        long = synth.render("Time's up! Round two is over. Leaders, go to the hallway and meet.", EN)
        assert long.duration > 1.5 * short.duration

    def test_faster_rate_gives_a_shorter_clip(self, synth):
        slow = synth.render(SENTENCE, VoiceSettings("en-us", 120))
        fast = synth.render(SENTENCE, VoiceSettings("en-us", 300))
        assert fast.duration < 0.7 * slow.duration

    def test_settings_apply_to_every_render(self, synth):
        # pyttsx3's espeak driver used to drop a quarter of property changes at random.
        settings = [VoiceSettings(name, rate) for name in ("en-us", "it") for rate in (120, 300)]
        durations: dict[VoiceSettings, list[float]] = {s: [] for s in settings}
        for i in (0, 3, 1, 2, 0, 2, 3, 1, 2, 0, 1, 3, 3, 0, 2, 1):
            durations[settings[i]].append(synth.render(SENTENCE, settings[i]).duration)
        for voice, seen in durations.items():
            assert max(seen) - min(seen) < 0.2, (voice, seen)
        for name in ("en-us", "it"):
            slow, fast = (durations[VoiceSettings(name, rate)][0] for rate in (120, 300))
            assert fast < 0.7 * slow

    @pytest.mark.parametrize(
        ("name", "text"),
        [
            ("en-us", "Room A is ready."),
            ("it", "La stanza A è pronta."),
            ("fr-fr", "La salle A est prête."),
            ("cmn", "A 房间准备好了。"),
        ],
    )
    def test_each_game_language_speaks(self, synth, name, text):
        clip = synth.render(text, VoiceSettings(name, 170, 1.0))
        assert 0.3 < clip.duration < 10
        assert rms_db(clip.samples) > -35

    def test_voices_sound_different(self, synth):
        english = synth.render("Bomber", VoiceSettings("en-us"))
        italian = synth.render("Bomber", VoiceSettings("it"))
        n = min(len(english.samples), len(italian.samples))
        assert len(english.samples) != len(italian.samples) or not np.array_equal(
            english.samples[:n], italian.samples[:n]
        )

    def test_unknown_voice_is_an_error_naming_valid_voices(self, synth):
        with pytest.raises(SynthesisError) as err:
            synth.render("Hello", VoiceSettings("xx-klingon"))
        message = str(err.value)
        assert "xx-klingon" in message
        assert "en-us" in message

    def test_empty_text_is_an_error(self, synth):
        with pytest.raises(SynthesisError, match="empty"):
            synth.render("   ", EN)

    def test_renders_from_many_threads_at_once(self, synth):
        voices = [VoiceSettings(name, rate) for name in ("en-us", "it", "fr-fr") for rate in (120, 220, 320)]
        jobs = [(f"Player {i} is the leader of room {'AB'[i % 2]}.", voice) for i, voice in enumerate(voices)]
        with ThreadPoolExecutor(max_workers=6) as pool:
            clips = list(pool.map(lambda job: synth.render(*job), jobs))
        # Each result is what its request asked for (no settings leak between requests); espeak
        # varies by a few tens of milliseconds with what it said before.
        for (text, voice), clip in zip(jobs, clips, strict=True):
            assert abs(clip.duration - synth.render(text, voice).duration) < 0.1

    def test_close_stops_it(self, synth):
        synth.render("ok", EN)
        synth.close()
        with pytest.raises(SynthesisError, match="closed"):
            synth.render("ok", EN)
        synth.close()  # twice is fine


class TestFakeSynth(SynthesizerContract):
    def make(self) -> Synthesizer:
        return FakeSynth()


class TestEspeakCliSynth(SynthesizerContract):
    def make(self) -> Synthesizer:
        return EspeakCliSynth()

    def test_clips_are_at_espeaks_rate(self, synth):
        assert synth.render("ok", EN).rate == 22050

    def test_text_starting_with_a_dash_is_spoken_not_parsed(self, synth):
        assert synth.render("-v nonsense", EN).duration > 0.3


class TestPyttsx3Synth(SynthesizerContract):
    def make(self) -> Synthesizer:
        return Pyttsx3Synth()

    def test_clips_are_at_espeaks_rate(self, synth):
        assert synth.render("ok", EN).rate == 22050

    def test_close_stops_the_worker_thread(self, synth):
        assert synth.alive
        synth.close()
        assert not synth.alive

    def test_the_engine_is_used_from_one_thread_only(self, synth, monkeypatch):
        import pyttsx3.engine

        seen: set[int] = set()
        original = pyttsx3.engine.Engine.runAndWait

        def spy(engine):
            seen.add(threading.get_ident())
            original(engine)

        monkeypatch.setattr(pyttsx3.engine.Engine, "runAndWait", spy)
        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(lambda i: synth.render(f"Hostage {i}", EN), range(8)))
        assert len(seen) == 1
        assert threading.get_ident() not in seen

    def test_survives_its_temp_folder_being_cleaned(self, synth):
        synth.render("Before.", EN)
        shutil.rmtree(synth._workdir)  # a /tmp cleaner; an unwritable WAV hangs pyttsx3's loop
        assert synth.render("After.", EN).duration > 0.3

    def test_does_not_print_on_stdout(self, synth, capsys):
        synth.render("Quiet, please.", EN)
        assert capsys.readouterr().out == ""

    def test_two_synthesizers_share_the_engine_safely(self, synth):
        other = Pyttsx3Synth()
        try:
            with ThreadPoolExecutor(max_workers=4) as pool:
                clips = list(pool.map(lambda i: [synth, other][i % 2].render(f"Round {i}.", EN), range(8)))
            assert all(c.duration > 0.3 for c in clips)
        finally:
            other.close()
        assert synth.render("Still here.", EN).duration > 0.3

    def test_a_new_synthesizer_works_after_one_is_closed(self, synth):
        synth.close()
        again = Pyttsx3Synth()
        try:
            assert again.render("Again.", EN).duration > 0.3
        finally:
            again.close()


def test_a_hung_engine_times_out_then_fails_fast(monkeypatch):
    """In this process (the speech process's own behaviour), with the stand-in pyttsx3's hanging engine."""
    import importlib.util

    import pyttsx3

    monkeypatch.setenv("FAKE_PYTTSX3", "hang")  # read when the stand-in is loaded
    spec = importlib.util.spec_from_file_location("fake_pyttsx3", FAKE_PYTTSX3 / "pyttsx3" / "__init__.py")
    assert spec is not None and spec.loader is not None
    fake = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fake)
    monkeypatch.setattr(pyttsx3, "init", fake.init)
    synth = Pyttsx3Synth(timeout=0.3)
    try:
        with pytest.raises(SynthesisError, match="within"):
            synth.render("hang", EN)
        with pytest.raises(SynthesisError, match="stopped responding"):
            synth.render("hang", EN)
    finally:
        fake.RELEASE.set()
        synth.close()
    assert not synth.alive


class TestPyttsx3Process(SynthesizerContract):
    """What the game renders with: pyttsx3 in a process of its own, where a crash or a hang of libespeak-ng costs a
    phrase at most, not the game."""

    def make(self) -> Synthesizer:
        return Pyttsx3Process()

    def test_clips_are_at_espeaks_rate(self, synth):
        assert synth.render("ok", EN).rate == 22050

    def test_a_killed_process_is_replaced_at_the_next_render(self, synth):
        before = synth.render("Hostages, please.", EN)
        proc = synth.process
        proc.send_signal(signal.SIGSEGV)
        proc.wait()
        after = synth.render("Hostages, please.", EN)
        assert synth.process is not proc
        assert abs(after.duration - before.duration) < 0.05

    def test_close_ends_the_process(self, synth):
        proc = synth.process
        synth.close()
        assert proc.wait(timeout=5) == 0
        assert synth.process is None

    def test_ctrl_c_is_left_to_the_game(self, synth):
        proc = synth.process
        proc.send_signal(signal.SIGINT)
        assert synth.render("Still speaking.", EN).duration > 0.3
        assert synth.process is proc, "the same process answered"


def test_a_crash_in_the_middle_of_a_render_costs_one_retry(fake_pyttsx3, tmp_path):
    marker = tmp_path / "crashed"
    fake_pyttsx3(f"crash-once:{marker}")
    synth = Pyttsx3Process()
    try:
        first = synth.process
        clip = synth.render("crash", EN)  # the first process dies in it; a new one renders it
        assert marker.exists(), "the first render really crashed its process"
        assert first.wait(timeout=5) == -signal.SIGSEGV
        assert clip.duration == pytest.approx(0.1, abs=0.01)
        assert synth.render("and then more words", EN).duration == pytest.approx(0.4, abs=0.01)
    finally:
        synth.close()


def test_a_hung_render_times_out_and_the_next_one_gets_a_new_process(fake_pyttsx3):
    fake_pyttsx3("hang")
    synth = Pyttsx3Process(timeout=1.0)
    try:
        hung = synth.process
        with pytest.raises(SynthesisError, match="no answer within 1 s"):
            synth.render("hang", EN)
        assert hung.poll() is not None, "the hung process was stopped"
        assert synth.render("speaking again", EN).duration == pytest.approx(0.2, abs=0.01)
    finally:
        synth.close()


def test_an_engine_that_never_starts_is_an_error_in_time(fake_pyttsx3):
    fake_pyttsx3("init-hang")
    with pytest.raises(SynthesisError, match="no answer within 1 s"):
        Pyttsx3Process(timeout=1.0)


def test_what_the_engine_prints_cannot_break_the_replies(fake_pyttsx3):
    fake_pyttsx3("chatty")
    synth = Pyttsx3Process()
    try:
        assert [synth.render(text, EN).duration for text in ("one", "one two")] == pytest.approx([0.1, 0.2], abs=0.01)
    finally:
        synth.close()


class TestMakeSynthesizer:
    def test_auto_prefers_pyttsx3_in_a_process_of_its_own(self):
        warnings: list[str] = []
        synth = make_synthesizer("auto", warn=warnings.append)
        try:
            assert isinstance(synth, Pyttsx3Process)
            assert warnings == []
        finally:
            synth.close()

    def test_auto_falls_back_to_the_command_line_with_a_warning(self, fake_pyttsx3):
        fake_pyttsx3("init-error:This means you probably do not have eSpeak or eSpeak-ng installed!")
        warnings: list[str] = []
        synth = make_synthesizer("auto", warn=warnings.append)
        try:
            assert isinstance(synth, EspeakCliSynth)
            assert len(warnings) == 1
            assert "pyttsx3 is unavailable" in warnings[0]
            assert "eSpeak-ng installed" in warnings[0]
            assert "espeak-ng command line" in warnings[0]
        finally:
            synth.close()

    def test_forced_engines(self):
        for prefer, cls in [("pyttsx3", Pyttsx3Process), ("espeak-ng", EspeakCliSynth)]:
            synth = make_synthesizer(prefer)
            try:
                assert isinstance(synth, cls)
            finally:
                synth.close()

    def test_neither_engine_says_what_to_install(self, fake_pyttsx3, monkeypatch):
        fake_pyttsx3("oserror:libespeak-ng.so.1")
        monkeypatch.setenv("PATH", "/nonexistent")
        with pytest.raises(SynthesisError) as err:
            make_synthesizer("auto", warn=lambda _: None)
        assert "libespeak-ng.so.1" in str(err.value)
        assert "libespeak-ng1" in str(err.value) and "apt-get install" in str(err.value)
        with pytest.raises(SynthesisError, match="espeak-ng program is not installed"):
            make_synthesizer("espeak-ng")

    def test_unknown_engine(self):
        with pytest.raises(SynthesisError, match="choose auto, pyttsx3 or espeak-ng"):
            make_synthesizer("festival")

    def test_default_warning_goes_to_stderr(self, capsys):
        tts._to_stderr("hello")
        assert capsys.readouterr().err == "warning: hello\n"
