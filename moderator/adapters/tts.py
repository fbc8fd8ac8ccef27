"""Speech synthesis adapters: pyttsx3 (in a process of its own, where one worker thread owns the engine) and the
espeak-ng command line.

libespeak-ng is native code in the game's process when pyttsx3 drives it: once, it crashed with a segmentation
fault on the worker thread, in ``Synth``, and took the whole process down with it (a test run of the demo, not
reproduced since). A game must not end with its voice, so the game renders with ``Pyttsx3Process``: the
``Pyttsx3Synth`` below, served in a child process (``moderator.adapters.child``). A crash there costs one retry of
the phrase in a new process; a run loop that hangs costs the timeout and a new process, not the voice for the rest
of the game. The price is one process (37 MB resident after a render, measured) and a pickled clip per phrase
over a pipe.

pyttsx3 on Linux, as read from its 2.99 source and its issue tracker, and what follows here:

- Its engine is not thread-safe, and ``runAndWait`` raises "run loop already started" when it is
  entered twice. So one worker thread creates and owns the engine; ``render`` from any thread
  queues a request and waits on a Future.
- Its espeak driver keeps ONE libespeak-ng per process: ``pyttsx3.init`` hands every caller the
  same cached engine, and the synthesis callback is process-global. Two engines would steal each
  other's callbacks and hang. So every synthesizer here goes through ``pyttsx3.init`` and renders
  under one process-wide lock.
- ``say`` plays through ``aplay`` on the default device and queues badly, so each utterance is
  rendered with ``save_to_file`` and played by our own audio output.
- Several ``save_to_file`` calls queued before one ``runAndWait`` keep only one utterance
  (nateshmbhat/pyttsx3#170), so it is one utterance per ``runAndWait``.
- Failures are silent or hang: an unknown voice only fires the engine's ``error`` event and keeps
  the previous voice; a WAV that cannot be written (say, its folder was cleaned from /tmp) raises
  inside the espeak callback, and from the second render on ``runAndWait`` then never returns
  (tried here; users report hangs in nateshmbhat/pyttsx3#194 and austin-bowen/voicebox#8, and
  files never written in #151). So voices are looked up here first, errors are collected from the
  ``error`` event, the output folder is re-created before each render, the WAV is checked and the
  render retried once, and ``render`` gives up after a timeout.
- Property changes are lost at random (a quarter of renders, measured here): the driver runs
  libespeak-ng in its asynchronous mode, so ``setProperty`` only queues a command in espeak's own
  thread, and ``runAndWait`` starts by calling the driver's ``stop``, which, while that queue is
  busy, cancels it and restores the rate and volume of the previous utterance (``espeak_Cancel``).
  So before each render the worker waits for espeak's queue to be processed (``espeak_Synchronize``,
  then ``_espeak.IsPlaying``).
- The driver prints "Audio saved to <file>" on stdout for every file, which would tear through
  the live terminal view; that print is silenced in the driver module only.
"""

from __future__ import annotations

import difflib
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import Any

from moderator.adapters import child
from moderator.adapters.child import Child
from moderator.audio.clip import AudioError, Clip
from moderator.errors import SynthesisError
from moderator.ports import Synthesizer
from moderator.settings import VoiceSettings

INSTALL_HINT = "install espeak-ng (Debian: apt-get install libespeak-ng1 espeak-ng)"

_ENGINE_LOCK = threading.Lock()
"""Held while the process's one espeak library renders (see the module docstring)."""


def voice_index(voices: Iterable[tuple[str, Iterable[str]]]) -> dict[str, str]:
    """Map every name a voice answers to (its id, its languages, the id's last part) to its id.

    Args:
        voices: ``(id, languages)`` pairs, e.g. ``("gmw/en-us", ["en-us"])``.

    Returns:
        Lower-case names to ids; an exact id wins over a language, which wins over an id's last part.
    """
    voices = [(vid, list(langs)) for vid, langs in voices]
    tiers: list[dict[str, str]] = [{}, {}, {}]
    for vid, langs in voices:
        tiers[0].setdefault(vid.lower(), vid)
        for lang in langs:
            tiers[1].setdefault(lang.lower(), vid)
        tiers[2].setdefault(vid.rsplit("/", 1)[-1].lower(), vid)
    index: dict[str, str] = {}
    for tier in reversed(tiers):
        index.update(tier)
    return index


def unknown_voice(name: str, index: dict[str, str], engine: str) -> SynthesisError:
    """The error for a voice name no voice answers to, with a few names that would work."""
    names = sorted(k for k in index if "/" not in k)
    near = difflib.get_close_matches(name.lower(), names, n=4, cutoff=0.5)
    usual = [n for n in ("en-us", "it", "fr-fr", "cmn", "de", "es") if n in index and n not in near]
    some = ", ".join((near + usual)[:8])
    return SynthesisError(
        f"{engine} has no voice {name!r}; try one of: {some} "
        f"({len(set(index.values()))} voices in all: `espeak-ng --voices` lists them)"
    )


