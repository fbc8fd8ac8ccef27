"""Compile the command grammar to JSGF, the grammar format of pocketsphinx (pure: no engine imports)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from moderator.speech.grammar import Grammar
from moderator.speech.template import Alt, Node, Opt, Seq, Slot, Word, normalize


def _spoken(phrase: str) -> list[str] | None:
    """The lowercase words of a phrase, or None when it holds digits (they cannot be spoken as written)."""
    words = [word.lower() for word in normalize(phrase)]
    return None if not words or any(ch.isdigit() for word in words for ch in word) else words


def _wanted(grammar: Grammar, intents: Iterable[str] | None) -> tuple[str, ...]:
    wanted = grammar.intents if intents is None else tuple(dict.fromkeys(intents))
    if missing := set(wanted) - set(grammar.intents):
        raise KeyError(f"no intent(s) {', '.join(sorted(missing))} in {grammar.source}")
    return wanted


def _slot_types(grammar: Grammar, wanted: Sequence[str]) -> list[str]:
    """The slot types the wanted intents use, in first-use order; ``players`` brings ``player``."""
    found: dict[str, None] = {}

    def walk(node: Node) -> None:
        if isinstance(node, Slot):
            if node.type == "players":
                found.setdefault("player")
            found.setdefault(node.type)
        elif isinstance(node, Seq):
            for item in node.items:
                walk(item)
        elif isinstance(node, Alt):
            for option in node.options:
                walk(option)
        elif isinstance(node, Opt):
            walk(node.inner)

    for intent in wanted:
        for tree in grammar.trees(intent):
            walk(tree)
    return list(found)


def _phrases(grammar: Grammar, roster: Sequence[str], slot_type: str) -> list[list[str]]:
    """The spoken word sequences a ``player`` or list slot may take, without duplicates."""
    source = roster if slot_type == "player" else [p for phrases in grammar.lists[slot_type].values() for p in phrases]
    unique = {tuple(words): None for words in map(_spoken, source) if words}
    return [list(words) for words in unique]


def _rule_name(name: str) -> str:
    return "<" + name.replace(":", "_") + ">"


def _expr(node: Node, void: frozenset[str] = frozenset()) -> str | None:
    """JSGF for one template node; slots refer to the rule named after their type.

    None means the node can produce nothing: it needs a slot type in ``void`` (such as
    ``player`` with an empty roster) or a literal with digits. Such alternatives are
    dropped, because pocketsphinx's ``<VOID>`` empties the whole grammar.
    """
    if isinstance(node, Word):
        spoken = _spoken(node.text)
        return " ".join(spoken) if spoken else None
    if isinstance(node, Slot):
        return None if node.type in void or (node.type == "players" and "player" in void) else _rule_name(node.type)
    if isinstance(node, Seq):
        parts = [_expr(item, void) for item in node.items]
        return None if any(part is None for part in parts) else " ".join(p for p in parts if p)
    if isinstance(node, Opt):
        inner = _expr(node.inner, void)
        return "" if inner is None else "[" + inner + "]"
    options = [e for e in (_expr(option, void) for option in node.options) if e is not None]
    return "(" + " | ".join(options) + ")" if options else None


def _players_rule(joiners: Sequence[str], max_listed: int) -> str:
    # JSGF has no bounded repeat, so the 1 to max_listed names nest as optionals.
    joined = " | ".join(" ".join(_spoken(j) or []) for j in joiners if _spoken(j))
    link = f"[{joined}] <player>" if joined else "<player>"
    tail = ""
    for _ in range(max_listed - 1):
        tail = f"[{link}{(' ' + tail) if tail else ''}]"
    return f"<player> {tail}".strip()


def to_jsgf(grammar: Grammar, roster: Sequence[str], intents: Iterable[str] | None = None) -> str:
    """A JSGF grammar accepting what ``grammar`` accepts for these intents (None: all) and roster.

    The top rule is ``public <command>``; each intent is a rule named after it, and
    each slot type a rule (``<player>``, ``<players>``, ``<number>``, ...). Words are
    lowercase, as in the pronunciation dictionary. Digits are left out, because only
    the spoken forms ("twenty one") can be heard. With an empty roster, the sentences
    that need a name are left out.

    Raises:
        KeyError: an intent is not in the grammar.
    """
    wanted = _wanted(grammar, intents)
    void = frozenset(t for t in _slot_types(grammar, wanted) if t != "players" and not _phrases(grammar, roster, t))
    bodies = {}
    for intent in wanted:
        options = [e for e in (_expr(tree, void) for tree in grammar.trees(intent)) if e is not None]
        if options:
            bodies[intent] = " | ".join(options)
    lines = ["#JSGF V1.0;", "", "grammar moderator;", ""]
    lines.append("public <command> = " + (" | ".join(_rule_name(i) for i in bodies) or "<VOID>") + ";")
    lines.append("")
    lines += [f"{_rule_name(intent)} = {body};" for intent, body in bodies.items()]
    lines.append("")
    for slot_type in _slot_types(grammar, wanted):
        if slot_type in void or (slot_type == "players" and "player" in void):
            continue
        if slot_type == "players":
            body = _players_rule(grammar.joiners, grammar.max_listed)
        else:
            body = " | ".join(" ".join(words) for words in _phrases(grammar, roster, slot_type))
        lines.append(f"{_rule_name(slot_type)} = {body};")
    return "\n".join(lines) + "\n"


def words(grammar: Grammar, roster: Sequence[str], intents: Iterable[str] | None = None) -> set[str]:
    """Every word the JSGF of ``to_jsgf(grammar, roster, intents)`` can produce (lowercase).

    The pronunciation dictionary must know each of them before the JSGF is loaded. They
    are read back from the JSGF itself, so the two cannot disagree.
    """
    found: set[str] = set()
    for line in to_jsgf(grammar, roster, intents).splitlines():
        if line.startswith("<") or line.startswith("public "):
            body = line.partition("=")[2]
            found.update(t for t in re.split(r"[\s()\[\]|;]+", body) if t and not t.startswith("<"))
    return found
