"""Assembles live microphone input: the mic options, opening them, the name check and the listening loop."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from moderator.audio.echo import EchoPath
from moderator.errors import RosterError
from moderator.ports import AudioIn, Clock, Recognizer
from moderator.settings import DeviceOptions

if TYPE_CHECKING:
    from moderator.adapters.audio_system import AudioSystem
    from moderator.audio.endpoint import Endpointer
    from moderator.game.engine import Engine
    from moderator.loop import Listener
    from moderator.speaking import Voice


def add_mic_options(p: argparse.ArgumentParser) -> None:
    """``--room-a-in``, ``--room-b-in`` and ``--mic`` (one microphone shared by both rooms)."""
    p.add_argument("--room-a-in", metavar="DEVICE",
                   help="room A's microphone: a device name or index, or a PulseAudio/PipeWire source name")
    p.add_argument("--room-b-in", metavar="DEVICE",
                   help="room B's microphone: a device name or index, or a PulseAudio/PipeWire source name")
    p.add_argument("--mic", metavar="DEVICE",
                   help="one microphone for both rooms: the room follows from the names said")


def open_mics(devices: DeviceOptions, clock: Clock, log: Callable[[str], None],
              system: AudioSystem | None = None) -> AudioIn:
    """The microphones the options name, open and listening (``system``: the sound system, default the real one).

    Raises:
        DeviceError: a microphone is unknown or cannot open (the message lists those available).
    """
    from moderator.adapters.audio_system import SYSTEM
    from moderator.adapters.sound_in import SoundDeviceIn

    return SoundDeviceIn(clock, room_a=devices.room_a_in, room_b=devices.room_b_in, shared=devices.mic, log=log,
                         system=system or SYSTEM)


def check_names(recognizer: Recognizer, roster: Sequence[str]) -> None:
    """Refuse a roster with names the recognizer cannot hear (vosk's fixed lexicon), saying what to do.

    Raises:
        RosterError: one line per name, with a suggestion.
    """
    unknown = getattr(recognizer, "unknown_names", None)
    problems = unknown(list(roster)) if unknown is not None else {}
    if problems:
        lines = "\n".join(f"  {name}: {why}" for name, why in problems.items())
        raise RosterError(f"{recognizer.name} cannot hear {len(problems)} of the names:\n{lines}\n"
                          "Rename those players (--players/--roster), or use --engine pocketsphinx, "
                          "which spells out any name")


def new_endpointer() -> Endpointer:
    """The endpointer of a live or scripted microphone: WebRTC's VAD."""
    from moderator.audio.endpoint import Endpointer, webrtc_classifier

    return Endpointer(webrtc_classifier())


def add_echo_options(p: argparse.ArgumentParser) -> None:
    """``--aec``: which echo canceller lets the microphones listen while the moderator talks."""
    p.add_argument("--aec", choices=("auto", "speex", "off"), default="auto",
                   help="echo cancellation, so players are heard while the moderator talks: auto or speex (Speex's "
                   "canceller, from the system's libspeexdsp), or off (a microphone is ignored while the "
                   "moderator speaks in its room, and players heard over it are asked to say it again)")


def make_listener(engine: Engine, recognizer: Recognizer, mics: tuple[str | None, ...],
                  voice: Voice | None = None, *, aec: str = "auto", **options: Any) -> Listener:
    """The listening loop for ``mics`` (rooms, or ``(None,)`` for a shared microphone); ``options`` go to
    ``Listener``. With the moderator's ``voice``, its own audio is cancelled out of the microphones
    (``aec``; "off": half-duplex) and a command cuts a long phrase short (barge-in).

    Raises:
        EchoError: the echo canceller asked for is unknown or not installed.
    """
    from moderator.loop import Listener

    if voice is None:
        return Listener(engine, recognizer, mics=mics, new_endpointer=new_endpointer, **options)
    new_canceller = None
    if aec != "off":
        from moderator.adapters.echo import make_echo_canceller

        make_echo_canceller(aec)  # a missing library is an error now, not at the first word
        new_canceller = lambda: make_echo_canceller(aec)  # noqa: E731
    path = EchoPath(voice.out, mics, new_canceller)
    return Listener(engine, recognizer, mics=mics, new_endpointer=new_endpointer, echo=path,
                    barge_in=voice.speaker.cut, **options)

