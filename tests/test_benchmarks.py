"""The recognition benchmark suite runs end to end on a small subset (it checks the harness, not the figures)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from benchmarks.false_accepts import _poisson_upper
from moderator.adapters.player_voice import parse_voice, speak
from moderator.errors import ScenarioError

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_quick_suite_writes_results_report_and_plot(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--out", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "results.json").read_text())
    engine = result["acceptance"]["engines"]["pocketsphinx"]
    assert engine["full"]["clean"]["n"] == result["acceptance"]["commands"] > 0
    assert {"clean", "12 dB peak"} <= set(engine["full"])
    assert engine["full"]["12 dB peak"]["other_definition_snr_db_mean"] is not None
    fa = result["false_accepts"]["pocketsphinx"]
    assert fa["without wake word"]["by_kind"]["all"]["hours"] > 0
    assert fa["with wake word"]["wake_word"] == "moderator"
    cost = result["cost"]["pocketsphinx"]
    assert cost["peak_rss_mb"] > 0 and cost["launch_to_listening_s"] > 0
    # (The canceller alone can cost more than the echo path around it: the path passes the microphone through
    # untouched once the moderator has been quiet for a while.)
    assert cost["rtf_one_room_aec"] > 0 and cost["rtf_canceller_one_room"] > 0 and cost["rtf_echo_one_room"] > 0
    assert cost["longest_stall_ms"] > 0 and cost["decoder_processes_peak_rss_mb_live"] > 0
    talks = result["barge_in"]["pocketsphinx"]["conditions"]
    assert talks["silence"]["n"] > 0 and any("cancelled" in label for label in talks)
    assert all(cond["echo_rtf"] > 0 for label, cond in talks.items() if "cancelled" in label)
    report = (tmp_path / "report.md").read_text()
    assert "python -m benchmarks --quick" in report
    assert "≥ 98%" in report and "≤ 0.5" in report and "≤ 300 MB" in report
    assert "## While the moderator talks" in report and "share of silence's acceptance" in report
    if shutil.which("pulseaudio") is not None:  # the quick latency run needs the PulseAudio bench
        latency = result["latency"]["pocketsphinx"]
        assert latency["recognized"] > 0 and latency["to_reply_ms"]["p95"] > latency["to_command_ms"]["p50"] > 0
        assert set(latency["breakdown_ms"]) == {"hangover", "chunk", "loop", "decode", "reply_wait", "output"}
        assert "## Latency (pocketsphinx)" in report and "Where the time goes" in report
    ET.fromstring((tmp_path / "acceptance.svg").read_text())  # well-formed


def test_poisson_upper_bound() -> None:
    assert _poisson_upper(0) == pytest.approx(2.996, abs=0.01)
    assert _poisson_upper(3) == pytest.approx(7.754, abs=0.01)


def test_games_name_the_first_decision_made_otherwise_the_winner_too() -> None:
    from benchmarks.games import first_difference

    typed = {"A": [(1, "leader", "Alice")], "B": [(1, "leader", "Erin")], "result": ["blue"]}
    assert first_difference(typed, typed) is None
    assert first_difference(typed, {**typed, "result": []}) == ["result", "blue", None], "a game never decided"
    assert first_difference(typed, {**typed, "B": [(1, "leader", "Frank")], "result": ["red"]}) == [
        "B", (1, "leader", "Erin"), (1, "leader", "Frank")]


def test_a_game_whose_reveal_names_another_president_is_another_game_with_the_same_winner() -> None:
    # An unheard voice's "the president is Alice" kept as "the president is bob" (15 s window, 2026-11-29): Bob was
    # in Alice's room, so the winner was the typed game's, and the run counted as decided as typed.
    from benchmarks.games import decisions, first_difference

    def game(president: str) -> list[dict[str, object]]:
        return [{"type": "round_start"}, {"type": "leader", "room": "A", "player": "Alice"},
                {"type": "result", "winner": "blue", "president": president, "bomber": "Erin"}]

    typed, spoken = decisions(game("Alice")), decisions(game("Bob"))
    assert typed["result"] == [["blue", "Alice", "Erin"]]
    assert first_difference(typed, spoken) == ["result", ["blue", "Alice", "Erin"], ["blue", "Bob", "Erin"]]


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")
def test_espeak_voice_options_change_the_speech() -> None:
    assert parse_voice("espeak-ng:en-us+f3,speed=150,pitch=70") == ("espeak-ng", "en-us+f3,speed=150,pitch=70")
    slow = speak("start the game", "espeak-ng:en-us,speed=120")
    fast = speak("start the game", "espeak-ng:en-us,speed=250")
    assert slow.duration > fast.duration * 1.5
    for bad in ("espeak-ng:en-us,speed=fast", "espeak-ng:en-us,volume=3", "espeak-ng:en-us,pitch=120"):
        with pytest.raises(ScenarioError):
            parse_voice(bad)


def test_long_false_accepts_chatter_holds_no_command() -> None:
    from benchmarks.long_false_accepts import chatter_lines
    from moderator.speech.grammar import NoParse, load_grammar

    roster = ("Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi")
    lines, _ = chatter_lines(roster, count=200, seed=1)
    assert len(lines) == len(set(lines)) == 200
    grammar = load_grammar("en")
    addressed = grammar.addressed("moderator")
    assert all(isinstance(g.parse(line, list(roster)), NoParse) for line in lines for g in (grammar, addressed))
    assert sum(any(name in line for name in roster) for line in lines) > 100  # the roster's names are talked about


def test_long_false_accepts_minutes_cover_the_hours_in_their_shares() -> None:
    from benchmarks.long_false_accepts import KINDS, MINUTE, minutes

    plan = minutes(6.0, wake_every=3)
    heard = [m for m in plan if not m.wake]
    assert len(heard) * MINUTE == 6 * 3600
    for kind, share in KINDS:
        assert abs(sum(m.kind == kind for m in heard) / len(heard) - share) < 0.01
    assert [m for m in plan if m.wake] == [replace(m, wake=True) for m in heard[::3]]
    assert len({m.seed for m in heard}) == len(heard)


def test_long_false_accepts_minutes_render_the_same_from_their_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    from benchmarks import long_false_accepts as lfa
    from benchmarks.pool import W

    monkeypatch.setattr(lfa, "BED_SECONDS", 70.0)
    monkeypatch.setitem(W, "beds", {})
    minute = next(m for m in lfa.minutes(1.0) if m.kind == "music")
    first, _ = lfa.render(minute)
    again, _ = lfa.render(minute)
    assert len(first) == lfa.MINUTE * lfa.RATE and np.array_equal(first, again)
    assert 0.05 < float(np.max(np.abs(first))) <= 1.0
    assert not np.array_equal(first, lfa.render(lfa.Minute("music", 1, "round", minute.seed + 1))[0])


def test_long_false_accepts_splits_have_minutes_beds_and_chatter_of_their_own() -> None:
    """The test split is reported, the dev split tuned on, the fresh split checks a rule that the test audio showed
    the need for, and each freshN after it one the split before it showed: none shares a minute's seed, a bed or its
    chatter lines with another."""
    from itertools import combinations

    from benchmarks.long_false_accepts import BABBLE_BEDS, SPLITS, minutes

    assert {"test", "dev", "fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6", "fresh7",
            "fresh8", "fresh9", "fresh10", "fresh11", "fresh12", "fresh13", "fresh14", "fresh15",
            "fresh16", "fresh17", "fresh18", "fresh19", "fresh20", "fresh21", "fresh22",
            "fresh23", "fresh24", "fresh25", "fresh26"} <= set(SPLITS)
    seeds = {split: {m.seed for m in minutes(6.5, wake_every=0, split=split)} for split in SPLITS}
    assert all(m.split == "fresh2" for m in minutes(0.1, split="fresh2"))
    for a, b in combinations(SPLITS, 2):
        assert seeds[a].isdisjoint(seeds[b]), (a, b)
    _, chatter, beds = zip(*SPLITS.values(), strict=True)
    assert len(set(chatter)) == len(SPLITS)
    assert all(abs(x - y) >= BABBLE_BEDS for x in beds for y in beds if x != y), "beds of its own"


def test_acceptance_decoder_settings_reach_the_workers_recognizers() -> None:
    """``python -m benchmarks.acceptance --decoder fillprob=1e-2`` measures a setting before it is shipped: the value
    reaches the decoder of every worker, over the shipped settings."""
    from benchmarks import pool
    from benchmarks.acceptance import decoder_setting
    from moderator.adapters import sphinx

    assert decoder_setting("fillprob=1e-8") == ("fillprob", 1e-8)
    assert decoder_setting("bestpath=false") == ("bestpath", False)
    assert decoder_setting("maxhmmpf=3000") == ("maxhmmpf", 3000)

    shipped = sphinx.DECODER_SETTINGS.get("fillprob", 1e-8)  # pocketsphinx's default
    got = pool.run({"pocketsphinx": None}, np.zeros(0, np.float32), [(_worker_fillprob, None)], processes=1,
                   log=lambda _: None, decoder={"fillprob": 1e-2})
    assert got == [pytest.approx(1e-2)]
    assert pool.run({"pocketsphinx": None}, np.zeros(0, np.float32), [(_worker_fillprob, None)], processes=1,
                    log=lambda _: None) == [pytest.approx(shipped)]


def test_long_false_accepts_passes_decoder_settings_to_its_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """``long_false_accepts --decoder wip=3.0`` measures a setting's false accepts over the hours, as the acceptance
    benchmark measures its commands: the settings go to the worker pool (whose workers apply them, above)."""
    from benchmarks import long_false_accepts as lfa

    seen: dict[str, object] = {}

    class Stop(Exception):
        pass

    def run(*args: object, **kwargs: object) -> list[object]:
        seen.update(kwargs)
        raise Stop

    monkeypatch.setattr(lfa.pool, "run", run)
    with pytest.raises(Stop):
        lfa.main(["--hours", "0.05", "--wake-every", "0", "--split", "dev", "--decoder", "wip=3.0",
                  "--decoder", "silprob=0.05"])
    assert seen["decoder"] == {"wip": 3.0, "silprob": 0.05}
    with pytest.raises(Stop):
        lfa.main(["--hours", "0.05"])
    assert seen["decoder"] == {}


def test_long_false_accepts_hears_only_the_phases_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--phases hostages`` hears the hostage phase's minutes of the hours alone (a rule that only lists reach), the
    same minutes as in the whole run."""
    from benchmarks import long_false_accepts as lfa

    seen: list[list[object]] = []

    class Stop(Exception):
        pass

    def run(models: object, noise: object, jobs: list[object], **kwargs: object) -> list[object]:
        seen.append(jobs)
        raise Stop

    monkeypatch.setattr(lfa.pool, "run", run)
    for argv in (["--phases", "hostages"], []):
        with pytest.raises(Stop):
            lfa.main(["--hours", "6.5", "--wake-every", "0", "--split", "fresh11", *argv])
    hostages, every = ([m for _, m in jobs] for jobs in seen)  # type: ignore[misc]
    assert hostages == [m for m in every if m.phase == "hostages"] and 0 < len(hostages) < len(every) / 5
    with pytest.raises(SystemExit):
        lfa.main(["--phases", "lunch"])


