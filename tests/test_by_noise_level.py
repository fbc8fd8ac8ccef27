"""--acoustic-model auto: the original model hears a quiet room, the party model a loud one, per utterance."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from moderator.adapters.asr_by_noise import (
    AGREE_WORDS,
    QUIET_RISE_DB,
    QUIET_SPREAD_DB,
    STEADY_SWING_DB,
    ByNoiseLevel,
    floor_swing_db,
    quiet_room,
    spread_db,
)
from moderator.audio.endpoint import RATE
from moderator.audio.mix import hiss, noise_gain, steady_noise

needs_flite = pytest.mark.skipif(shutil.which("flite") is None, reason="flite is not installed (scripts/setup.sh)")
READING = Path("/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav")
needs_reading = pytest.mark.skipif(not READING.exists(), reason="Debian's pocketsphinx-testdata is not installed "
                                   "(scripts/setup.sh installs it)")
ROSTER = ["Alice", "Bob", "Carol", "Grace", "Heidi", "Xiomara"]  # Xiomara: not in the dictionary


def _said(text: str, voice: str = "flite:slt") -> np.ndarray:
    from moderator.adapters.player_voice import speak

    return speak(text, voice).resample(RATE).samples


@pytest.fixture(scope="module")
def party() -> np.ndarray:
    """20 s of 6-talker babble."""
    from moderator.adapters.player_voice import speak
    from moderator.voice_input import make_babble

    return make_babble(20.0, speak, talkers=6, seed=3)


def _in_room(speech: np.ndarray, party: np.ndarray | None, snr: float = 12.0) -> np.ndarray:
    """The command as an utterance: 0.3 s of the room before it and 0.6 s after, over a -60 dBFS microphone floor,
    and babble at ``snr`` dB (peak-frame) when ``party`` is given."""
    rng = np.random.default_rng(1)
    signal = np.concatenate([np.zeros(round(0.3 * RATE), np.float32), speech, np.zeros(round(0.6 * RATE), np.float32)])
    signal = signal + hiss(len(signal), -60.0, rng)
    if party is not None:
        bed = party[5 * RATE : 5 * RATE + len(signal)].copy()  # past the talkers' first words
        signal = signal + bed * noise_gain(speech, bed, snr, peak=True)
    return signal.astype(np.float32)


def test_spread_is_how_far_the_loud_frames_stand_above_the_quiet_ones():
    rng = np.random.default_rng(0)
    quiet = hiss(RATE, -60.0, rng)
    tone = 0.3 * np.sin(2 * np.pi * 440 * np.arange(RATE) / RATE).astype(np.float32)
    utterance = np.concatenate([quiet, tone, quiet])  # a third loud (-13.5 dBFS), two thirds at -60 dBFS
    assert spread_db(utterance, RATE) == pytest.approx(-13.5 - -60.0, abs=0.5)
    assert spread_db(tone, RATE) == pytest.approx(0.0, abs=0.1)  # all loud: nothing to stand above
    assert spread_db(np.zeros(RATE, np.float32), RATE) == 0.0  # digital silence is one level
    assert spread_db(np.zeros(10, np.float32), RATE) == 0.0  # shorter than a frame
    # the frame is 30 ms at any rate: the same utterance at 48 kHz spreads the same
    at48 = np.repeat(utterance, 3)
    assert spread_db(at48, 48000) == pytest.approx(spread_db(utterance, RATE), abs=0.5)


@needs_flite
def test_a_command_in_a_quiet_room_spreads_over_the_threshold_and_in_babble_under_it(party):
    speech = _said("hostages grace and heidi")
    assert spread_db(_in_room(speech, None), RATE) >= QUIET_SPREAD_DB
    assert spread_db(_in_room(speech, party, snr=18.0), RATE) < QUIET_SPREAD_DB
    assert spread_db(_in_room(speech, party, snr=12.0), RATE) < QUIET_SPREAD_DB


def test_a_steady_floor_swings_less_than_the_threshold_and_a_party_more(party):
    rng = np.random.default_rng(2)
    words = np.concatenate([np.zeros(round(0.3 * RATE), np.float32),
                            0.3 * np.sin(2 * np.pi * 300 * np.arange(RATE) / RATE).astype(np.float32),
                            np.zeros(round(0.6 * RATE), np.float32)])
    floor = steady_noise(len(words), "pink", rng)  # a fan, air conditioning
    fan = words + floor * noise_gain(words, floor, 18.0, peak=True)
    bed = party[5 * RATE : 5 * RATE + len(words)]
    crowd = words + bed * noise_gain(words, bed, 18.0, peak=True)
    assert floor_swing_db(fan, RATE) < STEADY_SWING_DB < floor_swing_db(crowd, RATE)
    assert spread_db(fan, RATE) < QUIET_SPREAD_DB and spread_db(crowd, RATE) < QUIET_SPREAD_DB  # both loud rooms
    assert quiet_room(fan, RATE) and not quiet_room(crowd, RATE)  # only the party's is the party model's
    assert floor_swing_db(fan[: 9 * round(0.03 * RATE)], RATE) == float("inf")  # too short to tell: not steady
    # the frame is 30 ms at any rate: the same utterance at 48 kHz swings about the same
    at48 = np.fft.irfft(np.pad(np.fft.rfft(fan), (0, len(fan))), 3 * len(fan)).astype(np.float32)
    assert floor_swing_db(at48, 48000) == pytest.approx(floor_swing_db(fan, RATE), abs=0.5)


@needs_flite
@needs_reading
def test_a_long_human_reading_in_a_quiet_room_goes_to_the_original_model_by_the_room_before_it(party):
    """A LibriVox reading (7.5 s of a human voice, pocketsphinx-testdata) said in a quiet room: its own frames are
    nearly all speech, so it spreads like a party, but it stands far above the room the listener heard before it.
    In babble it stands low above the room too."""
    from benchmarks.adaptation import as_the_game_hears
    from moderator.audio.clip import Clip

    data = [("reading", Clip.read(READING).resample(RATE).samples, "")]
    (_, [(quiet, quiet_rise)], _), = as_the_game_hears(data)  # one utterance, the room heard 8 s before it
    assert spread_db(quiet, RATE) < QUIET_SPREAD_DB  # the utterance alone says "loud room"
    assert quiet_rise >= QUIET_RISE_DB  # the room before it says "quiet"
    assert quiet_room(quiet, RATE, rise=quiet_rise) and not quiet_room(quiet, RATE)
    (_, [(loud, loud_rise)], _), = as_the_game_hears(data, party, snr=18.0)
    assert loud_rise < QUIET_RISE_DB and not quiet_room(loud, RATE, rise=loud_rise)
    rec = ByNoiseLevel(_Said(None), _Said(None))  # type: ignore[arg-type]
    assert rec.model_for(quiet, RATE) is rec.loud  # told nothing of the room: the utterance alone
    rec.room_rise = quiet_rise  # the listener's word
    assert rec.model_for(quiet, RATE) is rec.quiet
    rec.room_rise = loud_rise
    assert rec.model_for(quiet, RATE) is rec.loud  # neither the room before it nor its spread says "quiet"


def test_either_the_room_before_the_words_or_the_utterances_spread_says_quiet():
    rng = np.random.default_rng(0)
    voice = 0.1 * rng.standard_normal(RATE)  # loud in every band

    def murmur(low: float, high: float) -> np.ndarray:  # a floor that swings (not a fan's)
        return rng.standard_normal(RATE) * np.repeat(rng.uniform(low, high, 10), RATE // 10)

    clear = np.concatenate([murmur(1e-4, 3e-3), voice, murmur(1e-4, 3e-3)]).astype(np.float32)
    assert floor_swing_db(clear, RATE) >= STEADY_SWING_DB and spread_db(clear, RATE) >= QUIET_SPREAD_DB
    muddy = np.concatenate([murmur(5e-3, 3e-2), voice, murmur(5e-3, 3e-2)]).astype(np.float32)
    assert floor_swing_db(muddy, RATE) >= STEADY_SWING_DB and spread_db(muddy, RATE) < QUIET_SPREAD_DB
    # Room unknown: the spread alone.
    assert quiet_room(clear, RATE) and quiet_room(clear, RATE, rise=None) and not quiet_room(muddy, RATE)
    # Just after talk, a command rises little above the room the listener heard, but spreads like a quiet room.
    assert quiet_room(clear, RATE, rise=QUIET_RISE_DB - 10)
    # A long reading spreads like a party, but rises far above the quiet room before it.
    assert quiet_room(muddy, RATE, rise=QUIET_RISE_DB) and not quiet_room(muddy, RATE, rise=QUIET_RISE_DB - 0.1)
    rec = ByNoiseLevel(_Said(None), _Said(None))  # type: ignore[arg-type]
    rec.room_rise = QUIET_RISE_DB - 10
    assert rec.model_for(clear, RATE) is rec.quiet and rec.model_for(muddy, RATE) is rec.loud


@needs_flite
def test_each_utterance_is_heard_by_the_model_for_its_room(party, tmp_path):
    from moderator.acoustic import acoustic_model
    from moderator.adapters.asr_pocketsphinx import PocketsphinxRecognizer
    from moderator.speech.grammar import load_grammar

    grammar = load_grammar("en")
    rec = ByNoiseLevel(PocketsphinxRecognizer(), PocketsphinxRecognizer(acoustic_model("party", cache=tmp_path)))
    alone = {"default": PocketsphinxRecognizer(),
             "party": PocketsphinxRecognizer(acoustic_model("party", cache=tmp_path))}
    for r in (rec, *alone.values()):
        r.expect(grammar, ROSTER)
    assert rec.chosen == "default" and rec.last is None  # nothing heard yet
    speech = _said("hostages grace and heidi")
    for signal, model in ((_in_room(speech, None), "default"), (_in_room(speech, party, 18.0), "party"),
                          (_in_room(speech, None), "default")):
        heard = rec.recognize(signal, RATE)
        assert rec.chosen == model
        own = alone[model].recognize(signal, RATE)
        assert (heard.text, heard.confidence) == (own.text, own.confidence), "exactly that model's transcript"
        assert (rec.last.text, rec.last.llr) == (alone[model].last.text, alone[model].last.llr)
    assert heard.text == "hostages grace and heidi"


@needs_flite
def test_made_up_pronunciations_reach_both_models_and_a_name_is_heard_in_either(party, tmp_path):
    from moderator.acoustic import acoustic_model
    from moderator.adapters.asr_pocketsphinx import PocketsphinxRecognizer
    from moderator.speech.grammar import load_grammar

    rec = ByNoiseLevel(PocketsphinxRecognizer(), PocketsphinxRecognizer(acoustic_model("party", cache=tmp_path)))
    rec.expect(load_grammar("en"), ROSTER)
    assert "xiomara" in rec.derived
    assert rec.quiet.missing_words(["xiomara"]) == rec.loud.missing_words(["xiomara"]) == []
    assert rec.missing_words(["xiomara", "zzyzx"]) == ["zzyzx"]
    speech = _said("i appoint xiomara as leader")
    assert rec.recognize(_in_room(speech, None), RATE).text == "i appoint xiomara as leader"
    assert rec.chosen == "default"


@needs_flite
def test_a_fork_streams_on_the_model_that_heard_its_last_utterance(party, tmp_path):
    from moderator.acoustic import acoustic_model
    from moderator.adapters.asr_pocketsphinx import PocketsphinxRecognizer
    from moderator.adapters.sphinx import RecognitionError
    from moderator.speech.grammar import load_grammar

    rec = ByNoiseLevel(PocketsphinxRecognizer(), PocketsphinxRecognizer(acoustic_model("party", cache=tmp_path)))
    mic = rec.fork()
    assert mic.quiet is not rec.quiet and mic.loud is not rec.loud  # decoders of its own
    mic.expect(load_grammar("en"), ROSTER)
    with pytest.raises(RecognitionError, match="begin"):
        mic.accept(np.zeros(RATE, np.float32), RATE)
    speech = _said("pause the game")
    loud = _in_room(speech, party, 12.0)
    for signal, model in ((_in_room(speech, None), "default"), (loud, "party")):
        mic.recognize(signal, RATE)
        assert mic.chosen == model
        mic.begin()
        partial = mic.accept(signal, RATE)
        streaming = {"default": mic.quiet, "party": mic.loud}[model]
        assert streaming._stream and not ({mic.quiet, mic.loud} - {streaming}).pop()._stream
        mic.finish()
        assert not streaming._stream
    assert partial  # the party model's stream heard words
    mic.finish()  # nothing open: a no-op
    rec.close()
    mic.close()


def test_auto_is_the_default_acoustic_model_of_every_command():
    from moderator.cli import build_parser

    parser = build_parser()
    for command in (["listen", "--players", "A,B"], ["recognize", "x.wav", "--players", "A,B"],
                    ["simulate", "eight_players"], ["play", "--players", "A,B"]):
        assert parser.parse_args(command).acoustic_model == "auto", command


def test_make_recognizer_builds_both_models_for_auto_and_one_otherwise():
    from moderator.adapters.asr_pocketsphinx import PocketsphinxRecognizer
    from moderator.listening import make_recognizer

    auto = make_recognizer("pocketsphinx")
    assert isinstance(auto, ByNoiseLevel) and auto.quiet._root != auto.loud._root
    assert auto.loud._root.name == "party" or (auto.loud._root / "en-us").resolve().parent.name == "party"
    for name in ("default", "party"):
        assert isinstance(make_recognizer("pocketsphinx", None, name), PocketsphinxRecognizer)


@needs_flite
def test_the_mic_check_says_which_model_heard_each_utterance(party, tmp_path):
    import io
    import json

    from fakes import FakeAudioIn

    from moderator.acoustic import acoustic_model
    from moderator.adapters.asr_pocketsphinx import PocketsphinxRecognizer
    from moderator.adapters.clock import VirtualClock
    from moderator.commands.listen import MicCheck
    from moderator.speech.grammar import load_grammar

    rec = ByNoiseLevel(PocketsphinxRecognizer(), PocketsphinxRecognizer(acoustic_model("party", cache=tmp_path)))
    rec.expect(load_grammar(), ROSTER)
    speech = _said("hostages grace and heidi")
    mics = FakeAudioIn(("A", "B"))
    mics.push("A", _in_room(np.concatenate([np.zeros(RATE, np.float32), speech]), None), t=100.0)
    around = np.zeros(2 * RATE, np.float32)  # the endpointer hears the party before and after the words
    mics.push("B", _in_room(np.concatenate([around, speech, around]), party, 18.0), t=100.0)
    for as_json in (True, False):
        out = io.StringIO()
        check = MicCheck(mics, rec, load_grammar(), ROSTER, VirtualClock(100.0), out, as_json=as_json)
        check.step(mics.read())
        if as_json:
            lines = [json.loads(line) for line in out.getvalue().splitlines()]
            assert {r["room"]: r["model"] for r in lines} == {"A": "default", "B": "party"}
            mics.push("A", _in_room(speech, None), t=200.0)
        else:
            assert "default model) -> hostages" in out.getvalue(), out.getvalue()


@needs_flite
def test_an_utterance_said_over_the_moderator_is_heard_by_the_original_model(party, tmp_path):
    from moderator.acoustic import acoustic_model
    from moderator.adapters.asr_pocketsphinx import PocketsphinxRecognizer

    rec = ByNoiseLevel(PocketsphinxRecognizer(), PocketsphinxRecognizer(acoustic_model("party", cache=tmp_path)))
    loud = _in_room(_said("pause the game"), party, 12.0)
    assert rec.model_for(loud, RATE) is rec.loud
    floor = steady_noise(len(loud), "pink", np.random.default_rng(4))
    fan = _in_room(_said("pause the game"), None)
    fan = fan + floor * noise_gain(fan, floor, 18.0, peak=True)
    assert rec.model_for(fan, RATE) is rec.quiet  # a steady floor is no party, however loud
    rec.over_the_moderator = True  # the listener's word: the moderator was audible meanwhile (its residual)
    assert rec.model_for(loud, RATE) is rec.quiet


class _Said:
    """A recognizer that answers every utterance with one transcript (``going_on_from`` as pocketsphinx's), and
    counts its calls."""

    def __init__(self, transcript):
        self.transcript, self.calls = transcript, 0

    def recognize(self, samples, rate, *, going_on_from=None):
        from moderator.adapters.asr_pocketsphinx import goes_on_from
        from moderator.ports import Transcript

        self.calls += 1
        if going_on_from is not None and self.transcript.text and not goes_on_from(self.transcript.text,
                                                                                   going_on_from):
            return Transcript("", 0.0)
        return self.transcript


def test_a_party_path_cut_short_is_completed_by_the_original_model_only_when_it_goes_on_from_the_same_words():
    from moderator.ports import Transcript

    rng = np.random.default_rng(2)
    swells = np.repeat(rng.uniform(0.02, 0.3, 10), RATE // 10)  # talkers come and go: no steady floor
    loud_room = (rng.standard_normal(RATE) * swells).astype(np.float32)  # spreads a few dB
    cut = Transcript("", 0.0, partial="the bomber is")
    cases = [  # what the party model heard, what the original heard -> the transcript taken, which model
        (cut, Transcript("the bomber is carol", 0.8), "the bomber is carol", "default"),
        (cut, Transcript("it is alice", 0.9), "", "party"),  # other words: the two models disagree
        (cut, Transcript("", 0.3, guess="the bomber is carol"), "", "party"),  # the original is not sure either
        (Transcript("", 0.0, partial="the bomber is carol"), Transcript("the bomber is carol", 0.8), "", "party"),
        (Transcript("the bomber is carol", 0.7), Transcript("it is alice", 0.9), "the bomber is carol", "party"),
        (Transcript("", 0.0), Transcript("it is alice", 0.9), "", "party"),  # no words at all: nothing to agree on
        (Transcript("", 0.4, guess="it is alice"), Transcript("it is alice", 0.9), "", "party"),  # a low score
        (Transcript("", 0.0, partial="hostage"), Transcript("hostage vincent", 0.8), "", "party"),  # one word: too few
    ]
    for party_heard, original_heard, taken, model in cases:
        original, party = _Said(original_heard), _Said(party_heard)
        rec = ByNoiseLevel(original, party)
        assert rec.model_for(loud_room, RATE) is party
        assert rec.recognize(loud_room, RATE).text == taken, (party_heard, original_heard)
        assert rec.chosen == model
        asked = len(party_heard.partial.split()) >= AGREE_WORDS and not party_heard.text
        assert original.calls == asked, "the original decodes only a party path cut short"
        assert rec._by_level is party, "the next utterance streams on the model the room's level chose"


@needs_flite
def test_pocketsphinx_judges_only_a_sentence_that_goes_on_from_the_words_it_is_given():
    from moderator.adapters.asr_pocketsphinx import PocketsphinxRecognizer, goes_on_from
    from moderator.speech.grammar import load_grammar

    assert goes_on_from("the bomber is carol", "the bomber is")
    assert not goes_on_from("the bomber is", "the bomber is")  # nothing past them
    assert not goes_on_from("it is carol", "the bomber is") and not goes_on_from("the bomber", "the bomber is")
    rec = PocketsphinxRecognizer()
    rec.expect(load_grammar("en"), ROSTER)
    said = _in_room(_said("the bomber is carol"), None)
    assert rec.recognize(said, RATE, going_on_from="the bomber is").text == "the bomber is carol"
    fresh = PocketsphinxRecognizer()
    fresh.expect(load_grammar("en"), ROSTER)
    assert fresh.recognize(said, RATE, going_on_from="it is").text == ""
    assert fresh.last.text == "the bomber is carol" and fresh.last.confidence == 0.0
    assert fresh._phones is None, "no phone loop for a sentence that does not go on from the words"
    assert fresh.recognize(said, RATE).text == "the bomber is carol"  # without them, as always
