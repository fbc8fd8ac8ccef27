"""Acceptance while the moderator talks: commands said over its announcements, with echo cancellation.

Run alone:  .venv/bin/python -m benchmarks.barge_in [--commands N] [--json FILE]

One microphone stream per condition, as in a room: the moderator's announcements (rendered by the
moderator's own synthesizer) reach the microphone through a simulated room (``moderator.audio.room``:
a 20-60 ms delay, RT60 0.3 s) at a signal-to-echo ratio of 0 or -6 dB against the player (peak-frame
power, as the suite's SNR), over a microphone's hiss at -60 dBFS. Each command starts while an
announcement is playing, at a random point of it. The delay is measured first with the set-up chirp,
as ``moderator play`` does, and the stream then goes through what the live game runs: the echo path
(``EchoPath``), the endpointer (with grammar-aware endpointing) and the recognizer, whose transcript
is parsed against the grammar. "silence" is the same commands with the moderator silent: the ceiling.
"no cancellation" feeds the microphone as it is (full duplex without AEC), for comparison.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from benchmarks.corpus import ROSTERS, Command, basic_grammar, commands, spoken
from moderator.audio.clip import Clip
from moderator.audio.delay import chirp, estimate_delay
from moderator.audio.echo import RESIDUAL_MARGIN, EchoPath
from moderator.audio.endpoint import RATE, Endpointer, webrtc_classifier
from moderator.audio.mix import MIC_HISS_DBFS, hiss
from moderator.audio.reference import PlayedAudio
from moderator.audio.room import EchoRoom
from moderator.loop import Listener, over_the_moderator
from moderator.speech.grammar import Grammar, Parsed
from moderator.voice_input import CHUNK

HISS_DBFS = MIC_HISS_DBFS
SERS = (0.0, -6.0)
#: What the moderator says over the players: time warnings, read-backs, replies, the round's start.
ANNOUNCEMENTS = (
    "30 seconds left.",
    "Room A, I heard Bob and Carol. Say yes to lock, or no to choose again.",
    "Round 2. 3 minutes. Each room sends 1 hostage. Look at your cards now. Go!",
    "Alice is now the leader of room A.",
    "Time's up! Leaders, choose your hostages.",
    "Carol, name 1 hostage for room A.",
    "Undone.",
    "Hostages locked: Dave.",
)
WARM_UP = "Welcome to Two Rooms and a Boom. There are 8 players and 3 rounds. Room A: Alice, Bob, Carol and Dave."


class _NoSpeaker:
    """The AudioOut behind the record: nothing is played (the simulated room is the speaker)."""

    def play(self, room: str, clip: Clip, at: float) -> None:
        """Nothing."""

    def stop(self, room: str, clip: Clip, at: float) -> None:
        """Nothing."""

    def close(self) -> None:
        """Nothing."""


def moderator_voice() -> Callable[[str], Clip]:
    """The moderator's own synthesizer and render cache, as ``moderator play`` uses them."""
    from moderator.adapters.tts import make_synthesizer
    from moderator.speaking import voice_settings
    from moderator.speech.catalog import load_catalog
    from moderator.voice.cache import RenderCache, default_cache_dir

    cache = RenderCache(default_cache_dir(), make_synthesizer("auto", warn=lambda _: None))
    settings = voice_settings(load_catalog("en"))
    return lambda text: cache.get(text, settings)


