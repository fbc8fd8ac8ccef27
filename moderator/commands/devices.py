"""``moderator devices``: list the audio devices, so a host can tell which speaker and microphone is which room."""

from __future__ import annotations

import argparse
import json
from typing import Any

from moderator.env import Environment


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``devices`` subcommand."""
    p = sub.add_parser(
        "devices",
        help="list audio output (and input) devices",
        description=(
            "List the audio devices PortAudio sees. Name a room's speaker (--room-a-out) or microphone "
            "(--room-a-in) by its number or by (part of) its name. A stereo output can carry both rooms, "
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


def run(args: argparse.Namespace, env: Environment) -> int:
    """Print the device table (or JSON)."""
    from moderator.adapters.sound_out import list_devices  # PortAudio loads only when asked for

    devices = list_devices()
    if args.json:
        print(json.dumps(devices), file=env.stdout)
    else:
        env.stdout.write(render(devices))
    return 0
