"""Vosk speech models: the ones we know how to download, where they live, and a verified download.

No vosk import here: listing and installing models must work without the engine.

The checksum of ``vosk-model-small-en-us-0.15.zip`` is not published by alphacephei.com
itself; it is the value that independent packagers pin and verify on every build, e.g.
Automotive Grade Linux (github.com/agl-ic-eg/meta-agl-devel,
``meta-offline-voice-agent/recipes-vosk/vosk-model/vosk-model-small-en-us_0.15.bb``),
wirepod's Yocto layer and the AUR ``vosk-api-bin`` PKGBUILD. Its size is the one two
unrelated Android apps pin next to the same SHA-256.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import re
import shutil
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO, Any

import platformdirs

from moderator.errors import ModeratorError

MODELS: dict[str, dict[str, Any]] = {
    "vosk-model-small-en-us-0.15": {
        "url": "https://alphacephei.com/vosk/models/vosk-model-small-en-us-0.15.zip",
        "sha256": "30f26242c4eb449f948e42cb302dd7a686cb29a3423a8367f99ff41780942498",
        "size": 41_205_931,
        "lang": "en",
    },
}
"""Downloadable models: name -> url, sha256 of the zip (None: not known), size in bytes, language."""

DEFAULT_MODEL = "vosk-model-small-en-us-0.15"
BASE_URL = "https://alphacephei.com/vosk/models/"
HOST = "alphacephei.com"
CHUNK = 1 << 16
_NAME = re.compile(r"vosk-model-[a-z0-9][a-z0-9.-]*")
_HEX = re.compile(r"[0-9a-f]{64}")

Fetch = Callable[[str], IO[bytes]]
"""Opens a URL for reading bytes; raises OSError (urllib.error.URLError) when it cannot."""


class ModelError(ModeratorError):
    """A speech model is missing, invalid, or cannot be downloaded or verified."""


def models_dir() -> Path:
    """Where ``moderator models download`` installs models: the user data dir / ``vosk-models``."""
    return platformdirs.user_data_path("moderator") / "vosk-models"


def search_dirs() -> list[Path]:
    """Where installed models are looked for: ours first, then the places vosk itself uses."""
    dirs = [models_dir()]
    if env := os.environ.get("VOSK_MODEL_PATH"):
        dirs.append(Path(env))
    dirs += [Path("/usr/share/vosk"), Path.home() / ".cache" / "vosk"]
    return list(dict.fromkeys(dirs))


def is_model_dir(path: Path) -> bool:
    """True if ``path`` looks like an unpacked vosk model (``am/final.mdl`` or ``final.mdl``, and ``conf/``)."""
    path = Path(path)
    has_model = (path / "am" / "final.mdl").is_file() or (path / "final.mdl").is_file()
    return has_model and (path / "conf").is_dir()


def installed_models(dirs: Iterable[Path] | None = None) -> list[Path]:
    """Every model directory directly inside ``dirs`` (default: :func:`search_dirs`), sorted by name."""
    found: list[Path] = []
    for folder in search_dirs() if dirs is None else dirs:
        try:
            children = sorted(Path(folder).iterdir())
        except OSError:
            continue
        found += [child for child in children if child.is_dir() and is_model_dir(child)]
    return found


def installed_model(name: str | None = None, dirs: Iterable[Path] | None = None) -> Path | None:
    """The installed model called ``name``; without a name, a known model first, else any model."""
    models = installed_models(dirs)
    if name is not None:
        return next((path for path in models if path.name == name), None)
    known = [path for path in models if path.name in MODELS]
    return (known or models or [None])[0]


def model_info(name: str, sha256: str | None = None) -> dict[str, Any]:
    """The registry entry of ``name``, or one built for another alphacephei model when ``sha256`` is given."""
    if name in MODELS:
        return dict(MODELS[name])
    if not _NAME.fullmatch(name):
        raise ModelError(f"{name!r} is not a vosk model name such as {DEFAULT_MODEL!r}")
    if sha256 is None:
        raise ModelError(
            f"{name} is not one of the models moderator knows ({', '.join(MODELS)}); "
            "to download it anyway, give its SHA-256 with --sha256 HEX"
        )
    return {"url": f"{BASE_URL}{name}.zip", "sha256": None, "size": None, "lang": None}


def urlopen_fetch(url: str) -> IO[bytes]:
    """Open ``url`` over the network (the default fetch)."""
    response: IO[bytes] = urllib.request.urlopen(url, timeout=30)
    return response


def download(
    name: str = DEFAULT_MODEL,
    dest: Path | None = None,
    *,
    sha256: str | None = None,
    fetch: Fetch | None = None,
    progress: Callable[[int, int | None], None] | None = None,
) -> Path:
    """Download model ``name``, verify the zip, and unpack it into ``dest`` as ``dest/name``.

    Args:
        name: a model of :data:`MODELS`, or any alphacephei model name when ``sha256`` is given.
        dest: the folder to install into (default :func:`models_dir`).
        sha256: the expected SHA-256 of the zip; overrides the registry (and its size check).
        fetch: opens the URL (default :func:`urlopen_fetch`); tests pass a local file.
        progress: called with (bytes so far, total or None) while downloading.

    Returns:
        The installed model directory (already there: returned untouched).

    Raises:
        ModelError: unknown name, no checksum to verify against, no network, wrong size or
            checksum, or a zip that holds no model. Nothing is left behind on failure.
    """
    info = model_info(name, sha256)
    if sha256 is not None:
        sha256 = sha256.strip().lower()
        if not _HEX.fullmatch(sha256):
            raise ModelError(f"--sha256 wants 64 hex digits, got {sha256!r}")
        info["size"] = None  # another file than the registry's: only its checksum is known
    expected = sha256 or info["sha256"]
    if expected is None:
        raise ModelError(
            f"no published SHA-256 is known for {name}, so it cannot be verified; "
            f"check the file yourself and pass --sha256 HEX, or unzip it into {dest or models_dir()}"
        )
    dest = Path(dest) if dest is not None else models_dir()
    target = dest / name
    if is_model_dir(target):
        return target
    if target.exists():
        raise ModelError(f"{target} exists but is not a vosk model; remove it and download again")
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelError(f"cannot create {dest}: {exc.strerror or exc}") from exc
    archive = _fetch_verified(name, info["url"], expected, info["size"], dest, fetch or urlopen_fetch, progress)
    try:
        return _unpack(archive, name, dest, target)
    finally:
        archive.unlink(missing_ok=True)


def _fetch_verified(
    name: str,
    url: str,
    expected: str,
    size: int | None,
    dest: Path,
    fetch: Fetch,
    progress: Callable[[int, int | None], None] | None,
) -> Path:
    """Stream ``url`` into a temporary file in ``dest``, checking size and checksum on the way."""
    handle, tmp = tempfile.mkstemp(prefix=f".{name}-", suffix=".zip.part", dir=dest)
    archive = Path(tmp)
    digest = hashlib.sha256()
    received = 0
    try:
        with os.fdopen(handle, "wb") as out:
            try:
                with fetch(url) as stream:
                    while chunk := stream.read(CHUNK):
                        received += len(chunk)
                        if size is not None and received > size:
                            raise ModelError(f"{url} is larger than the {size} bytes expected; refusing it")
                        digest.update(chunk)
                        try:
                            out.write(chunk)
                        except OSError as exc:
                            raise ModelError(f"cannot write {archive}: {exc.strerror or exc}") from exc
                        if progress:
                            progress(received, size)
            except urllib.error.HTTPError as exc:
                raise ModelError(f"{url}: the server answered {exc.code} {exc.reason}") from exc
            except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
                reason = getattr(exc, "reason", None) or exc
                raise ModelError(
                    f"cannot reach {HOST}: no network? ({reason}) Download {url} on a machine with "
                    f"internet, then unzip it into {dest} or pass --vosk-model PATH"
                ) from exc
        if size is not None and received != size:
            raise ModelError(f"{url}: got {received} bytes, expected {size}; the download is incomplete")
        if digest.hexdigest() != expected:
            raise ModelError(
                f"{url}: SHA-256 {digest.hexdigest()} does not match the expected {expected}; "
                "the file is damaged or not the published model, so it was not installed"
            )
    except BaseException:
        archive.unlink(missing_ok=True)
        raise
    return archive


def _unpack(archive: Path, name: str, dest: Path, target: Path) -> Path:
    """Unzip into a staging folder next to ``target``, then move the model in with one rename."""
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", suffix=".unzip", dir=dest))
    try:
        try:
            with zipfile.ZipFile(archive) as zf:
                _check_members(zf.namelist(), archive)
                zf.extractall(staging)
        except zipfile.BadZipFile as exc:
            raise ModelError(f"the download of {name} is not a zip file: {exc}") from exc
        root = _model_root(staging, name)
        if root is None:
            raise ModelError(f"the zip of {name} holds no vosk model (no am/final.mdl and conf/)")
        try:
            os.replace(root, target)
        except OSError as exc:
            raise ModelError(f"cannot install {name} into {target}: {exc.strerror or exc}") from exc
        return target
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _check_members(names: Sequence[str], archive: Path) -> None:
    for member in names:
        parts = Path(member).parts
        if member.startswith(("/", "\\")) or ".." in parts or (parts and ":" in parts[0]):
            raise ModelError(f"{archive.name}: unsafe path {member!r} in the zip; refusing it")


def _model_root(staging: Path, name: str) -> Path | None:
    """The model inside the unpacked zip: ``name/``, the single top folder, or the zip's root."""
    candidates = [staging / name]
    tops = [p for p in staging.iterdir() if not p.name.startswith((".", "__MACOSX"))]
    if len(tops) == 1 and tops[0].is_dir():
        candidates.append(tops[0])
    candidates.append(staging)
    return next((c for c in candidates if is_model_dir(c)), None)
