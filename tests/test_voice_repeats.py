"""``simulate --repeats``: a spoken command the moderator neither takes nor refuses is said again, as a player at a
table would; what it took or refused, and what is not a command, is said once."""

from __future__ import annotations

import shutil

import pytest
from fake_recognizer import ScriptedRecognizer
from tests_support import eight_player_engine

from moderator.adapters.player_voice import speak
from moderator.audio.endpoint import Endpointer, webrtc_classifier
from moderator.loop import Listener
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
