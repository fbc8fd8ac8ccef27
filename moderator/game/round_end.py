"""The rules of the end of a round: "room A is ready", the hostage choice (read back, confirmed, corrected by the
host), the parley, and the exchange that starts the next round or ends the game.

Rules as in ``actions``: each checks (raising ``Refusal``) and returns the change to apply.
"""

from __future__ import annotations

from moderator.game.actions import Apply, Game, Refusal, Slots, _in_room, _not_ready, _room
from moderator.game.events import Exchange, GameOver, Hostages
from moderator.game.state import ROOMS


def ready(eng: Game, slots: Slots, room: str | None) -> Apply:
    """No-timer variant: a leader says the room is ready to end the round."""
    target = slots["room"]
    if eng.rounds.seconds() is not None:
        raise Refusal("refuse.ready_timed")
    state = eng.state.rooms[target]
    if state.leader is None:
        raise Refusal("refuse.no_leader", room=target)
    if state.ready:
        raise Refusal("refuse.already_ready", room=target)
    if state.hostages is None:  # the rulebook: the leader announces the hostages, then signals ready
        raise Refusal("refuse.ready_hostages_first", room=target,
                      hostages=eng.count("hostage", eng.rounds.hostages_due()))

    def apply() -> None:
        state.ready = True
        eng.say("both", "round.ready", room=target)
        if all(r.ready for r in eng.state.rooms.values()):
            eng.round_over()
    return apply


def hostages(eng: Game, slots: Slots, room: str | None) -> Apply:
    """A leader names the round's hostages; the choice locks at once, or after a "yes" when read back."""
    players: list[str] = list(slots["players"])
    state = _room(eng, room)
    assert room is not None
    correcting = state.hostages is not None
    if correcting and not (eng.by_host and state.typed_lock):  # only the host's own typed choice can be corrected
        raise Refusal("refuse.hostages_locked", room=room, players=state.hostages)
    if correcting:
        _not_ready(state, room)
    for p in players:
        _in_room(eng, p, room, "refuse.hostage_wrong_room")
    if state.leader is None:
        raise Refusal("refuse.no_leader", room=room)
    if state.leader in players:
        raise Refusal("refuse.hostage_leader", player=state.leader, room=room)
    dupes = sorted({p for p in players if players.count(p) > 1})
    if dupes:
        raise Refusal("refuse.hostage_twice", player=dupes[0])
    due = eng.rounds.hostages_due()
    if len(players) != due:
        raise Refusal("refuse.hostage_count", room=room, due=eng.count("hostage", due), named=len(players))
    if correcting:
        return lambda: _correct_hostages(eng, room, players)
    if eng.reading_back:
        return lambda: _read_back(eng, room, players)
    return lambda: _lock_hostages(eng, room, players)


def _correct_hostages(eng: Game, room: str, players: list[str]) -> None:
    """The host retyped a room's locked choice before the leaders met: the new one replaces it (its own
    ``hostages`` event; the last one counts)."""
    eng.state.rooms[room].hostages = players
    eng.emit(Hostages(room, players))
    eng.say(room, "hostages.corrected", players=players)


def _read_back(eng: Game, room: str, players: list[str]) -> None:
    """Say a heard hostage choice back; it locks on "yes" (``confirm``)."""
    eng.state.rooms[room].pending = players
    eng.state.awaiting = room
    eng.say(room, "hostages.read_back", room=room, players=eng.names(players))


def confirm(eng: Game, slots: Slots, room: str | None) -> Apply:
    """ "yes"/"no": answers the read-back of ``room``'s hostages (a shared mic: the last one read back)."""
    room = room or eng.state.awaiting
    players = eng.state.rooms[room].pending if room is not None else None
    if room is None or players is None:
        raise Refusal("refuse.nothing_to_confirm")
    if slots["answer"] == "yes":
        return lambda: _lock_hostages(eng, room, players)

    def choose_again() -> None:
        eng.state.rooms[room].pending = None
        eng.state.awaiting = None
        eng.say(room, "hostages.again", room=room, hostages=eng.count("hostage", eng.rounds.hostages_due()))
    return choose_again


def _lock_hostages(eng: Game, room: str, players: list[str]) -> None:
    """Lock a room's hostage choice; when both are locked, send the leaders to parley."""
    eng.state.rooms[room].hostages = players
    eng.state.rooms[room].typed_lock = eng.by_host
    eng.state.rooms[room].pending = None
    if eng.state.awaiting == room:
        eng.state.awaiting = None
    eng.fire(f"hostages_{room}")
    eng.emit(Hostages(room, players))
    eng.say(room, "hostages.locked", players=players)
    # Without a timer the hostages are named during the round; the parley waits for both rooms' "ready".
    if not eng.in_state("round") and all(r.hostages is not None for r in eng.state.rooms.values()):
        to_parley(eng)


def to_parley(eng: Game) -> None:
    """Both rooms' hostages are locked: send the leaders to meet."""
    eng.fire("all_locked")
    eng.say("both", "parley.last" if eng.rounds.last() else "parley")


def met(eng: Game, slots: Slots, room: str | None) -> Apply:
    """The leaders have met: the next round's timer starts, then the exchange (``leaders_met``)."""
    return lambda: leaders_met(eng)


def leaders_met(eng: Game) -> None:
    """The parley is over: start the next round's timer, then exchange the hostages (after the last round:
    the game is over, on to the reveal)."""
    eng.fire("met")
    last = eng.rounds.last()
    if not last:
        eng.start_round(eng.state.round + 1)
    rooms = eng.state.rooms
    # The hostages, and the extra player a Bodyguard sends (the advanced game).
    to_a = list(rooms["B"].hostages or []) + rooms["B"].extra
    to_b = list(rooms["A"].hostages or []) + rooms["A"].extra
    rooms["A"].members = [p for p in rooms["A"].members if p not in to_b] + to_a
    rooms["B"].members = [p for p in rooms["B"].members if p not in to_a] + to_b
    for r in rooms.values():
        r.hostages, r.typed_lock, r.extra = None, False, []
    eng.state.sent += to_b + to_a
    eng.emit(Exchange(to_a, to_b))
    eng.say("both", "exchange")
    # One line per hostage, said in the room they leave: each can be rendered before the game.
    for player in to_b:
        eng.say("A", "exchange.player", player=player, room="B")
    for player in to_a:
        eng.say("B", "exchange.player", player=player, room="A")
    if not last:
        eng.fire("next_round")
        return
    eng.fire("end_game")
    eng.emit(GameOver({r: list(rooms[r].members) for r in ROOMS}))
    eng.say("both", "game.over")
    s = eng.state
    advanced = bool(s.plan.get("preset") or s.plan.get("characters"))
    if s.plan["deck"].get("gambler") and s.buried_card != "gambler":
        eng.fire("ask_gambler")
        maybe_buried = s.plan["buried"] and s.cards is None
        buried_key = "reveal.gambler_buried_advanced" if advanced else "reveal.gambler_buried"
        eng.say("both", buried_key if maybe_buried else "reveal.gambler")
    else:
        eng.fire("ask_reveal")
        if advanced:
            eng.reveal_next(first=True)
        else:
            eng.say("both", "reveal.everyone")
