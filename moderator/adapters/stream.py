"""The lifecycle both PortAudio adapters share: a stream that may stop, stall or vanish, and its close."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

from moderator.adapters import pulse_routing
from moderator.adapters.audio_system import SYSTEM, AudioSystem
from moderator.errors import DeviceError


class WatchedStream:
    """One PortAudio stream (set ``stream``) whose health is watched from the caller's thread.

    Its callback must set ``last_callback`` (``self.monotonic()``); ``check`` then notices a stream that
    stopped, or went quiet for a while, without PortAudio telling us. Subclasses say what quiet means
    (``STALLED``) and may do more when the stream fails (``fail``). ``monotonic`` is ``time.monotonic``
    but for tests, whose fake one jumps; ``system`` is where PortAudio and the Pulse server come from.
    """

    STALLED = "it moved no audio for {seconds:g} s (device lost?)"
    """Why a stream that went quiet failed; ``{seconds}`` is the stall time."""

    def __init__(self, monotonic: Callable[[], float] = time.monotonic, system: AudioSystem = SYSTEM) -> None:
        self.monotonic = monotonic
        self.system = system
        self.stream: Any = None
        self._closing = False  # closing on purpose: the stream's end is not a failure
        self.failure: str | None = None  # why the stream failed, while it has
        self.failed_at = 0.0  # monotonic() of the failure, or of the last attempt to reopen
        self.reported = False  # the failure has been logged
        self.last_callback = 0.0

    def _start(self, make: Callable[[], Any], target: Any, refused: tuple[type[BaseException], ...], what: str) -> None:
        """Make the stream (``make()``) and start it, routed to the PulseAudio sink or source ``target`` if any.

        An exception of ``refused`` (PortAudio's) is a ``DeviceError`` that says it could not open ``what``; a
        stream that opened but could not be routed is closed again, and its ``DeviceError`` goes on."""
        try:
            with pulse_routing.opening(target, connect=self.system.pulse) if target else contextlib.nullcontext():
                self.stream = make()
                self.stream.start()
        except refused as exc:
            self.stream = None
            raise DeviceError(f"cannot open {what}: {exc}") from exc
        except DeviceError:  # opened, but not to be routed to its sink or source
            self.close()
            raise

    def _finished(self) -> None:
        """PortAudio's ``finished_callback``."""
        if not self._closing:
            self.fail("the stream stopped unexpectedly (device lost?)")

    def check(self, stall_after: float) -> None:
        """Notice a stream that stopped, or moved no audio for ``stall_after`` s, without telling us."""
        if self.failure is not None or self.stream is None:
            return
        try:
            active = self.stream.active
        except Exception as exc:  # a lost device may fail even this query
            self.fail(f"the stream cannot be queried: {exc}")
            return
        if not active:
            self.fail("the stream is no longer active (device lost?)")
        elif self.monotonic() - self.last_callback > stall_after:
            self.fail(self.STALLED.format(seconds=stall_after))

    def fail(self, reason: str) -> None:
        """Mark the stream failed (the first reason is kept)."""
        if self.failure is None:
            self.failure, self.failed_at = reason, self.monotonic()

    def close(self) -> None:
        """Stop and close the stream."""
        self._closing = True
        stream, self.stream = self.stream, None
        if stream is None:
            return
        # A lost device may refuse to stop or close; there is nothing left to do about it then.
        with contextlib.suppress(Exception):
            if self.failure is None:
                stream.stop()
            else:
                stream.abort()
        with contextlib.suppress(Exception):
            stream.close()
