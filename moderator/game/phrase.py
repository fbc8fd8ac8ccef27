"""An announcement as a value: a phrase key and its slots, put into words only when it is said."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from moderator.speech.catalog import Catalog


@dataclass(frozen=True)
class Phrase:
    """Phrase ``key`` of the catalogue (``voices/<lang>.yaml``), with ``slots`` to fill it."""

    key: str
    slots: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def text(self, catalog: Catalog) -> str:
        """The words of this phrase in ``catalog``'s language."""
        return catalog.render(self.key, **self.slots)
