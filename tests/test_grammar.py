"""Tests for the command grammar: canonical phrasings, round trips, ambiguity, names and errors."""

from __future__ import annotations

import random
import re
from functools import cache
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moderator.errors import GrammarError
from moderator.speech.grammar import (
    ANSWERS,
    Grammar,
    NoParse,
    Parsed,
    _merged,
    _names_in,
    load_grammar,
)
from moderator.speech.grammar_data import INTENT_SLOTS
from moderator.speech.template import normalize

ROSTER = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Mary Ann"]
# Names that share words, apostrophes, hyphens and accents: the awkward cases.
ODD_ROSTER = ["Mary", "Mary Ann", "O'Brien", "Jean-Luc", "Zoë", "Bob"]


@cache
def grammar() -> Grammar:
    return load_grammar("en")


# The canonical phrasings of shared/commands.md, written out, then the variants
# the brief asks for. Each must parse to exactly this intent and these slots.
CANONICAL: list[tuple[str, str, dict[str, Any]]] = [
    ("start the game", "start", {}),
    ("I appoint Bob as leader", "appoint", {"player": "Bob"}),
    ("I appoint you as leader", "appoint_you", {}),
    ("Carol", "name_answer", {"player": "Carol"}),
    ("room A", "room_answer", {"room": "A"}),
    ("room B", "room_answer", {"room": "B"}),
    ("Alice offers leadership to Bob", "offer", {"leader": "Alice", "player": "Bob"}),
    ("Bob accepts", "accept", {"player": "Bob"}),
    ("Bob refuses", "refuse", {"player": "Bob"}),
    ("three votes for Dave", "usurp", {"votes": 3, "player": "Dave"}),
    ("3 votes for Dave", "usurp", {"votes": 3, "player": "Dave"}),
    ("hostage Erin", "hostages", {"players": ["Erin"]}),
    ("hostages Erin and Frank", "hostages", {"players": ["Erin", "Frank"]}),
    ("hostages Erin, Frank and Grace", "hostages", {"players": ["Erin", "Frank", "Grace"]}),
    ("I choose Erin and Frank as hostages", "hostages", {"players": ["Erin", "Frank"]}),
    ("room A is ready", "ready", {"room": "A"}),
    ("room B is ready", "ready", {"room": "B"}),
    ("leaders have met", "met", {}),
    ("start the next round", "met", {}),
    ("pause", "pause", {}),
    ("resume", "resume", {}),
    ("how much time is left", "time", {}),
    ("repeat that", "repeat", {}),
    ("what can I say", "help", {}),
    ("undo", "undo", {}),
    ("yes", "confirm", {"answer": "yes"}),
    ("no", "confirm", {"answer": "no"}),
    ("gambler predicts red", "predict", {"team": "red"}),
    ("gambler predicts blue", "predict", {"team": "blue"}),
    ("the president is Heidi", "reveal", {"role": "president", "player": "Heidi"}),
    ("the bomber is Mary Ann", "reveal", {"role": "bomber", "player": "Mary Ann"}),
]
VARIANTS: list[tuple[str, str, dict[str, Any]]] = [
    ("Alice is our leader", "appoint", {"player": "Alice"}),
    ("we appoint Bob as leader", "appoint", {"player": "Bob"}),
    ("Alice appoints Bob as leader", "appoint", {"by": "Alice", "player": "Bob"}),
    ("Bob declines", "refuse", {"player": "Bob"}),
    ("one vote for Bob", "usurp", {"votes": 1, "player": "Bob"}),
    ("twenty-one votes for Bob", "usurp", {"votes": 21, "player": "Bob"}),
    ("we send Bob", "hostages", {"players": ["Bob"]}),
    ("our hostages are Bob and Carol", "hostages", {"players": ["Bob", "Carol"]}),
    ("hostages Bob Carol and Dave", "hostages", {"players": ["Bob", "Carol", "Dave"]}),
    ("hostages Bob, Carol, Dave, Erin and Frank", "hostages", {"players": ["Bob", "Carol", "Dave", "Erin", "Frank"]}),
    ("the leaders have met", "met", {}),
    ("pause the game", "pause", {}),
    ("resume the game", "resume", {}),
    ("continue", "resume", {}),
    ("how much time do we have", "time", {}),
    ("time left", "time", {}),
    ("say that again", "repeat", {}),
    ("help", "help", {}),
    ("yes please", "confirm", {"answer": "yes"}),
    ("correct", "confirm", {"answer": "yes"}),
    ("no, that's wrong", "confirm", {"answer": "no"}),
    ("the gambler predicts blue", "predict", {"team": "blue"}),
]


