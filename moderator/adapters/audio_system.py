"""Where the sound system comes from: PortAudio (through sounddevice) and the PulseAudio/PipeWire server.

Every adapter that touches them takes an ``AudioSystem`` (default: the real ones), and ``Environment.audio``
carries it from the command line down, so a test passes fakes here instead of patching modules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def _sounddevice() -> Any:
    from moderator.adapters.portaudio import load_sounddevice

    return load_sounddevice()


def _pulse() -> Any | None:
    from moderator.adapters.pulse_routing import connect

    return connect()


@dataclass(frozen=True)
class AudioSystem:
    """The two doors to the sound system.

    Attributes:
        sounddevice: returns the ``sounddevice`` module (``portaudio.load_sounddevice``; raises DeviceError without
            PortAudio).
        pulse: returns a connected ``pulsectl.Pulse``, or None without a server (``pulse_routing.connect``); the
            caller closes it.
    """

    sounddevice: Callable[[], Any] = _sounddevice
    pulse: Callable[[], Any | None] = _pulse


#: The real sound system.
SYSTEM = AudioSystem()
