"""Acoustic models for the embedded recognizer: the pocketsphinx wheel's en-us ("default"), and "party", the same
model adapted to party noise (babble, music, the moderator's own voice, reverberation; issue 10), shipped here in
``party/en-us`` and built by scripts/build_party_model.py.

``acoustic_model`` turns a ``--acoustic-model`` value (but "auto", which is both) into what
``PocketsphinxRecognizer(model_dir=...)`` takes: a
directory holding ``en-us/`` and ``cmudict-en-us.dict``. A model may carry its own confidence calibration in
``en-us/calibration.json`` (``moderator.adapters.asr_pocketsphinx.read_calibration``); without one, the recognizer
uses the original model's.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from pathlib import Path

from moderator.errors import ModeratorError

PARTY = Path(__file__).resolve().parent / "party"
"""The shipped adapted model: ``party/en-us`` holds its files (the dictionary is the wheel's)."""
DICTIONARY = "cmudict-en-us.dict"
MODEL_FILES = ("mdef", "means", "variances", "transition_matrices", "sendump", "feat.params", "noisedict")
NAMES = ("auto", "default", "party")
AUTO = "auto"
"""Not a model: both, chosen per utterance by the room's level (``moderator.adapters.asr_by_noise``)."""


class AcousticModelError(ModeratorError):
    """An acoustic model that cannot be found or is incomplete."""


def _wheel_dictionary() -> Path:
    import pocketsphinx

    return Path(pocketsphinx.get_model_path()) / "en-us" / DICTIONARY


def missing_files(model: Path) -> list[str]:
    """The files of ``MODEL_FILES`` that the model directory ``model`` (an ``en-us/``) lacks. Its mixture weights may
    be packed (``sendump``, as the wheel's and the shipped models are) or not (``mixture_weights``: a continuous
    model, ``build_party_model.py --recipe continuous``); pocketsphinx reads either."""
    missing = [name for name in MODEL_FILES if not (model / name).is_file()]
    if "sendump" in missing and (model / "mixture_weights").is_file():
        missing.remove("sendump")
    return missing


def _check(root: Path, what: str) -> Path:
    """``root`` if it holds a whole model (``missing_files``) and the dictionary beside it."""
    missing = missing_files(root / "en-us")
    if not (root / "en-us").is_dir() or missing:
        raise AcousticModelError(f"{what} is not a pocketsphinx model directory: it needs en-us/ with "
                                 f"{', '.join(missing or MODEL_FILES)} (or mixture_weights for sendump), "
                                 f"and {DICTIONARY}")
    if not (root / DICTIONARY).is_file():
        raise AcousticModelError(f"{what} has no {DICTIONARY} beside its en-us/")
    return root


def _layout(model: Path, cache: Path | None = None) -> Path:
    """A directory with ``en-us`` -> ``model`` and the wheel's dictionary beside it (links, or copies where links
    cannot be made), in the user's cache: the package ships the model without a second 3 MB dictionary."""
    import platformdirs

    root = (cache or platformdirs.user_cache_path("moderator")) / "acoustic" / model.parent.name
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AcousticModelError(f"cannot lay out the {model.parent.name} acoustic model in the cache {root} "
                                 f"({exc.strerror or exc}): point XDG_CACHE_HOME at a writable directory, or use "
                                 "--acoustic-model default") from exc
    for link, target in ((root / "en-us", model), (root / DICTIONARY, _wheel_dictionary())):
        _place(link, target)
    return root


def _place(link: Path, target: Path, *, tries: int = 100) -> None:
    """Put a link ``link`` -> ``target`` in place (a copy where links cannot be made). Processes that start at once
    (a benchmark's workers, two moderators) each make the link under a name of their own and rename it over the old
    one, so none finds half of one; a link in place is only ever renamed over, never removed, and a copy from an
    earlier start is removed as a directory tree only (another process may be removing it too: then try again)."""
    for _ in range(tries):
        if link.exists() and link.resolve() == target.resolve():
            return  # made by an earlier start, or by another process just now
        made = link.with_name(f".{link.name}.{os.getpid()}")
        _remove(made)
        try:
            made.symlink_to(target, target_is_directory=target.is_dir())
            copied = False
        except OSError:  # no symlinks (some Windows set-ups): copy
            (shutil.copytree if target.is_dir() else shutil.copy)(target, made)
            copied = True
        if link.is_dir() and not link.is_symlink():
            with contextlib.suppress(OSError):  # rmtree refuses a link another process has put there meanwhile
                shutil.rmtree(link)  # a copy from an earlier start: a rename cannot replace a directory
        try:
            os.replace(made, link)
        except OSError:  # a directory another process has not finished removing
            _remove(made)
            time.sleep(0.01)
            continue
        if copied:
            return
    raise AcousticModelError(f"could not put {link} -> {target} in place")


def _remove(path: Path) -> None:
    """Remove a link, file or directory tree at ``path``, if there is one (another process may remove it first)."""
    with contextlib.suppress(FileNotFoundError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def acoustic_model(name: str, *, cache: Path | None = None) -> Path | None:
    """The model directory for ``name``: None for "default" (the wheel's en-us), the shipped adapted model for
    "party", else ``name`` as a path, which must hold ``en-us/`` and ``cmudict-en-us.dict``. ("auto" is both:
    ``moderator.listening.make_recognizer`` builds it from the two.)

    Raises:
        AcousticModelError: the path does not exist or is not a complete model, or "party" is not installed.
    """
    if name == "default":
        return None
    if name == "party":
        if missing_files(PARTY / "en-us"):
            raise AcousticModelError(f"the party acoustic model is not installed in {PARTY} "
                                     "(build it with scripts/build_party_model.sh)")
        if (PARTY / DICTIONARY).is_file():
            return PARTY
        return _check(_layout(PARTY / "en-us", cache), "the party acoustic model")
    path = Path(os.path.expanduser(name))
    if not path.exists():
        raise AcousticModelError(f"acoustic model {name!r}: use {' or '.join(NAMES)}, or the path of a model "
                                 f"directory (with en-us/ and {DICTIONARY}); {path} does not exist")
    return _check(path, f"acoustic model {path}")
