"""Synthetic players: speak a scripted line with flite or espeak-ng (``flite:slt``, ``espeak-ng:en-us+f3``)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from moderator.audio.clip import Clip
from moderator.errors import ScenarioError

FLITE_VOICES = ("slt", "rms", "awb", "kal")
#: espeak-ng's options a spec may set after the voice: words per minute and pitch (0-99).
ESPEAK_OPTIONS = {"speed": ("-s", 80, 450), "pitch": ("-p", 0, 99)}


def parse_voice(spec: str) -> tuple[str, str]:
    """ "flite:slt" -> ("flite", "slt"); checks the engine and, for flite, the voice.

    An espeak-ng voice may carry options after a comma: ``espeak-ng:en-us+f3,speed=150,pitch=70``
    (the voice part, here ``en-us+f3``, is what ``espeak-ng -v`` takes); they are checked here too.
    """
    engine, _, voice = spec.partition(":")
    if engine not in ("flite", "espeak-ng") or not voice:
        raise ScenarioError(f"voice {spec!r}: use flite:VOICE ({', '.join(FLITE_VOICES)}) or espeak-ng:VOICE "
                            "(e.g. espeak-ng:en-us, espeak-ng:en-us+f3,speed=150,pitch=70)")
    if engine == "flite" and voice not in FLITE_VOICES:
        raise ScenarioError(f"flite has no voice {voice!r}; it has {', '.join(FLITE_VOICES)}")
    if engine == "espeak-ng":
        _espeak_options(voice)
    if shutil.which(engine) is None:
        raise ScenarioError(f"{engine} is not installed (Debian: apt-get install {engine}); "
                            "it speaks the players' lines")
    return engine, voice


def _espeak_options(voice: str) -> list[str]:
    """ "en-us+f3,speed=150,pitch=70" -> ["-v", "en-us+f3", "-s", "150", "-p", "70"]."""
    name, *options = voice.split(",")
    args = ["-v", name]
    for option in options:
        key, _, value = option.partition("=")
        if key not in ESPEAK_OPTIONS or not value.isdigit():
            raise ScenarioError(f"espeak-ng voice option {option!r}: use speed=WPM or pitch=0..99")
        flag, low, high = ESPEAK_OPTIONS[key]
        if not low <= int(value) <= high:
            raise ScenarioError(f"espeak-ng {key} {value} is out of range ({low}-{high})")
        args += [flag, value]
    return args


def speak(text: str, spec: str) -> Clip:
    """The line as a player would say it."""
    engine, voice = parse_voice(spec)
    with tempfile.TemporaryDirectory(prefix="player-") as tmp:
        wav = Path(tmp) / "line.wav"
        if engine == "flite":
            cmd = ["flite", "-voice", voice, "-t", text, "-o", str(wav)]
        else:
            cmd = ["espeak-ng", *_espeak_options(voice), "-w", str(wav), "--", text]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        if done.returncode != 0 or not wav.exists():
            raise ScenarioError(f"{engine} could not say {text!r}: {done.stderr.strip() or done.returncode}")
        return Clip.read(wav)
