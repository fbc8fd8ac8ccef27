"""The live view of a Room 25 game for the terminal ("status", and the prompt's toolbar)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from moderator.room25.engine import Room25Engine


def view_text(engine: Room25Engine, *, width: int = 100, color: bool = False, alerts: list[str] | None = None) -> str:
    """The live view of a Room 25 game: the phase, the turn order, who is called, Room 25, the dead."""
    s = engine.state
    head = f"Room 25 · {s.plan['mode']} · turn {s.turn} of {s.turns} · {engine.leaf().replace('_', ' ')}"
    if (left := engine.time_left()) is not None:
        head += f" · {int(left + 0.999)} s to program"
    if s.winner:
        head += f" · {s.winner.upper()} WIN ({s.reason})"
    lines = [*(f"! {a}" for a in alerts or []), head, f"order: {', '.join(s.order) or '-'}"]
    if s.acting:
        lines.append(f"called: {s.acting[0]}")
    lines.append(f"Room 25: {', '.join(s.in_room25) or '-'}   dead: {', '.join(s.dead) or '-'}")
    if s.pending:
        lines.append(f"must reveal: {', '.join(p for p, _ in s.pending)}")
    return "\n".join(line[:width] for line in lines)
