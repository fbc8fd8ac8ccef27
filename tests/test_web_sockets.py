"""Nothing leaves the LAN: ``moderator play --web`` opens one network socket, the web server's listening one (and
the connections it accepts from the test's own client on 127.0.0.1); ``play`` without ``--web`` opens none.

Every socket operation of the ``play`` process is recorded by an audit hook (``sys.addaudithook``) installed by a
``sitecustomize`` module put first on its path: sockets created (and whether by ``accept``), binds, connects,
sends to an address, and name look-ups."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
import segno
from web_support import PLAYERS, WebGame

pytestmark = pytest.mark.slow

AF_UNIX, AF_INET = 1, 2

HOOK = textwrap.dedent('''
    """Records the socket operations of this process (tests/test_web_sockets.py)."""
    import json, os, sys

    _LOG = os.environ["MODERATOR_SOCKET_LOG"]


    def _origin():
        """The function that made the socket: accept, socketpair, or the caller's."""
        frame = sys._getframe(2)
        while frame is not None and frame.f_code.co_filename.endswith("socket.py") and \\
                frame.f_code.co_name not in ("accept", "socketpair"):
            frame = frame.f_back
        return "?" if frame is None else frame.f_code.co_name


    def _hook(event, args):
        if not event.startswith("socket."):
            return
        record = {"event": event}
        if event == "socket.__new__":
            record.update(family=int(args[1]), origin=_origin())
        elif event in ("socket.bind", "socket.connect", "socket.connect_ex", "socket.sendto", "socket.sendmsg"):
            record.update(family=int(args[0].family), address=repr(args[1]))
        else:
            record.update(args=repr(args)[:200])
        with open(_LOG, "a") as log:
            log.write(json.dumps(record) + "\\n")


    with open(_LOG, "a") as log:
        log.write(json.dumps({"event": "hook.started", "pid": os.getpid()}) + "\\n")
    sys.addaudithook(_hook)
''')


def _hooked(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The environment of a ``play`` whose socket operations are logged, and the log."""
    (tmp_path / "hook").mkdir()
    (tmp_path / "hook" / "sitecustomize.py").write_text(HOOK)
    log = tmp_path / "sockets.jsonl"
    path = os.pathsep.join(p for p in (str(tmp_path / "hook"), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "MODERATOR_SOCKET_LOG": str(log)}, log


def _ops(log: Path) -> list[dict[str, Any]]:
    """The socket operations logged (after the hook's own first line, which shows it ran)."""
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert lines and lines[0]["event"] == "hook.started", "the audit hook was installed"
    return lines[1:]


def test_play_with_web_opens_only_its_listening_socket(tmp_path: Path) -> None:
    env, log = _hooked(tmp_path)
    game = WebGame(tmp_path, "--web", "127.0.0.1:0", "--events", str(tmp_path / "events.jsonl"), env=env)
    try:
        took = []
        for text in ("start the game", "pause", "resume", "how much time is left", "pause"):
            start = time.perf_counter()
            assert game.command(text)[0] == 200
            took.append(time.perf_counter() - start)
        assert sorted(took)[2] < 0.25, f"a command wakes the play loop at once: {took}"
        assert game.state()["phase"] == "round"
        assert game.command("resume", token="wrong")[0] == 401
    finally:
        code = game.quit()
    assert code == 0, game.err
    ops = _ops(log)
    network = [op for op in ops if op.get("family") != AF_UNIX]
    made = [op for op in network if op["event"] == "socket.__new__"]
    assert [op["origin"] for op in made if op["origin"] != "accept"] == ["create_server"], made
    assert sum(op["origin"] == "accept" for op in made) >= 7, "the test's own requests were accepted"
    assert [(op["event"], op["address"]) for op in network if op["event"] != "socket.__new__"
            and op["event"] != "socket.getaddrinfo"] == [("socket.bind", f"('127.0.0.1', {0})")]
    assert {op["args"].split(",")[0] for op in network if op["event"] == "socket.getaddrinfo"} <= {"('127.0.0.1'"}
    local = [op for op in ops if op.get("family") == AF_UNIX]
    assert [op["origin"] for op in local] == ["socketpair", "socketpair"], "only asyncio's wake-up pair"
    assert not any(op["event"] in ("socket.connect", "socket.sendto", "socket.sendmsg") for op in ops)
    # The link is followed by its QR code, drawn in the terminal.
    qr = io.StringIO()
    segno.make(game.link.removeprefix("web: "), error="l").terminal(out=qr, compact=True, border=2)
    at = game.lines.index(game.link)
    assert game.lines[at + 1: at + 1 + len(qr.getvalue().splitlines())] == qr.getvalue().splitlines()
    # The token is printed once, in the link; never in the event log or the saved game.
    assert sum(line.count(game.token) for line in game.lines + game.err) == 1
    assert game.token not in (tmp_path / "events.jsonl").read_text()
    assert game.token not in (tmp_path / "game.json").read_text()


def test_play_without_web_opens_no_socket(tmp_path: Path) -> None:
    env, log = _hooked(tmp_path)
    done = subprocess.run([sys.executable, "-m", "moderator", "play", "--players", PLAYERS, "--state",
                           str(tmp_path / "game.json")], input="start the game\nA: pause\nstatus\nquit\n",
                          capture_output=True, text=True, env={**os.environ, **env}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Game paused." in done.stdout
    assert _ops(log) == [], "no socket operation at all"
