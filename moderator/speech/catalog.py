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


def slots_of(text: str) -> set[str]:
    """The ``{slot}`` names a phrase uses."""
    try:
        return {name for _, name, _, _ in _FORMATTER.parse(text) if name}
    except ValueError as exc:
        raise CatalogError(f"bad phrase {text!r}: {exc}") from exc


@dataclass(frozen=True)
class Catalog:
    """Phrases of one language, with the number, list and duration forms they need."""

    lang: str
    phrases: Mapping[str, str]
    counts: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    voice: Mapping[str, Any] = field(default_factory=dict)
    source: str = "<data>"

    @classmethod
    def from_file(cls, path: Path) -> Catalog:
        """Read ``voices/<lang>.yaml``."""
        return cls.from_dict(yamlio.load_file(path, error=CatalogError), source=str(path))

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<data>") -> Catalog:
        """Validate parsed YAML; errors name the file and the key."""
        if not isinstance(data, dict) or not isinstance(data.get("phrases"), dict):
            raise CatalogError(f"{source}: expected a mapping with 'lang' and 'phrases'")
        phrases = {str(k): str(v) for k, v in data["phrases"].items()}
        for key, text in phrases.items():
            try:
                slots_of(text)
            except CatalogError as exc:
                raise CatalogError(f"{source}: phrase '{key}': {exc}") from exc
        counts = {str(k): {str(f): str(t) for f, t in v.items()} for k, v in (data.get("counts") or {}).items()}
        for word, forms in counts.items():
            if "one" not in forms or "other" not in forms:
                raise CatalogError(f"{source}: count '{word}' needs 'one' and 'other' forms")
        return cls(str(data.get("lang", "?")), phrases, counts, dict(data.get("voice") or {}), source)

    def render(self, key: str, /, **slots: Any) -> str:
        """The phrase ``key`` with its slots filled."""
        try:
            text = self.phrases[key]
        except KeyError:
            raise CatalogError(f"{self.source}: no phrase '{key}'") from None
        try:
            return text.format(**slots)
        except (KeyError, IndexError) as exc:
            raise CatalogError(f"{self.source}: phrase '{key}' needs slot {exc}") from None

    def count(self, word: str, n: int) -> str:
        """ "1 hostage" / "2 hostages"."""
        forms = self.counts.get(word)
        if forms is None:
            raise CatalogError(f"{self.source}: no count forms for '{word}'")
        return forms["one" if n == 1 else "other"].format(n=n)

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


def load_catalog(lang: str = "en") -> Catalog:
    """Load ``voices/<lang>.yaml``; an unknown language lists the available ones."""
    path = VOICES / f"{lang}.yaml"
    if not path.exists():
        have = sorted(p.stem for p in VOICES.glob("*.yaml"))
        raise CatalogError(f"no phrase catalogue for language '{lang}'; available: {', '.join(have)}")
    return Catalog.from_file(path)
