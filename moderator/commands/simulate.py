"""``moderator simulate``: play a scripted game on a virtual clock and write its event log (and audio)."""

from __future__ import annotations

import argparse
import contextlib
import math
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moderator import jsonl
from moderator.env import Environment
from moderator.errors import ModeratorError, UsageError
from moderator.game.engine import Engine
from moderator.listening import add_recognizer_options
from moderator.mics import add_echo_options
from moderator.outputs import add_speech_options, check_audio_out, not_an_input, schedule_from
from moderator.play import EventLog
from moderator.scenario import Scenario, load_scenario
from moderator.simulate import run_scenario
from moderator.speech.catalog import load_catalog
from moderator.speech.grammar import load_grammar

if TYPE_CHECKING:
    from moderator.audio.timeline import TimelineOut
    from moderator.speaking import Voice


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``simulate`` subcommand."""
    p = sub.add_parser(
        "simulate",
        help="play a scripted game (scenario YAML) on a virtual clock",
        description="Play a whole game from a scenario file on a virtual clock, with no waiting and no "
        "devices, and write every event to a JSON Lines log. The transcript of what is said is printed. "
        "With --audio-out, what each room heard is written to roomA.wav and roomB.wav. Exit status 0 when "
        "the script ran to its end, even if commands were refused.",
    )
    p.add_argument("scenario", type=Path,
                   help="the scenario file (YAML), or the name of one that comes with moderator (eight_players)")
    p.add_argument("--events", type=Path, metavar="OUT.jsonl", help="write the event log here ('-' for stdout)")
    p.add_argument("--input", choices=("text", "voice"), default="text",
                   help="text: each 'say' goes straight to the parser (default); voice: spoken and recognised")
    p.add_argument("--voice", default="flite:slt", help="synthetic voice for --input voice (ENGINE:VOICE)")
    p.add_argument("--noise", help="noise for --input voice: a WAV file or 'babble'; both rooms hear it for 4 s "
                   "before the first line and between lines too, as a party goes on between commands")
    p.add_argument("--snr", type=float, help="signal-to-noise ratio in dB for --noise (peak-frame definition)")
    p.add_argument("--repeats", type=int, default=0, metavar="N",
                   help="for --input voice: a command the moderator neither takes nor refuses, or refuses as "
                   "words that were not said, is said again, up to N more times, as players at a table repeat "
                   "themselves (default 0: said once)")
    p.add_argument("--echo", type=float, metavar="DB",
                   help="for --input voice: each room's microphone also hears the moderator's own voice through a "
                   "simulated room (20-60 ms late, reverberant), DB under the players (signal-to-echo ratio; "
                   "0: as loud as them). The echo is cancelled (--aec) as in a live game")
    add_echo_options(p)
    # Scripted games keep pocketsphinx alone unless asked: their event logs must not change with what is installed.
    add_recognizer_options(p, second_opinion="off")
    p.add_argument("--seed", type=int, help="override the scenario's seed (room split)")
    add_speech_options(p, devices=False)
    p.add_argument("--quiet", action="store_true", help="do not print the transcript")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, env: Environment) -> int:
    """Run the scenario; write events (and audio); print the transcript."""
    if (args.noise is None) != (args.snr is None):
        raise UsageError("--noise and --snr go together, e.g. --noise babble --snr 12")
    if args.echo is not None and args.input != "voice":
        raise UsageError("--echo is what the microphones hear: use it with --input voice")
    if args.repeats and args.input != "voice":
        raise UsageError("--repeats is for spoken commands: use it with --input voice")
    if args.repeats < 0:
        raise UsageError(f"--repeats takes a count of 0 or more; got {args.repeats}")
    for option, value in (("--snr", args.snr), ("--echo", args.echo)):
        if value is not None and not math.isfinite(value):
            raise UsageError(f"{option} takes a number of decibels, e.g. 12; got {value}")
    scenario = load_scenario(args.scenario)
    if args.seed is not None:
        scenario = replace(scenario, seed=args.seed)
    if args.wake_word is not None or args.read_back is not None:
        options = scenario.options
        scenario = replace(scenario, options=replace(
            options, wake_word=args.wake_word or options.wake_word, read_back=args.read_back or options.read_back))
    return simulate(scenario, args, env)


def simulate(scenario: Scenario, args: argparse.Namespace, env: Environment) -> int:
    """Play ``scenario`` with the output options in ``args``."""
    game = getattr(scenario, "game", "two_rooms")  # a Room 25 scenario has its own grammar and engine
    if game != "two_rooms" and args.echo is not None:
        raise UsageError(f"{scenario.source}: --echo is not available for {game} yet")
    grammar = load_grammar("en", game)  # commands are English-only for now; --lang picks what is said
    catalog = load_catalog(args.lang)
    events_path = args.events
    check_audio_out(args.audio_out)
    if events_path is None and args.audio_out is not None:
        events_path = args.audio_out / "events.jsonl"
    to_stdout = str(events_path) == "-"
    if events_path is not None and not to_stdout:
        inputs = [Path(scenario.source), *(s.audio for s in scenario.steps if s.audio is not None)]
        if getattr(args, "noise", None) not in (None, "babble"):
            inputs.append(Path(args.noise))
        not_an_input(events_path, inputs, "--events" if args.events is not None else "--audio-out")
    log = EventLog(events_path, mode="w") if events_path is not None and not to_stdout else None
    transcript: list[str] = []

    def write(event: dict[str, Any]) -> None:
        if log is not None:
            try:
                log(event)
            except OSError as exc:  # a disk full, or a file such as /proc/version that takes no writes
                raise ModeratorError(f"cannot write the event log {events_path}: {exc.strerror or exc}") from exc
        if to_stdout:
            env.stdout.write(jsonl.line(event) + "\n")
        if event["type"] in ("announce", "command", "rejected"):
            transcript.append(transcript_line(event))
            if not args.quiet and not to_stdout:
                env.stdout.write(transcript[-1] + "\n")

    voice, timeline = None, None
    delivery: list[Any] = []
    spoken = args.input == "voice" or any(step.audio is not None for step in scenario.steps)

    def setup(engine: Engine) -> None:
        nonlocal voice, timeline
        if args.audio_out is not None or args.echo is not None:
            voice, timeline = _give_voice(engine, args, env)
        if spoken:
            delivery.append(_voice_delivery(engine, scenario, args, voice))

    try:
        run = run_scenario if game == "two_rooms" else _room25_runner()
        engine = run(scenario, grammar=grammar, catalog=catalog, listeners=[write], setup=setup,  # type: ignore[arg-type]
                     schedule=schedule_from(args),
                     deliver=(lambda engine, clock, step: delivery[0](engine, clock, step)) if spoken else None,
                     between=(lambda engine, clock, t: delivery[0].fill(engine, clock, t)) if spoken else None)
        if voice is not None:
            voice.finish()  # anything not reported as spoken yet, before the log closes
        if getattr(args, "repeats", 0) and delivery:  # (demo has no --repeats)
            env.log(f"({delivery[0].repeated} times a player said a command again; {delivery[0].corrected} read-backs "
                    "of other hostages than chosen answered no and chosen again)")
        if delivery and delivery[0].questions:
            asked = delivery[0].questions
            env.log(f"({len(asked)} times the moderator asked \"did you say ...?\": {sum(asked)} about the command "
                    "said, answered yes; the others answered no)")
    finally:
        if log is not None:
            with contextlib.suppress(OSError):  # what could not be written was said above
                log.close()
        if voice is not None:
            voice.close()
    if timeline is not None and args.audio_out is not None:
        timeline.extend(math.ceil(engine.last_t * 1000) / 1000)  # the log's times are rounded to the ms
        timeline.close()
        try:
            (args.audio_out / "transcript.txt").write_text("\n".join(transcript) + "\n", encoding="utf-8")
        except OSError as exc:
            raise ModeratorError(f"cannot write {args.audio_out / 'transcript.txt'}: {exc.strerror or exc}") from exc
        if not args.quiet:
            print(f"wrote {args.audio_out}/roomA.wav, roomB.wav ({timeline.end - timeline.t0:.0f} s each), "
                  "timeline.json, events.jsonl, transcript.txt", file=env.stdout)
    return 0


def _room25_runner() -> Any:
    from moderator.room25.scenario import run_room25

    return run_room25


def _give_voice(engine: Engine, args: argparse.Namespace, env: Environment) -> tuple[Voice, TimelineOut | None]:
    """The moderator's voice: into WAV files (--audio-out), or only into the simulated rooms (--echo)."""
    from moderator.audio.reference import Unplayed
    from moderator.audio.timeline import TimelineOut
    from moderator.speaking import make_voice

    timeline = TimelineOut(args.audio_out, t0=engine.clock.now()) if args.audio_out is not None else None
    warn = lambda msg: env.log(f"warning: {msg}")  # noqa: E731
    voice = make_voice(engine, timeline if timeline is not None else Unplayed(),
                       synth=env.make_synthesizer(args.tts, warn=warn), cache_dir=args.cache_dir, warn=warn)
    report = voice.prerender(engine, getattr(engine, "schedule", None))  # type: ignore[arg-type]
    print(f"(prepared {report.rendered + report.cached} phrases before the game in {report.seconds:.2f} s: "
          f"{report.rendered} rendered, {report.cached} from the cache)", file=env.stderr)
    # The briefing is said before round 1, and the script's times count from round 1: start that early,
    # and earlier still by the set-up chirp when the rooms' microphones hear the moderator.
    chirp = CHIRP_SECONDS if args.echo is not None else 0.0
    measure = getattr(engine, "briefing_seconds", None)  # a briefing of several phrases (Room 25) measures itself
    briefing = measure(voice.speaker) if measure else voice.speaker.measure("briefing", engine.briefing_text())
    engine.clock.lead_in(chirp + briefing)  # type: ignore[attr-defined]
    if timeline is not None:
        timeline.t0 = engine.clock.now()
    return voice, timeline


