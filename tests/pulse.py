"""A PulseAudio bench for audio tests: ALSA devices ``roomA``/``roomB`` on private null sinks, recorded via monitors,
and microphones fed from the test (``PulseBench.pipe_mic``).

``pulse_bench()`` sets up the null sinks of ``benchmarks.pulse_bench`` (which the
real-time benchmarks use alone; see there how they are made) and skips the test
when PulseAudio is not installed. PortAudio reads the ALSA configuration when
``sounddevice`` is imported, so code under test runs in a subprocess with
``bench.env``.

A microphone is a ``module-pipe-source`` whose FIFO the test writes. That source
has no clock of its own: it delivers audio only as fast as it is written, so
``PipeMic`` keeps writing (silence when there is nothing to say) paced at real
time for as long as it is open.

A microphone can also hear the rooms, like a real one hears the moderator:
``pipe_mic(device, echo_from=("roomA",), echo_delay=0.04, echo_gain_db=-6)``
records each named sink's monitor (``parec``, float32 mono at 16 kHz) and the
writer mixes that into what it writes, ``echo_delay`` later and scaled by
``echo_gain_db`` (optionally convolved with ``echo_ir``, e.g. ``decaying_ir()``).
The monitor's audio reaches the writer in bursts of about 5 ms; each burst is
time-stamped on arrival, so the delay is measured from when the sink played a
sample, not from when the burst came. Delays under ``MIN_ECHO_DELAY`` (20 ms)
are raised to it: a shorter one would want samples before they arrive.
Measured with ``record_timed`` (tests/test_pulse_echo.py), a sound played into
the sink is in a recording of the microphone's source ``echo_delay`` plus
0.5-2.5 ms (``ECHO_PATH_LATENCY``; up to 6 ms seen under load) after it is in
a recording of the monitor.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from benchmarks.pulse_bench import ROOT, NullSinks, PulseMissing
from benchmarks.pulse_bench import pactl as _pactl
from benchmarks.pulse_bench import pulse_bench as _null_sinks

RECORD_RATE = 16000
#: How much later than ``echo_delay`` a sink's sound reaches an echoing microphone (measured: 0.5-2.5 ms, 6 at worst).
ECHO_PATH_LATENCY = 0.002
#: The start of the command line of a game these tests stop with Ctrl-C (SIGINT), as a host does: it gets Ctrl-C's
#: default even when the tests run in the background. A shell without job control starts background jobs with SIGINT
#: ignored, the ignoring is inherited, and Python then sets up no KeyboardInterrupt, so the game would never hear it.
CTRL_C = ("env", "--default-signal=INT")


def dump_threads(proc: subprocess.Popen[str]) -> None:
    """Make a stuck subprocess started with ``bench.env`` (``PYTHONFAULTHANDLER``) write every thread's stack to its
    stderr and end: what a test shows when the subprocess does not end as it should."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGABRT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@dataclass
