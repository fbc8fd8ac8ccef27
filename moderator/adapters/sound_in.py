"""Microphones through PortAudio (sounddevice): one input stream per room, or one shared; the callback only queues.

Each stream delivers fixed blocks of 0.1 s, mono. The callback stamps a block with
the clock time of its first sample and puts it on a queue; nothing else happens on
PortAudio's thread. ``read`` hands the queued chunks to the caller's thread, which
alone touches the game.

Time stamps count samples from an anchor, so consecutive chunks join exactly (the
endpointer treats a jump as a gap). The anchor is the clock time of the first block,
measured as ``clock.now()`` minus how long ago PortAudio says its first sample
reached the ADC; if the count drifts from that by more than ``RESYNC`` s (a device
whose crystal runs fast or slow, or a stream that stalled), it is re-anchored.
"""

from __future__ import annotations

import contextlib
import queue
import time
from collections.abc import Callable
from typing import Any

from moderator.adapters import portaudio
from moderator.adapters.audio_system import SYSTEM, AudioSystem
from moderator.adapters.pulse_routing import PulseDevice
from moderator.adapters.stream import WatchedStream
from moderator.errors import DeviceError
from moderator.ports import Clock, MicChunk

ROOMS = ("A", "B")
RATE = 16000
"""The rate asked for first: what the endpointer and the recognizers use."""
BLOCK = 0.05
"""Seconds per chunk."""
RESYNC = 0.25
"""Re-anchor a stream's time stamps when its sample count and the clock disagree by this much."""


def list_input_devices(system: AudioSystem = SYSTEM) -> list[dict[str, Any]]:
    """The devices with at least one input channel (see ``portaudio.list_devices``)."""
    return [dev for dev in portaudio.list_devices(system) if dev["inputs"] > 0]


class _Input(WatchedStream):
    """One PortAudio input stream; its callback runs in PortAudio's thread and only queues."""

    STALLED = "it delivered no audio for {seconds:g} s (device lost or muted?)"

    def __init__(self, mic: str | None, device: int, name: str, rate: int, clock: Clock,
                 out: queue.SimpleQueue[MicChunk], target: PulseDevice | None = None,
                 monotonic: Callable[[], float] = time.monotonic, system: AudioSystem = SYSTEM) -> None:
        super().__init__(monotonic, system)
        self.mic, self.device, self.name, self.rate = mic, device, name, rate
        self.target = target  # the Pulse source the stream is routed to through the device, if any
        self._clock, self._out = clock, out
        self._next: float | None = None  # clock time of the next block's first sample
        self.heard = False  # a block arrived since the failure
        self.overflows = 0  # blocks PortAudio dropped because we were late: audio lost
        self.overflow_reported = False

    @property
    def label(self) -> str:
        """How log messages name it: ``room A: microphone 3 'USB Mic'``."""
        where = "shared" if self.mic is None else f"room {self.mic}:"
        return f"{where} microphone {self.device} {self.name!r}"

    def open(self) -> None:
        """Open and start the stream."""
        sd = self.system.sounddevice()
        self._closing, self._next = False, None
        self._start(lambda: sd.InputStream(device=self.device, channels=1, samplerate=self.rate, dtype="float32",
                                           blocksize=round(self.rate * BLOCK), callback=self._callback,
                                           finished_callback=self._finished),
                    self.target, (sd.PortAudioError, ValueError),
                    f"input device (microphone) {self.device} {self.name!r}")
        self.last_callback = self.monotonic()

    def _callback(self, indata: Any, frames: int, time_info: Any, status: Any) -> None:
        if status and getattr(status, "input_overflow", False):
            self.overflows += 1
        now = self._clock.now()
        adc, current = getattr(time_info, "inputBufferAdcTime", 0.0), getattr(time_info, "currentTime", 0.0)
        age = current - adc if adc and current and 0 <= current - adc < 1.0 else frames / self.rate
        first = now - age
        if self._next is None or abs(self._next - first) > RESYNC:
            self._next = first
        t = self._next
        self._next = t + frames / self.rate
        self._out.put(MicChunk(self.mic, indata[:, 0].copy(), self.rate, t))
        self.heard = True
        self.last_callback = self.monotonic()

    def fail(self, reason: str) -> None:
        """Mark the stream failed (it may come back on its own, or be reopened)."""
        if self.failure is None:
            self.heard = False
        super().fail(reason)


