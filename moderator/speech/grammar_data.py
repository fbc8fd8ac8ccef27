"""The grammar file's data: each intent's slots, and a loaded YAML mapping checked into templates and lists."""

from __future__ import annotations

import re
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from moderator.errors import GrammarError
from moderator.speech.template import Alt, Slot, TemplateError, check_slots, normalize, parse_template, skeletons

ROSTER_TYPES = frozenset({"player", "players"})

# The engine reads these slot names, so the YAML may not rename them:
# intent -> slot -> (type, required).
INTENT_SLOTS: dict[str, dict[str, tuple[str, bool]]] = {
    "start": {},
    "appoint": {"player": ("player", True), "by": ("player", False)},
    "appoint_you": {},
    "name_answer": {"player": ("player", True)},
    "room_answer": {"room": ("room", True)},
    "offer": {"leader": ("player", True), "player": ("player", True)},
    "accept": {"player": ("player", True)},
    "refuse": {"player": ("player", True)},
    "usurp": {"votes": ("number", True), "player": ("player", True)},
    "hostages": {"players": ("players", True)},
    "ready": {"room": ("room", True)},
    "met": {},
    "pause": {},
    "resume": {},
    "time": {},
    "repeat": {},
    "help": {},
    "undo": {},
    "confirm": {"answer": ("answer", True)},
    "predict": {"team": ("team", True)},
    "reveal": {"role": ("role", True), "player": ("player", True)},
    "guess": {"role": ("role", True)},
    "shoot": {"player": ("player", True)},
    "buried": {"role": ("role", True)},
    "explain": {"role": ("role", True)},
    "bodyguard": {"player": ("player", True)},
}

#: Room 25's commands (grammars/room25.en.yaml, a grammar file with ``game: room25``), read by moderator/room25.
ROOM25_INTENT_SLOTS: dict[str, dict[str, tuple[str, bool]]] = {
    "start": {},
    "programmed": {"player": ("player", False)},  # without a name: refused with the reason (who programmed?)
    "everyone_programmed": {},
    "done": {},
    "skip": {},
    "adrenaline": {"player": ("player", True)},
    "killed": {"player": ("player", True)},
    "reached": {"player": ("player", True)},
    "left": {"player": ("player", True)},
    "identity": {"player": ("player", True), "side": ("side", True)},
    "escaped": {},
    "pause": {},
    "resume": {},
    "time": {},
    "repeat": {},
    "help": {},
    "undo": {},
}

#: Each game's intents and their slots; a grammar file names its game with ``game:`` (default two_rooms).
GAME_INTENT_SLOTS = {"two_rooms": INTENT_SLOTS, "room25": ROOM25_INTENT_SLOTS}
#: Every intent of every game (an intent two games share has the same slots in both).
ALL_INTENT_SLOTS = {**ROOM25_INTENT_SLOTS, **INTENT_SLOTS}


@dataclass(frozen=True)
class Template:
    """One template of an intent, parsed."""

    intent: str
    text: str
    tree: Alt
    bare: bool
    """Some sentence of it is slots only, like "{player}"; such templates are tried last."""


Lists = dict[str, dict[Hashable, tuple[str, ...]]]
"""Slot type -> value -> its spoken phrases."""


def read_grammar(data: Any, source: str = "<grammar>") -> tuple[list[Template], Lists, list[str]]:
    """A grammar's templates, lists and list joiners from its loaded YAML, every template checked.

    Raises:
        GrammarError: anything wrong, named with ``source``, the intent and the template.
    """
    if not isinstance(data, dict):
        raise GrammarError(f"{source}: expected a mapping with 'intents'")
    if extra := set(data) - {"language", "game", "list_joiners", "lists", "intents"}:
        raise GrammarError(f"{source}: unknown key(s) {', '.join(sorted(map(str, extra)))}")
    game = data.get("game", "two_rooms")
    if game not in GAME_INTENT_SLOTS:
        raise GrammarError(f"{source}: unknown game {game!r}; known: {', '.join(GAME_INTENT_SLOTS)}")
    known_intents = GAME_INTENT_SLOTS[game]
    lists = read_lists(data.get("lists") or {}, source)
    joiners = data.get("list_joiners", ["and"])
    if not (isinstance(joiners, list) and joiners and all(isinstance(j, str) and j for j in joiners)):
        raise GrammarError(f"{source}: 'list_joiners' must be a list of words")
    intents = data.get("intents")
    if not isinstance(intents, dict) or not intents:
        raise GrammarError(f"{source}: 'intents' must map each intent to its templates")
    known_types = ROSTER_TYPES | set(lists)
    templates: list[Template] = []
    for intent, texts in intents.items():
        if intent not in known_intents:
            raise GrammarError(f"{source}: unknown intent {intent!r}; known: {', '.join(known_intents)}")
        if not isinstance(texts, list) or not texts:
            raise GrammarError(f"{source}: intent '{intent}' needs a list of templates")
        for text in texts:
            if not isinstance(text, str):
                raise GrammarError(f"{source}: intent '{intent}': template {text!r} is not text")
            try:
                tree = check_slots(parse_template(text), known_intents[intent], known_types)
            except TemplateError as exc:
                raise GrammarError(f"{source}: intent '{intent}', template '{text}': {exc}") from exc
            bare = any(all(isinstance(piece, Slot) for piece in sk) for sk in skeletons(tree))
            templates.append(Template(intent, text, tree, bare))
    return templates, lists, joiners


def read_lists(data: Any, source: str) -> Lists:
    """Validate the ``lists`` section: type -> value -> spoken phrases."""
    if not isinstance(data, dict):
        raise GrammarError(f"{source}: 'lists' must map each slot type to its values")
    lists: Lists = {}
    for name, values in data.items():
        if not isinstance(name, str) or not re.fullmatch(r"[a-z_][a-z0-9_]*", name) or name in ROSTER_TYPES:
            raise GrammarError(f"{source}: list {name!r}: not a usable slot type name")
        if not isinstance(values, dict) or not values:
            raise GrammarError(f"{source}: list '{name}' must map each value to its spoken phrases")
        lists[name] = {}
        for value, spoken in values.items():
            # bool is an int subclass; a YAML 1.1 "yes" must never sneak in as True
            if isinstance(value, bool) or not isinstance(value, str | int):
                raise GrammarError(f"{source}: list '{name}': value {value!r} must be text or a number")
            phrases = [spoken] if isinstance(spoken, str) else spoken
            usable = isinstance(phrases, list) and phrases and all(isinstance(p, str) and normalize(p) for p in phrases)
            if not usable:
                raise GrammarError(f"{source}: list '{name}', value {value!r}: give a list of phrases")
            lists[name][value] = tuple(phrases)
    return lists
