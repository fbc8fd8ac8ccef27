"""Endpointing: cut a stream of audio into utterances, in audio time (never the wall clock)."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from moderator.audio.clip import rms_db
from moderator.audio.pcm import to_pcm16

RATE = 16000
FRAME = 480  # 30 ms at 16 kHz: a frame size webrtcvad accepts

RISE_MIN = 8.0
"""dB by which an utterance's loud frames (its 95th percentile) must stand above the room's median level of the
``Endpointer.room_seconds`` before it, for it to be someone talking to the moderator rather than the party around
it. Babble and music are loud all the time and evenly so, while one voice has quiet gaps and loud vowels. Measured
on the dev split (commands of seed 1, babble seeds 7, 11 and 12, none of the suite's): 255 utterances of babble
alone stood 4.3 dB above their room's median (median; 99th percentile 6.3, highest 7.7), the 5 that the grammar
took 1.6-4.8 dB; the commands recognized right at 6 dB peak-frame SNR stood 8.2 dB and more above it, at 12 dB 14
and more (docs/benchmarks/changes.md, "An utterance must stand out from the room")."""

#: Says whether one 30 ms frame (16-bit little-endian PCM at 16 kHz) is speech.
FrameClassifier = Callable[[bytes], bool]


def webrtc_classifier(aggressiveness: int = 2) -> FrameClassifier:
    """WebRTC's VAD (0: lenient ... 3: strict about what counts as speech)."""
    import webrtcvad

    vad = webrtcvad.Vad(aggressiveness)
    return lambda frame: bool(vad.is_speech(frame, RATE))


@dataclass(frozen=True)
class Utterance:
    """One stretch of speech: samples at 16 kHz, and its start and end in audio time."""

    samples: np.ndarray
    start: float
    end: float
    before: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    """Audio just before ``samples`` (up to ``Endpointer.talkover_preroll``): a first sound said over the
    moderator is quiet under what is left of its voice, and may start before the endpointer heard speech."""
    rise: float | None = None
    """dB by which its loud frames stand above the room's median level before it (see ``RISE_MIN``); None when
    the endpointer had heard too little of the room to say."""
    provisional_until: float | None = None
    """Audio time until which this utterance, closed by the short hangover, may still turn out to be the start of a
    longer one (``Endpointer.provisional``): a talker who goes on by then continues it. None: it is final."""
    continued: int = 0
    """How many times the talker went on after an early close of this utterance (``Endpointer.on_continue``): of two
    utterances with one start, the one continued fewer times is only the first part of the other."""

    @property
    def stands_out(self) -> bool:
        """Whether it is loud enough against the room to be someone talking to the moderator (``RISE_MIN``)."""
        return self.rise is None or self.rise >= RISE_MIN


@dataclass(frozen=True)
class _Closed:
    """An utterance closed early, kept while it is provisional (``Endpointer.provisional``): what continuing it
    needs."""

    until: float
    """The audio time its provisional time ends (``Utterance.provisional_until``)."""
    frames: list[np.ndarray]
    """Its frames, unpadded."""
    levels: list[float]
    """Their levels (dB FS)."""
    start: float
    before: np.ndarray
    room: float | None
    """The room's level before it."""
    continued: int
    """``Utterance.continued``."""


@dataclass
class Endpointer:
    """Finds where speech starts and ends.

    Speech starts when ``start_frames`` of the last ``start_window`` frames are speech, and keeps
    ``preroll`` seconds before that so the first word is whole. It ends after ``hangover`` seconds of
    non-speech, or at ``max_seconds``. Feed it 16 kHz float32 chunks of any size with the audio time of
    their first sample.

    A frame is speech when the classifier says so and it stands out from the background: louder than
    ``min_dbfs`` and ``noise_margin`` dB above the room's background level. The background is followed
    from the quiet moments between words: the estimate drops at once to a quieter (smoothed) level and
    rises by at most ``noise_rise`` dB a second. Without it, a party's babble (which WebRTC's VAD calls
    speech) would keep every utterance open until ``max_seconds``. That alone is not enough at a party that
    never pauses: its babble's lulls set the background, and its loud moments stand 7-10 dB above them. So a
    frame must also be ``room_margin`` dB above the room's median level (of the last ``room_seconds``; inside
    an utterance, of those before it began), and each utterance says how far its loud frames stood above that
    median (``Utterance.rise``, ``RISE_MIN``).

    Grammar-aware endpointing: with ``complete``, an utterance also ends after only ``short_hangover``
    seconds of non-speech when ``complete()`` says that what was said so far is already a whole command
    (the listening loop decodes while the player speaks, fed through ``on_audio``). A pause inside a
    sentence ("hostages Bob ... and Carol") keeps the long hangover, since "hostages Bob and" is no
    command.

    The final decode of such an utterance need not wait for the short hangover: after ``early_look``
    seconds of non-speech, a whole command is handed to ``prepare`` as the utterance it will be if the
    player says no more (padded as an early close pads it), so that it is decoded while the rest of the
    short hangover passes. If the short hangover then closes it, that same utterance is returned (the
    listener finds its decode done); speech in the meantime forgets it.
    """

    classify: FrameClassifier
    start_frames: int = 3
    start_window: int = 5
    hangover: float = 0.6
    short_hangover: float = 0.25
    complete: Callable[[], bool] | None = None
    """Whether the utterance so far is a whole command (asked after ``short_hangover`` of non-speech)."""
    on_audio: Callable[[np.ndarray, bool], None] | None = None
    """Called with each piece of audio as it joins an utterance; True with its first (the preroll)."""
    on_end: Callable[[], None] | None = None
    """Called the moment an utterance ends (before the rest of the chunk can start another)."""
    early_look: float = 0.06
    """Seconds of non-speech after which a whole command is handed to ``prepare`` (two frames: its decode,
    0.1-0.15 s, is then done before the short hangover is over)."""
    prepare: Callable[[Utterance], None] | None = None
    """Called once per pause with the utterance an early close would return, so it can be decoded ahead."""
    max_ahead: int = 3
    """Decodes ahead per utterance at most, and only while it is shorter than ``ahead_within`` seconds: a
    command is short and pauses once at its end, or twice ("repeat ... that"); chatter and babble that keep an
    utterance open pause again and again, and each decode ahead costs as much as the final one (with no limit,
    listening with echo cancellation in 12 dB babble cost 0.122 of a core per room). Past either, the short
    hangover still closes the utterance, decoded then."""
    ahead_within: float = 3.5
    provisional: float = 0.0
    """Seconds after an early close during which the talker going on continues the closed utterance (0: never)."""
    continue_margin: float = 5.0
    """dB under the closed utterance's loud frames (their 95th percentile) that the loudest frame of a new onset (its
    first ``onset_seconds``, with the frames that started it) may be and continue it. Chosen on the dev split: where
    talk went on within 0.35 s of an early close, the onset stood -1.8 dB and more against the closed words (its 10th
    percentile), where music started again after a command -6.5 dB and less."""
    onset_seconds: float = 0.2
    """How long after it starts an utterance's onset is judged (``continue_margin``): a first consonant ("Frank") is
    quieter than the vowel after it. Shorter than the short hangover, so decided before it can close."""
    on_continue: Callable[[float, int], None] | None = None
    """Called with its start and how many times it has now been continued (``Utterance.continued``) when speech
    continues the utterance closed early (before its audio is handed on again)."""
    may_continue: Callable[[float, float], bool] | None = None
    """Asked with an onset's start and the time it is judged, before it continues the utterance closed early: False
    keeps that one final (the Listener says False while the moderator was audible: its own reply, starting within the
    provisional time, is not the talker going on)."""
    echo_floor: Callable[[float, float], float] | None = None
    """The level (dB FS) of what is left of the moderator's own voice between two audio times: a frame
    is speech only ``echo_margin`` dB above it too (see ``moderator.audio.echo``)."""
    echo_margin: float = 10.0
    preroll: float = 0.3
    talkover_preroll: float = 0.5
    """Seconds kept before the start for ``Utterance.before`` (the listener uses them only for words said
    over the moderator: a longer preroll for every utterance lowers the bar in party noise)."""
    max_seconds: float = 8.0
    min_dbfs: float = -50.0
    """Quieter frames are never speech (WebRTC's VAD judges shape, not level, and has its own hangover)."""
    noise_margin: float = 6.0
    noise_rise: float = 1.0
    smoothing: float = 0.1
    """Seconds over which frame levels are smoothed before they are compared with the background."""
    room_seconds: float = 10.0
    """How much of the room, just before an utterance, its ``Utterance.rise`` is measured against."""
    room_min: float = 1.0
    """Seconds of the room heard at least before its median level is used (for ``room_margin`` and ``rise``)."""
    room_margin: float | None = 4.0
    """dB above the room's median level (the ``room_seconds`` before, or before the open utterance) that a frame
    must be to be speech: babble and music keep most of their frames within a few dB of their median, so they no
    longer keep a player's utterance open, while a voice's vowels stand far above it. None: the background alone."""
    _floor: float | None = field(default=None, repr=False)
    _power: float | None = field(default=None, repr=False)
    _buf: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32), repr=False)
    _t: float | None = field(default=None, repr=False)
    _recent: deque[tuple[np.ndarray, bool]] = field(default_factory=deque, repr=False)
    _before: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32), repr=False)
    _speech: list[np.ndarray] | None = field(default=None, repr=False)
    _speech_start: float = field(default=0.0, repr=False)
    _silent_frames: int = field(default=0, repr=False)
    _background: deque[np.ndarray] = field(default_factory=deque, repr=False)
    """The latest frames that were not speech (``hangover`` seconds of them): the room when nobody talks."""
    _prepared: Utterance | None = field(default=None, repr=False)
    _ahead: int = field(default=0, repr=False)
    _levels: deque[float] = field(default_factory=deque, repr=False)
    """The level (dB FS) of every frame of the last ``room_seconds``, speech or not."""
    _room: float | None = field(default=None, repr=False)
    """The room's median level before the open utterance (None: too little heard)."""
    _speech_levels: list[float] = field(default_factory=list, repr=False)
    _closed: _Closed | None = field(default=None, repr=False)
    """The utterance closed early, while it is provisional."""
    _candidate: _Closed | None = field(default=None, repr=False)
    """``_closed``, while the utterance that began in its provisional time is too young to say whether it goes on."""
    _since_onset: int = field(default=0, repr=False)
    _continued: int = field(default=0, repr=False)
    """How many times the open utterance was continued (``Utterance.continued``)."""

    def reset(self) -> None:
        """Forget everything heard so far (e.g. while the moderator itself speaks)."""
        self._buf, self._t, self._speech, self._silent_frames = np.zeros(0, np.float32), None, None, 0
        self._prepared, self._ahead, self._closed, self._candidate, self._continued = None, 0, None, None, 0
        self._recent.clear()

    def may_go_on(self, utterance: Utterance) -> bool:
        """Whether ``utterance``, closed early, may still be continued: its provisional time has not passed, or an
        utterance that began in it is too young to say. (Once another began and did not continue it, it is final.)"""
        for closed, judging in ((self._candidate, True), (self._closed, False)):
            if closed is not None and (closed.start, closed.continued) == (utterance.start, utterance.continued):
                return judging or (self._t or 0.0) < closed.until
        return False

    @property
    def now(self) -> float | None:
        """The audio time up to which frames have been handled (None before any audio)."""
        return self._t

    @property
    def in_speech(self) -> bool:
        """True while an utterance is open."""
        return self._speech is not None

    def feed(self, chunk: np.ndarray, t: float) -> list[Utterance]:
        """Add audio that starts at audio time ``t``; return the utterances that ended in it."""
        if self._t is None or abs(self._t + len(self._buf) / RATE - t) > 1e-3:
            self.reset()  # a gap in the stream: start afresh
            self._t = t
        self._buf = np.concatenate([self._buf, chunk.astype(np.float32)])
        done: list[Utterance] = []
        while len(self._buf) >= FRAME:
            frame, self._buf = self._buf[:FRAME], self._buf[FRAME:]
            frame_t = self._t
            self._t += FRAME / RATE
            pcm = to_pcm16(frame)
            self._levels.append(max(rms_db(frame), -120.0))  # digital silence as -120 dB, not -inf
            while len(self._levels) > round(self.room_seconds * RATE / FRAME):
                self._levels.popleft()
            loud = self._stands_out(frame, frame_t)
            utterance = self._step(frame, frame_t, loud and self.classify(pcm))
            if utterance is not None:
                done.append(utterance)
        return done

    @property
    def background_dbfs(self) -> float | None:
        """The estimated level of the room's background (None before any audio)."""
        return self._floor

    def pad(self, samples: np.ndarray, quiet: int) -> np.ndarray:
        """End an utterance closed early with as much of the room's background as the long hangover would
        have given it: the recognizer normalizes by the utterance's mean and its confidence is calibrated on
        that much of the room after the words. The background is the latest frames that were not speech, in
        order: repeating the utterance's last frames would repeat the end of its last word, digital silence
        is not what a room sounds like (even a quiet pocketsphinx input tells them apart: "pause" came out as
        "pause the"), and one quiet frame repeated is not babble (it lost commands in 12 dB babble that the
        long hangover kept: docs/decisions.md, "Ending an utterance"). ``quiet``: samples of non-speech it
        already ends with."""
        wanted = round(self.hangover * RATE) - quiet
        if wanted <= 0:
            return samples
        bed = np.concatenate(self._background) if self._background else np.zeros(FRAME, np.float32)
        return np.concatenate([samples, np.tile(bed, -(-wanted // len(bed)))[:wanted]])

    def _stands_out(self, frame: np.ndarray, t: float) -> bool:
        """Loud enough to be speech, and clearly above the background (which this also follows)."""
        power = float(np.mean(np.square(frame, dtype=np.float64))) + 1e-12
        alpha = 1 - np.exp(-FRAME / RATE / self.smoothing)
        self._power = power if self._power is None else self._power + alpha * (power - self._power)
        level = 10 * np.log10(self._power)
        if self._floor is None or level < self._floor:
            self._floor = level
        else:
            self._floor += self.noise_rise * FRAME / RATE
        level, threshold = self._levels[-1], max(self.min_dbfs, self._floor + self.noise_margin)  # feed's rms_db
        room = self._room if self._speech is not None else self._room_level(len(self._levels))
        if self.room_margin is not None and room is not None:
            threshold = max(threshold, room + self.room_margin)
        echo = self.echo_floor(t, t + FRAME / RATE) if self.echo_floor is not None else None
        if echo is not None and level > threshold:
            threshold = max(threshold, echo + self.echo_margin)
        # The background is the room at its background level: not the quiet ends of words, nor what is left of
        # the moderator's own voice.
        if level <= self._floor + self.noise_margin and (echo is None or echo < self._floor):
            self._background.append(frame.copy())
            while len(self._background) > round(self.hangover * RATE / FRAME):
                self._background.popleft()
        return level > threshold

    def _step(self, frame: np.ndarray, t: float, speech: bool) -> Utterance | None:
        if self._speech is None:
            self._recent.append((frame, speech))
            keep = max(self.start_window, round(max(self.preroll, self.talkover_preroll) * RATE / FRAME))
            while len(self._recent) > keep:
                self._recent.popleft()
            if self._closed is not None and t >= self._closed.until:
                self._closed = None  # no longer provisional
            window = list(self._recent)[-self.start_window:]
            if sum(s for _, s in window) >= self.start_frames:
                self._candidate, self._closed, self._since_onset, self._continued = self._closed, None, 0, 0
                frames = [f for f, _ in self._recent]
                used = max(self.start_window, round(self.preroll * RATE / FRAME))
                self._before = np.concatenate(frames[:-used]) if len(frames) > used else np.zeros(0, np.float32)
                self._speech = frames[-used:]
                self._speech_start = t + FRAME / RATE - len(self._speech) * FRAME / RATE
                self._room = self._room_level(len(self._levels) - len(self._speech))
                self._speech_levels = list(self._levels)[-len(self._speech):]
                self._recent.clear()
                self._silent_frames = 0
                if self.on_audio is not None:
                    self.on_audio(np.concatenate(self._speech), True)
            return None
        self._speech.append(frame)
        self._speech_levels.append(self._levels[-1])
        if self.on_audio is not None:
            self.on_audio(frame, False)
        if self._candidate is not None:
            self._since_onset += 1
            if self._since_onset >= round(self.onset_seconds * RATE / FRAME):
                self._continue_or_not()
        self._silent_frames = 0 if speech else self._silent_frames + 1
        if speech:
            self._prepared = None
        length = len(self._speech) * FRAME / RATE
        silence = self._silent_frames * FRAME / RATE
        if (self.prepare is not None and self._prepared is None and self._ahead < self.max_ahead
                and self.complete is not None and length < self.ahead_within
                and self.early_look <= silence < self.short_hangover
                and self.complete()):
            self._prepared, self._ahead = self._closed_early(length, t), self._ahead + 1
            self.prepare(self._prepared)
        early = (silence < self.hangover and length < self.max_seconds and silence >= self.short_hangover
                 and self.complete is not None and self.complete())
        if silence >= self.hangover or length >= self.max_seconds or early:
            if early and self._prepared is not None:
                utterance = self._prepared
            elif early:
                utterance = self._closed_early(length, t)
            if early and utterance.provisional_until is not None:
                self._closed = _Closed(utterance.provisional_until, list(self._speech), list(self._speech_levels),
                                       self._speech_start, self._before, self._room, self._continued)
            if not early:
                utterance = Utterance(np.concatenate(self._speech), self._speech_start, self._speech_start + length,
                                      self._before, self._rise(), continued=self._continued)
            self._speech, self._prepared, self._ahead = None, None, 0
            if self.on_end is not None:
                self.on_end()
            return utterance
        return None

    def _continue_or_not(self) -> None:
        """``onset_seconds`` into an utterance that began while one closed early was provisional: if its onset is as
        loud as that one, that one goes on, with the audio between them (``provisional``)."""
        closed, self._candidate = self._candidate, None
        assert closed is not None and self._speech is not None
        onset = self._since_onset + self.start_window
        loud = float(np.percentile(closed.levels, 95)) if closed.levels else None
        if loud is None or max(self._speech_levels[-onset:]) < loud - self.continue_margin:
            return
        if self.may_continue is not None and not self.may_continue(self._speech_start, self._t or 0.0):
            return
        gap = self._before[len(self._before) - (len(self._before) // FRAME) * FRAME:]
        self._speech = closed.frames + list(gap.reshape(-1, FRAME)) + self._speech
        self._speech_levels = closed.levels + [rms_db(f) for f in gap.reshape(-1, FRAME)] + self._speech_levels
        self._speech_start, self._before, self._room = closed.start, closed.before, closed.room
        self._prepared, self._ahead, self._continued = None, 0, closed.continued + 1
        if self.on_continue is not None:
            self.on_continue(closed.start, self._continued)
        if self.on_audio is not None:
            self.on_audio(np.concatenate(self._speech), True)

    def _closed_early(self, length: float, t: float) -> Utterance:
        """The open utterance as an early close returns it (``t``: the time of this frame, at or before the close):
        padded with the room's background up to the long hangover's length (``pad``), and provisional until
        ``provisional`` after the close."""
        assert self._speech is not None
        samples = self.pad(np.concatenate(self._speech), self._silent_frames * FRAME)
        closing = t + (max(math.ceil(self.short_hangover * RATE / FRAME - 1e-9), self._silent_frames)
                       - self._silent_frames + 1) * FRAME / RATE
        until = closing + self.provisional if self.provisional > 0 else None
        return Utterance(samples, self._speech_start, self._speech_start + length, self._before, self._rise(), until,
                         self._continued)

    def _room_level(self, frames: int) -> float | None:
        """The median level of the room's first ``frames`` frames of ``_levels`` (None: too little heard)."""
        if frames * FRAME < self.room_min * RATE:
            return None
        return float(np.median(list(self._levels)[:frames]))

    def _rise(self) -> float | None:
        """How far the open utterance's loud frames stand above the room before it (``Utterance.rise``)."""
        if self._room is None or not self._speech_levels:
            return None
        return float(np.percentile(self._speech_levels, 95)) - self._room
