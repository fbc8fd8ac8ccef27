"""The moderator's own voice in the microphones: echo cancellation against what it played, and, while a
canceller has not adapted, telling a player's voice over it from its echo."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from moderator.audio.delay import estimate_delay
from moderator.audio.reference import RATE, PlayedAudio
from moderator.game.state import ROOMS
from moderator.ports import EchoCanceller

#: Cancellers take whole 10 ms blocks.
BLOCK = RATE // 100
#: After the moderator stops speaking, its voice still rings in the room this long (reverberation).
ECHO_TAIL = 0.3
#: Double-talk: a player is heard over the moderator when the microphone is this much louder than the
#: echo alone explains (the room's coupling from speaker to microphone, followed over the phrase) ...
OVER_ECHO_DB = 8.0
#: ... for this long.
OVER_ECHO_SECONDS = 0.2
#: The reference is taken this much earlier than the measured delay: a canceller models only an echo
#: that comes after its reference, and the direct sound may arrive a little sooner than measured.
LEAD = 0.008
#: What the canceller leaves of the moderator: a microphone's frame counts as speech only when it is
#: this much louder than the residual expected from what the moderator is saying, ...
RESIDUAL_MARGIN = 6.0
#: ... the moderator's level in the room dying away this fast after each sound (60 dB in RT60 0.3 s), ...
DECAY_DB_PER_S = 200.0
#: ... and the residual's share followed in windows of this many 10 ms blocks: a low percentile of the
#: latest windows, since a player talking over the moderator makes a window's share look high.
LEAK_BLOCKS = 10
LEAK_WINDOWS = 30
LEAK_PERCENTILE = 25
#: An utterance is a player's, not the canceller's leftovers, when it comes within this many dB of the
#: moderator's own level in the microphone for at least this long (10 ms blocks, in all).
PLAYER_UNDER_ECHO = -12.0
PLAYER_SECONDS = 0.15
#: The player's part begins with the first stretch of such blocks (none of its gaps as long as ``PLAYER_GAP``)
#: that holds an unbroken run of them ``PLAYER_RUN`` long (seconds): what the canceller leaves of the
#: moderator's onsets, before it adapts, comes in bursts of a few blocks (0.06-0.07 s under the time's-up
#: beeps), and taken for the player's start they lengthened a command said over them by 1.6 s of residual,
#: which the recognizer then found swallowed as silence. A player under the moderator comes in pieces, each
#: within a syllable of the next. Its end is the last such block: cut at the last long run, a residual burst of
#: 0.11 s became a clip short enough to pass for "pause".
PLAYER_RUN = 0.1
PLAYER_GAP = 0.3
#: The moderator is audible in a microphone when its level there (``_echo_levels``) reaches this (dB FS).
AUDIBLE_DB = -60.0
#: A player's part of an utterance is kept with this much before and after it.
SPAN_BEFORE, SPAN_AFTER = 0.3, 0.25
#: The moderator's level in each microphone is remembered this long (the longest utterance, and more).
ECHO_MEMORY = 10.0
#: A canceller lags at the start of each phrase (speex removed 4 dB in the first 0.1 s, 30 dB after
#: 0.2 s): for this long after the moderator starts again, nothing is assumed cancelled.
ONSET = 0.2
#: After this long without the moderator's voice in the reference (its reverberation, and the canceller's
#: filter, 0.256 s, have run out), the microphone's audio is passed on as it is.
PASS_AFTER = 0.6
#: The delay is followed in the game over this much of the latest audio, ...
TRACK_SECONDS = 4.0
#: ... from the moderator's phrases, once it has said this much since the last estimate, ...
TRACK_EVERY = 3.0
#: ... when the estimate is at least this sure (the peak's height over the correlation's median: the chirp
#: scores 45-350, other audio up to 18), and the last one agreed with it within ``TRACK_MOVE``, ...
TRACK_CONFIDENCE = 25.0
#: ... and has moved by more than this.
TRACK_MOVE = 0.003
#: A delay that moves by more than this resets the canceller (its filter, 0.256 s, absorbs less).
REFILTER = 0.05
#: The echo path's gain is taken as known after this many 100 ms windows of the moderator alone.
GAIN_KNOWN = 5


def rooms_heard(mic: str | None) -> tuple[str, ...]:
    """The rooms whose speaker a microphone hears: its own, or both for one shared microphone."""
    return ROOMS if mic is None else (mic,)


@dataclass
class _Mic:
    canceller: EchoCanceller | None
    delay: float
    carry: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    over: float = 0.0
    """Seconds in a row the microphone was louder than the echo explains."""
    overheard: bool = False
    mic_recent: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    """The last ``TRACK_SECONDS`` of the microphone, before cancellation, ..."""
    ref_recent: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    """... and of what was played at the same clock times (no delay applied)."""
    spoken: float = 0.0
    """Seconds of the moderator's voice since the delay was last estimated."""
    envelope: float = -120.0
    """The moderator's level at the microphone (dB of the reference, held and decaying with the room)."""
    gain: float = 0.0
    """dB of the moderator's voice in the microphone against the reference: the echo path's gain."""
    gains: list[float] = field(default_factory=list)
    """The latest windows' microphone-to-reference ratios (dB) while the moderator spoke."""
    leak: float = 0.0
    """dB of what is left after cancelling, against the echo: 0 until the canceller has shown better."""
    shares: list[float] = field(default_factory=list)
    """The latest windows' output-to-microphone ratios (dB) while the moderator spoke."""
    echo_levels: list[tuple[float, np.ndarray]] = field(default_factory=list)
    """(clock time, dB per 10 ms block) of the moderator's voice in the microphone, lately."""
    silent_for: float = 1.0
    """Seconds since the moderator's voice was last in the reference."""
    since_onset: float = 1.0
    """Seconds since the moderator last started speaking after a pause."""
    floors: list[tuple[float, np.ndarray]] = field(default_factory=list)
    """(clock time, dB per 10 ms block) of the residual expected in the latest chunks."""