def resolve_voice(name: str, index: dict[str, str], engine: str) -> str:
    """The engine's voice id for ``name``; raises SynthesisError listing valid names."""
    try:
        return index[name.strip().lower()]
    except KeyError:
        raise unknown_voice(name, index, engine) from None


def read_speech(path: Path) -> Clip | None:
    """The clip in a freshly written WAV, or None when the engine left no file or no samples."""
    try:
        clip = Clip.read(path)
    except AudioError:
        return None
    return clip if len(clip.samples) else None


def _check_text(text: str) -> None:
    if not text.strip():
        raise SynthesisError("nothing to say: the text is empty")


def _quiet(*_args: object, **_kwargs: object) -> None:
    """Stands in for ``print`` in pyttsx3's espeak driver."""


@dataclass
class _Request:
    text: str
    voice: VoiceSettings
    future: Future[Clip] = field(default_factory=Future)


class Pyttsx3Synth:
    """pyttsx3's espeak driver, rendering each utterance to a WAV file on its own worker thread."""

    name = "pyttsx3:espeak"

    def __init__(self, timeout: float = 10.0) -> None:
        """Start the worker and its engine.

        Args:
            timeout: Seconds ``render`` waits for its clip (and the worker for its engine).

        Raises:
            SynthesisError: pyttsx3 or libespeak-ng is missing or fails to start.
        """
        self.timeout = timeout
        self._requests: queue.Queue[_Request | None] = queue.Queue()
        self._closed = False
        self._broken: str | None = None
        self._workdir = Path(tempfile.mkdtemp(prefix="moderator-tts-"))
        self._index: dict[str, str] = {}
        self._espeak_busy: Callable[[], int] | None = None
        self._espeak_sync: Callable[[], int] | None = None
        ready: Future[None] = Future()
        self._thread = threading.Thread(target=self._run, args=(ready,), name="pyttsx3-worker", daemon=True)
        self._thread.start()
        try:
            ready.result(timeout=timeout)
        except BaseException as exc:
            self.close()
            if isinstance(exc, SynthesisError):
                raise
            raise SynthesisError(f"pyttsx3 did not start within {timeout:g} s") from exc

    @property
    def alive(self) -> bool:
        """Whether the worker thread is running."""
        return self._thread.is_alive()

    def render(self, text: str, voice: VoiceSettings) -> Clip:
        """Synthesize ``text``; safe from any thread (the worker serialises requests)."""
        _check_text(text)
        if self._closed:
            raise SynthesisError("pyttsx3 synthesizer is closed")
        if self._broken:
            raise SynthesisError(self._broken)
        request = _Request(text, voice)
        self._requests.put(request)
        try:
            return request.future.result(timeout=self.timeout)
        except FutureTimeout:
            if request.future.running():
                # The worker took it and never finished (a render takes milliseconds): its run loop
                # hangs, and cannot be interrupted from outside, so fail fast from now on.
                self._broken = "pyttsx3 stopped responding (its run loop hangs); use the espeak-ng command line"
            request.future.cancel()
            raise SynthesisError(f"pyttsx3 did not render {text!r} within {self.timeout:g} s") from None

    def close(self) -> None:
        """Stop the worker (after the request it is rendering, if any); idempotent."""
        if not self._closed:
            self._closed = True
            self._requests.put(None)  # tells the worker to stop
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=min(self.timeout, 5.0))
        shutil.rmtree(self._workdir, ignore_errors=True)

    # The worker thread: everything below touches the engine and runs only there.

    def _run(self, ready: Future[None]) -> None:
        errors: list[BaseException] = []
        try:
            engine = self._start_engine()
        except Exception as exc:
            error = SynthesisError(f"pyttsx3 cannot start: {exc}; {INSTALL_HINT}")
            error.__cause__ = exc
            ready.set_exception(error)
            return
        ready.set_result(None)
        token = engine.connect("error", lambda **kw: errors.append(kw.get("exception") or RuntimeError("error")))
        try:
            self._serve(engine, errors)
        finally:
            engine.disconnect(token)
            while True:
                try:
                    request = self._requests.get_nowait()
                except queue.Empty:
                    break
                if request is not None and request.future.set_running_or_notify_cancel():
                    request.future.set_exception(SynthesisError("pyttsx3 synthesizer is closed"))

    def _start_engine(self) -> Any:
        import pyttsx3  # here, so a missing pyttsx3 or libespeak-ng only disables this adapter

        engine = pyttsx3.init("espeak")
        driver = sys.modules.get("pyttsx3.drivers.espeak")
        if driver is not None:
            driver.print = _quiet  # type: ignore[attr-defined]
        self._index = voice_index((v.id, v.languages or []) for v in engine.getProperty("voices"))
        if not self._index:
            raise RuntimeError("it lists no voices")
        espeak = sys.modules.get("pyttsx3.drivers._espeak")
        self._espeak_busy = getattr(espeak, "IsPlaying", None)
        self._espeak_sync = getattr(espeak, "Synchronize", None)
        return engine

    def _apply_now(self, voice_id: str, voice: VoiceSettings) -> None:
        """Hand the voice, rate and volume to libespeak-ng now, with the driver's own calls, rather than only
        through pyttsx3's command queue, which holds them while its proxy counts itself busy; ``_settle`` then
        waits until espeak has taken them. On two CI runs the first render after a rate change came out at the
        old rate (tests/test_tts.py); it was not reproduced here (0 of 64 runs, with and without this), so
        whether this is the cure is not known."""
        espeak = sys.modules.get("pyttsx3.drivers._espeak")
        if espeak is None:
            return
        espeak.SetVoiceByName(str(voice_id).encode("utf-8"))
        espeak.SetParameter(espeak.RATE, int(voice.rate), 0)
        espeak.SetParameter(espeak.VOLUME, int(round(voice.volume * 100, 2)), 0)

    def _settle(self) -> None:
        """Wait until libespeak-ng's own command queue is empty (see the module docstring).

        ``espeak_Synchronize`` blocks until the queued parameter changes are applied; polling
        ``IsPlaying`` alone could read "idle" before espeak's thread had even taken the command.
        """
        if self._espeak_sync is not None:
            self._espeak_sync()
        busy = self._espeak_busy
        deadline = time.monotonic() + self.timeout / 2
        while busy is not None and busy() and time.monotonic() < deadline:
            time.sleep(0.0005)

    def _serve(self, engine: Any, errors: list[BaseException]) -> None:
        serial = count()
        while (request := self._requests.get()) is not None:
            if not request.future.set_running_or_notify_cancel():
                continue
            try:
                request.future.set_result(self._render(engine, errors, request, next(serial)))
            except SynthesisError as exc:
                request.future.set_exception(exc)
            except Exception as exc:
                error = SynthesisError(f"pyttsx3 failed on {request.text!r}: {exc}")
                error.__cause__ = exc
                request.future.set_exception(error)

    def _render(self, engine: Any, errors: list[BaseException], request: _Request, serial: int) -> Clip:
        voice = request.voice
        voice_id = resolve_voice(voice.name, self._index, "pyttsx3")
        path = self._workdir / f"{serial}.wav"
        with _ENGINE_LOCK:
            for _attempt in range(2):
                errors.clear()
                self._workdir.mkdir(parents=True, exist_ok=True)
                path.unlink(missing_ok=True)
                engine.setProperty("voice", voice_id)
                engine.setProperty("rate", voice.rate)
                engine.setProperty("volume", voice.volume)
                self._apply_now(voice_id, voice)
                self._settle()
                engine.save_to_file(request.text, str(path))
                engine.runAndWait()
                clip = None if errors else read_speech(path)
                path.unlink(missing_ok=True)
                if clip is not None:
                    return clip
        why = f": {errors[-1]}" if errors else ""
        raise SynthesisError(f"pyttsx3 wrote no audio for {request.text!r} twice{why}")


