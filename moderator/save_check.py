"""A saved game checked against the game's invariants before anything trusts it (``Journal.load``).

A small explicit validator rather than a schema library: most of what matters is not a type but a relation
(a leader is a member of their room, a player is in exactly one room, the round exists in the plan, the clock
fields fit the phase), and each failure must name the field in a one-line message. Only known structure is
walked, so no input can make it recurse deeper than the format itself.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import fields
from functools import cache
from typing import Any

from moderator.game import catalogue
from moderator.game.engine import READ_BACK
from moderator.game.rules import GIVESY_BACKSIES
from moderator.game.state import ROOMS, GameState, RoomState
from moderator.game.statechart import SEP, load_statechart

FILE_KEYS = ("format", "epoch", "saved_at", "lang", "events", "game", "options", "state")
TEAMS = ("red", "blue")
#: Slack on a running round's deadline beyond its length: a round may start from a timer handled a little ahead.
_DEADLINE_SLACK = 5.0


class Invalid(Exception):
    """One field of a saved game breaks the format or an invariant of the game."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")
        self.where, self.problem = where, problem


def check_file(data: Any, *, languages: Collection[str] | None = None) -> None:
    """Check a parsed save file (its ``format`` is already known to be this version's).

    Raises:
        Invalid: naming the first field found wrong.
    """
    if not isinstance(data, dict):
        raise Invalid("the file", "is not a JSON object")
    _no_unknown(data, FILE_KEYS, "the file")
    _finite(data.get("epoch"), "epoch", minimum=0.0)
    saved_at = _finite(data.get("saved_at"), "saved_at")
    lang = _text(data.get("lang"), "lang")
    if languages is not None and lang not in languages:
        raise Invalid("lang", f"{_show(lang)} is not a language of this moderator ({', '.join(sorted(languages))})")
    if data.get("events") is not None:
        _text(data["events"], "events")
    if not isinstance(data.get("game", ""), str) or len(data.get("game", "")) > 64:
        raise Invalid("game", f"must be a game id, not {_show(data['game'])}")
    state = data.get("state")
    if isinstance(state, dict) and isinstance(state.get("plan"), dict) and state["plan"].get("game") == "room25":
        from moderator.room25.saved import check_state as check_room25

        check_room25(state, data.get("options") or {})  # another game's state (moderator/room25)
        return
    check_options(data.get("options") or {}, "options")
    check_state(state, saved_at=saved_at)


def check_options(options: Any, where: str) -> None:
    """The game's settings kept for ``--resume``: ``read_back`` and the spoken ``schedule``."""
    if not isinstance(options, dict):
        raise Invalid(where, "must be an object")
    _no_unknown(options, ("read_back", "schedule"), where)
    if "read_back" in options and options["read_back"] not in READ_BACK:
        raise Invalid(f"{where}.read_back", f"must be one of {', '.join(READ_BACK)}, not {_show(options['read_back'])}")
    if "schedule" in options:
        schedule = options["schedule"]
        if not isinstance(schedule, dict):
            raise Invalid(f"{where}.schedule", "must be an object")
        _no_unknown(schedule, ("warnings", "countdown", "leader_nag"), f"{where}.schedule")
        warnings = _list(schedule.get("warnings"), f"{where}.schedule.warnings")
        for i, mark in enumerate(warnings):
            _int(mark, f"{where}.schedule.warnings[{i}]", 1, 24 * 3600)
        _int(schedule.get("countdown"), f"{where}.schedule.countdown", 0, 3600)
        _int(schedule.get("leader_nag"), f"{where}.schedule.leader_nag", 0, 24 * 3600)


