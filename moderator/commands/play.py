"""``moderator play``: run a live game in the terminal, by typed and spoken commands, saved after every change."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import select
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moderator.adapters import alsa_log
from moderator.adapters.clock import SystemClock
from moderator.calibrate import measure_delays
from moderator.commands.plan import add_plan_options, plan_from_args
from moderator.env import Environment
from moderator.errors import Interrupted, JournalError, UsageError
from moderator.game.engine import Engine
from moderator.game.plan_view import render_plan
from moderator.game.rules import split_rooms
from moderator.game.state import GameState
from moderator.journal import Journal, Saved, default_path
from moderator.listening import add_recognizer_options
from moderator.live import LiveGame
from moderator.mics import add_echo_options, add_mic_options, check_names, make_listener
from moderator.outputs import add_speech_options, device_options, schedule_from
from moderator.play import EventLog
from moderator.ports import AudioIn, Clock, Recognizer
from moderator.room25.play import add_options as add_room25_options
from moderator.room25.play import check_options as check_room25_options
from moderator.room25.play import run_room25
from moderator.room25.saved import is_room25_file
from moderator.roster import check_roster, load_roster, parse_names
from moderator.settings import LiveTiming, Schedule
from moderator.speaking import Voice, make_voice
from moderator.speech.catalog import load_catalog
from moderator.speech.grammar import Grammar, load_grammar
from moderator.view import render_text
from moderator.web.panel import WebPanel, add_web_options

if TYPE_CHECKING:
    from moderator.loop import Listener

_ROOM_LABEL = {"A": "room A", "B": "room B", "both": "both"}


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``play`` subcommand."""
    p = sub.add_parser(
        "play",
        help="run a live game in the terminal (spoken and typed commands)",
        description="Run a live game. With microphones (--room-a-in/--room-b-in, or one shared --mic; check "
        "them first with 'moderator listen'), players speak their commands. The keyboard always works too, "
        "and stands in for a microphone that fails: type what players would say, e.g. 'A: I appoint Alice as "
        "leader' ('A:' or 'B:' says which room's microphone heard it; without it the room follows from "
        "the names). Extra keyboard words: 'status' shows both rooms, 'quit' saves and leaves. The game "
        "is saved after every change; 'moderator play --resume' continues it after a crash. A new game never "
        "replaces an unfinished saved one unless --new is given, and a saved game is open in one moderator at a "
        "time. If saving fails (a full or read-only disk), the game goes on from memory and saving is retried.",
    )
    who = p.add_mutually_exclusive_group()
    who.add_argument("--players", help="the players' names, comma separated")
    who.add_argument("--roster", type=Path, help="a roster file: one name per line, or a YAML/JSON list")
    who.add_argument("--resume", action="store_true",
                     help="continue the saved game (after a crash or 'quit'), with the --read-back and --settings "
                     "it was started with unless they are given again")
    p.add_argument("--paused", action="store_true",
                   help="with --resume: resume paused, with the time the round had when it stopped (known "
                   "within a second, even after a crash)")
    p.add_argument("--new", action="store_true",
                   help="start a new game even though an unfinished one is saved at --state: the saved one is "
                   "kept beside it, renamed with the date and time (without --new, play refuses to replace it)")
    p.add_argument("--keyboard", action="store_true",
                   help="take commands from the keyboard (always on, with or without microphones: it is also "
                   "the fallback when a microphone fails)")
    add_plan_options(p, players=False)
    p.add_argument("--seed", type=int, help="seed for the random room split (default: random)")
    p.add_argument("--state", type=Path, help=f"where the game is saved (default {default_path()})")
    p.add_argument("--events", type=Path, help="append the JSON Lines event log to this file (with --resume too: "
                   "a resumed game logs only where this says)")
    add_speech_options(p, devices=True)
    add_mic_options(p)
    add_echo_options(p)
    add_recognizer_options(p)
    add_web_options(p)
    add_room25_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, env: Environment) -> int:
    """Start or resume a game and run it until the result, 'quit' or the end of input."""
    check_room25_options(args)
    if args.game == "room25" or (args.resume and is_room25_file(args.state or default_path())):
        return run_room25(args, env)
    if args.paused and not args.resume:
        raise UsageError("--paused goes with --resume: it continues the saved game paused")
    if args.new and args.resume:
        raise UsageError("--new starts a new game, --resume continues the saved one: choose one")
    journal = Journal(args.state or default_path())
    hearing: list[_Hearing] = []
    panel = WebPanel(args.web) if args.web else None
    try:
        return _run(args, env, journal, hearing, panel)
    finally:
        for h in hearing:
            h.mics.close()
        if panel is not None:
            panel.stop()
        journal.unlock()