class PulseBench(NullSinks):
    """The running bench (``benchmarks.pulse_bench.NullSinks``), with recorders of what each room heard and
    microphones the test speaks into."""

    @contextlib.contextmanager
    def record(self, device: str, channels: int = 1) -> Iterator[list[np.ndarray]]:
        """Record what ``device`` plays; after the block, the list holds the samples (frames x channels)."""
        path = self.home / f"rec-{uuid.uuid4().hex[:8]}.raw"
        result: list[np.ndarray] = []
        with path.open("wb") as sink_file:
            proc = subprocess.Popen(
                [
                    "parec",
                    "-d",
                    f"{self.sinks[device]}.monitor",
                    "--format=s16le",
                    f"--rate={RECORD_RATE}",
                    f"--channels={channels}",
                    "--latency-msec=20",
                ],
                stdout=sink_file,
                stderr=subprocess.DEVNULL,
                env=self.env,
            )
            try:
                time.sleep(0.15)  # let parec connect before anything plays
                yield result
                time.sleep(0.15)  # and let the tail through
            finally:
                proc.terminate()
                proc.wait(timeout=5)
        data = np.frombuffer(path.read_bytes(), "<i2")
        data = data[: len(data) - len(data) % channels]
        result.append((data.astype(np.float32) / 32768).reshape(-1, channels))

    @contextlib.contextmanager
    def record_timed(self, source: str) -> Iterator[TimedRecording]:
        """Record a PulseAudio source (``mic.source``, or ``bench.monitor("roomA")``) with the time of its first sample.

        Recordings of two sources made at once can then be lined up: ``parec`` processes start a few
        milliseconds apart, their sample 0 does not.
        """
        rec = TimedRecording(source)
        proc = subprocess.Popen(
            ["parec", "-d", source, f"--rate={RECORD_RATE}", "--channels=1", "--format=float32le", "--latency-msec=5"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=self.env,
            bufsize=0,
        )
        assert proc.stdout is not None
        reader = threading.Thread(target=rec._read, args=(proc.stdout.fileno(),), daemon=True)
        reader.start()
        try:
            yield rec
        finally:
            proc.terminate()
            proc.wait(timeout=5)
            reader.join(timeout=5)
            proc.stdout.close()
            rec._finish()

    def monitor(self, device: str) -> str:
        """The PulseAudio source that hears what ``device`` (``roomA``) plays."""
        return f"{self.sinks[device]}.monitor"

    def run(self, script: str, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        """Run a Python script in a subprocess that sees the bench's devices."""
        return subprocess.run(
            [sys.executable, "-c", script, *args],
            capture_output=True,
            text=True,
            env=self.env,
            cwd=ROOT,
            timeout=timeout,
        )

    @contextlib.contextmanager
    def pipe_mic(
        self,
        device: str = "micA",
        *,
        echo_from: Sequence[str] = (),
        echo_delay: float = 0.04,
        echo_gain_db: float = -6.0,
        echo_ir: np.ndarray | None = None,
    ) -> Iterator[PipeMic]:
        """A capture device named ``device`` (ALSA, for subprocesses started from now on) fed by the test.

        With ``echo_from`` (room devices such as ``"roomA"``) it also hears what those rooms play:
        ``echo_delay`` seconds (at least ``MIN_ECHO_DELAY``; plus ``ECHO_PATH_LATENCY``) later, scaled by
        ``echo_gain_db``, and convolved with ``echo_ir`` (an impulse response at 16 kHz whose first tap is the
        direct sound) if given.
        """
        tag = uuid.uuid4().hex[:8]
        fifo = self.home / f"{device}-{tag}.fifo"
        source = f"moderator_test_{tag}_{device}"
        module = _pactl(
            "load-module", "module-pipe-source", f"source_name={source}", f"file={fifo}", "format=s16le",
            f"rate={MIC_RATE}", "channels=1", env=self.env,
        ).strip()
        with (self.home / ".asoundrc").open("a") as rc:
            rc.write(f'pcm.{device} {{ type pulse; device {source}; hint {{ show on; description "{device}" }} }}\n')
        delay = max(echo_delay, MIN_ECHO_DELAY)
        taps = [_MonitorTap(self.monitor(room), self.env, delay) for room in echo_from]
        mic = PipeMic(device, source, fifo, echo=_Echo(taps, echo_gain_db, echo_ir) if taps else None)
        try:
            yield mic
        finally:
            mic.close()
            for tap in taps:
                tap.close()
            with contextlib.suppress(subprocess.SubprocessError):
                _pactl("unload-module", module, env=self.env)

    def suspend(self, device: str, suspended: bool) -> None:
        """Suspend (or resume) the sink behind ``device``: its streams stop being pulled, like a lost device."""
        _pactl("suspend-sink", self.sinks[device], "1" if suspended else "0", env=self.env)


MIC_RATE = 16000
MIC_CHUNK = 320  # 20 ms
#: The shortest echo delay: the monitor's audio reaches the writer in bursts up to this late.
MIN_ECHO_DELAY = 0.02


class PipeMic:
    """Writes a pipe source's FIFO in real time: what ``say`` queued, else silence, until ``close``."""

    def __init__(self, device: str, source: str, fifo: Path, echo: _Echo | None = None) -> None:
        self.device, self.source, self.fifo = device, source, fifo
        self._echo = echo
        self._fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # the source holds the read end open
        self._queue: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self._idle = threading.Event()
        self._idle.set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._write, daemon=True)
        self._thread.start()

    def say(self, samples: np.ndarray, rate: int = MIC_RATE) -> None:
        """Queue mono float samples to be "heard" after what is queued already."""
        if rate != MIC_RATE:
            x = np.linspace(0, len(samples) - 1, round(len(samples) * MIC_RATE / rate))
            samples = np.interp(x, np.arange(len(samples)), samples)
        pcm = (np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes()
        for i in range(0, len(pcm), MIC_CHUNK * 2):
            self._queue.put(pcm[i : i + MIC_CHUNK * 2])
        self._idle.clear()  # after the puts: the writer sets it again once the queue is empty

    def wait_said(self, timeout: float = 30.0) -> None:
        """Wait until everything queued has been written."""
        if not self._idle.wait(timeout):
            raise TimeoutError(f"{self.device}: the queued speech was not written in {timeout} s")

    def _write(self) -> None:
        start, written = time.monotonic(), 0
        silence = bytes(MIC_CHUNK * 2)
        pending: bytes | None = None
        while not self._stop.is_set():
            if pending is None:
                try:
                    pending = self._queue.get_nowait()
                except queue.Empty:
                    self._idle.set()
            chunk = (pending if pending is not None else silence).ljust(MIC_CHUNK * 2, b"\0")
            if self._echo is not None:  # the room is heard whether or not anybody listens
                # A chunk goes out whole when its first sample is due: in the source's stream, which delivers a
                # sample once written, the chunk's first sample belongs one chunk before that.
                at = start + (written - MIC_CHUNK) / MIC_RATE
                mixed = np.frombuffer(chunk, "<i2") / 32768 + self._echo.next(MIC_CHUNK, at)
                chunk = (np.clip(mixed, -1, 32767 / 32768) * 32768).astype("<i2").tobytes()
            try:
                os.write(self._fd, chunk)
                pending = None
            except BlockingIOError:  # nobody reads the source: silence is dropped, speech waits
                pass
            except OSError:  # the source is gone (its module was unloaded): nothing more to feed
                self._idle.set()
                return
            written += MIC_CHUNK
            time.sleep(max(0.0, start + written / MIC_RATE - time.monotonic()))

    def close(self) -> None:
        """Stop writing (a reader then hears nothing more: its stream stalls); twice is harmless."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._thread.join(timeout=5)
        os.close(self._fd)


class _DelayLine:
    """Float32 samples that arrive in bursts, given back in even chunks ``delay`` seconds after they were captured.

    When each sample was captured is estimated from its arrival like ``TimedRecording.t0``; the first ``take``
    fixes which sample each later chunk starts with (its time minus ``delay``), so the delay holds whatever the
    bursts: a sample that has not arrived when its chunk is written is silence, and dropped when it comes
    (``late`` counts them).
    """

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self._buf = bytearray()
        self._lock = threading.Lock()
        self._received = 0  # bytes
        self._t0 = float("inf")  # when sample 0 was captured, as delivered
        self._base = 0  # the index of the sample _buf starts with
        self._next: int | None = None  # the index of the sample the next chunk starts with
        self.late = 0

    def feed(self, data: bytes, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        with self._lock:
            self._buf += data
            self._received += len(data)
            self._t0 = min(self._t0, now - self._received // 4 / MIC_RATE)

    def take(self, n: int, at: float) -> np.ndarray:
        """The ``n`` samples to play from time ``at`` on (monotonic): those captured ``delay`` earlier."""
        out = np.zeros(n, np.float32)
        with self._lock:
            if self._next is None:
                if self._t0 == float("inf"):
                    return out  # nothing has arrived yet
                self._next = round((at - self.delay - self._t0) * MIC_RATE)
            first, self._next = self._next, self._next + n
            have = len(self._buf) // 4
            lo, hi = max(first, self._base), min(first + n, self._base + have)
            if hi > lo:
                part = bytes(self._buf[4 * (lo - self._base) : 4 * (hi - self._base)])
                out[lo - first : hi - first] = np.frombuffer(part, "<f4")
            self.late += max(0, first + n - max(self._base + have, first, 0))
            used = min(have, max(0, first + n - self._base))
            del self._buf[: 4 * used]
            self._base += used
        return out


class _MonitorTap(_DelayLine):
    """What a sink plays, recorded from its monitor (float32 mono at ``MIC_RATE``) into a delay line."""

    def __init__(self, monitor: str, env: dict[str, str], delay: float) -> None:
        super().__init__(delay)
        self._proc = subprocess.Popen(
            ["parec", "-d", monitor, f"--rate={MIC_RATE}", "--channels=1", "--format=float32le", "--latency-msec=10"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            bufsize=0,
        )
        assert self._proc.stdout is not None
        self._thread = threading.Thread(target=self._read, args=(self._proc.stdout.fileno(),), daemon=True)
        self._thread.start()

    def _read(self, fd: int) -> None:
        while data := os.read(fd, 8192):
            self.feed(data)

    def close(self) -> None:
        self._proc.terminate()
        self._proc.wait(timeout=5)
        self._thread.join(timeout=5)
        assert self._proc.stdout is not None
        self._proc.stdout.close()


class _Echo:
    """The rooms a microphone hears: the taps summed, convolved with an impulse response, scaled."""

    def __init__(self, taps: Sequence[_DelayLine], gain_db: float, ir: np.ndarray | None = None) -> None:
        self.taps = list(taps)
        self.gain = 10 ** (gain_db / 20)
        self.ir = None if ir is None else np.asarray(ir, np.float64)
        self._tail = np.zeros(0 if self.ir is None else len(self.ir) - 1)

    def next(self, n: int, at: float) -> np.ndarray:
        """The ``n`` samples of echo to write at time ``at`` (monotonic)."""
        x = np.zeros(n)
        for tap in self.taps:
            x += tap.take(n, at)
        if self.ir is not None:
            y = np.convolve(x, self.ir)
            y[: len(self._tail)] += self._tail
            x, self._tail = y[:n], y[n:]
        return x * self.gain


def decaying_ir(duration: float = 0.12, level_db: float = -10.0, seed: int = 0) -> np.ndarray:
    """A small room's impulse response at ``MIC_RATE``: the direct sound (1.0), then reflections as noise that starts
    ``level_db`` below it and decays by 60 dB over ``duration``."""
    n = max(2, round(duration * MIC_RATE))
    t = np.arange(1, n) / MIC_RATE
    tail = np.random.default_rng(seed).standard_normal(n - 1) * 10 ** (level_db / 20) * 10 ** (-3 * t / duration)
    return np.concatenate([[1.0], tail])


@dataclass
class TimedRecording:
    """What ``PulseBench.record_timed`` heard: mono float samples at ``RECORD_RATE``, and when sample 0 was heard."""

    source: str
    samples: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    t0: float = float("inf")
    """``time.monotonic()`` of sample 0 as delivered: the earliest of (arrival - samples before it) over all reads,
    the read that waited least. Recordings made the same way share that wait, so their ``t0`` line them up."""
    _data: bytearray = field(default_factory=bytearray, repr=False)

    def _read(self, fd: int) -> None:
        while data := os.read(fd, 8192):
            now = time.monotonic()
            self._data += data
            self.t0 = min(self.t0, now - len(self._data) // 4 / RECORD_RATE)

    def _finish(self) -> None:
        self.samples = np.frombuffer(bytes(self._data[: len(self._data) // 4 * 4]), "<f4").copy()

    def time_of(self, index: float) -> float:
        """The monotonic time at which sample ``index`` was heard."""
        return self.t0 + index / RECORD_RATE


@contextlib.contextmanager
def pulse_bench() -> Iterator[PulseBench]:
    """Set up the bench (skipping only if PulseAudio is not installed) and tear it down."""
    with contextlib.ExitStack() as stack:
        try:
            sinks = stack.enter_context(_null_sinks())
        except PulseMissing as exc:
            pytest.skip(str(exc))
        # PYTHONFAULTHANDLER: a subprocess that hangs can be made to show where (``dump_threads``).
        yield PulseBench(sinks.home, {**sinks.env, "PYTHONFAULTHANDLER": "1"}, sinks.sinks)
