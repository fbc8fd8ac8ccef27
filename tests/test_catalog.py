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

KEY = re.compile(r"^[a-z_]+(\.[a-z_]*[a-z])+$")  # f-string fragments like "result.gambler_" end in "_"
CORE = sorted((ROOT / "moderator" / "game").glob("*.py"))  # every module that says things
LANGS = sorted(p.stem for p in VOICES.glob("*.yaml"))


def keys_in_code() -> set[str]:
    """String literals shaped like phrase keys, plus the families built with f-strings."""
    keys: set[str] = set()
    for path in CORE:
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and KEY.match(node.value)
                    and not node.value.endswith((".yaml", ".json", ".py"))):  # file names, not phrases
                keys.add(node.value)
    keys -= set(load_statechart().state_names())  # state names, not phrases
    chart = load_statechart()
    intents = load_grammar().intents
    keys |= {f"action.{i}" for i in intents} | {f"example.{i}" for i in intents}
    keys |= {f"leader.{how}" for how in ("appointed", "abdicated", "usurped")}
    keys |= {f"team.{t}" for t in ("red", "blue")} | {f"role.{r}" for r in ("president", "bomber")}
    keys |= {f"result.gambler_{g}" for g in ("right", "wrong")}
    keys |= {f"situation.{s}" for s in chart.state_names() if "." not in s or s.startswith("round.")}
    keys.discard("situation.round")
    return keys


def test_the_scan_finds_the_engine_keys() -> None:
    found = keys_in_code()
    assert {"refuse.givesy_backsy", "round.start", "time.warning", "hostages.locked"} <= found
    assert len(found) > 100


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