@pytest.mark.parametrize(("text", "intent", "slots"), CANONICAL + VARIANTS)
def test_phrasing_parses(text: str, intent: str, slots: dict[str, Any]) -> None:
    assert grammar().parse(text, ROSTER) == Parsed(intent, slots, text)


def test_every_engine_intent_is_in_the_grammar() -> None:
    assert set(grammar().intents) == set(INTENT_SLOTS)


def test_yes_and_no_stay_strings() -> None:
    assert set(grammar().lists["answer"]) == {"yes", "no"}
    assert grammar().parse("Yes!", ROSTER) == Parsed("confirm", {"answer": "yes"}, "Yes!")


@pytest.mark.parametrize("roster", [ROSTER, ODD_ROSTER], ids=["plain", "odd"])
def test_every_sampled_sentence_parses_back(roster: list[str]) -> None:
    count = 0
    for text, expected in grammar().expand(roster):
        assert grammar().parse(text, roster) == expected, text
        count += 1
    assert count > 1000  # every template with every sample, not a handful


@pytest.mark.parametrize("roster", [ROSTER, ODD_ROSTER], ids=["plain", "odd"])
def test_no_sentence_matches_two_intents(roster: list[str]) -> None:
    for text, expected in grammar().expand(roster):
        readings = {(p.intent, repr(p.slots)) for p in grammar().parse_all(text, roster)}
        assert readings == {(expected.intent, repr(expected.slots))}, text


def test_slot_names_are_the_engine_ones() -> None:
    for _text, parsed in grammar().expand(ROSTER):
        spec = INTENT_SLOTS[parsed.intent]
        assert set(parsed.slots) <= set(spec)
        assert {name for name, (_type, required) in spec.items() if required} <= set(parsed.slots)


def test_expand_with_a_limit_is_bounded_and_repeatable() -> None:
    first = list(grammar().expand(ROSTER, ["hostages"], limit_per_template=7, rng=random.Random(3)))
    again = list(grammar().expand(ROSTER, ["hostages"], limit_per_template=7, rng=random.Random(3)))
    assert first == again
    assert 0 < len(first) <= 7 * len(grammar().templates("hostages"))
    assert {parsed.intent for _text, parsed in first} == {"hostages"}


def test_expand_rejects_unknown_intents() -> None:
    with pytest.raises(KeyError, match="dance"):
        list(grammar().expand(ROSTER, ["dance"]))


def test_templates_are_the_raw_strings_canonical_first() -> None:
    assert grammar().templates("usurp")[0] == "{votes:number} (votes|vote) for {player}"
    assert grammar().templates("start")[0] == "start the game"


def test_vocabulary_covers_every_sampled_word() -> None:
    vocabulary = grammar().vocabulary(ROSTER)
    assert {"mary", "ann", "hostages", "twenty", "leadership"} <= vocabulary
    for text, _parsed in grammar().expand(ROSTER):
        assert {w.lower() for w in normalize(text) if not w.isdigit()} <= vocabulary, text


# -- names --------------------------------------------------------------------------


def test_names_match_any_case_and_come_back_in_roster_spelling() -> None:
    assert grammar().parse("i appoint BOB as LEADER", ROSTER) == Parsed(
        "appoint", {"player": "Bob"}, "i appoint BOB as LEADER"
    )
    assert grammar().parse("mary ann accepts", ROSTER).slots == {"player": "Mary Ann"}  # type: ignore[union-attr]


def test_longest_name_wins() -> None:
    assert grammar().parse("Mary Ann accepts", ODD_ROSTER).slots == {"player": "Mary Ann"}  # type: ignore[union-attr]
    assert grammar().parse("Mary accepts", ODD_ROSTER).slots == {"player": "Mary"}  # type: ignore[union-attr]
    parsed = grammar().parse("hostages Mary Mary Ann and Bob", ODD_ROSTER)
    assert parsed == Parsed("hostages", {"players": ["Mary", "Mary Ann", "Bob"]}, "hostages Mary Mary Ann and Bob")


