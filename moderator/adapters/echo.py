"""Echo cancellers: Speex's MDF filter from the system's libspeexdsp (default), WebRTC's AEC3 (optional)."""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any

import numpy as np

from moderator.audio.pcm import from_pcm16, to_int16
from moderator.errors import ModeratorError

RATE = 16000
FRAME = 160
"""10 ms at 16 kHz: the frame both libraries work in."""

ACTIVE_DBFS = -50.0
"""A 10 ms reference frame louder than this counts as the moderator talking."""

_SPEEX_ECHO_SET_SAMPLING_RATE = 24  # speex/speex_echo.h
_I16P = ctypes.POINTER(ctypes.c_int16)


class EchoError(ModeratorError):
    """An echo canceller is unknown, or its library is not installed."""


class _Canceller:
    """What the adapters share: checking the chunks, and counting the seconds the moderator talked."""

    name = ""
    converge_seconds = 0.0

    def __init__(self) -> None:
        self._active_frames = 0

    def process(self, mic: np.ndarray, reference: np.ndarray) -> np.ndarray:
        """The microphone's audio with the echo of ``reference`` removed (see ``ports.EchoCanceller``)."""
        mic = np.ascontiguousarray(mic, dtype=np.float32)
        reference = np.ascontiguousarray(reference, dtype=np.float32)
        if mic.ndim != 1 or mic.shape != reference.shape or len(mic) % FRAME:
            raise ValueError(f"mic and reference must be mono and of one length, a multiple of {FRAME} samples "
                             f"(10 ms at 16 kHz); got shapes {mic.shape} and {reference.shape}")
        power = np.mean(np.square(reference.reshape(-1, FRAME), dtype=np.float64), axis=1)
        self._active_frames += int(np.count_nonzero(power > 10 ** (ACTIVE_DBFS / 10)))
        if not len(mic):
            return mic
        return np.clip(self._cancel(mic, reference), -1.0, 1.0).astype(np.float32, copy=False)

    @property
    def converged(self) -> bool:
        """True once the moderator has talked ``converge_seconds`` (10 ms frames over -50 dBFS) since the
        last reset: a count, not a measurement, because during double-talk nothing can tell residual echo
        from a player's voice."""
        return self._active_frames * FRAME >= self.converge_seconds * RATE

    def reset(self) -> None:
        """Forget the room: the filter starts from nothing and has to adapt again."""
        self._active_frames = 0
        self._restart()

    def _cancel(self, mic: np.ndarray, reference: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _restart(self) -> None:
        raise NotImplementedError


class SpeexEchoCanceller(_Canceller):
    """Speex's MDF adaptive filter, called through ctypes in the system's libspeexdsp (Debian:
    libspeexdsp1). Linear only: it subtracts its model of the echo and leaves the rest, a player's voice
    included, untouched, which is what the recognizer needs (docs/benchmarks/aec.md). One instance per
    microphone, used from one thread at a time.

    Args:
        tail: the filter's length in seconds. It must cover the residual delay (up to 60 ms after the set-up
            chirp) and the loud part of the reverberation; longer adapts more slowly.
    """

    name = "speex"
    converge_seconds = 4.0
    """Measured (docs/benchmarks/aec.md): on speech the filter removes ~5 dB in its first second, ~14 dB by
    its fourth and ~20 dB once settled."""

    def __init__(self, *, tail: float = 0.256) -> None:
        super().__init__()
        self._lib = _libspeexdsp()
        self._taps = round(tail * RATE / FRAME) * FRAME
        self._state = self._new_state()

    def _new_state(self) -> int:
        state = self._lib.speex_echo_state_init(FRAME, self._taps)
        if not state:
            raise EchoError("libspeexdsp could not make an echo canceller")
        rate = ctypes.c_int(RATE)
        self._lib.speex_echo_ctl(state, _SPEEX_ECHO_SET_SAMPLING_RATE, ctypes.byref(rate))
        return state

    def _cancel(self, mic: np.ndarray, reference: np.ndarray) -> np.ndarray:
        m, r = to_int16(mic, rounded=True), to_int16(reference, rounded=True)
        out = np.empty_like(m)
        # Reference and microphone frame by frame, together: no playback/capture threads to keep in step.
        for i in range(0, len(m), FRAME):
            self._lib.speex_echo_cancellation(self._state, m[i:].ctypes.data_as(_I16P), r[i:].ctypes.data_as(_I16P),
                                              out[i:].ctypes.data_as(_I16P))
        return from_pcm16(out)

    def _restart(self) -> None:
        # A new state rather than speex_echo_state_reset, which keeps the leak estimate: a reset
        # canceller would then adapt unlike a new one.
        old, self._state = self._state, self._new_state()
        self._lib.speex_echo_state_destroy(old)

    def __del__(self) -> None:
        state, self._state = getattr(self, "_state", None), None
        if state:
            self._lib.speex_echo_state_destroy(state)


def _load(path: str | None) -> Any:
    """The shared library at ``path`` if it is libspeexdsp, else None."""
    try:
        lib = ctypes.CDLL(path) if path else None
        return lib if lib is not None and hasattr(lib, "speex_echo_cancellation") else None
    except OSError:
        return None


def _libspeexdsp() -> Any:
    # The soname first: find_library runs ldconfig (a subprocess) and is needed only off Linux (a .dylib).
    lib = _load("libspeexdsp.so.1") or _load(ctypes.util.find_library("speexdsp"))
    if lib is None:
        raise EchoError("the speex echo canceller needs libspeexdsp (Debian/Ubuntu: apt-get install libspeexdsp1; "
                        "macOS: brew install speexdsp)")
    lib.speex_echo_state_init.restype = ctypes.c_void_p
    lib.speex_echo_state_init.argtypes = [ctypes.c_int, ctypes.c_int]
    lib.speex_echo_ctl.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
    lib.speex_echo_cancellation.argtypes = [ctypes.c_void_p, _I16P, _I16P, _I16P]
    lib.speex_echo_cancellation.restype = None
    lib.speex_echo_state_destroy.argtypes = [ctypes.c_void_p]
    return lib


class WebRtcEchoCanceller(_Canceller):
    """WebRTC's AEC3 from the pywebrtc-audio package (not a dependency: pip install pywebrtc-audio).

    It removes more echo, and faster, than Speex, but its residual echo suppressor also carves up a player's
    voice said over the moderator: pocketsphinx then recognizes almost nothing (docs/benchmarks/aec.md). For
    listening while the moderator is silent, or to detect barge-in, not to recognize over the moderator.

    Args:
        noise_suppression: add WebRTC's noise suppressor after the canceller.
    """

    name = "webrtc"
    converge_seconds = 1.0
    """Measured: AEC3 removes ~28 dB from the first second on (its delay estimator locks within it)."""

    def __init__(self, *, noise_suppression: bool = False) -> None:
        super().__init__()
        try:
            import pywebrtc_audio
        except ImportError as exc:
            raise EchoError("the webrtc echo canceller needs pywebrtc-audio (pip install pywebrtc-audio)") from exc
        if noise_suppression:
            self._ap: Any = pywebrtc_audio.AudioProcessor(RATE, 1, echo_cancellation=True, noise_suppression=True)
        else:
            self._ap = pywebrtc_audio.EchoCanceller(RATE, 1)

    def _cancel(self, mic: np.ndarray, reference: np.ndarray) -> np.ndarray:
        # It splits the chunk into 10 ms frames itself (reference, then microphone), with the GIL released.
        return self._ap.process(mic, reference)

    def _restart(self) -> None:
        self._ap.reset()


CANCELLERS = {"speex": SpeexEchoCanceller, "webrtc": WebRtcEchoCanceller}


def make_echo_canceller(name: str = "auto", **options: Any) -> SpeexEchoCanceller | WebRtcEchoCanceller:
    """The canceller called ``name`` (``speex``, ``webrtc``), with its ``options``; ``auto``: the first
    of them whose library is installed, with its defaults.

    Raises:
        EchoError: the name is unknown, or its library (for ``auto``: every one) is missing.
    """
    if name == "auto":
        if options:
            raise EchoError(f"options ({', '.join(options)}) belong to one canceller: name it instead of auto")
        reasons = []
        for candidate in CANCELLERS.values():
            try:
                return candidate()
            except EchoError as exc:
                reasons.append(str(exc))
        raise EchoError("no echo canceller is installed: " + "; ".join(reasons))
    if name not in CANCELLERS:
        raise EchoError(f"unknown echo canceller {name!r}: use auto, {', '.join(CANCELLERS)}")
    return CANCELLERS[name](**options)
