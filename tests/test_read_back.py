"""A hostage choice heard by a microphone is read back, and locks only on "yes"."""

from __future__ import annotations

from typing import Any

import pytest
from tests_support import eight_player_engine
from tests_support import hostage_phase_engine as at_round_end

from moderator.game.engine import Engine
from moderator.game.state import GameState


def said(events: list[dict[str, Any]]) -> list[str]:
    return [e["key"] for e in events if e["type"] == "announce"]


def test_a_spoken_choice_is_read_back_and_locks_on_yes() -> None:
    engine, events = at_round_end()
    assert "confirm" not in engine.allowed_intents()
    assert engine.handle_text("hostages Bob", "A", spoken=True)
    assert said(events)[-1] == "hostages.read_back"
    assert events[-1]["text"] == 'Room A, I heard Bob. Say "yes" to lock, or "no" to choose again.'
    assert engine.state.rooms["A"].hostages is None and engine.state.rooms["A"].pending == ["Bob"]
    assert not [e for e in events if e["type"] == "hostages"]
    assert "confirm" in engine.allowed_intents()
    assert engine.handle_text("yes", "A", spoken=True)
    assert [e for e in events if e["type"] == "hostages"][-1]["players"] == ["Bob"]
    assert engine.state.rooms["A"].hostages == ["Bob"] and engine.state.rooms["A"].pending is None
    assert "confirm" not in engine.allowed_intents()


def test_no_and_undo_take_the_choice_back_before_it_locks() -> None:
    engine, events = at_round_end()
    engine.handle_text("hostages Bob", "A", spoken=True)
    assert engine.handle_text("no", "A", spoken=True)
    assert said(events)[-1] == "hostages.again" and engine.state.rooms["A"].pending is None
    engine.handle_text("hostages Carol", "A", spoken=True)
    assert engine.handle_text("undo", "A", spoken=True)
    assert engine.state.rooms["A"].pending is None
    assert not engine.handle_text("yes", "A", spoken=True), "nothing is waiting for a yes"
    assert events[-2]["type"] == "rejected" and events[-2]["key"] == "refuse.nothing_to_confirm"
    engine.handle_text("hostages Dave", "A", spoken=True)
    engine.handle_text("hostages Carol", "A", spoken=True)  # a new choice replaces the one read back
    engine.handle_text("yes", "A", spoken=True)
    assert engine.state.rooms["A"].hostages == ["Carol"]
    assert not engine.handle_text("undo", "A", spoken=True), "a locked choice cannot be undone"


def test_a_yes_in_the_other_room_does_not_lock_and_a_shared_mic_answers_the_last_read_back() -> None:
    engine, _ = at_round_end()
    engine.handle_text("hostages Bob", "A", spoken=True)
    assert not engine.handle_text("yes", "B", spoken=True)
    engine.handle_text("hostages Grace", None, spoken=True)  # shared mic: room B from the name
    assert engine.state.awaiting == "B"
    engine.handle_text("yes", None, spoken=True)
    assert engine.state.rooms["B"].hostages == ["Grace"] and engine.state.rooms["A"].pending == ["Bob"]
    engine.handle_text("yes", "A", spoken=True)
    assert engine.in_state("parley")


@pytest.mark.parametrize(("mode", "spoken", "reads_back"), [
    ("spoken", False, False), ("spoken", True, True), ("always", False, True), ("never", True, False)])
def test_when_a_choice_is_read_back(mode: str, spoken: bool, reads_back: bool) -> None:
    engine, _ = at_round_end(mode)
    engine.handle_text("hostages Bob", "A", spoken=spoken)
    assert (engine.state.rooms["A"].pending == ["Bob"]) is reads_back
    assert (engine.state.rooms["A"].hostages is None) is reads_back


def test_a_refused_choice_is_not_read_back() -> None:
    engine, events = at_round_end()
    assert not engine.handle_text("hostages Alice", "A", spoken=True)
    assert said(events)[-1] == "refuse.hostage_leader" and engine.state.rooms["A"].pending is None


def test_a_choice_waiting_for_yes_survives_a_crash() -> None:
    engine, _ = at_round_end()
    engine.handle_text("hostages Bob", "A", spoken=True)
    restored = GameState.from_dict(engine.snapshot())
    assert restored.rooms["A"].pending == ["Bob"] and restored.awaiting == "A"


def test_an_unknown_read_back_mode_is_an_error() -> None:
    with pytest.raises(ValueError, match="read_back"):
        Engine(eight_player_engine().state, clock=None, grammar=None, catalog=None,  # type: ignore[arg-type]
               read_back="sometimes")