def test_apostrophes_hyphens_and_punctuation() -> None:
    assert grammar().parse("obrien accepts", ODD_ROSTER).slots == {"player": "O'Brien"}  # type: ignore[union-attr]
    assert grammar().parse("O\u2019Brien accepts.", ODD_ROSTER).slots == {"player": "O'Brien"}  # type: ignore[union-attr]
    assert grammar().parse("jean luc refuses", ODD_ROSTER).slots == {"player": "Jean-Luc"}  # type: ignore[union-attr]
    parsed = grammar().parse("  Hostages:  Bob, Carol, and Dave!  ", ROSTER)
    assert isinstance(parsed, Parsed) and parsed.slots == {"players": ["Bob", "Carol", "Dave"]}


def test_duplicate_hostages_are_kept_for_the_engine_to_refuse() -> None:
    parsed = grammar().parse("hostages Bob and Bob", ROSTER)
    assert isinstance(parsed, Parsed) and parsed.slots == {"players": ["Bob", "Bob"]}


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("I appoint Zed as leader", "'Zed' is not a player in this game"),
        ("Zed offers leadership to Bob", "'Zed' is not a player in this game"),
        ("the bomber is Zed", "'Zed' is not a player in this game"),
        ("hostages Bob and Zed and big Yan", "'Zed' and 'big Yan' are not players in this game"),
        ("three votes for Zed", "'Zed' is not a player in this game"),
    ],
)
def test_unknown_names_are_named(text: str, reason: str) -> None:
    assert grammar().parse(text, ROSTER) == NoParse(text, reason)


def test_too_many_hostages_do_not_parse() -> None:
    assert isinstance(grammar().parse("hostages Alice Bob Carol Dave Erin Frank", ROSTER), NoParse)


@pytest.mark.parametrize("text", ["", "   ", "...", "?!"])
def test_silence(text: str) -> None:
    assert grammar().parse(text, ROSTER) == NoParse(text, "I heard nothing")


@pytest.mark.parametrize("text", ["flibber jabber", "start the gaaame", "room C is ready", "fifty votes for Bob"])
def test_garbled_text_says_what_to_do(text: str) -> None:
    result = grammar().parse(text, ROSTER)
    assert isinstance(result, NoParse)
    assert result.reason.startswith("I did not understand") and "what can I say" in result.reason


def test_an_empty_roster_matches_no_names() -> None:
    assert isinstance(grammar().parse("Bob accepts", []), NoParse)
    assert grammar().parse("undo", []) == Parsed("undo", {}, "undo")


@given(st.text())
def test_arbitrary_text_never_raises(text: str) -> None:
    assert isinstance(grammar().parse(text, ROSTER), Parsed | NoParse)


NEAR_WORDS = [*sorted(load_grammar().vocabulary(ROSTER)), "Zed", ",", "and", "7", "'"]


@given(st.lists(st.sampled_from(NEAR_WORDS), max_size=12))
def test_near_miss_text_never_raises(words: list[str]) -> None:
    assert isinstance(grammar().parse(" ".join(words), ROSTER), Parsed | NoParse)


# -- loading and errors ----------------------------------------------------------------

LISTS = """
lists:
  number: {1: [one], 2: [two]}
  room: {A: [a], B: [b]}
"""


def load(intents: str, lists: str = LISTS) -> Grammar:
    return Grammar.from_yaml(lists + "intents:\n" + intents, source="grammars/en.yaml")


@pytest.mark.parametrize(
    ("intents", "message"),
    [
        (
            '  usurp: ["{votes:number votes for {player}"]',
            "grammars/en.yaml: intent 'usurp', template '{votes:number votes for {player}': unclosed '{'",
        ),
        (
            '  usurp: ["{votes:count} votes for {player}"]',
            "intent 'usurp', template '{votes:count} votes for {player}': unknown slot type 'count'",
        ),
        (
            '  usurp: ["{vote:number} votes for {player}"]',
            "template '{vote:number} votes for {player}': slot 'vote' does not belong",
        ),
        ('  usurp: ["{votes:room} votes for {player}"]', "slot 'votes' must have type 'number', not 'room'"),
        ('  usurp: ["{votes:number} votes [for {player}]"]', "every sentence needs the slot 'player'"),
        ('  accept: ["{player} accepts {player}"]', "slot 'player' appears twice"),
        ('  ready: ["room {room} (is|was ready"]', "template 'room {room} (is|was ready': unclosed '('"),
        ('  ready: ["room {room} is ready)"]', "unexpected ')'"),
        ('  ready: ["room {room} (is|) ready"]', "empty alternative"),
        ('  ready: ["room {room} is ready}"]', "unexpected '}'"),
        ('  ready: ["room {room!} is ready"]', "bad slot '{room!}'"),
        ('  pause: ["[please]"]', "template '[please]': template can be empty"),
        ('  pause: [""]', "template '': template is empty"),
        ("  dance: [let's dance]", "grammars/en.yaml: unknown intent 'dance'"),
        ("  pause: []", "intent 'pause' needs a list of templates"),
        ("  pause: [3]", "intent 'pause': template 3 is not text"),
    ],
)
def test_bad_templates_name_source_intent_and_template(intents: str, message: str) -> None:
    with pytest.raises(GrammarError, match=re.escape(message)):
        load(intents)


