"""PulseAudio null sinks for real-time audio runs: ALSA devices ``roomA``/``roomB`` that nothing can leak into.

``pulse_bench()`` starts a PulseAudio daemon if none runs, loads two null sinks
with unique names (so parallel runs and other programs cannot leak sound into
them), and writes a temporary HOME whose ``.asoundrc`` names them ``roomA`` and
``roomB``. PortAudio reads the ALSA configuration when ``sounddevice`` is
imported, so the code that plays runs in a subprocess with ``bench.env``.

A null sink that nothing plays into sleeps for up to 2 s, and a new stream then
waits that long before it pulls any audio; the bench keeps a silent low-latency
stream on each sink so runs do not pay that each time. Silence mixed with
silence stays digital silence, so the measurements are unaffected.

The benchmarks (``benchmarks.latency``, ``benchmarks.announce_latency``) use it
as is; the tests' ``tests/pulse.py`` adds recorders and microphones on top.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROOMS = ("roomA", "roomB")
#: The command-line tools the bench runs.
TOOLS = ("pulseaudio", "pactl", "parec", "pacat")


class PulseMissing(RuntimeError):
    """PulseAudio's tools are not installed."""


def missing_tools() -> list[str]:
    """Those of ``TOOLS`` that are not installed."""
    return [tool for tool in TOOLS if shutil.which(tool) is None]


def pactl(*args: str, env: dict[str, str] | None = None) -> str:
    """Run ``pactl`` and return what it printed."""
    return subprocess.run(["pactl", *args], check=True, capture_output=True, text=True, env=env, timeout=10).stdout


def _server_env() -> dict[str, str]:
    """Where the running daemon listens (a temporary HOME hides the runtime directory the client would find)."""
    env: dict[str, str] = {}
    for line in pactl("info").splitlines():
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
    """Whether another bench (a run in parallel) still has devices on the daemon: then it must live on."""
    try:
        return "moderator_test_" in pactl("list", "short", "modules", env=env)
    except subprocess.SubprocessError:
        return False


@dataclass
class NullSinks:
    """The running bench: a HOME with the ``.asoundrc``, the environment for subprocesses, and the sinks."""

    home: Path
    env: dict[str, str]
    sinks: dict[str, str]
    """ALSA device name (``roomA``) to the PulseAudio sink behind it."""


@contextlib.contextmanager
def pulse_bench() -> Iterator[NullSinks]:
    """Set up the null sinks and tear them down.

    Raises:
        PulseMissing: PulseAudio's tools are not installed.
    """
    missing = missing_tools()
    if missing:
        raise PulseMissing(
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
                    pactl(
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
            yield NullSinks(Path(home), env, sinks)
        finally:
            for proc in keepalive:
                proc.terminate()
                proc.wait(timeout=5)
            for module in modules:
                with contextlib.suppress(subprocess.SubprocessError):
                    pactl("unload-module", module, env=env)
            # A daemon a bench started is stopped by the last bench to leave it (runs may overlap).
            if (started or _STARTED_MARK.exists()) and not _others_use(env):
                subprocess.run(["pulseaudio", "--kill"], capture_output=True)
                _STARTED_MARK.unlink(missing_ok=True)
