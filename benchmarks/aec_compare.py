"""Echo cancellers compared: echo removed, commands recognized over the moderator's speech, and cost.

Run:  .venv/bin/python -m benchmarks.aec_compare [--json FILE] [--out docs/benchmarks/aec.md] [--commands N]

Every candidate whose library is installed is measured; the others are listed as missing. The project
depends on none but Speex's (the system's libspeexdsp); the others come from ``pip install`` of
ALTERNATIVES (speexaec and aec-audio-processing build from source). All of them take ~10-15 min on
2 cores, Speex alone ~3 min.

The moderator's speech is espeak-ng, the players are flite voices, and the room is synthetic: the
moderator's audio delayed 20-60 ms (the residual after the set-up chirp), through an exponentially
decaying impulse response (RT60 0.3 s), under a -60 dBFS microphone hiss. Each (voice, condition) is one
long stream with the canceller running through it, as in a game: 4 s of echo alone, then commands
1.5-2.5 s apart while the moderator keeps talking. Conditions: signal-to-echo ratio 0 dB and -6 dB (the
command's RMS over its active part against the echo's over the same samples), and *silent*: the
moderator pauses around each command, which the canceller must then pass through untouched.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import multiprocessing
import os
import platform
import random
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from moderator.adapters.player_voice import speak
from moderator.audio.mix import MIC_HISS_DBFS
from moderator.audio.mix import hiss as mic_hiss
from moderator.audio.pcm import from_pcm16, to_int16

ROOT = Path(__file__).resolve().parents[1]
RATE = 16000
SEED = 0
VOICES = ("slt", "rms", "awb", "kal")
SERS = (0.0, -6.0)
ROSTER = ("Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi")
MODERATOR = (
    "30 seconds left.",
    "Room A, I heard Bob. Say yes to lock, or no to choose again.",
    "Round 2. 3 minutes. Each room sends 1 hostage.",
    "Leaders, please exchange your hostages now.",
    "Room B, your leader is Carol.",
    "One minute left in this round.",
    "Hostages, go to the other room.",
    "Time is up. Leaders, stop talking.",
    "Room A has chosen Dave and Erin.",
    "The game is paused. Say resume when you are ready.",
)
ECHO_DBFS = -30.0
"""The echo's RMS over the moderator's speech: a speaker a few metres from the microphone."""
HISS_DBFS = MIC_HISS_DBFS
RT60 = 0.3
DRR = 0.0
"""Direct-to-reverberant ratio of the echo path in dB: a speaker a metre or two from the microphone."""
LEAD = 4.0
"""Seconds of echo alone at the start of each stream."""
SETTLE = 2.0
"""ERLE counts from here on: the canceller has had this long to adapt."""
ALTERNATIVES = "pywebrtc-audio livekit aec-audio-processing speexaec pyaec"
PAD = (0.5, 0.5)
"""Audio before and after a command handed to the recognizer, as the endpointer would."""


# -- the candidates -------------------------------------------------------------------------------------


def _i16(x: np.ndarray) -> np.ndarray:
    return to_int16(x, rounded=True)


def _f32(x: Any) -> np.ndarray:
    return from_pcm16(np.asarray(x, dtype=np.int16))


class _Framed:
    """Feeds a per-frame canceller (int16 frames of ``frame`` samples) from whole chunks."""

    frame = 160

    def process(self, mic: np.ndarray, reference: np.ndarray) -> np.ndarray:
        m, r, f = _i16(mic), _i16(reference), self.frame
        return _f32(np.concatenate([self.step(m[i:i + f], r[i:i + f]) for i in range(0, len(m), f)]))

    def step(self, mic: np.ndarray, ref: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class _LiveKit(_Framed):
    """WebRTC's current AEC3 inside the LiveKit SDK's FFI library (pip livekit)."""

    def __init__(self, noise_suppression: bool = False) -> None:
        from livekit import rtc

        self.rtc = rtc
        self.apm = rtc.AudioProcessingModule(echo_cancellation=True, noise_suppression=noise_suppression,
                                             high_pass_filter=True)

    def step(self, mic: np.ndarray, ref: np.ndarray) -> np.ndarray:
        self.apm.process_reverse_stream(self.rtc.AudioFrame(ref.tobytes(), RATE, 1, len(ref)))
        frame = self.rtc.AudioFrame(bytearray(mic.tobytes()), RATE, 1, len(mic))
        self.apm.set_stream_delay_ms(0)  # must be set before every capture frame; 0: AEC3 finds the delay
        self.apm.process_stream(frame)
        return np.frombuffer(frame.data, np.int16)


class _AecAudioProcessing(_Framed):
    """libwebrtc-audio-processing 2 (AEC3) through the aec-audio-processing package (sdist only)."""

    def __init__(self) -> None:
        from aec_audio_processing import AudioProcessor

        self.ap = AudioProcessor(enable_aec=True, enable_ns=False, enable_agc=False, enable_vad=False)
        self.ap.set_stream_format(RATE, 1)
        self.ap.set_reverse_stream_format(RATE, 1)
        self.ap.set_stream_delay(0)

    def step(self, mic: np.ndarray, ref: np.ndarray) -> np.ndarray:
        self.ap.process_reverse_stream(ref.tobytes())
        return np.frombuffer(self.ap.process_stream(mic.tobytes()), np.int16)


class _SpeexAec(_Framed):
    """The same libspeexdsp through speexaec (Cython; sdist only: it builds against libspeexdsp-dev)."""

    def __init__(self, tail: int = 4096) -> None:
        from speexaec import EchoCanceller

        self.ec = EchoCanceller(self.frame, tail, RATE)

    def step(self, mic: np.ndarray, ref: np.ndarray) -> np.ndarray:
        return self.ec.process(mic, ref)


class _PyAec(_Framed):
    """aec-rs (speexdsp's echo canceller built from Rust) through pyaec."""

    def __init__(self, tail: int = 4096, preprocess: bool = False) -> None:
        from pyaec import Aec

        self.ec = Aec(self.frame, tail, RATE, preprocess)

    def step(self, mic: np.ndarray, ref: np.ndarray) -> np.ndarray:
        return np.array(self.ec.cancel_echo(mic.tolist(), ref.tolist()), np.int16)


def _adapter(name: str, **options: Any) -> Callable[[], Any]:
    def make() -> Any:
        from moderator.adapters.echo import make_echo_canceller

        return make_echo_canceller(name, **options)
    return make


#: name -> (what to install, the module to look for or None to try making one, factory). The adapters of
#: moderator.adapters.echo come first.
CANDIDATES: dict[str, tuple[str, str | None, Callable[[], Any]]] = {
    "speex": ("apt-get install libspeexdsp1", None, _adapter("speex")),
    "webrtc": ("pip install pywebrtc-audio", "pywebrtc_audio", _adapter("webrtc")),
    "webrtc+ns": ("pip install pywebrtc-audio", "pywebrtc_audio", _adapter("webrtc", noise_suppression=True)),
    "livekit": ("pip install livekit", "livekit.rtc", _LiveKit),
    "livekit+ns": ("pip install livekit", "livekit.rtc", lambda: _LiveKit(noise_suppression=True)),
    "aec-audio-processing": ("pip install aec-audio-processing", "aec_audio_processing", _AecAudioProcessing),
    "speexaec": ("pip install speexaec", "speexaec", _SpeexAec),
    "pyaec": ("pip install pyaec", "pyaec", _PyAec),
    "pyaec+preprocess": ("pip install pyaec", "pyaec", lambda: _PyAec(preprocess=True)),
}


# -- the material ---------------------------------------------------------------------------------------


@cache
def _said(text: str, voice: str) -> np.ndarray:
    return speak(text, voice).resample(RATE).samples


def _active(x: np.ndarray, below: float = 35.0) -> np.ndarray:
    """A mask of the samples in 10 ms frames within ``below`` dB of the loudest frame."""
    n = len(x) // 160
    frames = np.mean(np.square(x[: n * 160].reshape(n, 160), dtype=np.float64), axis=1)
    keep = frames > frames.max() * 10 ** (-below / 10) if n else frames > 0
    mask = np.zeros(len(x), bool)
    mask[: n * 160] = np.repeat(keep, 160)
    return mask


def _trim(x: np.ndarray) -> np.ndarray:
    idx = np.flatnonzero(_active(x))
    return x[idx[0]: idx[-1] + 1] if len(idx) else x


def room(rng: np.random.Generator, delay: float, rt60: float = RT60, drr: float = DRR,
         length: float = 0.4) -> np.ndarray:
    """An echo path: ``delay`` s of nothing, a direct sound, then exponentially decaying reverberation
    ``drr`` dB weaker than it in all."""
    n = np.arange(1, int(length * RATE))
    tail = rng.standard_normal(len(n)) * np.exp(-6.91 * n / (rt60 * RATE))
    h = np.concatenate([[1.0], tail * 10 ** (-drr / 20) / np.sqrt(np.sum(tail**2))])
    return np.concatenate([np.zeros(round(delay * RATE)), h]).astype(np.float64)


def moderator_track(seconds: float, rng: np.random.Generator) -> np.ndarray:
    """The moderator talking almost all the time: espeak-ng phrases 0.15-0.4 s apart."""
    parts, total = [], 0
    while total < seconds * RATE:
        phrase = _trim(_said(MODERATOR[int(rng.integers(len(MODERATOR)))], "espeak-ng:en-us"))
        gap = np.zeros(int(rng.uniform(0.15, 0.4) * RATE), np.float32)
        parts += [phrase, gap]
        total += len(phrase) + len(gap)
    track = np.concatenate(parts)[: int(seconds * RATE)]
    return (0.1 * track / np.sqrt(np.mean(track[_active(track)] ** 2))).astype(np.float32)  # -20 dBFS speech


@dataclass(frozen=True)
class Command:
    text: str
    intent: str
    slots: dict[str, Any]


@dataclass
class Stream:
    """One microphone's audio over a game stretch, and where the commands are in it."""

    voice: str
    condition: str  # "0 dB", "-6 dB" or "silent"
    delay: float
    reference: np.ndarray
    echo: np.ndarray
    speech: np.ndarray
    hiss: np.ndarray
    spans: list[tuple[int, int, Command]]

    @property
    def mic(self) -> np.ndarray:
        return (self.echo + self.speech + self.hiss).astype(np.float32)


def commands(count: int) -> list[Command]:
    """``count`` sentences of different templates of grammars/en.yaml (a seeded draw)."""
    from benchmarks.corpus import basic_grammar

    drawn = list(basic_grammar().expand(list(ROSTER), limit_per_template=1, rng=random.Random(SEED)))
    random.Random(SEED).shuffle(drawn)
    return [Command(text, p.intent, p.slots) for text, p in drawn[:count]]


def stream(voice: str, condition: str, cmds: list[Command], seed: int, delay: float | None = None) -> Stream:
    """The stream of one voice in one condition; the room and the moderator depend on ``seed`` only, so
    the conditions of one voice share them. ``delay`` overrides the residual delay drawn (negative: the
    echo comes before the reference)."""
    rng = np.random.default_rng(seed)
    said = [_trim(_said(c.text, f"flite:{voice}")) for c in cmds]
    gaps = rng.uniform(1.5, 2.5, len(cmds))
    starts, t = [], int(LEAD * RATE)
    for clip, gap in zip(said, gaps, strict=True):
        starts.append(t)
        t += len(clip) + int(gap * RATE)
    n = t // 160 * 160
    reference = moderator_track(n / RATE, rng)
    drawn = float(rng.uniform(0.02, 0.06))
    delay = drawn if delay is None else delay
    path = room(rng, max(delay, 0.0))
    hiss = mic_hiss(n, HISS_DBFS, rng)
    if condition == "silent":
        fade = np.ones(n, np.float32)
        for start, clip in zip(starts, said, strict=True):
            a, b = max(0, start - int(PAD[0] * RATE)), min(n, start + len(clip) + int(PAD[1] * RATE))
            fade[a:b] = 0.0
        # 20 ms ramps: a click would be an echo no canceller can model from a cut-off reference
        reference = reference * np.convolve(fade, np.ones(320) / 320, "same").astype(np.float32)
    echo = np.convolve(reference, path)[:n]
    if delay < 0:
        echo = np.concatenate([echo[round(-delay * RATE):], np.zeros(round(-delay * RATE))])
    gain = 10 ** (ECHO_DBFS / 20) / np.sqrt(np.mean(echo[_active(echo)] ** 2))
    echo = (echo * gain).astype(np.float32)
    speech = np.zeros(n, np.float32)
    spans = []
    for start, clip, cmd in zip(starts, said, cmds, strict=True):
        active = _active(clip)
        level = np.sqrt(np.mean(clip[active] ** 2))
        if condition == "silent":
            target = 10 ** (ECHO_DBFS / 20)
        else:
            target = np.sqrt(np.mean(echo[start:start + len(clip)][active] ** 2)) * 10 ** (float(condition[:-3]) / 20)
        speech[start:start + len(clip)] = clip * (target / level)
        spans.append((start, start + len(clip), cmd))
    return Stream(voice, condition, delay, reference, echo, speech, hiss, spans)


# -- measuring ------------------------------------------------------------------------------------------

_W: dict[str, Any] = {}


def _recognizer() -> tuple[Any, Any]:
    if "rec" not in _W:
        from benchmarks.corpus import basic_grammar
        from moderator.adapters.asr_pocketsphinx import PocketsphinxRecognizer

        grammar = basic_grammar()
        rec = PocketsphinxRecognizer()
        rec.expect(grammar, list(ROSTER))
        _W.update(rec=rec, grammar=grammar)
    return _W["rec"], _W["grammar"]


def accepted(audio: np.ndarray, s: Stream) -> list[bool]:
    """For each command of ``s``: the recognizer's transcript of its stretch of ``audio`` parses to the
    command's intent and slots."""
    rec, grammar = _recognizer()
    out = []
    for start, end, cmd in s.spans:
        seg = audio[max(0, start - int(PAD[0] * RATE)): end + int(PAD[1] * RATE)]
        parsed = grammar.parse(rec.recognize(seg.astype(np.float32), RATE).text, ROSTER)
        out.append(getattr(parsed, "intent", None) == cmd.intent and getattr(parsed, "slots", None) == cmd.slots)
    return out


def run_canceller(make: Callable[[], Any], s: Stream, chunk: int = 1600) -> tuple[np.ndarray, float]:
    """The canceller's output over the stream fed in 0.1 s chunks, and its CPU seconds."""
    canceller, mic = make(), s.mic
    t0 = time.process_time()
    out = np.concatenate([canceller.process(mic[i:i + chunk], s.reference[i:i + chunk])
                          for i in range(0, len(mic), chunk)])
    return out, time.process_time() - t0


def echo_only(s: Stream) -> np.ndarray:
    """The 10 ms frames, after SETTLE, where the echo is on and no command is near."""
    mask = np.zeros(len(s.mic), bool)
    mask[int(SETTLE * RATE):] = True
    for start, end, _ in s.spans:
        mask[max(0, start - 1600): end + 4800] = False
    frames = len(mask) // 160
    echo = np.mean(np.square(s.echo[: frames * 160].reshape(frames, 160), dtype=np.float64), axis=1)
    on = np.repeat(echo > 10 ** ((ECHO_DBFS - 20) / 10), 160)
    return mask[: frames * 160] & on


def erle(mic: np.ndarray, out: np.ndarray, mask: np.ndarray) -> float:
    """Echo return loss enhancement: how much quieter the output is than the microphone, in dB."""
    p_in = np.mean(np.square(mic[: len(mask)][mask], dtype=np.float64))
    p_out = np.mean(np.square(out[: len(mask)][mask], dtype=np.float64))
    return float(10 * np.log10(p_in / max(p_out, 1e-20)))


def lead_erle(mic: np.ndarray, out: np.ndarray, s: Stream) -> list[float]:
    """ERLE over each second of the echo-only lead: how fast the canceller adapts."""
    out_list = []
    for k in range(int(LEAD)):
        seg = slice(k * RATE, (k + 1) * RATE)
        on = _active(s.echo[seg], 20.0)
        out_list.append(erle(mic[seg], out[seg], on))
    return out_list


def measure(job: tuple[str, str, str]) -> dict[str, Any]:
    """One (candidate, voice, condition): acceptance, ERLE, and for *silent* how the commands came through."""
    name, voice, condition = job
    s = _W["streams"][voice, condition]
    if name == "no echo":
        audio, cpu = (s.speech + s.hiss).astype(np.float32), 0.0
    elif name == "no AEC":
        audio, cpu = s.mic, 0.0
    else:
        audio, cpu = run_canceller(CANDIDATES[name][2], s)
    mic = s.mic
    result: dict[str, Any] = {"candidate": name, "voice": voice, "condition": condition,
                              "accepted": accepted(audio, s), "cpu_s": cpu, "audio_s": len(mic) / RATE}
    if condition != "silent" and name not in ("no echo", "no AEC"):
        result["erle_db"] = erle(mic, audio, echo_only(s))
        result["lead_erle_db"] = lead_erle(mic, audio, s)
    if condition == "silent" and name != "no echo":
        result["level_db"], result["correlation"] = untouched(s, audio)
    return result


def untouched(s: Stream, audio: np.ndarray, max_lag: int = 320) -> tuple[float, float]:
    """How the commands of a *silent* stream came through, against what a perfect canceller would give (the
    microphone less the echo's dying tail): level in dB, and the best correlation within ``max_lag``
    samples (20 ms; WebRTC's output lags its input by ~8 ms)."""
    mask = np.zeros(len(audio), bool)
    for start, end, _ in s.spans:
        mask[start:end] = True
    a = (s.speech + s.hiss)[mask].astype(np.float64)
    b = audio[mask].astype(np.float64)
    n = 1 << int(np.ceil(np.log2(2 * len(a))))
    xcorr = np.fft.irfft(np.fft.rfft(b, n) * np.conj(np.fft.rfft(a, n)), n)[: max_lag + 1]
    best = float(np.max(np.abs(xcorr)) / np.sqrt(np.sum(a * a) * np.sum(b * b)))
    return float(10 * np.log10(np.mean(b * b) / np.mean(a * a))), best


#: Residual delays for the tolerance check, in seconds.
DELAYS = (-0.01, 0.0, 0.03, 0.06, 0.1, 0.15, 0.2)


def delay_tolerance(name: str, cmds: list[Command]) -> list[float]:
    """ERLE of one adapter at each of DELAYS (0 dB streams of slt and rms; no recognition)."""
    out = []
    for delay in DELAYS:
        erles = []
        for i, voice in enumerate(VOICES[:2]):
            s = stream(voice, "0 dB", cmds, SEED + i, delay=delay)
            erles.append(erle(s.mic, run_canceller(CANDIDATES[name][2], s)[0], echo_only(s)))
        out.append(float(np.mean(erles)))
    return out


# -- the report -----------------------------------------------------------------------------------------


def installed(names: list[str]) -> tuple[list[str], dict[str, str]]:
    """The candidates whose package is installed, and the package each other one lacks. (Nothing is made
    here: livekit's runtime must not start before the workers fork.)"""
    from moderator.adapters.echo import EchoError

    ok, missing = [], {}
    for name in names:
        install, module, make = CANDIDATES[name]
        try:
            found = importlib.util.find_spec(module) is not None if module else bool(make())
        except (ModuleNotFoundError, EchoError):
            found = False
        if found:
            ok.append(name)
        else:
            missing[name] = install
    return ok, missing


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def _libspeexdsp_version() -> str:
    """The Debian package's version (the library itself does not say)."""
    try:
        done = subprocess.run(["dpkg-query", "-W", "-f", "${Version} ", "libspeexdsp1*"], capture_output=True,
                              text=True)
    except OSError:
        return "unknown"
    return done.stdout.split(" ")[0] or "unknown"


def summarize(results: list[dict[str, Any]], names: list[str]) -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, Any]] = {}
    for name in names:
        row: dict[str, Any] = {}
        mine = [r for r in results if r["candidate"] == name]
        for cond in ("0 dB", "-6 dB", "silent"):
            got = [a for r in mine if r["condition"] == cond for a in r["accepted"]]
            row[cond] = {"accepted": sum(got), "n": len(got)}
            row[cond]["by_voice"] = {v: sum(a for r in mine if r["condition"] == cond and r["voice"] == v
                                         for a in r["accepted"]) for v in VOICES}
        echoed = [r for r in mine if "erle_db" in r]
        if echoed:
            row["erle_db"] = {c: float(np.mean([r["erle_db"] for r in echoed if r["condition"] == c])) for c in
                              ("0 dB", "-6 dB")}
            row["lead_erle_db"] = np.mean([r["lead_erle_db"] for r in echoed], axis=0).round(1).tolist()
        silent = [r for r in mine if "level_db" in r]
        if silent:
            row["silent_level_db"] = float(np.mean([r["level_db"] for r in silent]))
            row["silent_correlation"] = float(np.min([r["correlation"] for r in silent]))
        if any(r["cpu_s"] for r in mine):
            row["rtf"] = sum(r["cpu_s"] for r in mine) / sum(r["audio_s"] for r in mine)
        table[name] = row
    return table


