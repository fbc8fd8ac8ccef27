"""Whole scripted advanced games: a preset or characters, a known or spoken deal, the reveal in the rulebook's
order, and every player's outcome in the ``result`` event.

The first tests are games worked out by hand: each expected outcome is written from the card's rule, not
computed. ``test_every_supported_preset_at_its_smallest_and_largest_count`` plays every preset that the
catalogue supports, at both ends of its player range, and checks the outcomes against ``OBJECTIVES``: the
character guide's objectives restated in plain Python, independently of ``moderator.game.objectives``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from moderator.errors import ScenarioError
from moderator.game import catalogue
from moderator.game.deck import deal
from moderator.game.rules import make_plan
from moderator.scenario import scenario_from_dict
from moderator.simulate import run_scenario
from moderator.speech.catalog import load_catalog
from moderator.speech.grammar import load_grammar

GRAMMAR = load_grammar()
CATALOG = load_catalog()
EIGHT = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi"]


def play(data: dict[str, Any]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    run_scenario(scenario_from_dict(data), grammar=GRAMMAR, catalog=CATALOG, listeners=[events.append])
    return events


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def three_rounds(a_sends: list[str], b_sends: list[str], leaders: tuple[str, str]) -> list[dict[str, Any]]:
    """Steps of a 3-round game with one hostage per room per round (6-10 players)."""
    steps: list[dict[str, Any]] = [
        {"at": "setup", "say": "start the game"},
        {"at": 5, "room": "A", "say": f"I appoint {leaders[0]} as leader"},
        {"at": 6, "room": "B", "say": f"I appoint {leaders[1]} as leader"},
    ]
    start = 0
    for seconds, a, b in zip((180, 120, 60), a_sends, b_sends, strict=True):
        end = start + seconds  # the next round starts when the leaders have met, 5 s after time's up
        steps += [{"at": end + 1, "room": "A", "say": f"hostage {a}"},
                  {"at": end + 2, "room": "B", "say": f"hostage {b}"},
                  {"at": end + 5, "say": "leaders have met"}]
        start = end + 5
    return steps


def test_a_known_deal_with_doctor_gambler_intern_and_rival_worked_out_by_hand() -> None:
    cards = {"Alice": "president", "Bob": "intern", "Carol": "doctor", "Dave": "blue_team",
             "Erin": "bomber", "Frank": "rival", "Grace": "gambler", "Heidi": "red_team"}
    steps = three_rounds(["Dave", "Carol", "Bob"], ["Heidi", "Grace", "Frank"], ("Alice", "Erin"))
    steps += [{"at": 400, "say": "gambler predicts red"}, {"at": 401, "say": "no"}]
    events = play({"players": EIGHT, "rooms": {"A": EIGHT[:4], "B": EIGHT[4:]},
                   "options": {"characters": ["intern", "rival", "doctor"]}, "cards": cards, "steps": steps})
    # Final rooms: A Alice, Heidi, Grace, Frank; B Erin, Dave, Carol, Bob. The President (Alice) is away from
    # the Bomber (Erin): blue, but the President never card-shared with the Doctor ("no"): red wins.
    (result,) = of(events, "result")
    assert result["winner"] == "red" and result["gambler"] == "right" and "buried" not in result
    won = {p: c["won"] for p, c in result["characters"].items()}
    assert won == {"Alice": False, "Bob": False, "Carol": False, "Dave": False,  # the intern is not with Alice
                   "Erin": True, "Frank": False, "Grace": True, "Heidi": True}  # the rival is with Alice
    assert result["characters"]["Frank"] == {"card": "rival", "team": "grey", "won": False}
    keys = [e["key"] for e in of(events, "announce") if e["t"] >= 400]
    assert keys == ["reveal.predicted", "reveal.show_cards", "reveal.ask_shared", "result.apart", "result.overruled",
                    "result.gambler_right", "result.character_lost", "result.character_lost"]


def test_a_live_reveal_names_the_cards_that_decide_objectives_and_a_buried_card() -> None:
    """Without a known deal the players name the holders; the Sniper shoots after the Investigator guesses."""
    steps = three_rounds(["Dave", "Carol", "Bob"], ["Heidi", "Grace", "Frank"], ("Alice", "Erin"))
    steps += [
        {"at": 399, "say": "gambler predicts blue"},                     # 9 cards: the Gambler evens the count
        {"at": 400, "say": "the sniper shoots Bob"},                     # refused: the Investigator first
        {"at": 401, "say": "the investigator guesses the martyr"},
        {"at": 402, "say": "the investigator guesses the doctor"},       # refused: asked once
        {"at": 403, "say": "the sniper shoots Bob"},
        {"at": 404, "say": "the president is Alice"},
        {"at": 405, "say": "Erin is the bomber"},
        {"at": 406, "say": "the target is Bob"},
        {"at": 407, "say": "the decoy is Carol"},
        {"at": 408, "say": "the sniper is Dave"},
        {"at": 409, "say": "Frank is the private investigator"},
        {"at": 410, "say": "the buried card is the martyr"},
    ]
    events = play({"players": EIGHT, "rooms": {"A": EIGHT[:4], "B": EIGHT[4:]},
                   "options": {"characters": ["sniper", "target", "decoy", "private_investigator"], "bury": True},
                   "steps": steps})
    rejected = [e["key"] for e in of(events, "rejected") if e["t"] >= 399]
    assert rejected == ["refuse.investigator_first", "refuse.no_guess_now"]
    (result,) = of(events, "result")
    assert result["buried"] == "martyr" and result["winner"] == "blue" and result["gambler"] == "right"
    chars = result["characters"]
    # Only the named cards are known in a live game: the team cards' holders were not asked for.
    assert set(chars) == {"Alice", "Erin", "Bob", "Carol", "Dave", "Frank"}
    assert chars["Bob"] == {"card": "target", "team": "grey", "won": False}  # shot
    assert chars["Carol"] == {"card": "decoy", "team": "grey", "won": False}  # not shot
    assert chars["Dave"] == {"card": "sniper", "team": "grey", "won": True}  # shot the Target
    assert chars["Frank"] == {"card": "private_investigator", "team": "grey", "won": True}  # guessed the Martyr


def test_a_scripted_deal_must_deal_the_games_deck() -> None:
    cards = dict(zip(EIGHT, ["president", "bomber", "intern", "intern", "blue_team", "red_team", "rival",
                             "gambler"], strict=True))
    with pytest.raises(ScenarioError, match="do not deal the deck"):
        scenario_from_dict({"players": EIGHT, "options": {"characters": ["intern", "rival"]}, "cards": cards,
                            "steps": []})
    with pytest.raises(ScenarioError, match="'buried' needs 'cards'"):
        scenario_from_dict({"players": EIGHT, "options": {"bury": True}, "buried": "martyr", "steps": []})


# --- every supported preset -----------------------------------------------------------------------------

End = dict[str, Any]


def _with(card: str) -> Callable[[str, End], bool]:
    return lambda p, e: e["holder"](card) is not None and e["room"][p] == e["room"][e["holder"](card)]


def _away(card: str) -> Callable[[str, End], bool]:
    return lambda p, e: e["holder"](card) is not None and e["room"][p] != e["room"][e["holder"](card)]


def _pair_with(other: str, third: str) -> Callable[[str, End], bool]:
    return lambda p, e: (e["holder"](other) is not None and e["room"][p] == e["room"][e["holder"](other)]
                         and _with(third)(p, e))


#: The objectives of the character guide in plain words, by card (team cards and team characters: their team).
OBJECTIVES: dict[str, Callable[[str, End], bool]] = {
    "gambler": lambda p, e: e["prediction"] == e["winner"],
    "intern": _with("president"),
    "victim": _with("bomber"),
    "rival": _away("president"),
    "survivor": _away("bomber"),
    "romeo": _pair_with("juliet", "bomber"),
    "juliet": _pair_with("romeo", "bomber"),
    "butler": _pair_with("maid", "president"),
    "maid": _pair_with("butler", "president"),
    "queen": lambda p, e: _away("president")(p, e) and _away("bomber")(p, e),
    "anti_bomb_robot": lambda p, e: _with("bomber")(p, e) and _away("president")(p, e),
    "ahab": lambda p, e: _away("bomber")(p, e) and _with("bomber")(e["holder"]("moby"), e),
    "moby": lambda p, e: _away("bomber")(p, e) and _with("bomber")(e["holder"]("ahab"), e),
    "wife": lambda p, e: _with("president")(p, e) and not _with("president")(e["holder"]("mistress"), e),
    "mistress": lambda p, e: _with("president")(p, e) and not _with("president")(e["holder"]("wife"), e),
    "mi6": lambda p, e: e["facts"],  # card-shared with both the President and the Bomber: every answer was the same
    "private_investigator": lambda p, e: e["buried"] is not None and e["guess"] == e["buried"],
    "sniper": lambda p, e: e["shot"] == e["holder"]("target"),
    "target": lambda p, e: e["shot"] != p,
    "decoy": lambda p, e: e["shot"] == p,
    "agoraphobe": lambda p, e: p not in e["sent"],
}


def _preset_game(preset_id: str, players: int, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """A whole game of a preset: a seeded deal, one hostage or more per room each round, the reveal answered."""
    cat = catalogue.default()
    names = [f"P{i:02d}" for i in range(players)]
    rng = random.Random(seed)
    plan = make_plan(players, preset=preset_id, rounds=5 if players > 10 else 3)
    cards, buried = deal(cat, plan.deck, names, rng, bury=bool(plan.buried))
    rooms = {"A": names[: players // 2], "B": names[players // 2:]}
    steps: list[dict[str, Any]] = [{"at": "setup", "say": "start the game"},
                                   {"at": 1, "room": "A", "say": f"I appoint {rooms['A'][0]} as leader"},
                                   {"at": 2, "room": "B", "say": f"I appoint {rooms['B'][0]} as leader"}]
    now, members = 0.0, {r: list(m) for r, m in rooms.items()}
    for spec in plan.rounds:
        now += spec.seconds or 0
        # Never an Ambassador (the moderator refuses one: test_an_ambassador_is_never_a_hostage).
        picks = {r: rng.sample([p for p in members[r][1:] if "cannot_be_hostage" not in cat.cards[cards[p]].powers],
                               spec.hostages) for r in members}
        steps += [{"at": now + 1, "room": r, "say": "hostages " + " and ".join(picks[r])} for r in ("A", "B")]
        steps.append({"at": now + 3, "say": "leaders have met"})
        now += 3
        members = {"A": [p for p in members["A"] if p not in picks["A"]] + picks["B"],
                   "B": [p for p in members["B"] if p not in picks["B"]] + picks["A"]}
    answers = {"prediction": rng.choice(["red", "blue"]), "guess": rng.choice(sorted(set(plan.deck))),
               "shot": rng.choice(names), "facts": rng.random() < 0.5}
    reveal = [f"gambler predicts {answers['prediction']}", f"the investigator guesses the "
              f"{cat.cards[answers['guess']].name}", f"the sniper shoots {answers['shot']}"]
    reveal += [(answers["facts"] and "yes") or "no"] * 4
    steps += [{"at": now + 10 + i, "say": line} for i, line in enumerate(reveal)]
    data = {"players": names, "rooms": rooms, "options": {"preset": preset_id,
                                                          "rounds": 5 if players > 10 else 3},
            "cards": cards, "steps": steps}
    if buried:
        data["buried"] = buried
    return data, answers


def _supported_presets() -> list[tuple[str, int]]:
    cat = catalogue.default()
    return [(p.id, n) for p in cat.presets.values() if not p.unsupported for n in sorted(set(p.players))]


@pytest.mark.parametrize(("preset_id", "players"), _supported_presets())
def test_every_supported_preset_at_its_smallest_and_largest_count(preset_id: str, players: int) -> None:
    cat = catalogue.default()
    data, answers = _preset_game(preset_id, players, seed=players)
    events = play(data)
    results = of(events, "result")
    assert len(results) == 1, [e for e in events if e["type"] in ("rejected", "announce")][-5:]
    (result,) = results
    cards, buried = data["cards"], data.get("buried")
    final = of(events, "game_over")[0]["rooms"]
    room = {p: r for r, members in final.items() for p in members}

    def holder(card: str) -> str | None:
        found = [p for p, c in cards.items() if c == card]
        if not found and buried == card and cat.cards[card].backup:
            return holder(cat.cards[card].backup or "")
        return found[0] if found else None

    sent = {p for e in of(events, "exchange") for p in e["to_A"] + e["to_B"]}
    shot = answers["shot"] if "sniper" in cards.values() else None
    base = "red" if room[holder("president") or ""] == room[holder("bomber") or ""] else "blue"
    # The Doctor's and the Engineer's rules, also when they are buried and the Nurse or the Tinkerer plays them.
    doctor = "doctor" in cards.values() or (buried == "doctor" and "nurse" in cards.values())
    engineer = "engineer" in cards.values() or (buried == "engineer" and "tinkerer" in cards.values())
    fails = {"red" if doctor and not answers["facts"] else None,
             "blue" if engineer and not answers["facts"] else None} - {None}
    winner = "none" if len(fails) == 2 else (fails.pop() if fails else base)
    end = {"room": room, "holder": holder, "winner": winner, "prediction": answers["prediction"],
           "guess": answers["guess"] if "private_investigator" in cards.values() else None, "buried": buried,
           "shot": shot, "sent": sent, "facts": answers["facts"]}
    assert result["winner"] == winner
    assert set(result["characters"]) == set(cards)
    for player, card in cards.items():
        expected = OBJECTIVES[card](player, end) if card in OBJECTIVES else winner == cat.cards[card].team
        assert result["characters"][player] == {"card": card, "team": cat.cards[card].team, "won": expected}, card
    deck = {c: n for c, n in make_plan(players, preset=preset_id, rounds=5 if players > 10 else 3).deck.items()}
    assert sorted([*cards.values(), *([buried] if buried else [])]) == sorted(c for c, n in deck.items()
                                                                               for _ in range(n))


# --- powers during the rounds ------------------------------------------------------------------------------


def _eight(options: dict[str, Any], steps: list[dict[str, Any]], cards: dict[str, str] | None = None,
           ) -> list[dict[str, Any]]:
    data: dict[str, Any] = {"players": EIGHT, "rooms": {"A": EIGHT[:4], "B": EIGHT[4:]}, "options": options,
                            "steps": steps}
    if cards:
        data["cards"] = cards
    return play(data)


def test_an_ambassador_is_never_a_hostage() -> None:
    steps = [{"at": "setup", "say": "start the game"},
             {"at": 5, "room": "A", "say": "I appoint Alice as leader"},
             {"at": 20, "room": "B", "say": "Erin is the red ambassador"},  # a public reveal, said to the moderator
             {"at": 181, "room": "A", "say": "hostage Bob"},
             {"at": 182, "room": "A", "say": "hostage Carol"},
             {"at": 183, "room": "B", "say": "I appoint Frank as leader"},
             {"at": 184, "room": "B", "say": "hostage Erin"},
             {"at": 185, "room": "B", "say": "hostage Grace"}]
    cards = dict(zip(EIGHT, ["president", "blue_ambassador", "blue_team", "blue_team",
                             "red_ambassador", "bomber", "red_team", "red_team"], strict=True))
    events = _eight({"characters": ["blue_ambassador", "red_ambassador"]}, steps, cards)
    refused = [(e["text"], e["key"]) for e in of(events, "rejected")]
    # Bob's card is known from the deal, Erin's from her reveal.
    assert refused == [("hostage Bob", "refuse.ambassador_hostage"), ("hostage Erin", "refuse.ambassador_hostage")]
    assert [e["players"] for e in of(events, "hostages")] == [["Carol"], ["Grace"]]


def test_the_usurper_takes_the_lead_at_once_and_holds_it_that_round_but_not_in_the_last() -> None:
    steps = three_rounds(["Carol", "Dave", "Bob"], ["Frank", "Grace", "Heidi"], ("Alice", "Erin"))
    steps += [{"at": 30, "room": "A", "say": "Bob is the blue usurper"},
              {"at": 31, "room": "A", "say": "3 votes for Carol"},                  # refused: the Usurper holds
              {"at": 32, "room": "B", "say": "Frank is the blue usurper"},          # refused: Bob holds the card
              {"at": 200, "room": "A", "say": "3 votes for Alice"},                 # round 2: votes work again
              {"at": 320, "room": "B", "say": "Heidi is the red usurper"}]          # refused: the last round
    steps.sort(key=lambda s: -1 if s["at"] == "setup" else s["at"])
    events = _eight({"characters": ["blue_usurper", "red_usurper"]}, steps)
    leaders = [(e["room"], e["player"], e["how"]) for e in of(events, "leader")]
    assert leaders == [("A", "Alice", "appointed"), ("B", "Erin", "appointed"), ("A", "Bob", "usurped"),
                       ("A", "Alice", "usurped")]
    refused = [e["key"] for e in of(events, "rejected")]
    assert refused == ["refuse.usurper_holds", "refuse.holds_other", "refuse.usurper_last_round"]


def test_the_bodyguard_sends_one_extra_player_with_the_hostages() -> None:
    steps = [{"at": "setup", "say": "start the game"},
             {"at": 5, "room": "A", "say": "I appoint Alice as leader"},
             {"at": 6, "room": "B", "say": "I appoint Erin as leader"},
             {"at": 181, "room": "A", "say": "hostage Bob"},
             {"at": 182, "room": "A", "say": "the bodyguard sends Alice"},   # refused: the leader stays
             {"at": 183, "room": "A", "say": "the bodyguard sends Carol"},
             {"at": 184, "room": "A", "say": "the bodyguard sends Dave"},    # refused: once a round
             {"at": 185, "room": "B", "say": "hostage Frank"},
             {"at": 190, "say": "leaders have met"}]
    events = _eight({"characters": ["blue_bodyguard"]}, steps)
    assert [e["key"] for e in of(events, "rejected")] == ["refuse.bodyguard_hostage", "refuse.bodyguard_once"]
    (exchange,) = of(events, "exchange")
    assert exchange["to_B"] == ["Bob", "Carol"] and exchange["to_A"] == ["Frank"]


def test_an_advanced_game_saved_mid_reveal_passes_the_save_check_and_resumes() -> None:
    from moderator.adapters.clock import VirtualClock
    from moderator.game.engine import Engine
    from moderator.game.state import GameState
    from moderator.save_check import check_state

    steps = three_rounds(["Dave", "Carol", "Bob"], ["Heidi", "Grace", "Frank"], ("Alice", "Erin"))
    steps += [{"at": 399, "say": "gambler predicts red"}, {"at": 401, "say": "the president is Alice"}]
    engine = run_scenario(scenario_from_dict({"players": EIGHT, "rooms": {"A": EIGHT[:4], "B": EIGHT[4:]},
                                              "options": {"characters": ["intern", "blue_bodyguard"]},
                                              "steps": steps}), grammar=GRAMMAR, catalog=CATALOG)
    saved = engine.state.to_dict()
    check_state(saved, saved_at=engine.clock.now())
    assert saved["named"] == {"president": "Alice"} and saved["sent"] == ["Dave", "Heidi", "Carol", "Grace",
                                                                          "Bob", "Frank"]
    events: list[dict[str, Any]] = []
    resumed = Engine(GameState.from_dict(saved), clock=VirtualClock(500.0), grammar=GRAMMAR, catalog=CATALOG)
    resumed.subscribe(events.append)
    assert resumed.handle_text("the bomber is Erin") and resumed.handle_text("the intern is Bob")
    (result,) = of(events, "result")
    assert result["winner"] == "blue" and result["characters"]["Bob"] == {"card": "intern", "team": "grey",
                                                                          "won": False}
    broken = {**saved, "named": {"wizard": "Alice"}}
    with pytest.raises(Exception, match="not a card of the catalogue"):
        check_state(broken, saved_at=engine.clock.now())
    with pytest.raises(Exception, match="not a preset of the catalogue"):  # a list where an id belongs
        check_state({**saved, "plan": {**saved["plan"], "preset": ["the_standard"]}}, saved_at=engine.clock.now())


def test_an_ambassador_never_leads_never_votes_and_does_not_count_for_the_hostage_table() -> None:
    # 12 players with 2 Ambassadors play as 10: one hostage a round, not the 11-player row's two.
    assert [r.hostages for r in make_plan(12, characters=["blue_ambassador", "red_ambassador"]).rounds] == [1, 1, 1]
    assert [r.hostages for r in make_plan(12).rounds] != [1, 1, 1]
    cards = dict(zip(EIGHT, ["president", "blue_ambassador", "blue_team", "blue_team",
                             "red_ambassador", "bomber", "red_team", "red_team"], strict=True))
    steps = [{"at": "setup", "say": "start the game"},
             {"at": 5, "room": "A", "say": "I appoint Bob as leader"},       # refused: an Ambassador
             {"at": 6, "room": "A", "say": "I appoint Alice as leader"},
             {"at": 7, "room": "A", "say": "2 votes for Carol"},             # 2 of the 3 who vote: a majority
             {"at": 8, "room": "A", "say": "3 votes for Bob"}]               # refused: an Ambassador
    events = _eight({"characters": ["blue_ambassador", "red_ambassador"]}, steps, cards)
    assert [(e["text"], e["key"]) for e in of(events, "rejected")] == [
        ("I appoint Bob as leader", "refuse.ambassador_leader"), ("3 votes for Bob", "refuse.ambassador_leader")]
    assert [(e["player"], e["how"]) for e in of(events, "leader")] == [("Alice", "appointed"), ("Carol", "usurped")]


def test_a_basic_game_takes_only_the_president_and_the_bomber_at_the_reveal() -> None:
    steps = three_rounds(["Dave", "Carol", "Bob"], ["Heidi", "Grace", "Frank"], ("Alice", "Erin"))
    steps += [{"at": 399, "say": "gambler predicts red"}, {"at": 400, "say": "the martyr is Bob"},
              {"at": 401, "say": "the doctor is Bob"}, {"at": 402, "say": "the president is Alice"},
              {"at": 403, "say": "the bomber is Erin"}]
    events = _eight({"bury": True}, steps)
    assert [e["key"] for e in of(events, "rejected")] == ["refuse.basic_reveal", "refuse.not_in_game"]
    assert of(events, "result")[0]["winner"] == "blue" and "characters" not in of(events, "result")[0]