def check_state(state: Any, *, saved_at: float) -> None:
    """The game itself (``GameState.to_dict()``): every field, and how they fit together."""
    w = "state"
    if not isinstance(state, dict):
        raise Invalid(w, "must be an object")
    _no_unknown(state, [f.name for f in fields(GameState)], w)
    for key in ("players", "rooms", "plan", "machine", "round"):
        if key not in state:
            raise Invalid(f"{w}.{key}", "is missing")
    players = _names(state["players"], f"{w}.players")
    rounds = _plan(state["plan"], len(players))
    machine = _machine(state["machine"])
    top = machine[0].split(SEP)[0]
    untimed = all(r["seconds"] is None for r in rounds)
    _rooms(state["rooms"], players, machine, untimed)
    number = _int(state["round"], f"{w}.round", 0, len(rounds))
    if (number == 0) != (top in ("setup", "briefing")):
        raise Invalid(f"{w}.round", f"round {number} does not fit the phase {top!r}")
    _clock(state, machine, rounds[max(number, 1) - 1]["seconds"], saved_at)
    fired = _list(state.get("fired", []), f"{w}.fired")
    for i, name in enumerate(fired):
        _text(name, f"{w}.fired[{i}]")
    for key in ("asked_room",):
        _bool(state.get(key, False), f"{w}.{key}")
    if state.get("awaiting") not in (None, *ROOMS):
        raise Invalid(f"{w}.awaiting", f"must be A, B or null, not {_show(state['awaiting'])}")
    if state.get("prediction") not in (None, *TEAMS):
        raise Invalid(f"{w}.prediction", f"must be red, blue or null, not {_show(state['prediction'])}")
    if state.get("winner") not in (None, *TEAMS, "none"):  # none: the Doctor's and the Engineer's rules both fired
        raise Invalid(f"{w}.winner", f"must be red, blue, none or null, not {_show(state['winner'])}")
    if (state.get("winner") is not None) != (top == "result"):
        raise Invalid(f"{w}.winner", "is set exactly when the result is announced")
    for key in ("president", "bomber"):
        if state.get(key) is not None and state[key] not in players:
            raise Invalid(f"{w}.{key}", f"{_show(state[key])} is not a player of this game")
    _advanced(state, players, state["plan"])
    last_said = state.get("last_said", {})
    if not isinstance(last_said, dict):
        raise Invalid(f"{w}.last_said", "must be an object")
    for room, said in last_said.items():
        if room not in (*ROOMS, "both"):
            raise Invalid(f"{w}.last_said", f"unknown room {_show(room)}")
        if not (isinstance(said, list) and len(said) == 2 and all(isinstance(s, str) for s in said)):
            raise Invalid(f"{w}.last_said.{room}", "must be [phrase key, text]")


def _advanced(state: dict[str, Any], players: list[str], plan: dict[str, Any]) -> None:
    """The advanced game's fields: cards of the catalogue, held by players of this game."""
    w = "state"
    cards = catalogue.default().cards

    def card(value: Any, where: str) -> None:
        if not isinstance(value, str) or value not in cards:
            raise Invalid(where, f"{_show(value)} is not a card of the catalogue")

    def player(value: Any, where: str) -> None:
        if value not in players:
            raise Invalid(where, f"{_show(value)} is not a player of this game")

    for key in ("cards", "public"):
        held = state.get(key)
        if held is None and key == "cards":
            continue
        if not isinstance(held, dict):
            raise Invalid(f"{w}.{key}", "must be an object of player -> card")
        for who, what in held.items():
            player(who, f"{w}.{key}")
            card(what, f"{w}.{key}.{who}")
    named = state.get("named", {})
    if not isinstance(named, dict):
        raise Invalid(f"{w}.named", "must be an object of card -> player")
    for what, who in named.items():
        card(what, f"{w}.named")
        if who is not None:
            player(who, f"{w}.named.{what}")
    for key in ("buried_card", "guess"):
        if state.get(key) is not None:
            card(state[key], f"{w}.{key}")
    if state.get("shot") is not None:
        player(state["shot"], f"{w}.shot")
    for i, who in enumerate(_list(state.get("sent", []), f"{w}.sent")):
        player(who, f"{w}.sent[{i}]")
    facts = state.get("facts", {})
    if not isinstance(facts, dict) or not all(isinstance(k, str) and isinstance(v, bool) for k, v in facts.items()):
        raise Invalid(f"{w}.facts", "must be an object of question -> true or false")
    if state.get("asking") is not None:
        _text(state["asking"], f"{w}.asking")
    preset = plan.get("preset")
    if preset is not None and (not isinstance(preset, str) or preset not in catalogue.default().presets):
        raise Invalid(f"{w}.plan.preset", f"{_show(preset)} is not a preset of the catalogue")
    for i, what in enumerate(_list(plan.get("characters", []), f"{w}.plan.characters")):
        card(what, f"{w}.plan.characters[{i}]")
    for what in plan["deck"]:
        card(what, f"{w}.plan.deck")


