"""Endpointing with the real WebRTC VAD on synthesized speech, fed in real-time-sized chunks."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from moderator.audio.clip import Clip
from moderator.audio.endpoint import FRAME, RATE, Endpointer, Utterance, webrtc_classifier

#: The endpointer's hangovers and look-ahead, as the product sets them.
LONG, SHORT, LOOK = Endpointer.hangover, Endpointer.short_hangover, Endpointer.early_look

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


def talk(seconds: float, level: float = 0.1) -> np.ndarray:
    """Syllables: a tone that comes and goes four times a second (the dips are not long enough to end it)."""
    t = np.arange(round(seconds * RATE)) / RATE
    return (level * np.sin(2 * np.pi * 200 * t) * (0.6 + 0.4 * np.sin(2 * np.pi * 4 * t))).astype(np.float32)


def quiet(seconds: float, level: float = 0.001) -> np.ndarray:
    return np.random.default_rng(0).normal(0, level, round(seconds * RATE)).astype(np.float32)


def test_an_endless_talker_is_cut_at_max_seconds() -> None:
    ep = Endpointer(lambda frame: True, max_seconds=2.0)
    got = feed_all(ep, np.concatenate([quiet(0.5), talk(5)]))
    assert len(got) == 2 and all(abs((u.end - u.start) - 2.0) < 0.05 for u in got)


def test_an_utterance_ends_when_the_voice_falls_back_into_the_babble() -> None:
    """The classifier calls everything speech (as WebRTC's VAD does with babble); the level decides."""
    rng = np.random.default_rng(1)
    babble = lambda seconds: rng.normal(0, 0.02, round(seconds * RATE)).astype(np.float32)  # noqa: E731
    words = talk(1.5, level=0.2) + babble(1.5)
    ep = Endpointer(lambda frame: True)
    got = feed_all(ep, np.concatenate([babble(2.0), words, babble(3.0)]))
    assert len(got) == 1, "the babble alone is background, not speech"
    assert 1.5 <= got[0].end - got[0].start <= 1.5 + 0.3 + 0.6 + 0.1, "preroll + words + hangover, not 8 s"
    assert ep.background_dbfs is not None and abs(ep.background_dbfs - 20 * np.log10(0.02)) < 3


def party(seconds: float, seed: int = 2) -> np.ndarray:
    """A party loud all the time: 1.5 s at -36 dBFS, then a 0.5 s lull at -46 dBFS, again and again. Its loud
    stretches stand 10 dB above the lulls that the background follows, but hardly above its median."""
    rng = np.random.default_rng(seed)
    n = round(seconds * RATE)
    level = np.where((np.arange(n) / RATE) % 2.0 < 1.5, 10 ** (-36 / 20), 10 ** (-46 / 20))
    return (rng.normal(0, 1, n) * level).astype(np.float32)


def test_a_party_loud_all_the_time_is_the_room_not_speech() -> None:
    """The classifier calls it all speech (as WebRTC's VAD does with babble); the room's median level decides."""
    assert feed_all(Endpointer(lambda frame: True), party(12)) == []
    got = feed_all(Endpointer(lambda frame: True, room_margin=None), party(12))
    assert got, "above the lulls alone, its loud stretches open utterances"
    assert not any(u.stands_out for u in got), "and none stands out from the room: the listener decodes none"
    assert all(u.rise is not None and u.rise < 3 for u in got[1:])


def test_a_voice_over_the_party_is_one_utterance_that_stands_out() -> None:
    words = talk(1.5, level=0.2)  # about -20 dBFS: 16 dB over the party's median
    audio = party(12.0)
    audio[round(4.5 * RATE) : round(6.0 * RATE)] += words
    got = feed_all(Endpointer(lambda frame: True), audio)
    assert len(got) == 1 and got[0].stands_out and got[0].rise is not None and got[0].rise > 14
    assert 4.0 < got[0].start < 4.5 and got[0].end - got[0].start <= 1.5 + 0.3 + 0.6 + 0.1, \
        "the party after the words does not keep the utterance open"
    kept = feed_all(Endpointer(lambda frame: True, room_margin=None), audio)
    voice = [u for u in kept if u.start < 6.0 and u.end > 4.5]
    assert voice and voice[0].end - voice[0].start >= 8.0 - 0.05, "with the background alone, the party kept it open"


def test_an_utterance_after_less_than_a_second_of_the_room_is_not_measured() -> None:
    got = feed_all(Endpointer(lambda frame: True), np.concatenate([quiet(0.5), talk(1.0), quiet(2.0)]))
    assert len(got) == 1 and got[0].rise is None and got[0].stands_out


def test_a_constant_hum_becomes_background() -> None:
    ep = Endpointer(lambda frame: True)
    assert feed_all(ep, np.full(RATE * 12, 0.05, np.float32)) == []


def test_a_whole_command_ends_after_a_short_pause_and_is_padded_with_the_rooms_quiet(tmp_path: Path) -> None:
    words = speech(tmp_path, "pause")
    rng = np.random.default_rng(1)
    room = (rng.normal(0, 10 ** (-60 / 20), RATE * 3)).astype(np.float32)
    audio = room.copy()
    audio[RATE : RATE + len(words)] += words
    long = feed_all(Endpointer(webrtc_classifier()), audio, chunk=480)
    heard: list[np.ndarray] = []
    grammar_aware = Endpointer(webrtc_classifier(), complete=lambda: True,
                               on_audio=lambda samples, first: heard.append(samples))
    short = feed_all(grammar_aware, audio, chunk=480)
    assert len(long) == len(short) == 1
    # It ends LONG - SHORT sooner, and the recognizer still gets as much audio after the words.
    assert long[0].end - short[0].end == pytest.approx(LONG - SHORT, abs=0.031)
    assert len(short[0].samples) == len(long[0].samples)
    padding = short[0].samples[-round(0.3 * RATE) :]
    assert 20 * np.log10(np.sqrt(np.mean(padding**2))) < -55, "the padding is the room's quiet, not the word"
    streamed = np.concatenate(heard)
    assert len(streamed) == round((short[0].end - short[0].start) * RATE), "every frame of it was streamed"


def test_an_unfinished_command_keeps_the_long_hangover(tmp_path: Path) -> None:
    words = speech(tmp_path, "pause")
    audio = np.concatenate([np.zeros(RATE, np.float32), words, np.zeros(2 * RATE, np.float32)])
    asked: list[int] = []
    ep = Endpointer(webrtc_classifier(), complete=lambda: bool(asked.append(1)))
    got = feed_all(ep, audio, chunk=480)
    base = feed_all(Endpointer(webrtc_classifier()), audio, chunk=480)
    assert asked and [u.end for u in got] == [u.end for u in base]


def test_a_whole_command_is_handed_ahead_and_that_utterance_is_the_one_closed(tmp_path: Path) -> None:
    words = speech(tmp_path, "pause")
    audio = np.concatenate([quiet(1.0), words, quiet(1.0)])
    ahead: list = []
    ep = Endpointer(webrtc_classifier(), complete=lambda: True, prepare=ahead.append)
    [got] = feed_all(ep, audio, chunk=480)
    assert len(ahead) == 1 and ahead[0] is got, "decoded ahead once, and that is what the short pause closed"
    base = feed_all(Endpointer(webrtc_classifier(), complete=lambda: True), audio, chunk=480)
    # What was decoded ahead ends SHORT - LOOK before an early close would, and is padded to as much audio.
    assert base[0].end - got.end == pytest.approx(SHORT - LOOK, abs=0.031)
    assert len(got.samples) == len(base[0].samples)


def trimmed(samples: np.ndarray) -> np.ndarray:
    """Without the synthesizer's own silence before and after the words (10 ms frames 40 dB under the peak)."""
    frames = samples[: len(samples) // 160 * 160].reshape(-1, 160)
    level = 20 * np.log10(np.sqrt(np.mean(frames**2, axis=1)) + 1e-9)
    loud = np.nonzero(level > level.max() - 40)[0]
    return samples[loud[0] * 160 : (loud[-1] + 1) * 160]


def test_speech_after_the_look_ahead_forgets_it(tmp_path: Path) -> None:
    """ "hostages Bob ... and Carol": the pause was long enough to decode "hostages Bob" ahead, not to end it."""
    first, second = (trimmed(speech(tmp_path, words)) for words in ("hostages Bob", "and Carol"))
    audio = np.concatenate([quiet(1.0), first, quiet(0.15), second, quiet(1.0)])
    ahead: list = []
    ep = Endpointer(webrtc_classifier(), complete=lambda: True, prepare=ahead.append, max_ahead=2)
    [got] = feed_all(ep, audio, chunk=480)
    assert all(got is not a for a in ahead[:-1]), "what was decoded before the second name is forgotten"
    assert got.end - ahead[0].end > len(second) / RATE - 0.1, "the second name is in the utterance"
    assert len(ahead) == 2, "flite's pause inside 'hostages Bob', then the one before 'and': no more than two"
    single = Endpointer(webrtc_classifier(), complete=lambda: True, prepare=ahead.append, max_ahead=1)
    ahead.clear()
    [closed] = feed_all(single, audio, chunk=480)
    assert len(ahead) == 1 and closed is not ahead[0], "past the limit, the close decodes the whole utterance"
    assert closed.end == pytest.approx(got.end, abs=0.031)


def test_the_audio_before_the_preroll_is_kept_for_words_said_over_the_moderator(tmp_path: Path) -> None:
    a = speech(tmp_path, "start the game")
    rng = np.random.default_rng(1)
    lead = (rng.normal(0, 0.001, RATE * 2)).astype(np.float32)  # a microphone's hiss before the words
    audio = np.concatenate([lead, a, np.zeros(RATE, np.float32)])
    ep = Endpointer(webrtc_classifier())
    (utt,) = feed_all(ep, audio)
    frames = round(ep.talkover_preroll * RATE / FRAME) - round(ep.preroll * RATE / FRAME)
    assert len(utt.before) == frames * FRAME
    # ``before`` is exactly the audio just ahead of the utterance's own samples.
    first = round(utt.start * RATE)
    assert np.array_equal(utt.before, audio[first - len(utt.before) : first])
    assert np.array_equal(utt.samples[:100], audio[first : first + 100])


def test_a_talker_who_goes_on_after_an_early_close_continues_the_utterance(tmp_path: Path) -> None:
    """ "Grace, ... Frank and Dave are plotting": a voice that pauses after a name, longer than the short hangover."""
    first, second = (trimmed(speech(tmp_path, words)) for words in ("Grace", "Frank and Dave are plotting something"))
    audio = np.concatenate([quiet(1.0), first, quiet(0.4), second, quiet(1.0)])
    went_on: list[tuple[float, int]] = []
    ep = Endpointer(webrtc_classifier(), complete=lambda: True, provisional=LONG - SHORT,
                    on_continue=lambda start, times: went_on.append((start, times)))
    got = feed_all(ep, audio, chunk=480)
    assert len(got) == 2 and got[0].provisional_until is not None, "closed early, provisionally"
    assert got[0].provisional_until == pytest.approx(got[0].end + LONG - SHORT, abs=0.031)
    assert went_on == [(got[0].start, 1)], "the second part continued the first"
    assert got[1].start == got[0].start, "one utterance, from the first word"
    assert (got[0].continued, got[1].continued) == (0, 1), "the whole is told from its first part by this, not time"
    assert not ep.may_go_on(got[0]) and not ep.may_go_on(got[1]), "the audio went on past both"
    assert got[1].end - got[1].start > (len(first) + len(second)) / RATE + 0.3, "the words, the pause between"
    final = feed_all(Endpointer(webrtc_classifier(), complete=lambda: True), audio, chunk=480)
    assert len(final) == 2 and final[0].provisional_until is None and final[1].start > final[0].end, \
        "without it: two utterances, the first final"


def test_a_quieter_onset_or_one_after_the_long_hangover_does_not_continue_it(tmp_path: Path) -> None:
    first, second = (trimmed(speech(tmp_path, words)) for words in ("pause", "Frank and Dave are plotting something"))
    for gap, gain in ((0.4, 10 ** (-12 / 20)), (0.9, 1.0)):
        audio = np.concatenate([quiet(1.0), first, quiet(gap), second * gain, quiet(1.0)])
        went_on: list[float] = []
        ep = Endpointer(webrtc_classifier(), complete=lambda: True, provisional=LONG - SHORT,
                        on_continue=lambda start, times, seen=went_on: seen.append(start))
        got = feed_all(ep, audio, chunk=480)
        assert went_on == [] and len(got) == 2 and got[1].start > got[0].end, (gap, gain)


def test_an_onset_the_listener_calls_the_moderator_does_not_continue_it(tmp_path: Path) -> None:
    """The moderator's own voice starting again after a player's command ("Time's up ... name 2 hostages") is as
    loud as a talker going on: ``may_continue`` says which onsets may, and is asked with the onset's times."""
    first, second = (trimmed(speech(tmp_path, words)) for words in ("Grace", "Frank and Dave are plotting something"))
    audio = np.concatenate([quiet(1.0), first, quiet(0.4), second, quiet(1.0)])
    asked: list[tuple[float, float]] = []
    went_on: list[float] = []

    def may(t0: float, t1: float) -> bool:
        asked.append((t0, t1))
        return False

    ep = Endpointer(webrtc_classifier(), complete=lambda: True, provisional=LONG - SHORT, may_continue=may,
                    on_continue=lambda start, times: went_on.append(start))
    got = feed_all(ep, audio, chunk=480)
    assert went_on == [] and len(got) == 2 and got[1].start > got[0].end and got[1].continued == 0
    (t0, t1), = asked
    assert t0 == pytest.approx(got[1].start) and t1 - t0 == pytest.approx(ep.preroll + ep.onset_seconds, abs=0.031)


def test_a_held_utterance_is_open_only_while_its_own_time_runs(tmp_path: Path) -> None:
    """``may_go_on`` answers for the utterance asked about, not the latest early close (a held command waited on a
    later one and was acted on 6.4 s late)."""
    ep = Endpointer(webrtc_classifier(), complete=lambda: True, provisional=LONG - SHORT)
    audio = np.concatenate([quiet(1.0), trimmed(speech(tmp_path, "pause"))])
    got = ep.feed(audio, 0.0) + ep.feed(quiet(SHORT + 0.05), len(audio) / RATE)
    (first,) = got
    assert first.provisional_until is not None and ep.may_go_on(first), "closed early, its time runs"
    later = Utterance(first.samples, first.start + 5.0, first.end + 5.0, provisional_until=first.provisional_until)
    assert not ep.may_go_on(later), "another utterance's provisional time is not this one's"
    before = ep.now
    assert ep.feed(quiet(LONG), (len(audio) + len(quiet(SHORT + 0.05))) / RATE) == [] and ep.now > before
    assert not ep.may_go_on(first), "its time passed"
