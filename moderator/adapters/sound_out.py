"""Plays clips in each room through PortAudio (sounddevice): one device per room, or one stereo device split L/R.

How a clip lands on time: ``play(room, clip, at)`` reads the stream's clock
(``stream.time``) and the game clock (``clock.now()``) back to back; their
difference maps ``at`` onto the stream's timeline. The PortAudio callback knows
when the first frame of each buffer it fills will reach the DAC
(``time.outputBufferDacTime``, on the same timeline as ``stream.time``), so it
writes the clip's first sample at ``round((target - dac_time) * rate)`` frames
into the buffer that contains the target. A clip whose time has passed starts
at the first frame of the next buffer and plays whole. ``starts`` records, per
clip, the requested time and that estimated DAC time mapped back to the clock.

What was really played is kept apart from what was asked (``written``): the
callback copies every buffer it fills into a ring of the last seconds, per room,
and stamps it (``played_record.PlayedRecord``). A sound card plays a clip asked for "now" a buffer
later, and after an underrun everything after it later still (or sooner: a
recovering stream may drop what it had queued); the echo canceller needs the
moderator's voice where the room heard it, so its reference is read from there.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from moderator.adapters import pulse_routing
from moderator.adapters.played_record import RECORD_SECONDS as RECORD_SECONDS  # re-exported: tests read them here
from moderator.adapters.played_record import UNDERRUN_LOST as UNDERRUN_LOST
from moderator.adapters.played_record import PlayedRecord
from moderator.adapters.pulse_routing import PulseDevice
from moderator.adapters.stream import WatchedStream
from moderator.errors import DeviceError

if TYPE_CHECKING:
    from moderator.audio.clip import Clip
    from moderator.ports import Clock

ROOMS = ("A", "B")


def _sounddevice() -> Any:
    """Import sounddevice late, so the CLI starts on machines without PortAudio."""
    from moderator.adapters import alsa_log

    try:
        with alsa_log.startup():  # alsa-lib's messages from now on are counted, not printed over the prompt
            import sounddevice
    except OSError as exc:  # sounddevice raises OSError when libportaudio is missing
        raise DeviceError(f"cannot load the PortAudio library ({exc}); install libportaudio2") from exc
    return sounddevice


def list_devices() -> list[dict[str, Any]]:
    """Every PortAudio device: index, name, host API, channel counts, default rate and default flags."""
    sd = _sounddevice()
    try:
        devices = sd.query_devices()
        apis = sd.query_hostapis()
        default_in, default_out = sd.default.device
    except sd.PortAudioError as exc:
        raise DeviceError(f"cannot list audio devices: {exc}") from exc
    return [
        {
            "index": index,
            "name": dev["name"],
            "hostapi": apis[dev["hostapi"]]["name"],
            "inputs": dev["max_input_channels"],
            "outputs": dev["max_output_channels"],
            "samplerate": dev["default_samplerate"],
            "default_input": index == default_in,
            "default_output": index == default_out,
        }
        for index, dev in enumerate(devices)
    ]


def list_output_devices() -> list[dict[str, Any]]:
    """The devices with at least one output channel (see ``list_devices``)."""
    return [dev for dev in list_devices() if dev["outputs"] > 0]


#: For each direction: the channel count that must be non-zero, and how messages name such a device.
_DIRECTIONS = {"output": ("outputs", "output device"), "input": ("inputs", "input device (microphone)")}


class UnknownDeviceError(DeviceError):
    """No device has that number or name."""


def resolve_device(spec: str | int, devices: list[dict[str, Any]] | None = None, *, direction: str = "output") -> int:
    """The index of an output (or ``direction="input"``) PortAudio device named by index or by name.

    A name matches exactly (ignoring case) first, then as a unique substring.

    Raises:
        UnknownDeviceError: no such device; the message lists the devices that have channels that way.
        DeviceError: ambiguous or without channels that way; the message lists the devices that have.
    """
    channels, noun = _DIRECTIONS[direction]
    devices = list_devices() if devices is None else devices
    usable = [dev for dev in devices if dev[channels] > 0]
    available = ", ".join(f"{dev['index']} {dev['name']}" for dev in usable) or "none"
    text = str(spec).strip()
    if isinstance(spec, int) or text.isdigit():
        found = [dev for dev in devices if dev["index"] == int(text)]
    else:
        found = [dev for dev in usable if dev["name"].lower() == text.lower()]
        found = found or [dev for dev in usable if text.lower() in dev["name"].lower()]
    if not found:
        raise UnknownDeviceError(f"unknown {noun} {spec!r}; available: {available}")
    if len(found) > 1:
        names = ", ".join(f"{dev['index']} {dev['name']}" for dev in found)
        raise DeviceError(f"{direction} device {spec!r} is ambiguous: it matches {names}; name it by number")
    if found[0][channels] < 1:
        raise DeviceError(
            f"device {found[0]['index']} {found[0]['name']!r} has no {direction} channels; available: {available}"
        )
    return int(found[0]["index"])


Route = tuple[int, PulseDevice | None]
"""Where a stream goes: a PortAudio device, and the Pulse sink or source it is routed to through it (if any)."""


def resolve_route(spec: str | int, devices: list[dict[str, Any]] | None = None, *, direction: str = "output") -> Route:
    """A PortAudio device (see ``resolve_device``), or else a PulseAudio/PipeWire sink (or ``direction="input"``:
    source) by name or description, reached through PortAudio's ``pulse`` device (``pulse_routing``).

    Raises:
        DeviceError: unknown (the message lists PortAudio's devices and the Pulse server's), ambiguous, or a
            Pulse device that PortAudio cannot reach.
    """
    devices = list_devices() if devices is None else devices
    try:
        return resolve_device(spec, devices, direction=direction), None
    except UnknownDeviceError as exc:
        if isinstance(spec, int) or str(spec).strip().isdigit():
            raise
        pulse = pulse_routing.list_devices()
        target = pulse_routing.find(str(spec), pulse, direction)
        if target is None:
            listed = pulse_routing.describe(pulse, direction)
            raise UnknownDeviceError(f"{exc}; {listed}" if listed else str(exc)) from None
    carrier = pulse_routing.carrier(devices, direction)
    if carrier is None:
        names = " or ".join(repr(name) for name in pulse_routing.CARRIERS)
        raise DeviceError(f"{target.kind} {target.label} is on the Pulse server, but PortAudio has no {names} "
                          f"{direction} device to reach it (install libasound2-plugins)")
    return int(carrier["index"]), target


def route_label(route: Route) -> str:
    """How a message names a route's device: ``1`` or ``0 (sink roomA)``."""
    index, target = route
    return str(index) if target is None else f"{index} ({target.kind} {target.name})"