def _worker_fillprob(_: object) -> float:
    """The fillprob of a ``benchmarks.pool`` worker's pocketsphinx decoder (a job: module-level, to be pickled)."""
    from benchmarks import pool

    return float(pool.W["recognizers"]["pocketsphinx"]._sphinx.batch.config["fillprob"])


@pytest.mark.skipif(shutil.which("flite") is None, reason="flite is not installed")
def test_answers_benchmark_hears_a_clean_yes_with_and_without_the_second_decode() -> None:
    """benchmarks.answers drives the game's own listener in a read-back; a clean "yes" is taken either way, and a
    line of party talk sets off nothing."""
    import numpy as np

    from benchmarks import answers
    from benchmarks.corpus import basic_grammar
    from moderator.listening import make_recognizer

    answers.W.update(noise=np.zeros(16000, np.float32), grammar=basic_grammar(),
                     recognizer=answers.Batch(make_recognizer("pocketsphinx", None, "default")))
    yes = answers.measure(("answer", "yes", None, "flite:rms", 0))
    assert (yes["before"], yes["after"]) == ("right", "right") and yes["after_taken"] == ["confirm {'answer': 'yes'}"]
    talk = answers.measure(("chatter", "did anyone see where I left my drink", None, "flite:rms", 0))
    assert (talk["before"], talk["after"]) == ("nothing", "nothing")
    report = answers.report([yes, talk], "dev", 1, "python -m benchmarks.answers", 1.0)
    assert '| clean + hiss -60 dBFS | "yes" | 1 / 0 of 1 | 1 / 0 of 1 |' in report


