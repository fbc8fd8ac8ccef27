"""PulseAudio (and PipeWire's Pulse server) sinks and sources by name, for speakers and microphones.

On a desktop that routes audio through PulseAudio or PipeWire, PortAudio sees only ``pulse`` and ``default``:
a room's speaker is a Pulse *sink* and its microphone a *source*, which PortAudio cannot name. This module lists
them through ``pulsectl`` (libpulse), and routes a stream opened on PortAudio's ``pulse`` device to one:

- At creation: ALSA's pulse plugin makes a new libpulse context for every PCM it opens, and libpulse takes its
  default sink and source from ``PULSE_SINK`` / ``PULSE_SOURCE`` then. ``opening`` sets them (and a tag,
  ``PULSE_PROP_moderator.route``) for the moment the stream opens, so the stream connects to its sink from its
  first sample, and stays there when the plugin re-creates it (it does on start, and on recovery from an
  underrun, when a stream moved afterwards would fall back to the default sink).
- Then it checks: the stream that carries the tag (or else the one this process opened meanwhile) must be on
  the target, and is moved there with ``pulsectl`` if it is not (an ALSA plugin that ignores those variables).
  A stream that cannot be found is an error: the sound would go wherever the server put it.

Without ``pulsectl``, or without a server to talk to, nothing here is used: ``connect`` answers None.
"""

from __future__ import annotations

import contextlib
import os
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from moderator.errors import DeviceError

#: The PortAudio devices that reach the Pulse server, in order of preference.
CARRIERS = ("pulse", "pipewire", "default")
#: How long to wait for a Pulse server before taking it as absent.
CONNECT_TIMEOUT = 1.0
#: The stream property that tags a stream while it opens.
TAG = "moderator.route"

#: For each direction: what the server calls such a device, and the environment variable that picks it.
_KINDS = {"output": ("sink", "PULSE_SINK"), "input": ("source", "PULSE_SOURCE")}

#: Streams open one at a time: the environment is the process's, and "the stream opened meanwhile" must be one.
_opening = threading.Lock()


@dataclass(frozen=True)
class PulseDevice:
    """A sink (a speaker) or a source (a microphone, or a sink's monitor) on the Pulse server."""

    kind: str  # "sink" or "source"
    index: int
    name: str
    description: str
    channels: int
    rate: int
    default: bool = False

    @property
    def label(self) -> str:
        """How messages name it: ``alsa_output.usb-foo (USB Speaker)``."""
        return f"{self.name} ({self.description})" if self.description and self.description != self.name else self.name


def connect() -> Any | None:
    """A ``pulsectl.Pulse`` connected to the server, or None without pulsectl or a reachable server.

    Never starts a server (no autospawn)."""
    try:
        import pulsectl
    except ImportError:
        return None
    try:
        pulse = pulsectl.Pulse("moderator", connect=False)
    except Exception:  # libpulse itself missing: pulsectl loads it here
        return None
    try:
        pulse.connect(autospawn=False, timeout=CONNECT_TIMEOUT)
    except Exception:
        pulse.close()
        return None
    return pulse


_connect = connect


@contextlib.contextmanager
def _session(pulse: Any | None = None, connect: Callable[[], Any | None] | None = None) -> Iterator[Any | None]:
    if pulse is not None:
        yield pulse
        return
    pulse = (connect or _connect)()
    try:
        yield pulse
    finally:
        if pulse is not None:
            pulse.close()


def list_devices(pulse: Any | None = None, connect: Callable[[], Any | None] | None = None) -> list[PulseDevice]:
    """The server's sinks, then its sources; empty without a server (``connect``: how to reach it, default
    ``connect``)."""
    with _session(pulse, connect) as p:
        if p is None:
            return []
        try:
            info = p.server_info()
            defaults = {"sink": info.default_sink_name, "source": info.default_source_name}
            found = [("sink", dev) for dev in p.sink_list()] + [("source", dev) for dev in p.source_list()]
        except Exception:  # the server went away meanwhile
            return []
        return [
            PulseDevice(kind, int(dev.index), dev.name, dev.description or "", int(dev.channel_count),
                        int(dev.sample_spec.rate), dev.name == defaults[kind])
            for kind, dev in found
        ]


