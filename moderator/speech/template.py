"""The template syntax of the command grammar: parse it, expand it, and compile it to regexes."""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import (
    Callable,
    Collection,
    Hashable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass
from typing import Any

# Anything but letters, digits and apostrophes separates words, so commas,
# hyphens ("twenty-one", "Jean-Luc") and end punctuation all act as spaces.
_SEPARATORS = re.compile(r"[^\w']+")
_SLOT_NAME = re.compile(r"[a-z_][a-z0-9_]*")
_SPECIAL = "{}()[]|"


def normalize(text: str) -> list[str]:
    """Split ``text`` into words, keeping case and inner apostrophes ("that's", "O'Brien")."""
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("_", " ")
    words = (word.strip("'") for word in _SEPARATORS.split(text))
    return [word for word in words if word]


def phrase_key(text: str) -> str:
    """The form two spellings of a phrase share: casefolded, apostrophes dropped."""
    return " ".join(normalize(text)).replace("'", "").casefold()


def phrase_pattern(text: str) -> str:
    """A regex for a phrase in normalized text; apostrophes may be left out ("thats")."""
    words = (re.escape(word).replace("'", "'?") for word in normalize(text))
    return " ".join(words)


class TemplateError(ValueError):
    """A template breaks the syntax; the message says how, without naming the file."""


@dataclass(frozen=True)
class Word:
    """A literal word."""

    text: str


@dataclass(frozen=True)
class Slot:
    """A ``{name}`` or ``{name:type}`` reference."""

    name: str
    type: str


@dataclass(frozen=True)
class Seq:
    """Items one after the other."""

    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt:
    """Exactly one of the options: ``(a|b)``, and every template's top level."""

    options: tuple[Seq, ...]


@dataclass(frozen=True)
class Opt:
    """The options or nothing: ``[a|b]``."""

    inner: Alt


Node = Word | Slot | Seq | Alt | Opt
Piece = Word | Slot


class _Reader:
    """A recursive-descent reader over one template string."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def alts(self, opener: str = "") -> Alt:
        closer = {"": "", "(": ")", "[": "]"}[opener]
        options = [self.seq()]
        while self.peek() == "|":
            self.pos += 1
            options.append(self.seq())
        char = self.peek()
        if char != closer:
            if not char:
                raise TemplateError(f"unclosed '{opener}'")
            raise TemplateError(f"unexpected '{char}'" + (f", expected '{closer}'" if closer else ""))
        self.pos += 1
        if (opener or len(options) > 1) and any(not option.items for option in options):
            where = f"in '{opener}...{closer}'" if opener else "at the top level"
            raise TemplateError(f"empty alternative {where}")
        return Alt(tuple(options))

    def seq(self) -> Seq:
        items: list[Node] = []
        while (char := self.peek()) and char not in "|)]":
            if char == "{":
                items.append(self.slot())
            elif char in "([":
                self.pos += 1
                inner = self.alts(char)
                items.append(inner if char == "(" else Opt(inner))
            elif char == "}":
                raise TemplateError("unexpected '}'")
            else:
                start = self.pos
                while self.peek() and self.peek() not in _SPECIAL:
                    self.pos += 1
                items.extend(Word(word) for word in normalize(self.text[start : self.pos]))
        return Seq(tuple(items))

    def slot(self) -> Slot:
        end = self.pos + 1
        while end < len(self.text) and self.text[end] not in "{}":
            end += 1
        if end >= len(self.text) or self.text[end] == "{":
            raise TemplateError("unclosed '{'")
        body = self.text[self.pos + 1 : end].strip()
        name, _, type_ = (part.strip() for part in body.partition(":"))
        type_ = type_ or name
        if not (_SLOT_NAME.fullmatch(name) and _SLOT_NAME.fullmatch(type_)):
            raise TemplateError(f"bad slot '{{{body}}}': write {{name}} or {{name:type}}")
        self.pos = end + 1
        return Slot(name, type_)


def parse_template(text: str) -> Alt:
    """Parse one template string into a tree.

    Raises:
        TemplateError: the syntax is broken, or some sentence of it has no words or slots.
    """
    tree = _Reader(text).alts()
    shapes = skeletons(tree)
    if not all(shapes):  # an empty sentence would match silence
        raise TemplateError("template can be empty" if any(shapes) else "template is empty")
    return tree


def slot_names(node: Node) -> tuple[frozenset[str], frozenset[str]]:
    """The slot names ``node`` always fills and those it may fill.

    Raises:
        TemplateError: one sentence of the template could fill a slot twice.
    """
    if isinstance(node, Word):
        return frozenset(), frozenset()
    if isinstance(node, Slot):
        return frozenset([node.name]), frozenset([node.name])
    if isinstance(node, Opt):
        return frozenset(), slot_names(node.inner)[1]
    if isinstance(node, Alt):
        results = [slot_names(option) for option in node.options]
        always = frozenset.intersection(*(always for always, _ in results))
        return always, frozenset().union(*(maybe for _, maybe in results))
    always_all: frozenset[str] = frozenset()
    maybe_all: frozenset[str] = frozenset()
    for item in node.items:
        always, maybe = slot_names(item)
        if twice := maybe & maybe_all:
            raise TemplateError(f"slot '{min(twice)}' appears twice")
        always_all, maybe_all = always_all | always, maybe_all | maybe
    return always_all, maybe_all


def slots(node: Node) -> Iterator[Slot]:
    """Every slot reference in ``node``."""
    if isinstance(node, Slot):
        yield node
    elif isinstance(node, Seq):
        for item in node.items:
            yield from slots(item)
    elif isinstance(node, Alt):
        for option in node.options:
            yield from slots(option)
    elif isinstance(node, Opt):
        yield from slots(node.inner)


def skeletons(node: Node) -> list[tuple[Piece, ...]]:
    """Every word-and-slot sequence ``node`` can produce, in template order."""
    if isinstance(node, Word | Slot):
        return [(node,)]
    if isinstance(node, Opt):
        return [(), *skeletons(node.inner)]
    if isinstance(node, Alt):
        return [sk for option in node.options for sk in skeletons(option)]
    parts = [skeletons(item) for item in node.items]
    return [tuple(itertools.chain.from_iterable(combo)) for combo in itertools.product(*parts)]


def to_regex(node: Node, slot_pattern: Callable[[Slot], str]) -> tuple[str, list[tuple[str, Slot]]]:
    """Compile ``node`` to a regex over normalized text with a space before every word.

    Groups are numbered (``g0``, ``g1``, ...) rather than named after slots,
    because alternatives may each hold the same slot and Python forbids
    repeating a group name.

    Returns:
        The pattern, and each group name with the slot it captures.
    """
    groups: list[tuple[str, Slot]] = []

    def walk(node: Node) -> str:
        if isinstance(node, Word):
            return " " + phrase_pattern(node.text)
        if isinstance(node, Slot):
            group = f"g{len(groups)}"
            groups.append((group, node))
            return f" (?P<{group}>{slot_pattern(node)})"
        if isinstance(node, Seq):
            return "".join(walk(item) for item in node.items)
        if isinstance(node, Alt):
            return "(?:" + "|".join(walk(option) for option in node.options) + ")"
        return "(?:" + walk(node.inner) + ")?"

    return walk(node), groups


def check_slots(tree: Alt, spec: Mapping[str, tuple[str, bool]], known_types: Collection[str]) -> Alt:
    """Check a template's slots against its intent's slot names, types and required slots.

    Args:
        spec: slot name -> (type, required) of the template's intent.
        known_types: the slot types the grammar defines.

    Raises:
        TemplateError: a slot is unknown, mistyped, doubled, or a required one can be left out.
    """
    for slot in slots(tree):
        if slot.type not in known_types:
            raise TemplateError(f"unknown slot type '{slot.type}'; known: {', '.join(sorted(known_types))}")
        if slot.name not in spec:
            has = ", ".join(spec) or "none"
            raise TemplateError(f"slot '{slot.name}' does not belong to this intent (its slots: {has})")
        if slot.type != spec[slot.name][0]:
            raise TemplateError(f"slot '{slot.name}' must have type '{spec[slot.name][0]}', not '{slot.type}'")
    always, _ = slot_names(tree)
    for name, (_type, required) in spec.items():
        if required and name not in always:
            raise TemplateError(f"every sentence needs the slot '{name}'")
    return tree

def fill(shape: Sequence[Piece], values: Sequence[tuple[str, Any]]) -> tuple[str, dict[str, Any]]:
    """Fill a sentence shape with (spoken, value) samples, one per slot in order."""
    words: list[str] = []
    filled: dict[str, Any] = {}
    samples = iter(values)
    for piece in shape:
        if isinstance(piece, Slot):
            spoken, value = next(samples)
            words.append(spoken)
            filled[piece.name] = list(value) if isinstance(value, list) else value
        else:
            words.append(piece.text)
    return " ".join(words), filled


def sentences(
    tree: Node, samples: Mapping[str, Sequence[tuple[str, Any]]], limit: int | None, rng: random.Random
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Sentences of ``tree`` with their slot values, from (spoken, value) samples per slot type.

    Without a limit: every shape with every combination of samples. With one:
    at most ``limit`` distinct random sentences, drawn with ``rng``.
    """
    shapes = [
        (shape, [samples[p.type] for p in shape if isinstance(p, Slot)])
        for shape in skeletons(tree)
        if all(samples.get(p.type) for p in shape if isinstance(p, Slot))
    ]
    if limit is None:
        for shape, choices in shapes:
            for combo in itertools.product(*choices):
                yield fill(shape, combo)
        return
    seen: set[str] = set()
    for _ in range(20 * limit):  # bounded: a small template has fewer than ``limit`` sentences
        if len(seen) >= limit or not shapes:
            break
        shape, choices = rng.choice(shapes)
        text, values = fill(shape, [rng.choice(c) for c in choices])
        if text not in seen:
            seen.add(text)
            yield text, values


def list_spellings(names: Sequence[str], joiner: str, most: int) -> Iterator[tuple[str, list[str]]]:
    """Sample spoken lists of 1 to ``most`` names, each way a list may be joined.

    Every name starts a list of every length, so every name is tried in every
    position: "Bob", "Bob, Carol and Dave", "Bob Carol and Dave", "Bob and Carol and Dave".
    """
    for size in range(1, min(most, len(names)) + 1):
        for start in range(len(names)):
            group = [names[(start + i) % len(names)] for i in range(size)]
            head, last = group[:-1], group[-1]
            spellings = [f"{', '.join(head)} {joiner} {last}", f"{' '.join(head)} {joiner} {last}"]
            spellings = [last] if size == 1 else [*spellings, f" {joiner} ".join(group)]
            for spelling in dict.fromkeys(spellings):
                yield spelling, group


class Phrases:
    """Spoken phrases for values: roster names, or one of the grammar's lists.

    Matching prefers the longest phrase, so "Mary Ann" wins over "Mary".
    """

    def __init__(self, phrases: Mapping[Hashable, Iterable[str]]) -> None:
        self._values: dict[str, Hashable] = {}
        spellings: dict[str, str] = {}  # key -> a spelling with its apostrophes
        for value, spoken in phrases.items():
            for phrase in spoken:
                if key := phrase_key(phrase):
                    self._values.setdefault(key, value)
                    spellings.setdefault(key, phrase)
        by_length = sorted(spellings, key=lambda key: (-len(key), key))
        self.longest = max((key.count(" ") + 1 for key in by_length), default=0)
        # An empty roster must still compile; (?!) never matches.
        self.pattern = "(?:" + ("|".join(phrase_pattern(spellings[key]) for key in by_length) or "(?!)") + ")"

    def lookup(self, text: str) -> Hashable | None:
        """The value spoken as ``text``, or None."""
        return self._values.get(phrase_key(text))

    def split(self, words: list[str], joiners: frozenset[str]) -> list[Hashable] | None:
        """Read ``words`` as phrases, each but the first optionally after a joiner.

        Backtracks, so odd rosters ("Mary", "Mary Ann", "Ann Lee") still split
        whenever some reading exists; the longest phrase is tried first.
        """
        if not words:
            return []
        for size in range(min(self.longest, len(words)), 0, -1):
            value = self.lookup(" ".join(words[:size]))
            if value is None:
                continue
            rest = words[size:]
            if rest and rest[0].casefold() in joiners:
                tail = self.split(rest[1:], joiners) if len(rest) > 1 else None
                if tail:
                    return [value, *tail]
            tail = self.split(rest, joiners)
            if tail is not None:
                return [value, *tail]
        return None

    def scan(self, words: list[str], joiners: frozenset[str]) -> list[tuple[bool, str]]:
        """Split a spoken list into (known, text) runs, longest phrases first.

        Unknown words between joiners ("and") form one run, so "Bob and Big Zed"
        gives [(True, "Bob"), (False, "Big Zed")].
        """
        runs: list[tuple[bool, str]] = []
        unknown: list[str] = []
        i = 0
        while i < len(words):
            if words[i].casefold() in joiners and (runs or unknown):
                i += 1
                runs.extend([(False, " ".join(unknown))] if unknown else [])
                unknown = []
                continue
            for size in range(min(self.longest, len(words) - i), 0, -1):
                value = self.lookup(" ".join(words[i : i + size]))
                if value is not None:
                    runs.extend([(False, " ".join(unknown))] if unknown else [])
                    runs.append((True, str(value)))
                    unknown = []
                    i += size
                    break
            else:
                unknown.append(words[i])
                i += 1
        runs.extend([(False, " ".join(unknown))] if unknown else [])
        return runs
