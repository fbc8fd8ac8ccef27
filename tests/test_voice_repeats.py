"""``simulate --repeats``: a spoken command the moderator neither takes nor refuses, or refuses as words the player did
not say, is said again, as a player at a table would; what it took or refused as said, and what is not a command, is
said once."""

from __future__ import annotations

import shutil

import pytest
from fake_recognizer import QueuedRecognizer, ScriptedRecognizer
from tests_support import eight_player_engine, hostage_phase_engine

from moderator.adapters.player_voice import speak
from moderator.audio.endpoint import Endpointer, webrtc_classifier
from moderator.game.engine import Engine
from moderator.loop import Listener
from moderator.ports import Transcript
from moderator.scenario import Step
from moderator.voice_input import VoiceDelivery


def deliver(heard: list[str], line: str, repeats: int) -> tuple[list[dict], VoiceDelivery, ScriptedRecognizer]:
    if shutil.which("flite") is None:
        pytest.skip("flite is not installed (apt-get install flite); it is the players' voice")
    engine = eight_player_engine()
    events: list[dict] = []
    engine.subscribe(events.append)
    engine.begin()
    recognizer = ScriptedRecognizer(heard)
    listener = Listener(engine, recognizer, new_endpointer=lambda: Endpointer(webrtc_classifier()))
    delivery = VoiceDelivery(listener, lambda text: speak(text, "flite:rms"), repeats=repeats)
    delivery(engine, engine.clock, Step(0, 1.0, "A", say=line))  # type: ignore[arg-type]
    return events, delivery, recognizer


def test_a_command_not_heard_is_said_again_until_it_is_taken() -> None:
    events, delivery, recognizer = deliver(["", "", "start the game", "never reached"], "start the game", 3)
    assert [e["text"] for e in events if e["type"] == "heard"] == ["", "", "start the game"]
    assert [e["intent"] for e in events if e["type"] == "command"] == ["start"]
    assert delivery.repeated == 2 and recognizer.texts == ["never reached"]


def test_a_command_is_said_at_most_one_more_time_per_repeat() -> None:
    events, delivery, _ = deliver(["", "", "", ""], "start the game", 2)
    assert len([e for e in events if e["type"] == "heard"]) == 3 and delivery.repeated == 2


def test_without_repeats_a_line_is_said_once() -> None:
    events, delivery, _ = deliver(["", "start the game"], "start the game", 0)
    assert len([e for e in events if e["type"] == "heard"]) == 1 and delivery.repeated == 0


def test_a_refusal_is_an_answer_and_chatter_is_not_repeated() -> None:
    events, delivery, _ = deliver(["i appoint alice as leader", "again"], "I appoint Alice as leader", 2)
    assert [e["type"] for e in events if e["type"] in ("command", "rejected")] == ["rejected"]  # not in a round yet
    assert delivery.repeated == 0
    events, delivery, _ = deliver(["", "again"], "did anyone see where I left my drink", 2)
    assert len([e for e in events if e["type"] == "heard"]) == 1 and delivery.repeated == 0


def test_a_refusal_of_words_the_player_did_not_say_is_answered_by_saying_them_again() -> None:
    """The refusal says what the moderator heard ("Frank is room B's leader"), so the player knows they were
    misheard; a refusal of what they did say is an answer (above)."""
    events, delivery, _ = deliver(["i appoint frank as leader", "i appoint alice as leader", "never reached"],
                                  "I appoint Alice as leader", 2)
    assert [e["text"] for e in events if e["type"] == "rejected"] == ["i appoint frank as leader",
                                                                       "i appoint alice as leader"]
    assert delivery.repeated == 1


def read_back(heard: list[str], lines: list[str], repeats: int) -> tuple[list[dict], VoiceDelivery, ScriptedRecognizer]:
    """``lines`` said in room A at round 1's hostage choice, heard as ``heard``."""
    if shutil.which("flite") is None:
        pytest.skip("flite is not installed (apt-get install flite); it is the players' voice")
    engine, events = hostage_phase_engine()
    recognizer = ScriptedRecognizer(heard)
    listener = Listener(engine, recognizer, new_endpointer=lambda: Endpointer(webrtc_classifier()))
    delivery = VoiceDelivery(listener, lambda text: speak(text, "flite:rms"), repeats=repeats)
    for i, line in enumerate(lines):
        delivery(engine, engine.clock, Step(i, None, "A", say=line))  # type: ignore[arg-type]
    return events, delivery, recognizer


def locked(events: list[dict]) -> list[list[str]]:
    return [e["players"] for e in events if e["type"] == "hostages" and e["room"] == "A"]