def test_bad_lists_are_reported() -> None:
    with pytest.raises(GrammarError, match=re.escape("grammars/en.yaml: list 'answer': value True must be text")):
        Grammar.from_dict({"lists": {"answer": {True: ["yes"]}}, "intents": {"pause": ["pause"]}}, "grammars/en.yaml")
    with pytest.raises(GrammarError, match="list 'room', value 'A': give a list of phrases"):
        load('  pause: ["pause"]', "lists:\n  room: {A: [], B: [b]}\n")
    with pytest.raises(GrammarError, match="unknown key"):
        Grammar.from_dict({"intent": {}}, "x.yaml")


def test_bad_yaml_names_the_source_and_line() -> None:
    with pytest.raises(GrammarError, match=r"^grammars/en\.yaml:3: invalid YAML"):
        load("  pause: [pause\n  resume: [resume]\n", lists="")


def test_missing_files_and_bad_language_codes(tmp_path: Any) -> None:
    with pytest.raises(GrammarError, match="cannot read"):
        Grammar.from_file(tmp_path / "nope.yaml")
    with pytest.raises(GrammarError, match="not a language code"):
        load_grammar("../en")


def test_from_file_names_the_file_relative_to_the_project(tmp_path: Any) -> None:
    path = tmp_path / "xx.yaml"
    path.write_text("intents:\n  pause: ['(pause']\n", encoding="utf-8")
    with pytest.raises(GrammarError, match=re.escape(f"{path}: intent 'pause', template '(pause': unclosed '('")):
        Grammar.from_file(path)


def test_a_small_grammar_from_data() -> None:
    small = Grammar.from_dict({"intents": {"ready": ["room {room} is ready"]}, "lists": {"room": {"A": "a"}}})
    assert small.intents == ("ready",)
    assert small.parse("Room A is ready.", []) == Parsed("ready", {"room": "A"}, "Room A is ready.")
    assert small.parse("what", []) == NoParse("what", "I did not understand 'what'")


def test_addressed_commands_need_the_wake_word_and_answers_do_not() -> None:
    grammar = load_grammar("en").addressed("Moderator")
    parsed = grammar.parse("Moderator, hostages Bob and Carol", ROSTER)
    assert isinstance(parsed, Parsed) and parsed.intent == "hostages" and parsed.slots == {"players": ["Bob", "Carol"]}
    assert isinstance(grammar.parse("hostages Bob and Carol", ROSTER), NoParse)
    assert grammar.parse("yes", ROSTER).intent == "confirm"  # type: ignore[union-attr]
    for text, expected in grammar.expand(ROSTER, limit_per_template=2):
        assert grammar.parse(text, ROSTER) == expected
        assert text.startswith("moderator ") or expected.intent in ANSWERS
    with pytest.raises(GrammarError, match="wake word"):
        grammar.addressed(" ,")


def test_a_narrowed_grammar_has_fewer_votes_and_shorter_lists_but_the_same_parses() -> None:
    full = load_grammar("en")
    narrow = full.narrowed(numbers=4, max_listed=2)
    assert {p.slots["votes"] for _, p in narrow.expand(ROSTER, ["usurp"])} == {1, 2, 3, 4}
    assert max(len(p.slots["players"]) for _, p in narrow.expand(ROSTER, ["hostages"])) == 2
    assert isinstance(narrow.parse("hostages Bob, Carol and Dave", ROSTER), NoParse)
    for text, expected in narrow.expand(ROSTER, limit_per_template=3):
        assert full.parse(text, ROSTER) == expected, "a narrowed grammar only leaves sentences out"


