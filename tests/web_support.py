"""``moderator play --web`` in a subprocess for the web panel's tests: its printed link, its stdin, its end."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

#: With ``--seed 3`` these eight are split A: Alice, Frank, Heidi, Carol; B: the others (tests/test_play_voice.py).
PLAYERS = "Alice,Bob,Carol,Dave,Erin,Frank,Grace,Heidi"
_LINK = re.compile(r"^web: (http://([^/]+):(\d+)/host\?token=(\S+))$")


class WebGame:
    """A ``moderator play --web 127.0.0.1:0`` process: ``base`` and ``token`` come from the line it prints."""

    def __init__(self, tmp: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 30.0) -> None:
        self.lines: list[str] = []
        self.err: list[str] = []
        command = [sys.executable, "-m", "moderator", "play", "--players", PLAYERS, "--seed", "3",
                   "--state", str(tmp / "game.json"), *args]
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env={**os.environ, **(env or {})})
        self._readers = [threading.Thread(target=self._read, args=(self.proc.stdout, self.lines), daemon=True),
                         threading.Thread(target=self._read, args=(self.proc.stderr, self.err), daemon=True)]
        for reader in self._readers:
            reader.start()
        self.link = self.wait_for(lambda line: _LINK.match(line) is not None, timeout)
        m = _LINK.match(self.link)
        assert m is not None
        self.base = f"http://{m.group(2)}:{m.group(3)}"
        self.port, self.token = int(m.group(3)), m.group(4)

    @staticmethod
    def _read(stream: Any, into: list[str]) -> None:
        for line in stream:
            into.append(line.rstrip("\n"))

    def wait_for(self, check: Any, timeout: float = 10.0) -> str:
        """The first line printed that passes ``check`` (waiting for the process, at most ``timeout`` s)."""
        end = time.monotonic() + timeout
        seen = 0
        while time.monotonic() < end:
            for line in self.lines[seen:]:
                if check(line):
                    return line
            seen = len(self.lines)
            if self.proc.poll() is not None and seen == len(self.lines):
                raise AssertionError(f"moderator play exited ({self.proc.returncode}): {self.err}")
            time.sleep(0.02)
        raise AssertionError(f"not printed in {timeout} s; printed: {self.lines[-5:]}, {self.err[-5:]}")

    def send(self, line: str) -> None:
        """Type a line at the moderator's keyboard."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def state(self) -> dict[str, Any]:
        """``GET /api/state``."""
        with urllib.request.urlopen(self.base + "/api/state", timeout=5) as response:
            return json.loads(response.read())

    def command(self, text: str, room: str | None = None, token: str | None = None) -> tuple[int, dict[str, Any]]:
        """``POST /api/command``: the status and the answer."""
        body = json.dumps({"room": room, "text": text}).encode()
        request = urllib.request.Request(self.base + "/api/command", data=body, method="POST",
                                         headers={"Authorization": f"Bearer {token or self.token}",
                                                  "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"{}")

    def quit(self, timeout: float = 30.0) -> int:
        """Type 'quit' and wait for the process to end; its exit status."""
        if self.proc.poll() is None:
            self.send("quit")
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for reader in self._readers:
            reader.join(timeout=5)
        return self.proc.returncode
