"""PortAudio's devices (through sounddevice): loading the library, listing the devices, and finding the one a
room names by index, by name, or by its PulseAudio/PipeWire sink or source."""

from __future__ import annotations

from typing import Any

from moderator.adapters import pulse_routing
from moderator.adapters.audio_system import SYSTEM, AudioSystem
from moderator.adapters.pulse_routing import PulseDevice
from moderator.errors import DeviceError


def load_sounddevice() -> Any:
    """Import sounddevice late, so the CLI starts on machines without PortAudio."""
    from moderator.adapters import alsa_log

    try:
        with alsa_log.startup():  # alsa-lib's messages from now on are counted, not printed over the prompt
            import sounddevice
    except OSError as exc:  # sounddevice raises OSError when libportaudio is missing
        raise DeviceError(f"cannot load the PortAudio library ({exc}); install libportaudio2") from exc
    return sounddevice


def list_devices(system: AudioSystem = SYSTEM) -> list[dict[str, Any]]:
    """Every PortAudio device: index, name, host API, channel counts, default rate and default flags."""
    sd = system.sounddevice()
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


def list_output_devices(system: AudioSystem = SYSTEM) -> list[dict[str, Any]]:
    """The devices with at least one output channel (see ``list_devices``)."""
    return [dev for dev in list_devices(system) if dev["outputs"] > 0]


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


def resolve_route(spec: str | int, devices: list[dict[str, Any]] | None = None, *, direction: str = "output",
                  system: AudioSystem = SYSTEM) -> Route:
    """A PortAudio device (see ``resolve_device``), or else a PulseAudio/PipeWire sink (or ``direction="input"``:
    source) by name or description, reached through PortAudio's ``pulse`` device (``pulse_routing``).

    Raises:
        DeviceError: unknown (the message lists PortAudio's devices and the Pulse server's), ambiguous, or a
            Pulse device that PortAudio cannot reach.
    """
    devices = list_devices(system) if devices is None else devices
    try:
        return resolve_device(spec, devices, direction=direction), None
    except UnknownDeviceError as exc:
        if isinstance(spec, int) or str(spec).strip().isdigit():
            raise
        pulse = pulse_routing.list_devices(connect=system.pulse)
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
