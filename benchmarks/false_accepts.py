"""False accepts: speech with no command in it (chatter, babble, human readings) fed to the game's Listener."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks.acceptance import hist
from benchmarks.corpus import PARTY_TALK, ROSTERS, VOICES, babble, human_recordings, spoken
from benchmarks.phases import phase_engine
from benchmarks.pool import W
from moderator.audio.endpoint import RATE, Endpointer, webrtc_classifier
from moderator.loop import Listener
from moderator.voice_input import CHUNK

#: The phases the audio is heard in, in turn (a segment each): where a game spends its time.
PHASES = ("round", "hostages", "briefing", "parley", "paused", "reveal")
SEGMENT = 60.0
GAP = 1.5
WAKE_WORD = "moderator"
BABBLE_SECONDS = 300.0


def streams(*, voices: Sequence[str] = VOICES, sentences: Sequence[str] = PARTY_TALK,
            babble_seconds: float = BABBLE_SECONDS, seed: int = 1) -> list[tuple[str, np.ndarray]]:
    """(kind, audio): each voice's chatter with pauses, continuous babble, and the human recordings."""
    gap = np.zeros(round(GAP * RATE), np.float32)
    out = []
    for voice in voices:
        out.append(("chatter", np.concatenate([part for s in sentences for part in (spoken(s, voice), gap)])))
    if babble_seconds:
        out.append(("babble", babble(babble_seconds, seed=seed)))
    human = human_recordings()
    if human:
        out.append(("human", np.concatenate([part for _, samples in human for part in (samples, gap)])))
    return out


def segments(kinds: list[tuple[str, np.ndarray]]) -> list[tuple[str, str, np.ndarray]]:
    """Cut the streams into segments of about a minute, each heard in the next phase of ``PHASES``."""
    out, n = [], 0
    for kind, audio in kinds:
        step = round(SEGMENT * RATE)
        for i in range(0, len(audio), step):
            piece = np.concatenate([audio[i : i + step], np.zeros(round(GAP * RATE), np.float32)])
            out.append((kind, PHASES[n % len(PHASES)], piece))
            n += 1
    return out


def listen(recognizer: Any, kind: str, phase: str, audio: np.ndarray, wake_word: str | None) -> dict[str, Any]:
    """Feed one segment through a Listener (one shared microphone) in a game at ``phase``; count what fires."""
    roster = ROSTERS[0]
    events: list[dict[str, Any]] = []
    fresh = True
    listener: Listener | None = None
    listeners: list[Listener] = []
    step = round(CHUNK * RATE)
    for i in range(0, len(audio), step):
        if fresh:  # a command changed the game: hear the rest in the same phase again
            engine = phase_engine(phase, roster)
            engine.subscribe(events.append)
            listener = Listener(engine, recognizer, mics=(None,), wake_word=wake_word,
                                new_endpointer=lambda: Endpointer(webrtc_classifier()))
            listeners.append(listener)
            fresh = False
        assert listener is not None
        t = i / RATE
        before = len(events)
        listener.feed(None, audio[i : i + step], RATE, t)
        fresh = any(e["type"] == "command" for e in events[before:])
    if listener is not None:
        listener.flush()  # a command held while its talker might go on (a slow second opinion) counts too
    commands, heard = [], ""
    for e in events:
        if e["type"] == "heard":
            heard = e["text"]
        elif e["type"] == "command":
            commands.append({"text": e["text"], "heard": heard, "intent": e["intent"], "phase": phase, "kind": kind})
    return {
        "kind": kind, "phase": phase, "wake_word": wake_word, "seconds": len(audio) / RATE,
        "commands": commands,
        "withdrawn": [text for one in listeners for text in one.withdrawn],  # held, and the talker went on
        "restored": [text for one in listeners for text in one.restored],  # ... and the whole was only it guessed
        "spoke": sum(1 for e in events if e["type"] == "announce"),
        # "Did you say ...?" (``Listener._ask``): asked over audio with no command in it, each a nuisance at least.
        "asked": [e["text"] for e in events if e["type"] == "announce" and e["key"] == "asked"],
        "heard": sum(1 for e in events if e["type"] == "heard"),
        "confidences": [e["confidence"] for e in events if e["type"] == "heard"],
    }


def summarize(results: list[dict[str, Any]]) -> dict[str, Any]:
    """False accepts per hour, with and without the wake word, by kind of audio; the chatter's confidences."""
    out: dict[str, Any] = {}
    for wake in sorted({r["wake_word"] or "" for r in results}):
        mine = [r for r in results if (r["wake_word"] or "") == wake]
        by_kind: dict[str, Any] = {}
        for kind in [*sorted({r["kind"] for r in mine}), "all"]:
            rs = [r for r in mine if kind in ("all", r["kind"])]
            hours = sum(r["seconds"] for r in rs) / 3600
            n = sum(len(r["commands"]) for r in rs)
            by_kind[kind] = {
                "hours": round(hours, 3), "false_accepts": n, "per_hour": round(n / hours, 2) if hours else None,
                # One-sided 95% Poisson upper bound on the rate (3.0 events when none were seen).
                "per_hour_95_upper": round(_poisson_upper(n) / hours, 2) if hours else None,
                "moderator_spoke_per_hour": round(sum(r["spoke"] for r in rs) / hours, 1) if hours else None,
                "questions": sum(len(r.get("asked", [])) for r in rs),
                "utterances": sum(r["heard"] for r in rs),
            }
        confidences = [c for r in mine for c in r["confidences"]]
        out["with wake word" if wake else "without wake word"] = {
            "wake_word": wake or None,
            "by_kind": by_kind,
            "by_intent": dict(Counter(c["intent"] for r in mine for c in r["commands"])),
            "examples": [c for r in mine for c in r["commands"]][:20],
            # Commands held after an early close and dropped as the talker went on, and those the whole restored.
            "withdrawn": [text for r in mine for text in r.get("withdrawn", [])],
            "restored": [text for r in mine for text in r.get("restored", [])],
            "questions": [text for r in mine for text in r.get("asked", [])],
            "confidence": hist(confidences),
        }
    out["phases"] = list(PHASES)
    return out


def _poisson_upper(n: int, p: float = 0.05) -> float:
    """The rate whose chance of giving ``n`` or fewer events is ``p`` (by bisection)."""
    lo, hi = 0.0, 10.0 + 5 * n
    for _ in range(60):
        mid = (lo + hi) / 2
        # In logs: mid**k overflows a float for the counts of hours of audio.
        cdf = sum(math.exp(k * math.log(mid) - mid - math.lgamma(k + 1)) for k in range(n + 1)) if mid else 1.0
        lo, hi = (mid, hi) if cdf > p else (lo, mid)
    return hi


def jobs(kinds: list[tuple[str, np.ndarray]], engines: Sequence[str],
         wake_words: Sequence[str | None] = (None, WAKE_WORD)) -> list[Any]:
    """A pool job per segment, engine and wake-word setting."""
    return [(measure, (engine, kind, phase, audio, wake)) for kind, phase, audio in segments(kinds)
            for engine in engines for wake in wake_words]


def measure(job: tuple[str, str, str, np.ndarray, str | None]) -> dict[str, Any]:
    """One segment (in a worker of ``benchmarks.pool``)."""
    engine, kind, phase, audio, wake = job
    result = listen(W["recognizers"][engine], kind, phase, audio, wake)
    result["engine"] = engine
    return result
