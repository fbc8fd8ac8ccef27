"""The advanced game's data rules on a small hand-written catalogue: loading, decks, burying, and judging.

The packaged catalogue's own consistency is tested in test_characters.py; here each rule is checked on cards
written out in the test, so a change to the data cannot hide a change to the rules.
"""

from __future__ import annotations

import random

import pytest

from moderator.errors import RulesError
from moderator.game.catalogue import Catalogue, parse_cards, parse_presets
from moderator.game.deck import Recipe, build, check_cards, deal
from moderator.game.objectives import Table, fact_id, judge, needed_cards, questions, winner

SRC = {"source": "test"}
CARDS = {
    "president": {"team": "blue", "objective": {"team": "blue"}, "backup": "presidents_daughter", **SRC},
    "bomber": {"team": "red", "objective": {"team": "red"}, "backup": "martyr", **SRC},
    "presidents_daughter": {"team": "blue", "objective": {"team": "blue"}, **SRC},
    "martyr": {"team": "red", "objective": {"team": "red"}, **SRC},
    "blue_team": {"team": "blue", "objective": {"team": "blue"}, **SRC},
    "red_team": {"team": "red", "objective": {"team": "red"}, **SRC},
    "gambler": {"team": "grey", "objective": {"predicts": "winner"}, "powers": ["predicts"], **SRC},
    "doctor": {"team": "blue", "objective": {"team": "blue"}, "backup": "nurse",
               "winner_rule": [{"unless": {"shared": ["president", "doctor"]}, "winner": "red"}], **SRC},
    "nurse": {"team": "blue", "objective": {"team": "blue"}, **SRC},
    "intern": {"team": "grey", "objective": {"with": "president"}, **SRC},
    "rival": {"team": "grey", "objective": {"away_from": "president"}, **SRC},
    "romeo": {"team": "grey", "objective": {"all": [{"with_each_other": ["romeo", "juliet"]}, {"with": "bomber"}]},
              **SRC},
    "juliet": {"team": "grey", "objective": {"all": [{"with_each_other": ["romeo", "juliet"]}, {"with": "bomber"}]},
               **SRC},
    "sniper": {"team": "grey", "objective": {"shot": "target"}, "linked": ["target", "decoy"], **SRC},
    "target": {"team": "grey", "objective": {"not": {"shot_by": "sniper"}}, "linked": ["sniper", "decoy"], **SRC},
    "decoy": {"team": "grey", "objective": {"shot_by": "sniper"}, "linked": ["sniper", "target"], **SRC},
    "agoraphobe": {"team": "grey", "objective": {"never_hostage": True}, **SRC},
    "private_investigator": {"team": "grey", "objective": {"guesses": "buried"}, **SRC},
    "hot_potato": {"team": "grey", "unsupported": "swaps cards", **SRC},
}
PRESETS = {
    "loser": {"players": [6, 6], "cards": ["president", "bomber", "intern", "rival", "romeo", "juliet"],
              "team_cards": "none", "bury": "never", **SRC},
    "standard": {"players": [7, 30], "cards": ["president", "bomber", "presidents_daughter", "martyr", "doctor"],
                 "when_burying": ["nurse"], "odd": "bury", **SRC},
    "gunshot": {"players": [6, 10], "cards": ["president", "bomber", "sniper", "target", "decoy"],
                "odd": "gambler", **SRC},
    "potato": {"players": [6, 10], "cards": ["president", "bomber", "hot_potato"], **SRC},
}


@pytest.fixture
def cat() -> Catalogue:
    cards = parse_cards(CARDS, source="t")
    return Catalogue(cards, parse_presets(PRESETS, cards, source="t"))


def test_a_preset_needing_an_unsupported_card_says_which(cat: Catalogue) -> None:
    assert cat.presets["potato"].unsupported == ("hot_potato",)
    with pytest.raises(RulesError, match="Hot Potato"):
        build(cat, Recipe(preset="potato"), 8, bury=False)


def test_objectives_outside_the_vocabulary_are_refused() -> None:
    with pytest.raises(RulesError, match="unknown operator 'near'"):
        parse_cards({**CARDS, "x": {"team": "grey", "objective": {"near": "president"}, **SRC}}, source="t")
    with pytest.raises(RulesError, match="not a valid card"):
        parse_cards({**CARDS, "x": {"team": "grey", "objective": {"with": "nobody"}, **SRC}}, source="t")
    with pytest.raises(RulesError, match="names its source"):
        parse_cards({**CARDS, "x": {"team": "grey", "objective": {"team": "red"}}}, source="t")
    with pytest.raises(RulesError, match="not linked back"):
        parse_cards({**CARDS, "x": {"team": "grey", "objective": {"team": "red"}, "linked": ["intern"], **SRC}},
                    source="t")


