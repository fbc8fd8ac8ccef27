"""Plays clips in each room through PortAudio (sounddevice): one device per room, or one stereo device split L/R.

How a clip lands on time, and what was really played: see ``output_stream``, the stream and its callback.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from moderator.adapters.audio_system import SYSTEM, AudioSystem
from moderator.adapters.output_stream import Output
from moderator.adapters.played_record import RECORD_SECONDS as RECORD_SECONDS  # re-exported: tests read them here
from moderator.adapters.played_record import UNDERRUN_LOST as UNDERRUN_LOST
from moderator.adapters.portaudio import Route, list_devices, resolve_route, route_label
from moderator.errors import DeviceError

if TYPE_CHECKING:
    from moderator.audio.clip import Clip
    from moderator.ports import Clock

ROOMS = ("A", "B")


class SoundDeviceOut:
    """The ``AudioOut`` port on real speakers: a device per room, or one stereo device with A left, B right.

    A device that fails mid-game is logged once (through ``log``, always from the thread calling
    ``play``/``poll``/``close``), its room goes quiet, and it is reopened on a later ``play`` after
    ``retry_after`` seconds. The game and its clock go on regardless.
    """

    def __init__(
        self,
        clock: Clock,
        *,
        room_a: str | int | None = None,
        room_b: str | int | None = None,
        split_stereo: str | int | None = None,
        rate: int | None = None,
        latency: float = 0.05,
        log: Callable[[str], None] = print,
        retry_after: float = 5.0,
        warm_up: float = 3.0,
        stall_after: float = 2.0,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        system: AudioSystem = SYSTEM,
    ) -> None:
        """Open the streams.

        Args:
            room_a, room_b: the device of each room (index or name); None: that room has no speaker.
            split_stereo: one stereo device for both rooms (A left, B right); excludes room_a/room_b.
            rate: the stream rate; None (or a rate the device refuses): the device's default rate.
            latency: the PortAudio buffer in seconds; a clip asked for "now" starts about this late.
            retry_after: seconds between a failure and the next attempt to reopen the device.
            warm_up: the longest wait at start for audio to flow.
            stall_after: a stream that pulls no audio for this long counts as a lost device.
            monotonic, sleep: the clock of those timeouts, and the wait in the warm-up and ``close`` (tests
                give fakes).
            system: where PortAudio and the Pulse server come from (tests give fakes).

        Raises:
            DeviceError: a device is unknown, shared by both rooms without split stereo, or cannot open.
        """
        self.clock, self.log, self.retry_after, self.stall_after = clock, log, retry_after, stall_after
        self.monotonic, self.sleep, self.system = monotonic, sleep, system
        self._starts: list[tuple[str, float, float]] = []
        self._starts_lock = threading.Lock()
        self._routes: dict[str, tuple[Output, int | None]] = {}
        self._outputs: list[Output] = []
        devices = list_devices(system)
        if split_stereo is not None:
            if room_a is not None or room_b is not None:
                raise DeviceError("split stereo plays both rooms on one device; do not also name room devices")
            route = resolve_route(split_stereo, devices, system=system)
            out = self._output(devices, route, ("A", "B"), rate, latency, stereo=True)
            self._routes = {"A": (out, 0), "B": (out, 1)}
        else:
            specs = {"A": room_a, "B": room_b}
            chosen = {room: resolve_route(spec, devices, system=system) for room, spec in specs.items()
                      if spec is not None}
            if not chosen:
                raise DeviceError("no output device given: name one per room, or one for split stereo")
            if len(set(chosen.values())) < len(chosen):
                raise DeviceError(
                    f"rooms A and B both name output device {route_label(chosen['A'])}; a device plays one "
                    "room, or use split stereo (A on the left, B on the right)"
                )
            for room, route in chosen.items():
                self._routes[room] = (self._output(devices, route, (room,), rate, latency, stereo=False), None)
            for room in ROOMS:
                if room not in chosen:
                    log(f"room {room} has no speaker: its announcements are not played")
        try:
            for out in self._outputs:
                out.open()
        except DeviceError:
            self.close()
            raise
        # Some sinks (PulseAudio's null sink, Bluetooth) pull no audio for a while after a stream opens,
        # and the DAC times they report meanwhile are wrong: wait for them, in parallel, within reason.
        deadline = monotonic() + warm_up
        while not all(out.flowing() for out in self._outputs) and monotonic() < deadline:
            sleep(0.01)

    def _output(
        self,
        devices: list[dict[str, Any]],
        route: Route,
        rooms: tuple[str, ...],
        rate: int | None,
        latency: float,
        *,
        stereo: bool,
    ) -> Output:
        index, target = route
        dev = next(d for d in devices if d["index"] == index)
        name, outputs = (dev["name"], dev["outputs"]) if target is None else (target.name, target.channels)
        if stereo and outputs < 2:
            raise DeviceError(f"split stereo needs two output channels; device {route_label(route)} "
                              f"{name!r} has {outputs}")
        channels = 2 if stereo else min(2, outputs)
        rate = self._rate(index, dev, channels, rate)
        out = Output(index, name, rooms, channels, rate, latency, self._record_start, self.clock, target,
                     self.monotonic, self.system)
        self._outputs.append(out)
        return out

    def _rate(self, index: int, dev: dict[str, Any], channels: int, rate: int | None) -> int:
        default = round(dev["samplerate"])
        if rate is None or rate == default:
            return default
        sd = self.system.sounddevice()
        try:
            sd.check_output_settings(device=index, channels=channels, samplerate=rate, dtype="float32")
        except (sd.PortAudioError, ValueError):
            self.log(f"device {index} {dev['name']!r} refuses {rate} Hz; using its default {default} Hz")
            return default
        return rate

    def _record_start(self, room: str, at: float, started: float) -> None:
        with self._starts_lock:
            self._starts.append((room, at, started))

    @property
    def starts(self) -> list[tuple[str, float, float]]:
        """Per clip started so far: (room, requested clock time, estimated clock time of its first DAC sample)."""
        with self._starts_lock:
            return list(self._starts)

    def written(self, room: str, t0: float, t1: float) -> list[tuple[float, int, np.ndarray]]:
        """What the device really played in ``room`` between clock times ``t0`` and ``t1``, as the callback
        wrote it: runs of samples (clock time of the first, rate, samples), the latest ``RECORD_SECONDS``
        only. Nothing for a room without a speaker, and nothing where the device played nothing (before it
        started, in an underrun's gap, while it was lost)."""
        route = self._routes.get(room)
        record = route[0].record if route is not None else None
        if record is None:
            return []
        out = route[0]
        return [(t, out.rate, samples) for t, samples in record.pieces(out.rooms.index(room), t0, t1)]

    @property
    def failed_rooms(self) -> set[str]:
        """The rooms whose device has failed and not been reopened."""
        return {room for room, (out, _) in self._routes.items() if out.failure is not None}

    def play(self, room: str, clip: Clip, at: float) -> None:
        """Start ``clip`` in room ``A`` or ``B`` at clock time ``at`` (now, if past); mixed with what plays."""
        if room not in ROOMS:
            raise ValueError(f"room must be 'A' or 'B', not {room!r}")
        self.poll()
        route = self._routes.get(room)
        if route is None:
            return
        out, channel = route
        if out.failure is not None and not self._reopen(out):
            return
        out.schedule(room, clip.resample(out.rate), at, self.clock, channel, source=clip)

    def stop(self, room: str, clip: Clip, at: float) -> None:
        """Cut ``clip`` (as given to ``play``) short in ``room`` from clock time ``at`` (now, if past): barge-in.
        Nothing happens if it has already ended; other clips play on. Never blocks."""
        route = self._routes.get(room)
        if route is not None:
            route[0].cut(room, clip, at)

    def poll(self) -> None:
        """Log device failures noticed since the last call (``play`` calls it; a game loop may too)."""
        for out in self._outputs:
            out.check(self.stall_after)
            if out.failure is not None and not out.reported:
                out.reported = True
                self.log(f"{out.label} failed: {out.failure}; silent until it comes back")
            if out.underflows and not out.underflow_reported:
                out.underflow_reported = True
                self.log(f"{out.label} ran dry (audio glitch); a larger latency may help")

    def _reopen(self, out: Output) -> bool:
        if self.monotonic() - out.failed_at < self.retry_after:
            return False
        out.close()
        try:
            out.open()  # play never blocks: the first clips may start late instead
        except DeviceError:
            out.failed_at = self.monotonic()
            return False
        self.log(f"{out.label} is back")
        return True

    def close(self, timeout: float = 30.0) -> None:
        """Let queued clips finish (at most ``timeout`` s), then stop and close every stream."""
        deadline = self.monotonic() + timeout
        while self.monotonic() < deadline:
            self.poll()
            if not any(out.busy() or not out.drained() for out in self._outputs if out.failure is None):
                break
            self.sleep(0.01)
        for out in self._outputs:
            out.close()
