"""What the moderator will say that is known before the game starts, so it can be rendered at set-up."""

from __future__ import annotations

from moderator.game.state import ROOMS, GameState
from moderator.settings import Schedule
from moderator.speech.catalog import Catalog, slots_of


def setup_phrases(catalog: Catalog, state: GameState, schedule: Schedule) -> list[str]:
    """Time warnings, countdown numbers, "time's up", round starts, exchange lines for every roster name,
    and every phrase that needs no more than a room letter."""
    texts: list[str] = []
    texts += [catalog.render("time.warning", left=catalog.duration(m)) for m in schedule.warnings]
    texts += [catalog.render("time.count", n=n) for n in range(schedule.countdown, 0, -1)]
    for spec in state.plan["rounds"]:
        number, hostages = spec["round"], catalog.count("hostage", spec["hostages"])
        texts.append(catalog.render("time.over", round=number))
        if spec["seconds"] is None:
            texts.append(catalog.render("round.start_untimed", round=number, hostages=hostages))
        else:
            texts.append(catalog.render("round.start", round=number, duration=catalog.duration(spec["seconds"]),
                                        hostages=hostages))
    for player in state.players:
        for room in ROOMS:
            texts.append(catalog.render("exchange.player", player=player, room=room))
    for key, text in catalog.phrases.items():
        slots = slots_of(text)
        if not slots and not key.startswith(("list.", "team.", "role.", "action.", "situation.", "example.")):
            texts.append(text)
        elif slots == {"room"}:
            texts += [catalog.render(key, room=room) for room in ROOMS]
    return list(dict.fromkeys(texts))