@pytest.mark.skipif(shutil.which("flite") is None, reason="flite is not installed")
def test_the_adaptation_benchmark_answers_a_question_as_a_player_and_the_game_hears_it() -> None:
    """``adaptation.answered``: the game's own listener asks "did you say ...?"; the player says "yes" to a question
    about what they said, and the listener acts on the command asked about; "no" to another one, and nothing is
    acted on. Nothing is asked where the game would not ask."""
    from benchmarks import adaptation as A
    from benchmarks.corpus import basic_grammar
    from moderator.listening import pocketsphinx_recognizer

    grammar = basic_grammar()
    items, beds, seed = A.split_items(False, ["flite held-out"], commands=2, beds=False)
    clean = A.TEST_CONDS[0]
    rec = pocketsphinx_recognizer(A.AUTO)
    first, second = items
    reply, acted = A.answered(rec, grammar, first, 0, first.text, clean, beds, seed)
    assert reply == "yes" and acted is not None and (acted.intent, acted.slots) == (first.intent, first.slots)
    reply, acted = A.answered(rec, grammar, first, 0, second.text, clean, beds, seed)
    assert (reply, acted) == ("no", None)
    # What the game never asks about is not asked here either: an answer ("room a"), and anything in the reveal.
    assert A.answered(rec, grammar, first, 0, "room a", clean, beds, seed) == ("", None)
    name = first.roster[0]
    reveal = A.Item(f"{name} is the bomber", "reveal", {"player": name, "role": "bomber"}, first.roster, first.voice,
                    first.group)
    assert A.answered(rec, grammar, reveal, 0, reveal.text, clean, beds, seed) == ("", None)
    predict = A.Item("gambler predicts red", "predict", {"team": "red"}, first.roster, first.voice, first.group)
    assert A.answered(rec, grammar, predict, 0, predict.text, clean, beds, seed) == ("", None)


