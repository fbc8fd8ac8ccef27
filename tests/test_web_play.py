"""A whole game played from the host's page alone: ``moderator play --no-timer --web`` with its keyboard closed at
once, every command sent through ``POST /api/command``, until the result ends ``play`` by itself (status 0), while
a room page's event stream follows it to the end. No game timer: the rounds end when both rooms are ready."""

from __future__ import annotations

import json
import threading
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from web_support import WebGame

pytestmark = pytest.mark.slow

#: With --seed 3: A is Alice, Frank, Heidi, Carol; B is Bob, Grace, Erin, Dave. One hostage a round, three rounds.
GAME = [
    (None, "start the game"), ("A", "I appoint Alice as leader"), ("B", "I appoint Bob as leader"),
    ("A", "hostages Frank"), ("A", "room A is ready"), ("B", "hostages Grace"), ("B", "room B is ready"),
    ("A", "leaders have met"),
    ("A", "hostages Heidi"), ("A", "room A is ready"), ("B", "hostages Erin"), ("B", "room B is ready"),
    ("A", "leaders have met"),
    ("A", "hostages Carol"), ("A", "room A is ready"), ("B", "hostages Dave"), ("B", "room B is ready"),
    ("A", "leaders have met"),
    (None, "the president is Alice"), (None, "the bomber is Bob"),
]


def _watch(url: str, views: list[dict[str, Any]], ended: threading.Event) -> None:
    """A room page's event stream, read to its end (the server closes it when the game is over)."""
    with urllib.request.urlopen(url, timeout=60) as stream:
        kind = None
        for raw in stream:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: ") and kind == "view":
                views.append(json.loads(line[6:]))
    ended.set()


def test_a_whole_game_from_the_host_page_alone(tmp_path: Path) -> None:
    game = WebGame(tmp_path, "--no-timer", "--web", "127.0.0.1:0")
    views: list[dict[str, Any]] = []
    ended = threading.Event()
    try:
        assert game.proc.stdin is not None
        game.proc.stdin.close()  # no keyboard: the web panel goes on alone
        watcher = threading.Thread(target=_watch, args=(game.base + "/api/events", views, ended), daemon=True)
        watcher.start()
        for room, text in GAME:
            status, answer = game.command(text, room)
            assert (status, answer["accepted"]) == (200, True), (text, answer)
            assert answer["events"][0] == {**answer["events"][0], "type": "command", "text": text}
        game.proc.wait(timeout=30)
    finally:
        code = game.quit()
    assert code == 0, game.err
    assert game.lines[-1] == "Game over. Thanks for playing!"
    assert ended.wait(10), "the room page's stream ended with the game"
    last = views[-1]
    assert (last["phase"], last["winner"]) == ("result", "blue")
    assert [v["round"] for v in views if v["phase"] == "parley"][:1] == [1]
    assert {tuple(v["rooms"]["A"]["members"]) for v in views} >= {("Alice", "Frank", "Heidi", "Carol")}
    assert json.loads((tmp_path / "game.json").read_text())["state"]["winner"] == "blue"