def _run(args: argparse.Namespace, env: Environment, journal: Journal, hearing: list[_Hearing],
         panel: WebPanel | None) -> int:
    timing = live_timing(args)
    if args.resume:
        journal.lock()  # held until the game ends: a second moderator on this file is refused
        journal.remove_leftovers()
        saved = journal.load()
        if saved.finished:
            raise JournalError(f"the saved game at {journal.path} is already over; start a new one")
        # What the command line does not say again is as the game was saved.
        schedule = schedule_from(args) if args.settings else Schedule(**{
            k: tuple(v) if k == "warnings" else v for k, v in saved.options.get("schedule", {}).items()})
        read_back = args.read_back or saved.options.get("read_back", "spoken")
    else:
        names = _roster(args)
        plan = plan_from_args(args, players=len(names))
        schedule, read_back = schedule_from(args), args.read_back or "spoken"
        journal.lock()
        journal.remove_leftovers()
        replacing = journal.claim(new=args.new)
    options = {"read_back": read_back, "schedule": {"warnings": list(schedule.warnings),
               "countdown": schedule.countdown, "leader_nag": schedule.leader_nag}}

    def build(saved: Saved, clock: Clock) -> Engine:
        """The game as saved, on the live game's clock (a resumed game, or one rebuilt after a bug)."""
        return Engine(GameState.from_dict(saved.state), clock=clock, grammar=grammar, catalog=catalog,
                      schedule=schedule, read_back=read_back)

    if args.resume:
        grammar, catalog = load_grammar("en"), load_catalog(saved.lang)
        # Only a log the user names now is written: never a path read from a file.
        epoch, lang, events, game_id = saved.epoch, saved.lang, args.events, saved.game or None
        engine = build(saved, SystemClock(saved.epoch))
        hearing.extend(_hear(args, env, engine.clock, grammar, engine.state.players))
    else:
        # Commands are English-only for now; --lang picks what the moderator says.
        grammar, catalog = load_grammar("en"), load_catalog(args.lang)
        a, b = split_rooms(names, random.Random(args.seed))
        clock = SystemClock()
        hearing.extend(_hear(args, env, clock, grammar, names))  # before anything starts: errors end it here
        epoch, lang, events, game_id = clock.epoch, args.lang, args.events, None
        engine = Engine.new(plan, {"A": a, "B": b}, clock=clock, grammar=grammar, catalog=catalog,
                            schedule=schedule, read_back=read_back)
    log = EventLog(events, warn=env.log) if events \
        else None
    voice = _speak(engine, args, env, schedule, timing)
    listeners = _listen(engine, hearing, args, env, voice)
    remote = None if panel is None else panel.bridge
    game = LiveGame(engine, journal, epoch=epoch, lang=lang, events=events, rebuild=build,
                    sinks=[lambda e: _print_event(e, env), *([log] if log else []), *([remote] if remote else [])],
                    voice=voice, remote=remote,
                    mics=hearing[0].mics if hearing else None, listener=listeners[0] if listeners else None,
                    timing=timing, extra_alerts=lambda: alsa_log.alerts() + (log.alerts() if log else []),
                    err=env.stderr, game=game_id, options=options)
    if panel is not None:
        panel.start(env.stdout)  # before the game starts: an address in use ends it here
    if args.resume:
        if saved.events and not args.events:
            print(f"(the saved game logged its events to {saved.events}; to go on logging them there, resume "
                  f"with --events {saved.events})", file=env.stdout)
        if args.paused and engine.state.deadline is not None:
            engine.pause_restored(engine.state.deadline - saved.saved_at)
        engine.say("both", "restored")
        engine.say_time_left("both")
    else:
        if replacing:
            print(f"(the earlier game is kept in {journal.back_up()})", file=env.stdout)
        if plan.preset or plan.characters:  # the host builds this deck by hand: show it first
            render_plan(plan, env.stdout)
        engine.begin()
    for h in hearing:
        print(f"(listening: {_mic_names(h.mics.mics)}, with {h.recognizer.name}; typed commands work too)",
              file=env.stdout)
    game.save()
    if game.save_trouble is None:
        print(f"(game saved to {journal.path} after every change)", file=env.stdout)
    interrupted: KeyboardInterrupt | None = None
    try:
        if env.interactive:
            asyncio.run(_tty_loop(game, env))
        else:
            _pipe_loop(game, env)
    except KeyboardInterrupt as exc:
        interrupted = exc
    finally:
        game.close()
        if log is not None:
            log.close()
    if interrupted is not None:
        if game.save_trouble is not None:  # not "the game is saved": its latest changes are not
            raise Interrupted(f"; the latest changes could not be saved ({game.save_trouble}); {_kept(journal)}") \
                from interrupted
        raise interrupted
    if game.finished:
        print("Game over. Thanks for playing!", file=env.stdout)
    elif game.save_trouble is not None:
        print(f"The latest changes could not be saved ({game.save_trouble}); {_kept(journal)}.", file=env.stdout)
    else:
        print(f"Game saved. Continue with: moderator play --resume --state {journal.path}", file=env.stdout)
    return 0


