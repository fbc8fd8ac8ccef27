"""The process environment the CLI runs in, injectable so tests can swap it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from moderator.adapters.audio_system import AudioSystem

if TYPE_CHECKING:
    from moderator.ports import AudioIn, AudioOut, Recognizer, Synthesizer


def _make_recognizer(*args: Any, **kwargs: Any) -> Recognizer:
    from moderator.listening import make_recognizer

    return make_recognizer(*args, **kwargs)


def _open_mics(*args: Any, **kwargs: Any) -> AudioIn:
    from moderator.mics import open_mics

    return open_mics(*args, **kwargs)


def _open_output(*args: Any, **kwargs: Any) -> AudioOut | None:
    from moderator.outputs import open_output

    return open_output(*args, **kwargs)


def _make_synthesizer(*args: Any, **kwargs: Any) -> Synthesizer:
    from moderator.adapters.tts import make_synthesizer

    return make_synthesizer(*args, **kwargs)


@dataclass
class Environment:
    """Standard streams, whether stdout is an interactive terminal, and the factories of what touches devices
    and engines: a command asks its environment for them, so a test passes fakes here instead of patching
    modules.

    Attributes:
        make_recognizer: ``moderator.listening.make_recognizer``'s signature (engine, vosk model, acoustic
            model, ``live=``).
        open_mics: ``moderator.mics.open_mics``'s (the ``DeviceOptions``, the clock, ``log=``).
        open_output: ``moderator.outputs.open_output``'s (the same): the speakers, a WAV timeline, or None.
        make_synthesizer: ``moderator.adapters.tts.make_synthesizer``'s (``--tts``, ``warn=``).
        audio: where PortAudio and the Pulse server come from, for ``open_mics``, ``open_output`` and ``devices``
            (``moderator.adapters.audio_system``).
    """

    stdin: TextIO = field(default_factory=lambda: sys.stdin)
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    make_recognizer: Callable[..., Recognizer] = _make_recognizer
    open_mics: Callable[..., AudioIn] = _open_mics
    open_output: Callable[..., AudioOut | None] = _open_output
    make_synthesizer: Callable[..., Synthesizer] = _make_synthesizer
    audio: AudioSystem = field(default_factory=AudioSystem)

    def log(self, message: str) -> None:
        """Tell the user something on the way (a device, a failing save): ``moderator: ...`` on stderr, at once."""
        print(f"moderator: {message}", file=self.stderr, flush=True)

    @property
    def interactive(self) -> bool:
        """True when both stdin and stdout are terminals."""
        return bool(self.stdin.isatty() and self.stdout.isatty())
