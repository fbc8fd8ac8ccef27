"""A PulseAudio bench for audio tests: ALSA devices ``roomA``/``roomB`` on private null sinks, recorded via monitors,
and microphones fed from the test (``PulseBench.pipe_mic``).

``pulse_bench()`` starts a PulseAudio daemon if none runs, loads two null sinks
with unique names (so parallel tests and other programs cannot leak sound into
them), and writes a temporary HOME whose ``.asoundrc`` names them ``roomA`` and
``roomB``. PortAudio reads the ALSA configuration when ``sounddevice`` is
imported, so code under test runs in a subprocess with ``bench.env``.

A null sink that nothing plays into sleeps for up to 2 s, and a new stream then
waits that long before it pulls any audio; the bench keeps a silent low-latency
stream on each sink so tests do not pay that each time. Silence mixed with
silence stays digital silence, so the measurements are unaffected.

A microphone is a ``module-pipe-source`` whose FIFO the test writes. That source
has no clock of its own: it delivers audio only as fast as it is written, so
``PipeMic`` keeps writing (silence when there is nothing to say) paced at real
time for as long as it is open.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
ROOMS = ("roomA", "roomB")
RECORD_RATE = 16000


def _pactl(*args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(["pactl", *args], check=True, capture_output=True, text=True, env=env, timeout=10).stdout


def _server_env() -> dict[str, str]:
    """Where the running daemon listens (a temporary HOME hides the runtime directory the client would find)."""
    env: dict[str, str] = {}
    for line in _pactl("info").splitlines():
        if line.startswith("Server String:"):
            server = line.split(":", 1)[1].strip()
            env["PULSE_SERVER"] = f"unix:{server}" if server.startswith("/") else server
    cookie = Path.home() / ".config" / "pulse" / "cookie"
    if cookie.exists():
        env["PULSE_COOKIE"] = str(cookie)
    return env


def _ensure_daemon() -> bool:
    """Start PulseAudio unless it runs; True if this call started it."""
    if subprocess.run(["pulseaudio", "--check"], capture_output=True).returncode == 0:
        return False
    subprocess.run(
        ["pulseaudio", "-n", "--daemonize=yes", "--exit-idle-time=-1", "--load=module-native-protocol-unix"],
        check=True,
        capture_output=True,
        timeout=20,
    )
    for _ in range(100):
        if subprocess.run(["pactl", "info"], capture_output=True).returncode == 0:
            return True
        time.sleep(0.05)
    raise RuntimeError("pulseaudio started but pactl cannot reach it")


#: Exists while a daemon started by a bench runs.
_STARTED_MARK = Path(tempfile.gettempdir()) / "moderator-test-pulseaudio-started"


def _others_use(env: dict[str, str]) -> bool:
    """Whether another bench (a test run in parallel) still has devices on the daemon: then it must live on."""
    try:
        return "moderator_test_" in _pactl("list", "short", "modules", env=env)
    except subprocess.SubprocessError:
        return False


@dataclass
class PulseBench:
    """The running bench: the environment for subprocesses, and recorders of what each room heard."""

    home: Path
    env: dict[str, str]
    sinks: dict[str, str]
    """ALSA device name (``roomA``) to the PulseAudio sink behind it."""

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
    def pipe_mic(self, device: str = "micA") -> Iterator[PipeMic]:
        """A capture device named ``device`` (ALSA, for subprocesses started from now on) fed by the test."""
        tag = uuid.uuid4().hex[:8]
        fifo = self.home / f"{device}-{tag}.fifo"
        source = f"moderator_test_{tag}_{device}"
        module = _pactl(
            "load-module", "module-pipe-source", f"source_name={source}", f"file={fifo}", "format=s16le",
            f"rate={MIC_RATE}", "channels=1", env=self.env,
        ).strip()
        with (self.home / ".asoundrc").open("a") as rc:
            rc.write(f'pcm.{device} {{ type pulse; device {source}; hint {{ show on; description "{device}" }} }}\n')
        mic = PipeMic(device, source, fifo)
        try:
            yield mic
        finally:
            mic.close()
            with contextlib.suppress(subprocess.SubprocessError):
                _pactl("unload-module", module, env=self.env)

    def suspend(self, device: str, suspended: bool) -> None:
        """Suspend (or resume) the sink behind ``device``: its streams stop being pulled, like a lost device."""
        _pactl("suspend-sink", self.sinks[device], "1" if suspended else "0", env=self.env)


MIC_RATE = 16000
MIC_CHUNK = 320  # 20 ms


class PipeMic:
    """Writes a pipe source's FIFO in real time: what ``say`` queued, else silence, until ``close``."""

    def __init__(self, device: str, source: str, fifo: Path) -> None:
        self.device, self.source, self.fifo = device, source, fifo
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
            chunk = pending if pending is not None else silence
            try:
                os.write(self._fd, chunk.ljust(MIC_CHUNK * 2, b"\0"))
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


@contextlib.contextmanager
def pulse_bench() -> Iterator[PulseBench]:
    """Set up the bench (skipping only if PulseAudio is not installed) and tear it down."""
    missing = [tool for tool in ("pulseaudio", "pactl", "parec", "pacat") if shutil.which(tool) is None]
    if missing:
        pytest.skip(
            f"PulseAudio is not installed (missing {', '.join(missing)}); apt-get install pulseaudio "
            "pulseaudio-utils libasound2-plugins"
        )
    started = _ensure_daemon()
    if started:
        _STARTED_MARK.touch()
    env = {**os.environ, **_server_env()}
    tag = uuid.uuid4().hex[:8]
    sinks = {device: f"moderator_test_{tag}_{device}" for device in ROOMS}
    modules: list[str] = []
    keepalive: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory(prefix="pulse-bench-") as home:
        try:
            for sink in sinks.values():
                modules.append(
                    _pactl(
                        "load-module", "module-null-sink", f"sink_name={sink}", "rate=44100", "channels=2", env=env
                    ).strip()
                )
                keepalive.append(
                    subprocess.Popen(
                        [
                            "pacat",
                            "-d",
                            sink,
                            "--latency-msec=20",
                            "--format=s16le",
                            "--rate=44100",
                            "--channels=2",
                            "/dev/zero",
                        ],
                        stderr=subprocess.DEVNULL,
                        env=env,
                    )
                )
            asoundrc = "".join(
                f'pcm.{device} {{ type pulse; device {sink}; hint {{ show on; description "Room {device[-1]} '
                f'speaker" }} }}\n'
                for device, sink in sinks.items()
            )
            (Path(home) / ".asoundrc").write_text(asoundrc)
            env["HOME"] = home
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
            time.sleep(0.3)  # the keep-alive streams wake the sinks
            yield PulseBench(Path(home), env, sinks)
        finally:
            for proc in keepalive:
                proc.terminate()
                proc.wait(timeout=5)
            for module in modules:
                with contextlib.suppress(subprocess.SubprocessError):
                    _pactl("unload-module", module, env=env)
            # A daemon a bench started is stopped by the last bench to leave it (runs may overlap).
            if (started or _STARTED_MARK.exists()) and not _others_use(env):
                subprocess.run(["pulseaudio", "--kill"], capture_output=True)
                _STARTED_MARK.unlink(missing_ok=True)
