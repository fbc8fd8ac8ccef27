"""``moderator say``: speak a sentence in one room, to test the speakers."""

from __future__ import annotations

import argparse

from moderator.adapters.clock import SystemClock
from moderator.env import Environment
from moderator.errors import UsageError
from moderator.outputs import add_speech_options, device_options
from moderator.speaking import voice_settings
from moderator.speech.catalog import load_catalog
from moderator.voice.cache import RenderCache, default_cache_dir


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``say`` subcommand."""
    p = sub.add_parser("say", help="speak a sentence in room A, B or both (a speaker test)",
                       description="Speak TEXT through a room's speaker, e.g. "
                       "moderator say 'Testing room A' --room A --room-a-out roomA --room-b-out roomB")
    p.add_argument("text", help="what to say")
    p.add_argument("--room", choices=("A", "B", "both"), default="both", help="which room hears it (default both)")
    add_speech_options(p, devices=True)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, env: Environment) -> int:
    """Render the text and play it; return when it has been played."""
    clock = SystemClock()
    out = env.open_output(device_options(args), clock, log=env.log, system=env.audio)
    if out is None:
        raise UsageError("say where: --room-a-out/--room-b-out DEVICE, --split-stereo DEVICE, or --audio-out DIR "
                          "(list devices with 'moderator devices')")
    synth = env.make_synthesizer(args.tts, warn=lambda msg: env.log(f"warning: {msg}"))
    try:
        clip = RenderCache(args.cache_dir or default_cache_dir(), synth).get(
            args.text, voice_settings(load_catalog(args.lang)))
        now = clock.now()
        for room in ("A", "B") if args.room == "both" else (args.room,):
            out.play(room, clip, now)
    finally:
        out.close()
        synth.close()
    print(f"said in {'both rooms' if args.room == 'both' else 'room ' + args.room} ({clip.duration:.1f} s)",
          file=env.stdout)
    return 0
