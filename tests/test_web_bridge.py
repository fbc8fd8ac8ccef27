"""The web panel's way into the live game (``moderator.web.bridge``, ``LiveGame``'s remote step): commands queued
from another thread run on the game's thread in its tick, as typed lines do, and are answered with the events
they caused; views go out after a change and once a second. A virtual clock: nothing sleeps."""

from __future__ import annotations

import json
import select
import threading
from pathlib import Path
from typing import Any

import pytest

from moderator.adapters.clock import VirtualClock
from moderator.game.engine import Engine
from moderator.game.rules import make_plan
from moderator.game.state import GameState
from moderator.journal import Journal, Saved
from moderator.live import LiveGame
from moderator.ports import Clock
from moderator.speech.catalog import load_catalog
from moderator.speech.grammar import load_grammar
from moderator.web.bridge import Bridge

GRAMMAR, CATALOG = load_grammar(), load_catalog()
ROOMS = {"A": ["Alice", "Bob", "Carol", "Dave"], "B": ["Erin", "Frank", "Grace", "Heidi"]}


def live(tmp_path: Path, bridge: Bridge, **kwargs: Any) -> LiveGame:
    clock = VirtualClock()
    engine = Engine.new(make_plan(8), ROOMS, clock=clock, grammar=GRAMMAR, catalog=CATALOG)
    engine.begin()

    def rebuild(saved: Saved, on: Clock) -> Engine:
        return Engine(GameState.from_dict(saved.state), clock=on, grammar=GRAMMAR, catalog=CATALOG)

    game = LiveGame(engine, Journal(tmp_path / "game.json"), epoch=0.0, lang="en", events=None, rebuild=rebuild,
                    sinks=[bridge], remote=bridge, **kwargs)
    game.save()
    return game


class Outlet:
    """What the server would get: (kind, parsed JSON)."""

    def __init__(self) -> None:
        self.got: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, kind: str, payload: str) -> None:
        self.got.append((kind, json.loads(payload)))

    def views(self) -> list[dict[str, Any]]:
        return [v for kind, v in self.got if kind == "view"]


def test_a_command_waits_for_the_tick_and_is_answered_with_its_events(tmp_path: Path) -> None:
    bridge = Bridge()
    game = live(tmp_path, bridge)
    outlet = Outlet()
    bridge.connect(outlet)
    future = bridge.submit(None, "start the game")
    assert select.select([bridge.wake_fd], [], [], 0)[0], "a command wakes the play loop"
    assert not future.done() and game.engine.in_state("briefing"), "nothing runs off the game's thread"
    game.tick()
    answer = future.result(timeout=0)
    assert answer.accepted and answer.reason is None
    assert [e["type"] for e in answer.events][:2] == ["command", "state"]
    assert any(e["type"] == "round_start" for e in answer.events)
    assert game.engine.in_state("round.running")
    assert not select.select([bridge.wake_fd], [], [], 0)[0], "the wake-up is drained"
    view = outlet.views()[-1]
    assert view["phase"] == "round" and view["clock"] == {"left": 180.0, "running": True, "seconds": 180}
    assert Journal(tmp_path / "game.json").load().state["round"] == 1, "saved, as after a typed line"


def test_a_refusal_is_answered_with_the_moderators_reason_and_listed_for_the_host(tmp_path: Path) -> None:
    bridge = Bridge()
    game = live(tmp_path, bridge)
    outlet = Outlet()
    bridge.connect(outlet)
    game.feed("start the game")
    before = game.engine.snapshot()
    future = bridge.submit("A", "hostages Bob")
    game.tick()
    answer = future.result(timeout=0)
    assert not answer.accepted
    assert answer.reason == next(e["reason"] for e in answer.events if e["type"] == "rejected")
    assert "time" in answer.reason.lower(), answer.reason
    assert game.engine.snapshot()["rooms"] == before["rooms"]
    assert outlet.views()[-1]["refusals"][0] == {"t": 0.0, "room": "A", "text": "hostages Bob",
                                                 "reason": answer.reason}
    assert ("event", next(e for e in answer.events if e["type"] == "rejected")) in outlet.got


def test_commands_from_other_threads_run_in_arrival_order_on_the_game_thread(tmp_path: Path) -> None:
    bridge = Bridge()
    game = live(tmp_path, bridge)
    game.feed("start the game")
    ran_on: list[str] = []
    game.engine.subscribe(lambda e: ran_on.append(threading.current_thread().name))
    texts = ["I appoint Alice as leader", "Frank appoints Erin as leader", "pause", "resume"]
    futures: list[Any] = []

    def send() -> None:
        futures.extend(bridge.submit(None, t) for t in texts)

    sender = threading.Thread(target=send, name="server")
    sender.start()
    sender.join()
    game.tick()
    assert [f.result(timeout=0).accepted for f in futures] == [True, True, True, True]
    assert [f.result(timeout=0).events[0]["text"] for f in futures] == texts
    assert set(ran_on) == {threading.current_thread().name}


def test_the_view_goes_out_on_a_change_and_once_a_second_for_the_clock(tmp_path: Path) -> None:
    bridge = Bridge()
    game = live(tmp_path, bridge)
    outlet = Outlet()
    bridge.connect(outlet)
    game.feed("start the game")
    sent = len(outlet.views())
    game.tick()
    assert len(outlet.views()) == sent, "no change, and less than a second: nothing new to show"
    clock: VirtualClock = game.clock  # type: ignore[assignment]
    clock.set(1.0)
    game.tick()
    assert len(outlet.views()) == sent + 1 and outlet.views()[-1]["clock"]["left"] == 179.0
    game.feed("pause")
    assert outlet.views()[-1]["paused"] is True and outlet.views()[-1]["clock"]["running"] is False


def test_a_game_that_ends_answers_what_is_still_queued(tmp_path: Path) -> None:
    bridge = Bridge()
    game = live(tmp_path, bridge)
    waiting = bridge.submit(None, "start the game")
    game.close()
    assert waiting.result(timeout=0).reason == "the game is over"
    assert bridge.submit(None, "pause").result(timeout=0).reason == "the game is over"


def test_a_bug_during_a_web_command_is_answered_and_the_game_goes_on(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    bridge = Bridge()
    game = live(tmp_path, bridge, err=__import__("io").StringIO())
    game.feed("start the game")
    old = game.engine

    def bug(*args: Any) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(old.rounds, "pause", bug)
    future = bridge.submit(None, "pause")
    game.tick()
    answer = future.result(timeout=0)
    assert not answer.accepted and answer.reason == "internal error; the command was ignored"
    assert game.engine is not old and game.engine.in_state("round.running")


def test_a_bug_in_the_view_is_said_once_and_the_game_goes_on(tmp_path: Path) -> None:
    def broken(engine: Any, **kwargs: Any) -> dict[str, Any]:
        raise KeyError("a bug")

    bridge = Bridge(describe=broken)
    bridge.connect(Outlet())
    err = __import__("io").StringIO()
    game = live(tmp_path, bridge, err=err)
    future = bridge.submit(None, "start the game")
    game.tick()
    game.feed("pause")
    assert future.result(timeout=0).accepted and game.engine.in_state("round.paused")
    assert err.getvalue().count("the web panel's view failed (KeyError('a bug')); the game goes on") == 1
