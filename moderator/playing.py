"""What every live game in a terminal is run with, Two Rooms (``moderator play``) and Room 25 alike: its voice, its
microphones and their listening loops, and its loops over typed lines (a terminal's prompt with the live view, or a
pipe), with the timers firing between lines."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import select
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from moderator.adapters.clock import SystemClock
from moderator.calibrate import measure_delays
from moderator.env import Environment
from moderator.game.engine import Engine
from moderator.live import LiveGame
from moderator.mics import check_names, make_listener
from moderator.outputs import device_options
from moderator.ports import AudioIn, Clock, LooksTwice, Recognizer
from moderator.settings import LiveTiming, Schedule
from moderator.speaking import Voice, make_voice
from moderator.speech.grammar import Grammar
from moderator.view import render_text

if TYPE_CHECKING:
    from moderator.loop import Listener

_ROOM_LABEL = {"A": "room A", "B": "room B", "both": "both"}


def live_timing(hearing: Sequence[Hearing]) -> LiveTiming:
    """The live game's pacing: where a recognizer it hears with asks Whisper's second opinion (``LooksTwice``, as
    built: not where ``auto`` found none, or one that would not load), recognizing holds the thread longer."""
    timing = LiveTiming()
    if any(isinstance(h.recognizer, LooksTwice) for h in hearing):
        timing = replace(timing, recognition_lead=timing.recognition_lead + timing.second_opinion_lead)
    return timing


def speak(engine: Engine, args: argparse.Namespace, env: Environment, schedule: Schedule,
           timing: LiveTiming) -> Voice | None:
    """Give the engine a voice if speakers or --audio-out were asked for, and render the set-up phrases."""
    out = env.open_output(device_options(args), engine.clock, log=env.log, system=env.audio)
    if out is None:
        return None
    warn = lambda msg: env.log(f"warning: {msg}")  # noqa: E731
    voice = make_voice(engine, out, synth=env.make_synthesizer(args.tts, warn=warn), cache_dir=args.cache_dir,
                       live=True, timing=timing, warn=warn)
    report = voice.prerender(engine, schedule)
    print(f"(prepared {report.rendered + report.cached} phrases in {report.seconds:.2f} s)", file=env.stderr)
    return voice


@dataclass
class Hearing:
    """The open microphones and the recognizer their audio goes to."""

    recognizer: Recognizer
    mics: AudioIn


def hear(args: argparse.Namespace, env: Environment, clock: Clock, grammar: Grammar,
          players: list[str]) -> list[Hearing]:
    """Open the recognizer and the microphones, if any were named; every failure is an error before the game.

    Raises:
        ModelError: a vosk model is missing or broken.
        RosterError: names the recognizer cannot hear (vosk).
        DeviceError: a microphone is unknown or cannot open.
    """
    devices = device_options(args)
    if not devices.microphones:
        return []
    recognizer = env.make_recognizer(args.engine, args.vosk_model, args.acoustic_model, live=True,
                                     second_opinion=args.second_opinion, warn=env.log)
    check_names(recognizer, players)
    recognizer.expect(grammar, players)  # compiles every name now, not at the first word said
    mics = env.open_mics(devices, clock, log=env.log, system=env.audio)
    return [Hearing(recognizer, mics)]


def listen(engine: Engine, hearing: list[Hearing], args: argparse.Namespace, env: Environment,
            voice: Voice | None) -> list[Listener]:
    """The listening loop of each set of microphones. With speakers too, a chirp in each room first finds
    how late the moderator's voice reaches each microphone, for echo cancellation (before the briefing)."""
    listeners = [make_listener(engine, h.recognizer, h.mics.mics, voice, aec=args.aec, wake_word=args.wake_word,
                               ask=args.questions == "on")
                 for h in hearing]
    for h, listener in zip(hearing, listeners, strict=True):
        if voice is None or listener.echo is None or args.aec == "off":
            continue
        for found in measure_delays(voice.out, h.mics, listener.echo, engine.clock, SystemClock.sleep):
            where = "the shared microphone" if found.mic is None else f"room {found.mic}'s microphone"
            if found.delay is None:
                print(f"(echo: {where} did not hear the set-up chirp; it will learn the room as the moderator "
                      "talks. Is the speaker on, and near the microphone?)", file=env.stdout)
            else:
                print(f"(echo: {where} hears the moderator {found.delay * 1000:.0f} ms after it plays)",
                      file=env.stdout)
    return listeners


