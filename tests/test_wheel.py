"""The package as a host installs it: a wheel built from this checkout, installed into a fresh virtualenv, and
run from a folder far from the source tree, so nothing can be found by accident in the checkout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``bin`` folder of a fresh virtualenv with the wheel installed (its dependencies from the index, as
    ``pip install`` gets them)."""
    base = tmp_path_factory.mktemp("wheel")
    dist = base / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
                   check=True, capture_output=True, timeout=600)
    [wheel] = dist.glob("moderator-*.whl")
    env_dir = base / "venv"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    done = subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", str(wheel)],
                          capture_output=True, text=True, timeout=900, env=outside())
    assert done.returncode == 0, done.stderr
    return bin_dir


def outside() -> dict[str, str]:
    """The environment without PYTHONPATH: a checkout on it (with its moderator.egg-info) would pass for the
    installed package, to pip and to Python."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def run(bin_dir: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(bin_dir / "moderator"), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=outside())


def test_the_installed_wheel_carries_its_data_and_runs_every_offline_command(installed: Path,
                                                                            tmp_path: Path) -> None:
    where = run(installed, tmp_path, "--help")
    assert where.returncode == 0, where.stderr
    located = subprocess.run([str(installed / "python"), "-c", "import moderator, sys; print(moderator.__file__)"],
                             cwd=tmp_path, capture_output=True, text=True, check=True, env=outside()).stdout
    assert str(ROOT) not in located, "the wheel's own package, not the checkout"

    plan = run(installed, tmp_path, "plan", "--players", "8")
    assert plan.returncode == 0 and "Shuffle the 8 cards" in plan.stdout, plan.stderr

    out = tmp_path / "demo"
    demo = run(installed, tmp_path, "demo", "--quiet", "--audio-out", str(out), "--cache-dir", str(tmp_path / "c"))
    assert demo.returncode == 0, demo.stderr
    assert {p.name for p in out.iterdir()} >= {"roomA.wav", "roomB.wav", "events.jsonl", "timeline.json"}
    assert (out / "roomA.wav").stat().st_size > 100_000, "the moderator's voice, rendered, not silence"

    events = tmp_path / "events.jsonl"
    simulate = run(installed, tmp_path, "simulate", "eight_players", "--quiet", "--events", str(events))
    assert simulate.returncode == 0, simulate.stderr
    assert "result" in [json.loads(line)["type"] for line in events.read_text().splitlines()], "played to the end"

    heard = run(installed, tmp_path, "recognize", "--text", "hostages Bob and Carol", "--players",
                "Alice,Bob,Carol,Dave,Erin,Frank,Grace,Heidi", "--json")
    assert heard.returncode == 0, heard.stderr
    assert json.loads(heard.stdout)["intent"] == "hostages"

    diagram = run(installed, tmp_path, "diagram")
    assert diagram.returncode == 0 and "stateDiagram" in diagram.stdout, diagram.stderr

    # The web panel's pages come with the package (play --web serves nothing from anywhere else).
    assets = subprocess.run([str(installed / "python"), "-c", "from moderator.web.server import ASSETS, asset; "
                             "print(sum(len(asset(name)) for name in ASSETS))"],
                            cwd=tmp_path, capture_output=True, text=True, env=outside())
    assert assets.returncode == 0 and int(assets.stdout) > 5000, assets.stderr
