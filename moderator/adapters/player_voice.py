"""Synthetic players: speak a scripted line with flite or espeak-ng (``flite:slt``, ``espeak-ng:en-us``)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from moderator.audio.clip import Clip
from moderator.errors import ScenarioError

FLITE_VOICES = ("slt", "rms", "awb", "kal")


def parse_voice(spec: str) -> tuple[str, str]:
    """ "flite:slt" -> ("flite", "slt"); checks the engine and, for flite, the voice."""
    engine, _, voice = spec.partition(":")
    if engine not in ("flite", "espeak-ng") or not voice:
        raise ScenarioError(f"voice {spec!r}: use flite:VOICE ({', '.join(FLITE_VOICES)}) or espeak-ng:VOICE "
                            "(e.g. espeak-ng:en-us)")
    if engine == "flite" and voice not in FLITE_VOICES:
        raise ScenarioError(f"flite has no voice {voice!r}; it has {', '.join(FLITE_VOICES)}")
    if shutil.which(engine) is None:
        raise ScenarioError(f"{engine} is not installed (Debian: apt-get install {engine}); "
                            "it speaks the players' lines")
    return engine, voice


def speak(text: str, spec: str) -> Clip:
    """The line as a player would say it."""
    engine, voice = parse_voice(spec)
    with tempfile.TemporaryDirectory(prefix="player-") as tmp:
        wav = Path(tmp) / "line.wav"
        if engine == "flite":
            cmd = ["flite", "-voice", voice, "-t", text, "-o", str(wav)]
        else:
            cmd = ["espeak-ng", "-v", voice, "-w", str(wav), "--", text]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        if done.returncode != 0 or not wav.exists():
            raise ScenarioError(f"{engine} could not say {text!r}: {done.stderr.strip() or done.returncode}")
        return Clip.read(wav)