def test_a_preset_outside_its_player_range_names_the_range(cat: Catalogue) -> None:
    with pytest.raises(RulesError, match="is for 6 players, not 7"):
        build(cat, Recipe(preset="loser"), 7, bury=False)


def test_team_cards_fill_the_deck_in_equal_numbers(cat: Catalogue) -> None:
    deck, bury = build(cat, Recipe(preset="standard"), 9, bury=False)
    assert not bury
    assert deck == {"president": 1, "bomber": 1, "presidents_daughter": 1, "martyr": 1, "doctor": 1,
                    "blue_team": 2, "red_team": 2}


def test_when_burying_still_leaves_an_odd_count_the_gambler_evens_it(cat: Catalogue) -> None:
    deck, bury = build(cat, Recipe(preset="standard"), 10, bury=False)
    # 10 players: 5 cards leave 5, so a card is buried; 11 cards with the Nurse leave 5 again: the Gambler.
    assert bury and sum(deck.values()) == 11
    assert deck["gambler"] == deck["nurse"] == 1 and deck["blue_team"] == deck["red_team"] == 2


def test_an_odd_count_buries_a_card_when_the_preset_says_so_and_burying_adds_the_backups(cat: Catalogue) -> None:
    deck, bury = build(cat, Recipe(preset="standard"), 8, bury=False)
    # 8 players: 5 special cards leave 3, an odd number, so a card is buried: 9 cards, the Nurse added.
    assert bury and sum(deck.values()) == 9
    assert deck["nurse"] == 1 and deck["blue_team"] == deck["red_team"] == 1


def test_an_odd_count_takes_the_gambler_when_the_preset_says_so(cat: Catalogue) -> None:
    deck, bury = build(cat, Recipe(preset="gunshot"), 8, bury=False)
    assert not bury and deck["gambler"] == 1 and sum(deck.values()) == 8


def test_characters_are_added_to_the_basic_cards(cat: Catalogue) -> None:
    deck, _ = build(cat, Recipe(characters=("intern", "rival")), 8, bury=False)
    assert deck == {"president": 1, "bomber": 1, "intern": 1, "rival": 1, "blue_team": 2, "red_team": 2}
    with pytest.raises(RulesError, match="unknown card 'wizard'"):
        build(cat, Recipe(characters=("wizard",)), 8, bury=False)


def test_linked_cards_are_never_buried(cat: Catalogue) -> None:
    deck, _ = build(cat, Recipe(preset="gunshot"), 9, bury=True)
    players = [f"P{i}" for i in range(9)]
    for seed in range(200):
        cards, buried = deal(cat, deck, players, random.Random(seed), bury=True)
        assert buried not in ("sniper", "target", "decoy")
        assert sorted([*cards.values(), buried]) == sorted(c for c, n in deck.items() for _ in range(n))


def test_a_given_deal_must_deal_the_deck(cat: Catalogue) -> None:
    deck = {"president": 1, "bomber": 1, "blue_team": 2, "red_team": 2}
    players = ["A", "B", "C", "D", "E", "F"]
    good = dict(zip(players, ["president", "bomber", "blue_team", "blue_team", "red_team", "red_team"], strict=True))
    check_cards(cat, deck, players, good, None, bury=False)
    with pytest.raises(RulesError, match="do not deal the deck"):
        check_cards(cat, deck, players, {**good, "F": "blue_team"}, None, bury=False)
    with pytest.raises(RulesError, match="missing: F"):
        check_cards(cat, deck, players, {p: c for p, c in good.items() if p != "F"}, None, bury=False)


def _rooms(a: str, b: str = "") -> dict[str, str]:
    return {p: "A" for p in a.split()} | {p: "B" for p in b.split()}


def test_red_wins_with_the_bomber_in_the_presidents_room_and_the_intern_with_the_president(cat: Catalogue) -> None:
    table = Table(cards={"Al": "president", "Bo": "bomber", "Cy": "intern", "Di": "rival"},
                  rooms=_rooms("Al Bo Cy", "Di"))
    team, out = judge(cat, table)
    assert team == "red"
    assert {p: o["won"] for p, o in out.items()} == {"Al": False, "Bo": True, "Cy": True, "Di": True}


