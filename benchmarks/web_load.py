"""The web panel under load: a whole scripted game sent through ``POST /api/command`` while room pages (server-sent
event clients) watch, with the server's CPU time and how late each view reaches the pages.

    python -m benchmarks.web_load                      # 30 pages, an 8-player game; docs/benchmarks/web.json
    python -m benchmarks.web_load --clients 100 --idle 30

The game runs as ``play --web`` runs it (``LiveGame`` ticking on its own thread, woken by the bridge), but on a
virtual clock that jumps to each step's time, so the whole game takes a few seconds. ``--idle`` then lets a round
run in real time with every page connected, which is what a party's server does most of the time.
``tests/test_web_api.py`` uses the same harness.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import select
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

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
from moderator.web.guard import WebLimits, new_token
from moderator.web.server import WebServer

GRAMMAR, CATALOG = load_grammar(), load_catalog()
ROOMS = {"A": ["Alice", "Bob", "Carol", "Dave"], "B": ["Erin", "Frank", "Grace", "Heidi"]}
#: A whole 8-player game as the host's page sends it: scenarios/eight_players.yaml's lines, less its "hostages
#: Carol" after the lock (the players' own line is refused there; the host's, as here, corrects the choice), with
#: its refusals. (time, room, text); time None: before the clock moves.
GAME: tuple[tuple[float | None, str | None, str], ...] = (
    (None, "A", "start the game"), (5, "A", "I appoint Alice as leader"), (8, "B", "Frank appoints Erin as leader"),
    (20, "A", "how much time is left"), (40, "B", "Erin offers leadership to Frank"), (42, "B", "Frank accepts"),
    (50, "B", "Frank offers leadership to Erin"), (60, "A", "hostages Bob"), (181, "A", "hostages Alice"),
    (182, "A", "hostages Erin"), (183, "A", "hostages Bob"), (184, "B", "hostages Grace"),
    (200, "A", "leaders have met"), (230, "B", "3 votes for Heidi"), (330, "A", "hostage Dave"),
    (331, "B", "hostage Bob"), (340, "A", "start the next round"), (350, "A", "pause"),
    (400, "A", "how much time is left"), (410, "A", "resume"), (480, "A", "hostage Grace"), (481, "B", "hostage Erin"),
    (490, "B", "leaders have met"), (500, "A", "the president is Bob"), (501, "A", "the bomber is Carol"),
)
OUT = Path(__file__).resolve().parent.parent / "docs" / "benchmarks" / "web.json"


class LiveServer:
    """A live game with its web server on 127.0.0.1, its game thread ticking as ``play``'s loop does (woken by a
    command, else every ``poll``), on a virtual clock the caller moves with ``advance``."""

    def __init__(self, state: Path, rooms: dict[str, list[str]], *, limits: WebLimits | None = None,
                 poll: float = 0.05) -> None:
        self.clock = VirtualClock()
        engine = Engine.new(make_plan(sum(len(r) for r in rooms.values())), rooms, clock=self.clock,
                            grammar=GRAMMAR, catalog=CATALOG)

        def rebuild(saved: Saved, on: Clock) -> Engine:
            return Engine(GameState.from_dict(saved.state), clock=on, grammar=GRAMMAR, catalog=CATALOG)

        self.bridge = Bridge()
        self.game = LiveGame(engine, Journal(state), epoch=0.0, lang="en", events=None, rebuild=rebuild,
                             sinks=[self.bridge], remote=self.bridge)
        self.token = new_token()
        self.server = WebServer(self.bridge, "127.0.0.1", 0, self.token, limits)
        self.port = self.server.start()
        self.base = f"http://127.0.0.1:{self.port}"
        engine.begin()
        self.game.save()
        self.poll, self.ticks = poll, 0
        self._target = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="game", daemon=True)
        self._thread.start()
        self.advance(0.0)  # the first view is out

    def _run(self) -> None:
        while not self._stop.is_set():
            if self._target > self.clock.now():
                self.clock.set(self._target)
            self.game.tick()
            self.ticks += 1
            select.select([self.bridge.wake_fd], [], [], self.poll)

    def advance(self, t: float) -> None:
        """Move the game's clock to ``t`` and wait until the game thread has ticked there (timers fired)."""
        self._target = max(self._target, t)
        ticks = self.ticks
        while self.ticks < ticks + 2:
            time.sleep(0.001)

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self.game.close()
        self.server.stop()


@dataclass
class Page:
    """A room page's event stream: every view it got, with the monotonic time it arrived."""

    views: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    closed: bool = False

    async def watch(self, session: aiohttp.ClientSession, base: str, ready: asyncio.Event) -> None:
        async with session.get(f"{base}/api/events", timeout=aiohttp.ClientTimeout(total=None)) as response:
            assert response.status == 200 and response.content_type == "text/event-stream"
            kind = None
            async for raw in response.content:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: ") and kind == "view":
                    self.views.append((time.monotonic(), json.loads(line[6:])))
                    ready.set()
        self.closed = True


