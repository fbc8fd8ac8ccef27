"""``moderator devices``: list the audio devices, so a host can tell which speaker and microphone is which room."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from moderator.env import Environment

if TYPE_CHECKING:
    from moderator.adapters.pulse_routing import PulseDevice


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``devices`` subcommand."""
    p = sub.add_parser(
        "devices",
        help="list audio output (and input) devices",
        description=(
            "List the audio devices PortAudio sees and, when a PulseAudio or PipeWire server runs, its sinks "
            "(speakers) and sources (microphones). Name a room's speaker (--room-a-out) or microphone "
            "(--room-a-in) by its number or by (part of) its name; a sink or source by (part of) its name or "
            "description. A stereo output can carry both rooms, "
            "room A left and room B right; one microphone can be shared by both rooms (--mic). "
            "'moderator listen' checks what the microphones hear."
        ),
    )
    p.add_argument("--json", action="store_true", help="print the devices as one line of JSON")
    p.set_defaults(func=run)


def render(devices: list[dict[str, Any]]) -> str:
    """The device table, defaults marked: ``>`` default output, ``<`` default input."""
    header = ("", "#", "name", "host API", "out", "in", "rate")
    rows = [header] + [
        (
            (">" if dev["default_output"] else "") + ("<" if dev["default_input"] else ""),
            str(dev["index"]),
            dev["name"],
            dev["hostapi"],
            str(dev["outputs"]),
            str(dev["inputs"]),
            f"{dev['samplerate']:g}",
        )
        for dev in devices
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    numeric = {1, 4, 5, 6}
    lines = [
        "  ".join(
            cell.rjust(widths[i]) if i in numeric else cell.ljust(widths[i]) for i, cell in enumerate(row)
        ).rstrip()
        for row in rows
    ]
    if not devices:
        lines.append("(no audio devices found)")
    lines.append("> default output, < default input; out/in: channels; a stereo output can play both rooms; "
                 "a device with 'in' channels can be a microphone")
    return "\n".join(lines) + "\n"


def render_pulse(devices: list[PulseDevice]) -> str:
    """The Pulse server's sinks and sources, defaults marked (``>`` sink, ``<`` source); empty without any."""
    if not devices:
        return ""
    header = ("", "Pulse", "name", "description", "ch", "rate")
    rows = [header] + [
        (
            (">" if dev.kind == "sink" else "<") if dev.default else "",
            dev.kind,
            dev.name,
            dev.description,
            str(dev.channels),
            str(dev.rate),
        )
        for dev in devices
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.rjust(widths[i]) if i >= 4 else cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip()
        for row in rows
    ]
    lines.append("Pulse sinks are speakers (--room-a-out), sources microphones (--room-a-in, --mic): name them by "
                 "name or description; the stream goes through PortAudio's 'pulse' device to that sink or source")
    return "\n".join(lines) + "\n"


def pulse_json(dev: PulseDevice) -> dict[str, Any]:
    """A Pulse sink or source as an entry of ``--json`` (after PortAudio's, with no index)."""
    sink = dev.kind == "sink"
    return {
        "index": None,
        "name": dev.name,
        "description": dev.description,
        "hostapi": "Pulse server",
        "pulse": dev.kind,
        "inputs": 0 if sink else dev.channels,
        "outputs": dev.channels if sink else 0,
        "samplerate": float(dev.rate),
        "default_input": dev.default and not sink,
        "default_output": dev.default and sink,
    }


def run(args: argparse.Namespace, env: Environment) -> int:
    """Print the device table (or JSON), and the Pulse server's sinks and sources if one answers."""
    from moderator.adapters import pulse_routing
    from moderator.adapters.portaudio import list_devices  # PortAudio loads only when asked for

    devices = list_devices(env.audio)
    pulse = pulse_routing.list_devices(connect=env.audio.pulse)
    if args.json:
        print(json.dumps(devices + [pulse_json(dev) for dev in pulse]), file=env.stdout)
    else:
        env.stdout.write(render(devices))
        if pulse:
            env.stdout.write("\n" + render_pulse(pulse))
    return 0
