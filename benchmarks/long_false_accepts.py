"""False accepts over hours (issue 10, item 4): at least 6 hours of audio with no command in it, through the
game's ``Listener`` exactly as ``benchmarks.false_accepts`` feeds the suite's half hour.

Run: ``nice -n 10 .venv/bin/python -m benchmarks.long_false_accepts [--hours 6.5] [--wake-every 3]
[--acoustic-model default|party|auto|PATH] [--second-opinion whisper] [--split test|dev|fresh] [--decoder KEY=VALUE]
[--out docs/benchmarks/false_accepts_long.md]``

The audio is built from seeded recipes, one minute at a time, in the worker that hears it (6.5 hours of 16 kHz
float32 would be 1.5 GB in one process). Each minute is heard in the next phase of ``false_accepts.PHASES``:

- **talk** (62%): party conversation. Lines come from ``chatter_lines``: templates full of the roster's names and
  the game's own words ("leader", "hostage", "pause", "time", "vote", "red", "the moderator"), any line that the
  command language (with or without the wake word) would accept as a command left out. Each minute has its
  speakers (the suite's flite and espeak-ng voices, and Festival's when installed), each line at its own level
  and with its own pause, over a microphone floor, party babble or music at 6-18 dB peak-frame SNR, or both,
  and half the minutes through a synthetic room (RT60 0.3-0.8 s, 0.5-3 m).
- **music** (15%): synthesized party music, in a room or not, over a floor.
- **human** (12%): the human recordings of Debian's ``pocketsphinx-testdata`` looped, each minute through its own
  room and noise.
- **babble** (11%): 8-talker babble alone.

Noise seeds (babble 5000+, music 5100+, rooms and levels from the minute's seed) are none of the suite's, the
acoustic model's training's or its tuning's (benchmarks/voices.py).

``--split dev`` is the audio to tune rejection rules on: other minute seeds (``DEV_SEED`` added), other babble and
music beds, and other chatter lines (seed 8, not 7). Its voices are the same families, and its human minutes loop the
same recordings (from other starts, through other rooms and noises). The reported figures are ``--split test``'s.
``--split fresh`` is a third set of minutes, beds and chatter lines (seed 9), for a rule whose form the test split's
audio showed: its test figure is then no unseen check, the fresh one is. ``--split fresh2`` is a fourth (seed 10),
set aside unheard (2026-11-26) for a rule whose form the fresh hours showed (Whisper alone copying its prompt), and
first heard (without Festival's voices, which the machine lacked) to check the mended tokenizer and the letters rule.
``--split fresh3`` is a fifth (seed 11), set aside unheard (2026-11-26) for the rule the fresh2 hours showed the need
for (a command Whisper alone wrote needing the audio's evidence, not the prompt's), and first heard, with Festival's
voices, on 2026-11-26 (13 false accepts, 7 of them reveals in the reveal phase's talk). ``--split fresh4`` to
``--split fresh26`` (seeds 12 to 34) follow the same way: each set aside unheard for the rules the split before it
showed the need for, and first heard to check them (fresh4 to fresh10 on 2026-11-27; of fresh11, only the
hostage phase's minutes, ``--phases hostages``, for a rule that only lists reach; fresh12 whole on 2026-11-28;
fresh13 whole on 2026-11-28, for one name decoded as the lists are; fresh14 whole the same day, for its mended
form; fresh15 the same day, for a rule taken out again after it, as it cost a game's "pause"; fresh16 on
2026-11-28, for the provisional early close, mended; fresh17 the same day, a second check of it on the same code;
fresh18 on 2026-11-28, for a name pocketsphinx got wrong heard again by Whisper and a loud room's "come closer";
fresh19 on 2026-11-28, for the room before the words choosing the acoustic model; fresh20 on 2026-11-29, for
either the room before the words or the utterance's spread saying "quiet"; fresh21, set aside unheard the same day,
first heard on 2026-11-29 with Whisper's 15 s window and a looser ``AGAINST_SLACK``, neither shipped; fresh22, set
aside unheard then, first heard later that day, for Whisper's other words by letters alone sparing a command the
audio supports (``SPARE_EVIDENCE``); fresh23, set aside unheard then, first heard on 2026-11-29 for a list command
weighed also in Whisper's way with a comma (``LIST_COMMA``); fresh24, set aside unheard then, first heard on
2026-11-29 (evening) for Whisper's 15 s window shipped with ``AGAINST_SLACK`` 0.5 and ``no_name_against``; fresh25,
set aside unheard then, first heard on 2026-11-29 (night) for the 0.25 s hold after an early close
(``moderator.loop.SECOND_OPINION_HOLD``); fresh26 to fresh28 on 2026-11-29 and 30, each for the rule of its day;
fresh29 on 2026-11-30 for the "did you say ...?" questions, which it counts; fresh30, set aside unheard then, not yet,
for those questions kept out of the reveal).

The wake word: every ``--wake-every``-th minute is heard a second time with the wake word on ("moderator ...").
The rate per hour is given with its one-sided 95% Poisson upper bound; with no false accept in H hours the bound
is 3.0 / H per hour, so 6 hours can show 0.5 per hour at best.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import false_accepts, pool
from benchmarks.acceptance import decoder_setting
from benchmarks.corpus import ROSTERS, VOICES, human_recordings
from benchmarks.pool import W
from benchmarks.voices import babble_bed, have, music, reverberate, room_response, say
from moderator.audio.endpoint import RATE
from moderator.audio.mix import noise_for, scale_noise

MINUTE = false_accepts.SEGMENT
#: The share of the minutes of each kind of audio.
KINDS = (("talk", 0.62), ("music", 0.15), ("human", 0.12), ("babble", 0.11))
BABBLE_BEDS = 4
BED_SECONDS = 240.0
BABBLE_SEED, MUSIC_SEED = 5000, 5100
#: Added to every minute's seed of the dev split (``--split dev``) and of the first fresh one (``--split fresh``); each
#: fresh one after it (``--split fresh2`` to ``--split fresh30``, ``FRESH_SPLITS``) adds ``FRESH_STEP`` more.
DEV_SEED = 77_000_000
FRESH_SEED = 155_000_000
FRESH_STEP = 78_000_000
FRESH_SPLITS = 30
#: Each split's audio: what is added to its minutes' seeds, its chatter lines' seed, and where its babble and music
#: beds start. test is reported, dev is tuned on, fresh checks a rule the test split's audio showed the need for, and
#: each freshN after it one the split before it showed: fresh is fresh1's audio, each next one ``FRESH_STEP`` on in
#: the minutes' seeds, with the next chatter seed and the next ``BABBLE_BEDS`` beds.
SPLITS = {"test": (0, 7, 0), "dev": (DEV_SEED, 8, BABBLE_BEDS)} | {
    f"fresh{n if n > 1 else ''}": (FRESH_SEED + (n - 1) * FRESH_STEP, 8 + n, (n + 1) * BABBLE_BEDS)
    for n in range(1, FRESH_SPLITS + 1)}
FESTIVAL = ("festival:kal_diphone", "festival:ked_diphone")

#: Conversation at a party that plays this game: the roster's names and the commands' words, and no command.
_TEMPLATES = (
    "I think {a} should be the leader this time",
    "{a} would make a terrible leader, trust me",
    "did you see {a} talking to {b} in the corner",
    "if {a} is a hostage again I am leaving",
    "who do you think the hostages will be",
    "hostage swaps are the best part of this game",
    "{a} always wants to pause the game for snacks",
    "what time is it, I have to leave by eleven",
    "we have plenty of time, relax",
    "{a}, is that your red card or your blue one",
    "I am on the red team, I swear",
    "blue team, blue team, blue team",
    "{a} and {b} keep whispering about the bomber",
    "the president was in our room the whole time",
    "I bet {a} is the gambler",
    "last round {a} was the leader and we lost",
    "the moderator voice sounds like my old teacher",
    "the moderator is a laptop, isn't that funny",
    "let me see your card, {a}",
    "I am ready for another drink",
    "are you ready to go back to the other room",
    "{a} voted for {b} last time, remember",
    "let's undo that whole conversation",
    "could you repeat what {a} said",
    "help me carry these glasses, {a}",
    "start the music again, {a}",
    "{a} said the round is almost over",
    "I want to send {a} over there and keep {b} here",
    "{a}, {b} and {c} are definitely plotting something",
    "who was leader in the other room",
    "nobody appointed me anything",
    "the timer on that phone is so loud",
    "I would never vote for {a}",
    "how many rounds are left after this one",
    "pause the music for a second, {a}",
    "ask {a} how long we have",
    "{a} is not the bomber, {b} is",
    "I told {a} I was red but I am blue",
    "the engineer card is the confusing one",
    "we should swap {a} for {b}",
)


def chatter_lines(roster: tuple[str, ...], *, count: int, seed: int) -> tuple[list[str], int]:
    """``count`` distinct lines of party talk about ``roster``, none of them a command of the game with or
    without the wake word; and how many drawn lines were left out for being one."""
    from moderator.speech.grammar import NoParse, load_grammar

    grammar = load_grammar("en")
    addressed = grammar.addressed(false_accepts.WAKE_WORD)
    rng = random.Random(seed)
    out: list[str] = []
    dropped = 0
    seen: set[str] = set()
    for _ in range(count * 50):
        if len(out) == count:
            break
        a, b, c = rng.sample(roster, 3)
        line = rng.choice(_TEMPLATES).format(a=a, b=b, c=c)
        if line in seen:
            continue
        seen.add(line)
        if any(not isinstance(g.parse(line, list(roster)), NoParse) for g in (grammar, addressed)):
            dropped += 1
            continue
        out.append(line)
    return out, dropped


@dataclass(frozen=True)
class Minute:
    """One minute of the long audio, as a recipe: rendering it needs nothing but this and the caches."""

    kind: str
    index: int
    phase: str
    seed: int
    wake: bool = False
    split: str = "test"
    """``SPLITS``: test (reported), dev (tuned on), fresh and fresh2 to fresh30, each with its own minute seeds,
    beds and chatter."""


def minutes(hours: float, *, wake_every: int = 3, split: str = "test") -> list[Minute]:
    """The minutes of ``hours`` of audio, the kinds in their shares and interleaved; then, again with the wake
    word, every ``wake_every``-th of them (0: none). ``split``: whose minutes (``SPLITS``)."""
    total = round(hours * 3600 / MINUTE)
    counts = {kind: round(share * total) for kind, share in KINDS}
    counts["talk"] += total - sum(counts.values())
    order = sorted(((i / counts[kind], kind, i) for kind, _ in KINDS for i in range(counts[kind])))
    base = SPLITS[split][0]
    out = [Minute(kind, i, false_accepts.PHASES[n % len(false_accepts.PHASES)], base + 1_000_003 * n + i, split=split)
           for n, (_, kind, i) in enumerate(order)]
    again = out[::wake_every] if wake_every else []
    return out + [Minute(m.kind, m.index, m.phase, m.seed, wake=True, split=split) for m in again]


def _voices() -> tuple[str, ...]:
    return VOICES + (FESTIVAL if have("text2wave") else ())


def _bed(kind: str, n: int, split: str = "test") -> np.ndarray:
    """A babble or music bed of ``BED_SECONDS``, made once per worker (each split has beds of its own)."""
    beds = W.setdefault("beds", {})
    if (kind, n, split) not in beds:
        n_seed = n + SPLITS[split][2]
        if kind == "babble":
            from benchmarks.corpus import PARTY_TALK

            beds[kind, n, split] = babble_bed(BED_SECONDS, VOICES, PARTY_TALK, seed=BABBLE_SEED + n_seed)
        else:
            beds[kind, n, split] = music(BED_SECONDS, seed=MUSIC_SEED + n_seed)
    return beds[kind, n, split]


def _floor(rng: np.random.Generator, n: int) -> np.ndarray:
    return (rng.standard_normal(n) * 10 ** (rng.uniform(-65, -50) / 20)).astype(np.float32)


def _room(signal: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    h = room_response(float(rng.uniform(0.3, 0.8)), float(rng.uniform(0.5, 3.0)), seed=int(rng.integers(1 << 30)))
    return reverberate(signal, h)


def _talk(rng: np.random.Generator, split: str = "test") -> np.ndarray:
    lines = W.setdefault(("lines", split), chatter_lines(ROSTERS[0], count=600, seed=SPLITS[split][1])[0])
    speakers = list(rng.choice(_voices(), size=int(rng.integers(2, 5)), replace=False))
    parts, n = [], 0
    while n < MINUTE * RATE:
        said = say(lines[int(rng.integers(len(lines)))], str(rng.choice(speakers))) * 10 ** (rng.uniform(-6, 0) / 20)
        pause = np.zeros(round(rng.uniform(0.2, 1.8) * RATE), np.float32)
        parts += [said.astype(np.float32), pause]
        n += len(said) + len(pause)
    return np.concatenate(parts)[: round(MINUTE * RATE)]


def _human(rng: np.random.Generator) -> np.ndarray:
    recordings = W.setdefault("human", [s for _, s in human_recordings()])
    if not recordings:
        raise SystemExit("the human recordings are missing: apt-get install pocketsphinx-testdata")
    gap = np.zeros(round(0.8 * RATE), np.float32)
    looped = np.concatenate([p for s in recordings for p in (s, gap)])
    start = int(rng.integers(len(looped)))
    return np.tile(looped, 2 + round(MINUTE * RATE) // len(looped))[start : start + round(MINUTE * RATE)]


def render(m: Minute) -> tuple[np.ndarray, dict[str, Any]]:
    """The minute's audio, and how it was made (its background, SNR and room)."""
    rng = np.random.default_rng(m.seed)
    size = round(MINUTE * RATE)
    how: dict[str, Any] = {"room": bool(rng.random() < 0.5)}
    if m.kind == "babble":
        return noise_for(_bed("babble", int(rng.integers(BABBLE_BEDS)), m.split), size, rng) + _floor(rng, size), how
    if m.kind == "music":
        audio = noise_for(_bed("music", int(rng.integers(BABBLE_BEDS)), m.split), size, rng)
        return (_room(audio, rng) if how["room"] else audio) + _floor(rng, size), how
    audio = _talk(rng, m.split) if m.kind == "talk" else _human(rng)
    if how["room"]:
        audio = _room(audio, rng)
    how["background"] = str(rng.choice(["floor", "babble", "music", "babble+music"], p=[0.25, 0.35, 0.25, 0.15]))
    how["snr"] = round(float(rng.uniform(6, 18)), 1)
    mixed = audio + _floor(rng, size)
    for noise in how["background"].split("+"):
        if noise != "floor":
            bed = noise_for(_bed(noise, int(rng.integers(BABBLE_BEDS)), m.split), size, rng)
            mixed += scale_noise(audio, bed, how["snr"], peak=True)
    return (mixed * min(1.0, 0.9 / float(np.max(np.abs(mixed))))).astype(np.float32), how


