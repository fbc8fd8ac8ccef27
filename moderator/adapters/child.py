"""An object served from a child process: native code that can hold Python's lock or crash stays out of the game's
process.

``Child`` starts ``python -m MODULE ARGS`` and makes calls into it; the module builds its object and hands it to
``serve`` (see ``main``). The protocol is pickled ``(method, *args)`` tuples over the child's stdin, and
``("ok", value)`` or ``("error", message)`` replies, one at a time. The replies go over a copy of the child's stdout
taken before anything else can print: the child's own file descriptor 1 is pointed at its stderr, so a library that
prints (pyttsx3's driver, a native library's message) cannot corrupt the protocol.

If the child dies (a segfault in a native library, killed, out of memory), the next call starts a new one and replays
the calls that had set it up, and the call in progress is made once more: a game loses neither its recognizer nor its
voice to one crash. Calls are serialized under a lock, so any thread may call.

Users: ``moderator.adapters.sphinx.DecoderProcess`` (pocketsphinx keeps Python's global lock while it decodes) and
``moderator.adapters.tts.Pyttsx3Process`` (libespeak-ng crashed pytest once, on pyttsx3's worker thread).
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Collection
from typing import IO, Any

from moderator.errors import ModeratorError


class Child:
    """One child process serving an object's methods; a dead child is replaced at the next call."""

    def __init__(self, module: str, args: tuple[str, ...], *, error: type[ModeratorError], what: str,
                 setup: Collection[str] = (), start_timeout: float | None = None) -> None:
        """Start the child and wait until its object is made.

        Args:
            module: The module run with ``python -m``; it calls ``main``.
            args: Its command-line arguments.
            error: The exception raised for the child's error replies and for its failures.
            what: The child in words, for messages ("the decoding process").
            setup: The methods whose calls set the child up, replayed in order into a new child after a crash.
            start_timeout: Seconds a new child has to make its object and replay its set-up (None: no limit).

        Raises:
            error: The child could not start, or its object could not be made (the message is the child's).
        """
        self._command = [sys.executable, "-m", module, *args]
        self._error, self._what, self._setup_calls = error, what, frozenset(setup)
        self._start_timeout = start_timeout
        self._proc: subprocess.Popen[bytes] | None = None
        #: The calls that set the child up, in order: replayed into a new child after a crash.
        self._setup: list[tuple[Any, ...]] = []
        self._lock = threading.RLock()
        with self._lock:
            self._running()

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """The child (None once stopped, until a call starts a new one)."""
        return self._proc

    def call(self, *request: Any, timeout: float | None = None) -> Any:
        """One round trip; a dead child is replaced (and set up again) once, then it is an error.

        Args:
            request: The method's name and its arguments.
            timeout: Seconds to wait for the reply (None: no limit). Past it the child is stopped and ``error``
                raised; the call is not made again (it would likely hang again), a later call starts a new child.
        """
        with self._lock:
            for attempt in (1, 2):
                proc = self._running()
                try:
                    send(proc.stdin, request)
                    status, value = self._reply(proc, timeout)
                except (OSError, EOFError, pickle.UnpicklingError) as exc:
                    self._stop(proc)
                    if attempt == 2:
                        raise self._error(f"{self._what} died twice ({exc!r})") from exc
                    continue
                if status == "error":
                    raise self._error(value)
                if request[0] in self._setup_calls:
                    self._setup.append(request)  # only once done: a refused call is not replayed
                return value
            raise AssertionError("unreachable")

    def close(self) -> None:
        """Stop the child (a later call starts a new one)."""
        with self._lock:
            proc, self._proc = self._proc, None
            if proc is None:
                return
            try:
                send(proc.stdin, ("close",))
                proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()

    def _reply(self, proc: subprocess.Popen[bytes], timeout: float | None) -> tuple[str, Any]:
        assert proc.stdout is not None
        if timeout is not None and not select.select([proc.stdout], [], [], timeout)[0]:
            self._stop(proc)
            raise self._error(f"{self._what} gave no answer within {timeout:g} s, so it was stopped")
        return pickle.load(proc.stdout)  # type: ignore[no-any-return]

    def _stop(self, proc: subprocess.Popen[bytes]) -> None:
        self._proc = None
        proc.kill()
        proc.wait()

    def _running(self) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        try:
            proc = subprocess.Popen(self._command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL)
        except OSError as exc:
            raise self._error(f"cannot start {self._what}: {exc}") from exc
        try:
            for request in (None, *self._setup):  # None: the child's first reply, once its object is made
                if request is not None:
                    send(proc.stdin, request)
                status, value = self._reply(proc, self._start_timeout)
                if status == "error":
                    raise self._error(value)
        except (OSError, EOFError, pickle.UnpicklingError) as exc:
            self._stop(proc)
            raise self._error(f"{self._what} failed to start ({exc!r})") from exc
        except self._error:
            self._stop(proc)
            raise
        self._proc = proc
        return proc


def send(stream: IO[bytes] | None, message: tuple[Any, ...]) -> None:
    assert stream is not None
    pickle.dump(message, stream, protocol=pickle.HIGHEST_PROTOCOL)
    stream.flush()


def serve(make: Callable[[], Any], calls: Collection[str], expected: type[Exception],
          requests: IO[bytes], replies: IO[bytes]) -> None:
    """The child's loop: make the object, then answer calls until ``close`` or the end of input.

    Args:
        make: Makes the object (its ``expected`` error is the parent's error reply, as is any other). Its
            ``close``, if it has one, is called at the end.
        calls: The methods the parent may call.
        expected: The object's own error class, whose message is passed on as it is.
    """
    try:
        served = make()
    except Exception as exc:
        send(replies, ("error", _message(exc, expected)))
        return
    send(replies, ("ok", None))
    try:
        while True:
            try:
                method, *args = pickle.load(requests)
            except EOFError:
                return
            if method == "close":
                return
            try:
                if method not in calls:
                    raise expected(f"unknown call {method!r}")
                reply = ("ok", getattr(served, method)(*args))
            except Exception as exc:
                reply = ("error", _message(exc, expected))
            send(replies, reply)
    finally:
        if callable(close := getattr(served, "close", None)):
            close()  # its own clean-up (a temporary folder), when the game closes it or goes


def _message(exc: Exception, expected: type[Exception]) -> str:
    return str(exc) if isinstance(exc, expected) else f"{type(exc).__name__}: {exc}"


def main(make: Callable[[], Any], calls: Collection[str], expected: type[Exception]) -> None:
    """A child's ``__main__``: Ctrl-C is left to the game, and the replies get stdout to themselves."""
    # Ctrl-C in the terminal reaches the whole process group: the game decides what it means (save, leave), and
    # the child ends when the game closes its pipe.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    serve(make, calls, expected, sys.stdin.buffer, replies)
