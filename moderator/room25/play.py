"""``moderator play --game room25``: a live Room 25 game through the same live loop (``LiveGame``), keyboard and
table microphone (``--mic``) and voice (the table's speaker is room A's, ``--room-a-out``; or ``--audio-out``) as
Two Rooms, saved after every change and resumed with ``--resume``."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from moderator.adapters.clock import SystemClock
from moderator.env import Environment
from moderator.errors import JournalError, UsageError
from moderator.journal import Journal, Saved, default_path
from moderator.listening import described
from moderator.live import LiveGame
from moderator.outputs import device_options
from moderator.play import EventLog
from moderator.playing import hear, listen, live_timing, pipe_loop, print_event, speak, tty_loop
from moderator.ports import Clock
from moderator.room25.engine import Room25Engine
from moderator.room25.rules import check_players, plan_for
from moderator.room25.saved import is_room25
from moderator.room25.state import Room25State
from moderator.roster import load_roster, parse_names
from moderator.speech.catalog import load_catalog
from moderator.speech.grammar import load_grammar


def add_options(p: argparse.ArgumentParser) -> None:
    """``--game`` and Room 25's set-up options."""
    p.add_argument("--game", choices=("two_rooms", "room25"), default="two_rooms",
                   help="which game to moderate (default two_rooms); room25 is Room 25 (see the README)")
    p.add_argument("--mode", choices=("suspicion", "cooperation"), help="Room 25: the game mode")
    p.add_argument("--guards", type=int, help="Room 25, suspicion mode: 1 or 2 guards")
    p.add_argument("--programming-seconds", type=int, metavar="S",
                   help="Room 25: a timer for each programming phase, with a spoken countdown (default: no timer)")


def check_options(args: argparse.Namespace) -> None:
    """Room 25's options go with ``--game room25`` only."""
    if args.game != "room25":
        for option in ("mode", "guards", "programming_seconds"):
            if getattr(args, option) is not None:
                raise UsageError(f"--{option.replace('_', '-')} is a Room 25 option: add --game room25")


def run_room25(args: argparse.Namespace, env: Environment) -> int:
    """Start (or ``--resume``) a Room 25 game and run it until the result, 'quit' or the end of input."""
    devices = device_options(args)
    if devices.room_a_in is not None or devices.room_b_in is not None or devices.room_b_out is not None \
            or devices.split_stereo is not None:
        raise UsageError("Room 25 is played at one table: give its microphone with --mic and its speaker with "
                         "--room-a-out (or --audio-out DIR)")
    if getattr(args, "web", None) is not None:
        raise UsageError("the web panel (--web) shows Two Rooms and a Boom's rooms; it has no Room 25 pages yet")
    if args.resume and (args.mode or args.guards or args.programming_seconds):
        raise UsageError("--resume continues the saved game with its own set-up: leave out --mode, --guards and "
                         "--programming-seconds")
    if not args.resume and args.mode is None:
        raise UsageError("Room 25 needs --mode suspicion (with --guards 1 or 2) or --mode cooperation")
    # A Two Rooms "play --resume" lands here too when its save is a Room 25 game (commands/play.py).
    journal = Journal(args.state or (default_state() if args.game == "room25" else default_path()))
    if args.resume:
        journal.lock()
        try:
            return _play(args, env, journal, *_restored(journal))
        finally:
            journal.unlock()
    names = _roster(args)
    plan = plan_for(args.mode, len(names), args.guards, args.programming_seconds)
    journal.lock()
    try:
        engine = Room25Engine.new(plan, names, clock=SystemClock(), grammar=load_grammar("en", "room25"),
                                  catalog=load_catalog(args.lang))
        return _play(args, env, journal, engine, None)
    finally:
        journal.unlock()