def test_the_daughter_acts_as_a_buried_president(cat: Catalogue) -> None:
    table = Table(cards={"Al": "presidents_daughter", "Bo": "bomber", "Cy": "intern"}, rooms=_rooms("Al Cy", "Bo"),
                  buried="president")
    team, out = judge(cat, table)
    assert team == "blue" and out["Cy"]["won"] and out["Al"]["won"]


def test_the_doctor_rule_turns_the_win_to_red_without_the_card_share(cat: Catalogue) -> None:
    table = Table(cards={"Al": "president", "Bo": "bomber", "Cy": "doctor"}, rooms=_rooms("Al Cy", "Bo"))
    assert winner(cat, table) == "red"
    table.facts = {fact_id(["president", "doctor"]): True}
    assert winner(cat, table) == "blue"
    assert questions(cat, ["president", "bomber", "doctor"]) == [["president", "doctor"]]


def test_sniper_target_decoy_and_the_gambler(cat: Catalogue) -> None:
    cards = {"Al": "president", "Bo": "bomber", "Si": "sniper", "Ta": "target", "De": "decoy", "Ga": "gambler"}
    rooms = _rooms("Al Si Ta", "Bo De Ga")
    _, hit = judge(cat, Table(cards=cards, rooms=rooms, shot="Ta", prediction="red"))
    assert (hit["Si"]["won"], hit["Ta"]["won"], hit["De"]["won"], hit["Ga"]["won"]) == (True, False, False, False)
    _, miss = judge(cat, Table(cards=cards, rooms=rooms, shot="De", prediction="blue"))
    assert (miss["Si"]["won"], miss["Ta"]["won"], miss["De"]["won"], miss["Ga"]["won"]) == (False, True, True, True)


def test_romeo_and_juliet_need_each_other_and_the_bomber(cat: Catalogue) -> None:
    cards = {"Al": "president", "Bo": "bomber", "Ro": "romeo", "Ju": "juliet"}
    _, together = judge(cat, Table(cards=cards, rooms=_rooms("Bo Ro Ju", "Al")))
    _, apart = judge(cat, Table(cards=cards, rooms=_rooms("Bo Ro", "Al Ju")))
    assert together["Ro"]["won"] and together["Ju"]["won"]
    assert not apart["Ro"]["won"] and not apart["Ju"]["won"]


def test_the_agoraphobe_and_the_investigator(cat: Catalogue) -> None:
    cards = {"Al": "president", "Bo": "bomber", "Ag": "agoraphobe", "Pi": "private_investigator"}
    rooms = _rooms("Al Ag", "Bo Pi")
    _, out = judge(cat, Table(cards=cards, rooms=rooms, hostages=frozenset({"Ag"}), buried="intern", guess="intern"))
    assert not out["Ag"]["won"] and out["Pi"]["won"]
    _, out = judge(cat, Table(cards=cards, rooms=rooms, buried="intern", guess="rival"))
    assert out["Ag"]["won"] and not out["Pi"]["won"]


def test_the_reveal_asks_only_for_cards_that_decide_something(cat: Catalogue) -> None:
    assert needed_cards(cat, ["president", "bomber", "blue_team", "red_team", "doctor", "gambler"]) == [
        "president", "bomber"]
    assert needed_cards(cat, ["president", "bomber", "intern", "romeo", "juliet", "sniper", "target"]) == [
        "president", "bomber", "intern", "romeo", "juliet", "sniper", "target"]


def test_when_the_doctor_and_the_engineer_both_fail_no_team_wins() -> None:
    cards = dict(CARDS)
    cards["engineer"] = {"team": "red", "objective": {"team": "red"},
                         "winner_rule": [{"unless": {"shared": ["bomber", "engineer"]}, "winner": "blue"}], **SRC}
    cat = Catalogue(parse_cards(cards, source="t"), {})
    table = Table(cards={"Al": "president", "Bo": "bomber", "Cy": "doctor", "Di": "engineer", "Ed": "blue_team"},
                  rooms=_rooms("Al Bo Cy", "Di Ed"))
    team, out = judge(cat, table)
    assert team == "none" and not any(o["won"] for o in out.values())
    table.facts = {fact_id(["bomber", "engineer"]): True}
    assert winner(cat, table) == "red"  # only the Doctor's rule fires: red, as in seeds/003
    table.facts = {fact_id(["president", "doctor"]): True}
    assert winner(cat, table) == "blue"  # only the Engineer's
