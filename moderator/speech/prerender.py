"""What the moderator will say that is known before the game starts, so it can be rendered at set-up."""

from __future__ import annotations

from moderator.game.round_clock import round_cues
from moderator.game.state import ROOMS, GameState
from moderator.settings import Schedule
from moderator.speech.catalog import Catalog, slots_of

#: The phrases of the other games the catalogue holds (Room 25's engine lists its own set-up phrases).
OTHER_GAMES = ("room25.",)


def setup_phrases(catalog: Catalog, state: GameState, schedule: Schedule) -> list[str]:
    """What every round says on its own (its start, time warnings, countdown, the reminder to appoint a leader,
    time's up: ``round_cues``, the list its clock says them from), exchange lines for every roster name, and
    every phrase that needs no more than a room letter."""
    texts = [cue.phrase.text(catalog) for spec in state.plan["rounds"] for cue in round_cues(catalog, schedule, spec)]
    for player in state.players:
        for room in ROOMS:
            texts.append(catalog.render("exchange.player", player=player, room=room))
    for key, text in catalog.phrases.items():
        slots = slots_of(text)
        if key.startswith(OTHER_GAMES):
            continue
        if not slots and not key.startswith(("list.", "team.", "role.", "action.", "situation.", "example.")):
            texts.append(text)
        elif slots == {"room"}:
            texts += [catalog.render(key, room=room) for room in ROOMS]
    return list(dict.fromkeys(texts))
