"""Tests for the pure rules core: hostage tables, decks, round timings and room splits."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moderator.errors import RulesError
from moderator.game import rules
from moderator.game.rules import (
    GamePlan,
    RoundSpec,
    load_tables,
    make_deck,
    make_plan,
    split_rooms,
)

GOOD_TABLES = """
current:
  three_rounds: {6-10: [1, 1, 1], 11-21: [2, 1, 1], 22+: [3, 2, 1]}
  five_rounds: {11-13: [2, 2, 2, 1, 1], 14+: [3, 2, 2, 1, 1]}
"2014":
  three_rounds: {6-10: [1, 1, 1], 11+: [2, 1, 1]}
  five_rounds: {11+: [2, 2, 1, 1, 1]}
"""


def test_basic_plan_for_eight_players() -> None:
    plan = make_plan(8)
    assert plan.rounds == (
        RoundSpec(1, 180, 1),
        RoundSpec(2, 120, 1),
        RoundSpec(3, 60, 1),
    )
    assert dict(plan.deck) == {
        "president": 1,
        "bomber": 1,
        "blue_team": 3,
        "red_team": 3,
    }
    assert (plan.color_share, plan.buried, plan.hostage_table, plan.has_gambler) == (
        False,
        0,
        "current",
        False,
    )


def test_to_dict_has_the_documented_keys_and_plain_types() -> None:
    data = make_plan(11, rounds=5, bury=True).to_dict()
    assert set(data) == {
        "players",
        "rounds",
        "deck",
        "color_share",
        "buried",
        "hostage_table",
        "givesy_backsies",
        "preset",
        "characters",
    }
    assert type(data["deck"]) is dict
    assert data["rounds"][0] == {"round": 1, "seconds": 300, "hostages": 2}


def test_plan_is_frozen_and_its_deck_read_only() -> None:
    plan = make_plan(9)
    with pytest.raises(AttributeError):
        plan.players = 10  # type: ignore[misc]
    with pytest.raises(TypeError):
        plan.deck["gambler"] = 2  # type: ignore[index]
    assert isinstance(hash(plan), int)
    assert plan.has_gambler


@pytest.mark.parametrize(
    ("players", "table", "expected"),
    [
        (10, "current", (1, 1, 1)),
        (11, "current", (2, 1, 1)),
        (21, "2014", (2, 1, 1)),
        (22, "current", (3, 2, 1)),
    ],
)
def test_three_round_boundaries(players: int, table: str, expected: tuple[int, ...]) -> None:
    assert rules.hostages_for(players, 3, table) == expected


@pytest.mark.parametrize(
    ("players", "current", "edition_2014"),
    [
        (11, (2, 2, 2, 1, 1), (2, 2, 1, 1, 1)),
        (13, (2, 2, 2, 1, 1), (2, 2, 1, 1, 1)),
        (14, (3, 2, 2, 1, 1), (3, 2, 2, 1, 1)),
        (18, (4, 3, 2, 1, 1), (4, 3, 2, 1, 1)),
        (30, (5, 4, 3, 2, 1), (5, 4, 3, 2, 1)),
    ],
)
def test_five_round_tables_differ_only_for_11_to_13(
    players: int, current: tuple[int, ...], edition_2014: tuple[int, ...]
) -> None:
    assert rules.hostages_for(players, 5, "current") == current
    assert rules.hostages_for(players, 5, "2014") == edition_2014


def test_bury_deck_includes_backups_and_one_extra_card() -> None:
    assert make_deck(6, bury=True) == {
        "president": 1,
        "bomber": 1,
        "presidents_daughter": 1,
        "martyr": 1,
        "gambler": 1,
        "blue_team": 1,
        "red_team": 1,
    }
    assert make_deck(7, bury=True) == {
        "president": 1,
        "bomber": 1,
        "presidents_daughter": 1,
        "martyr": 1,
        "blue_team": 2,
        "red_team": 2,
    }


def test_timing_variants_keep_hostage_counts() -> None:
    same = make_plan(12, round_seconds=180)
    custom = make_plan(12, durations=[240, 180, 60])
    untimed = make_plan(12, no_timer=True)
    assert [r.seconds for r in same.rounds] == [180, 180, 180]
    assert [r.seconds for r in custom.rounds] == [240, 180, 60]
    assert [r.seconds for r in untimed.rounds] == [None, None, None]
    assert {tuple(r.hostages for r in p.rounds) for p in (same, custom, untimed)} == {(2, 1, 1)}


def test_force_allows_more_than_thirty_with_the_22_plus_row() -> None:
    plan = make_plan(40, rounds=5, force=True)
    assert [r.hostages for r in plan.rounds] == [5, 4, 3, 2, 1]
    assert sum(plan.deck.values()) == 40


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"players": 5},
            "5 players is too few: Two Rooms and a Boom needs 6 to 30 players",
        ),
        ({"players": 5, "force": True}, "needs 6 to 30 players"),
        ({"players": 31}, "use --force"),
        ({"players": 12, "rounds": 4}, "play 3 rounds, or 5 with more than 10 players"),
        (
            {"players": 9, "rounds": 5},
            "5 rounds need more than 10 players; with 9 players play 3 rounds",
        ),
        ({"players": 10, "rounds": 5}, "with 10 players play 3 rounds"),
        ({"players": 9, "hostage_table": "2015"}, "choose current or 2014"),
        ({"players": 9, "durations": [180, 60]}, "3 rounds need 3 durations, got 2"),
        ({"players": 9, "durations": [180, 0, 60]}, "must be positive"),
        ({"players": 9, "round_seconds": -60}, "must be positive"),
        (
            {"players": 9, "durations": [1, 2, 3], "no_timer": True},
            "at most one timing variant",
        ),
        (
            {"players": 9, "round_seconds": 60, "no_timer": True},
            "at most one timing variant",
        ),
        (
            {"players": 9, "round_seconds": 60, "durations": [1, 2, 3]},
            "at most one timing variant",
        ),
    ],
)
def test_bad_setups_say_what_is_allowed(kwargs: dict, message: str) -> None:
    players = kwargs.pop("players")
    with pytest.raises(RulesError, match=message.replace("+", r"\+")):
        make_plan(players, **kwargs)


def test_tables_file_loads_with_both_tables() -> None:
    tables = load_tables()
    assert set(tables) == {"current", "2014"}
    assert all(set(sections) == {3, 5} for sections in tables.values())


def test_a_well_formed_custom_tables_file_loads(tmp_path) -> None:
    path = tmp_path / "tables.yaml"
    path.write_text(GOOD_TABLES, encoding="utf-8")
    assert load_tables(path)["2014"][5][0].hostages == (2, 2, 1, 1, 1)


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (
            GOOD_TABLES.replace("6-10: [1, 1, 1], 11-21", "6-10: [1, 1], 11-21"),
            "needs 3 positive",
        ),
        (
            GOOD_TABLES.replace("11-21: [2, 1, 1], 22+", "12-21: [2, 1, 1], 22+"),
            "should start at 11",
        ),
        (GOOD_TABLES.replace("22+: [3, 2, 1]", "22-40: [3, 2, 1]"), "open-ended"),
        (
            GOOD_TABLES.replace("11+: [2, 2, 1, 1, 1]", "eleven: [2, 2, 1, 1, 1]"),
            "must be a range",
        ),
        (GOOD_TABLES.replace('"2014"', '"2013"'), "table '2014'"),
        ("current: [", "invalid YAML"),
    ],
)
def test_a_broken_tables_file_names_the_file(tmp_path, broken: str, message: str) -> None:
    path = tmp_path / "tables.yaml"
    path.write_text(broken, encoding="utf-8")
    with pytest.raises(RulesError, match=message) as info:
        load_tables(path)
    assert str(path) in str(info.value)


@given(names=st.lists(st.text(min_size=1), unique=True, max_size=40), seed=st.integers())
def test_split_rooms_is_as_even_as_possible_and_keeps_everyone(names: list[str], seed: int) -> None:
    first, second = split_rooms(names, random.Random(seed))
    assert abs(len(first) - len(second)) <= 1
    assert sorted(first + second) == sorted(names)


def test_split_rooms_is_random_and_reproducible() -> None:
    names = [f"p{i}" for i in range(12)]
    assert split_rooms(names, random.Random(3)) == split_rooms(names, random.Random(3))
    assert len({tuple(split_rooms(names, random.Random(seed))[0]) for seed in range(20)}) > 1
    bigger = {len(split_rooms(names[:7], random.Random(seed))[0]) for seed in range(40)}
    assert bigger == {3, 4}


def test_gameplan_type_is_exported() -> None:
    assert GamePlan.__dataclass_params__.frozen  # type: ignore[attr-defined]