def _pct(cell: dict[str, Any]) -> str:
    return f"{100 * cell['accepted'] / cell['n']:.0f}% ({cell['accepted']}/{cell['n']})" if cell["n"] else ""


def report(table: dict[str, dict[str, Any]], meta: dict[str, Any], missing: dict[str, str]) -> str:
    lines = [
        "# Echo cancellation: candidates compared",
        "",
        f"Measured on {meta['date']} on {meta['machine']}, commit `{meta['commit']}`, in {meta['seconds']:.0f} s:",
        "",
        "```bash",
        meta["command"],
        "```",
        "",
        f"{meta['commands']} commands (one sentence per template of `grammars/en.yaml`, roster "
        f"{', '.join(ROSTER)}) said by each of the flite voices {', '.join(VOICES)}, over the moderator "
        f"(espeak-ng en-us, talking almost all the time) heard through a synthetic room: the residual delay "
        f"drawn from 20-60 ms per voice, an exponentially decaying impulse response (RT60 {RT60:g} s, "
        f"direct-to-reverberant ratio {DRR:g} dB), the echo at "
        f"{ECHO_DBFS:g} dBFS, a {HISS_DBFS:g} dBFS hiss. Each voice and condition is one stream of "
        f"{meta['stream_seconds']:.0f} s fed in 0.1 s chunks, the canceller adapting throughout. "
        "A command counts as accepted when pocketsphinx's transcript of it "
        f"(with {PAD[0]:g} s before and {PAD[1]:g} s after) parses to its intent and slots.",
        "",
        "- **ERLE**: echo return loss enhancement over the echo-only stretches after the first "
        f"{SETTLE:g} s (mean of the 0 dB and -6 dB streams); *1st/2nd/3rd/4th s*: over each second of the "
        "4 s echo-only lead, i.e. while adapting.",
        "- **0 dB / -6 dB**: commands said over the moderator at that signal-to-echo ratio. *no echo* is the "
        "ceiling (the same commands over the hiss alone); *no AEC* is the microphone as it is.",
        "- **silent**: the moderator pauses around each command (the canceller has adapted before): the "
        "canceller must not make these worse. *level*: the output's level over the commands against what a "
        "perfect canceller would give (the commands and the hiss; the echo's dying tail gone); *corr.*: the "
        "lowest of the streams' correlations with it, at the best lag within 20 ms. *no AEC* loses commands "
        "there to the tail of the moderator's last words, in the 0.5 s before a command.",
        "- **RTF**: CPU time / audio time on one core, 0.1 s chunks, whole streams.",
        "",
        "| candidate | ERLE | ERLE 1st/2nd/3rd/4th s | 0 dB | -6 dB | silent | silent: level, corr. | RTF |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, row in table.items():
        erle_cell = f"{np.mean(list(row['erle_db'].values())):.1f} dB" if "erle_db" in row else ""
        lead = " / ".join(f"{x:.0f}" for x in row.get("lead_erle_db", [])) + (" dB" if "lead_erle_db" in row else "")
        level = (f"{row['silent_level_db']:+.2f} dB, {row['silent_correlation']:.3f}"
                 if "silent_level_db" in row else "")
        rtf = f"{row['rtf']:.4f}" if "rtf" in row else ""
        lines.append(f"| {name} | {erle_cell} | {lead} | {_pct(row['0 dB'])} | {_pct(row['-6 dB'])} | "
                     f"{_pct(row['silent'])} | {level} | {rtf} |")
    lines += ["", "By voice (accepted of " + str(meta["commands"]) + "; kal is the unseen check: nothing was "
              "tuned on it):", "",
              "| candidate | " + " | ".join(f"{c}: {v}" for c in ("0 dB", "-6 dB") for v in VOICES) + " |",
              "| --- |" + " --- |" * (2 * len(VOICES))]
    for name, row in table.items():
        lines.append(f"| {name} | " + " | ".join(str(row[c]["by_voice"][v]) for c in ("0 dB", "-6 dB")
                                                  for v in VOICES) + " |")
    tolerant = {name: row["erle_by_delay_db"] for name, row in table.items() if "erle_by_delay_db" in row}
    if tolerant:
        lines += ["", "ERLE against the residual delay the canceller is left with (the 0 dB streams of slt and rms; "
                  "negative: the echo arrives before the reference):", "",
                  "| candidate | " + " | ".join(f"{1000 * d:+.0f} ms" for d in DELAYS) + " |",
                  "| --- |" + " --- |" * len(DELAYS)]
        lines += [f"| {name} | " + " | ".join(f"{x:.1f} dB" for x in row) + " |" for name, row in tolerant.items()]
    versions = ", ".join(f"{p} {v}" for p, v in meta["versions"].items() if v != "not installed")
    lines += ["", f"Versions: {versions}. The project depends on none of the Python packages: the candidates other "
              f"than speex are measured after `.venv/bin/pip install {ALTERNATIVES}` (speexaec and "
              "aec-audio-processing compile: they need a C compiler, and speexaec libspeexdsp-dev)."]
    if missing:
        lines += ["", "Not measured here (not installed):", ""] + [f"- {k}: {v}" for k, v in missing.items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.aec_compare", description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path, help="also write the raw results here")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks" / "aec.md")
    parser.add_argument("--commands", type=int, default=20)
    parser.add_argument("--only", nargs="*", help="candidates to measure (default: every one installed)")
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    names, missing = installed(args.only or list(CANDIDATES))
    cmds = commands(args.commands)
    print(f"candidates: {', '.join(names)}; missing: {', '.join(missing) or 'none'}", file=sys.stderr)
    _W["streams"] = {(v, c): stream(v, c, cmds, SEED + i) for i, v in enumerate(VOICES)
                     for c in ("0 dB", "-6 dB", "silent")}
    jobs = [(n, v, c) for n in ["no echo", "no AEC", *names] for v in VOICES for c in ("0 dB", "-6 dB", "silent")
            if not (n == "no echo" and c != "0 dB")]
    # fork: the workers inherit the streams. The canceller's CPU time is its own process's, so two
    # workers on two cores time one core each.
    with multiprocessing.get_context("fork").Pool(args.processes) as pool:
        results = []
        for r in pool.imap_unordered(measure, jobs):
            results.append(r)
            print(f"  {len(results)}/{len(jobs)} {r['candidate']} {r['voice']} {r['condition']}: "
                  f"{sum(r['accepted'])}/{len(r['accepted'])}", file=sys.stderr)
    table = summarize(results, ["no echo", "no AEC", *names])
    for name in ("speex", "webrtc"):
        if name in names:
            table[name]["erle_by_delay_db"] = delay_tolerance(name, cmds)
    table["no echo"]["-6 dB"] = table["no echo"]["0 dB"]  # one ceiling for both ratios
    table["no echo"]["silent"] = table["no echo"]["0 dB"]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    command = ".venv/bin/python -m benchmarks.aec_compare" + "".join(
        f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()}, {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "commit": commit, "seconds": time.perf_counter() - started, "command": command,
        "commands": len(cmds), "stream_seconds": np.mean([len(s.mic) / RATE for s in _W["streams"].values()]),
        "versions": {p: _version(p) for p in ("pywebrtc-audio", "livekit", "aec-audio-processing", "speexaec", "pyaec")}
        | {"libspeexdsp": _libspeexdsp_version()},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    text = report(table, meta, missing)
    if args.out.exists() and "## Choice" in args.out.read_text():
        # the hand-written conclusion stays below the regenerated figures
        text += "\n" + args.out.read_text()[args.out.read_text().index("## Choice"):]
    args.out.write_text(text)
    if args.json:
        args.json.write_text(json.dumps({"meta": meta, "table": table, "results": results}, indent=1))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
