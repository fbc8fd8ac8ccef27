"""The live view of both rooms for the terminal: members, leader, time left, hostages."""

from __future__ import annotations

import io
from collections.abc import Sequence

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from moderator.game.engine import Engine
from moderator.game.state import ROOMS

_PHASES = {
    "setup": "setting up", "briefing": "briefing: say 'start the game'", "round": "round running",
    "hostages": "time's up: leaders name hostages", "parley": "parley: leaders meet in the hallway",
    "exchange": "exchange", "game_over": "game over", "prediction": "the Gambler predicts",
    "reveal": "reveal: who is the President, who is the Bomber?", "result": "result",
}


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "no timer"
    whole = int(seconds + 0.999)
    return f"{whole // 60}:{whole % 60:02d}"


def headline(engine: Engine) -> str:
    """One line: the phase, the round and the time left."""
    s = engine.state
    top = (s.machine[0] if isinstance(s.machine, list) else s.machine).split(".")[0]
    phase = "round paused" if engine.in_state("round.paused") else _PHASES.get(top, top)
    parts = [phase]
    if s.round:
        parts.append(f"round {s.round} of {len(s.plan['rounds'])}")
    if engine.in_state("round"):
        parts.append(f"{_clock(engine.time_left())} left")
    if s.winner:
        parts.append(f"{s.winner.upper()} WINS")
    return " · ".join(parts)


def render(engine: Engine, alerts: Sequence[str] = ()) -> Group:
    """Both rooms side by side, under the headline (and any alerts, such as a failed speaker)."""
    s = engine.state
    table = Table(expand=True, show_lines=False)
    for room in ROOMS:
        table.add_column(f"Room {room} ({len(s.rooms[room].members)})", ratio=1)
    due = engine.hostages_due() if s.round else 0
    over = any(engine.in_state(phase) for phase in ("game_over", "prediction", "reveal", "result"))
    rows: list[list[Text]] = [[], [], []]
    for room in ROOMS:
        r = s.rooms[room]
        rows[0].append(Text(f"leader: {r.leader or '— none —'}", style="bold" if r.leader else "red"))
        chosen = ", ".join(r.hostages) if r.hostages else "not yet"
        if over:  # no more hostages: what the reveal has told so far
            known = [f"{role}: {p}" for role, p in (("President", s.president), ("Bomber", s.bomber)) if p in r.members]
            rows[1].append(Text("; ".join(known) or "-"))
        else:
            rows[1].append(Text(f"hostages due {due}: {chosen}" if s.round else "hostages: -"))
        names = Text()
        for i, p in enumerate(r.members):
            style = "bold yellow" if p == r.leader else ("cyan" if r.hostages and p in r.hostages else "")
            names.append(("★ " if p == r.leader else "") + p, style=style)
            if i < len(r.members) - 1:
                names.append(", ")
        rows[2].append(names)
    for row in rows:
        table.add_row(*row)
    lines = [Text(f"⚠ {alert}", style="bold red") for alert in alerts]
    return Group(Text(headline(engine), style="bold"), *lines, table)


def render_text(engine: Engine, *, width: int = 100, color: bool = False, alerts: Sequence[str] = ()) -> str:
    """The view as a string (ANSI colours when ``color``)."""
    own = getattr(engine, "view_text", None)  # another game's engine renders its own view (Room 25)
    if own is not None:
        return str(own(width=width, color=color, alerts=list(alerts)))
    buf = io.StringIO()
    Console(file=buf, width=width, force_terminal=color, color_system="standard" if color else None).print(
        render(engine, alerts)
    )
    return buf.getvalue().rstrip("\n")
