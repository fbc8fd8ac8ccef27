"""The ports of the core: what it needs from the outside world, as Protocols.

Adapters in ``moderator.adapters`` implement them; tests use the fakes in
``tests/fakes.py``. The core never imports ``time``, a device or an engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

    from moderator.audio.clip import Clip
    from moderator.settings import VoiceSettings
    from moderator.speech.grammar import Grammar


class Clock(Protocol):
    """Monotonic game time in seconds."""

    def now(self) -> float:
        """The current time in seconds; only differences are meaningful."""
        ...


class Announcer(Protocol):
    """Says something in a room. Speech output implements this; the terminal prints it."""

    def announce(self, room: str, key: str, text: str, at: float | None = None) -> None:
        """Speak ``text`` (phrase ``key``) in room ``A``, ``B`` or ``both``, starting at clock time ``at``
        (None: now). A timer's announcement comes slightly ahead with its exact time, so audio can start on it."""
        ...


class Synthesizer(Protocol):
    """Turns text into audio. Adapters: pyttsx3 (a worker thread owns it) and the espeak-ng command line."""

    name: str
    """Identifies the engine in cache keys and messages, e.g. ``pyttsx3:espeak``."""

    def render(self, text: str, voice: VoiceSettings) -> Clip:
        """Synthesize ``text`` with ``voice``; raises SynthesisError on failure."""
        ...

    def close(self) -> None:
        """Release the engine (stop the worker thread)."""
        ...


class AudioOut(Protocol):
    """Plays clips in a room. Adapters: sounddevice (per-room devices or split stereo), a WAV timeline."""

    def play(self, room: str, clip: Clip, at: float) -> None:
        """Start ``clip`` in room ``A`` or ``B`` at clock time ``at``; never blocks. Overlaps are mixed."""
        ...

    def stop(self, room: str, clip: Clip, at: float) -> None:
        """Cut ``clip`` (the object given to ``play``) short in ``room`` from clock time ``at`` (now, if
        past): barge-in. Nothing happens if it has already ended; other clips play on."""
        ...

    def close(self) -> None:
        """Finish (let queued audio end, or write files) and release devices."""
        ...


@dataclass(frozen=True, eq=False)
class MicChunk:
    """A piece of what one microphone heard."""

    mic: str | None
    """The room (``A``/``B``) whose microphone heard it; None for one microphone shared by both rooms."""

    samples: np.ndarray
    """Mono float32 samples in [-1, 1]."""

    rate: int
    """Samples per second."""

    t: float
    """Clock time of the first sample. A microphone's chunks follow each other without gaps or overlaps
    (``t`` of the next is ``t + len(samples) / rate``) unless the stream restarted."""


class AudioIn(Protocol):
    """Microphones, one per room or one shared. Adapters: sounddevice; tests use a fake.

    Audio arrives on the adapter's own thread and is only queued there; ``read`` hands it over on the
    caller's thread, so the game engine is only ever touched from one thread.
    """

    mics: tuple[str | None, ...]
    """The rooms with a microphone (``("A", "B")``, ``("A",)``, ...), or ``(None,)`` for one shared."""

    def read(self, timeout: float = 0.0) -> list[MicChunk]:
        """The chunks heard since the last call, oldest first; waits up to ``timeout`` s for a first one."""
        ...

    @property
    def failed_mics(self) -> set[str | None]:
        """The microphones that have failed and not come back."""
        ...

    def close(self) -> None:
        """Stop listening and release the devices; ``read`` returns nothing after this."""
        ...


class EchoCanceller(Protocol):
    """Removes the moderator's own voice from a microphone: acoustic echo cancellation.

    The reference is what the moderator played into the rooms this microphone hears, over the same
    samples of clock time as the microphone's chunk, shifted by the delay measured at set-up. Adapters
    in ``moderator.adapters.echo``; the choice between them is in docs/decisions.md.
    """

    name: str

    def process(self, mic: np.ndarray, reference: np.ndarray) -> np.ndarray:
        """The microphone's audio with the echo of ``reference`` removed.

        Both are mono float32 in [-1, 1] at 16 kHz, of the same length, a multiple of 160 samples
        (10 ms). State carries over between calls: feed one stream's chunks in order.
        """
        ...

    @property
    def converged(self) -> bool:
        """True once the filter has adapted to the room (it has heard enough of the moderator)."""
        ...

    def reset(self) -> None:
        """Forget the room (a new stream, or the delay changed)."""
        ...