class Pyttsx3Process:
    """``Pyttsx3Synth`` in a child process (see the module docstring); the same renders, each a round trip."""

    name = Pyttsx3Synth.name

    def __init__(self, timeout: float = 10.0) -> None:
        """Start the child and its engine.

        Args:
            timeout: Seconds a render (and the child's start) may take; past it the child is stopped and the
                next render starts a new one. The child's own worker waits a little longer, so this comes first.

        Raises:
            SynthesisError: The child could not start, or pyttsx3 or libespeak-ng is missing there.
        """
        self.timeout = timeout
        self._closed = False
        self._child = Child("moderator.adapters.tts", (str(timeout + 5.0),), error=SynthesisError,
                            what="the speech process", start_timeout=timeout)

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """The child (None once closed or stopped, until a render starts a new one)."""
        return self._child.process

    def render(self, text: str, voice: VoiceSettings) -> Clip:
        """Synthesize ``text``; any thread may call (renders are served one at a time)."""
        _check_text(text)
        if self._closed:
            raise SynthesisError("pyttsx3 synthesizer is closed")
        return self._child.call("render", text, voice, timeout=self.timeout)  # type: ignore[no-any-return]

    def close(self) -> None:
        """Stop the child; later renders fail. Idempotent."""
        self._closed = True
        self._child.close()