def _kept(journal: Journal) -> str:
    """What is left of a game whose latest saves failed."""
    return f"{journal.path} holds the game as last saved" if journal.exists() else "nothing of it was saved"


def live_timing(args: argparse.Namespace) -> LiveTiming:
    """The live game's pacing: with Whisper's second opinion, recognizing holds the thread longer."""
    timing = LiveTiming()
    if getattr(args, "second_opinion", None):
        timing = replace(timing, recognition_lead=timing.recognition_lead + timing.second_opinion_lead)
    return timing


def _speak(engine: Engine, args: argparse.Namespace, env: Environment, schedule: Schedule,
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
class _Hearing:
    """The open microphones and the recognizer their audio goes to."""

    recognizer: Recognizer
    mics: AudioIn


def _hear(args: argparse.Namespace, env: Environment, clock: Clock, grammar: Grammar,
          players: list[str]) -> list[_Hearing]:
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
                                     second_opinion=args.second_opinion)
    check_names(recognizer, players)
    recognizer.expect(grammar, players)  # compiles every name now, not at the first word said
    mics = env.open_mics(devices, clock, log=env.log, system=env.audio)
    return [_Hearing(recognizer, mics)]


def _listen(engine: Engine, hearing: list[_Hearing], args: argparse.Namespace, env: Environment,
            voice: Voice | None) -> list[Listener]:
    """The listening loop of each set of microphones. With speakers too, a chirp in each room first finds
    how late the moderator's voice reaches each microphone, for echo cancellation (before the briefing)."""
    listeners = [make_listener(engine, h.recognizer, h.mics.mics, voice, aec=args.aec, wake_word=args.wake_word)
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


def _mic_names(mics: tuple[str | None, ...]) -> str:
    return "one microphone for both rooms" if mics == (None,) else " and ".join(f"room {m}" for m in mics)


def _roster(args: argparse.Namespace) -> list[str]:
    if args.roster:
        return load_roster(args.roster, force=args.force)
    if args.players:
        return check_roster(parse_names(args.players), source="--players", force=args.force)
    raise UsageError("say who plays: --players Alice,Bob,... or --roster FILE (or --resume a saved game)")


def _print_event(event: dict[str, Any], env: Environment) -> None:
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


def _pipe_loop(game: LiveGame, env: Environment) -> None:
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


async def _tty_loop(game: LiveGame, env: Environment) -> None:
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
