"""Every phrase the code uses exists in every language, with the same slots."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from moderator.errors import CatalogError
from moderator.game.statechart import load_statechart
from moderator.resources import ROOT, VOICES
from moderator.speech.catalog import Catalog, load_catalog, slots_of
from moderator.speech.grammar import load_grammar

KEY = re.compile(r"^[a-z_][a-z0-9_]*(\.[a-z0-9_]*[a-z0-9])+$")  # f-string fragments like "result.gambler_" end in "_"
MODULES = sorted((ROOT / "moderator").rglob("*.py"))  # every module, for what it says
#: Where keys are also data (tables, defaults): the game, its language, its speaker.
CORE = [p for p in MODULES if p.parent.name in ("game", "speech", "voice", "room25")]
LANGS = sorted(p.stem for p in VOICES.glob("*.yaml"))
#: Calls whose argument at this position is a phrase key: ``say(room, key)``, ``Refusal(key)``, ``text(key)``,
#: and RoundClock's ``_say_left(key)``.
KEY_ARGUMENT = {"say": 1, "Refusal": 0, "text": 0, "_say_left": 0}


def key_values(expr: ast.expr | None) -> set[str]:
    """The string constants ``expr`` can be: itself, either branch of ``a if c else b``, each of ``a or b``,
    each item of a tuple or list."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return {expr.value}
    if isinstance(expr, ast.IfExp):
        return key_values(expr.body) | key_values(expr.orelse)
    if isinstance(expr, ast.BoolOp):
        return set().union(*(key_values(v) for v in expr.values))
    if isinstance(expr, ast.Tuple | ast.List | ast.Set):
        return set().union(*(key_values(e) for e in expr.elts))
    return set()


def said_keys(tree: ast.AST, *, catalog_module: bool = False) -> set[str]:
    """The phrase keys a module passes as such: to ``say``, ``Refusal``, ``text`` and a catalogue's ``render``,
    and to a variable or parameter (its default) named ``key`` or ``..._key``."""
    keys: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            receiver = ast.unparse(func.value) if isinstance(func, ast.Attribute) else ""
            at = KEY_ARGUMENT.get(name or "")
            if name == "render" and (receiver.endswith("catalog") or (catalog_module and receiver == "self")):
                at = 0  # not a Synthesizer's render(text, voice)
            if at is not None and len(node.args) > at:
                keys |= key_values(node.args[at])
            keys |= set().union(*(key_values(k.value) for k in node.keywords if k.arg == "key"))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id.endswith("key") for t in targets):
                keys |= key_values(node.value)
        elif isinstance(node, ast.FunctionDef):
            args = node.args
            positional = args.posonlyargs + args.args
            defaults = zip(positional[len(positional) - len(args.defaults):], args.defaults, strict=True)
            for arg, default in [*defaults, *zip(args.kwonlyargs, args.kw_defaults, strict=True)]:
                if arg.arg.endswith("key"):
                    keys |= key_values(default)
    return keys


def shaped_keys(tree: ast.AST) -> set[str]:
    """Every string literal shaped like a dotted phrase key (file names aside)."""
    return {node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and KEY.match(node.value)
            and not node.value.endswith((".yaml", ".json", ".py"))}


def keys_in_code() -> set[str]:
    """The phrase keys every module says, plus the families built with f-strings."""
    chart, room25 = load_statechart(), load_statechart("room25")
    keys: set[str] = set()
    for path in MODULES:
        tree = ast.parse(path.read_text())
        keys |= said_keys(tree, catalog_module=path.name == "catalog.py")
        if path in CORE:  # state names are shaped alike
            keys |= shaped_keys(tree) - set(chart.state_names()) - set(room25.state_names())
    intents = load_grammar().intents
    keys |= {f"action.{i}" for i in intents} | {f"example.{i}" for i in intents}
    keys |= {f"leader.{how}" for how in ("appointed", "abdicated", "usurped")}
    keys |= {f"team.{t}" for t in ("red", "blue")} | {f"role.{r}" for r in ("president", "bomber")}
    keys |= {f"result.gambler_{g}" for g in ("right", "wrong")}
    keys |= {f"situation.{s}" for s in chart.state_names() if "." not in s or s.startswith("round.")}
    keys |= {f"{k}.untimed" for k in ("paused", "resumed")}  # RoundClock._say_left
    keys.discard("situation.round")
    return keys | room25_keys()


