"""Issue 12, 1.4: a refusal's reason is true of the game's state. Every intent is tried in every state a game
passes through; whenever the statechart refuses it ("You can't X now: ..."), each claim its reason makes
about the game must hold then."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from moderator.adapters.clock import VirtualClock
from moderator.game.engine import Engine
from moderator.game.rules import make_plan
from moderator.simulate import advance
from moderator.speech.catalog import load_catalog
from moderator.speech.grammar import load_grammar

GRAMMAR, CATALOG = load_grammar(), load_catalog()
NAMES = ["Alice", "Bob", "Carol", "Dave", "Eve", "Fay", "Gus", "Hal", "Ida", "Jon", "Kim", "Lou", "Max"]

#: What a reason may say, and when that is true: of the state (``s``), the game (``g``: it has a Gambler; ``t``:
#: its rounds are timed) and the command refused (``i``). A claim about one command is no reason for another.
CLAIMS: dict[str, Callable[[str, bool, bool, str], bool]] = {
    "being set up": lambda s, g, t, i: s == "setup",
    "has not started": lambda s, g, t, i: s == "briefing",
    "has already started": lambda s, g, t, i: s not in ("setup", "briefing") and i == "start",
    "round is still running": lambda s, g, t, i: s == "round.running",
    "the round is running": lambda s, g, t, i: s == "round.running",
    "the game is paused": lambda s, g, t, i: s == "round.paused",
    "already paused": lambda s, g, t, i: s == "round.paused" and i == "pause",
    "not paused": lambda s, g, t, i: s != "round.paused" and i == "resume",
    "no round is running": lambda s, g, t, i: not s.startswith("round") and i == "pause",
    "hostages are named when time is up": lambda s, g, t, i: s == "round.running" and t and i == "hostages",
    "naming hostages": lambda s, g, t, i: s.startswith("hostages"),
    "leaders are meeting": lambda s, g, t, i: s == "parley",
    "being exchanged": lambda s, g, t, i: s == "exchange",
    "the game is over": lambda s, g, t, i: s in ("game_over", "prediction", "reveal", "result"),
    "Gambler must predict first": lambda s, g, t, i: s == "prediction" and g,
    "cards are being revealed": lambda s, g, t, i: s == "reveal",
    "no Gambler": lambda s, g, t, i: not g and i == "predict",
    "without a timer": lambda s, g, t, i: t and i == "ready",
}


def example(intent: str) -> str:
    """A sentence of ``intent`` with this game's names."""
    return {"name_answer": "Bob", "room_answer": "room A", "confirm": "yes", "appoint_you": "I appoint you as leader",
            "usurp": "4 votes for Bob", "offer": "Alice offers leadership to Bob", "accept": "Bob accepts",
            "refuse": "Bob refuses", "hostages": "hostages Bob and Carol", "reveal": "the president is Alice",
            "predict": "gambler predicts red"}.get(intent) or CATALOG.render(f"example.{intent}")


class Walk:
    """A game driven by typed commands (the host's keyboard) on a virtual clock."""

    def __init__(self, players: int) -> None:
        self.clock = VirtualClock()
        a, b = NAMES[: players - players // 2], NAMES[players - players // 2 : players]
        self.engine = Engine.new(make_plan(players), {"A": a, "B": b}, clock=self.clock, grammar=GRAMMAR,
                                 catalog=CATALOG)
        self.events: list[dict[str, Any]] = []
        self.engine.subscribe(self.events.append)
        self.engine.begin()

    def state(self) -> str:
        flow = self.engine.flow.state
        leaf = flow[0] if isinstance(flow, list) else flow
        return leaf if leaf.startswith("round") else leaf.split(".")[0]

    def say(self, text: str, room: str | None = None) -> None:
        self.engine.handle_text(text, room)

    def step(self, n: int) -> bool:
        """Move the game on by its ``n``-th step; False when the game has no more steps."""
        s = self.engine.state
        rooms = s.rooms
        if n == 0:
            self.say("start the game")
        elif n == 1:
            self.say("pause")
        elif n == 2:
            self.say("resume")
        elif self.state() == "round.running":
            for room in ("A", "B"):
                if rooms[room].leader is None:
                    self.say(f"I appoint {rooms[room].members[0]} as leader", room)
            if all(r.leader for r in rooms.values()):
                assert s.deadline is not None
                advance(self.engine, self.clock, s.deadline)
        elif self.state() == "hostages":
            due = self.engine.hostages_due()
            room = "A" if rooms["A"].hostages is None else "B"
            chosen = [p for p in rooms[room].members if p != rooms[room].leader][:due]
            self.say("hostages " + " and ".join(chosen), room)
        elif self.state() == "parley":
            self.say("leaders have met")
        elif self.state() == "prediction":
            self.say("gambler predicts red")
        elif self.state() == "reveal":
            role = "bomber" if s.president else "president"
            self.say(f"the {role} is {s.players[0] if role == 'president' else s.players[-1]}")
        else:
            return False
        return True


def replay(players: int, stop: int) -> Walk | None:
    """A fresh game driven to its ``stop``-th stop (None: the game ends before it)."""
    walk = Walk(players)
    for n in range(stop):
        if not walk.step(n):
            return None
    return walk


@pytest.mark.parametrize("players", [12, 13])  # 13: with a Gambler
def test_every_refusal_reason_is_true_of_the_state_it_is_given_in(players: int) -> None:
    """At the first stop of a whole game in each state, every intent is tried (each on a fresh game driven there)."""
    seen: set[str] = set()
    refused, stop = 0, -1
    while (walk := replay(players, stop := stop + 1)) is not None:
        assert stop < 200, "the walk does not end"
        state = walk.state()
        if state in seen:
            continue
        seen.add(state)
        gambler = bool(walk.engine.state.plan["deck"].get("gambler"))
        timed = any(r["seconds"] for r in walk.engine.state.plan["rounds"])
        for intent in GRAMMAR.intents:
            game = replay(players, stop)
            assert game is not None
            before = len(game.events)
            game.say(example(intent), "A")
            for event in game.events[before:]:
                if event["type"] != "rejected" or event["key"] != "refuse.not_now":
                    continue
                refused += 1
                reason = event["reason"]
                claims = [c for c in CLAIMS if c in reason]
                assert claims, f"{intent} in {state}: no known claim in {reason!r} (add it to CLAIMS)"
                if intent == "predict" and not gambler:
                    assert "no Gambler" in reason, f"predict in {state}, a game without a Gambler: {reason!r}"
                for claim in claims:
                    assert CLAIMS[claim](state, gambler, timed, intent), f"{intent!r} in {state}: {reason!r}"
    assert {"briefing", "round.running", "round.paused", "hostages", "parley", "result"} <= seen, seen
    assert ("prediction" in seen) == (players % 2 == 1)
    assert refused > 40, refused


def test_the_reasons_the_issue_found_wrong() -> None:
    walk = Walk(12)
    walk.say("start the game")
    for text, reason in [("start the game", "the game has already started"), ("resume", "the game is not paused"),
                         ("gambler predicts red", "there is no Gambler in this game")]:
        walk.say(text, "A")
        assert reason in walk.events[-2]["reason"] or reason in walk.events[-1].get("reason", ""), text
        assert "hostages are named" not in walk.events[-2]["reason"]
