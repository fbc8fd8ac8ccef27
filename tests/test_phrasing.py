"""The wording of the four catalogues (issue 12, item 8): what a fluent reader corrected, one and other forms
chosen by the catalogue from a count, and the English commands quoted in each language's own marks."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest

from moderator.adapters.clock import VirtualClock
from moderator.errors import CatalogError
from moderator.game.engine import Engine
from moderator.game.rules import make_plan
from moderator.simulate import advance
from moderator.speech.catalog import Catalog, load_catalog
from moderator.speech.grammar import NoParse, load_grammar

LANGS = ("en", "fr", "it", "zh")
CATALOGS = {lang: load_catalog(lang) for lang in LANGS}
GRAMMAR = load_grammar()
ROSTER = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy", "Mallory"]
#: A quoted command in each language: "start the game", « start the game », 「start the game」.
QUOTED = {"en": r'"([^"]*)"', "it": r"«([^«»]*)»", "fr": r"« ([^«»]*) »", "zh": r"「([^「」]*)」"}
#: Quotation marks a language must not use for a command.
FOREIGN_MARKS = {"en": "«»「」“”", "it": '"「」“”', "fr": '"「」“”', "zh": '"«»“”'}
#: Quoted pieces of a command that are not a whole command: "I appoint", then the name, then "as leader".
FRAGMENTS = {"I appoint", "as leader"}


def texts(catalog: Catalog) -> dict[str, list[str]]:
    """Every wording of every phrase: both forms of a plural one."""
    return {key: [p.one, p.other] if (p := catalog.plurals.get(key)) else [text]
            for key, text in catalog.phrases.items()}


def hostage_choice(lang: str, players: int) -> tuple[str, str]:
    """Round 1 of a ``players``-player game in ``lang`` up to room A's hostage choice: what the moderator says
    when it locks, and when room A names hostages again. 8 players send one hostage; 11 send two."""
    names = ROSTER[:players]
    clock = VirtualClock()
    engine = Engine.new(make_plan(players), {"A": names[: players // 2], "B": names[players // 2:]}, clock=clock,
                        grammar=GRAMMAR, catalog=CATALOGS[lang])
    events: list[dict[str, Any]] = []
    engine.subscribe(events.append)
    engine.begin()
    for line, room in (("start the game", None), (f"I appoint {names[0]} as leader", "A"),
                       (f"I appoint {names[-1]} as leader", "B")):
        assert engine.handle_text(line, room), events[-1]
    assert engine.state.deadline is not None
    advance(engine, clock, engine.state.deadline)
    hostages = names[1 : 1 + engine.hostages_due()]
    assert engine.handle_text(f"hostages {' and '.join(hostages)}", "A"), events[-1]
    locked = next(e["text"] for e in reversed(events) if e["type"] == "announce" and e["key"] == "hostages.locked")
    assert not engine.handle_text(f"hostages {names[2]}", "A")
    refused = events[-1]
    assert refused["type"] == "announce" and refused["key"] == "refuse.hostages_locked", refused
    return locked, refused["text"]


# --- each language: the corrected wording, with one player and with several ------------------------------


def test_english_wording() -> None:
    en = CATALOGS["en"]
    assert hostage_choice("en", 8) == ("Hostage locked: Bob.",
                                       "Room A's hostage is already locked: Bob. A choice cannot be changed.")
    assert hostage_choice("en", 11) == ("Hostages locked: Bob and Carol.",
                                        "Room A's hostages are already locked: Bob and Carol. A choice cannot be "
                                        "changed.")
    assert en.render("refuse.not_majority", votes=1, room="A", size=4, needed=3) == (
        "1 vote is not more than half of room A's 4 players; 3 are needed.")
    assert en.render("refuse.not_majority", votes=2, room="A", size=4, needed=3) == (
        "2 votes is not more than half of room A's 4 players; 3 are needed.")


def test_italian_wording() -> None:
    it = CATALOGS["it"]
    assert hostage_choice("it", 8) == (
        "Ostaggio confermato: Bob.",
        "L'ostaggio della stanza A è già stato scelto: Bob. La scelta non si può cambiare.")
    assert hostage_choice("it", 11) == (
        "Ostaggi confermati: Bob e Carol.",
        "Gli ostaggi della stanza A sono già stati scelti: Bob e Carol. La scelta non si può cambiare.")
    assert it.render("paused", left=it.duration(90)) == "Partita in pausa. Tempo rimasto: un minuto e 30 secondi."
    assert it.render("paused.untimed") == "Partita in pausa."
    assert it.render("time.paused", left="un minuto", round=2) == (
        "La partita è in pausa. Tempo rimasto nel round 2: un minuto.")
    assert it.render("resumed.untimed") == "La partita riprende."
    assert it.render("restored") == "La partita riprende dopo un'interruzione."
    assert not [k for k, ts in texts(it).items() for t in ts if re.search(r"\b[Gg]ioco\b(?<!in gioco)", t)]
    assert it.render("leader.appointed", player="Alice", room="A") == "Alice guida la stanza A."
    assert it.render("leader.abdicated", player="Alice", room="A") == "Alice accetta, e ora guida la stanza A."
    assert it.render("action.usurp") == "usurpare il ruolo di leader"
    assert it.render("result.gambler_right", team=it.render("team.red")) == (
        "Lo Scommettitore aveva puntato sulla squadra rossa: ha vinto.")
    assert it.render("result.gambler_wrong", team=it.render("team.blue")) == (
        "Lo Scommettitore aveva puntato sulla squadra blu: ha perso.")
    assert "Riunitevi tutti per scoprire le carte" in it.render("game.over")
    assert it.render("refuse.not_majority", votes=1, room="A", size=4, needed=3) == (
        "1 voto non è più della metà dei 4 giocatori della stanza A; ne servono 3.")
    assert it.render("refuse.hostage_count", room="A", due=it.count("hostage", 2), named=1).endswith(
        "ne avete nominato 1.")
    assert it.render("refuse.hostage_count", room="A", due=it.count("hostage", 1), named=2).endswith(
        "ne avete nominati 2.")


def test_no_phrase_agrees_in_gender_with_a_players_name() -> None:
    """ "Alice è il leader", "Alice a été nommé": a name may be anyone's, so no article or participle agrees
    with it."""
    gendered = {"it": r"\{(player|leader)\} (è (il|stato|già stato)|non è il)\b",
                "fr": r"\{(player|leader)\} (est (le|déjà le)|n'est pas le|a (déjà )?été)\b"}
    for lang, pattern in gendered.items():
        found = [t for ts in texts(CATALOGS[lang]).values() for t in ts if re.search(pattern, t)]
        assert not found, (lang, found)


def test_french_wording() -> None:
    fr = CATALOGS["fr"]
    assert hostage_choice("fr", 8) == ("Otage confirmé : Bob.",
                                       "L'otage de la pièce A est déjà choisi : Bob. Ce choix est définitif.")
    assert hostage_choice("fr", 11) == ("Otages confirmés : Bob et Carol.",
                                        "Les otages de la pièce A sont déjà choisis : Bob et Carol. Ce choix est "
                                        "définitif.")
    assert fr.render("hostages.locked", players=["Grace"]) == "Otage confirmé : Grace."
    assert fr.render("leader.appointed", player="Alice", room="A") == "Alice dirige la pièce A."
    assert fr.render("offer.made", leader="Erin", player="Frank") == (
        "Erin propose le rôle de leader à Frank. Frank, tu acceptes ?")
    assert fr.render("refuse.not_majority", votes=1, room="A", size=4, needed=3).startswith("1 vote, ce n'est")


def test_french_says_tu_to_the_one_player_it_addresses() -> None:
    """Party register: a sentence to one player (by name, or the Gambler) says "tu"; "vous" is for a room."""
    fr = CATALOGS["fr"]
    to_one = re.compile(r"^(\{player\}|\{leader\}|Parieur), ")
    vous = re.compile(r"\b(vous|votre|vos)\b|-vous|\w+ez\b")
    for key, wordings in texts(fr).items():
        for text in wordings:
            for sentence in re.split(r"(?<=[.?!]) ", text):
                if to_one.match(sentence):
                    assert not vous.search(sentence), (key, sentence)
    assert fr.render("exchange.player", player="Frank", room="B") == "Frank, va dans la pièce B."
    assert fr.render("hostages.due", leader="Alice", hostages=fr.count("hostage", 1), room="A") == (
        "Alice, désigne un otage pour la pièce A.")
    assert fr.render("refuse.self_appoint", player="Bob").endswith("Un autre joueur de la pièce doit te désigner.")


def test_chinese_wording() -> None:
    zh = CATALOGS["zh"]
    assert hostage_choice("zh", 8) == ("人质已确定：Bob。", "A房间的人质已经确定：Bob。选择不能更改。")
    assert hostage_choice("zh", 11) == ("人质已确定：Bob和Carol。", "A房间的人质已经确定：Bob和Carol。选择不能更改。")
    assert zh.render("refuse.givesy_backsy", leader="Bob", player="Alice").startswith("不能把队长再让回去：")
    assert "如果赌徒牌被埋掉了（没有发出），" in zh.render("reveal.gambler_buried")
    assert zh.render("refuse.hostage_twice", player="Bob") == "Bob被重复点名了。"
    assert zh.render("situation.setup") == "游戏正在准备中"
    briefing = zh.render("briefing", players=8, rounds=3, room_a="Alice", room_b="Erin")
    assert briefing.startswith("欢迎来到Two Rooms and a Boom。") and "两室一弹" not in briefing
    for gone in ("收了又反悔", "埋葬", "被说了两次", "正在设置"):
        assert not [t for ts in texts(zh).values() for t in ts if gone in t], gone


# --- plural forms ---------------------------------------------------------------------------------------------


def test_every_plural_phrase_has_its_forms_in_all_four_languages() -> None:
    en = CATALOGS["en"]
    assert {"hostages.locked", "refuse.hostages_locked", "refuse.not_majority", "refuse.hostage_count"} <= set(
        en.plurals)
    for lang, catalog in CATALOGS.items():
        assert set(catalog.plurals) == set(en.plurals), lang
        for key, plural in en.plurals.items():
            theirs = catalog.plurals[key]
            assert theirs.by == plural.by, (lang, key)
            assert theirs.one.strip() and theirs.other.strip(), (lang, key)
            assert theirs.other == catalog.phrases[key], (lang, key)


@pytest.mark.parametrize("lang", LANGS)
def test_a_phrase_about_a_list_of_players_counts_the_list(lang: str) -> None:
    """Every plural phrase with a ``{players}`` slot counts it; a list already joined into words cannot be
    counted, and the catalogue says so rather than guess."""
    catalog = CATALOGS[lang]
    listing = [k for k, p in catalog.plurals.items() if "{players}" in p.other]
    assert listing and all(catalog.plurals[k].by == "players" for k in listing)
    with pytest.raises(CatalogError, match="counts slot 'players'"):
        catalog.render("hostages.locked", players="Bob and Carol")
    with pytest.raises(CatalogError, match="needs slot 'players'"):
        catalog.render("hostages.locked")


def test_the_english_singular_and_plural_differ_where_english_needs_it() -> None:
    en = CATALOGS["en"]
    assert {k for k, p in en.plurals.items() if p.one != p.other} == {
        "hostages.locked", "hostages.corrected", "refuse.hostages_locked", "refuse.not_majority",
        "room25.briefing.suspicion", "room25.refuse.too_many_guards", "room25.refuse.escape_missing"}


def test_a_list_slot_is_said_as_names_in_each_language() -> None:
    assert [CATALOGS[lang].render("hostages.read_back", room="A", players=["Bob", "Carol", "Dave"])
            for lang in LANGS] == [
        'Room A, I heard Bob, Carol and Dave. Say "yes" to lock, or "no" to choose again.',
        "Pièce A, j'ai entendu Bob, Carol et Dave. Dites « yes » pour confirmer, ou « no » pour choisir à nouveau.",
        "Stanza A, ho sentito Bob, Carol e Dave. Dite «yes» per confermare, o «no» per scegliere di nuovo.",
        "A房间，我听到的是Bob、Carol和Dave。说「yes」确认，说「no」重新选择。",
    ]


@pytest.mark.parametrize(
    ("forms", "error"),
    [({"one": "a {n}", "other": "b {n}"}, "exactly 'by'"),
     ({"by": "n", "one": "a", "other": "b {n}"}, "same slots"),
     ({"by": "m", "one": "a {n}", "other": "b {n}"}, "do not use"),
     ({"by": "n", "one": "a {n}", "other": "b {n}", "few": "c {n}"}, "exactly 'by'")],
)
def test_bad_plural_forms_name_the_file_and_the_phrase(forms: dict[str, str], error: str) -> None:
    with pytest.raises(CatalogError, match=rf"x\.yaml: phrase 'p': .*{error}"):
        Catalog.from_dict({"phrases": {"p": forms}}, source="x.yaml")


# --- quoted commands ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_commands_are_quoted_in_the_languages_own_marks_and_the_same_everywhere(lang: str) -> None:
    """The same English commands are quoted, phrase by phrase, in every language: "…" in English, «…» in
    Italian, « … » in French, 「…」 in Chinese; no other marks."""
    en, catalog = texts(CATALOGS["en"]), texts(CATALOGS[lang])
    for key, wordings in catalog.items():
        for text in wordings:
            assert not set(text) & set(FOREIGN_MARKS[lang]), (key, text)
        quoted = Counter(q for text in wordings for q in re.findall(QUOTED[lang], text))
        assert quoted == Counter(q for text in en[key] for q in re.findall(QUOTED["en"], text)), key


def test_every_quoted_command_is_one_the_moderator_understands() -> None:
    """Each quoted command parses (help's examples: to their own intent), so the players are never told to
    say what the moderator would not take."""
    room25 = load_grammar("en", "room25")  # Room 25's phrases quote its own commands
    for key, wordings in texts(CATALOGS["en"]).items():
        grammar, roster = (room25, [*ROSTER, "Ann"]) if key.startswith("room25.") else (GRAMMAR, ROSTER)
        for command in (q for text in wordings for q in re.findall(QUOTED["en"], text)):
            if command in FRAGMENTS or re.fullmatch(r"\{\w+\}", command):  # a slot: the command as it was said
                continue
            parsed = grammar.parse(command.replace("{player}", "Bob"), roster)
            assert not isinstance(parsed, NoParse), (key, command, parsed.reason)
            if key.startswith(("example.", "room25.example.")):
                assert parsed.intent == key.rpartition("example.")[2], (key, command)
