"""The packaged catalogue is consistent, and random advanced games are judged by the objectives' definitions.

Consistency: every card a preset names exists, linked cards name each other, every supported card and preset
has its phrases in all four languages and its name in the grammar, and every supported preset can be dealt at
every player count of its range. The property test deals random presets at random counts, moves the players
to random final rooms, and checks each judged outcome against the objective's definition.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moderator.game import catalogue
from moderator.game.deck import deal
from moderator.game.objectives import Table, acting, fact_id, holder, judge, questions
from moderator.game.rules import make_plan
from moderator.speech.catalog import load_catalog
from moderator.speech.grammar import load_grammar

CAT = catalogue.default()
SUPPORTED = [c for c in CAT.cards.values() if not c.unsupported]
READY = [p for p in CAT.presets.values() if not p.unsupported]


def test_the_catalogue_has_every_card_the_scenario_format_names() -> None:
    named = ["president", "bomber", "gambler", "blue_team", "red_team", "presidents_daughter", "martyr", "doctor",
             "engineer", "nurse", "tinkerer", "intern", "victim", "rival", "survivor", "romeo", "juliet", "butler",
             "maid", "queen", "anti_bomb_robot", "blue_spy", "red_spy", "private_investigator", "mi6", "sniper",
             "target", "decoy", "ahab", "moby", "wife", "mistress", "zombie", "agoraphobe"]
    assert [c for c in named if c not in CAT.cards] == []
    assert len(READY) >= 20 and "the_standard" in CAT.presets and "six_players_at_least_one_loser" in CAT.presets


def test_linked_cards_are_complete_and_backups_exist() -> None:
    for card in CAT.cards.values():
        for other in card.linked:
            assert set(card.linked) | {card.id} == set(CAT.cards[other].linked) | {other}, card.id
        if card.backup:
            assert CAT.cards[card.backup].team == card.team, card.id


@pytest.mark.parametrize("lang", ["en", "fr", "it", "zh"])
def test_every_supported_card_and_preset_is_named_and_explained_in_every_language(lang: str) -> None:
    phrases = load_catalog(lang)
    missing = [f"card.{c.id}" for c in SUPPORTED if f"card.{c.id}" not in phrases.phrases]
    missing += [f"card.{c.id}.help" for c in SUPPORTED if f"card.{c.id}.help" not in phrases.phrases]
    missing += [f"preset.{p}" for p in CAT.presets if f"preset.{p}" not in phrases.phrases]
    assert missing == []


def test_the_grammar_names_exactly_the_supported_cards() -> None:
    roles = set(load_grammar().lists["role"])
    cards = {c.id for c in SUPPORTED} - {"blue_team", "red_team"}
    assert roles == cards


@pytest.mark.parametrize("preset", READY, ids=lambda p: p.id)
def test_every_supported_preset_deals_at_every_count_of_its_range(preset: catalogue.Preset) -> None:
    for players in range(preset.players[0], preset.players[1] + 1):
        plan = make_plan(players, preset=preset.id, rounds=3)
        deck = plan.deck
        assert sum(deck.values()) == players + plan.buried
        assert deck.get("blue_team", 0) == deck.get("red_team", 0)
        for card in preset.cards:
            assert deck.get(card) == 1, (players, card)
        if plan.buried:
            for card in [*preset.cards, *preset.when_burying]:
                backup = CAT.cards[card].backup
                assert backup is None or deck.get(backup) == 1, (players, card)


def _definition(card: str, me: str, t: Table, winner: str) -> bool:
    """Each objective in words, written out again for the test: where ``me`` ends, against whom."""
    room = t.rooms

    def at(c: str) -> str | None:
        p = holder(CAT, t, c)
        return room[p] if p else None

    mine = room[me]
    defs = {
        "gambler": lambda: t.prediction == winner,
        "intern": lambda: mine == at("president"),
        "victim": lambda: mine == at("bomber"),
        "rival": lambda: mine != at("president"),
        "survivor": lambda: mine != at("bomber"),
        "romeo": lambda: mine == at("juliet") == at("bomber"),
        "juliet": lambda: mine == at("romeo") == at("bomber"),
        "butler": lambda: mine == at("maid") == at("president"),
        "maid": lambda: mine == at("butler") == at("president"),
        "queen": lambda: mine != at("president") and mine != at("bomber"),
        "anti_bomb_robot": lambda: mine == at("bomber") != at("president"),
        "ahab": lambda: at("moby") == at("bomber") != mine,
        "moby": lambda: at("ahab") == at("bomber") != mine,
        "wife": lambda: mine == at("president") != at("mistress"),
        "mistress": lambda: mine == at("president") != at("wife"),
        "agoraphobe": lambda: me not in t.hostages,
        "mi6": lambda: t.facts[fact_id(["mi6", "bomber"])] and t.facts[fact_id(["mi6", "president"])],
        "private_investigator": lambda: t.buried is not None and t.guess == t.buried,
        "sniper": lambda: t.shot == holder(CAT, t, "target"),
        "target": lambda: t.shot != me,
        "decoy": lambda: t.shot == me,
    }
    if card in defs:
        return bool(defs[card]())
    return winner == CAT.cards[card].team


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(READY), st.integers(0, 10**6), st.data())
def test_judged_outcomes_satisfy_every_objectives_definition(preset: catalogue.Preset, seed: int,
                                                             data: st.DataObject) -> None:
    rng = random.Random(seed)
    players = data.draw(st.integers(*preset.players))
    plan = make_plan(players, preset=preset.id)
    names = [f"P{i}" for i in range(players)]
    cards, buried = deal(CAT, plan.deck, names, rng, bury=bool(plan.buried))
    dealt = sorted([*cards.values(), *([buried] if buried else [])])
    assert dealt == sorted(c for c, n in plan.deck.items() for _ in range(n))
    in_play = acting(CAT, list(dict.fromkeys(cards.values())), buried)
    table = Table(cards=cards, rooms={p: rng.choice("AB") for p in names}, buried=buried,
                  prediction=rng.choice(["red", "blue"]), guess=rng.choice(sorted(plan.deck)),
                  shot=rng.choice(names), hostages=frozenset(rng.sample(names, rng.randint(0, players))),
                  facts={fact_id(q): rng.random() < 0.5 for q in questions(CAT, in_play)})
    winner, outcomes = judge(CAT, table)
    president, bomber = holder(CAT, table, "president"), holder(CAT, table, "bomber")
    base = "red" if table.rooms[president or ""] == table.rooms[bomber or ""] else "blue"
    doctor_fails = "doctor" in in_play and not table.facts[fact_id(["president", "doctor"])]
    engineer_fails = "engineer" in in_play and not table.facts[fact_id(["bomber", "engineer"])]
    expected = ("none" if doctor_fails and engineer_fails else "red" if doctor_fails
                else "blue" if engineer_fails else base)
    assert winner == expected
    for player, card in cards.items():
        assert outcomes[player]["won"] == _definition(card, player, table, winner), (card, table)


def test_a_recognizer_listens_only_for_the_cards_of_the_games_deck() -> None:
    grammar = load_grammar()
    basic = grammar.narrowed(cards=make_plan(8).deck)
    assert set(basic.lists["role"]) == {"president", "bomber"}
    standard = grammar.narrowed(cards=make_plan(8, preset="the_standard").deck)
    assert set(standard.lists["role"]) == {"president", "bomber", "presidents_daughter", "martyr", "doctor",
                                           "engineer"}
    assert len(grammar.lists["role"]) > 70  # typed lines still parse any card's name
