"""The phrase catalogue: everything the moderator says, by key, per language (``voices/<lang>.yaml``)."""

from __future__ import annotations

import math
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from moderator import yamlio
from moderator.errors import CatalogError
from moderator.resources import VOICES

_FORMATTER = string.Formatter()
#: The forms of a word or a phrase whose wording depends on a number.
FORMS = ("one", "other")


def slots_of(text: str) -> set[str]:
    """The ``{slot}`` names a phrase uses."""
    try:
        return {name for _, name, _, _ in _FORMATTER.parse(text) if name}
    except ValueError as exc:
        raise CatalogError(f"bad phrase {text!r}: {exc}") from exc


@dataclass(frozen=True)
class Plural:
    """A phrase said in its ``one`` or ``other`` form, chosen by the number in slot ``by``: a number, or a list
    of names, whose length counts ("Hostage locked: Bob" / "Hostages locked: Bob and Carol")."""

    by: str
    one: str
    other: str


@dataclass(frozen=True)
class Catalog:
    """Phrases of one language, with the number, list and duration forms they need.

    ``phrases`` has every key; for a phrase with plural forms it holds the ``other`` form, and ``plurals`` both.
    """

    lang: str
    phrases: Mapping[str, str]
    counts: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    voice: Mapping[str, Any] = field(default_factory=dict)
    source: str = "<data>"
    plurals: Mapping[str, Plural] = field(default_factory=dict)

    @classmethod
    def from_file(cls, path: Path) -> Catalog:
        """Read ``voices/<lang>.yaml``."""
        return cls.from_dict(yamlio.load_file(path, error=CatalogError), source=str(path))

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<data>") -> Catalog:
        """Validate parsed YAML; errors name the file and the key."""
        if not isinstance(data, dict) or not isinstance(data.get("phrases"), dict):
            raise CatalogError(f"{source}: expected a mapping with 'lang' and 'phrases'")
        phrases: dict[str, str] = {}
        plurals: dict[str, Plural] = {}
        for key, value in data["phrases"].items():
            key = str(key)
            try:
                if isinstance(value, dict):
                    plurals[key] = _plural(value)
                    phrases[key] = plurals[key].other
                else:
                    phrases[key] = str(value)
                    slots_of(phrases[key])
            except CatalogError as exc:
                raise CatalogError(f"{source}: phrase '{key}': {exc}") from exc
        counts = {str(k): {str(f): str(t) for f, t in v.items()} for k, v in (data.get("counts") or {}).items()}
        for word, forms in counts.items():
            if "one" not in forms or "other" not in forms:
                raise CatalogError(f"{source}: count '{word}' needs 'one' and 'other' forms")
        return cls(str(data.get("lang", "?")), phrases, counts, dict(data.get("voice") or {}), source, plurals)

    def render(self, key: str, /, **slots: Any) -> str:
        """The phrase ``key`` with its slots filled. A list fills its slot as names ("Bob and Carol"); a phrase
        with plural forms takes the one its ``by`` slot's number, or list length, calls for."""
        try:
            text = self.phrases[key]
        except KeyError:
            raise CatalogError(f"{self.source}: no phrase '{key}'") from None
        plural = self.plurals.get(key)
        if plural is not None:
            text = plural.one if self.form(self._number(key, plural.by, slots)) == "one" else plural.other
        said = {name: self.join(v) if isinstance(v, list | tuple) else v for name, v in slots.items()}
        try:
            return text.format(**said)
        except (KeyError, IndexError) as exc:
            raise CatalogError(f"{self.source}: phrase '{key}' needs slot {exc}") from None

    def _number(self, key: str, by: str, slots: Mapping[str, Any]) -> int:
        if by not in slots:
            raise CatalogError(f"{self.source}: phrase '{key}' needs slot '{by}'")
        value = slots[by]
        if isinstance(value, list | tuple):
            return len(value)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        # A list already joined into a string ("Bob and Carol") has lost its count.
        raise CatalogError(f"{self.source}: phrase '{key}' counts slot '{by}', which must be a number or a list, "
                           f"not {value!r}")

    @staticmethod
    def form(n: int) -> str:
        """ "one" for 1, "other" for any other number. (French puts 0 in the singular too, but its one forms
        spell the number, "une seconde", so "0 secondes" keeps the other form.)"""
        return "one" if n == 1 else "other"

    def count(self, word: str, n: int) -> str:
        """ "1 hostage" / "2 hostages"."""
        forms = self.counts.get(word)
        if forms is None:
            raise CatalogError(f"{self.source}: no count forms for '{word}'")
        return forms[self.form(n)].format(n=n)

    def duration(self, seconds: float) -> str:
        """ "2 minutes 13 seconds", rounded up to the second (never promise time that is gone)."""
        total = max(0, math.ceil(seconds - 1e-6))
        minutes, secs = divmod(total, 60)
        if minutes and secs:
            return self.render(
                "duration.both", minutes=self.count("minute", minutes), seconds=self.count("second", secs)
            )
        if minutes:
            return self.count("minute", minutes)
        return self.count("second", secs)

    def join(self, items: Sequence[str]) -> str:
        """ "Bob", "Bob and Carol", "Bob, Carol and Dave"; an empty list is "nobody"."""
        if not items:
            return self.render("list.none")
        if len(items) == 1:
            return items[0]
        return self.render("list.last", rest=self.render("list.sep").join(items[:-1]), last=items[-1])


def _plural(value: dict[Any, Any]) -> Plural:
    """A phrase's plural forms: ``{by: slot, one: "...", other: "..."}``, both forms with the same slots."""
    if set(map(str, value)) != {"by", *FORMS}:
        raise CatalogError("plural forms need exactly 'by' (the slot that counts), 'one' and 'other'")
    plural = Plural(str(value["by"]), str(value["one"]), str(value["other"]))
    if slots_of(plural.one) != slots_of(plural.other):
        raise CatalogError("the 'one' and 'other' forms must use the same slots")
    if plural.by not in slots_of(plural.other):
        raise CatalogError(f"counts slot '{plural.by}', which its forms do not use")
    return plural


def load_catalog(lang: str = "en") -> Catalog:
    """Load ``voices/<lang>.yaml``; an unknown language lists the available ones."""
    path = VOICES / f"{lang}.yaml"
    if not path.exists():
        have = sorted(p.stem for p in VOICES.glob("*.yaml"))
        raise CatalogError(f"no phrase catalogue for language '{lang}'; available: {', '.join(have)}")
    return Catalog.from_file(path)