def test_the_answers_as_prompted_are_only_the_words_the_moderator_asks_for() -> None:
    full = load_grammar("en")
    prompted = full.as_prompted(["confirm"])
    assert prompted.intents == ("confirm",)
    assert sorted(text for text, _ in prompted.expand(ROSTER)) == ["no", "yes"]
    for text in ("yeah", "nope", "that's wrong", "undo", "hostages Bob"):
        assert isinstance(prompted.parse(text, ROSTER), NoParse), text
    assert full.parse("yeah", ROSTER) == Parsed("confirm", {"answer": "yes"}, "yeah"), "its source keeps them all"
    assert prompted.parse("no", ROSTER) == full.parse("no", ROSTER)


def test_the_same_narrowing_gives_the_same_grammar_so_a_recognizer_compiles_it_once() -> None:
    grammar = load_grammar("en")
    one = grammar.narrowed(numbers=4, max_listed=2, cards=["President", "Bomber"], intents=["hostages", "confirm"])
    same = grammar.narrowed(numbers=4, max_listed=2, cards=("Bomber", "President"), intents={"confirm", "hostages"})
    assert same is one, "cards and intents are sets"
    assert grammar.narrowed(numbers=5, max_listed=2, cards=["President", "Bomber"], intents=["hostages", "confirm"]) \
        is not one
    assert grammar.as_prompted(["confirm"]) is grammar.as_prompted(("confirm",))
    assert grammar.as_prompted(["confirm"]) is not grammar.narrowed(intents=["confirm"])


# -- the commands nearest some words (what Whisper weighs, moderator/adapters/asr_whisper.py) ----------------------


def test_nearest_puts_the_hints_that_parse_first_in_roster_spelling() -> None:
    near = grammar().nearest(["hostages mary ann and bob", "Hostage is a marian, Bob."], ROSTER, ["hostages"])
    text, parsed = near[0]
    assert text == "hostages Mary Ann and Bob" and parsed.slots == {"players": ["Mary Ann", "Bob"]}
    assert all(p.intent == "hostages" for _, p in near)
    assert ["Bob"] in [p.slots["players"] for _, p in near], "and each name found alone"
    assert len({repr(p.slots) for _, p in near}) == len(near), "each command once"


def test_nearest_reads_misspelt_names_into_the_list() -> None:
    near = grammar().nearest(["Hostages, Fronk and Grays."], ROSTER, ["hostages", "pause"])
    assert near[0][1] == Parsed("hostages", {"players": ["Frank", "Grace"]}, "hostages Frank and Grace")


def test_nearest_tries_every_name_in_a_single_name_slot() -> None:
    near = grammar().nearest(["I appoint one as leader."], ROSTER, ["appoint"], most=20)
    assert "I appoint Erin as leader" in [text for text, _ in near]
    assert grammar().nearest(["pause"], ROSTER, ["time"])[0][1].intent == "time", "only the intents given"
    assert grammar().nearest(["", "  "], ROSTER) == []


def test_nearest_gives_its_places_to_commands_not_to_phrasings_of_one() -> None:
    # pocketsphinx guessed a list short of Grace; Whisper wrote the whole list without the "as". The hint's command
    # is said in eight phrasings ("I choose ... as hostage", "we choose ... as our hostages", ...) that are all near
    # it; they once filled the places, and the four-name command Whisper wrote came too late to get one (dev, 12 dB
    # babble: "We choose Vincent, Wanda, Yara and Zeke our hostages.").
    hints = ["we choose alice and bob and dave as our hostages", "We choose Alice, Bob, Grace and Dave our hostages."]
    near = grammar().nearest(hints, ROSTER, most=3)
    assert near[0][1].slots == {"players": ["Alice", "Bob", "Dave"]}, "the hint that parses first"
    assert near[1] == ("we choose Alice and Bob and Grace and Dave as our hostages",
                       Parsed("hostages", {"players": ["Alice", "Bob", "Grace", "Dave"]},
                              "we choose Alice and Bob and Grace and Dave as our hostages"))
    assert len(near) == 4 and len({(p.intent, repr(p.slots)) for _, p in near}) == 4, "each command once"
    assert grammar().nearest(hints, ROSTER, most=0) == near[:1], "no others asked for"