class EspeakCliSynth:
    """The ``espeak-ng`` command line: one process per utterance, writing a WAV file."""

    name = "espeak-ng"

    def __init__(self, executable: str = "espeak-ng", timeout: float = 10.0) -> None:
        """Find the program and its voices.

        Raises:
            SynthesisError: espeak-ng is not installed or does not run.
        """
        found = shutil.which(executable)
        if found is None:
            raise SynthesisError(f"the espeak-ng program is not installed; {INSTALL_HINT}")
        self.executable = found
        self.timeout = timeout
        self._closed = False
        listing = self._run([self.executable, "--voices"], "list its voices")
        rows = [line.split() for line in listing.stdout.splitlines()[1:]]
        self._index = voice_index((row[4], [row[1]]) for row in rows if len(row) >= 5)
        if not self._index:
            raise SynthesisError(f"espeak-ng lists no voices; {INSTALL_HINT}")

    def render(self, text: str, voice: VoiceSettings) -> Clip:
        """Synthesize ``text``; each call is its own process, so any thread may call it."""
        _check_text(text)
        if self._closed:
            raise SynthesisError("espeak-ng synthesizer is closed")
        voice_id = resolve_voice(voice.name, self._index, "espeak-ng")
        # Amplitude 100 is espeak's normal level, and what pyttsx3 sets for volume 1.0; 200 would clip.
        amplitude = max(0, min(200, round(voice.volume * 100)))
        with tempfile.TemporaryDirectory(prefix="moderator-espeak-") as tmp:
            out = Path(tmp) / "speech.wav"
            cmd = [self.executable, "-v", voice_id, "-s", str(voice.rate), "-a", str(amplitude), "-w", str(out)]
            self._run([*cmd, "--", text], f"say {text!r} with voice {voice.name!r}")
            clip = read_speech(out)
        if clip is None:
            raise SynthesisError(f"espeak-ng wrote no audio for {text!r}")
        return clip

    def close(self) -> None:
        """Nothing to release; later renders fail."""
        self._closed = True

    def _run(self, cmd: list[str], what: str) -> subprocess.CompletedProcess[str]:
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=self.timeout, check=False)
        except subprocess.TimeoutExpired:
            raise SynthesisError(f"espeak-ng did not {what} within {self.timeout:g} s") from None
        except OSError as exc:
            raise SynthesisError(f"espeak-ng could not {what}: {exc.strerror or exc}; {INSTALL_HINT}") from exc
        if proc.returncode != 0:
            detail = proc.stderr.strip() or f"exit code {proc.returncode}"
            raise SynthesisError(f"espeak-ng could not {what}: {detail}")
        return proc


def _to_stderr(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def _started(factory: Callable[[], Synthesizer]) -> Synthesizer:
    """A synthesizer that has said a word, or the error of trying."""
    synth = factory()
    try:
        synth.render("ok", VoiceSettings())
    except BaseException:
        synth.close()
        raise
    return synth


def make_synthesizer(prefer: str = "auto", warn: Callable[[str], None] = _to_stderr) -> Synthesizer:
    """The speech engine to use, checked with a test render.

    Args:
        prefer: ``auto`` (pyttsx3, else the espeak-ng command line), ``pyttsx3`` or ``espeak-ng``.
        warn: Told, in a sentence for the host, when ``auto`` falls back.

    Raises:
        SynthesisError: The chosen engine, or with ``auto`` both engines, do not work.
    """
    if prefer == "pyttsx3":
        return _started(Pyttsx3Process)
    if prefer == "espeak-ng":
        return _started(EspeakCliSynth)
    if prefer != "auto":
        raise SynthesisError(f"unknown speech engine {prefer!r}: choose auto, pyttsx3 or espeak-ng")
    try:
        return _started(Pyttsx3Process)
    except Exception as exc:
        reason = str(exc.__cause__ or exc)  # the library's own words where known (the speech process sends ours)
    try:
        synth = _started(EspeakCliSynth)
    except SynthesisError as exc:
        message = f"no speech engine works (pyttsx3: {reason}; espeak-ng: {exc})"
        if INSTALL_HINT not in message:
            message += f"; {INSTALL_HINT}"
        raise SynthesisError(message) from exc
    warn(f"pyttsx3 is unavailable ({reason}); speaking with the espeak-ng command line instead")
    return synth


if __name__ == "__main__":
    # Served from the imported module, so that what it pickles (``Clip``) and raises are the classes the game knows.
    from moderator.adapters import tts

    child.main(lambda: tts.Pyttsx3Synth(timeout=float(sys.argv[1])), {"render"}, SynthesisError)