def _plan(plan: Any, players: int) -> list[dict[str, Any]]:
    w = "state.plan"
    if not isinstance(plan, dict):
        raise Invalid(w, "must be an object")
    for key in ("players", "rounds", "deck", "color_share", "buried", "hostage_table"):
        if key not in plan:
            raise Invalid(f"{w}.{key}", "is missing")
    if _int(plan["players"], f"{w}.players", 1, 10_000) != players:
        raise Invalid(f"{w}.players", f"says {plan['players']} players, the game has {players}")
    rounds = _list(plan["rounds"], f"{w}.rounds")
    if not rounds:
        raise Invalid(f"{w}.rounds", "is empty")
    for i, spec in enumerate(rounds):
        where = f"{w}.rounds[{i}]"
        if not isinstance(spec, dict) or set(spec) != {"round", "seconds", "hostages"}:
            raise Invalid(where, "must be an object with round, seconds and hostages")
        if _int(spec["round"], f"{where}.round", 1, len(rounds)) != i + 1:
            raise Invalid(f"{where}.round", f"must be {i + 1}")
        if spec["seconds"] is not None:
            _int(spec["seconds"], f"{where}.seconds", 1, 24 * 3600)
        _int(spec["hostages"], f"{where}.hostages", 1, players)
    deck = plan["deck"]
    if not isinstance(deck, dict):
        raise Invalid(f"{w}.deck", "must be an object")
    for card, count in deck.items():
        _int(count, f"{w}.deck.{card}", 0, 10_000)
    _bool(plan["color_share"], f"{w}.color_share")
    _int(plan["buried"], f"{w}.buried", 0, 1)
    _text(plan["hostage_table"], f"{w}.hostage_table")
    if plan.get("givesy_backsies", "en") not in GIVESY_BACKSIES:  # (absent in games saved before it existed)
        raise Invalid(f"{w}.givesy_backsies", f"must be one of {', '.join(GIVESY_BACKSIES)}")
    return rounds


@cache
def _machine_states() -> tuple[frozenset[str], dict[str, tuple[str, ...]]]:
    """The statechart's leaf states outside parallel ones, and each parallel state's regions."""
    chart = load_statechart()
    names = chart.state_names()
    leaves = frozenset(n for n in names if not any(m.startswith(n + SEP) for m in names))
    parallel = {s["name"]: tuple(f"{s['name']}{SEP}{r['name']}" for r in s["parallel"])
                for s in chart.states if "parallel" in s}
    return leaves, parallel


def _machine(machine: Any) -> list[str]:
    """The statechart's active states: one leaf, or one leaf per region of a parallel state."""
    leaves, parallel = _machine_states()
    if isinstance(machine, str) and machine in leaves and machine.split(SEP)[0] not in parallel:
        return [machine]
    if isinstance(machine, list) and machine and all(isinstance(m, str) and m in leaves for m in machine):
        regions = parallel.get(machine[0].split(SEP)[0], ())
        if len(machine) == len(regions) and all(m.startswith(r + SEP) for m, r in zip(machine, regions, strict=True)):
            return machine
    raise Invalid("state.machine", f"{_show(machine)} is not a state of the game")


