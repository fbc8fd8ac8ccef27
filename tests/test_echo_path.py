"""The moderator's voice in the microphones: the played record, the echo path, the simulated room."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from fakes import RecordingOut

from moderator.audio.clip import Clip
from moderator.audio.delay import chirp
from moderator.audio.echo import LEAD, EchoPath
from moderator.audio.reference import RATE, PlayedAudio
from moderator.audio.room import ECHO_GAIN, EchoRoom, impulse_response


def tone(seconds: float, freq: float = 440.0, level: float = 0.5) -> Clip:
    return Clip.tone((freq,), seconds, RATE, level=level)


def test_the_record_gives_what_was_played_where_and_when_and_forgets_what_was_cut() -> None:
    out = RecordingOut()
    played = PlayedAudio(out)
    a, b = tone(1.0), tone(0.5, 660)
    played.play("A", a, 10.0)
    played.play("B", b, 10.25)
    assert out.played == [("A", a, 10.0), ("B", b, 10.25)], "everything is passed on"
    ref = played.reference(("A",), 9.5, RATE)
    assert not ref[: RATE // 2].any() and np.allclose(ref[RATE // 2 :], a.samples[: RATE // 2])
    both = played.reference(("A", "B"), 10.25, 160)
    assert np.allclose(both, a.samples[4000:4160] + b.samples[:160])
    played.stop("A", a, 10.5)
    assert out.stopped == [("A", a, 10.5)]
    after = played.reference(("A",), 10.25, RATE)
    assert after[: RATE // 4].any() and not after[RATE // 4 :].any(), "nothing after the cut"
    assert played.speaking(("A",), 10.4) and not played.speaking(("A",), 10.6)


def test_the_record_follows_when_the_device_really_started_a_clip() -> None:
    class LateOut(RecordingOut):
        """A sound card: a clip asked for now starts at its next buffer, 0.09 s later."""

        starts: tuple[tuple[str, float, float], ...] = ()

        def play(self, room: str, clip: Clip, at: float) -> None:
            super().play(room, clip, at)
            self.starts = (*self.starts, (room, at, at + 0.09))

    played = PlayedAudio(LateOut())
    a = tone(1.0)
    played.play("A", a, 5.0)
    ref = played.reference(("A",), 5.0, RATE)
    lag = round(0.09 * RATE)
    assert not ref[:lag].any() and np.allclose(ref[lag:], a.samples[: RATE - lag])
    assert not played.speaking(("A",), 5.05) and played.speaking(("A",), 6.05)
    played.stop("A", a, 5.5)
    assert not played.reference(("A",), 5.5, RATE).any()


class Subtractor:
    """A canceller that knows the room exactly: the microphone minus ``gain`` times the reference."""

    name = "subtractor"

    def __init__(self, gain: float, converged: bool = True) -> None:
        self.gain, self._converged, self.calls = gain, converged, 0

    def process(self, mic: np.ndarray, reference: np.ndarray) -> np.ndarray:
        assert len(mic) == len(reference) and len(mic) % 160 == 0
        self.calls += 1
        return mic - self.gain * reference

    @property
    def converged(self) -> bool:
        return self._converged

    def reset(self) -> None:
        self.calls = 0


def test_the_echo_path_hands_the_canceller_the_reference_of_the_same_instant_shifted_by_the_delay() -> None:
    played = PlayedAudio(RecordingOut())
    phrase = tone(1.0)
    played.play("A", phrase, 1.0)
    delay, gain = 0.045, 0.3
    # A real canceller models the echo after its reference: the path hands it the reference LEAD early.
    path = EchoPath(played, ("A",), lambda: Subtractor(gain), {"A": delay + LEAD})
    mic = np.zeros(3 * RATE, np.float32)
    at = round((1.0 + delay) * RATE)
    mic[at : at + len(phrase.samples)] += gain * phrase.samples
    voice = np.random.default_rng(0).normal(0, 0.05, RATE).astype(np.float32)
    mic[RATE // 2 + RATE : RATE // 2 + 2 * RATE] += voice  # a player talks over it
    cleaned, t = [], []
    for i in range(0, len(mic), 1000):  # chunks that are not whole 10 ms blocks
        audio, start = path.cancel("A", mic[i : i + 1000], i / RATE)
        cleaned.append(audio)
        t.append((start, len(audio)))
    for (s0, n0), (s1, _) in itertools.pairwise(t):
        assert s1 == pytest.approx(s0 + n0 / RATE), "the cleaned audio is gapless in time"
    out = np.concatenate(cleaned)
    assert len(out) == len(mic) // 160 * 160
    assert np.abs(out[:RATE]).max() < 1e-6 and np.abs(out[2 * RATE + RATE // 2 :]).max() < 1e-6, "echo gone"
    assert np.allclose(out[RATE // 2 + RATE : RATE // 2 + 2 * RATE], voice, atol=1e-5), "only the echo is removed"


def test_without_a_working_canceller_a_voice_over_the_moderator_is_noticed_and_its_echo_is_not() -> None:
    played = PlayedAudio(RecordingOut())
    rng = np.random.default_rng(3)
    phrase = Clip((rng.normal(0, 0.2, 3 * RATE)).astype(np.float32), RATE)
    played.play("A", phrase, 0.0)
    path = EchoPath(played, ("A",), None, {"A": 0.0})
    echo = 0.1 * played.reference(("A",), 0.0, 4 * RATE)
    for i in range(0, 4 * RATE, 1600):
        path.cancel("A", echo[i : i + 1600], i / RATE)
    assert not path.take_overheard("A"), "the moderator's own echo is not a player"
    played.play("A", phrase, 4.0)
    mic = 0.1 * played.reference(("A",), 4.0, 4 * RATE)
    mic[RATE : 2 * RATE] += rng.normal(0, 0.2, RATE).astype(np.float32)  # 6 dB over the echo, for 1 s
    for i in range(0, 4 * RATE, 1600):
        path.cancel("A", mic[i : i + 1600], 4.0 + i / RATE)
    assert path.take_overheard("A") and not path.take_overheard("A"), "noticed once"
    assert path.speaking("A", 6.9) and path.speaking("A", 7.2) and not path.speaking("A", 7.4), "with its tail"


class LateSubtractor(Subtractor):
    """A canceller that passes the first ``late`` blocks it is given as they are, as one does before it adapts."""

    def __init__(self, gain: float, late: int) -> None:
        super().__init__(gain)
        self.late = late

    def process(self, mic: np.ndarray, reference: np.ndarray) -> np.ndarray:
        self.calls += 1
        return mic.copy() if self.calls <= self.late else mic - self.gain * reference


def test_a_players_part_of_an_utterance_starts_at_their_voice_not_at_the_cancellers_onset_burst() -> None:
    rng = np.random.default_rng(5)
    played = PlayedAudio(RecordingOut())
    played.play("A", Clip(rng.normal(0, 0.2, 3 * RATE).astype(np.float32), RATE), 0.0)
    gain = 0.3
    path = EchoPath(played, ("A",), lambda: LateSubtractor(gain, late=6), {"A": LEAD})
    mic = gain * played.reference(("A",), 0.0, 3 * RATE)
    voice = slice(round(1.5 * RATE), round(2.5 * RATE))
    mic[voice] += rng.normal(0, 0.1, RATE).astype(np.float32)  # 6 dB under the moderator's echo, for 1 s
    out = np.concatenate([path.cancel("A", mic[i : i + 160], i / RATE)[0] for i in range(0, len(mic), 160)])
    assert np.abs(out[:960]).max() > 0.1, "the canceller's first 60 ms are the moderator's echo, as it was"
    span = path.player_span("A", out, 0.0)
    assert span is not None
    start, end = span
    assert 1.1 * RATE <= start <= 1.5 * RATE, f"it starts near their voice (1.5 s), not at {start / RATE:.2f} s"
    assert end >= 2.5 * RATE


def test_the_delay_is_followed_during_the_game_from_the_moderators_own_phrases() -> None:
    played = PlayedAudio(RecordingOut())
    room = EchoRoom(played, 0.0, seed=4)
    path = EchoPath(played, ("A",), None, {"A": 0.0})
    rng = np.random.default_rng(5)
    t = 0.0
    for _ in range(8):
        phrase = Clip(np.concatenate([chirp(RATE), rng.normal(0, 0.1, RATE).astype(np.float32)]), RATE)
        played.play("A", phrase, t + 0.1)
        for _ in range(0, 2 * RATE, 1600):
            mic = room.echo("A", t, 1600) + rng.normal(0, 1e-3, 1600).astype(np.float32)
            path.cancel("A", mic, t)
            t += 0.1
    truth = room.delays["A"]
    assert 0.02 <= truth <= 0.06
    assert len(path.estimates) >= 2, "estimated more than once: a move must be confirmed"
    assert path.delay("A") == pytest.approx(truth, abs=0.002)


def test_the_simulated_room_delays_and_reverberates_the_moderator_at_the_signal_to_echo_ratio() -> None:
    h = impulse_response(0.03, seed=1)
    assert np.argmax(np.abs(h)) == round(0.03 * RATE) and np.sum(h**2) == pytest.approx(1.0, rel=1e-4)
    played = PlayedAudio(RecordingOut())
    click = np.zeros(RATE, np.float32)
    click[0] = 1.0
    played.play("B", Clip(click, RATE), 2.0)
    room = EchoRoom(played, -6.0, seed=2)
    heard = room.echo("B", 2.0, RATE) / ECHO_GAIN
    assert np.argmax(np.abs(heard)) == round(room.delays["B"] * RATE)
    assert not room.echo("A", 2.0, RATE).any(), "room A's microphone does not hear room B"
    speech = np.random.default_rng(0).normal(0, 0.1, RATE).astype(np.float32)
    alone = PlayedAudio(RecordingOut())
    alone.play("B", Clip(speech, RATE), 3.0)
    # The moderator said what the player says: the player is scaled to the echo's level, then by the ratio.
    assert EchoRoom(alone, 0.0).speech_gain(speech) == pytest.approx(ECHO_GAIN, rel=1e-6)
    assert EchoRoom(alone, -6.0).speech_gain(speech) == pytest.approx(ECHO_GAIN * 10 ** (-6 / 20), rel=1e-6)
    assert EchoRoom(PlayedAudio(RecordingOut()), 0.0).speech_gain(speech) == 1.0, "before the moderator spoke"
