"""The speech-output options shared by play, say, simulate and demo, and opening what they ask for."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from moderator.adapters.audio_system import AudioSystem
from moderator.errors import ModeratorError, UsageError
from moderator.ports import AudioOut, Clock
from moderator.settings import DeviceOptions, Schedule, load_schedule


def add_speech_options(p: argparse.ArgumentParser, *, devices: bool) -> None:
    """``--lang --tts --cache-dir --settings --audio-out`` and, for live use, the device options."""
    p.add_argument("--lang", default="en", help="language of the moderator's phrases: en, it, fr, zh (default en)")
    p.add_argument("--audio-out", type=Path, metavar="DIR",
                   help="speak, and write what each room heard to DIR/roomA.wav and DIR/roomB.wav "
                   "(with timeline.json; simulate and demo also write events.jsonl and transcript.txt)")
    if devices:
        p.add_argument("--room-a-out", metavar="DEVICE",
                       help="room A's speaker: a device name or index, or a PulseAudio/PipeWire sink name")
        p.add_argument("--room-b-out", metavar="DEVICE",
                       help="room B's speaker: a device name or index, or a PulseAudio/PipeWire sink name")
        p.add_argument("--split-stereo", metavar="DEVICE",
                       help="one stereo device for both rooms: room A on the left, room B on the right "
                       "(e.g. 'default')")
    p.add_argument("--tts", choices=("auto", "pyttsx3", "espeak-ng"), default="auto",
                   help="speech synthesizer (default auto: pyttsx3, else the espeak-ng command line)")
    p.add_argument("--cache-dir", type=Path, help="where rendered phrases are cached (default: user cache dir)")
    p.add_argument("--settings", type=Path, metavar="FILE",
                   help="settings file with the spoken schedule (see docs/settings.example.yaml)")


def schedule_from(args: argparse.Namespace) -> Schedule:
    """The schedule of ``--settings``, or the defaults."""
    return load_schedule(args.settings) if getattr(args, "settings", None) else Schedule()


def check_audio_out(directory: Path | None) -> None:
    """Make the ``--audio-out`` directory, or fail now rather than when the game is over and its audio is due.

    Raises:
        UsageError: it names something that is not a directory.
        ModeratorError: it cannot be made, or written in.
    """
    if directory is None:
        return
    try:
        if directory.exists() and not directory.is_dir():
            raise UsageError(f"--audio-out {directory} is not a directory; name one for roomA.wav and roomB.wav")
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModeratorError(f"cannot make the --audio-out directory {directory}: {exc.strerror or exc}") from exc
    if not os.access(directory, os.W_OK | os.X_OK):
        raise ModeratorError(f"cannot write in the --audio-out directory {directory}: permission denied")


def not_an_input(output: Path, inputs: Iterable[Path], option: str) -> None:
    """Refuse an output file that is one of the command's input files: writing it would destroy the input."""
    for path in inputs:
        try:
            same = output.exists() and os.path.samefile(output, path)
        except OSError:
            same = False
        if same:
            raise UsageError(f"{option} would overwrite {path}, which this command reads; write somewhere else")


def device_options(args: argparse.Namespace) -> DeviceOptions:
    """The device options of a parsed command line, once, as a frozen value (options a command lacks are None).

    Raises:
        UsageError: speakers and ``--audio-out`` both, or ``--mic`` with ``--room-a-in``/``--room-b-in``.
    """
    named = {name: _device(getattr(args, name, None)) for name in
             ("room_a_out", "room_b_out", "split_stereo", "room_a_in", "room_b_in", "mic")}
    devices = DeviceOptions(**named, audio_out=getattr(args, "audio_out", None))
    if devices.speakers and devices.audio_out is not None:
        raise UsageError("choose speakers (--room-a-out/--room-b-out/--split-stereo) or --audio-out, not both")
    if devices.mic is not None and (devices.room_a_in is not None or devices.room_b_in is not None):
        raise UsageError("--mic is one microphone for both rooms; do not also give --room-a-in/--room-b-in")
    return devices


def open_output(devices: DeviceOptions, clock: Clock, log: Callable[[str], None],
                system: AudioSystem | None = None) -> AudioOut | None:
    """The AudioOut the options ask for: devices (on ``system``, default the real sound system), a WAV timeline,
    or None (text only)."""
    if devices.speakers:
        from moderator.adapters.audio_system import SYSTEM
        from moderator.adapters.sound_out import SoundDeviceOut

        return SoundDeviceOut(clock, room_a=devices.room_a_out, room_b=devices.room_b_out,
                              split_stereo=devices.split_stereo, log=log, system=system or SYSTEM)
    if devices.audio_out is not None:
        from moderator.audio.timeline import TimelineOut

        check_audio_out(devices.audio_out)
        return TimelineOut(devices.audio_out, t0=clock.now())
    return None


def _device(spec: str | None) -> str | int | None:
    """Device names as given; a number is an index."""
    if spec is None:
        return None
    return int(spec) if spec.strip().isdigit() else spec
