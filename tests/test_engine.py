"""Engine rules and timers on a virtual clock (no sleeping, ever)."""

from __future__ import annotations

from typing import Any

import pytest

from moderator.adapters.clock import VirtualClock
from moderator.game.engine import Engine
from moderator.game.rules import make_plan
from moderator.save_check import check_state
from moderator.simulate import advance
from moderator.speech.catalog import load_catalog
from moderator.speech.grammar import load_grammar

A = ["Alice", "Bob", "Carol", "Dave", "Eve", "Fay"]
B = ["Gus", "Hal", "Ida", "Jon", "Kim", "Lou"]
GRAMMAR, CATALOG = load_grammar(), load_catalog()


class Game:
    def __init__(self, players: int = 12, **plan: Any) -> None:
        self.clock = VirtualClock()
        a, b = A[: players - players // 2], B[: players // 2]
        self.engine = Engine.new(make_plan(players, **plan), {"A": a, "B": b}, clock=self.clock,
                                 grammar=GRAMMAR, catalog=CATALOG)
        self.events: list[dict[str, Any]] = []
        self.engine.subscribe(self.events.append)
        self.engine.begin()

    def say(self, text: str, room: str | None = None) -> bool:
        return self.engine.handle_text(text, room)

    def at(self, t: float) -> None:
        advance(self.engine, self.clock, t)

    def of(self, type_: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == type_]

    def said(self, key: str) -> list[dict[str, Any]]:
        return [e for e in self.of("announce") if e["key"] == key]

    def last_reason(self) -> str:
        return self.of("rejected")[-1]["reason"]

    def leaders(self, a: str = "Alice", b: str = "Gus") -> None:
        assert self.say(f"I appoint {a} as leader", "A") and self.say(f"I appoint {b} as leader", "B")


def test_schedule_of_a_round_fires_in_order_at_the_right_times() -> None:
    g = Game()
    g.say("start the game")
    g.at(200)
    got = [(e["t"], e["key"], e["text"]) for e in g.of("announce") if e["t"] > 0]
    assert got[:3] == [(120.0, "time.warning", "1 minute left."), (150.0, "time.warning", "30 seconds left."),
                       (150.0, "leader.nag", got[2][2])]
    assert [e["t"] for e in g.said("time.count")] == [175.0, 176.0, 177.0, 178.0, 179.0]
    assert g.of("round_end") == [{"t": 180.0, "type": "round_end", "round": 1}]
    assert len(g.said("leader.nag")) == 2, "both rooms had no leader 30 s before the end of round 1"


def test_pause_freezes_the_round_and_resume_shifts_its_end() -> None:
    g = Game()
    g.say("start the game")
    g.at(100)
    assert g.say("pause")
    g.at(500)
    assert not g.of("round_end")
    assert g.say("how much time is left", "A")
    assert g.of("announce")[-1]["text"] == "The game is paused with 1 minute 20 seconds left in round 1."
    assert not g.say("I appoint Alice as leader", "A")
    assert "paused" in g.last_reason()
    assert g.say("resume")
    g.at(579.9)
    assert not g.of("round_end")
    g.at(580)
    assert g.of("round_end")[0]["t"] == 580.0


def test_usurp_needs_more_than_half_of_the_room() -> None:
    g = Game()
    g.say("start the game")
    g.leaders()
    assert not g.say("3 votes for Bob", "A")
    assert g.last_reason() == "3 votes is not more than half of room A's 6 players; 4 are needed."
    assert not g.say("7 votes for Bob", "A")
    assert "only 6 players" in g.last_reason()
    assert not g.say("4 votes for Alice", "A")
    assert g.say("4 votes for Bob", "A")
    assert g.of("leader")[-1] == {"t": 0.0, "type": "leader", "room": "A", "player": "Bob", "how": "usurped"}


def test_first_leader_rules() -> None:
    g = Game()
    g.say("start the game")
    assert not g.say("Alice appoints Alice as leader", "A")
    assert "Nobody can appoint themselves" in g.last_reason()
    assert not g.say("I appoint Gus as leader", "A")
    assert g.last_reason() == "Gus is in room B, not room A."
    assert g.say("Bob appoints Alice as leader", "A")
    assert not g.say("I appoint Carol as leader", "A")
    assert "already has a leader, Alice" in g.last_reason()


def test_appoint_you_with_a_shared_mic_asks_which_room_then_who() -> None:
    g = Game()
    g.say("start the game")
    assert g.say("I appoint you as leader")
    assert g.of("announce")[-1]["key"] == "ask.which_room"
    assert not g.say("Hal")
    assert g.say("room B")
    assert g.of("announce")[-1]["text"] == "Who is the new leader of room B?"
    assert not g.say("Alice")
    assert "Alice is in room A" in g.last_reason()
    assert g.say("Hal")
    assert g.engine.state.rooms["B"].leader == "Hal"


def test_shared_mic_room_follows_the_names() -> None:
    g = Game()
    g.say("start the game")
    assert g.say("I appoint Ida as leader")
    assert g.engine.state.rooms["B"].leader == "Ida"
    g.say("I appoint Alice as leader")
    g.at(180)
    assert not g.say("hostages Bob and Hal")
    assert "room A" in g.last_reason() and "room B" in g.last_reason()
    assert g.say("hostages Bob and Carol")
    assert g.engine.state.rooms["A"].hostages == ["Bob", "Carol"]


def test_abdication_offer_accept_refuse_and_no_givesy_backsies_until_next_round() -> None:
    g = Game(durations=[60, 60, 60])
    g.say("start the game")
    g.leaders()
    assert not g.say("Bob offers leadership to Carol", "A")
    assert g.last_reason() == "Bob is not the leader of room A; Alice is."
    assert g.say("Alice offers leadership to Bob", "A")
    assert not g.say("Alice offers leadership to Carol", "A")
    assert g.say("Bob refuses", "A")
    assert g.engine.state.rooms["A"].leader == "Alice"
    assert not g.say("Bob accepts", "A")
    assert g.say("Alice offers leadership to Bob", "A") and g.say("Bob accepts", "A")
    assert not g.say("Bob offers leadership to Alice", "A")
    assert "No givesy-backsies" in g.last_reason()
    assert g.say("Bob offers leadership to Carol", "A") and g.say("Carol refuses", "A")
    g.at(60)
    assert g.say("hostages Dave and Eve", "A") and g.say("hostages Hal and Ida", "B")
    assert g.say("leaders have met")
    assert g.say("Bob offers leadership to Alice", "A"), "a new round lifts the restriction"


def test_hostage_rules_and_lock() -> None:
    g = Game()  # 12 players: 2 hostages in round 1
    g.say("start the game")
    g.leaders()
    assert not g.say("hostages Bob and Carol", "A")
    assert "hostages are named when time is up" in g.last_reason()
    g.at(180)
    for text, reason in [
        ("hostage Bob", "Room A must send exactly 2 hostages this round; you named 1."),
        ("hostages Bob and Alice", "Alice is room A's leader, and a leader can never be a hostage."),
        ("hostages Bob and Gus", "Gus is in room B; room A's leader can only choose from room A."),
        ("hostages Bob and Bob", "Bob was named twice."),
    ]:
        assert not g.say(text, "A")
        assert g.last_reason() == reason
    assert g.say("hostages Bob and Carol", "A")
    assert not g.engine.handle_text("hostages Dave and Eve", "A", spoken=True), "only the host may correct it"
    assert g.last_reason() == "Room A's hostages are already locked: Bob and Carol. A choice cannot be changed."
    assert not g.say("leaders have met")
    assert g.say("I choose Hal and Ida as hostages", "B")
    assert g.engine.in_state("parley")
    assert g.say("leaders have met")
    assert g.of("exchange")[-1]["to_A"] == ["Hal", "Ida"] and g.of("exchange")[-1]["to_B"] == ["Bob", "Carol"]
    start2 = g.of("round_start")[-1]
    assert start2 == {"t": 180.0, "type": "round_start", "round": 2, "seconds": 120, "hostages": {"A": 1, "B": 1}}
    order = [e["type"] for e in g.events if e["type"] in ("round_start", "exchange")]
    assert order[-2:] == ["round_start", "exchange"], "the next round runs before the hostages walk"


def test_a_refusal_changes_nothing() -> None:
    g = Game()
    g.say("start the game")
    g.leaders()
    before = g.engine.snapshot()
    for text in ["hostages Bob", "4 votes for Gus", "Zed is our leader", "the bomber is Bob", "gibberish words"]:
        assert not g.say(text, "A")
    after = g.engine.snapshot()
    before.pop("last_said"), after.pop("last_said")
    assert after == before


def test_undo_takes_back_an_appointment_but_not_a_lock() -> None:
    g = Game()
    g.say("start the game")
    assert not g.say("undo")
    g.leaders()
    assert g.say("undo")
    assert g.engine.state.rooms["B"].leader is None and g.engine.state.rooms["A"].leader == "Alice"
    assert g.of("leader")[-1] == {"t": 0.0, "type": "leader", "room": "B", "player": None, "how": "undone"}
    g.say("I appoint Gus as leader", "B")
    g.at(180)
    g.say("hostages Bob and Carol", "A")
    assert not g.say("undo")


def test_no_timer_variant_ends_the_round_when_both_rooms_are_ready() -> None:
    """The rulebook (EN p13): each leader announces the hostages during the round, then signals ready; a ready room
    changes nothing more; there is no "time's up"."""
    g = Game(no_timer=True)
    g.say("start the game")
    assert g.of("round_start")[0]["seconds"] is None
    g.at(10_000)
    assert not g.of("round_end")
    assert not g.say("room A is ready")
    assert "no leader" in g.last_reason()
    g.leaders()
    assert not g.say("room A is ready")
    assert g.last_reason() == "Room A, name your 2 hostages first, then say you are ready."
    assert g.say("hostages Bob and Carol", "A"), "hostages are announced during the round"
    assert g.engine.in_state("round.running") and g.of("hostages")[-1]["players"] == ["Bob", "Carol"]
    assert not g.engine.handle_text("hostages Dave and Eve", "A", spoken=True), "final once announced"
    assert not g.say("4 votes for Bob", "A") and g.last_reason() == \
        "Bob is one of this round's hostages and can't become leader."
    assert g.say("room A is ready") and not g.of("round_end")
    for text in ("4 votes for Dave", "Alice offers leadership to Dave"):
        assert not g.say(text, "A"), text
        assert g.last_reason() == "Room A is ready: nothing changes there until the next round."
    assert g.engine.state.rooms["A"].leader == "Alice"
    assert g.say("4 votes for Hal", "B"), "room B is not ready yet"
    assert g.say("hostages Ida and Jon", "B") and g.say("room B is ready")
    assert g.of("round_end")[0]["round"] == 1 and g.engine.in_state("parley")
    assert not g.said("time.over"), "no time's up without a timer"
    assert g.said("parley")
    assert g.say("leaders have met") and g.engine.state.round == 2
    assert "Bob" in g.engine.state.rooms["B"].members and "Ida" in g.engine.state.rooms["A"].members


def test_an_offer_made_before_the_hostages_cannot_be_accepted_by_one_of_them() -> None:
    """No-timer variant: the leader offers the lead to Bob, then names Bob a hostage. Bob accepting would make a
    leader of a hostage (found by test_random_games); it is refused with the reason, and Bob may still refuse."""
    g = Game(no_timer=True)
    g.say("start the game")
    g.leaders()
    assert g.say("Alice offers leadership to Bob", "A")
    assert g.say("hostages Bob and Carol", "A")
    assert not g.say("Bob accepts", "A")
    assert g.last_reason() == "Bob is one of this round's hostages and can't become leader."
    assert g.engine.state.rooms["A"].leader == "Alice"
    assert g.say("Bob refuses", "A") and g.engine.state.rooms["A"].offer is None


def test_a_hostage_choice_read_back_and_waiting_for_yes_keeps_its_players_from_the_lead() -> None:
    """The same while a spoken choice is read back: "Bob accepts" before the leader's "yes" would leave the room led
    by a hostage to be, and a save the load check refuses."""
    g = Game(no_timer=True)
    g.say("start the game")
    g.leaders()
    assert g.say("Alice offers leadership to Bob", "A")
    assert g.engine.handle_text("hostages Bob and Carol", "A", spoken=True)
    assert g.engine.state.rooms["A"].pending == ["Bob", "Carol"], "read back, waiting for yes"
    assert not g.say("Bob accepts", "A")
    assert g.last_reason() == "Bob is one of this round's hostages and can't become leader."
    assert not g.say("4 votes for Carol", "A")
    assert g.engine.state.rooms["A"].leader == "Alice"
    check_state(g.engine.snapshot(), saved_at=g.engine.clock.now())


def test_a_timed_round_still_refuses_hostages_before_time_is_up() -> None:
    g = Game()
    g.say("start the game")
    g.leaders()
    assert not g.say("hostages Bob and Carol", "A")
    assert "hostages are named when time is up" in g.last_reason()


def test_gambler_predicts_before_the_reveal_and_blue_wins_apart() -> None:
    g = Game(players=11, durations=[10, 10, 10])  # odd: the Gambler is in the deck
    g.say("start the game")
    g.leaders()
    for r in range(3):
        g.at(10 * (r + 1))
        due = g.engine.hostages_due()  # 11 players: 2, 1, 1
        a = [p for p in g.engine.state.rooms["A"].members if p != "Alice"][:due]
        b = [p for p in g.engine.state.rooms["B"].members if p != "Gus"][:due]
        assert g.say(f"hostages {' and '.join(a)}", "A") and g.say(f"hostages {' and '.join(b)}", "B")
        assert g.say("leaders have met")
    assert g.engine.in_state("prediction")
    assert not g.say("the president is Alice")
    assert "Gambler must predict first" in g.last_reason()
    assert g.say("gambler predicts blue")
    assert g.say("the president is Alice") and g.say("the bomber is Gus")
    result = g.of("result")[0]
    assert result["winner"] == "blue" and result["gambler"] == "right"
    assert g.engine.in_state("result")


def test_help_lists_what_fits_the_phase() -> None:
    g = Game()
    g.say("what can I say")
    assert "start the game" in g.of("announce")[-1]["text"]
    assert "hostages" not in g.of("announce")[-1]["text"]
    g.say("start the game")
    g.at(180)
    g.say("what can I say", "A")
    assert "hostages Bob and Carol" in g.of("announce")[-1]["text"]


def test_repeat_says_the_last_announcement_of_the_room_again() -> None:
    g = Game()
    g.say("start the game")
    g.say("I appoint Alice as leader", "A")
    g.say("repeat that", "A")
    assert g.of("announce")[-1]["text"] == "Alice is the leader of room A."


@pytest.mark.parametrize("seconds", [60, 30])
def test_no_warning_at_or_beyond_the_round_length(seconds: int) -> None:
    g = Game(durations=[seconds, 60, 60])
    g.say("start the game")
    g.at(seconds)
    warnings = [e["text"] for e in g.said("time.warning")]
    assert warnings == ["30 seconds left.", "10 seconds left."][(1 if seconds == 30 else 0):]


# --- rule: "undo" acts only on the room it comes from (issue 12, 1.1) --------------------------------


def test_undo_in_room_b_does_not_reverse_room_a_usurp() -> None:
    g = Game()
    g.say("start the game")
    g.leaders()
    assert g.say("4 votes for Bob", "A")
    assert g.engine.state.rooms["A"].leader == "Bob"
    assert g.say("undo", "B")  # room B's own last change: its appointment
    assert g.engine.state.rooms["A"].leader == "Bob" and g.engine.state.rooms["B"].leader is None
    assert not g.say("undo", "B"), "room B has nothing more of its own to undo"
    assert g.say("undo", "A")
    assert g.engine.state.rooms["A"].leader == "Alice"


def test_undo_during_hostage_selection_keeps_the_other_room_leader_and_says_what_was_undone() -> None:
    g = Game()
    g.say("start the game")
    g.at(180)
    assert g.say("I appoint Alice as leader", "A") and g.say("I appoint Gus as leader", "B")
    assert g.say("undo", "B")
    assert g.engine.state.rooms["A"].leader == "Alice", "room B's undo removed room A's new leader"
    assert g.engine.state.rooms["B"].leader is None
    undone = g.said("undone")[-1]
    assert undone["room"] == "B" and undone["text"] == "Undone in room B: appoint a leader, Gus."
    assert g.of("undo")[-1] == {"t": 180.0, "type": "undo", "room": "B", "intent": "appoint",
                                "slots": {"player": "Gus"}}
    assert g.say("I appoint Hal as leader", "B")
    assert g.say("hostages Bob and Carol", "A") and g.say("hostages Ida and Jon", "B"), "each room has its leader"


def test_undo_from_no_room_takes_back_the_last_change_of_either_room_and_a_lock_ends_only_its_room() -> None:
    g = Game()
    g.say("start the game")
    g.at(180)
    g.leaders()
    assert g.say("hostages Bob and Carol", "A")  # typed: locks room A's choice
    assert not g.say("undo", "A"), "a locked choice cannot be undone"
    assert g.say("undo"), "room B's appointment is still open"
    assert g.engine.state.rooms["B"].leader is None and g.engine.state.rooms["A"].hostages == ["Bob", "Carol"]


# --- rule: the editions' "no givesy-backsies" (issue 12, 1.5) ------------------------------------------


@pytest.mark.parametrize("edition", ["en", "fr"])
def test_no_givesy_backsies_by_edition(edition: str) -> None:
    g = Game(givesy_backsies=edition)
    g.say("start the game")
    g.leaders()
    assert g.say("Alice offers leadership to Bob", "A") and g.say("Bob accepts", "A")
    assert not g.say("Bob offers leadership to Alice", "A"), "both editions: not straight back"
    took_back = g.say("4 votes for Alice", "A")
    if edition == "en":
        assert took_back and g.engine.state.rooms["A"].leader == "Alice", "EN forbids only the handing back"
    else:
        assert not took_back and g.engine.state.rooms["A"].leader == "Bob"
        assert g.last_reason() == "Alice handed the leadership over this round and can't be leader again until " \
                                  "the next round."
        assert g.say("4 votes for Carol", "A") and not g.say("Carol offers leadership to Alice", "A")
        g.at(180)
        g.say("hostages Dave and Eve", "A") and g.say("hostages Hal and Ida", "B")
        g.say("leaders have met")
        assert g.engine.state.round == 2
        assert g.say("4 votes for Alice", "A"), "a new round: she may lead again"


def test_givesy_backsies_is_a_plan_option_and_unknown_editions_are_refused() -> None:
    from moderator.errors import RulesError

    assert make_plan(8, givesy_backsies="fr").to_dict()["givesy_backsies"] == "fr"
    assert make_plan(8).givesy_backsies == "en"
    with pytest.raises(RulesError, match="choose en or fr"):
        make_plan(8, givesy_backsies="de")


def test_a_short_first_round_still_reminds_a_room_without_a_leader_half_way() -> None:
    g = Game(durations=[20, 20, 20])
    g.say("start the game")
    assert g.say("I appoint Alice as leader", "A")
    g.at(20)
    assert [(e["t"], e["room"]) for e in g.said("leader.nag")] == [(10.0, "B")]


def test_the_view_after_the_last_exchange_shows_the_reveal_not_hostages_due() -> None:
    from moderator.view import render_text

    g = Game(players=12, durations=[10, 10, 10])
    g.say("start the game")
    g.leaders()
    for r in range(3):
        g.at(10 * (r + 1) + 0.5 * r)
        due = g.engine.hostages_due()
        for room, leader in (("A", "Alice"), ("B", "Gus")):
            chosen = [p for p in g.engine.state.rooms[room].members if p != leader][:due]
            assert g.say(f"hostages {' and '.join(chosen)}", room)
        assert g.say("leaders have met")
    assert g.say("the president is Alice")
    text = render_text(g.engine)
    assert "hostages due" not in text and "President: Alice" in text


def test_a_game_with_a_buried_card_says_how_to_bury_it_and_which_backups_take_over() -> None:
    g = Game(players=8, bury=True)
    text = g.engine.briefing_text()
    assert "set one aside face down" in text and "9 cards" in text
    assert "the President's Daughter is the President" in text and "the Martyr is the Bomber" in text
    assert "buried" not in Game(players=8).engine.briefing_text()


# --- rule: the host may correct a hostage choice they typed, until the leaders have met (issue 12, 1.6) ------


def test_the_host_corrects_a_typed_hostage_choice_until_the_leaders_have_met() -> None:
    g = Game()
    host = lambda text, room: g.engine.handle_text(text, room, host=True)  # noqa: E731 (play's keyboard)
    g.say("start the game")
    g.leaders()
    g.at(180)
    assert host("hostages Bob and Dave", "A")  # the host's typo: Dave for Carol
    assert host("hostages Bob and Carol", "A"), "the host's own typed choice can be corrected"
    assert g.engine.state.rooms["A"].hostages == ["Bob", "Carol"]
    assert [e["players"] for e in g.of("hostages")] == [["Bob", "Dave"], ["Bob", "Carol"]]
    assert g.said("hostages.corrected")[-1]["text"] == "Hostages corrected by the host: Bob and Carol."
    assert host("hostages Hal and Ida", "B") and g.engine.in_state("parley")
    assert host("hostages Hal and Jon", "B"), "during the parley too"
    assert not g.engine.handle_text("hostages Hal and Kim", "B", spoken=True), "a leader's spoken choice is final"
    assert not g.say("hostages Hal and Kim", "B"), "a scripted player's line is a leader's announcement: final"
    assert host("leaders have met", None)
    assert "Carol" in g.engine.state.rooms["B"].members and "Jon" in g.engine.state.rooms["A"].members
    assert "Dave" in g.engine.state.rooms["A"].members and "Ida" in g.engine.state.rooms["B"].members
    assert not g.engine.state.rooms["A"].typed_lock, "a new round: nothing locked to correct"


def test_a_hostage_choice_heard_by_a_microphone_is_never_corrected_by_typing() -> None:
    g = Game()
    g.say("start the game")
    g.leaders()
    g.at(180)
    assert g.engine.handle_text("hostages Bob and Dave", "A", spoken=True)
    assert g.engine.handle_text("yes", "A", spoken=True)
    assert not g.engine.handle_text("hostages Bob and Carol", "A", host=True)
    assert "already locked" in g.last_reason()