#: The set-up chirp of a simulated room, and the microphones listening for it.
CHIRP_SECONDS = 1.2
#: Seconds of babble made for ``--noise babble``. The microphones hear the party between commands too, so a loop
#: much shorter than a round would say the same chatter again and again (and any false accept with it).
BABBLE_SECONDS = 120.0


def _voice_delivery(engine: Engine, scenario: Scenario, args: argparse.Namespace, voice: Voice | None) -> Any:
    """The listening loop for scripted audio: synthetic players, optional noise and echo, the chosen recognizer."""
    from moderator.adapters.player_voice import parse_voice, speak
    from moderator.audio.clip import Clip
    from moderator.audio.endpoint import RATE
    from moderator.audio.room import EchoRoom
    from moderator.listening import make_recognizer
    from moderator.mics import make_listener
    from moderator.voice_input import VoiceDelivery, make_babble

    parse_voice(args.voice)  # a bad --voice fails before the game starts
    mics = (None,) if scenario.options.shared_mic else ("A", "B")
    # With the moderator's voice, its echo is cancelled out of the microphones (or they are half-duplex).
    recognizer = make_recognizer(args.engine, args.vosk_model, args.acoustic_model, second_opinion=args.second_opinion)
    listener = make_listener(engine, recognizer, mics, voice, aec=args.aec, wake_word=scenario.options.wake_word,
                             ask=getattr(args, "questions", "on") == "on")
    noise = None
    if args.noise == "babble":
        noise = make_babble(BABBLE_SECONDS, speak, seed=scenario.seed)
    elif args.noise is not None:
        noise = Clip.read(Path(args.noise)).resample(RATE).samples
    room = EchoRoom(voice.out, args.echo, seed=scenario.seed) if voice is not None and args.echo is not None else None
    delivery = VoiceDelivery(listener, lambda text: speak(text, args.voice), typed=args.input == "text",
                             repeats=getattr(args, "repeats", 0),
                             noise=noise, snr=args.snr, seed=scenario.seed, room=room)
    if room is not None:
        delivery.calibrate(engine, CHIRP_SECONDS)
    return delivery


def transcript_line(event: dict[str, Any]) -> str:
    """One readable line: what was said to the moderator (<) and what it said (>)."""
    who = {"A": "room A", "B": "room B", "both": "both"}.get(event["room"], event["room"])
    if event["type"] == "announce":
        return f"{event['t']:7.1f}  {who:>6} > {event['text']}"
    mark = "" if event["type"] == "command" else "   (refused)"
    return f"{event['t']:7.1f}  {who:>6} < {event['text']}{mark}"