def room25_keys() -> set[str]:
    """Room 25's key families built with f-strings (moderator/room25): each intent's action and example, each
    phase's situation, each reveal's reason, each identity, each result (cooperation's own wording), each mode."""
    intents = load_grammar("en", "room25").intents
    leaves = {name.split(".")[-1] for name in load_statechart("room25").state_names()} - {"turn"}
    reasons = ("masks", "second_death", "first_killed_prisoner", "another_death", "earlier_killed_prisoner")
    results = ("escaped", "escaped_last_turn", "two_prisoners_killed", "countdown")
    return ({f"room25.action.{i}" for i in intents} | {f"room25.example.{i}" for i in intents}
            | {f"room25.situation.{leaf}" for leaf in leaves} | {f"room25.reveal.{r}" for r in reasons}
            | {f"room25.revealed.{side}" for side in ("prisoner", "guard")}
            | {f"room25.result.{r}" for r in results}
            | {f"room25.result.{r}_cooperation" for r in ("two_prisoners_killed", "countdown")}
            | {f"room25.briefing.{mode}" for mode in ("suspicion", "cooperation")})


def test_the_scan_finds_the_keys_said_anywhere() -> None:
    found = keys_in_code()
    assert {"refuse.givesy_backsy", "round.start", "time.warning", "hostages.locked"} <= found  # the engine's
    assert {"briefing", "parley", "undone", "help"} <= found  # one-word keys, which no dotted shape finds
    assert {"pardon", "restored"} <= found  # said from moderator/loop.py and moderator/commands/play.py
    assert {"list.sep", "list.none", "duration.both"} <= found  # the catalogue's own
    # Room 25's (moderator/room25), said as ``say(key)`` and kept in tables
    assert {"room25.dead", "room25.tiles.suspicion_4_5", "room25.call.adrenaline", "room25.refuse.reveal_first",
            "room25.timer.count", "room25.reveal.masks", "room25.result.countdown_cooperation"} <= found
    assert len(found) > 100


def test_the_key_scan_reads_keys_where_they_are_said_and_nothing_else() -> None:
    code = ast.parse(
        "eng.say(room, 'pardon')\n"
        "raise Refusal('refuse.x' if a else 'refuse.y', player=p)\n"
        "key = 'result.red' if red else 'result.blue'\n"
        "for key in ('name', 'states'):\n    pass\n"  # a loop over a mapping's keys says nothing
        "def f(key: str = 'refuse.wrong_room') -> None: ...\n"
        "self.catalog.render('list.none')\n"
        "synth.render('ok', voice)\n"
        "open('events.jsonl')\n"
        "say(room, f'leader.{how}')\n"
    )
    assert said_keys(code) == {"pardon", "refuse.x", "refuse.y", "result.red", "result.blue",
                               "refuse.wrong_room", "list.none"}


@pytest.mark.parametrize("lang", LANGS)
def test_every_key_used_by_the_engine_exists(lang: str) -> None:
    catalog = load_catalog(lang)
    missing = sorted(k for k in keys_in_code() if k not in catalog.phrases)
    assert not missing, f"voices/{lang}.yaml lacks {missing}"


@pytest.mark.parametrize("lang", LANGS)
def test_every_language_has_the_same_keys_and_slots_as_english(lang: str) -> None:
    en, other = load_catalog("en"), load_catalog(lang)
    assert set(other.phrases) == set(en.phrases)
    for key, text in en.phrases.items():
        assert slots_of(other.phrases[key]) == slots_of(text), key
    assert set(other.counts) == set(en.counts)


def test_render_fills_slots_and_reports_missing_ones() -> None:
    en = load_catalog("en")
    assert en.render("leader.appointed", player="Alice", room="A") == "Alice is the leader of room A."
    with pytest.raises(CatalogError, match="needs slot"):
        en.render("leader.appointed", player="Alice")
    with pytest.raises(CatalogError, match="no phrase 'nope'"):
        en.render("nope")


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(180, "3 minutes"), (133, "2 minutes 13 seconds"), (60, "1 minute"), (1, "1 second"),
     (0.2, "1 second"), (59.01, "1 minute"), (0, "0 seconds")],
)
def test_durations_round_up(seconds: float, text: str) -> None:
    assert load_catalog("en").duration(seconds) == text


def test_join_and_count() -> None:
    en = load_catalog("en")
    assert en.join(["Bob"]) == "Bob"
    assert en.join(["Bob", "Carol", "Dave"]) == "Bob, Carol and Dave"
    assert en.count("hostage", 1) == "1 hostage" and en.count("hostage", 3) == "3 hostages"


def test_unknown_language_lists_the_available_ones() -> None:
    with pytest.raises(CatalogError, match="available: en"):
        load_catalog("xx")


def test_bad_catalog_names_the_file() -> None:
    with pytest.raises(CatalogError, match=r"x\.yaml"):
        Catalog.from_dict({"phrases": {"a": "{unclosed"}}, source="x.yaml")
    assert Path(VOICES / "en.yaml").exists()