def test_a_narrowed_grammar_keeps_every_value_of_its_language_aside() -> None:
    whole = grammar()
    deck = whole.narrowed(numbers=4, cards=["president", "bomber"])
    assert sorted(deck.lists["role"]) == ["bomber", "president"] and 5 not in deck.lists["number"]
    assert deck.whole_lists["role"] == whole.lists["role"] and 5 in deck.whole_lists["number"]
    for other in (deck.as_prompted(["reveal"]), deck.addressed("moderator")):
        assert other.whole_lists["role"] == whole.lists["role"]


def test_nearest_merges_two_lists_that_each_miss_a_name() -> None:
    # Dev, 12 dB: pocketsphinx's guess lacked Ursula, Whisper's words Paul ("Hostage for Rosa, ...").
    roster = ["Paul", "Rosa", "Steve", "Ursula", "Vincent", "Wanda"]
    hints = ["hostage paul and rosa steve rosa and vincent", "Hostage for Rosa, Steve, Ursula, and Vincent."]
    lists = [p.slots["players"] for _, p in grammar().nearest(hints, roster, ["hostages"], most=3)]
    assert ["Paul", "Rosa", "Steve", "Ursula", "Vincent"] in lists
    assert not any("Wanda" in names for names in lists), "'and' is not Wanda"


def test_a_command_s_list_has_its_frame_and_takes_other_names_in_its_place() -> None:
    roster = ["Vincent", "Wanda", "Yara", "Zeke", "Amir"]
    text = "I choose Vincent and Yara as our hostages"
    parsed = grammar().parse(text, roster)
    assert grammar().list_frame(text, parsed) == ("I choose", "as our hostages")
    edited, again = grammar().relisted(text, parsed, ["Wanda", "Yara", "Zeke"], roster)
    assert edited == "I choose Wanda and Yara and Zeke as our hostages"
    assert again.intent == parsed.intent and again.slots["players"] == ["Wanda", "Yara", "Zeke"]
    assert grammar().parse(edited, roster) == again
    assert grammar().list_frame("we send Vincent", grammar().parse("we send Vincent", roster)) == ("we send", "")
    # More names than a list takes, or none, is no command; nor is a command without a list.
    assert grammar().relisted(text, parsed, [*roster, "Vincent"], roster) is None
    assert grammar().relisted(text, parsed, [], roster) is None
    assert grammar().list_frame("pause", grammar().parse("pause", roster)) is None
    assert grammar().relisted("pause", grammar().parse("pause", roster), ["Wanda"], roster) is None


def test_a_command_that_names_one_player_has_the_name_s_frame_and_takes_one_other_name() -> None:
    roster = ["Vincent", "Wanda", "Yara", "Zeke", "Amir"]
    text = "we appoint Wanda as leader"
    parsed = grammar().parse(text, roster)
    assert grammar().list_frame(text, parsed) == ("we appoint", "as leader")
    edited, again = grammar().relisted(text, parsed, ["Zeke"], roster)
    assert edited == "we appoint Zeke as leader" and again.slots == {**parsed.slots, "player": "Zeke"}
    assert grammar().relisted(text, parsed, ["Zeke", "Amir"], roster) is None, "one name, not a list"
    votes = grammar().parse("27 votes for Yara", roster)
    assert grammar().list_frame("27 votes for Yara", votes) == ("27 votes for", "")
    reveal = grammar().parse("Amir is the bomber", roster)
    assert grammar().list_frame("Amir is the bomber", reveal) == ("", "is the bomber")
    # Two names that are no list ("Wanda appoints Yara as leader"): neither is decoded alone.
    two = "Wanda appoints Yara as leader"
    assert grammar().list_frame(two, grammar().parse(two, roster)) is None
    assert grammar().relisted(two, grammar().parse(two, roster), ["Zeke"], roster) is None


def test_names_are_merged_in_the_order_both_lists_give() -> None:
    assert _merged(("Paul", "Rosa", "Vincent"), ("Rosa", "Ursula", "Vincent")) == ("Paul", "Rosa", "Ursula", "Vincent")
    assert _merged(("Alice", "Bob"), ("Bob", "Alice")) == ("Bob", "Alice"), "each name once"
    assert _names_in("alice and bob", ["Alice", "Bob", "Wanda"], {"and"}) == ["Alice", "Bob"]
    assert _names_in("alice and bob", ["Alice", "Bob", "Wanda"]) == ["Alice", "Wanda", "Bob"]
