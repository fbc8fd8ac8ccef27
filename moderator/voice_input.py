"""Scripted voice input: a scenario's lines spoken by synthetic players (with noise) into the listening loop."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from moderator.adapters.clock import VirtualClock
from moderator.audio.clip import Clip
from moderator.audio.echo import rooms_heard
from moderator.audio.endpoint import RATE
from moderator.audio.mix import noise_for, noise_gain
from moderator.audio.room import EchoRoom
from moderator.calibrate import locate, settle, sweep
from moderator.game.actions import names_said
from moderator.game.engine import Engine
from moderator.loop import Listener
from moderator.scenario import Step
from moderator.simulate import advance
from moderator.speech.grammar import Parsed

#: Real-time-sized pieces, as a microphone delivers them.
CHUNK = 0.1
LEAD_IN = 0.5
TAIL = 1.0
#: With noise, the party is heard this long before the first line, not only its ``LEAD_IN``: a party does not start
#: when the host first speaks to the moderator, and the endpointer follows the room's level from what it heard
#: before an utterance (``benchmarks.acceptance.ROOM_BEFORE`` is the same 4 s).
PARTY_BEFORE = 4.0
#: How long a player waits for the moderator's question to be said before answering it, where the voice cannot tell.
QUESTION_SECONDS = 3.0


def asks_for(asked: Parsed, said: Parsed | None) -> bool:
    """Whether "Did you say ...?" about ``asked`` asks for the command ``said``, as a player hears the question: the
    same intent, and each slot it names as said. "I appoint Erin as leader?" for "Frank appoints Erin as leader" is a
    yes (who appoints is no part of it); a name or a number other than said is a no."""
    return said is not None and said.intent == asked.intent and all(
        said.slots.get(slot) == value for slot, value in asked.slots.items())


class VoiceDelivery:
    """Speaks each step into its room's microphone, chunk by chunk, on the virtual clock.

    With a simulated ``room``, every microphone also hears the moderator's own voice, and hears it all
    the time, not only while a player speaks: between steps the microphones deliver the room's sound
    (the moderator's echo, and the noise) up to the next step (``fill``), as live microphones do.
    ``said`` records when each step's words were spoken (room, start, end), for overlap checks.
    """

    def __init__(
        self,
        listener: Listener,
        speak: Callable[[str], Clip],
        *,
        typed: bool = False,
        noise: np.ndarray | None = None,
        snr: float | None = None,
        peak: bool = True,
        seed: int = 0,
        room: EchoRoom | None = None,
        repeats: int = 0,
    ) -> None:
        self.listener = listener
        #: How many more times a player says a command the moderator did not answer (``simulate --repeats``).
        self.repeats = repeats
        self.repeated = 0
        self._answers = 0
        self._refused: list[str] = []
        #: Per room, the hostage choice its leader last said, and how many read-backs of other names were answered
        #: "no" and chosen again (``_correct_read_back``).
        self._chosen: dict[str, str] = {}
        self.corrected = 0
        #: Each "did you say ...?" the moderator asked about a step, and whether it asked about the command said
        #: (answered "yes") or another one ("no").
        self.questions: list[bool] = []
        self._asking = 0
        self._counting: Engine | None = None
        self.speak = speak
        self.typed = typed
        self.noise = noise
        self.snr = snr
        self.peak = peak
        self.room = room
        self.rng = np.random.default_rng(seed)
        self.said: list[tuple[str | None, float, float]] = []
        self._fed: float | None = None
        self._noise_gain = 0.0

    def __call__(self, engine: Engine, clock: VirtualClock, step: Step) -> None:
        """Deliver one step: typed (text mode), or as audio (voice mode, and always for ``audio:`` steps).

        Spoken, a command the moderator neither took nor refused (it heard nothing, or asked "sorry?") is said
        again, up to ``repeats`` more times, as a player at the table would; so is one it refused as something the
        player did not say (its refusal names what it heard: "Frank is room B's leader" for "hostages Grace"). With
        ``repeats``, a scripted "yes" to a read-back of other hostages than the leader chose is a "no" and the choice
        again first (``_correct_read_back``)."""
        if step.audio is None and self.typed:
            if step.say is not None:
                engine.handle_text(step.say, step.room)
            return
        if self._counting is not engine:
            engine.subscribe(self._count)
            self._counting = engine
        if step.audio is None and self.repeats and step.room is not None:
            meant = self._parse(step.say or "")
            if meant is not None and meant.intent == "hostages":
                self._chosen[step.room] = step.say or ""
            elif meant is not None and meant.slots.get("answer") == "yes":
                self._correct_read_back(engine, clock, step, step.room)
        self._deliver(engine, clock, step)

    def _deliver(self, engine: Engine, clock: VirtualClock, step: Step) -> None:
        """Say ``step``, and again while it is not answered (``__call__``)."""
        tries = 1 + (self.repeats if step.audio is None and self._is_command(step.say or "") else 0)
        for attempt in range(tries):
            answers = self._answers
            self._refused.clear()
            questions = self._asking
            self._say(engine, clock, step)
            if self._asking > questions:
                self._reply(engine, clock, step)
            if self._answers > answers and not self._misheard(step.say or "", answers):
                return
            if attempt + 1 < tries:
                self.repeated += 1

    def _reply(self, engine: Engine, clock: VirtualClock, step: Step) -> None:
        """The moderator asked "Did you say ...?" about ``step`` (``Listener.asked``): the player answers once the
        question has been said, "yes" when it asked about the command the step says (each slot it has as said), else
        "no"."""
        mic = self._mic(engine, step)
        asked = self.listener.asked(mic)
        if asked is None:
            return
        right = asks_for(asked, self._parse(step.say or ""))
        self.questions.append(right)
        idle = getattr(engine.announcer, "idle_at", None)
        until = idle(mic or "both") if idle is not None else float("inf")
        self.fill(engine, clock, until if until != float("inf") else clock.now() + QUESTION_SECONDS)
        self._say(engine, clock, replace(step, say="yes" if right else "no"))

    def _correct_read_back(self, engine: Engine, clock: VirtualClock, step: Step, room: str) -> None:
        """Before a scripted "yes": while the room's read-back names other hostages than its leader chose, the
        leader says "no" and the choice again (up to ``repeats`` times), as at a table, where the read-back is there
        to catch a misheard name. A scripted "no" is said as written."""
        chosen = self._parse(self._chosen.get(room, ""))
        for _ in range(self.repeats):
            pending = engine.state.rooms[room].pending
            if chosen is None or pending is None or sorted(pending) == sorted(chosen.slots["players"]):
                return
            self.corrected += 1
            self._deliver(engine, clock, replace(step, say="no"))
            self._deliver(engine, clock, replace(step, say=self._chosen[room]))

    def _parse(self, text: str) -> Parsed | None:
        parsed = self.listener.grammar.parse(text, self.listener.engine.state.players)
        return parsed if isinstance(parsed, Parsed) else None

    def _count(self, event: dict[str, object]) -> None:
        if event["type"] in ("command", "rejected"):
            self._answers += 1
        if event["type"] == "rejected":
            self._refused.append(str(event["text"]))
        if event["type"] == "announce" and event["key"] == "asked":
            self._asking += 1

    def _misheard(self, said: str, answers: int) -> bool:
        """Whether the only answers to ``said`` since ``answers`` were refusals of other words than it: the player
        hears the reason and knows they were misheard."""
        if self._answers - answers != len(self._refused) or not self._refused:
            return False
        meant = self._parse(said)
        if meant is None:
            return False
        heard = [self._parse(text) for text in self._refused]
        return all(p is None or (p.intent, p.slots) != (meant.intent, meant.slots) for p in heard)

    def _is_command(self, text: str) -> bool:
        return self._parse(text) is not None

    def _say(self, engine: Engine, clock: VirtualClock, step: Step) -> None:
        clip = Clip.read(step.audio) if step.audio is not None else self.speak(step.say or "")
        speech = clip.resample(RATE).samples
        if self.room is not None:  # the player as loud as the signal-to-echo ratio says
            speech = speech * self.room.speech_gain(speech)
        self.fill(engine, clock, clock.now())
        first = self.noise is not None and self.snr is not None and self._noise_gain == 0.0
        lead = LEAD_IN + (PARTY_BEFORE if first else 0.0)
        signal = np.concatenate([np.zeros(round(lead * RATE), np.float32), speech,
                                 np.zeros(round(TAIL * RATE), np.float32)])
        if self.noise is not None and self.snr is not None:
            bed = noise_for(self.noise, len(signal), self.rng)
            under = bed[round((lead - LEAD_IN) * RATE) :]  # the SNR holds over the line, as without the party before
            self._noise_gain = float(noise_gain(speech, under, self.snr, peak=self.peak))
            signal = signal + bed * self._noise_gain
        start = clock.now()
        mic = self._mic(engine, step)
        self.said.append((mic, start + lead, start + lead + len(speech) / RATE))
        self._feed(engine, clock, start, {mic: signal}, len(signal))

    def _mic(self, engine: Engine, step: Step) -> str | None:
        """The microphone ``step`` is said into: its room's, or the shared one."""
        if step.room is None and None not in self.listener.endpointers:  # one microphone per room, and no room given
            return self.room_said_in(engine, step)
        return step.room

    @staticmethod
    def room_said_in(engine: Engine, step: Step) -> str:
        """Where a step without a room is said, with one microphone per room: in the room of the first name it says
        (as a typed line's room follows from its names), else in room A."""
        parsed = engine.grammar.parse(step.say or "", engine.state.players)
        if isinstance(parsed, Parsed):
            for name in names_said(parsed.slots):
                if (room := engine.state.room_of(name)) is not None:
                    return room
        return "A"

    def calibrate(self, engine: Engine, seconds: float) -> None:
        """The set-up chirp, as ``moderator play`` plays it: into each room in turn, found in each microphone
        that hears it (through the simulated room), and the delay handed to the echo path. It takes
        ``seconds`` of the clock, before the briefing."""
        path = self.listener.echo
        if self.room is None or path is None:
            return
        clock = engine.clock
        start = clock.now()
        chirp = sweep()
        found: dict[str | None, list[tuple[float, float]]] = {mic: [] for mic in self.listener.endpointers}
        for i, room in enumerate(("A", "B")):
            at = start + 0.1 + i * seconds / 2
            self.room.played.play(room, chirp, at)
            self.room.played.history()[-1].peak_power = 0.0  # a test signal, not the moderator's level
            n = round((seconds / 2 - 0.1) * RATE)
            level = float(np.sqrt(np.mean(np.square(chirp.samples))))
            for mic in found:
                if room in rooms_heard(mic):
                    heard = self.room.echo(mic, at, n) + self.rng.normal(0, 1e-3 * level, n).astype(np.float32)
                    found[mic].append(locate(self.room.played, room, at, heard))
        settle(path, found)
        self._fed = start + seconds
        clock.set(start + seconds)  # type: ignore[attr-defined]

    def fill(self, engine: Engine, clock: VirtualClock, target: float) -> None:
        """The microphones hear only the room (the moderator's echo, the noise) until clock time ``target``,
        as live microphones do: a party does not fall silent between commands, and an utterance that its noise
        keeps open goes on past the player's words. Without a simulated room or noise, the clock only moves on."""
        if not self._continuous:
            advance(engine, clock, target)
            return
        start = clock.now() if self._fed is None else self._fed
        n = round((target - start) * RATE)
        if n <= 0:
            return
        self._feed(engine, clock, start, {}, n)

    @property
    def _continuous(self) -> bool:
        """Whether every microphone hears the room all the time: a simulated room, or noise at a known level."""
        return self.room is not None or (self.noise is not None and self._noise_gain > 0.0)

    def _room_noise(self, n: int) -> np.ndarray:
        """``n`` samples of the party between commands, at the last command's level (silence without noise)."""
        if self.noise is None:
            return np.zeros(n, np.float32)
        return (noise_for(self.noise, n, self.rng) * self._noise_gain).astype(np.float32)

    def _feed(self, engine: Engine, clock: VirtualClock, start: float, signals: dict[str | None, np.ndarray],
              n: int) -> None:
        """Feed ``signals`` (per microphone; the others hear only the room: its noise, the moderator's echo) chunk
        by chunk from ``start``. Without a simulated room or noise, only the microphones in ``signals`` are fed."""
        step_len = round(CHUNK * RATE)
        mics = list(self.listener.endpointers) if self._continuous else list(signals)
        signals = {mic: signals[mic] if mic in signals else self._room_noise(n) for mic in mics}
        for i in range(0, n, step_len):
            t = start + i / RATE
            advance(engine, clock, t)
            size = min(step_len, n - i)
            for mic in mics:
                chunk = signals[mic][i : i + size]
                if self.room is not None:
                    chunk = chunk + self.room.echo(mic, t, size)
                self.listener.feed(mic, chunk, RATE, t)
        self._fed = start + n / RATE
        advance(engine, clock, self._fed)

#: Party talk with no command in it: the raw material of babble noise (and of false-accept tests).
CHATTER = (
    "did anyone see where I left my drink",
    "I think Bob is lying about his card",
    "this music is really great",
    "can you pass the chips please",
    "who wants another slice of pizza",
    "I am definitely on the blue team",
    "let me see your card first",
    "no way, show me the colour",
    "we should send him over there",
    "I love this game so much",
)
BABBLE_VOICES = ("flite:slt", "flite:rms", "flite:awb", "flite:kal")


def make_babble(
    seconds: float,
    speak: Callable[[str, str], Clip],
    *,
    talkers: int = 6,
    seed: int = 0,
    voices: Sequence[str] = BABBLE_VOICES,
    lines: Sequence[str] = CHATTER,
    spread_db: float = 0.0,
) -> np.ndarray:
    """Multi-talker party babble: ``talkers`` voices each chatting without pause, overlapped, at 16 kHz.

    Each line is said by its talker's voice (``voices`` in turn); with ``spread_db``, each line's level is
    drawn from that many dB below full, as some talkers stand nearer than others.
    """
    rng = np.random.default_rng(seed)
    n = round(seconds * RATE)
    mix = np.zeros(n, np.float32)
    for talker in range(talkers):
        voice = voices[talker % len(voices)]
        parts: list[np.ndarray] = [np.zeros(int(rng.integers(0, RATE)), np.float32)]
        length = len(parts[0])
        while length < n:
            line = speak(lines[int(rng.integers(len(lines)))], voice).resample(RATE).samples
            gap = np.zeros(int(rng.integers(RATE // 10, RATE // 2)), np.float32)
            if spread_db:
                level = 10 ** (rng.uniform(-spread_db, 0) / 20)
                line = (line / max(float(np.max(np.abs(line))), 1e-9) * level).astype(np.float32)
            parts += [line, gap]
            length += len(line) + len(gap)
        mix += np.concatenate(parts)[:n]
    peak = float(np.max(np.abs(mix))) or 1.0
    return (mix / peak * 0.5).astype(np.float32)
