"""The rules of Two Rooms and a Boom as data: hostage tables, decks, round timings, the game plan."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from moderator import yamlio
from moderator.errors import RulesError
from moderator.game import catalogue
from moderator.game.deck import Recipe, build
from moderator.limits import ROUND_MAX_SECONDS, ROUND_MIN_SECONDS
from moderator.settings import GameOptions

TABLES_FILE = Path(__file__).with_name("tables.yaml")
HOSTAGE_TABLES = ("current", "2014")
MIN_PLAYERS = 6
MAX_PLAYERS = 30
ROUND_COUNTS = (3, 5)
#: Five rounds and colour share both need "more than 10 players".
FIVE_ROUNDS_MIN_PLAYERS = 11
COLOR_SHARE_MIN_PLAYERS = 11
DEFAULT_SECONDS = {3: (180, 120, 60), 5: (300, 240, 180, 120, 60)}
#: Card ids in the order a deck lists them.
CARDS = ("president", "bomber", "presidents_daughter", "martyr", "gambler", "blue_team", "red_team")

_SECTIONS = {"three_rounds": 3, "five_rounds": 5}
_FIRST_ROW = {3: MIN_PLAYERS, 5: FIVE_ROUNDS_MIN_PLAYERS}
_RANGE = re.compile(r"^(\d+)(?:-(\d+)|(\+))$")


@dataclass(frozen=True)
class RoundSpec:
    """One round of a game."""

    round: int
    """1-based round number."""
    seconds: int | None
    """Length of the round; None in the no-timer variant."""
    hostages: int
    """Hostages each room's leader sends at the end of the round."""