def _restored(journal: Journal) -> tuple[Room25Engine, Saved]:
    """The saved game, on a clock that counts from its epoch (the time it was down has passed in the game too)."""
    journal.remove_leftovers()
    saved = journal.load()
    if not is_room25(saved.state):
        raise JournalError(f"{journal.path} holds a game of Two Rooms: resume it without --game room25")
    if saved.finished:
        raise JournalError(f"the saved game at {journal.path} is already over; start a new one")
    engine = Room25Engine(Room25State.from_dict(saved.state), clock=SystemClock(saved.epoch),
                          grammar=load_grammar("en", "room25"), catalog=load_catalog(saved.lang))
    return engine, saved


def _roster(args: argparse.Namespace) -> list[str]:
    if args.roster:
        return check_players(load_roster(args.roster, counted=False), source=str(args.roster))
    if args.players:
        return check_players(parse_names(args.players), source="--players")
    raise UsageError("say who plays: --players Ann,Ben,... or --roster FILE")


def _claim(journal: Journal, new: bool) -> bool:
    """A saved game is never replaced silently: a finished Room 25 game is, anything else needs --new."""
    if not journal.exists():
        return False
    try:
        finished = json.loads(journal.path.read_text(encoding="utf-8"))["state"]["machine"] == "result"
    except (OSError, ValueError, KeyError, TypeError):
        finished = False
    if finished or new:
        return not finished
    raise JournalError(f"an unfinished game is saved in {journal.path}: continue it with 'moderator play --game room25 "
                       f"--resume --state {journal.path}', or add --new to start another (the saved one is kept "
                       "beside it, renamed with the date and time)")


def _play(args: argparse.Namespace, env: Environment, journal: Journal, engine: Room25Engine,
          saved: Saved | None) -> int:
    if saved is None:
        journal.remove_leftovers()
    replacing = saved is None and _claim(journal, args.new)
    clock = engine.clock
    epoch, lang = (clock.epoch, args.lang) if saved is None else (saved.epoch, saved.lang)  # type: ignore[attr-defined]
    if args.second_opinion == "auto":
        # Whisper's rules and figures are Two Rooms and a Boom's: Room 25's commands were never measured with it.
        args = argparse.Namespace(**{**vars(args), "second_opinion": "off"})
    hearing = hear(args, env, clock, engine.grammar, engine.state.players)
    timing = live_timing(hearing)
    voice = speak(engine, args, env, None, timing)  # type: ignore[arg-type]  (the table's speaker: room A's)
    listeners = listen(engine, hearing, args, env, voice)  # type: ignore[arg-type]

    def build(saved: Saved, clock: Clock) -> Room25Engine:
        return Room25Engine(Room25State.from_dict(saved.state), clock=clock, grammar=engine.grammar,
                            catalog=engine.catalog)

    log = EventLog(args.events, warn=env.log) if args.events else None
    sinks: list[Any] = [lambda e: print_event(e, env), *([log] if log else [])]
    game = LiveGame(engine, journal, epoch=epoch, lang=lang, events=args.events,  # type: ignore[arg-type]
                    rebuild=build, sinks=sinks, voice=voice, mics=hearing[0].mics if hearing else None,
                    listener=listeners[0] if listeners else None, timing=timing, err=env.stderr,
                    game=saved.game if saved else None, options={"game": "room25"})
    if replacing:
        print(f"(the earlier game is kept in {journal.back_up()})", file=env.stdout)
    if saved is None:
        engine.begin()
    else:
        engine.say("restored")
        engine.resumed()
    if hearing:
        print(f"(listening: the table's microphone, with {described(hearing[0].recognizer)}; typed commands work too)",
              file=env.stdout)
    game.save()
    try:
        if env.interactive:
            asyncio.run(tty_loop(game, env))
        else:
            pipe_loop(game, env)
    finally:
        game.close()
        if log is not None:
            log.close()
        for h in hearing:
            h.mics.close()
    print("Game over. Thanks for playing!" if game.finished else
          f"Game saved. Continue with: moderator play --game room25 --resume --state {journal.path}", file=env.stdout)
    return 0


def default_state() -> Path:
    """Where a Room 25 game is saved without --state."""
    return default_path().with_name("room25.json")
