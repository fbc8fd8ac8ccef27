"""``moderator play --web``: the option, and the panel's life beside the game (serve, print the link, stop)."""

from __future__ import annotations

import argparse
import ipaddress
import re
import socket
from dataclasses import dataclass, field
from typing import TextIO

from moderator.web.bridge import Bridge
from moderator.web.guard import new_token

#: Where the server listens unless ``--web`` names an address: this machine only.
LOCALHOST = "127.0.0.1"
_ADDRESS = re.compile(r"^(?:(?P<host>\[[0-9A-Fa-f:.]+\]|[^:\[\]]+):)?(?P<port>\d{1,5})$")


@dataclass(frozen=True)
class WebAddress:
    """Where the web panel listens."""

    host: str
    port: int


def web_address(text: str) -> WebAddress:
    """``--web``'s value: ``PORT`` (on localhost) or ``HOST:PORT`` (``[::1]:PORT`` for IPv6); port 0 is any free one.

    Raises:
        argparse.ArgumentTypeError: it is not such an address (argparse exits 2 with the message).
    """
    m = _ADDRESS.match(text.strip())
    if m is None or int(m.group("port")) > 65535:
        raise argparse.ArgumentTypeError(f"expected [HOST:]PORT with a port from 0 to 65535, e.g. 8080 or "
                                         f"0.0.0.0:8080, not {text!r}")
    host = (m.group("host") or LOCALHOST).strip("[]")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        if host != "localhost":
            raise argparse.ArgumentTypeError(f"the web panel's host must be an IP address of this machine (or "
                                             f"localhost), not {host!r}") from None
        host = LOCALHOST
    return WebAddress(host, int(m.group("port")))


def add_web_options(p: argparse.ArgumentParser) -> None:
    """Add ``--web``."""
    p.add_argument("--web", type=web_address, metavar="[HOST:]PORT",
                   help="serve the web panel while the game runs: read-only room pages (/room/A, /room/B) for "
                   "phones and TVs, and the host's remote (/host, with the token in the printed link, also shown as "
                   "a QR code). It listens on this machine only (127.0.0.1) unless HOST names an address, such as "
                   "this machine's address on the party's network, or 0.0.0.0 for every one; port 0 picks a free one")


@dataclass
class WebPanel:
    """The web server of one game, and its token (new and random for every game)."""

    address: WebAddress
    bridge: Bridge = field(default_factory=Bridge)
    token: str = field(default_factory=new_token)

    def __post_init__(self) -> None:
        from moderator.web import live_view
        from moderator.web.server import WebServer  # aiohttp is imported only for --web

        self.server = WebServer(self.bridge, self.address.host, self.address.port, self.token)
        live_view.warm()  # not at the first command from the host page

    def start(self, out: TextIO) -> str:
        """Listen, then print the host page's link (the one place the token is shown) and its QR code.

        Raises:
            WebError: the address cannot be used (a port in use, an address not of this machine).
        """
        port = self.server.start()
        link = f"http://{_shown_host(self.address.host)}:{port}/host?token={self.token}"
        print(f"web: {link}", file=out, flush=True)
        _print_qr(link, out)
        return link

    def stop(self) -> None:
        """Stop serving (and answer any command still waiting, if the game did not get to it)."""
        self.server.stop()
        self.bridge.close()


def _shown_host(host: str) -> str:
    """The host for the link: every address (0.0.0.0, ::) is reached by this machine's name."""
    if ipaddress.ip_address(host).is_unspecified:
        return socket.gethostname()
    return f"[{host}]" if ":" in host else host


def _print_qr(link: str, out: TextIO) -> None:
    import segno

    segno.make(link, error="l").terminal(out=out, compact=True, border=2)
    out.flush()