@dataclass(frozen=True)
class GamePlan:
    """Everything fixed before the cards are dealt."""

    players: int
    rounds: tuple[RoundSpec, ...]
    deck: Mapping[str, int] = field(hash=False)
    """Card id -> count, zero counts omitted; read-only."""
    color_share: bool
    """Colour share and colour reveal are allowed (more than 10 players)."""
    buried: int
    """Cards dealt to nobody: 0 or 1."""
    hostage_table: str
    """Which edition's hostage table: "current" or "2014"."""
    givesy_backsies: str = "en"
    """Which edition's "no givesy-backsies": ``en`` (the new leader cannot hand it straight back) or ``fr`` (whoever
    handed it over cannot lead again this round, by any route)."""
    preset: str | None = None
    """The advanced game's preset (``presets.yaml``), if the deck comes from one."""
    characters: tuple[str, ...] = ()
    """The advanced game's characters added to the President, the Bomber and the team cards."""

    @property
    def has_gambler(self) -> bool:
        """True when the Gambler is in the deck (and so reveals first)."""
        return self.deck.get("gambler", 0) > 0

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GamePlan:
        """The plan ``to_dict`` gave (as a saved game holds it)."""
        return cls(players=data["players"], rounds=tuple(RoundSpec(**r) for r in data["rounds"]),
                   deck=dict(data["deck"]), color_share=data["color_share"], buried=data["buried"],
                   hostage_table=data["hostage_table"], givesy_backsies=data.get("givesy_backsies", "en"),
                   preset=data.get("preset"), characters=tuple(data.get("characters", ())))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the plan."""
        return {
            "players": self.players,
            "rounds": [{"round": r.round, "seconds": r.seconds, "hostages": r.hostages} for r in self.rounds],
            "deck": dict(self.deck),
            "color_share": self.color_share,
            "buried": self.buried,
            "hostage_table": self.hostage_table,
            "givesy_backsies": self.givesy_backsies,
            "preset": self.preset,
            "characters": list(self.characters),
        }


@dataclass(frozen=True)
class _Row:
    low: int
    high: int | None
    hostages: tuple[int, ...]


HostageTables = dict[str, dict[int, tuple[_Row, ...]]]


def load_tables(path: Path = TABLES_FILE) -> HostageTables:
    """Load and check the hostage tables file; any fault raises RulesError naming the file."""
    return parse_tables(yamlio.load_file(path, error=RulesError), source=str(path))


def parse_tables(data: Any, *, source: str) -> HostageTables:
    """Check parsed YAML and turn it into table name -> round count -> rows."""
    if not isinstance(data, dict):
        raise RulesError(f"{source}: expected a mapping of hostage tables {', '.join(HOSTAGE_TABLES)}")
    named = {str(name): sections for name, sections in data.items()}
    tables: HostageTables = {}
    for name in HOSTAGE_TABLES:
        sections = named.get(name)
        if not isinstance(sections, dict) or set(sections) != set(_SECTIONS):
            raise RulesError(f"{source}: table {name!r} needs exactly the sections {', '.join(_SECTIONS)}")
        tables[name] = {
            rounds: _parse_rows(sections[key], rounds, f"{source}: {name}.{key}") for key, rounds in _SECTIONS.items()
        }
    return tables


def _parse_rows(rows: Any, rounds: int, where: str) -> tuple[_Row, ...]:
    if not isinstance(rows, dict) or not rows:
        raise RulesError(f"{where}: expected rows like '6-10: [1, 1, 1]'")
    parsed: list[_Row] = []
    expected_low = _FIRST_ROW[rounds]
    for key, hostages in rows.items():
        match = _RANGE.match(str(key))
        if match is None:
            raise RulesError(f"{where}: row {key!r} must be a range like '11-21' or '22+'")
        low, high = int(match[1]), None if match[3] else int(match[2])
        # Rows must tile the player counts so every count finds exactly one row.
        if low != expected_low or (high is not None and high < low) or (parsed and parsed[-1].high is None):
            raise RulesError(f"{where}: row {key!r} should start at {expected_low} and follow the previous row")
        if (
            not isinstance(hostages, list)
            or len(hostages) != rounds
            or not all(isinstance(h, int) and not isinstance(h, bool) and h > 0 for h in hostages)
        ):
            raise RulesError(f"{where}: row {key!r} needs {rounds} positive hostage counts")
        parsed.append(_Row(low, high, tuple(hostages)))
        expected_low = (high or low) + 1
    if parsed[-1].high is not None:
        raise RulesError(f"{where}: the last row must be open-ended, like '22+'")
    return tuple(parsed)


@cache
def _default_tables() -> HostageTables:
    return load_tables(TABLES_FILE)


def hostages_for(players: int, rounds: int, hostage_table: str = "current") -> tuple[int, ...]:
    """Hostages per room for each round, from the named table."""
    if hostage_table not in HOSTAGE_TABLES:
        raise RulesError(f"unknown hostage table {hostage_table!r}: choose {' or '.join(HOSTAGE_TABLES)}")
    if rounds not in ROUND_COUNTS:
        raise RulesError(f"{rounds} rounds is not allowed: play 3 rounds, or 5 with more than 10 players")
    for row in _default_tables()[hostage_table][rounds]:
        if row.low <= players and (row.high is None or players <= row.high):
            return row.hostages
    raise RulesError(f"{rounds} rounds need more than {_FIRST_ROW[rounds] - 1} players")


def make_deck(players: int, *, bury: bool = False) -> dict[str, int]:
    """The basic deck (or the burying deck, one card larger) as card id -> count."""
    size = players + 1 if bury else players
    counts = {"president": 1, "bomber": 1}
    if bury:
        counts |= {"presidents_daughter": 1, "martyr": 1}
    if size % 2:
        counts["gambler"] = 1
    team = (size - sum(counts.values())) // 2
    counts |= {"blue_team": team, "red_team": team}
    return {card: counts[card] for card in CARDS if counts.get(card)}


#: The editions' readings of "no givesy-backsies" (docs/decisions.md): ``en``, the 2014 English rulebook (the new
#: leader cannot hand the leadership straight back this round), and ``fr``, the newer French edition (whoever handed
#: it over cannot become leader again this round, by any route: no usurp vote or offer for them either).
GIVESY_BACKSIES = ("en", "fr")


def make_plan(
    players: int,
    *,
    rounds: int = 3,
    bury: bool = False,
    hostage_table: str = "current",
    round_seconds: int | None = None,
    durations: Sequence[int] | None = None,
    no_timer: bool = False,
    force: bool = False,
    givesy_backsies: str = "en",
    preset: str | None = None,
    characters: Sequence[str] = (),
) -> GamePlan:
    """Plan a game: rounds with their timings and hostages, the deck, and what is allowed.

    Args:
        round_seconds: the "every round the same length" variant; hostage counts are unchanged.
        durations: custom round lengths in seconds, one per round.
        no_timer: rounds end when both leaders are ready.
        force: allow more than 30 players (the 22+ row applies).
        givesy_backsies: the edition's reading of "no givesy-backsies" (``GIVESY_BACKSIES``).
        preset, characters: the advanced game's deck (``moderator.game.deck``): a preset from the catalogue, or
            characters added to the basic cards. A preset that requires a buried card buries one.

    Raises:
        RulesError: the set-up is not allowed; the message says what is.
    """
    _check_players(players, force=force)
    if rounds not in ROUND_COUNTS:
        raise RulesError(f"{rounds} rounds is not allowed: play 3 rounds, or 5 with more than 10 players")
    if rounds == 5 and players < FIVE_ROUNDS_MIN_PLAYERS:
        raise RulesError(f"5 rounds need more than 10 players; with {players} players play 3 rounds")
    seconds = _round_seconds(rounds, round_seconds=round_seconds, durations=durations, no_timer=no_timer)
    if givesy_backsies not in GIVESY_BACKSIES:
        raise RulesError(f"unknown givesy-backsies rule {givesy_backsies!r}: choose {' or '.join(GIVESY_BACKSIES)}")
    recipe = Recipe(preset, tuple(characters))
    color_share = players >= COLOR_SHARE_MIN_PLAYERS
    if recipe.advanced:
        cat = catalogue.default()
        deck, bury = build(cat, recipe, players, bury=bury)
        # A tutorial may forbid colour share at any size, or allow it at any size (seeds/003).
        rule = cat.preset(preset).colour_share if preset else "default"
        color_share = {"forbidden": False, "allowed": True}.get(rule, color_share)
    else:
        deck = make_deck(players, bury=bury)
    # The character guide: Ambassadors do not count toward the player count (18 players with 2 play as 16).
    outside = sum(n for c, n in deck.items() if recipe.advanced and catalogue.outside_rooms(c))
    hostages = hostages_for(max(players - outside, MIN_PLAYERS), rounds, hostage_table)
    return GamePlan(
        players=players,
        rounds=tuple(RoundSpec(i + 1, s, h) for i, (s, h) in enumerate(zip(seconds, hostages, strict=True))),
        deck=MappingProxyType(deck),
        color_share=color_share,
        buried=1 if bury else 0,
        hostage_table=hostage_table,
        givesy_backsies=givesy_backsies,
        preset=preset,
        characters=tuple(characters),
    )


def _check_players(players: int, *, force: bool) -> None:
    needs = f"Two Rooms and a Boom needs {MIN_PLAYERS} to {MAX_PLAYERS} players"
    if players < MIN_PLAYERS:
        raise RulesError(f"{players} players is too few: {needs}")
    if players > MAX_PLAYERS and not force:
        raise RulesError(
            f"{players} players is too many: {needs}; use --force to play anyway (the 22+ hostage row applies)"
        )


def _round_seconds(
    rounds: int, *, round_seconds: int | None, durations: Sequence[int] | None, no_timer: bool
) -> tuple[int | None, ...]:
    if sum((round_seconds is not None, durations is not None, no_timer)) > 1:
        raise RulesError(
            "choose at most one timing variant: custom durations, the same length every round, or no timer"
        )
    if no_timer:
        return (None,) * rounds
    if round_seconds is not None:
        durations = (round_seconds,) * rounds
    if durations is None:
        return DEFAULT_SECONDS[rounds]
    if len(durations) != rounds:
        example = ",".join(str(s) for s in DEFAULT_SECONDS[rounds])
        raise RulesError(f"{rounds} rounds need {rounds} durations, got {len(durations)} (for example {example})")
    if not all(s >= ROUND_MIN_SECONDS for s in durations):  # written so that NaN is refused too
        raise RulesError(f"round durations must be positive numbers of seconds (at least {ROUND_MIN_SECONDS}), "
                         f"got {list(durations)}")
    if any(s > ROUND_MAX_SECONDS for s in durations):
        raise RulesError(f"a round lasts at most {ROUND_MAX_SECONDS} seconds, got {list(durations)}")
    return tuple(int(s) for s in durations)


def split_rooms(players: Sequence[str], rng: random.Random) -> tuple[list[str], list[str]]:
    """Split players at random into two rooms as even as possible; with an odd count either may be larger."""
    shuffled = list(players)
    rng.shuffle(shuffled)
    # Which room gets the extra player is random too, not always the first.
    cut = len(shuffled) // 2 + (len(shuffled) % 2 if rng.random() < 0.5 else 0)
    return shuffled[:cut], shuffled[cut:]


def plan_for(players: int, options: GameOptions) -> GamePlan:
    """The plan for a player count under the set-up options of ``play``/``simulate``."""
    return make_plan(
        players,
        rounds=options.rounds,
        bury=options.bury,
        hostage_table=options.hostage_table,
        round_seconds=options.round_seconds,
        durations=options.durations,
        no_timer=options.no_timer,
        force=options.force,
        givesy_backsies=options.givesy_backsies,
        preset=options.preset,
        characters=options.characters,
    )