async def send(session: aiohttp.ClientSession, server: LiveServer, text: str, room: str | None) -> dict[str, Any]:
    """One command, as the host page sends it (waiting out a 429 as a host would); the answer."""
    while True:
        async with session.post(f"{server.base}/api/command", json={"room": room, "text": text},
                                headers=server.headers()) as response:
            if response.status == 429:
                await asyncio.sleep(float(response.headers["Retry-After"]))
                continue
            body: dict[str, Any] = await response.json()
            body["status"] = response.status
            return body


async def play_game(server: LiveServer, clients: int, steps: tuple[tuple[float | None, str | None, str], ...] = GAME
                    ) -> dict[str, Any]:
    """Play ``steps`` through the API with ``clients`` pages watching; the figures."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        pages = [Page() for _ in range(clients)]
        ready = [asyncio.Event() for _ in pages]
        watchers = [asyncio.create_task(p.watch(session, server.base, r)) for p, r in zip(pages, ready, strict=True)]
        await asyncio.wait_for(asyncio.gather(*(r.wait() for r in ready)), 30)
        cpu0, wall0 = server.server.cpu_seconds(), time.monotonic()
        answers, lags = [], []
        for at, room, text in steps:
            if at is not None:
                await asyncio.to_thread(server.advance, at)
            await asyncio.sleep(0.01)  # the views of the clock's jump reach the pages first
            before = [p.views[-1][1]["version"] for p in pages]
            sent = time.monotonic()
            answer = await send(session, server, text, room)
            answers.append(answer)
            lags.append(await _seen_by_all(pages, before, sent))
        cpu, wall = server.server.cpu_seconds() - cpu0, time.monotonic() - wall0
        views = min(len(p.views) for p in pages)
        result = {"clients": clients, "steps": len(steps), "accepted": sum(a["accepted"] for a in answers),
                  "refused": sum(not a["accepted"] for a in answers), "wall_seconds": round(wall, 3),
                  "server_cpu_seconds": round(cpu, 4), "views_per_client": views,
                  "cpu_ms_per_view_per_client": round(1000 * cpu / max(1, views * clients), 4),
                  "view_lag_ms_p50": round(1000 * sorted(lags)[len(lags) // 2], 1),
                  "view_lag_ms_max": round(1000 * max(lags), 1),
                  "final": pages[0].views[-1][1] if pages[0].views else None}
        server.close()
        await asyncio.wait_for(asyncio.gather(*watchers, return_exceptions=True), 10)
        result["pages_open_to_the_end"] = sum(p.closed and p.views[-1][1]["winner"] is not None for p in pages)
        return result


async def _seen_by_all(pages: list[Page], before: list[int], sent: float, timeout: float = 5.0) -> float:
    """How long after ``sent`` the last page got a view of the game changed by the command (every command
    changes it: its event, and a refusal's too); the clock does not move meanwhile, so nothing else does."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        arrived = [next((at for at, v in p.views if v["version"] > v0), None) for p, v0 in zip(pages, before,
                                                                                               strict=True)]
        if all(a is not None for a in arrived):
            return max(a for a in arrived if a is not None) - sent
        await asyncio.sleep(0.002)
    raise AssertionError("a page did not get the view after a command")


async def idle(clients: int, seconds: float, state: Path) -> dict[str, Any]:
    """A round running in real time for ``seconds`` with ``clients`` pages: the server's CPU share."""
    server = LiveServer(state, ROOMS)
    real0 = time.monotonic()
    stop = threading.Event()

    def run_clock() -> None:  # the virtual clock follows the wall clock, as a live game's does
        while not stop.is_set():
            server.advance(time.monotonic() - real0)
            time.sleep(0.02)

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        await send(session, server, "start the game", None)
        pages = [Page() for _ in range(clients)]
        ready = [asyncio.Event() for _ in pages]
        watchers = [asyncio.create_task(p.watch(session, server.base, r)) for p, r in zip(pages, ready, strict=True)]
        await asyncio.wait_for(asyncio.gather(*(r.wait() for r in ready)), 30)
        clock = threading.Thread(target=run_clock, daemon=True)
        clock.start()
        cpu0, wall0 = server.server.cpu_seconds(), time.monotonic()
        await asyncio.sleep(seconds)
        cpu, wall = server.server.cpu_seconds() - cpu0, time.monotonic() - wall0
        stop.set()
        clock.join()
        server.close()
        await asyncio.gather(*watchers, return_exceptions=True)
    return {"clients": clients, "seconds": round(wall, 2), "server_cpu_seconds": round(cpu, 4),
            "server_cpu_percent_of_one_core": round(100 * cpu / wall, 3)}


def main(argv: list[str] | None = None) -> None:
    import tempfile

    parser = argparse.ArgumentParser(prog="python -m benchmarks.web_load", description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=30)
    parser.add_argument("--idle", type=float, default=20.0, help="seconds of a round in real time (0: none)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        game = asyncio.run(play_game(LiveServer(Path(tmp) / "g.json", ROOMS), args.clients))
        game.pop("final")
        report: dict[str, Any] = {"command": "python -m benchmarks.web_load", "scripted_game": game}
        if args.idle:
            report["idle_round"] = asyncio.run(idle(args.clients, args.idle, Path(tmp) / "i.json"))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
