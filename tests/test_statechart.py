"""The statechart YAML, its diagram, and its fit with the grammar."""

from __future__ import annotations

import pytest

from moderator.errors import StatechartError
from moderator.game.statechart import CHARTS, Statechart, diagram_path, load_statechart
from moderator.speech.grammar import load_grammar


@pytest.fixture(scope="module")
def chart() -> Statechart:
    return load_statechart()


@pytest.mark.parametrize("name", CHARTS)
def test_committed_diagram_matches_the_yaml(name: str) -> None:
    assert diagram_path(name).read_text(encoding="utf-8") == load_statechart(name).to_markdown(), (
        f"statecharts/{name}.md is out of date: run `moderator diagram --write`"
    )


def test_room25_grammar_intents_map_to_its_triggers_and_every_transition_is_reachable() -> None:
    chart, grammar = load_statechart("room25"), load_grammar("en", "room25")
    assert set(grammar.intents) == set(chart.intents), "room25 grammar intents and statechart intents differ"
    used = set(chart.intents.values()) | set(chart.automatic)
    assert chart.triggers() <= used, chart.triggers() - used
    assert {"setup", "briefing", "turn.programming", "turn.paused", "turn.action_1", "turn.action_2",
            "turn.adrenaline", "turn.countdown", "result"} == set(chart.state_names()) - {"turn"}


def test_diagram_writes_every_chart(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import io

    from moderator.cli import main
    from moderator.commands import diagram
    from moderator.env import Environment

    monkeypatch.setattr(diagram, "diagram_path", lambda name: tmp_path / f"{name}.md")
    env = Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())
    assert main(["diagram", "--write"], env=env) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{name}.md" for name in CHARTS)


def test_every_grammar_intent_maps_to_a_trigger(chart: Statechart) -> None:
    grammar = load_grammar()
    assert set(grammar.intents) == set(chart.intents), "grammar intents and statechart intents differ"
    for intent, trigger in chart.intents.items():
        for room in "AB":
            assert trigger.format(room=room) in chart.triggers(), intent


def test_every_transition_is_reachable_by_an_intent_or_the_engine(chart: Statechart) -> None:
    used = {t.format(room=r) for t in chart.intents.values() for r in "AB"} | set(chart.automatic)
    assert chart.triggers() <= used, chart.triggers() - used


def test_required_states_exist(chart: Statechart) -> None:
    names = set(chart.state_names())
    for state in ("setup", "briefing", "round.running", "round.paused", "hostages.A.choosing",
                  "hostages.B.locked", "parley", "exchange", "game_over", "prediction", "reveal", "result"):
        assert state in names


def test_hostage_regions_lock_independently(chart: Statechart) -> None:
    class Model:
        state: object
        typing = False  # the guard of the host's correction of a typed choice

        def by_host(self) -> bool:
            return self.typing

    m = Model()
    chart.build(m, initial="round.running")
    m.trigger("time_up")  # type: ignore[attr-defined]
    assert sorted(m.state) == ["hostages.A.choosing", "hostages.B.choosing"]  # type: ignore[arg-type]
    m.trigger("hostages_B")  # type: ignore[attr-defined]
    assert not m.may_trigger("hostages_B")  # type: ignore[attr-defined]
    m.typing = True
    assert m.may_trigger("hostages_B"), "the host may correct a choice they typed"  # type: ignore[attr-defined]
    m.typing = False
    assert m.may_trigger("hostages_A")  # type: ignore[attr-defined]
    m.trigger("hostages_A")  # type: ignore[attr-defined]
    m.trigger("all_locked")  # type: ignore[attr-defined]
    assert m.state == "parley"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: d["transitions"].append({"trigger": "x", "source": "nowhere", "dest": None}),
            "unknown state 'nowhere'",
        ),
        (lambda d: d["intents"].update({"start": "missing_trigger"}), "unknown trigger 'missing_trigger'"),
        (lambda d: d.pop("initial"), "missing 'initial'"),
    ],
)
def test_bad_statechart_is_a_clear_error(change, message) -> None:  # type: ignore[no-untyped-def]
    from moderator import yamlio
    from moderator.resources import STATECHARTS

    data = yamlio.load_file(STATECHARTS / "two_rooms.yaml", error=StatechartError)
    change(data)
    with pytest.raises(StatechartError, match=message):
        Statechart.from_dict(data, source="x.yaml")