def _rooms(rooms: Any, players: list[str], machine: list[str], untimed: bool) -> None:
    w = "state.rooms"
    if not isinstance(rooms, dict) or set(rooms) != set(ROOMS):
        raise Invalid(w, "must have exactly rooms A and B")
    seen: dict[str, str] = {}
    for name in ROOMS:
        room, where = rooms[name], f"{w}.{name}"
        if not isinstance(room, dict):
            raise Invalid(where, "must be an object")
        _no_unknown(room, [f.name for f in fields(RoomState)], where)
        if "members" not in room:
            raise Invalid(f"{where}.members", "is missing")
        members = _names(room["members"], f"{where}.members")
        if not members:
            raise Invalid(f"{where}.members", "the room is empty")
        for player in members:
            if player in seen:
                raise Invalid(f"{where}.members", f"{_show(player)} is in both rooms")
            if player not in players:
                raise Invalid(f"{where}.members", f"{_show(player)} is not a player of this game")
            seen[player] = name
        leader = room.get("leader")
        if leader is not None and leader not in members:
            raise Invalid(f"{where}.leader", f"{_show(leader)} is not in room {name}")
        locked = [m for m in machine if m.startswith(f"hostages{SEP}{name}{SEP}")]
        for key in ("hostages", "pending"):
            chosen = room.get(key)
            if chosen is None:
                continue
            for player in _names(chosen, f"{where}.{key}"):
                if player not in members:
                    raise Invalid(f"{where}.{key}", f"{_show(player)} is not in room {name}")
                if player == leader:
                    raise Invalid(f"{where}.{key}", f"{_show(player)} leads room {name}")
        hostages_locked = room.get("hostages") is not None
        should_be = (bool(locked) and locked[0].endswith(f"{SEP}locked")) or machine == ["parley"]
        # Without a timer, a leader names the hostages during the round, before the room is ready.
        if hostages_locked != should_be and not (untimed and machine[0].startswith(f"round{SEP}")):
            raise Invalid(f"{where}.hostages", "are locked exactly from the leader's choice until the exchange")
        for key in ("offer", "no_giveback"):
            pair = room.get(key)
            if pair is None:
                continue
            if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)):
                raise Invalid(f"{where}.{key}", "must be a pair of names or null")
            # After the last exchange, the giver of a no-giveback may be in the other room.
            if any(p not in (members if key == "offer" else players) for p in pair):
                raise Invalid(f"{where}.{key}", f"names someone who is not in room {name}" if key == "offer"
                              else "names someone who is not a player of this game")
        if room.get("offer") is not None and room["offer"][0] != leader:
            raise Invalid(f"{where}.offer", "is not made by the room's leader")
        for player in _names(room.get("gave_up", []), f"{where}.gave_up"):
            if player not in players:
                raise Invalid(f"{where}.gave_up", f"{_show(player)} is not a player of this game")
        for key in ("ready", "asked_leader", "typed_lock", "usurper_round"):
            _bool(room.get(key, False), f"{where}.{key}")
        for player in _names(room.get("extra", []), f"{where}.extra"):
            if player not in members:
                raise Invalid(f"{where}.extra", f"{_show(player)} is not in room {name}")
    missing = [p for p in players if p not in seen]
    if missing:
        raise Invalid(w, f"{_show(missing[0])} is in neither room")


def _clock(state: dict[str, Any], machine: list[str], seconds: int | None, saved_at: float) -> None:
    """The deadline runs only in a timed running round, the time left is kept only in a timed paused one."""
    deadline, remaining = state.get("deadline"), state.get("remaining")
    leaf = machine[0]
    if deadline is not None:
        deadline = _finite(deadline, "state.deadline")
    if remaining is not None:
        remaining = _finite(remaining, "state.remaining", minimum=0.0)
    timed = seconds is not None
    if (deadline is not None) != (timed and leaf == "round.running"):
        raise Invalid("state.deadline", "is set exactly while a timed round runs")
    if (remaining is not None) != (timed and leaf == "round.paused"):
        raise Invalid("state.remaining", "is set exactly while a timed round is paused")
    assert seconds is not None or (deadline is None and remaining is None)
    if deadline is not None and deadline > saved_at + seconds + _DEADLINE_SLACK:  # type: ignore[operator]
        raise Invalid("state.deadline", f"is more than the round's {seconds} s after the save")
    if remaining is not None and remaining > seconds + _DEADLINE_SLACK:  # type: ignore[operator]
        raise Invalid("state.remaining", f"is more than the round's {seconds} s")


# --- the small checks ----------------------------------------------------------------------------------


def _no_unknown(obj: dict[str, Any], known: Collection[str], where: str) -> None:
    unknown = sorted(str(k) for k in obj if k not in known)
    if unknown:
        raise Invalid(where, f"unknown field {_show(unknown[0])}")


def _finite(value: Any, where: str, *, minimum: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise Invalid(where, f"must be a finite number, not {_show(value)}")
    if minimum is not None and value < minimum:
        raise Invalid(where, f"must be at least {minimum:g}, not {_show(value)}")
    return float(value)


def _int(value: Any, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid(where, f"must be a whole number, not {_show(value)}")
    if not low <= value <= high:
        raise Invalid(where, f"must be from {low} to {high}, not {value}")
    return value


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise Invalid(where, f"must be true or false, not {_show(value)}")
    return value


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise Invalid(where, f"must be a non-empty string, not {_show(value)}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise Invalid(where, f"must be a list, not {_show(value)}")
    return value


def _names(value: Any, where: str) -> list[str]:
    names = _list(value, where)
    for i, name in enumerate(names):
        _text(name, f"{where}[{i}]")
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise Invalid(where, f"{_show(name)} is named twice")
        seen.add(name)
    return names


def _show(value: Any) -> str:
    """A value as the message quotes it: short, whatever was in the file."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
