"""Why a command does not fit now: the reason a refusal gives, true of the game's state and of that command.

The statechart says only *that* a command does not fit the current state. The reason is the state's own
situation ("the game is paused; say "resume" first"), unless the command itself is what is wrong now: a
second "start the game", "resume" when nothing is paused, a Gambler's prediction in a game without one.
"""

from __future__ import annotations

from typing import Any

#: A reason that belongs to a command whatever the state: (intent, the states where it applies (None: all),
#: the plan's condition (None: any), the phrase key). The first that fits is given.
_WHY: tuple[tuple[str, tuple[str, ...] | None, str | None, str], ...] = (
    ("predict", None, "no_gambler", "why.no_gambler"),
    ("ready", None, "timed", "why.timed"),
    ("start", ("round", "hostages", "parley", "exchange"), None, "why.started"),
    ("start", ("game_over", "prediction", "reveal", "result"), None, "why.over"),
    ("resume", ("round.running",), None, "why.running"),
    ("resume", None, None, "why.not_paused"),
    ("pause", ("round.paused",), None, "why.paused"),
    ("pause", None, None, "why.no_round"),
    ("hostages", ("round.running",), None, "why.hostages_at_time_up"),
)


def _holds(condition: str | None, plan: dict[str, Any]) -> bool:
    if condition == "no_gambler":
        return not plan["deck"].get("gambler")
    if condition == "timed":
        return any(r.get("seconds") for r in plan["rounds"])
    return True


def situation_key(intent: str, leaf: str, plan: dict[str, Any]) -> str:
    """The phrase key of the reason ``intent`` does not fit now; ``leaf`` is the statechart's state
    ("round.paused", "hostages", ...)."""
    top = leaf.split(".")[0]
    for wanted, states, condition, key in _WHY:
        if wanted == intent and (states is None or leaf in states or top in states) and _holds(condition, plan):
            return key
    return f"situation.{leaf if top == 'round' else top}"