def find(spec: str, devices: list[PulseDevice], direction: str) -> PulseDevice | None:
    """The sink (``direction="output"``) or source named ``spec``: by name or description, exactly (ignoring
    case), else as a unique substring of either; None if none matches.

    Raises:
        DeviceError: the name matches several.
    """
    kind = _KINDS[direction][0]
    text = str(spec).strip().lower()
    usable = [dev for dev in devices if dev.kind == kind]
    found = [dev for dev in usable if text in (dev.name.lower(), dev.description.lower())]
    found = found or [dev for dev in usable if text in dev.name.lower() or text in dev.description.lower()]
    if len(found) > 1:
        names = ", ".join(dev.name for dev in found)
        raise DeviceError(f"Pulse {kind} {spec!r} is ambiguous: it matches {names}; name it in full")
    return found[0] if found else None


def describe(devices: list[PulseDevice], direction: str) -> str:
    """``Pulse sinks: a (A speaker), b`` for error messages; empty without any."""
    kind = _KINDS[direction][0]
    names = [dev.label for dev in devices if dev.kind == kind]
    return f"Pulse {kind}s: {', '.join(names)}" if names else ""


def carrier(devices: list[dict[str, Any]], direction: str) -> dict[str, Any] | None:
    """The PortAudio device (see ``portaudio.list_devices``) through which streams reach the Pulse server."""
    channels = "outputs" if direction == "output" else "inputs"
    for name in CARRIERS:
        for dev in devices:
            if dev["name"].lower() == name and dev[channels] > 0:
                return dev
    return None


def _streams(pulse: Any, kind: str) -> list[Any]:
    return pulse.sink_input_list() if kind == "sink" else pulse.source_output_list()


@contextlib.contextmanager
def opening(target: PulseDevice, pulse: Any | None = None,
            connect: Callable[[], Any | None] | None = None) -> Iterator[None]:
    """Open one PortAudio stream on the carrier inside this block; it ends up on ``target`` (see the module).

    Raises:
        DeviceError: no server to route it with, or the stream is not to be found on it.
    """
    variable = "PULSE_SINK" if target.kind == "sink" else "PULSE_SOURCE"
    tag = uuid.uuid4().hex
    with _opening, _session(pulse, connect) as p:
        if p is None:
            raise DeviceError(f"cannot reach the Pulse server to play or record through {target.kind} {target.label}")
        before = {int(s.index) for s in _streams(p, target.kind)}
        saved = {key: os.environ.get(key) for key in (variable, f"PULSE_PROP_{TAG}")}
        os.environ[variable] = target.name
        os.environ[f"PULSE_PROP_{TAG}"] = tag
        try:
            yield
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        _settle(p, target, tag, before)


def _settle(pulse: Any, target: PulseDevice, tag: str, before: set[int]) -> None:
    """Find the stream just opened and move it to ``target`` unless it is there already."""
    streams = _streams(pulse, target.kind)
    mine = [s for s in streams if s.proplist.get(TAG) == tag]
    if not mine:
        pid = str(os.getpid())
        mine = [s for s in streams if int(s.index) not in before and s.proplist.get("application.process.id") == pid]
    if len(mine) != 1:
        what = "no stream" if not mine else f"{len(mine)} streams"
        raise DeviceError(
            f"cannot route to {target.kind} {target.label}: the Pulse server shows {what} just opened by this "
            "process (does PortAudio's 'pulse' device reach that server?)"
        )
    stream = mine[0]
    where = stream.sink if target.kind == "sink" else stream.source
    if int(where) != target.index:
        move = pulse.sink_input_move if target.kind == "sink" else pulse.source_output_move
        try:
            move(stream.index, target.index)
        except Exception as exc:
            raise DeviceError(f"cannot move the stream to {target.kind} {target.label}: {exc}") from exc
