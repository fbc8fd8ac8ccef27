"""The advanced game on the command line: ``moderator presets`` (and ``--cards``), ``plan``/``play`` with
``--preset`` or ``--characters``, their refusals, and how ``plan`` shows an advanced deck."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from moderator import cli
from moderator.env import Environment
from moderator.errors import ExitStatus
from moderator.game import card_text, catalogue
from moderator.game.rules import make_plan

Run = Callable[..., tuple[int, str, str]]
CAT = catalogue.default()


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch) -> Run:
    """Run the real CLI in-process with ``plan`` and ``presets`` registered; return (status, stdout, stderr)."""
    monkeypatch.setattr(cli, "COMMANDS", ("plan", "presets"))

    def call(*argv: str) -> tuple[int, str, str]:
        env = Environment(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
        status = cli.main(list(argv), env=env)
        return status, env.stdout.getvalue(), env.stderr.getvalue()

    return call


def ok_json(run: Run, *argv: str) -> dict:
    status, out, err = run(*argv, "--json")
    assert (status, err) == (0, "")
    assert out.count("\n") == 1, "one JSON object on one line"
    return json.loads(out)


def line_of(out: str, start: str) -> str:
    """The one line of ``out`` that starts (after its indent) with ``start``."""
    lines = [line for line in out.splitlines() if line.strip().startswith(start + " ")]
    assert len(lines) == 1, (start, out)
    return lines[0]


# --- moderator presets ----------------------------------------------------------------------------------------------


def test_presets_lists_every_preset_with_its_players_and_whether_it_is_ready(run: Run) -> None:
    status, out, err = run("presets")
    assert (status, err) == (0, "")
    ready = [p for p in CAT.presets.values() if not p.unsupported]
    assert out.splitlines()[0].startswith(f"{len(CAT.presets)} presets, {len(ready)} ready.")
    for preset in CAT.presets.values():
        line = line_of(out, preset.id)
        assert preset.name in line
        assert line.endswith("ready") == (not preset.unsupported), line
    standard = line_of(out, "the_standard")
    assert "The Standard" in standard and "7-30 players" in standard and standard.endswith("ready")
    assert "6 players " in line_of(out, "six_player_mystery")  # a range of one count


def test_an_unsupported_preset_names_its_cards_and_why(run: Run) -> None:
    _, out, _ = run("presets")
    line = line_of(out, "sudden_death_card_sharing")
    assert line.endswith("not supported: Dr. Boom and Tuesday Knight")
    below = out.splitlines()[out.splitlines().index(line) + 1:][:2]
    assert below[0].strip().startswith("Dr. Boom: ") and CAT.cards["dr_boom"].unsupported in below[0]
    assert below[1].strip().startswith("Tuesday Knight: ") and CAT.cards["tuesday_knight"].unsupported in below[1]


def test_presets_json_is_one_object_with_every_preset(run: Run) -> None:
    data = ok_json(run, "presets")
    assert list(data) == ["presets"]
    by_id = {p["id"]: p for p in data["presets"]}
    assert list(by_id) == list(CAT.presets)
    standard = by_id["the_standard"]
    assert (standard["name"], standard["players"], standard["ready"], standard["unsupported"]) == (
        "The Standard", [7, 30], True, [])
    assert standard["cards"] == ["president", "bomber", "presidents_daughter", "martyr", "doctor", "engineer"]
    assert standard["when_burying"] == ["nurse", "tinkerer"]
    sudden = by_id["sudden_death_card_sharing"]
    assert sudden["ready"] is False
    assert [(u["card"], u["name"]) for u in sudden["unsupported"]] == [("dr_boom", "Dr. Boom"),
                                                                        ("tuesday_knight", "Tuesday Knight")]
    assert all(u["why"] for u in sudden["unsupported"])
    for preset in data["presets"]:
        assert preset["ready"] is (preset["unsupported"] == [])


def test_presets_cards_lists_every_card_with_its_team_and_support(run: Run) -> None:
    status, out, err = run("presets", "--cards")
    assert (status, err) == (0, "")
    supported = [c for c in CAT.cards.values() if not c.unsupported]
    assert out.splitlines()[0].startswith(f"{len(CAT.cards)} cards, {len(supported)} supported.")
    doctor = line_of(out, "doctor")
    assert "Doctor" in doctor and "Blue" in doctor and doctor.endswith("supported")
    assert "Blue (shows Red)" in line_of(out, "blue_spy")
    zombie = line_of(out, "zombie")
    assert "Green" in zombie and f"not supported: {CAT.cards['zombie'].unsupported}" in zombie


def test_presets_cards_json(run: Run) -> None:
    data = ok_json(run, "presets", "--cards")
    by_id = {c["id"]: c for c in data["cards"]}
    assert list(by_id) == list(CAT.cards)
    assert by_id["president"] == {
        "id": "president", "name": "President", "team": "blue", "shows": None, "supported": True, "why": None,
        "backup": "presidents_daughter", "linked": []}
    assert (by_id["red_spy"]["team"], by_id["red_spy"]["shows"]) == ("red", "blue")
    assert by_id["sniper"]["linked"] == ["sniper", "target", "decoy"]
    assert by_id["hot_potato"]["supported"] is False and by_id["hot_potato"]["why"]


# --- plan --preset / --characters -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("preset", "players", "buried"), [
    ("the_standard", 7, 1),     # odd: the preset buries a card to even it out, adding the Nurse and the Tinkerer
    ("the_standard", 30, 0),
    ("acting_auditions", 10, 0),
    ("acting_auditions", 25, 0),  # odd: the MI6 evens it out
])
def test_plan_with_a_preset_at_its_smallest_and_largest_counts(run: Run, preset: str, players: int,
                                                               buried: int) -> None:
    data = ok_json(run, "plan", "--preset", preset, "--players", str(players))
    assert data == make_plan(players, preset=preset).to_dict()
    assert (data["preset"], data["players"], data["buried"]) == (preset, players, buried)
    deck = data["deck"]
    assert sum(deck.values()) == players + buried
    assert set(CAT.presets[preset].cards) <= set(deck)
    assert deck.get("blue_team", 0) == deck.get("red_team", 0)
    if preset == "the_standard":
        assert ("nurse" in deck, "tinkerer" in deck) == (bool(buried), bool(buried))
    else:
        assert ("mi6" in deck) == (players % 2 == 1)


def test_plan_shows_a_presets_deck_from_the_catalogue(run: Run) -> None:
    status, out, err = run("plan", "--preset", "the_standard", "--players", "9")
    assert (status, err) == (0, "")
    assert "Preset: The Standard (the_standard, 7 to 30 players)" in out
    for name in ("President's Daughter", "Doctor", "Engineer", "Nurse", "Tinkerer"):
        assert name in out
    assert "Doctor (Blue): Wins with the Blue team; unless the President card-shares with it, Red wins." in out
    assert "Engineer (Red): Wins with the Red team; unless the Bomber card-shares with it, Blue wins." in out
    assert ("When a card is buried, its backup takes over: the President's Daughter for the President, the "
            "Martyr for the Bomber, the Nurse for the Doctor and the Tinkerer for the Engineer.") in out
    assert "Buried cards: 1. Shuffle the 10 cards" in out


def test_plan_shows_linked_cards_and_how_to_bury_around_them(run: Run) -> None:
    status, out, err = run("plan", "--preset", "grey_ceremony", "--players", "10", "--bury")
    assert (status, err) == (0, "")
    assert "Sniper, Target and Decoy are linked: set them aside before burying, then shuffle them back." in out
    assert "Set the 3 linked cards aside, shuffle the other 8, set 1 aside" in out
    assert "Intern (Grey): Ends in the President's room." in out
    assert "Sniper (Grey): Shoots the Target; the moderator asks at the reveal whom it shot." in out
    _, unburied, _ = run("plan", "--preset", "grey_ceremony", "--players", "9")
    assert "Sniper, Target and Decoy are linked: they only work together" in unburied
    assert "When a card is buried" not in unburied


def test_plan_with_characters(run: Run) -> None:
    data = ok_json(run, "plan", "--characters", "doctor, engineer", "--players", "10")
    assert data["characters"] == ["doctor", "engineer"] and data["preset"] is None
    assert data["deck"] == {"president": 1, "bomber": 1, "doctor": 1, "engineer": 1, "blue_team": 3, "red_team": 3}
    buried = ok_json(run, "plan", "--characters", "doctor,engineer", "--players", "10", "--bury")
    assert {"presidents_daughter", "martyr", "nurse", "tinkerer"} <= set(buried["deck"])
    status, out, _ = run("plan", "--characters", "blue_spy,red_spy,intern", "--players", "11")
    assert status == 0
    assert "Characters: Blue Spy, Red Spy and Intern, with the President, the Bomber and the team cards" in out
    assert "Blue Spy (Blue (shows Red)): Wins with the Blue team." in out


def test_the_basic_plan_says_nothing_of_presets(run: Run) -> None:
    _, out, _ = run("plan", "--players", "9")
    assert "Preset:" not in out and "What the cards do" not in out and "linked" not in out


@pytest.mark.parametrize(("argv", "status", "message"), [
    (["--preset", "the_standard", "--players", "6"], 1, "the preset 'The Standard' is for 7 to 30 players, not 6"),
    (["--preset", "acting_auditions", "--players", "26"], 1, "is for 10 to 25 players, not 26"),
    (["--preset", "no_such_preset", "--players", "9"], 1,
     "unknown preset 'no_such_preset'; `moderator presets` lists them"),
    (["--preset", "sudden_death_card_sharing", "--players", "9"], 1,
     "the preset 'Sudden Death Card Sharing' needs cards the moderator does not support: Dr. Boom ("),
    (["--characters", "no_such_card", "--players", "9"], 1, "unknown card 'no_such_card'"),
    (["--characters", "zombie", "--players", "9"], 1, "the Zombie card is not supported"),
    (["--preset", "the_standard", "--characters", "doctor", "--players", "9"], 2,
     "--preset and --characters do not go together"),
    (["--characters", "doctor,,engineer", "--players", "9"], 2, "--characters takes card ids separated by commas"),
    (["--characters", "doctor,doctor", "--players", "9"], 2, "--characters names doctor twice"),
])
def test_refusals_are_one_line(run: Run, argv: list[str], status: int, message: str) -> None:
    got, out, err = run("plan", *argv)
    assert got == status, err
    assert out == ""
    assert err.startswith("moderator: error: ") and message in err
    assert err.count("\n") == 1, err


def test_an_unsupported_preset_names_every_missing_card(run: Run) -> None:
    _, _, err = run("plan", "--preset", "sudden_death_card_sharing", "--players", "9")
    assert "Dr. Boom (" in err and "Tuesday Knight (" in err


# --- play --preset --------------------------------------------------------------------------------------------------


def test_play_takes_a_preset_and_refuses_an_unknown_one_before_saving(tmp_path: Path) -> None:
    players = "Alice,Bob,Carol,Dave,Erin,Frank,Grace,Heidi,Ivan"
    state = tmp_path / "g.json"
    env = Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())
    assert cli.main(["play", "--players", players, "--preset", "nope", "--state", str(state)], env) == 1
    assert "unknown preset 'nope'" in env.stderr.getvalue() and not state.exists()
    env = Environment(stdin=io.StringIO("quit\n"), stdout=io.StringIO(), stderr=io.StringIO())
    status = cli.main(["play", "--players", players, "--preset", "the_standard", "--state", str(state)], env)
    assert status == ExitStatus.OK, env.stderr.getvalue()
    assert "shuffle the 10 cards" in env.stdout.getvalue()  # the preset buries a card with 9 players
    assert "doctor" in state.read_text()


# --- card_text: objectives in words ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("obj", "me", "said"), [
    ({"with": "president"}, "intern", "ends in the President's room"),
    ({"away_from": "bomber"}, "survivor", "ends in the room without the Bomber"),
    ({"with_each_other": ["romeo", "juliet", "bomber"]}, "romeo", "ends in one room with Juliet and the Bomber"),
    ({"all": [{"with_each_other": ["moby", "bomber"]}, {"away_from": "bomber"}]}, "ahab",
     "Moby and the Bomber end in one room and it ends in the room without the Bomber"),
    ({"not": {"shot_by": "sniper"}}, "target", "is not shot by the Sniper"),
    ({"any": [{"team": "red"}, {"never_hostage": True}]}, "x",
     "either wins with the Red team or is never sent as a hostage"),
    ({"shared": ["mi6", "bomber"]}, "mi6", "card-shares with the Bomber"),
    ({"not": {"with": "president"}}, "x", "ends in the room without the President"),
])
def test_objectives_in_words(obj: dict, me: str, said: str) -> None:
    assert card_text.objective(CAT, obj, me) == said


def test_a_winner_rule_in_words() -> None:
    doctor = CAT.cards["doctor"]
    assert card_text.winner_rule(CAT, doctor.winner_rules[0], "doctor") == \
        "unless the President card-shares with it, Red wins"
    assert card_text.winner_rule(CAT, {"unless": {"with": "bomber"}, "winner": "blue"}, "x") == \
        "unless it ends in the Bomber's room, Blue wins"


def test_every_supported_card_can_be_said() -> None:
    for card in CAT.cards.values():
        if not card.unsupported:
            text = card_text.what_it_does(CAT, card)
            said = text.removesuffix(f" {card.power_note.strip()}") if card.power_note else text
            assert said[0].isupper() and said.endswith(".") and "{" not in said and "'" not in said[:2], text
            if card.power_note:
                assert said != text, "the note follows what the card needs to win"