def hear(m: Minute) -> dict[str, Any]:
    """Render one minute and feed it through a Listener (in a worker of ``benchmarks.pool``)."""
    audio, how = render(m)
    wake = false_accepts.WAKE_WORD if m.wake else None
    result = false_accepts.listen(W["recognizers"]["pocketsphinx"], m.kind, m.phase, audio, wake)
    result.update(minute=asdict(m), how=how)
    return result


def report(results: list[dict[str, Any]], *, command: str, seconds: float, model: str, processes: int) -> str:
    """The Markdown report: per wake-word setting and kind, hours, false accepts, rate and its bound."""
    summary = false_accepts.summarize(results)
    lines = [
        "# False accepts over hours of non-command audio", "",
        f"Command: `{command}` ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {seconds / 60:.0f} min "
        f"on {processes} processes). Acoustic model: {model}. Talk voices: {', '.join(_voices())}"
        f"{'' if have('text2wave') else ' (not Festival: text2wave is not installed)'}. How it is built: "
        "benchmarks/long_false_accepts.py (docstring).", "",
        "| wake word | audio | hours | false accepts | per hour | 95% upper bound | utterances decoded | "
        "\"did you say ...?\" asked |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for label in ("without wake word", "with wake word"):
        if label not in summary:
            continue
        for kind, cell in summary[label]["by_kind"].items():
            lines.append(f"| {summary[label]['wake_word'] or 'off'} | {kind} | {cell['hours']} | "
                         f"{cell['false_accepts']} | {cell['per_hour']} | {cell['per_hour_95_upper']} | "
                         f"{cell['utterances']} | {cell['questions']} |")
    for label in ("without wake word", "with wake word"):
        examples = summary.get(label, {}).get("examples", [])
        if examples:
            lines += ["", f"False accepts {label} (heard → command, phase, audio):", ""]
            lines += [f"- \"{e['heard']}\" → {e['intent']} ({e['phase']}, {e['kind']})" for e in examples]
        asked = summary.get(label, {}).get("questions", [])
        if asked:
            lines += ["", f"Questions asked {label}:", "", *[f"- {text}" for text in asked]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.long_false_accepts", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hours", type=float, default=6.5, help="hours heard without the wake word (6.5)")
    parser.add_argument("--wake-every", type=int, default=3,
                        help="hear every N-th minute again with the wake word on (3; 0: never)")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--acoustic-model", default="default",
                        help="default, party, auto (both, by the room's level) or a PATH (default)")
    parser.add_argument("--second-opinion", choices=("whisper",), default=None,
                        help="Whisper hears every utterance again, giving and checking commands (as the game's option)")
    parser.add_argument("--out", type=Path, default=Path("docs/benchmarks/false_accepts_long.md"))
    parser.add_argument("--json", type=Path, default=None, help="also write every minute's result here")
    parser.add_argument("--split", choices=tuple(SPLITS), default="test",
                        help="test (reported; default), dev (other minutes, beds and chatter lines, to tune on), "
                        "fresh, fresh2 to fresh30 (each a set of its own, to check a rule that the split before it "
                        "showed the need for: the test split, fresh, fresh2 and so on)")
    parser.add_argument("--phases", nargs="*", choices=false_accepts.PHASES, default=None, metavar="PHASE",
                        help="hear only the minutes of these phases (of " + ", ".join(false_accepts.PHASES) + "): a "
                        "rule only one phase's commands can reach is checked on that phase's minutes of the hours, "
                        "and the other minutes stay unheard")
    parser.add_argument("--decoder", type=decoder_setting, action="append", default=[], metavar="KEY=VALUE",
                        help="a pocketsphinx decoder option over the shipped ones, to measure it before shipping it")
    args = parser.parse_args(argv)
    jobs = [(hear, m) for m in minutes(args.hours, wake_every=args.wake_every, split=args.split)
            if not args.phases or m.phase in args.phases]
    started = time.perf_counter()
    results = pool.run({"pocketsphinx": None}, np.zeros(0, np.float32), jobs, processes=args.processes,
                       log=lambda s: print(s, file=sys.stderr, flush=True), label="minutes",
                       acoustic=args.acoustic_model, decoder=dict(args.decoder),
                       second_opinion=args.second_opinion)
    if args.json:  # first: the report is made from it, and can be made again (--from-json)
        args.json.write_text(json.dumps(results, indent=1))
    command = "python -m benchmarks.long_false_accepts " + " ".join(argv if argv is not None else sys.argv[1:])
    text = report(results, command=command.strip(), seconds=time.perf_counter() - started,
                  model=args.acoustic_model
                  + (f", second opinion {args.second_opinion}" if args.second_opinion else ""),
                  processes=args.processes)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
