"""Settings as frozen dataclasses, validated once at the CLI boundary."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from moderator.limits import COUNTDOWN_MAX_SECONDS, ROUND_MAX_SECONDS, SCHEDULE_MAX_WARNINGS, SETTINGS_MAX_BYTES


@dataclass(frozen=True)
class Schedule:
    """What the moderator says on its own as a round runs."""

    warnings: tuple[int, ...] = (60, 30, 10)
    """Seconds before the end of a round at which the time left is announced."""

    countdown: int = 5
    """Count down the last N seconds aloud (5-4-3-2-1); 0 turns it off."""

    leader_nag: int = 30
    """Seconds before the end of round 1 at which a room with no leader is reminded (half-way through a round
    shorter than twice this)."""


@dataclass(frozen=True)
class GameOptions:
    """How a game is set up; the same names as the ``moderator play`` flags."""

    rounds: int = 3
    """3 or 5 rounds (5 only with more than 10 players)."""

    hostage_table: str = "current"
    """Which hostage table: ``current`` (default) or the ``2014`` leader card."""

    bury: bool = False
    """Bury one card: the deck has one card more than there are players."""

    round_seconds: int | None = None
    """Every round lasts this long (variant); hostage counts are unchanged."""

    durations: tuple[int, ...] | None = None
    """Custom duration of each round, in seconds (variant)."""

    no_timer: bool = False
    """No-timer variant: a round ends when both leaders say their room is ready."""

    force: bool = False
    """Allow more than 30 players (the 22+ rows apply)."""

    givesy_backsies: str = "en"
    """Which edition's "no givesy-backsies": ``en`` or ``fr`` (``moderator.game.rules.GIVESY_BACKSIES``)."""

    preset: str | None = None
    """The advanced game's preset id (``moderator presets``); the deck comes from it."""

    characters: tuple[str, ...] = ()
    """Advanced characters added to the President, the Bomber and the team cards (card ids)."""

    shared_mic: bool = False
    """One shared input: the room follows from the names said."""

    read_back: str = "spoken"
    """When a hostage choice is read back and waits for "yes" before it locks: ``spoken`` (commands
    heard by a microphone), ``always`` (typed ones too), or ``never``."""

    wake_word: str | None = None
    """With a wake word, spoken commands count only when they start with it ("moderator, pause")."""


@dataclass(frozen=True)
class DeviceOptions:
    """Where the rooms are spoken to and heard: the device options of the command line, parsed once (a number is a
    device index, anything else a name: a PortAudio device, or a PulseAudio/PipeWire sink or source)."""

    room_a_out: str | int | None = None
    room_b_out: str | int | None = None
    split_stereo: str | int | None = None
    """One stereo output for both rooms: room A on the left, room B on the right."""
    room_a_in: str | int | None = None
    room_b_in: str | int | None = None
    mic: str | int | None = None
    """One microphone for both rooms."""
    audio_out: Path | None = None
    """Write what each room heard to DIR/roomA.wav and DIR/roomB.wav instead of playing it."""

    @property
    def speakers(self) -> bool:
        """A speaker device was named."""
        return any(d is not None for d in (self.room_a_out, self.room_b_out, self.split_stereo))

    @property
    def microphones(self) -> bool:
        """A microphone was named."""
        return any(d is not None for d in (self.room_a_in, self.room_b_in, self.mic))


@dataclass(frozen=True)
class VoiceSettings:
    """How the moderator's voice sounds in one language (the ``voice:`` section of ``voices/<lang>.yaml``)."""

    name: str = "en-us"
    """The espeak-ng voice (language) id, e.g. ``en-us``, ``it``, ``fr-fr``, ``cmn``."""

    rate: int = 170
    """Speaking rate in words per minute."""

    volume: float = 1.0
    """Loudness, 0.0 to 1.0."""

    def key(self) -> str:
        """A stable string for cache keys."""
        return f"{self.name}|{self.rate}|{self.volume:.3f}"


