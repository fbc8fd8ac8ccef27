"""One PortAudio output stream (sounddevice) and the clips it mixes, written sample-exact by its callback.

How a clip lands on time: ``schedule`` (from ``SoundDeviceOut.play(room, clip, at)``) reads the stream's clock
(``stream.time``) and the game clock (``clock.now()``) back to back; their
difference maps ``at`` onto the stream's timeline. The PortAudio callback knows
when the first frame of each buffer it fills will reach the DAC
(``time.outputBufferDacTime``, on the same timeline as ``stream.time``), so it
writes the clip's first sample at ``round((target - dac_time) * rate)`` frames
into the buffer that contains the target. A clip whose time has passed starts
at the first frame of the next buffer and plays whole. ``SoundDeviceOut.starts`` records, per
clip, the requested time and that estimated DAC time mapped back to the clock.

What was really played is kept apart from what was asked (``SoundDeviceOut.written``): the
callback copies every buffer it fills into a ring of the last seconds, per room,
and stamps it (``played_record.PlayedRecord``). A sound card plays a clip asked for "now" a buffer
later, and after an underrun everything after it later still (or sooner: a
recovering stream may drop what it had queued); the echo canceller needs the
moderator's voice where the room heard it, so its reference is read from there.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from moderator.adapters.audio_system import SYSTEM, AudioSystem
from moderator.adapters.played_record import PlayedRecord
from moderator.adapters.pulse_routing import PulseDevice
from moderator.adapters.stream import WatchedStream

if TYPE_CHECKING:
    from moderator.audio.clip import Clip
    from moderator.ports import Clock


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


class Output(WatchedStream):
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
        system: AudioSystem = SYSTEM,
    ) -> None:
        super().__init__(monotonic, system)
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
        sd = self.system.sounddevice()
        self._closing, self._frames, self.drain_until = False, 0, 0.0
        with self._lock:
            self._pending.clear()
            self._voices.clear()
        # A room's own device plays it on every channel (the first stands for all); split stereo, on its own.
        self.record = PlayedRecord(self.rate, tuple(range(len(self.rooms))), self.clock)
        self._start(lambda: sd.OutputStream(device=self.device, channels=self.channels, samplerate=self.rate,
                                            dtype="float32", latency=self.latency, callback=self._callback,
                                            finished_callback=self._finished),
                    self.target, (sd.PortAudioError, ValueError), f"output device {self.device} {self.name!r}")
        self.failure, self.reported, self.last_callback = None, False, self.monotonic()

    def flowing(self) -> bool:
        """Whether the device has pulled well past PortAudio's prefill, so its DAC times can be trusted."""
        if self.failure is not None or self.stream is None:
            return True
        return self._frames >= (self.stream.latency + 0.1) * self.rate

    def schedule(self, room: str, clip: Clip, at: float, clock: Clock, channel: int | None,
                 source: Clip | None = None) -> None:
        """Queue ``clip`` (already at the stream's rate; ``source`` as given to play) to start at clock time ``at``."""
        sd = self.system.sounddevice()
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
