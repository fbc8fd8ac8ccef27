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
