"""The event log's objects come from one dataclass per event type, turned into JSON by one function
(``moderator.game.events``); every type is in the contract, docs/scenario-format.md."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from moderator.game import events
from moderator.scenario import load_scenario
from moderator.simulate import run_scenario
from moderator.speech.catalog import load_catalog
from moderator.speech.grammar import load_grammar

ROOT = Path(__file__).parent.parent
SCENARIOS = sorted((ROOT / "tests" / "scenarios").glob("*.yaml"))


def test_to_json_stamps_the_time_and_type_and_leaves_out_omitted_fields() -> None:
    assert events.to_json(events.Announce("A", "undone", "Undone."), 1.5) == {
        "t": 1.5, "type": "announce", "room": "A", "key": "undone", "text": "Undone."}
    assert events.to_json(events.Spoken("B", "help", 1.0, 2.0, cut=True), 2.0)["cut"] is True
    assert list(events.to_json(events.Leader("A", None, "undone"), 0.0)) == ["t", "type", "room", "player", "how"]


def test_an_event_with_a_missing_or_unknown_field_is_a_bug_caught_where_it_is_made() -> None:
    with pytest.raises(TypeError):
        events.Leader("A", "Bob")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        events.RoundEnd(1, late=True)  # type: ignore[call-arg]
    with pytest.raises(dataclasses.FrozenInstanceError):
        events.RoundEnd(1).round = 2  # type: ignore[misc]


def test_every_event_type_is_in_the_contract() -> None:
    contract = (ROOT / "docs" / "scenario-format.md").read_text()
    assert [name for name in events.TYPES if f"`{name}`" not in contract] == []


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_every_logged_event_is_one_of_the_types_with_exactly_its_fields(path: Path) -> None:
    logged: list[dict] = []
    run_scenario(load_scenario(path), grammar=load_grammar(), catalog=load_catalog(), listeners=[logged.append])
    assert logged
    for event in logged:
        cls = events.TYPES[event["type"]]
        names = {f.name for f in dataclasses.fields(cls)}
        required = {f.name for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING}
        assert required <= set(event) - {"t", "type"} <= names, event
        json.dumps(event, allow_nan=False)
