"""Property (issue 15): whatever is in a saved game's file, ``moderator play --resume`` either resumes it or
refuses it in one line, exit 1, no traceback, and leaves the file as it was. Random bytes, and a real save with
one of its values (anywhere in it) replaced by a random JSON shape, go through the real CLI in-process."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from moderator import cli
from moderator.env import Environment
from moderator.save_check import check_file

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
PLAYERS = "Alice,Bob,Carol,Dave,Erin,Frank,Grace,Heidi"
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8),
                   st.sampled_from(["A", "B", "Alice", "Zed", "round.running", "hostages", 1e308, -1, 0, 99]))
SHAPE = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                     st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                     max_leaves=10)


def play(*argv: str, stdin: str = "quit\n") -> tuple[int, str]:
    env = Environment(stdin=io.StringIO(stdin), stdout=io.StringIO(), stderr=io.StringIO())
    return cli.main(["play", *argv], env), env.stderr.getvalue()  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real save of a game in its first round, with leaders."""
    state = tmp_path_factory.mktemp("real") / "g.json"
    status, err = play("--players", PLAYERS, "--seed", "1", "--state", str(state),
                       stdin="start the game\nA: I appoint Alice as leader\nquit\n")
    assert status == 0, err
    return json.loads(state.read_text())


def paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in ``data`` a value can be replaced."""
    out = [prefix] if prefix else []
    if isinstance(data, dict):
        for key, value in data.items():
            out += paths(value, (*prefix, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            out += paths(value, (*prefix, i))
    return out


def replaced(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    copy = json.loads(json.dumps(data))
    node = copy
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return copy


def assert_resumed_or_refused(tmp_path: Path, content: bytes) -> None:
    state = tmp_path / "g.json"
    for leftover in tmp_path.iterdir():
        leftover.unlink()
    state.write_bytes(content)
    status, err = play("--resume", "--paused", "--state", str(state))
    if status == 0:  # it was a game after all: then it passed every check
        check_file(json.loads(content))
        return
    assert status == 1, err
    assert "Traceback" not in err and err.count("\n") == 1 and err.startswith("moderator: error: "), err
    assert state.read_bytes() == content, "a refused save must be left as it was"


@SETTINGS
@given(data=st.binary(max_size=300))
def test_random_bytes_as_a_save_are_refused_in_one_line(tmp_path: Path, data: bytes) -> None:
    assert_resumed_or_refused(tmp_path, data)


@SETTINGS
@given(pick=st.integers(min_value=0), value=SHAPE)
def test_a_save_with_any_value_replaced_is_resumed_or_refused_in_one_line(tmp_path: Path, saved: dict[str, Any],
                                                                          pick: int, value: Any) -> None:
    where = paths(saved)
    assert_resumed_or_refused(tmp_path, json.dumps(replaced(saved, where[pick % len(where)], value)).encode())
