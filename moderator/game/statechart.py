"""Load a statechart YAML file into ``transitions`` and render it as a Mermaid diagram."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from transitions import MachineError
from transitions.extensions import HierarchicalMachine
from transitions.extensions.nesting import NestedState

from moderator import yamlio
from moderator.errors import StatechartError
from moderator.resources import STATECHARTS

SEP = "."
#: Every game's statechart (``statecharts/<name>.yaml``).
CHARTS = ("two_rooms", "room25")


class _State(NestedState):
    # Our state names contain "_" (game_over), transitions' default separator.
    separator = SEP


class _Machine(HierarchicalMachine):
    state_cls = _State


@dataclass(frozen=True)
class Statechart:
    """A validated statechart: states, transitions, and the intent → trigger map."""

    name: str
    initial: str
    states: list[dict[str, Any]]
    transitions: list[dict[str, Any]]
    intents: dict[str, str]
    automatic: tuple[str, ...]
    source: str = field(default="<data>", compare=False)

    @classmethod
    def from_file(cls, path: Path) -> Statechart:
        """Read a statechart file."""
        return cls.from_dict(yamlio.load_file(path, error=StatechartError), source=str(path))

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<data>") -> Statechart:
        """Validate parsed YAML; errors name the source and the offending entry."""
        if not isinstance(data, dict):
            raise StatechartError(f"{source}: expected a mapping at the top level")
        for key in ("name", "initial", "states", "transitions", "intents"):
            if key not in data:
                raise StatechartError(f"{source}: missing '{key}'")
        chart = cls(
            name=str(data["name"]),
            initial=str(data["initial"]),
            states=list(data["states"]),
            transitions=[dict(t) for t in data["transitions"]],
            intents={str(k): str(v) for k, v in data["intents"].items()},
            automatic=tuple(data.get("automatic", ())),
            source=source,
        )
        chart._check()
        return chart

    def _check(self) -> None:
        names = set(self.state_names())
        for t in self.transitions:
            if "trigger" not in t or "source" not in t or "dest" not in t:
                raise StatechartError(f"{self.source}: transition {t} needs trigger, source and dest")
            for s in [*_sources(t), t["dest"]]:
                if s not in (None, "*") and s not in names:
                    raise StatechartError(f"{self.source}: transition '{t['trigger']}' names unknown state '{s}'")
        triggers = self.triggers()
        for intent, trigger in self.intents.items():
            for room in ("A", "B"):
                if trigger.format(room=room) not in triggers:
                    raise StatechartError(f"{self.source}: intent '{intent}' maps to unknown trigger '{trigger}'")
        for trigger in self.automatic:
            if trigger not in triggers:
                raise StatechartError(f"{self.source}: automatic trigger '{trigger}' has no transition")

    def triggers(self) -> set[str]:
        """Every trigger name of the transitions."""
        return {str(t["trigger"]) for t in self.transitions}

    def state_names(self) -> list[str]:
        """Every state's full name, parents before children."""
        out: list[str] = []

        def walk(states: list[Any], prefix: str) -> None:
            for s in states:
                name = s if isinstance(s, str) else s["name"]
                full = prefix + name
                out.append(full)
                if isinstance(s, dict):
                    walk(s.get("children", []) or s.get("parallel", []), full + SEP)

        walk(self.states, "")
        return out

    def build(self, model: object, initial: str | list[str] | None = None) -> HierarchicalMachine:
        """Attach a machine to ``model``, optionally starting in a saved state."""
        machine = _Machine(
            model=model,
            states=_strip_docs(self.states),
            transitions=self.transitions,
            initial=self.initial,
            auto_transitions=False,
            model_attribute="state",
        )
        if initial is not None:
            try:
                machine.set_state(initial, model)
            except (ValueError, MachineError) as exc:
                raise StatechartError(f"cannot restore state {initial!r}: {exc}") from exc
        return machine

    def to_mermaid(self) -> str:
        """Render the chart as a Mermaid ``stateDiagram-v2``."""
        lines = ["stateDiagram-v2", f"    [*] --> {self.initial}"]

        def ident(full: str) -> str:
            return full.replace(SEP, "__")

        def walk(states: list[Any], prefix: str, indent: str) -> None:
            for s in states:
                if isinstance(s, str):
                    s = {"name": s}
                full = prefix + s["name"]
                kids = s.get("children") or s.get("parallel")
                if kids:
                    lines.append(f"{indent}state \"{s['name']}\" as {ident(full)} {{")
                    first = kids[0] if isinstance(kids[0], str) else kids[0]["name"]
                    lines.append(f"{indent}    [*] --> {ident(full + SEP + s.get('initial', first))}")
                    for i, kid in enumerate(kids):
                        if s.get("parallel") and i:
                            lines.append(f"{indent}    --")
                        walk([kid], full + SEP, indent + "    ")
                    lines.append(f"{indent}}}")
                else:
                    lines.append(f"{indent}state \"{s['name']}\" as {ident(full)}")
                if s.get("doc"):
                    lines.append(f"{indent}note right of {ident(full)}: {s['doc']}")

        walk(self.states, "", "    ")
        internal: dict[str, list[str]] = {}
        for t in self.transitions:
            for src in _sources(t):
                if t["dest"] is None:
                    internal.setdefault(src, []).append(t["trigger"])
                else:
                    guard = f" [{t['conditions']}]" if t.get("conditions") else ""
                    lines.append(f"    {ident(src)} --> {ident(t['dest'])}: {t['trigger']}{guard}")
        for src, triggers in internal.items():
            where = "any state" if src == "*" else src
            lines.append(f"    %% internal in {where}: {', '.join(triggers)}")
        return "\n".join(lines) + "\n"

    def to_markdown(self) -> str:
        """The committed diagram file: a Mermaid block with a do-not-edit header."""
        internal = [
            f"| `{t['trigger']}` | {', '.join(f'`{s}`' for s in _sources(t))} |"
            for t in self.transitions
            if t["dest"] is None
        ]
        return (
            f"# Statechart `{self.name}`\n\n"
            f"Generated from `{Path(self.source).name}` by `moderator diagram --write`; do not edit by hand.\n\n"
            f"```mermaid\n{self.to_mermaid()}```\n\n"
            "Internal transitions (the command is allowed there and changes only the game data):\n\n"
            "| trigger | allowed in |\n| --- | --- |\n" + "\n".join(internal) + "\n\n"
            "Intents map to triggers as follows (`{room}` is the room the command came from):\n\n"
            "| intent | trigger |\n| --- | --- |\n"
            + "\n".join(f"| `{i}` | `{t}` |" for i, t in self.intents.items())
            + "\n"
        )


def _sources(transition: dict[str, Any]) -> list[str]:
    source = transition["source"]
    return source if isinstance(source, list) else [source]


def _strip_docs(states: list[Any]) -> list[Any]:
    out: list[Any] = []
    for s in states:
        if isinstance(s, dict):
            s = {k: v for k, v in s.items() if k != "doc"}
            for key in ("children", "parallel"):
                if key in s:
                    s[key] = _strip_docs(s[key])
        out.append(s)
    return out


def load_statechart(name: str = "two_rooms") -> Statechart:
    """Load ``statecharts/<name>.yaml``."""
    return Statechart.from_file(STATECHARTS / f"{name}.yaml")


def diagram_path(name: str = "two_rooms") -> Path:
    """Where the committed diagram of ``statecharts/<name>.yaml`` lives."""
    return STATECHARTS / f"{name}.md"