def test_a_scripted_yes_to_a_read_back_of_other_names_is_a_no_and_the_choice_again() -> None:
    """The read-back is there to catch a misheard name: the leader who hears "Carol" for "Bob" says no."""
    events, delivery, recognizer = read_back(["hostages carol", "no", "hostages bob", "yes", "never reached"],
                                             ["hostages Bob", "yes"], 2)
    assert locked(events) == [["Bob"]] and delivery.corrected == 1 and recognizer.texts == ["never reached"]
    # Read back right: the "yes" is said at once.
    events, delivery, recognizer = read_back(["hostages bob", "yes", "never reached"], ["hostages Bob", "yes"], 2)
    assert locked(events) == [["Bob"]] and delivery.corrected == 0 and recognizer.texts == ["never reached"]
    # At most ``repeats`` corrections, then the script's "yes" as written.
    events, delivery, _ = read_back(["hostages carol", "no", "hostages dave", "yes"], ["hostages Bob", "yes"], 1)
    assert locked(events) == [["Dave"]] and delivery.corrected == 1
    # Without repeats the script is said as written, and a scripted "no" always is.
    events, delivery, _ = read_back(["hostages carol", "yes"], ["hostages Bob", "yes"], 0)
    assert locked(events) == [["Carol"]] and delivery.corrected == 0
    events, delivery, _ = read_back(["hostages bob", "no", "never reached"], ["hostages Bob", "no"], 2)
    assert locked(events) == [] and delivery.corrected == 0


def asked_about(line: str, room: str, asked: str, answer: str, again: str, *, started: bool) -> tuple[
        list[dict], VoiceDelivery, Engine]:
    """``line`` said in ``room`` (the game started, with room A's leader, when ``started``): asked about as ``asked``
    ("did you say ...?"), then the answer, which the phase's grammar misses and "yes" and "no" alone hear, then, after a
    "no", the line heard as ``again``."""
    if shutil.which("flite") is None:
        pytest.skip("flite is not installed (apt-get install flite); it is the players' voice")
    engine = eight_player_engine()
    events: list[dict] = []
    engine.subscribe(events.append)
    engine.begin()
    if started:
        assert engine.handle_text("start the game", "A")
    recognizer = QueuedRecognizer(Transcript("", 0.4, question=asked), Transcript("", 0.0), Transcript(answer, 0.8),
                                  Transcript(again, 0.9))
    listener = Listener(engine, recognizer, new_endpointer=lambda: Endpointer(webrtc_classifier()))  # type: ignore[arg-type]
    delivery = VoiceDelivery(listener, lambda text: speak(text, "flite:rms"), repeats=1)
    delivery(engine, engine.clock, Step(0, 5.0 if started else 1.0, room, say=line))  # type: ignore[arg-type]
    return events, delivery, engine


@pytest.mark.parametrize(("asked", "answer"), [("start the game", "yes"), ("repeat that", "no")])
def test_a_player_asked_did_you_say_answers_yes_for_the_command_said_and_no_for_another(
        asked: str, answer: str) -> None:
    events, delivery, _ = asked_about("start the game", "A", asked, answer, "start the game", started=False)
    assert [e["key"] for e in events if e.get("key", "").startswith("asked")] == (
        ["asked"] if answer == "yes" else ["asked", "asked.no"])
    assert [e["text"] for e in events if e["type"] == "heard"] == (
        ["", answer] if answer == "yes" else ["", answer, "start the game"])
    assert [e["intent"] for e in events if e["type"] == "command"] == ["start"]
    assert delivery.questions == [answer == "yes"] and delivery.repeated == (answer == "no")


@pytest.mark.parametrize(("asked", "answer"), [("i appoint erin as leader", "yes"), ("i appoint heidi as leader", "no"),
                                               ("frank appoints erin as leader", "yes")])
def test_a_question_that_leaves_out_who_appoints_is_answered_yes_and_one_with_another_name_no(
        asked: str, answer: str) -> None:
    events, delivery, engine = asked_about("Frank appoints Erin as leader", "B", asked, answer,
                                           "frank appoints erin as leader", started=True)
    assert delivery.questions == [answer == "yes"]
    assert engine.state.rooms["B"].leader == "Erin"
    spoken = [e["text"] for e in events if e.get("key") == "asked"]
    assert spoken == [f"Did you say: {'I appoint' if asked.startswith('i ') else 'Frank appoints'} "
                      f"{'Heidi' if 'heidi' in asked else 'Erin'} as leader? Yes or no."]
