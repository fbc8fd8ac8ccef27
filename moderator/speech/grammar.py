"""The command grammar: load grammars/<lang>.yaml, parse lines against a roster, sample sentences."""

from __future__ import annotations

import difflib
import itertools
import random
import re
from collections.abc import Collection, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from moderator import yamlio
from moderator.errors import GrammarError
from moderator.resources import GRAMMARS
from moderator.speech.grammar_data import ROSTER_TYPES, Template, read_grammar
from moderator.speech.template import (
    Alt,
    Phrases,
    Seq,
    Slot,
    Word,
    list_spellings,
    normalize,
    sentences,
    skeletons,
    slots,
    to_regex,
)

NAME_LIKE = 0.6
"""How alike (``difflib``'s ratio) a written word must be to a player's name to be taken for one in a list
(``Grammar.nearest``): Whisper spells a name it does not know its own way ("Villia" for Delia, "Grays" for Grace).
A common word taken for a name ("have" for Dave) costs only a command weighed and found unlikely."""

MAX_LISTED = 5
"""The most names a ``players`` slot takes: the largest hostage count."""
#: Replies to a question the moderator asked; a wake word is not needed for them.
ANSWERS = ("name_answer", "room_answer", "confirm")


@dataclass(frozen=True)
class Parsed:
    """A line that matched a template.

    ``slots`` holds player names in roster spelling, ``players`` as a list
    (duplicates kept for the engine to refuse), ``votes`` as an int, ``room``
    as "A"/"B", ``team`` "red"/"blue", ``role`` "president"/"bomber" and
    ``answer`` "yes"/"no".
    """

    intent: str
    slots: dict[str, Any]
    text: str


@dataclass(frozen=True)
class NoParse:
    """A line that matched nothing, with a reason fit to say to the players."""

    text: str
    reason: str


_Pattern = tuple[Template, re.Pattern[str], list[tuple[str, Slot]]]


