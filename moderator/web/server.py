"""The web panel's HTTP server: aiohttp on an asyncio loop of its own thread.

It knows the game only through the ``Bridge``: the views and events the game's thread sends it (kept as finished
JSON strings), and the commands it queues there. Pages and their scripts are files of this package; nothing is
loaded from anywhere else. No access log is kept: the host page's address carries the token.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
import time
from collections.abc import Awaitable, Callable
from importlib.resources import files
from typing import Any

from aiohttp import web

from moderator.errors import WebError
from moderator.web.bridge import Bridge
from moderator.web.guard import SECURITY_HEADERS, RateLimiter, WebLimits, bearer, token_matches

#: The bundled files that may be served, by name, with their types.
ASSETS = {"panel.css": "text/css", "icon.svg": "image/svg+xml", "room.js": "text/javascript",
          "host.js": "text/javascript", "common.js": "text/javascript", "room.html": "text/html",
          "host.html": "text/html"}
_ROOMS = ("A", "B")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def asset(name: str) -> bytes:
    """A bundled file of ``moderator/web/static``."""
    return files("moderator.web").joinpath("static", name).read_bytes()


class WebServer:
    """Serves the room pages, the host page and the API on ``host:port`` (port 0: any free one) until ``stop``."""

    def __init__(self, bridge: Bridge, host: str, port: int, token: str, limits: WebLimits | None = None) -> None:
        self.bridge, self.host, self.port, self._token = bridge, host, port, token
        self.limits = limits or WebLimits()
        self._assets = {name: asset(name) for name in ASSETS}
        self._view: str | None = None
        self._streams: set[asyncio.Queue[bytes | None]] = set()
        self._limiter = RateLimiter(self.limits.rate, self.limits.burst)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._error: WebError | None = None
        self._cpu = (0.0, 0.0)

    # --- lifecycle, from the game's thread ------------------------------------------------------------

    def start(self) -> int:
        """Listen, on a thread of its own; returns the port. Raises WebError when the address cannot be used."""
        ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(ready,), name="moderator-web", daemon=True)
        self._thread.start()
        ready.wait()
        if self._error is not None:
            self._thread.join()
            raise self._error
        self.bridge.connect(self._outlet)
        return self.port

    def stop(self) -> None:
        """End every event stream, stop listening, and end the thread."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or not thread.is_alive():
            return
        with contextlib.suppress(RuntimeError):  # the loop already ended
            loop.call_soon_threadsafe(self._end_streams)
            loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)

    def cpu_seconds(self) -> float:
        """The CPU time the server's thread has used so far."""
        start, end = self._cpu
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            future = asyncio.run_coroutine_threadsafe(self._thread_time(), self._loop)
            return future.result(timeout=5) - start
        return end - start

    async def _thread_time(self) -> float:
        return time.thread_time()

    def _serve(self, ready: threading.Event) -> None:
        loop = self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._open())
        except OSError as exc:  # asyncio's message repeats the address: the system's reason alone is clearer
            why = os.strerror(exc.errno).lower() if exc.errno else str(exc)
            self._error = WebError(f"cannot serve the web panel on {self.host}:{self.port}: {why}")
            loop.close()
            ready.set()
            return
        self._cpu = (time.thread_time(), 0.0)
        ready.set()
        try:
            loop.run_forever()
            loop.run_until_complete(self._close())
        finally:
            self._cpu = (self._cpu[0], time.thread_time())
            loop.close()

    async def _open(self) -> None:
        app = web.Application(middlewares=[self._headers], client_max_size=self.limits.body)
        app.add_routes([
            web.get("/", self._index), web.get("/room/{room}", self._room), web.get("/host", self._host),
            web.get("/static/{name}", self._static), web.get("/api/state", self._state),
            web.get("/api/events", self._events), web.post("/api/command", self._command),
        ])
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        try:
            await site.start()
        except OSError:
            await self._runner.cleanup()
            raise
        server = site._server
        sockets = getattr(server, "sockets", None) or ()
        self.port = sockets[0].getsockname()[1] if sockets else self.port

    async def _close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    # --- what the game's thread sends -------------------------------------------------------------------

    def _outlet(self, kind: str, payload: str) -> None:
        """Called on the game's thread: hand the message to the server's loop."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop is closing: the game is ending
                loop.call_soon_threadsafe(self._deliver, kind, payload)

    def _deliver(self, kind: str, payload: str) -> None:
        if kind == "view":
            self._view = payload
        message = f"event: {'view' if kind == 'view' else 'game'}\ndata: {payload}\n\n".encode()
        for queue in self._streams:
            if queue.full():  # a client too slow to keep up misses old messages, never the newest
                with contextlib.suppress(asyncio.QueueEmpty):
                    queue.get_nowait()
            queue.put_nowait(message)

    def _end_streams(self) -> None:
        for queue in self._streams:
            with contextlib.suppress(asyncio.QueueEmpty):
                while queue.full():
                    queue.get_nowait()
            queue.put_nowait(None)

    # --- pages -----------------------------------------------------------------------------------------

    @web.middleware
    async def _headers(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            response = await handler(request)
        except web.HTTPException as exc:
            exc.headers.update(SECURITY_HEADERS)
            raise
        response.headers.update(SECURITY_HEADERS)
        return response

    async def _index(self, request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound("/room/A")

    async def _room(self, request: web.Request) -> web.StreamResponse:
        if request.match_info["room"] not in _ROOMS:
            raise web.HTTPNotFound(text="There are two rooms: /room/A and /room/B.")
        return self._file("room.html")

    async def _host(self, request: web.Request) -> web.StreamResponse:
        if not token_matches(request.query.get("token"), self._token):
            raise web.HTTPUnauthorized(text="The host page needs the link moderator play printed (with its token).")
        return self._file("host.html")

    async def _static(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        if name not in ASSETS or name.endswith(".html"):
            raise web.HTTPNotFound()
        return self._file(name)

    def _file(self, name: str) -> web.Response:
        return web.Response(body=self._assets[name], content_type=ASSETS[name], charset="utf-8")

    # --- the API -------------------------------------------------------------------------------------

    async def _state(self, request: web.Request) -> web.StreamResponse:
        if self._view is None:
            raise web.HTTPServiceUnavailable(text="the game is starting")
        return web.Response(text=self._view, content_type="application/json")

    async def _events(self, request: web.Request) -> web.StreamResponse:
        if len(self._streams) >= self.limits.streams:
            raise web.HTTPServiceUnavailable(text="too many open event streams")
        queue: asyncio.Queue[bytes | None] = asyncio.Queue(self.limits.queued)
        if self._view is not None:
            queue.put_nowait(f"event: view\ndata: {self._view}\n\n".encode())
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "X-Accel-Buffering": "no"})
        response.headers.update(SECURITY_HEADERS)
        self._streams.add(queue)
        try:
            await response.prepare(request)
            await response.write(b"retry: 1000\n\n")
            while True:
                try:
                    message = await asyncio.wait_for(queue.get(), self.limits.keepalive)
                except asyncio.TimeoutError:
                    message = b": keepalive\n\n"
                if message is None:
                    break
                await response.write(message)
        except ConnectionResetError:  # the page went away
            pass
        finally:
            self._streams.discard(queue)
        return response

    async def _command(self, request: web.Request) -> web.StreamResponse:
        wait = self._limiter.allow(request.remote or "?", asyncio.get_running_loop().time())
        if wait:
            raise web.HTTPTooManyRequests(text=_error("too many commands; wait a moment"),
                                          headers={"Retry-After": str(max(1, round(wait + 0.5)))},
                                          content_type="application/json")
        given = bearer(request.headers.get("Authorization")) or request.query.get("token")
        if not token_matches(given, self._token):
            raise web.HTTPUnauthorized(text=_error("the host token is missing or wrong"),
                                       headers={"WWW-Authenticate": "Bearer"}, content_type="application/json")
        if request.content_length is not None and request.content_length > self.limits.body:
            raise web.HTTPRequestEntityTooLarge(max_size=self.limits.body, actual_size=request.content_length)
        room, text = self._parse(await request.read())
        future = self.bridge.submit(room, text)
        try:
            answer = await asyncio.wait_for(asyncio.wrap_future(future), self.limits.answer_timeout)
        except asyncio.TimeoutError:
            raise web.HTTPServiceUnavailable(text=_error("the game did not answer in time"),
                                             content_type="application/json") from None
        return web.json_response(answer.to_json(), status=200 if answer.accepted else 409)

    def _parse(self, body: bytes) -> tuple[str | None, str]:
        """The command's room and text; a clear 400 for anything else."""
        try:
            data: Any = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            raise web.HTTPBadRequest(text=_error('expected JSON: {"room": "A", "text": "pause"}'),
                                     content_type="application/json") from None
        if not isinstance(data, dict) or not isinstance(data.get("text"), str) or not data["text"].strip():
            raise web.HTTPBadRequest(text=_error('"text" must be the command, as a non-empty string'),
                                     content_type="application/json")
        if len(data["text"]) > self.limits.text:
            raise web.HTTPBadRequest(text=_error(f'"text" is longer than {self.limits.text} characters'),
                                     content_type="application/json")
        room = data.get("room")
        if room not in (None, *_ROOMS):
            raise web.HTTPBadRequest(text=_error('"room" must be "A", "B" or null'), content_type="application/json")
        return room, data["text"]


def _error(message: str) -> str:
    return json.dumps({"error": message})
