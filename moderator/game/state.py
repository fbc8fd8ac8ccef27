"""The game's data: rooms, leaders, hostages, the round's clock. Serialisable, so it can be journaled."""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field
from typing import Any

from moderator.errors import JournalError

ROOMS = ("A", "B")


def other(room: str) -> str:
    """The other room."""
    return "B" if room == "A" else "A"


@dataclass
class RoomState:
    """One room's members and leadership."""

    members: list[str]
    leader: str | None = None
    #: Hostages named and locked this round (None until locked).
    hostages: list[str] | None = None
    #: No-timer variant: the leader said the room is ready.
    ready: bool = False
    #: An open abdication offer: [leader, player].
    offer: list[str] | None = None
    #: "No givesy-backsies": [new leader, giver]; the new leader cannot hand back to the giver this round.
    no_giveback: list[str] | None = None
    #: Who handed the leadership over this round (``givesy_backsies: fr``: none of them may lead again this round).
    gave_up: list[str] = field(default_factory=list)
    #: The moderator asked "Who is the new leader of this room?".
    asked_leader: bool = False
    #: Hostages heard by voice and read back, waiting for "yes" (they lock) or "no".
    pending: list[str] | None = None
    #: The locked hostages were typed by the host at the keyboard, who may correct them until the leaders have met.
    typed_lock: bool = False
    #: The advanced game: the leader took the room this round by the Usurper's reveal (no vote may unseat them).
    usurper_round: bool = False
    #: The advanced game: the extra player the Bodyguard sends to the other room at the end of this round.
    extra: list[str] = field(default_factory=list)


@dataclass
class GameState:
    """Everything needed to continue a game after a crash."""

    players: list[str]
    rooms: dict[str, RoomState]
    #: The plan as ``GamePlan.to_dict()`` plus the variant flags.
    plan: dict[str, Any]
    machine: str | list[str] = "setup"
    round: int = 0
    #: Game-clock time when the running round's time is up; None when paused or untimed.
    deadline: float | None = None
    #: Seconds left while paused.
    remaining: float | None = None
    #: The round's timers already said this round, as ``name:seconds before the end`` (``warn:60``).
    fired: list[str] = field(default_factory=list)
    #: Shared mic: "I appoint you as leader" waits for "room A".
    asked_room: bool = False
    #: The room whose hostages were read back last: a "yes" on a shared mic answers it.
    awaiting: str | None = None
    prediction: str | None = None
    president: str | None = None
    bomber: str | None = None
    winner: str | None = None
    #: The last announcement per room (for "repeat that"): [key, text].
    last_said: dict[str, list[str]] = field(default_factory=dict)
    #: The advanced game: player -> card id when the deal is known (a scenario's ``cards``); None in a live game,
    #: where the cards are dealt by hand and the players name their holders at the reveal.
    cards: dict[str, str] | None = None
    #: The buried card, when it is known (the deal, or the players said it at the reveal).
    buried_card: str | None = None
    #: Cards named at the reveal: card id -> player, or None for "nobody / it was buried".
    named: dict[str, str | None] = field(default_factory=dict)
    #: The Private Investigator's guess of the buried card, and the player the Sniper shot.
    guess: str | None = None
    shot: str | None = None
    #: Answers to the reveal's questions ("did the President card-share with the Doctor?"), by fact id.
    facts: dict[str, bool] = field(default_factory=dict)
    #: Every player sent as a hostage so far, in order.
    sent: list[str] = field(default_factory=list)
    #: The reveal's open question: "guess", "shoot", "names", or a fact id.
    asking: str | None = None
    #: Cards revealed publicly during the rounds (an Usurper, an Ambassador): player -> card id.
    public: dict[str, str] = field(default_factory=dict)

    def room_of(self, player: str) -> str | None:
        """The room a player is in."""
        for name, room in self.rooms.items():
            if player in room.members:
                return name
        return None

    def copy(self) -> GameState:
        """A deep copy, for undo."""
        return copy.deepcopy(self)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameState:
        """Rebuild from ``to_dict`` output; a malformed file is a JournalError."""
        try:
            rooms = {name: RoomState(**room) for name, room in data["rooms"].items()}
            fields = {k: v for k, v in data.items() if k != "rooms"}
            state = cls(rooms=rooms, **fields)
        except (KeyError, TypeError, AttributeError) as exc:
            raise JournalError(f"the saved game is damaged: {exc}") from exc
        if set(state.rooms) != set(ROOMS):
            raise JournalError("the saved game is damaged: it must have rooms A and B")
        return state