class Grammar:
    """The command language of one language, loaded from YAML.

    Attributes:
        intents: the intents in file order.
        lists: slot type -> value -> spoken phrases (number, team, room, role, answer).
        joiners: the words that may join the names of a ``players`` list.
        source: the file name used in error messages.
        max_listed: the most names a ``players`` list may hold.
    """

    def __init__(
        self,
        templates: Sequence[Template],
        lists: Mapping[str, Mapping[Hashable, tuple[str, ...]]],
        joiners: Sequence[str],
        source: str = "<grammar>",
        max_listed: int = MAX_LISTED,
        whole_lists: Mapping[str, Mapping[Hashable, tuple[str, ...]]] | None = None,
    ) -> None:
        self.source = source
        self.max_listed = max_listed
        self.intents: tuple[str, ...] = tuple(dict.fromkeys(t.intent for t in templates))
        self.lists = {name: dict(values) for name, values in lists.items()}
        #: The lists as the language's file has them, before ``narrowed`` or ``as_prompted``: every card's name, where
        #: ``lists`` has only the deck's (Whisper's words can name a card that is not in the game).
        self.whole_lists = self.lists if whole_lists is None else {k: dict(v) for k, v in whole_lists.items()}
        self.joiners = tuple(joiners)
        self._ordered = tuple(templates)
        # Slot-only templates go last so a literal command wins over a roster name
        # that happens to be a command word; sorted() is stable, so YAML order otherwise.
        self._templates = sorted(templates, key=lambda t: t.bare)
        self._phrases = {name: Phrases(values) for name, values in lists.items()}
        self._joiner_keys = frozenset(j.casefold() for j in self.joiners)
        self._cache: dict[tuple[str, ...], tuple[Phrases, list[_Pattern]]] = {}
        # ``narrowed`` and ``as_prompted`` grammars by their arguments: the same arguments give the same grammar, so
        # that a recognizer, which compiles a search per grammar it is given and keeps it, compiles each once.
        self._narrowings: dict[tuple[Any, ...], Grammar] = {}
        self._prompted: dict[tuple[str, ...], Grammar] = {}
        # Only templates with words: a bare "{player}" wildcard would call any gibberish a name.
        named = [t for t in self._templates if not t.bare and any(s.type in ROSTER_TYPES for s in slots(t.tree))]
        self._wildcards: list[_Pattern] = [
            (t, re.compile(pattern, re.IGNORECASE), groups)
            for t in named
            for pattern, groups in [to_regex(t.tree, self._wildcard_pattern)]
        ]

    # -- loading: only from_file touches the disk -------------------------------

    @classmethod
    def from_file(cls, path: Path | str) -> Grammar:
        """Read a grammar file; every problem is a GrammarError naming the file."""
        path = Path(path)
        source = str(path.relative_to(GRAMMARS.parent)) if path.is_relative_to(GRAMMARS.parent) else str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise GrammarError(f"cannot read {source}: {exc.strerror or exc}") from exc
        return cls.from_yaml(text, source)

    @classmethod
    def from_yaml(cls, text: str, source: str = "<grammar>") -> Grammar:
        """Parse grammar YAML; ``source`` names it in errors."""
        return cls.from_dict(yamlio.loads(text, source=source, error=GrammarError), source)

    @classmethod
    def from_dict(cls, data: Any, source: str = "<grammar>") -> Grammar:
        """Build a grammar from loaded YAML data, checking every template."""
        return cls(*read_grammar(data, source), source)

    def addressed(self, wake_word: str, answers: Iterable[str] = ANSWERS) -> Grammar:
        """The same commands, each said after ``wake_word`` ("moderator, pause").

        The ``answers`` intents (replies to a question the moderator just asked, such as "yes") stay as
        they are: they are only listened for while a question is open.
        """
        prefix = tuple(Word(word.lower()) for word in normalize(wake_word))
        if not prefix:
            raise GrammarError("the wake word must be a word, e.g. 'moderator'")
        keep = frozenset(answers)
        templates = [
            t if t.intent in keep
            else Template(t.intent, f"{wake_word} {t.text}", Alt((Seq((*prefix, t.tree)),)), bare=False)
            for t in self._ordered
        ]
        return Grammar(templates, self.lists, self.joiners, f"{self.source} after '{wake_word}'", self.max_listed,
                       self.whole_lists)

    def narrowed(self, *, numbers: int | None = None, max_listed: int | None = None,
                 cards: Collection[str] | None = None, intents: Collection[str] | None = None) -> Grammar:
        """The same commands with fewer choices, for a recognizer to listen for: only the numbers
        up to ``numbers`` (no more votes than players), lists of at most ``max_listed`` names, and only the
        ``cards`` of the game's deck (every card name in the grammar would lower every command's confidence), and
        only the ``intents`` given (None: all). The same arguments give the same grammar."""
        key = (numbers, max_listed, None if cards is None else frozenset(cards),
               None if intents is None else frozenset(intents))
        if key not in self._narrowings:
            self._narrowings[key] = self._narrowed(numbers, max_listed, cards, intents)
        return self._narrowings[key]

    def _narrowed(self, numbers: int | None, max_listed: int | None, cards: Collection[str] | None,
                  intents: Collection[str] | None) -> Grammar:
        lists = self.lists
        if numbers is not None and "number" in lists:
            kept = {v: p for v, p in lists["number"].items() if not isinstance(v, int) or v <= numbers}
            lists = {**lists, "number": kept}
        if cards is not None and "role" in lists:
            lists = {**lists, "role": {v: p for v, p in lists["role"].items() if v in cards}}
        kept = self._ordered if intents is None else [t for t in self._ordered if t.intent in intents]
        return Grammar(kept, lists, self.joiners, self.source, max_listed or self.max_listed, self.whole_lists)

    def as_prompted(self, intents: Collection[str]) -> Grammar:
        """Only ``intents``, each list value said only as its first phrase, the one the moderator's prompts ask for
        ("yes" and "no"; not "yeah", "that's wrong"). The listener decodes a short reply with it once more while a
        read-back waits (``Listener._answer``): party noise after a "yes" cannot then be explained as more words of
        a longer answer ("no that's wrong"), only as silence, which the recognizer rejects when it is loud. The same
        intents give the same grammar."""
        key = tuple(intents)
        if key in self._prompted:
            return self._prompted[key]
        lists = {name: {value: phrases[:1] for value, phrases in values.items()} for name, values in self.lists.items()}
        kept = [t for t in self._ordered if t.intent in intents]
        self._prompted[key] = Grammar(kept, lists, self.joiners, f"{self.source} ({', '.join(intents)} as prompted)",
                                      self.max_listed, self.whole_lists)
        return self._prompted[key]

    # -- queries ------------------------------------------------------------------

    def templates(self, intent: str) -> tuple[str, ...]:
        """The raw template strings of ``intent``, in file order."""
        if intent not in self.intents:
            raise KeyError(f"no intent {intent!r} in {self.source}")
        return tuple(t.text for t in self._ordered if t.intent == intent)

    def trees(self, intent: str) -> tuple[Alt, ...]:
        """The parsed templates of ``intent``, for compiling to engine grammars (JSGF)."""
        return tuple(t.tree for t in self._ordered if t.intent == intent)

    def vocabulary(self, roster: Sequence[str]) -> set[str]:
        """Every word (lowercase) the grammar can produce with ``roster``; digits are left out."""
        words = {w.text for t in self._templates for sk in skeletons(t.tree) for w in sk if not isinstance(w, Slot)}
        words.update(self.joiners)
        for phrase in itertools.chain(roster, *(p for values in self.lists.values() for p in values.values())):
            words.update(normalize(phrase))
        return {word.lower() for word in words}

    # -- sample sentences -------------------------------------------------------------

    def expand(
        self,
        roster: Sequence[str],
        intents: Iterable[str] | None = None,
        *,
        limit_per_template: int | None = None,
        rng: random.Random | None = None,
    ) -> Iterator[tuple[str, Parsed]]:
        """Sample sentences, each with the parse it must give.

        Without a limit, every sentence shape of every template comes with
        every sample value: each roster name, lists of 1 to 5 names in three
        spellings, every list phrase, and digits for numbers. With
        ``limit_per_template``, at most that many distinct random sentences per
        template, drawn with ``rng`` (seeded 0 if not given, so runs repeat).
        """
        wanted = self.intents if intents is None else tuple(intents)
        if missing := set(wanted) - set(self.intents):
            raise KeyError(f"no intent(s) {', '.join(sorted(missing))} in {self.source}")
        samples = self._samples(roster)
        rng = rng or random.Random(0)
        for template in self._ordered:
            if template.intent in wanted:
                for text, values in sentences(template.tree, samples, limit_per_template, rng):
                    yield text, Parsed(template.intent, values, text)

    def _samples(self, roster: Sequence[str]) -> dict[str, list[tuple[str, Any]]]:
        names = list(dict.fromkeys(roster))
        listed: list[tuple[str, Any]] = list(list_spellings(names, self.joiners[0], self.max_listed))
        samples = {"player": [(name, name) for name in names], "players": listed}
        for name, values in self.lists.items():
            samples[name] = [(phrase, value) for value, phrases in values.items() for phrase in phrases]
        samples.setdefault("number", []).extend((str(v), v) for v in self.lists.get("number", {}) if isinstance(v, int))
        return samples

    def nearest(self, hints: Sequence[str], roster: Sequence[str], intents: Iterable[str] | None = None, *,
                most: int = 6) -> list[tuple[str, Parsed]]:
        """The commands nearest what a recognizer wrote (``hints``), for another recognizer to weigh: each hint
        that parses whole first, then up to ``most`` other commands: each hint's nearest in turn, then each one's
        second nearest, and so on (``difflib``'s ratio of their letters to the hint's). Names come in roster
        spelling. A ``player`` slot is tried with every name; a ``players`` list holds the names found in a hint (a
        word of theirs ``NAME_LIKE`` alike), in order, or two hints' lists merged (``_merged``), or one of those
        names, or one of the roster when none was found."""
        wanted = [i for i in (self.intents if intents is None else intents) if i in self.intents]
        lines = [" ".join(normalize(h)).lower() for h in hints if normalize(h)]
        names = list(dict.fromkeys(roster))
        out: list[tuple[str, Parsed]] = []
        for line in dict.fromkeys(lines):
            parsed = self.parse(line, roster)
            if isinstance(parsed, Parsed) and parsed.intent in wanted:
                words = _spelled(line, names)
                out.append((words, Parsed(parsed.intent, parsed.slots, words)))
        if not lines or most <= 0:
            return out
        found = [_names_in(line, names, self._joiner_keys) for line in lines]
        lists = {tuple(named) for named in found if len(named) > 1}
        lists |= {merged for a, b in itertools.combinations(sorted(lists), 2)
                  if len(merged := _merged(a, b)) <= self.max_listed}
        samples = self._samples(roster)
        samples["players"] = [(f" {self.joiners[0]} ".join(named), list(named)) for named in sorted(lists)] + [
            (name, [name]) for name in (dict.fromkeys(n for named in found for n in named) or names)]
        matchers = []
        for line in dict.fromkeys(lines):
            matchers.append(difflib.SequenceMatcher(None, autojunk=False))
            matchers[-1].set_seq2(line)  # the matcher keeps what it learnt of the hint for every sentence
        taken = {(p.intent, repr(sorted(p.slots.items()))) for _, p in out}
        # For each hint, the ``most`` commands likest it so far, other than the hints' own, each at the likeness of
        # its likest sentence: commands, not sentences ("I choose ..." and "we choose ..." are one command).
        bests: list[dict[tuple[str, str], tuple[float, Parsed]]] = [{} for _ in matchers]
        for template in self._ordered:
            if template.intent not in wanted:
                continue
            for text, values in sentences(template.tree, samples, None, random.Random(0)):
                key = None
                for matcher, best in zip(matchers, bests, strict=True):
                    bar = min(v[0] for v in best.values()) if len(best) >= most else 0.0
                    matcher.set_seq1(text.lower())  # a sentence that cannot beat the kept ones is not measured
                    if matcher.real_quick_ratio() <= bar or matcher.quick_ratio() <= bar:
                        continue
                    if (near := matcher.ratio()) <= bar:
                        continue
                    key = key or (template.intent, repr(sorted(values.items())))
                    if key in taken or (key in best and best[key][0] >= near):
                        continue
                    best[key] = (near, Parsed(template.intent, values, text))
                    if len(best) > most:
                        del best[min(best, key=lambda k: best[k][0])]
        # Each hint's likest command in turn, then each one's second, ...: the commands near a guess of the wrong
        # intent ("thirty vote for delia", "three vote for delia", ...) take no place from those near Whisper's words
        # ("Paul declines the author.").
        ranked = [sorted(best.items(), key=lambda kv: -kv[1][0]) for best in bests]
        chosen: dict[tuple[str, str], Parsed] = {}
        for rank in range(most):
            for key, (_, parsed) in sorted((r[rank] for r in ranked if rank < len(r)), key=lambda kv: -kv[1][0]):
                if len(chosen) < most:
                    chosen.setdefault(key, parsed)
        return out + [(parsed.text, parsed) for parsed in chosen.values()]

    def list_frame(self, text: str, parsed: Parsed) -> tuple[str, str] | None:
        """The words of the command ``text`` (``parsed``, its names in roster spelling) before its list of names and
        after it ("we send", "" for "we send Bob and Carol"), or before and after the one name of a command that
        names one player ("we appoint", "as leader" for "we appoint Bob as leader"; ``names_slot``); None for a
        command with neither."""
        span = list_span(text, _listed(parsed))
        return None if span is None else (text[: span[0]].strip(), text[span[1] :].strip())

    def relisted(self, text: str, parsed: Parsed, names: Sequence[str],
                 roster: Sequence[str]) -> tuple[str, Parsed] | None:
        """The command ``text`` (``parsed``) with ``names`` in place of its list, joined by the first joiner, or one
        name in place of its one name (``names_slot``), as it parses again; None where it does not parse as the same
        command with those names (more than the list takes, more than one for one name) or it has neither. A name
        twice is kept: the engine refuses it."""
        slot = names_slot(parsed)
        span = list_span(text, _listed(parsed))
        if slot is None or span is None or not names:
            return None
        listing = isinstance(parsed.slots[slot], list)
        if not listing and len(names) > 1:
            return None
        edited = text[: span[0]] + f" {self.joiners[0]} ".join(names) + text[span[1] :]
        again = self.parse(edited, roster)
        wanted = list(names) if listing else names[0]
        if isinstance(again, Parsed) and again.intent == parsed.intent and again.slots.get(slot) == wanted:
            return edited, Parsed(again.intent, again.slots, edited)
        return None

    # -- parsing --------------------------------------------------------------------

    def parse(self, text: str, roster: Sequence[str]) -> Parsed | NoParse:
        """Match a whole line against the templates; names come back in roster spelling.

        Case, punctuation and commas do not matter. Never raises: a line that
        matches nothing gives a NoParse whose reason can be read out.
        """
        words = normalize(text)
        if not words:
            return NoParse(text, "I heard nothing")
        for parsed in self._matches(text, words, roster):
            return parsed
        return NoParse(text, self._reason(words, roster))

    def parse_all(self, text: str, roster: Sequence[str]) -> list[Parsed]:
        """Every template match of a line; more than one intent means the grammar is ambiguous."""
        return list(self._matches(text, normalize(text), roster))

    def _matches(self, text: str, words: list[str], roster: Sequence[str]) -> Iterator[Parsed]:
        line = " " + " ".join(words)
        names, patterns = self._compile(roster)
        for template, regex, groups in patterns:
            match = regex.fullmatch(line)
            values = None if match is None else self._values(match, groups, names)
            if values is not None:
                yield Parsed(template.intent, values, text)

    def _values(self, match: re.Match[str], groups: list[tuple[str, Slot]], names: Phrases) -> dict[str, Any] | None:
        values: dict[str, Any] = {}
        for group, slot in groups:
            spoken = match.group(group)
            if spoken is None:
                continue  # an alternative or optional part that was not said
            if slot.type == "players":
                value: Any = names.split(spoken.split(" "), self._joiner_keys)
            elif slot.type == "player":
                value = names.lookup(spoken)
            elif slot.type == "number" and spoken.isdecimal():
                value = int(spoken)
            else:
                value = self._phrases[slot.type].lookup(spoken)
            if value is None:
                return None
            values[slot.name] = value
        return values

    def _reason(self, words: list[str], roster: Sequence[str]) -> str:
        """Why nothing matched: unknown names if the line fits a template otherwise."""
        line = " " + " ".join(words)
        names, _ = self._compile(roster)
        best: list[str] | None = None
        for _template, regex, groups in self._wildcards:
            match = regex.fullmatch(line)
            if match is None:
                continue
            unknown = []
            for group, slot in groups:
                spoken = match.group(group)
                if spoken is not None and slot.type in ROSTER_TYPES:
                    runs = names.scan(spoken.split(" "), self._joiner_keys)
                    unknown += [run for known, run in runs if not known]
            if unknown and (best is None or len(" ".join(unknown)) < len(" ".join(best))):
                best = unknown
        if best:
            quoted = [f"'{name}'" for name in best]
            if len(quoted) == 1:
                return f"{quoted[0]} is not a player in this game"
            return f"{', '.join(quoted[:-1])} and {quoted[-1]} are not players in this game"
        # The reason is spoken aloud, so a long misheard line is cut short.
        said = " ".join(words[:10]) + (" ..." if len(words) > 10 else "")
        if "help" in self.intents:
            hint = " ".join(p.text for p in skeletons(self.trees("help")[0])[0] if not isinstance(p, Slot))
            return f"I did not understand '{said}'; say '{hint}' to hear the commands"
        return f"I did not understand '{said}'"

    # -- compiling --------------------------------------------------------------------

    def _compile(self, roster: Sequence[str]) -> tuple[Phrases, list[_Pattern]]:
        """The roster's names and every template's regex, compiled once per roster."""
        key = tuple(roster)
        if key not in self._cache:
            if len(self._cache) >= 8:
                self._cache.clear()  # rosters rarely change; no need for an LRU
            names = Phrases({name: [name] for name in key})

            def slot_pattern(slot: Slot) -> str:
                if slot.type == "player":
                    return names.pattern
                if slot.type == "players":
                    joiner = "(?: (?:" + "|".join(map(re.escape, self.joiners)) + "))?"
                    return f"{names.pattern}(?:{joiner} {names.pattern}){{0,{self.max_listed - 1}}}"
                return self._list_pattern(slot)

            patterns = [(t, *to_regex(t.tree, slot_pattern)) for t in self._templates]
            self._cache[key] = (names, [(t, re.compile(p, re.IGNORECASE), g) for t, p, g in patterns])
        return self._cache[key]

    def _wildcard_pattern(self, slot: Slot) -> str:
        # Any few words stand in for names, to tell "unknown player" from gibberish.
        if slot.type == "player":
            return r"\S+(?: \S+){0,2}"
        if slot.type == "players":
            return r"\S+(?: \S+){0,14}"
        return self._list_pattern(slot)

    def _list_pattern(self, slot: Slot) -> str:
        digits = r"\d{1,2}|" if slot.type == "number" else ""
        return f"(?:{digits}{self._phrases[slot.type].pattern})"