@dataclass(eq=False)
class _Voice:
    """One scheduled clip on one stream."""

    room: str
    samples: np.ndarray
    channel: int | None  # None: every channel of the stream
    at: float  # requested clock time
    target: float  # the same instant on the stream's timeline
    offset: float  # clock time minus stream time when scheduled
    source: Clip | None = None  # the clip given to play (what stop names)
    pos: int = 0  # samples already written
    started: float | None = None  # stream time of its first sample, once written
    stop: float | None = None  # stream time from which it is cut (barge-in)


class _Output(WatchedStream):
    """One PortAudio output stream and the voices it mixes; the callback runs in PortAudio's thread."""

    STALLED = "it pulled no audio for {seconds:g} s (device lost or suspended?)"

    def __init__(
        self,
        device: int,
        name: str,
        rooms: tuple[str, ...],
        channels: int,
        rate: int,
        latency: float,
        on_start: Callable[[str, float, float], None],
        clock: Clock,
        target: PulseDevice | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(monotonic)
        self.device, self.name, self.rooms = device, name, rooms
        self.target = target  # the Pulse sink the stream is routed to through the device, if any
        self.channels, self.rate, self.latency = channels, rate, latency
        self._on_start = on_start
        self.clock = clock
        self.record: PlayedRecord | None = None  # what the open stream wrote, per room
        self._lock = threading.Lock()
        self._pending: list[_Voice] = []
        self._voices: list[_Voice] = []
        self._frames = 0  # frames handed to PortAudio so far
        self.drain_until = 0.0  # stream time when the last sample written so far reaches the DAC
        self.underflows = 0  # buffers the device wanted before we had them ready: audible glitches
        self.underflow_reported = False

    @property
    def label(self) -> str:
        """How log messages name it: ``room A: output device 1 'roomA'``."""
        rooms = "rooms A and B" if len(self.rooms) > 1 else f"room {self.rooms[0]}"
        return f"{rooms}: output device {self.device} {self.name!r}"

    def open(self) -> None:
        """Open and start the stream."""
        sd = _sounddevice()
        self._closing, self._frames, self.drain_until = False, 0, 0.0
        with self._lock:
            self._pending.clear()
            self._voices.clear()
        # A room's own device plays it on every channel (the first stands for all); split stereo, on its own.
        self.record = PlayedRecord(self.rate, tuple(range(len(self.rooms))), self.clock)
        try:
            with pulse_routing.opening(self.target) if self.target else contextlib.nullcontext():
                self.stream = sd.OutputStream(
                    device=self.device,
                    channels=self.channels,
                    samplerate=self.rate,
                    dtype="float32",
                    latency=self.latency,
                    callback=self._callback,
                    finished_callback=self._finished,
                )
                self.stream.start()
        except (sd.PortAudioError, ValueError) as exc:
            self.stream = None
            raise DeviceError(f"cannot open output device {self.device} {self.name!r}: {exc}") from exc
        except DeviceError:  # opened, but not to be routed to its sink
            self.close()
            raise
        self.failure, self.reported, self.last_callback = None, False, self.monotonic()

    def flowing(self) -> bool:
        """Whether the device has pulled well past PortAudio's prefill, so its DAC times can be trusted."""
        if self.failure is not None or self.stream is None:
            return True
        return self._frames >= (self.stream.latency + 0.1) * self.rate

    def schedule(self, room: str, clip: Clip, at: float, clock: Clock, channel: int | None,
                 source: Clip | None = None) -> None:
        """Queue ``clip`` (already at the stream's rate; ``source`` as given to play) to start at clock time ``at``."""
        sd = _sounddevice()
        try:
            stream_now = self.stream.time
        except (sd.PortAudioError, AttributeError) as exc:
            self.fail(f"stream clock unavailable: {exc}")
            return
        offset = clock.now() - stream_now
        voice = _Voice(room, clip.samples.astype(np.float32, copy=False), channel, at, at - offset, offset,
                       source=source)
        with self._lock:
            self._pending.append(voice)

    def cut(self, room: str, source: Clip, at: float) -> None:
        """Cut the voices of ``source`` in ``room`` from clock time ``at``; the callback stops them on that sample
        (or at its next buffer, if that is past). Thread-safe: only marks them, under the lock."""
        with self._lock:
            for voice in (*self._pending, *self._voices):
                if voice.room == room and voice.source is source:
                    stop = at - voice.offset
                    voice.stop = stop if voice.stop is None else min(voice.stop, stop)

    def _callback(self, outdata: np.ndarray, frames: int, time_info: Any, status: Any) -> None:
        outdata.fill(0)
        underflow = bool(status and getattr(status, "output_underflow", False))
        if underflow:
            self.underflows += 1
        dac = time_info.outputBufferDacTime or (time_info.currentTime + self.latency)  # 0: not reported
        with self._lock:
            self._voices.extend(self._pending)
            self._pending.clear()
            voices = list(self._voices)
        done = set()
        for voice in voices:
            if voice.started is None:
                at = round((voice.target - dac) * self.rate)
                if voice.stop is not None and voice.stop <= max(voice.target, dac):
                    done.add(voice)  # cut before it began: never heard
                    continue
                if at >= frames:
                    continue
                at = max(0, at)
                voice.started = dac + at / self.rate
                self._on_start(voice.room, voice.at, voice.offset + voice.started)
            else:
                at = 0
            end = len(voice.samples)
            if voice.stop is not None:  # barge-in: nothing from the stop sample on (or from now, if past)
                end = min(end, max(voice.pos, round((voice.stop - voice.started) * self.rate)))
            n = max(0, min(frames - at, end - voice.pos))
            chunk = voice.samples[voice.pos : voice.pos + n]
            if voice.channel is None:
                outdata[at : at + n] += chunk[:, None]
            else:
                outdata[at : at + n, voice.channel] += chunk
            voice.pos += n
            if n:
                self.drain_until = max(self.drain_until, dac + (at + n) / self.rate)
            if voice.pos >= end:
                done.add(voice)
        if done:
            with self._lock:
                self._voices = [v for v in self._voices if v not in done]
        np.clip(outdata, -1.0, 1.0, out=outdata)
        record = self.record
        if record is not None:
            record.write(outdata, frames, dac, time_info.currentTime, underflow)
        self._frames += frames
        self.last_callback = self.monotonic()

    def fail(self, reason: str) -> None:
        """Mark the stream failed and drop its voices; it is closed on the next reopen or close."""
        super().fail(reason)
        with self._lock:
            self._pending.clear()
            self._voices.clear()

    def busy(self) -> bool:
        """Whether voices are queued or playing."""
        with self._lock:
            return bool(self._pending or self._voices)

    def drained(self) -> bool:
        """Whether everything written has reached the DAC (PortAudio's ALSA stop may drop the last buffer)."""
        try:
            return self.failure is not None or self.stream is None or self.stream.time >= self.drain_until
        except Exception:  # a lost device: nothing more will drain
            return True


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

        Raises:
            DeviceError: a device is unknown, shared by both rooms without split stereo, or cannot open.
        """
        self.clock, self.log, self.retry_after, self.stall_after = clock, log, retry_after, stall_after
        self.monotonic, self.sleep = monotonic, sleep
        self._starts: list[tuple[str, float, float]] = []
        self._starts_lock = threading.Lock()
        self._routes: dict[str, tuple[_Output, int | None]] = {}
        self._outputs: list[_Output] = []
        devices = list_devices()
        if split_stereo is not None:
            if room_a is not None or room_b is not None:
                raise DeviceError("split stereo plays both rooms on one device; do not also name room devices")
            route = resolve_route(split_stereo, devices)
            out = self._output(devices, route, ("A", "B"), rate, latency, stereo=True)
            self._routes = {"A": (out, 0), "B": (out, 1)}
        else:
            specs = {"A": room_a, "B": room_b}
            chosen = {room: resolve_route(spec, devices) for room, spec in specs.items() if spec is not None}
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
    ) -> _Output:
        index, target = route
        dev = next(d for d in devices if d["index"] == index)
        name, outputs = (dev["name"], dev["outputs"]) if target is None else (target.name, target.channels)
        if stereo and outputs < 2:
            raise DeviceError(f"split stereo needs two output channels; device {route_label(route)} "
                              f"{name!r} has {outputs}")
        channels = 2 if stereo else min(2, outputs)
        rate = self._rate(index, dev, channels, rate)
        out = _Output(index, name, rooms, channels, rate, latency, self._record_start, self.clock, target,
                      self.monotonic)
        self._outputs.append(out)
        return out

    def _rate(self, index: int, dev: dict[str, Any], channels: int, rate: int | None) -> int:
        default = round(dev["samplerate"])
        if rate is None or rate == default:
            return default
        sd = _sounddevice()
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

    def _reopen(self, out: _Output) -> bool:
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
