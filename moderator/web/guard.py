"""What keeps the web panel's control safe on a party's LAN: the host token, the rate limit, and the limits."""

from __future__ import annotations

import hmac
import secrets
from collections import OrderedDict
from dataclasses import dataclass

#: Sent with every answer: nothing loads from elsewhere, no page can frame ours, and no URL (the host's holds the
#: token) leaks to another site as a referrer.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


@dataclass(frozen=True)
class WebLimits:
    """The web server's limits: fixed here, not a host's option."""

    body: int = 4096
    """The largest request body accepted, in bytes (a command is a line of text)."""

    rate: float = 10.0
    """Control requests (``POST /api/command``) per second one client may send, sustained."""

    burst: int = 20
    """How many control requests one client may send at once before ``rate`` applies."""

    text: int = 500
    """The longest command text, in characters."""

    streams: int = 100
    """Open event streams at most (room pages, host pages, API clients)."""

    answer_timeout: float = 10.0
    """How long a command may wait for the game's thread to answer it, in seconds."""

    keepalive: float = 15.0
    """An idle event stream gets a comment this often, so proxies and phones keep it open."""

    queued: int = 64
    """Messages kept for one event stream that reads too slowly; older views are dropped."""


def new_token() -> str:
    """A new random host token (128 bits), for one game."""
    return secrets.token_urlsafe(16)


def token_matches(given: str | None, token: str) -> bool:
    """True when ``given`` is the host token, compared in constant time."""
    return given is not None and hmac.compare_digest(given.encode("utf-8", "replace"), token.encode("utf-8"))


def bearer(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer TOKEN`` header (None without one)."""
    if header is None:
        return None
    scheme, _, value = header.strip().partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


class RateLimiter:
    """A token bucket per client address: ``burst`` requests at once, then ``rate`` a second.

    At most ``clients`` addresses are remembered (the least recently seen is forgotten first), so a flood of
    addresses cannot grow it without end.
    """

    def __init__(self, rate: float, burst: int, clients: int = 1024) -> None:
        self.rate, self.burst, self.clients = rate, burst, clients
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def allow(self, client: str, now: float) -> float:
        """Take one request of ``client`` at time ``now``: 0 if allowed, else the seconds until one would be."""
        tokens, then = self._buckets.pop(client, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - then) * self.rate)
        wait = 0.0 if tokens >= 1.0 else (1.0 - tokens) / self.rate
        self._buckets[client] = (tokens - 1.0 if wait == 0.0 else tokens, now)
        while len(self._buckets) > self.clients:
            self._buckets.popitem(last=False)
        return wait
