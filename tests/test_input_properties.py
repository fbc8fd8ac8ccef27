"""Property: whatever is in a roster, settings, scenario or WAV file, moderator either uses it or refuses it
with one line, exit 1, and no traceback, and the file is left as it was (issue 15, "Nothing lost, nothing
frozen"). Random bytes, and random YAML/JSON shapes around each format's own keys, go through the real CLI
in-process. The saved game's file is ``test_crash_resume.py``'s.
"""

from __future__ import annotations

import io
import json
import math
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from moderator import cli
from moderator.env import Environment
from moderator.errors import ExitStatus
from moderator.ports import Transcript

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SIX = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank"]
SCENARIO = {"players": SIX, "options": {"mics": "shared"}, "steps": [{"at": 1, "say": "pause"}]}

# --- what goes in the files -----------------------------------------------------------------------------------------

#: Text with what breaks naive code: control characters (ESC, NUL, C1), line separators, surrogates excluded
#: (a YAML or JSON file cannot hold them), the answers "yes"/"no", commas and '#'.
TEXT = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["", " ", "yes", "No", "A", "B", "setup", "\x1b[31m", "Al\x00ice", "Bob\x9b", "a,,b", "#",
                     "Alice", "Bob", "\u2028", "\u202e", "pause", "start the game", "per-room", "shared"]),
)
SCALAR = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=-10, max_value=10_000),
    st.floats(), st.sampled_from([math.nan, math.inf, -math.inf, 0.4, 1e308, -0.0]), TEXT,
)
SHAPE = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=8),
                                                     st.dictionaries(TEXT, inner, max_size=5)), max_leaves=30)


def often(likely: st.SearchStrategy[Any], rarely: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``likely`` three times in four: random values are mostly refused at the first check, and the checks
    after it are to be reached too."""
    return st.integers(0, 3).flatmap(lambda i: rarely if i == 3 else likely)


def some_of(keys: list[str], values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Mappings with some of ``keys`` (and now and then an unknown one), each with a value from ``values``."""
    return st.dictionaries(often(st.sampled_from(keys), TEXT), values, max_size=len(keys) + 1)


NAMES = often(st.just(SIX), st.one_of(
    st.lists(st.one_of(st.sampled_from(SIX), TEXT, SCALAR), min_size=5, max_size=8), SHAPE))
STEP = often(st.fixed_dictionaries({"at": often(st.floats(-10, 400), SCALAR), "say": often(TEXT, SHAPE)},
                                   optional={"room": often(st.sampled_from(["A", "B"]), SCALAR)}),
             some_of(["at", "room", "say", "audio"], st.one_of(SCALAR, SHAPE)))
OPTIONS = some_of(["rounds", "hostage_table", "bury", "round_seconds", "durations", "no_timer", "force", "mics",
                   "read_back", "wake_word"],
                  st.one_of(SCALAR, st.lists(SCALAR, min_size=3, max_size=3), st.sampled_from(["shared", 3])))
SCENARIOS = often(
    st.fixed_dictionaries({
        "players": NAMES,
        "options": often(st.just({"mics": "shared"}), st.one_of(OPTIONS, SHAPE)),
        "steps": often(st.lists(STEP, max_size=4), SHAPE),
    }, optional={
        "rooms": st.one_of(SHAPE, st.fixed_dictionaries({"A": NAMES, "B": NAMES})), "seed": SCALAR, "name": SHAPE,
    }),
    SHAPE,
)
SCHEDULE = some_of(["warnings", "countdown", "leader_nag"], st.one_of(SCALAR, st.lists(SCALAR, max_size=4)))
SCHEDULES = st.one_of(SHAPE, st.fixed_dictionaries({"schedule": st.one_of(SHAPE, SCHEDULE)}))


def encoded(shapes: st.SearchStrategy[Any]) -> st.SearchStrategy[bytes]:
    """A shape written as YAML or as JSON (YAML reads JSON), or random bytes."""
    def dump(value: Any, as_json: bool) -> bytes:
        if as_json:
            return json.dumps(value).encode()  # NaN and Infinity too: what other programs write
        return yaml.safe_dump(value, allow_unicode=True).encode()

    return st.one_of(st.builds(dump, shapes, st.booleans()), st.binary(max_size=300))


# --- the check ------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield tmp_path_factory.mktemp("inputs")


def run(argv: list[str], path: Path, recognizer: Any = None) -> int:
    """Run the CLI on ``path``; assert the property; return the status (0: the file was good)."""
    before = path.read_bytes()
    env = Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())
    if recognizer is not None:
        env.make_recognizer = lambda *args, **kwargs: recognizer
    status = cli.main(argv, env)  # an exception other than a ModeratorError escapes it, and fails the test
    err = env.stderr.getvalue()
    assert path.read_bytes() == before
    assert "Traceback" not in err
    if status == 0:
        return status
    assert status == ExitStatus.ERROR, err
    assert err.startswith("moderator: error: ") and err.count("\n") == 1, err
    assert str(path) in err, err  # it names the file
    return status