@dataclass(frozen=True)
class LiveTiming:
    """How a live game (``moderator play``, ``moderator.live.LiveGame``) paces itself: fixed by measurement,
    not a host's option. A microphone's stall and reopen times belong to its adapter (``adapters/sound_in.py``)."""

    lead: float = 0.15
    """Timers are handled this far ahead, so that their audio can be scheduled to start exactly on time."""

    recognition_lead: float = 1.0
    """Recognizing an utterance holds the game's thread for up to about this long, so the timers due within it
    (and ``lead``) are handled, and their audio scheduled, before it starts."""

    second_opinion_lead: float = 1.5
    """How much longer recognizing holds the thread with ``--second-opinion whisper``, added to
    ``recognition_lead``: Whisper base decodes an utterance in about 0.65 s on two x86 cores, after pocketsphinx,
    and where neither gave a command weighs the nearest commands in about 0.45 s more."""

    speaker_horizon: float = 0.3
    """How early the speaker hands its next phrase to the output (covers the output latency and ``poll``)."""

    poll: float = 0.05
    """The longest the loop waits between ticks (microphone audio, finished renders); it wakes earlier for a
    timer, ``lead`` before it is due."""

    view_refresh: float = 0.25
    """How often the terminal's live view of the rooms is redrawn, in seconds."""

    finish_timeout: float = 60.0
    """When the game ends: how long phrases still being synthesized are waited for before they are dropped."""

    def wait(self, next_due: float | None, now: float, longest: float | None = None) -> float:
        """How long the loop may wait at clock time ``now`` when the next timer is due at ``next_due`` (None:
        none): until ``lead`` before it, at most ``longest`` (default ``poll``), never less than 0."""
        longest = self.poll if longest is None else longest
        if next_due is None:
            return longest
        return min(longest, max(0.0, next_due - self.lead - now))


def load_schedule(path: Path) -> Schedule:
    """Read the ``schedule:`` section of a settings file (see docs/settings.example.yaml).

    Raises:
        ModeratorError: the file cannot be read, or a setting is not a whole number of seconds in range.
    """
    from moderator import yamlio
    from moderator.errors import ModeratorError
    from moderator.inputs import reading

    with reading(path, ModeratorError):
        data = yamlio.load_file(path, error=ModeratorError, what="settings file", max_bytes=SETTINGS_MAX_BYTES)
        return _schedule({} if data is None else data, path)


def _schedule(data: object, path: Path) -> Schedule:
    from moderator.errors import ModeratorError
    from moderator.inputs import shown

    raw = data.get("schedule", {}) if isinstance(data, dict) else None
    if not isinstance(raw, dict):
        raise ModeratorError(f"{path}: expected a mapping with a 'schedule' section")
    unknown = sorted(shown(key) for key in raw if key not in ("warnings", "countdown", "leader_nag"))
    if unknown:
        raise ModeratorError(f"{path}: unknown schedule settings: {', '.join(unknown[:5])}; "
                             "known: warnings, countdown, leader_nag")
    warnings = raw.get("warnings", list(Schedule.warnings))
    if not isinstance(warnings, list) or not all(_seconds(w, 1, ROUND_MAX_SECONDS) for w in warnings):
        raise ModeratorError(f"{path}: 'warnings' must be a list of whole seconds from 1 to {ROUND_MAX_SECONDS}, "
                             "e.g. [60, 30, 10]")
    if len(set(warnings)) > SCHEDULE_MAX_WARNINGS:
        raise ModeratorError(f"{path}: at most {SCHEDULE_MAX_WARNINGS} time warnings, not {len(set(warnings))}")
    for key, most in (("countdown", COUNTDOWN_MAX_SECONDS), ("leader_nag", ROUND_MAX_SECONDS)):
        if not _seconds(raw.get(key, getattr(Schedule, key)), 0, most):
            raise ModeratorError(f"{path}: '{key}' must be a whole number of seconds from 0 (off) to {most}")
    return Schedule(warnings=tuple(sorted(set(warnings), reverse=True)),
                    countdown=raw.get("countdown", Schedule.countdown),
                    leader_nag=raw.get("leader_nag", Schedule.leader_nag))


def _seconds(value: object, least: int, most: int) -> bool:
    """``value`` is a whole number (not a boolean) from ``least`` to ``most``."""
    return isinstance(value, int) and not isinstance(value, bool) and least <= value <= most
