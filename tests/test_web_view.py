"""The web panel's view (``moderator.web.live_view``): every button's sentence, filled as the host page fills it,
parses back to its intent and slots; and the view follows the game (rooms, clock, pause, refusals, deck)."""

from __future__ import annotations

from typing import Any

import pytest

from moderator.adapters.clock import VirtualClock
from moderator.game.engine import Engine
from moderator.game.plan_view import dealing
from moderator.game.rules import GamePlan, make_plan
from moderator.speech.catalog import load_catalog
from moderator.speech.grammar import load_grammar
from moderator.speech.grammar_data import INTENT_SLOTS
from moderator.web.live_view import _NO_BUTTON, live_view, sentence

GRAMMAR, CATALOG = load_grammar(), load_catalog()
ROOMS = {"A": ["Alice", "Bob", "Carol", "Dave"], "B": ["Erin", "Frank", "Grace", "Heidi"]}
PLAYERS = ROOMS["A"] + ROOMS["B"]
#: What the host page's pickers give for each slot type (host.js: names joined by "and", numbers as digits, the
#: other lists' first spoken form).
PICKED: dict[str, tuple[str, Any]] = {
    "player": ("Bob", "Bob"), "players": ("Bob and Carol", ["Bob", "Carol"]), "number": ("3", 3),
    "team": ("red", "red"), "room": ("b", "B"), "answer": ("yes", "yes"), "role": ("bomber", "bomber"),
}


@pytest.mark.parametrize("intent", [i for i in INTENT_SLOTS if i not in _NO_BUTTON])
def test_every_buttons_sentence_parses_back_to_its_intent(intent: str) -> None:
    words, slots = [], {}
    for part in sentence(GRAMMAR, intent):
        if "words" in part:
            words.append(part["words"])
        else:
            said, value = PICKED[part["type"]]
            words.append(said)
            slots[part["slot"]] = value
    parsed = GRAMMAR.parse(" ".join(words), PLAYERS)
    assert getattr(parsed, "intent", None) == intent, (words, parsed)
    assert parsed.slots == slots  # type: ignore[union-attr]
    assert {s for s, (_, needed) in INTENT_SLOTS[intent].items() if needed} <= set(slots)


@pytest.mark.parametrize("kwargs", [{"players": 8}, {"players": 13, "rounds": 5, "bury": True},
                                    {"players": 10, "preset": "the_standard"}])
def test_a_plan_comes_back_from_its_dict(kwargs: dict[str, Any]) -> None:
    plan = make_plan(**kwargs)
    assert GamePlan.from_dict(plan.to_dict()) == plan


def test_the_view_follows_the_game() -> None:
    clock = VirtualClock()
    engine = Engine.new(make_plan(9), ROOMS | {"B": [*ROOMS["B"], "Ivan"]}, clock=clock, grammar=GRAMMAR,
                        catalog=CATALOG)
    engine.begin()
    view = live_view(engine)
    assert view["phase"] == "briefing" and view["commands"][0] == "start" and view["clock"]["left"] is None
    assert {c["id"]: c["count"] for c in view["deck"]["cards"]} == {
        "president": 1, "bomber": 1, "gambler": 1, "blue_team": 3, "red_team": 3}
    assert view["deck"]["dealing"] == dealing(None, make_plan(9)) == [
        "Buried cards: none. Shuffle the 9 cards and deal one to each player."]
    engine.handle_text("start the game")
    engine.handle_text("I appoint Alice as leader", "A")
    clock.set(30.5)
    engine.handle_text("pause")
    view = live_view(engine, alerts=["a speaker failed"], refusals=[{"reason": "x"}])
    assert view["paused"] is True and view["clock"] == {"left": 149.5, "running": False, "seconds": 180}
    assert view["rooms"]["A"]["leader"] == "Alice" and view["rooms"]["B"]["leader"] is None
    assert view["rooms"]["A"]["said"].startswith("Game paused.")
    assert "resume" in view["commands"] and "pause" not in view["commands"]
    assert view["rooms"]["A"]["hostages_due"] == 1 and view["rooms"]["A"]["hostages"] is None
    assert view["alerts"] == ["a speaker failed"] and view["refusals"] == [{"reason": "x"}]
    assert [c["value"] for c in view["choices"]["role"]] == ["president", "bomber", "gambler"]
    clock.set(40.0)
    engine.handle_text("resume")
    clock.set(40.0 + 149.5)
    engine.tick()
    view = live_view(engine)
    assert view["phase"] == "hostages" and "hostages" in view["rooms"]["A"]["commands"]
    engine.handle_text("hostages Bob", "A")
    assert live_view(engine)["rooms"]["A"]["hostages"] == ["Bob"]
