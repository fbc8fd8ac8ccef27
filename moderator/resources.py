"""Where the project's data directories (grammars, voices, statecharts, scenarios) live.

In the repository they are top-level folders; a wheel carries them inside the package as ``moderator/data/``
(``pyproject.toml`` maps each folder there). They are found with ``importlib.resources``, so an installed
package never looks outside itself, and a checkout (or an editable install) uses the folders themselves.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

#: The checkout's root (in an installed wheel, a folder that holds no data).
ROOT = Path(__file__).resolve().parent.parent


def data_dir(name: str) -> Path:
    """The data folder ``name``: the packaged copy in a wheel, else the repository's top-level folder."""
    packaged = files("moderator").joinpath("data", name)
    if packaged.is_dir():
        return Path(str(packaged))
    return ROOT / name


GRAMMARS = data_dir("grammars")
VOICES = data_dir("voices")
STATECHARTS = data_dir("statecharts")
SCENARIOS = data_dir("scenarios")
