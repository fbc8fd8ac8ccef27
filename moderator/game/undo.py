"""What "undo" can take back: per room, so that one room's "undo" never reverses the other room's change.

Each undoable command records the rooms it changed as they were before it. "undo" said in a room takes back
that room's last change, and only that room's state is put back; "undo" from no room (the host's keyboard,
or a shared microphone that cannot tell the room) takes back the last change of either room. A change that
locks something (hostages locked, the round over) ends what its room can undo.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from moderator.game.actions import names_said
from moderator.game.state import GameState, RoomState


@dataclass(frozen=True)
class Change:
    """One undoable command: what it changed, as it was before."""

    rooms: dict[str, RoomState]
    """The rooms the command changed, as they were before it."""
    awaiting: str | None
    """Which room's read-back a "yes" answered before it (a read-back sets it)."""
    asked_room: bool
    intent: str
    """The command taken back, as the grammar parsed it (the same typed or spoken)."""
    slots: dict[str, Any]

    @property
    def names(self) -> list[str]:
        """The players the command named, in the order it named them."""
        return names_said(self.slots)

    @property
    def room(self) -> str:
        """The room named when it is undone (the first one it changed)."""
        return next(iter(self.rooms))


class UndoHistory:
    """The undoable changes of a game, oldest first."""

    def __init__(self) -> None:
        self._changes: list[Change] = []
        #: How many times something locked: a command that locked while it was applied is not undoable.
        self.locks = 0

    def record(self, before: GameState, after: GameState, intent: str, slots: dict[str, Any]) -> None:
        """Remember a command that turned ``before`` into ``after`` (a change to no room is not recorded)."""
        rooms = {name: room for name, room in before.rooms.items() if room != after.rooms[name]}
        if rooms:
            self._changes.append(Change(rooms, before.awaiting, before.asked_room, intent, dict(slots)))

    def can_undo(self, room: str | None = None) -> bool:
        """Whether "undo" from ``room`` (None: from no room) has a change to take back."""
        return self._last(room) is not None

    def undo(self, state: GameState, room: str | None = None) -> Change:
        """Put back in ``state`` the last change of ``room`` (None: of either room); returns it."""
        index = self._last(room)
        if index is None:
            raise LookupError(f"nothing to undo in room {room}")
        change = self._changes.pop(index)
        for name, saved in change.rooms.items():
            state.rooms[name] = saved
        if state.awaiting in change.rooms or change.awaiting in change.rooms:
            state.awaiting = change.awaiting
        state.asked_room = change.asked_room
        return change

    def locked(self, room: str | None = None) -> None:
        """Something locked in ``room`` (None: in the whole game): its changes can no longer be undone."""
        self.locks += 1
        self._changes = [] if room is None else [c for c in self._changes if room not in c.rooms]

    def _last(self, room: str | None) -> int | None:
        for index in range(len(self._changes) - 1, -1, -1):
            if room is None or room in self._changes[index].rooms:
                return index
        return None