def load_grammar(lang: str = "en", game: str = "two_rooms") -> Grammar:
    """Load the shipped grammar of ``lang`` from ``grammars/<lang>.yaml`` (another game's:
    ``grammars/<game>.<lang>.yaml``, e.g. room25.en.yaml)."""
    if not re.fullmatch(r"[a-z]{2,3}(?:[-_][A-Za-z]{2,4})?", lang):
        raise GrammarError(f"{lang!r} is not a language code such as 'en'")
    if not re.fullmatch(r"[a-z0-9_]+", game):
        raise GrammarError(f"{game!r} is not a game name such as 'room25'")
    return Grammar.from_file(GRAMMARS / (f"{lang}.yaml" if game == "two_rooms" else f"{game}.{lang}.yaml"))


def _names_in(line: str, roster: Sequence[str], joiners: Collection[str] = ()) -> list[str]:
    """The players of ``roster`` named in ``line`` (lowercase words), each once, in the order first named: a run of
    as many words as the name has, ``NAME_LIKE`` alike to it, and not one of the ``joiners`` of a list ("and" is
    0.75 alike to Wanda, and so was a name of every list Whisper wrote in a room with a Wanda)."""
    found: list[str] = []
    words = line.split()
    for i in range(len(words)):
        if words[i] in joiners:
            continue
        near = [(difflib.SequenceMatcher(None, " ".join(words[i : i + len(name.split())]), name.lower()).ratio(), name)
                for name in roster if i + len(name.split()) <= len(words)]
        likeness, name = max(near, default=(0.0, ""))
        if likeness >= NAME_LIKE and name not in found:
            found.append(name)
    return found