def as_text(names: Any, separator: str) -> bytes:
    """A plain-text roster: the entries, each as Python prints it, between ``separator``."""
    return separator.join(map(str, names if isinstance(names, list) else [names])).encode()


@SETTINGS
@given(data=st.one_of(encoded(NAMES), encoded(st.fixed_dictionaries({"players": NAMES})),
                      st.builds(as_text, NAMES, st.sampled_from(["\n", ",", ", ", "\r\n"]))),
       suffix=st.sampled_from([".txt", ".yaml", ".json", ""]))
def test_any_roster_file(workdir: Path, data: bytes, suffix: str) -> None:
    path, state = workdir / f"friends{suffix}", workdir / "game.json"
    path.write_bytes(data)
    state.unlink(missing_ok=True)
    if run(["play", "--roster", str(path), "--state", str(state)], path):
        assert not state.exists()  # refused before a game was saved


@SETTINGS
@given(data=encoded(SCHEDULES))
def test_any_settings_file(workdir: Path, data: bytes) -> None:
    scenario, path = workdir / "game.yaml", workdir / "settings.yaml"
    scenario.write_text(yaml.safe_dump(SCENARIO))
    path.write_bytes(data)
    run(["simulate", str(scenario), "--quiet", "--settings", str(path)], path)


@SETTINGS
@given(data=encoded(SCENARIOS))
def test_any_scenario_file(workdir: Path, data: bytes) -> None:
    path, events = workdir / "game.yaml", workdir / "events.jsonl"
    path.write_bytes(data)
    events.unlink(missing_ok=True)
    if run(["simulate", str(path), "--quiet", "--events", str(events)], path) == 0:
        for line in events.read_text().splitlines():  # a scenario that ran wrote JSON: no NaN, no Infinity
            json.loads(line, parse_constant=lambda name: pytest.fail(f"{name} in the event log"))


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_a_line_separator_said_in_a_step_keeps_the_event_log_one_event_a_line(workdir: Path, separator: str) -> None:
    """Found by test_any_scenario_file: U+2028 in a typed line is valid inside a JSON string, but cut the log's line
    for a reader that splits lines as Python does (moderator.jsonl escapes it)."""
    path, events = workdir / "game.yaml", workdir / "events.jsonl"
    path.write_text(yaml.safe_dump({**SCENARIO, "steps": [{"at": 0.0, "say": f"pause{separator}"}]}))
    events.unlink(missing_ok=True)
    assert run(["simulate", str(path), "--quiet", "--events", str(events)], path) == 0
    lines = events.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["type"] for line in lines][:1] == ["state"]
    assert any(separator in json.loads(line).get("text", "") for line in lines)


def wav_file(fmt: int, channels: int, rate: int, width: int, frames: int, data: bytes, tail: bytes) -> bytes:
    """A RIFF/WAVE file with this header (any values: 16 and 32-bit fields wrap), then ``data``."""
    block = channels * width
    chunk = struct.pack("<HHIIHH", fmt & 0xFFFF, channels & 0xFFFF, rate & 0xFFFFFFFF, (rate * block) & 0xFFFFFFFF,
                        block & 0xFFFF, (8 * width) & 0xFFFF)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(chunk)) + chunk
    body += b"data" + struct.pack("<I", (frames * block) & 0xFFFFFFFF) + data
    return b"RIFF" + struct.pack("<I", len(body) & 0xFFFFFFFF) + body + tail


FIELD = st.one_of(st.integers(min_value=0, max_value=2**32 - 1), st.sampled_from([0, 1, 2, 3, 4, 8000, 16000]))
WAVS = st.one_of(
    st.binary(max_size=200),
    st.builds(lambda head, rest: head + rest, st.sampled_from([b"RIFF", b"RIFF\x00\x00\x00\x00WAVE"]),
              st.binary(max_size=100)),
    st.builds(wav_file, often(st.just(1), FIELD), often(st.integers(0, 12), FIELD),
              often(st.sampled_from([0, 1, 1000, 8000, 16000, 44100, 10**6]), FIELD), often(st.integers(0, 5), FIELD),
              FIELD, st.binary(max_size=400), st.sampled_from([b"", b"LIST\x04\x00\x00\x00abcd"])),
)


class HearsNothing:
    """A recognizer that takes any audio a WAV file gave, and hears nothing in it."""

    name = "nothing"

    def expect(self, *args: Any, **kwargs: Any) -> None:
        pass

    def recognize(self, samples: Any, rate: int) -> Transcript:
        assert len(samples) == 0 or 8000 <= rate <= 192_000
        return Transcript("", 0.0)


@SETTINGS
@given(data=WAVS)
def test_any_wav_file(workdir: Path, data: bytes) -> None:
    path = workdir / "take.wav"
    path.write_bytes(data)
    run(["recognize", str(path), "--players", ",".join(SIX)], path, HearsNothing())
