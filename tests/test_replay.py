"""benchmarks.replay: Whisper's side decided again on pocketsphinx's recorded transcripts is the run it stands for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import replay
from moderator.adapters import asr_whisper as W

pytestmark = pytest.mark.skipif(not W.installed(), reason="the whisper extra is not installed (scripts/setup.sh "
                                "installs it): the replay decides Whisper's side")


def test_a_replay_gives_back_every_recorded_outcome_and_refuses_audio_it_has_not_recorded(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    recording = tmp_path / "dev.json"
    assert replay.main(["record", str(recording), "--split", "dev", "--commands", "3", "--conds", "clean + hiss"]) == 0
    kept = json.loads(recording.read_text())
    assert len(kept["rows"]) == 3 and kept["book"], "a row per command, and pocketsphinx's transcripts"
    assert all(row["model"] == "agree" for row in kept["rows"])
    capsys.readouterr()
    assert replay.main(["replay", str(recording), "--rows", str(tmp_path / "rows.jsonl")]) == 0
    printed = capsys.readouterr().out
    right = sum(row["outcome"] == "right" for row in kept["rows"])
    wrong = sum(row["outcome"] == "wrong" for row in kept["rows"])
    assert f"clean + hiss: {right} ({wrong}) of 3, recorded {right} ({wrong})" in printed
    assert " -> " not in printed, "no outcome changed"
    replayed = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert [(r["outcome"], r["heard"]) for r in replayed] == [(r["outcome"], r["heard"]) for r in kept["rows"]]
    # The oracle: a line per utterance Whisper heard, the command said weighed against it; a command heard right was
    # among those weighed (a recognizer's words parse as it), and the summary counts the commands not right.
    capsys.readouterr()
    assert replay.main(["replay", str(recording), "--oracle", str(tmp_path / "oracle.jsonl")]) == 0
    lines = [json.loads(line) for line in (tmp_path / "oracle.jsonl").read_text().splitlines()]
    assert {line["i"] for line in lines} == {0, 1, 2}
    assert all(line["said_logprob"] <= 0 and len(line["words"]) == len(line["text"].split()) for line in lines)
    for row in kept["rows"]:
        if row["outcome"] == "right":
            assert any(line["weighed"] for line in lines if line["i"] == row["i"]), row
    assert f"oracle, clean + hiss: {3 - right} not right" in capsys.readouterr().out or right == 3
    # A constant of Whisper's side, set for the replay; a name it does not have is refused.
    monkeypatch.setattr(W, "DECODED_LISTS", W.DECODED_LISTS)
    assert replay.main(["replay", str(recording), "--set", "DECODED_LISTS=0"]) == 0 and W.DECODED_LISTS == 0
    with pytest.raises(SystemExit):
        replay.main(["replay", str(recording), "--set", "NO_SUCH_CONSTANT=1"])
    # Audio the recording does not hold (other voices, noises or endpointing since): a clear error, not a decode.
    kept["book"] = {}
    recording.write_text(json.dumps(kept))
    with pytest.raises(SystemExit, match="record it again"):
        replay.main(["replay", str(recording)])


def test_the_oracle_counts_a_command_not_right_as_within_reach_when_an_utterance_of_it_clears_the_bars() -> None:
    rows = [{"i": 0, "cond": "c", "outcome": "right"}, {"i": 1, "cond": "c", "outcome": "missed"},
            {"i": 2, "cond": "c", "outcome": "wrong"}, {"i": 3, "cond": "c", "outcome": "missed"},
            {"i": 1, "cond": "d", "outcome": "missed"}]
    oracle = replay.Oracle.__new__(replay.Oracle)
    oracle.lines = [{"i": 0, "cond": "c", "clears": True, "weighed": True},
                    {"i": 1, "cond": "c", "clears": False, "weighed": True},
                    {"i": 1, "cond": "c", "clears": True, "weighed": False},  # a second utterance of the same command
                    {"i": 2, "cond": "c", "clears": True, "weighed": True},
                    {"i": 1, "cond": "d", "clears": False, "weighed": False}]
    # c: three not right (1, 2, 3); 1 and 2 within reach, only 2 among the commands weighed; 3 never heard by Whisper.
    assert oracle.summary(rows) == {"c": (3, 2, 1), "d": (1, 0, 0)}


def test_a_replay_decodes_anew_only_what_the_recording_does_not_hold_and_counts_it() -> None:
    """An answer to a question the recorded run did not ask (``adaptation.answered``) is not in the recording: with
    ``anew``, the real recognizer decodes it, told what the replay was told to expect, and it is counted. A command's
    utterance (decoded with the whole grammar, no phase's intents) not held is still a stale recording."""
    import numpy as np

    from moderator.ports import Transcript

    class Fake:
        def __init__(self) -> None:
            self.expected: tuple[object, ...] = ()

        def expect(self, *args: object) -> None:
            self.expected = args

        def recognize(self, samples: np.ndarray, rate: int) -> Transcript:
            return Transcript("yes", 0.9)

    made: list[Fake] = []
    recorded = replay.Recorded(None, {}, anew=lambda: made.append(Fake()) or made[-1])
    recorded.expect("grammar", ["Alice"], ["confirm"])
    assert recorded.recognize(np.zeros(160, np.float32), 16000).text == "yes"
    assert recorded.decoded_anew == 1 and made[0].expected == ("grammar", ["Alice"], ["confirm"])
    # What the recording holds is given back as recorded, with no decode.
    book: dict[str, list[object]] = {}
    keeper = replay.Recorded(Fake(), book)
    keeper.expect("grammar", ["Alice"], None)
    keeper.recognize(np.ones(160, np.float32), 16000)
    again = replay.Recorded(None, book, anew=lambda: made.append(Fake()) or made[-1])
    again.expect("grammar", ["Alice"], None)
    assert again.recognize(np.ones(160, np.float32), 16000).text == "yes" and again.decoded_anew == 0
    assert len(made) == 1
    again.expect("grammar", ["Alice"], None)
    with pytest.raises(SystemExit, match="record it again"):
        again.recognize(np.zeros(160, np.float32), 16000)