def test_a_suppressor_in_front_of_whisper_gives_the_words_back_where_they_were() -> None:
    """``benchmarks.suppressors`` runs a 48 kHz suppressor over 16 kHz audio and takes its delay off: one that only
    delays (by three frames) gives the audio back as it was, not shifted."""
    from benchmarks.suppressors import _framewise

    hop, delay = 480, 3 * 480
    queue = np.zeros(delay, np.float32)

    def late(frame: np.ndarray) -> np.ndarray:
        nonlocal queue
        queue = np.concatenate([queue, frame])
        out, queue = queue[:hop], queue[hop:]
        return out

    t = np.arange(16000) / 16000
    audio = (0.3 * np.sin(2 * np.pi * 440 * t) * np.sin(2 * np.pi * 3 * t)).astype(np.float32)
    back = _framewise(late, hop, delay, audio)
    assert len(back) == len(audio)
    middle = slice(200, -200)  # the resampler's edges
    assert np.max(np.abs(back[middle] - audio[middle])) < 0.01
    assert np.max(np.abs(back[middle] - np.roll(audio, 16)[middle])) > 0.05  # a 1 ms shift would show


def test_false_accepts_count_the_questions_asked_over_audio_with_no_command(tmp_path: Path) -> None:
    """``Listener._ask``: a "did you say ...?" over party talk is no false accept, but a nuisance the hours count."""
    if shutil.which("flite") is None:
        pytest.skip("flite is not installed (apt-get install flite); it says the talk")
    from benchmarks import false_accepts
    from moderator.audio.clip import Clip
    from moderator.ports import Transcript

    class Offers:
        name = "offers"

        def expect(self, grammar: object, roster: object, intents: object = None) -> None:
            pass

        def recognize(self, samples: object, rate: int) -> Transcript:
            return Transcript("", 0.4, question="pause")

    wav = tmp_path / "talk.wav"
    subprocess.run(["flite", "-voice", "rms", "-t", "I think we should pause for snacks", "-o", str(wav)], check=True)
    talk = Clip.read(wav).resample(16000).samples
    quiet = np.zeros(16000 * 2, np.float32)
    result = false_accepts.listen(Offers(), "talk", "round", np.concatenate([quiet, talk, quiet]), None)
    assert result["asked"] == ["Did you say: pause? Yes or no."] and result["commands"] == []
    summary = false_accepts.summarize([result])
    assert summary["without wake word"]["by_kind"]["all"]["questions"] == 1
    assert summary["without wake word"]["questions"] == result["asked"]