class SoundDeviceIn:
    """The ``AudioIn`` port on real microphones: a device per room, or one shared by both rooms.

    A microphone that fails mid-game (its stream stops, or delivers nothing for ``stall_after`` s) is
    logged once through ``log`` (always from the thread calling ``read``), listed in ``failed_mics``, and
    reopened every ``retry_after`` s until audio flows again; meanwhile the game goes on by keyboard.
    """

    def __init__(
        self,
        clock: Clock,
        *,
        room_a: str | int | None = None,
        room_b: str | int | None = None,
        shared: str | int | None = None,
        rate: int = RATE,
        log: Callable[[str], None] = print,
        retry_after: float = 5.0,
        stall_after: float = 2.0,
        monotonic: Callable[[], float] = time.monotonic,
        system: AudioSystem = SYSTEM,
    ) -> None:
        """Open the streams.

        Args:
            room_a, room_b: the microphone of each room (index or name); None: that room has none.
            shared: one microphone for both rooms (the room follows from the names said); excludes the others.
            rate: the rate asked for; a device that refuses it records at its default rate.
            monotonic: the clock of the stall and retry timers (tests give a fake one).
            system: where PortAudio and the Pulse server come from (tests give fakes).

        Raises:
            DeviceError: a device is unknown, named for both rooms, or cannot open.
        """
        self.clock, self.log, self.retry_after, self.stall_after = clock, log, retry_after, stall_after
        self.monotonic, self.system = monotonic, system
        self._queue: queue.SimpleQueue[MicChunk] = queue.SimpleQueue()
        self._inputs: list[_Input] = []
        self._closed = False
        devices = portaudio.list_devices(system)
        if shared is not None:
            if room_a is not None or room_b is not None:
                raise DeviceError("a shared microphone hears both rooms; do not also name room microphones")
            chosen: dict[str | None, portaudio.Route] = {
                None: portaudio.resolve_route(shared, devices, direction="input", system=system)
            }
        else:
            specs = {"A": room_a, "B": room_b}
            chosen = {room: portaudio.resolve_route(spec, devices, direction="input", system=system)
                      for room, spec in specs.items() if spec is not None}
            if not chosen:
                raise DeviceError("no microphone given: name one per room, or one shared by both rooms")
            if len(set(chosen.values())) < len(chosen):
                raise DeviceError(
                    f"rooms A and B both name input device {portaudio.route_label(chosen['A'])}; one microphone "
                    "for both rooms is a shared microphone (the room then follows from the names said)"
                )
        for mic, (index, target) in chosen.items():
            dev = next(d for d in devices if d["index"] == index)
            name = dev["name"] if target is None else target.name
            self._inputs.append(
                _Input(mic, index, name, self._rate(index, dev, rate), clock, self._queue, target, monotonic, system)
            )
        self.mics: tuple[str | None, ...] = tuple(chosen)
        try:
            for inp in self._inputs:
                inp.open()
        except DeviceError:
            self.close()
            raise

    def _rate(self, index: int, dev: dict[str, Any], rate: int) -> int:
        sd = self.system.sounddevice()
        try:
            sd.check_input_settings(device=index, channels=1, samplerate=rate, dtype="float32")
        except (sd.PortAudioError, ValueError):
            return round(dev["samplerate"])  # the listener resamples
        return rate

    @property
    def failed_mics(self) -> set[str | None]:
        """The microphones that have failed and not come back."""
        return {inp.mic for inp in self._inputs if inp.failure is not None}

    @property
    def rates(self) -> dict[str | None, int]:
        """Each microphone's sample rate."""
        return {inp.mic: inp.rate for inp in self._inputs}

    def read(self, timeout: float = 0.0) -> list[MicChunk]:
        """The chunks heard since the last call, oldest first; waits up to ``timeout`` s for a first one."""
        if self._closed:
            return []
        self.poll()
        chunks: list[MicChunk] = []
        try:
            chunks.append(self._queue.get(timeout=timeout) if timeout > 0 else self._queue.get_nowait())
            while True:
                chunks.append(self._queue.get_nowait())
        except queue.Empty:
            pass
        return chunks

    def poll(self) -> None:
        """Notice, log and retry failed microphones (``read`` calls it)."""
        for inp in self._inputs:
            inp.check(self.stall_after)
            if inp.failure is not None and not inp.reported:
                inp.reported = True
                self.log(f"{inp.label} failed: {inp.failure}; type that room's commands until it comes back")
            if inp.failure is not None and inp.heard:
                inp.failure, inp.reported = None, False
                self.log(f"{inp.label} is back")
            elif inp.failure is not None and self.monotonic() - inp.failed_at >= self.retry_after:
                inp.close()
                with contextlib.suppress(DeviceError):
                    inp.open()
                inp.failed_at = self.monotonic()
            if inp.overflows and not inp.overflow_reported:
                inp.overflow_reported = True
                self.log(f"{inp.label} dropped audio (the game loop fell behind)")

    def close(self) -> None:
        """Stop and close every stream."""
        self._closed = True
        for inp in self._inputs:
            inp.close()