class EchoPath:
    """Cancels what the moderator played (``played``) out of each microphone.

    ``delays`` is, per microphone, how much later than its scheduled time the moderator's audio reaches
    that microphone (measured at set-up with a chirp); the canceller handles what remains of it and the
    room's reverberation. Without a canceller (``new_canceller`` None), audio passes through and the
    listening loop falls back to half-duplex; ``overheard`` then still tells it that a player spoke
    while the moderator talked, so that they can be asked to say it again.
    """

    def __init__(self, played: PlayedAudio, mics: tuple[str | None, ...],
                 new_canceller: Callable[[], EchoCanceller] | None = None,
                 delays: dict[str | None, float] | None = None) -> None:
        self.played = played
        self._mics = {mic: _Mic(new_canceller() if new_canceller else None, (delays or {}).get(mic, 0.0))
                      for mic in mics}
        #: Every delay estimated in the game: (microphone, clock time, delay, confidence).
        self.estimates: list[tuple[str | None, float, float, float]] = []

    def set_delay(self, mic: str | None, delay: float) -> None:
        """A newly measured delay. The canceller starts afresh only if it moved by more than its filter
        can follow (``REFILTER``): a reset canceller is deaf-making for seconds (half-duplex until it has
        adapted again)."""
        state = self._mics[mic]
        if abs(state.delay - delay) > REFILTER and state.canceller is not None:
            state.canceller.reset()
        state.delay = delay

    def delay(self, mic: str | None) -> float:
        """The delay in use for ``mic``."""
        return self._mics[mic].delay

    def cancelling(self, mic: str | None) -> bool:
        """True when ``mic``'s canceller has adapted, so the microphone can listen while the moderator talks."""
        canceller = self._mics[mic].canceller
        return canceller is not None and canceller.converged

    def speaking(self, mic: str | None, t: float) -> bool:
        """Whether the moderator's voice (or its tail) is in ``mic`` at clock time ``t``."""
        state = self._mics[mic]
        return any(self.played.speaking(rooms_heard(mic), t - state.delay - back) for back in (0.0, ECHO_TAIL))

    def cancel(self, mic: str | None, samples: np.ndarray, t: float) -> tuple[np.ndarray, float]:
        """16 kHz audio of ``mic`` from clock time ``t`` with the moderator's echo removed, and the time of
        its first sample. Whole 10 ms blocks go through; the rest waits for the next chunk."""
        state = self._mics[mic]
        t -= len(state.carry) / RATE
        audio = np.concatenate([state.carry, samples.astype(np.float32, copy=False)])
        whole = len(audio) // BLOCK * BLOCK
        audio, state.carry = audio[:whole], audio[whole:]
        if whole == 0:
            return audio, t
        reference = self.played.reference(rooms_heard(mic), t - (state.delay - LEAD), whole)
        raw = audio
        self._track(mic, state, audio, t)
        if state.canceller is None or not state.canceller.converged:
            self._watch_double_talk(state, audio, reference)
        if state.canceller is not None:
            cancelled = state.canceller.process(audio, reference)  # always: the filter follows the stream
            # Long after the moderator's last sound, there is nothing to cancel: the microphone as it is
            # (a canceller still filters what it passes: speex's DC notch moved chatter's scores by 0.07).
            quiet = not reference.any() and state.silent_for >= PASS_AFTER
            audio = audio if quiet else cancelled
        self._follow_residual(state, raw, audio, reference, t)
        return audio, t

    def residual_db(self, mic: str | None, t0: float, t1: float) -> float:
        """The loudest the moderator's residual echo is expected to be in ``mic`` between clock times ``t0``
        and ``t1`` (dB FS; very low while it is silent). The endpointer hears speech only above it."""
        loudest = -120.0
        for start, blocks in self._mics[mic].floors:
            lo = max(0, int((t0 - start) * RATE) // BLOCK)
            hi = min(len(blocks), -(-int((t1 - start) * RATE) // BLOCK))
            if hi > lo:
                loudest = max(loudest, float(blocks[lo:hi].max()))
        return loudest

    def _follow_residual(self, state: _Mic, raw: np.ndarray, out: np.ndarray, reference: np.ndarray,
                         t: float) -> None:
        """How loud the moderator is in the microphone (the reference's envelope, decaying with the room's
        reverberation, times the echo path's gain) and what the canceller leaves of it (the envelope times
        the leak). Gain and leak are low percentiles of the latest windows' ratios to the reference while
        the moderator spoke: a player talking over it makes a window's ratio look high."""
        blocks = len(out) // BLOCK
        ref_db = _block_db(reference, blocks)
        out_db = _block_db(out, blocks)
        raw_db = _block_db(raw, blocks)
        envelope = np.empty(blocks)
        floor = np.empty(blocks)
        step = BLOCK / RATE
        decay = DECAY_DB_PER_S * step
        for b in range(blocks):
            if ref_db[b] > -50:
                state.since_onset = 0.0 if state.silent_for >= ECHO_TAIL else state.since_onset + step
                state.silent_for = 0.0
            else:
                state.silent_for += step
                state.since_onset += step
            state.envelope = max(float(ref_db[b]), state.envelope - decay)
            envelope[b] = state.envelope
            floor[b] = state.envelope + state.gain + (0.0 if state.since_onset < ONSET else state.leak)
        for w in range(0, blocks - LEAK_BLOCKS + 1, LEAK_BLOCKS):
            talking = ref_db[w : w + LEAK_BLOCKS]
            if talking.min() < -50:  # the moderator paused within the window: no clean ratio
                continue
            said = _power_db(talking)
            state.gains = [*state.gains[-(LEAK_WINDOWS - 1) :], _power_db(raw_db[w : w + LEAK_BLOCKS]) - said]
            state.gain = float(np.percentile(state.gains, LEAK_PERCENTILE))
            state.shares = [*state.shares[-(LEAK_WINDOWS - 1) :],
                            _power_db(out_db[w : w + LEAK_BLOCKS]) - _power_db(raw_db[w : w + LEAK_BLOCKS])]
            state.leak = min(0.0, float(np.percentile(state.shares, LEAK_PERCENTILE)))
        state.floors = [*state.floors[-2:], (t, floor)]
        keep = round(ECHO_MEMORY * RATE / len(out)) if len(out) else 0
        state.echo_levels = [*state.echo_levels[-keep:], (t, envelope + state.gain)]

    def player_span(self, mic: str | None, samples: np.ndarray, t: float) -> tuple[int, int] | None:
        """The part of an utterance (``samples`` after cancelling, from clock time ``t``) that a player
        said, as sample indices with a little room before and after; None when it is only what the
        canceller left of the moderator's own voice (which even carries the moderator's own words).

        A 10 ms block is a player's when it comes within ``PLAYER_UNDER_ECHO`` dB of how loud the moderator
        itself is in that microphone (the residual lies 20 dB and more under it once the canceller has
        adapted), and is not digital quiet; an utterance needs ``PLAYER_SECONDS`` of such blocks, and its part
        runs from the first stretch of them that holds an unbroken ``PLAYER_RUN`` (the first block when none
        does) to the last of them. While the moderator is silent, the whole utterance is the player's."""
        blocks = len(samples) // BLOCK
        echo = self._echo_levels(mic, t, blocks)
        if blocks == 0 or echo.max() < AUDIBLE_DB:
            return 0, len(samples)
        player = np.nonzero(_block_db(samples, blocks) > np.maximum(echo + PLAYER_UNDER_ECHO, -55.0))[0]
        if len(player) * BLOCK / RATE < PLAYER_SECONDS:
            return None
        first = next((stretch[0] for stretch in _split(player, round(PLAYER_GAP * RATE) // BLOCK)
                      if any(len(run) * BLOCK / RATE >= PLAYER_RUN for run in _split(stretch, 1))), player[0])
        before, after = round(SPAN_BEFORE * RATE), round(SPAN_AFTER * RATE)
        return max(0, first * BLOCK - before), min(len(samples), (player[-1] + 1) * BLOCK + after)

    def talked_over(self, mic: str | None, t0: float, t1: float) -> bool:
        """Whether the moderator was audible in ``mic`` at any time between clock times ``t0`` and ``t1`` (what
        a player said then was said over it)."""
        blocks = max(1, round((t1 - t0) * RATE) // BLOCK)
        return bool(self._echo_levels(mic, t0, blocks).max() >= AUDIBLE_DB)

    def _echo_levels(self, mic: str | None, t: float, blocks: int) -> np.ndarray:
        """The moderator's level in ``mic`` (dB per 10 ms block) over ``blocks`` blocks from clock time ``t``."""
        echo = np.full(blocks, -120.0)
        for start, levels in self._mics[mic].echo_levels:
            first = round((start - t) * RATE) // BLOCK  # where this record starts among the blocks
            lo, hi = max(first, 0), min(first + len(levels), blocks)
            if hi > lo:
                echo[lo:hi] = levels[lo - first : hi - first]
        return echo

    def take_overheard(self, mic: str | None) -> bool:
        """Whether a player was heard over the moderator (without a working canceller) since the last call."""
        state = self._mics[mic]
        heard, state.overheard = state.overheard, False
        return heard

    def _track(self, mic: str | None, state: _Mic, audio: np.ndarray, t: float) -> None:
        """Follow the delay in the game: the speaker's or the microphone's buffers may drift (a Bluetooth
        speaker, a USB microphone that restarted). The moderator's own phrases are the test signal."""
        undelayed = self.played.reference(rooms_heard(mic), t, len(audio))
        keep = round(TRACK_SECONDS * RATE)
        state.mic_recent = np.concatenate([state.mic_recent, audio])[-keep:]
        state.ref_recent = np.concatenate([state.ref_recent, undelayed])[-keep:]
        if undelayed.any():
            state.spoken += len(audio) / RATE
        if state.spoken < TRACK_EVERY or len(state.mic_recent) < keep:
            return
        state.spoken = 0.0
        delay, confidence = estimate_delay(state.ref_recent, state.mic_recent, RATE)
        previous = [d for m, _, d, c in self.estimates if m == mic and c >= TRACK_CONFIDENCE][-1:]
        self.estimates.append((mic, t, delay, confidence))
        agreed = previous and abs(previous[0] - delay) <= TRACK_MOVE
        if confidence >= TRACK_CONFIDENCE and agreed and abs(delay - state.delay) > TRACK_MOVE:
            self.set_delay(mic, delay)

    def _watch_double_talk(self, state: _Mic, audio: np.ndarray, reference: np.ndarray) -> None:
        """Notice speech well above what the echo alone explains (the reference times the echo path's gain,
        once that is known), in 100 ms windows."""
        window = RATE // 10
        if len(state.gains) < GAIN_KNOWN:
            return
        for i in range(0, len(audio) - window + 1, window):
            ref_db = _db(reference[i : i + window])
            if ref_db < -50:
                state.over = 0.0
                continue
            excess = _db(audio[i : i + window]) - ref_db
            state.over = state.over + window / RATE if excess > state.gain + OVER_ECHO_DB else 0.0
            if state.over >= OVER_ECHO_SECONDS:
                state.overheard = True


def _split(blocks: np.ndarray, gap: int) -> list[np.ndarray]:
    """Ascending block indices, cut where the next one is more than ``gap`` blocks on."""
    return np.split(blocks, np.nonzero(np.diff(blocks) > gap)[0] + 1)


def _block_db(x: np.ndarray, blocks: int) -> np.ndarray:
    """dB FS of each 10 ms block."""
    power = np.mean(np.square(x[: blocks * BLOCK].reshape(blocks, BLOCK), dtype=np.float64), axis=1)
    return 10 * np.log10(power + 1e-12)


def _power_db(levels: np.ndarray) -> float:
    """The level of blocks together (their mean power), in dB."""
    return 10 * float(np.log10(np.mean(10 ** (levels / 10)) + 1e-12))


def _db(x: np.ndarray) -> float:
    return 10 * float(np.log10(np.mean(np.square(x, dtype=np.float64)) + 1e-12))