@dataclass(frozen=True)
class Transcript:
    """What a recognizer heard in one utterance."""

    text: str
    """The words, lowercase; empty when nothing was recognized."""

    confidence: float
    """0.0 (a guess) to 1.0 (sure), on the engine's own scale mapped to 0-1."""

    guess: str = ""
    """What the engine heard best when it rejected it for low confidence (``text`` is then empty)."""

    partial: str = ""
    """The best path when it did not fit the grammar to its end ("hostage frank and"): never a command, but a
    hint of words the grammar lacks, such as a name of the other room (``Listener._other_room``)."""

    doubtful: bool = False
    """Rejected although its confidence passed: its words alone fit the audio poorly (pocketsphinx's alignment,
    ``ALIGNED_LIMIT``), as party talk around a command's words does. Never a command; a decode that listens only for
    an expected answer may take it (``Listener._answer``)."""

    question: str = ""
    """A command the recognizer found nearly likely enough to take, but not enough (``text`` is then empty): never a
    command by itself; the listener asks "did you say ...?" and acts on a "yes" (``Listener._ask``)."""


class Recognizer(Protocol):
    """Turns one utterance of audio into text, listening only for what it was told to expect.

    Adapters: pocketsphinx (a JSGF grammar compiled from ``grammars/``) and vosk (a phrase list).
    Whatever a recognizer returns is parsed again against the grammar; it is never trusted as is.
    """

    name: str

    def expect(self, grammar: Grammar, roster: Sequence[str], intents: Sequence[str] | None = None) -> None:
        """Listen from now on for these intents (None: all) of ``grammar``, with these player names."""
        ...

    def recognize(self, samples: np.ndarray, rate: int) -> Transcript:
        """Recognize one utterance: mono float32 samples in [-1, 1] at ``rate`` Hz."""
        ...


@runtime_checkable
class HearsOverTheModerator(Protocol):
    """A recognizer that decodes what was said over the moderator's own voice otherwise (``ByNoiseLevel``: with
    the original model, whatever the room's level). The listener sets the flag before each ``recognize``."""

    over_the_moderator: bool
    """The moderator was audible in this microphone while the next utterance to recognize was said."""


@runtime_checkable
class HearsTheRoom(Protocol):
    """A recognizer that listens otherwise in a loud room (``ByNoiseLevel``: the party model at a party, the original
    in a quiet room). The listener tells it, before each ``recognize``, how far the utterance stood above the room
    it heard before it; the utterance alone says less (a long one has few quiet frames of its own)."""

    room_rise: float | None
    """dB by which the next utterance to recognize stood above the room before it (``Utterance.rise``); None when
    the room is unknown (the endpointer heard too little of it, or the audio is no stream)."""


@runtime_checkable
class LooksTwice(Protocol):
    """A recognizer with a slow second opinion (``SecondOpinion``: Whisper) that a decode ahead can do without. The
    listener sets ``ahead`` while it decodes an utterance ahead (``Endpointer.prepare``): the transcript is then the
    first recognizer's alone. Most decodes ahead are thrown away, as the speaker goes on; when the utterance does
    close there, the listener decodes it again with ``ahead`` off, and the first recognizer's work is reused."""

    ahead: bool
    """The next decodes are ahead of the utterance's end, and may be thrown away."""


class StreamingRecognizer(Recognizer, Protocol):
    """A recognizer that decodes while the player speaks (pocketsphinx), so that the listening loop can end
    an utterance after a short pause once what was said so far is a whole command."""

    def fork(self) -> StreamingRecognizer:
        """Another recognizer like this one, for a second microphone (a stream is one utterance at a time)."""
        ...

    def begin(self) -> None:
        """Start an utterance, with the grammar last given to ``expect``."""
        ...

    def accept(self, samples: np.ndarray, rate: int) -> str:
        """Decode more of the utterance; returns the words heard so far (a partial result)."""
        ...

    def finish(self) -> None:
        """End the utterance; what it says is then ``recognize``'s on the whole of it."""
        ...
