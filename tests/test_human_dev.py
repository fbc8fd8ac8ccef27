"""benchmarks.human_dev: Allison's prompts, the dev side's human voice, as a closed set of commands."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from benchmarks.human_dev import INSTALL, SOUNDS, TRANSCRIPTS, allison_set, heard_in, measure, prompts
from moderator.audio.endpoint import RATE
from moderator.audio.mix import noise_gain

installed = SOUNDS.exists() and TRANSCRIPTS.exists() and importlib.util.find_spec("G722") is not None
needs_prompts = pytest.mark.skipif(not installed, reason=f"Allison's prompts are not installed: {INSTALL} "
                                                         "(scripts/setup.sh installs them)")


def test_only_prompts_that_read_as_commands_could_are_kept():
    lines = ["; Core Asterisk Sounds in English", "", "auth-thankyou: Thank you.",
             "agent-loggedoff: Agent Logged off.", "beep: [this is a simple beep tone]", "digits/1: One.",
             "vm-press: Press 1 for yes.", "a-zzyzx: Zzyzx road.", "ha-hold: On-hold music."]
    known = {"thank", "you", "agent", "logged", "off", "press", "for", "yes", "road", "on", "hold", "music", "one"}
    assert prompts(lines, known) == [("auth-thankyou", "thank you"), ("agent-loggedoff", "agent logged off"),
                                     ("ha-hold", "on hold music")]  # no word alone, no digit, no unknown word


def test_each_prompt_gets_its_own_seeded_stretch_of_noise_at_the_snr():
    rng = np.random.default_rng(0)
    data = [(f"p{k}", rng.standard_normal(RATE).astype(np.float32) * 0.1, "thank you") for k in range(2)]
    assert heard_in(data, "clean", None, {}) is data
    bed = rng.standard_normal(10 * RATE).astype(np.float32)
    for kind in ("pink", "babble"):
        mixed = heard_in(data, kind, 12.0, {"babble": bed})
        for (_, clean, _), (_, noisy, text) in zip(data, mixed, strict=True):
            assert text == "thank you"
            assert noise_gain(clean, noisy - clean, 12.0, peak=True) == pytest.approx(1.0, rel=1e-3)
        assert not np.allclose(mixed[0][1] - data[0][1], mixed[1][1] - data[1][1])
        again = heard_in(data, kind, 12.0, {"babble": bed})
        assert all(np.array_equal(x[1], y[1]) for x, y in zip(mixed, again, strict=True))


@needs_prompts
def test_allisons_clean_prompts_are_heard_as_their_sentences():
    data = allison_set(every=60)
    assert 3 <= len(data) <= 6
    for _, samples, text in data:
        assert len(samples) > RATE // 2 and np.abs(samples).max() > 0.05 and len(text.split()) >= 2
    result = measure(data, [("clean", "clean", None), ("white 12 dB", "white", 12.0)], log=lambda _: None)
    assert result["clean"]["original"] >= len(data) - 1  # a human voice, quiet: the original model's task
    assert result["clean"]["auto chose the original"] == len(data)
    assert result["white 12 dB"]["auto chose the original"] == len(data)  # a steady floor, however loud