def print_event(event: dict[str, Any], env: Environment) -> None:
    # In a terminal, prompt_toolkit swaps sys.stdout so that lines print above the prompt.
    out = sys.stdout if env.interactive else env.stdout
    if event["type"] == "announce":
        print(f"[{_ROOM_LABEL[event['room']]}] {event['text']}", file=out, flush=True)
    elif event["type"] == "heard" and event.get("text"):
        print(f"[{_ROOM_LABEL[event['room']]} heard] {event['text']} ({event['confidence']:.2f})", file=out,
              flush=True)


def _keyboard(game: LiveGame, line: str, env: Environment) -> bool:
    """Keyboard-only words. Returns False when the player asked to quit."""
    word = line.strip().lower()
    if word in ("quit", "exit"):
        return False
    if word == "status":
        print(render_text(game.engine, alerts=game.alerts()), file=env.stdout, flush=True)
    else:
        game.feed(line)
    return True


def pipe_loop(game: LiveGame, env: Environment) -> None:
    """Lines from a pipe or file; timers keep firing between lines, and a command from the web panel wakes the
    loop at once. With microphones or the web panel, the game goes on after the input ends."""
    wake = [game.remote.wake_fd] if game.remote is not None else []
    try:
        fd = env.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None
    if fd is None:  # an in-memory stdin (tests): no waiting possible, just read it
        for line in env.stdin:
            game.tick()
            if not _keyboard(game, line, env) or game.finished:
                return
        if wake:
            _run_on(game, wake)
        return
    buffer = b""
    reading: list[int] = [fd]
    while not game.finished:
        # Wake exactly when the next timer is due, so announcements start on time.
        ready, _, _ = select.select(reading + wake, [], [], game.wait_time())
        game.tick()
        if fd not in ready:
            continue
        chunk = os.read(fd, 4096)
        if not chunk:
            if game.mics is None and not wake:
                return
            reading = []  # the end of typed input: the microphones or the web panel go on until the result or Ctrl-C
            continue
        buffer += chunk
        while b"\n" in buffer:
            raw, buffer = buffer.split(b"\n", 1)
            if not _keyboard(game, raw.decode("utf-8", "replace"), env) or game.finished:
                return


def _run_on(game: LiveGame, wake: list[int]) -> None:
    """No more typed input: tick until the result (or Ctrl-C), woken by the next timer or a web command."""
    while not game.finished:
        select.select(wake, [], [], game.wait_time())
        game.tick()


async def tty_loop(game: LiveGame, env: Environment) -> None:
    """An interactive terminal: a prompt with the live view of both rooms beneath it."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.formatted_text import ANSI
    from prompt_toolkit.patch_stdout import patch_stdout

    prompt: PromptSession[str] = PromptSession()
    woken = asyncio.Event()  # a command from the web panel: tick now, not at the next timer or poll
    if game.remote is not None:
        asyncio.get_running_loop().add_reader(game.remote.wake_fd, woken.set)

    async def ticker() -> None:
        while True:
            game.tick()
            woken.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(woken.wait(), game.wait_time())

    def toolbar() -> ANSI:
        width = os.get_terminal_size().columns if env.stdout.isatty() else 100
        return ANSI(render_text(game.engine, width=width, color=True, alerts=game.alerts()))

    with patch_stdout():
        task = asyncio.create_task(ticker())
        try:
            while not game.finished:
                try:
                    line = await prompt.prompt_async("say> ", bottom_toolbar=toolbar,
                                                     refresh_interval=game.timing.view_refresh)
                except (EOFError, KeyboardInterrupt):
                    return
                if not _keyboard(game, line, env):
                    return
        finally:
            task.cancel()
            if game.remote is not None:
                asyncio.get_running_loop().remove_reader(game.remote.wake_fd)