NAME_SLOTS = ("by", "leader", "player")
"""The slots that hold one player's name: ``{player}``, ``{by:player}``, ``{leader:player}``."""


def names_slot(parsed: Parsed) -> str | None:
    """The slot of ``parsed`` that holds its list of names (``players``), else its one name where it names one player
    (one of ``NAME_SLOTS``); None for a command with neither, or with two names that are no list ("Bob appoints
    Alice as leader")."""
    listed = [key for key, value in parsed.slots.items() if isinstance(value, list)]
    single = [key for key in NAME_SLOTS if key in parsed.slots]
    return listed[0] if listed else single[0] if len(single) == 1 else None


def _listed(parsed: Parsed) -> list[str]:
    """The names of ``parsed``'s ``names_slot``, or an empty list."""
    slot = names_slot(parsed)
    value = parsed.slots[slot] if slot is not None else []
    return list(value) if isinstance(value, list) else [value]


def list_span(text: str, names: Sequence[str]) -> tuple[int, int] | None:
    """Where the list of ``names`` stands in ``text``: from its first name's first letter to the last name's last
    (whole words, any case); None where either is not found, or the last stands before the first, or no names."""
    if not names:
        return None
    first = re.search(rf"\b{re.escape(names[0])}\b", text, re.IGNORECASE)
    ends = list(re.finditer(rf"\b{re.escape(names[-1])}\b", text, re.IGNORECASE))
    if first is None or not ends or ends[-1].end() <= first.start():
        return None
    return first.start(), ends[-1].end()


def _merged(a: Sequence[str], b: Sequence[str]) -> tuple[str, ...]:
    """Two lists of names as one, each name once, in the order both give: where one recognizer missed a name of a
    list and the other another ("hostage paul and rosa steve rosa and vincent", "Hostage for Rosa, Steve, Ursula,
    and Vincent." for Paul, Rosa, Steve, Ursula and Vincent)."""
    out: dict[str, None] = {}
    for _, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        out.update(dict.fromkeys((*a[i1:i2], *b[j1:j2])))
    return tuple(out)


def _spelled(line: str, roster: Sequence[str]) -> str:
    """``line`` (lowercase words) with the players' names in roster spelling, the longest names first."""
    for name in sorted(roster, key=len, reverse=True):
        line = re.sub(rf"(?<![\w']){re.escape(name.lower())}(?![\w'])", name, line)
    return line