def run_condition(cmds: list[Command], grammar: Grammar, recognizer: Any, say: Callable[[str], Clip], *,
                  ser: float | None, canceller: str | None, seed: int = 0) -> dict[str, Any]:
    """One microphone stream with every command of ``cmds`` said over an announcement (or in silence)."""
    from moderator.adapters.echo import make_echo_canceller

    rng = np.random.default_rng(seed)
    played = PlayedAudio(_NoSpeaker(), keep=60.0)
    room = EchoRoom(played, ser if ser is not None else 0.0, seed=seed)
    path = EchoPath(played, ("A",), (lambda: make_echo_canceller(canceller)) if canceller else None)
    roster = list(cmds[0].roster)
    recognizer.expect(grammar, roster)
    endpointer = Endpointer(webrtc_classifier())
    # What the live listener hears of an utterance: the player's part of it (moderator.loop.Listener).
    listener_view = partial(Listener._players_part, SimpleNamespace(echo=path, endpointers={"A": endpointer}), "A")
    if canceller is not None:  # as the live listener does: speech must stand out from the moderator's residual
        endpointer.echo_floor = lambda t0, t1: path.residual_db("A", t0, t1)
        endpointer.echo_margin = RESIDUAL_MARGIN
    step = round(CHUNK * RATE)
    t = 0.0
    results: list[dict[str, Any]] = []
    cpu = {"echo": 0.0, "audio": 0.0}

    def hear(n: int, speech: np.ndarray | None = None, at: int = 0) -> list[str]:
        """Feed ``n`` samples of the microphone from ``t``: hiss, echo, and ``speech`` from sample ``at``."""
        nonlocal t
        heard: list[str] = []
        for i in range(0, n, step):
            size = min(step, n - i)
            chunk = hiss(size, HISS_DBFS, rng)
            if ser is not None:
                chunk += room.echo("A", t, size)
            if speech is not None:
                lo, hi = max(i - at, 0), min(i + size - at, len(speech))
                if hi > lo:
                    chunk[lo + at - i : hi + at - i] += speech[lo:hi]
            if canceller is not None:
                started = time.process_time()
                audio, t_audio = path.cancel("A", chunk, t)
                cpu["echo"] += time.process_time() - started
            else:
                audio, t_audio = chunk, t
            cpu["audio"] += size / RATE
            for utterance in endpointer.feed(audio, t_audio):
                samples = (listener_view(utterance, path.talked_over("A", utterance.start, utterance.end))
                           if canceller is not None else utterance.samples)
                if samples is None:
                    continue  # as the live listener does: the canceller's leftovers are never a command
                transcript = recognizer.recognize(samples, RATE)
                if canceller is not None and path.talked_over("A", utterance.start, utterance.end):
                    transcript = over_the_moderator(transcript)  # as the live listener does
                if transcript.text:
                    heard.append(transcript.text)
            t += size / RATE
        return heard

    if ser is not None:
        # Set-up as in a game: the chirp finds the delay, then the briefing (the canceller adapts on it).
        sweep = Clip(chirp(RATE), RATE)
        played.play("A", sweep, t + 0.2)
        played.history()[-1].peak_power = 0.0  # a test signal, not the moderator's speaking level
        warm = say(WARM_UP)
        played.play("A", warm, t + 1.5)
        mic = room.echo("A", t, 2 * RATE) + rng.normal(0, 10 ** (HISS_DBFS / 20), 2 * RATE)
        delay, _ = estimate_delay(played.reference(("A",), t, 2 * RATE), mic.astype(np.float32), RATE)
        path.set_delay("A", delay)
        hear(round((1.5 + warm.duration + 1.0) * RATE))
    for command in cmds:
        speech = spoken(command.text, command.voice)
        if ser is not None:  # the player as loud as the signal-to-echo ratio says
            speech = speech * room.speech_gain(speech)
        if ser is not None:
            phrase = say(ANNOUNCEMENTS[int(rng.integers(len(ANNOUNCEMENTS)))])
            played.play("A", phrase, t)
            offset = float(rng.uniform(0.1, max(0.2, phrase.duration - 0.3)))
        else:
            offset = 0.5
        length = round((offset + len(speech) / RATE + 2.0) * RATE)
        heard = hear(length, speech, round(offset * RATE))
        parses = [p for p in (grammar.parse(text, roster) for text in heard) if isinstance(p, Parsed)]
        right = any(p.intent == command.intent and p.slots == command.slots for p in parses)
        results.append({"text": command.text, "voice": command.voice, "heard": heard, "right": right})
    return {"right": sum(r["right"] for r in results), "n": len(results),
            "echo_rtf": round(cpu["echo"] / cpu["audio"], 4) if canceller else None,
            "delay_estimates": [round(e[2], 4) for e in path.estimates], "rows": results}


def run(count: int = 48, seed: int = 0, canceller: str = "auto", acoustic: str = "default",
        conditions: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Every condition over the same commands (the first ``count`` of roster 0's, all voices), with pocketsphinx's
    ``acoustic`` model (``--acoustic-model``); ``conditions``: only the labels given (and silence)."""
    from moderator.listening import pocketsphinx_recognizer

    grammar = basic_grammar()
    cmds = [c for c in commands(grammar, per_template=3, rosters=ROSTERS[:1], seed=seed)
            if c.intent not in ("confirm", "name_answer", "room_answer")][:count]
    say = moderator_voice()
    recognizer = pocketsphinx_recognizer(acoustic)
    out: dict[str, Any] = {"commands": len(cmds), "voices": sorted({c.voice for c in cmds}), "acoustic_model": acoustic,
                           "conditions": {}}
    plan = [("silence", None, None)]
    for ser in SERS:
        plan += [(f"{ser:g} dB echo, cancelled", ser, canceller), (f"{ser:g} dB echo, no cancellation", ser, None)]
    for label, ser, aec in plan:
        if conditions is not None and label != "silence" and label not in conditions:
            continue
        result = run_condition(cmds, grammar, recognizer, say, ser=ser, canceller=aec, seed=seed)
        out["conditions"][label] = result
        print(f"{label:32s} {result['right']:3d}/{result['n']}  echo RTF {result['echo_rtf']}", flush=True)
    silence = out["conditions"]["silence"]["right"]
    for result in out["conditions"].values():
        result["share_of_silence"] = round(result["right"] / silence, 3) if silence else None
    return out


def main() -> int:
    """Run alone."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commands", type=int, default=48)
    parser.add_argument("--canceller", default="auto")
    parser.add_argument("--acoustic-model", default="default", help="pocketsphinx's: default, party, auto or a PATH")
    parser.add_argument("--seed", type=int, default=0, help="which commands and voices (0: the suite's)")
    parser.add_argument("--only", nargs="*", metavar="LABEL",
                        help='conditions to run besides silence, e.g. "-6 dB echo, cancelled"')
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    report = run(args.commands, seed=args.seed, canceller=args.canceller, acoustic=args.acoustic_model,
                 conditions=tuple(args.only) if args.only else None)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

