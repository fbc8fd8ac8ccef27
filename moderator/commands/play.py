"""``moderator play``: run a live game in the terminal, by typed and spoken commands, saved after every change."""

from __future__ import annotations

import argparse
import asyncio
import random
from pathlib import Path

from moderator.adapters import alsa_log
from moderator.adapters.clock import SystemClock
from moderator.commands.plan import add_plan_options, plan_from_args
from moderator.env import Environment
from moderator.errors import Interrupted, JournalError, UsageError
from moderator.game.engine import Engine
from moderator.game.plan_view import render_plan
from moderator.game.rules import split_rooms
from moderator.game.state import GameState
from moderator.journal import Journal, Saved, default_path
from moderator.listening import add_recognizer_options, described
from moderator.live import LiveGame
from moderator.mics import add_echo_options, add_mic_options
from moderator.outputs import add_speech_options, schedule_from
from moderator.play import EventLog
from moderator.playing import Hearing, hear, listen, live_timing, pipe_loop, print_event, speak, tty_loop
from moderator.ports import Clock
from moderator.room25.play import add_options as add_room25_options
from moderator.room25.play import check_options as check_room25_options
from moderator.room25.play import run_room25
from moderator.room25.saved import is_room25_file
from moderator.roster import check_roster, load_roster, parse_names
from moderator.settings import Schedule
from moderator.speech.catalog import load_catalog
from moderator.speech.grammar import load_grammar
from moderator.web.panel import WebPanel, add_web_options


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
    hearing: list[Hearing] = []
    panel = WebPanel(args.web) if args.web else None
    try:
        return _run(args, env, journal, hearing, panel)
    finally:
        for h in hearing:
            h.mics.close()
        if panel is not None:
            panel.stop()
        journal.unlock()


def _run(args: argparse.Namespace, env: Environment, journal: Journal, hearing: list[Hearing],
         panel: WebPanel | None) -> int:
    timing = live_timing(hearing)
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
        hearing.extend(hear(args, env, engine.clock, grammar, engine.state.players))
    else:
        # Commands are English-only for now; --lang picks what the moderator says.
        grammar, catalog = load_grammar("en"), load_catalog(args.lang)
        a, b = split_rooms(names, random.Random(args.seed))
        clock = SystemClock()
        hearing.extend(hear(args, env, clock, grammar, names))  # before anything starts: errors end it here
        epoch, lang, events, game_id = clock.epoch, args.lang, args.events, None
        engine = Engine.new(plan, {"A": a, "B": b}, clock=clock, grammar=grammar, catalog=catalog,
                            schedule=schedule, read_back=read_back)
    log = EventLog(events, warn=env.log) if events \
        else None
    voice = speak(engine, args, env, schedule, timing)
    listeners = listen(engine, hearing, args, env, voice)
    remote = None if panel is None else panel.bridge
    game = LiveGame(engine, journal, epoch=epoch, lang=lang, events=events, rebuild=build,
                    sinks=[lambda e: print_event(e, env), *([log] if log else []), *([remote] if remote else [])],
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
        print(f"(listening: {_mic_names(h.mics.mics)}, with {described(h.recognizer)}; typed commands work too)",
              file=env.stdout)
    game.save()
    if game.save_trouble is None:
        print(f"(game saved to {journal.path} after every change)", file=env.stdout)
    interrupted: KeyboardInterrupt | None = None
    try:
        if env.interactive:
            asyncio.run(tty_loop(game, env))
        else:
            pipe_loop(game, env)
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


def _mic_names(mics: tuple[str | None, ...]) -> str:
    return "one microphone for both rooms" if mics == (None,) else " and ".join(f"room {m}" for m in mics)


def _roster(args: argparse.Namespace) -> list[str]:
    if args.roster:
        return load_roster(args.roster, force=args.force)
    if args.players:
        return check_roster(parse_names(args.players), source="--players", force=args.force)
    raise UsageError("say who plays: --players Alice,Bob,... or --roster FILE (or --resume a saved game)")
