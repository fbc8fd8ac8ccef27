"""benchmarks.room_rise: how far commands stand above the room, per condition (what ``LOUD_RISE`` is chosen on)."""

from __future__ import annotations

import shutil
from typing import Any

import numpy as np
import pytest

from benchmarks import room_rise
from moderator.loop import LOUD_RISE

pytestmark = pytest.mark.skipif(shutil.which("flite") is None or shutil.which("espeak-ng") is None,
                                reason="flite and espeak-ng say the dev split's commands (scripts/setup.sh)")


def test_commands_stand_less_far_above_a_louder_room_and_the_loud_wording_falls_between_6_and_12_db(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    dealt = room_rise._items

    def first_four(*args: Any, **kwargs: Any) -> Any:
        items, beds, seed = dealt(*args, **kwargs)
        return items[:4], beds, seed

    monkeypatch.setattr(room_rise, "_items", first_four)
    found = room_rise.rises("dev")
    assert list(found) == ["clean + hiss", "babble 18 dB", "babble 12 dB", "babble 6 dB", "music 12 dB"]
    medians = [float(np.median(found[label])) for label in list(found)[:4]]
    assert all(len(found[label]) >= 3 for label in found)
    assert medians == sorted(medians, reverse=True), "the louder the babble, the less a command stands above it"
    assert medians[3] < LOUD_RISE < medians[2], "6 dB gets the loud wording, 12 dB does not"
    assert room_rise.main(["--split", "dev"]) == 0
    assert "| babble 6 dB | " in capsys.readouterr().out
