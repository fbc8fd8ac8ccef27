"""A disk cache of rendered speech, so each phrase is synthesized once per engine, voice and text."""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from moderator.audio.clip import AudioError, Clip
from moderator.ports import Synthesizer
from moderator.settings import VoiceSettings

WAV_HEADER = 44
"""Bytes before the samples in the 16-bit mono WAV files ``Clip.write`` makes."""


def default_cache_dir() -> Path:
    """Where rendered speech is kept when no directory is given."""
    return platformdirs.user_cache_path("moderator") / "speech"


#: Quotation marks: the catalogue quotes the commands players must say, for the eye; a synthesizer reads them as
#: pauses (espeak-ng made a read-back 0.6 s longer, and a "yes" said on time then fell under it).
_QUOTES = str.maketrans("", "", '"\u201c\u201d\u00ab\u00bb\u300c\u300d')


def speakable(text: str) -> str:
    """``text`` as it is synthesized: without quotation marks."""
    return " ".join(text.translate(_QUOTES).split())


def cache_key(engine: str, voice: VoiceSettings, text: str) -> str:
    """The hex sha256 naming one rendering: it changes with the engine, the voice settings and the text as it is
    synthesized (``speakable``)."""
    return hashlib.sha256(f"{engine}\n{voice.key()}\n{speakable(text)}".encode()).hexdigest()


@dataclass(frozen=True)
class PrerenderReport:
    """What ``RenderCache.prerender`` did."""

    rendered: int
    """Distinct texts synthesized now."""

    cached: int
    """Distinct texts found already rendered (loaded into memory)."""

    seconds: float
    """Time taken, by the caller's timer."""


class RenderCache:
    """Rendered clips on disk under ``<directory>/<2 hex>/<sha256>.wav``, and in memory once loaded.

    Files are written atomically (a temporary file, then ``os.replace``), so a reader never sees a
    half-written clip, and two processes or threads rendering the same text both end with a whole file.
    A file that cannot be read back whole is rendered again.
    """

    def __init__(self, directory: Path, synth: Synthesizer) -> None:
        self.directory = Path(directory)
        self.synth = synth
        self._clips: dict[str, Clip] = {}

    def path_for(self, text: str, voice: VoiceSettings) -> Path:
        """The file that holds (or will hold) this rendering."""
        key = cache_key(self.synth.name, voice, text)
        return self.directory / key[:2] / f"{key}.wav"

    def contains(self, text: str, voice: VoiceSettings) -> bool:
        """Whether this rendering is in memory or on disk (a damaged file still counts until read)."""
        key = cache_key(self.synth.name, voice, text)
        return key in self._clips or self.path_for(text, voice).is_file()

    def get(self, text: str, voice: VoiceSettings) -> Clip:
        """The clip for ``text`` in ``voice``: from memory, else from disk, else rendered and stored.

        Raises:
            SynthesisError: The text had to be rendered, and the synthesizer failed.
            AudioError: The rendered clip cannot be written to the cache directory.
        """
        return self._get(text, voice)[0]

    def prerender(self, texts: Iterable[str], voice: VoiceSettings, timer: Callable[[], float]) -> PrerenderReport:
        """Make every text ready in memory, rendering those not on disk yet.

        Args:
            texts: Phrases to prepare; repeats count once.
            voice: The voice they will be said in.
            timer: Seconds from any origin (``time.perf_counter`` in the app; the core never reads time).

        Raises:
            SynthesisError, AudioError: as ``get``.
        """
        start = timer()
        rendered = cached = 0
        for text in dict.fromkeys(texts):
            if self._get(text, voice)[1]:
                rendered += 1
            else:
                cached += 1
        return PrerenderReport(rendered=rendered, cached=cached, seconds=timer() - start)

    def find(self, text: str, voice: VoiceSettings) -> Clip | None:
        """The clip if it is already rendered (in memory or a whole file on disk), else None; never renders."""
        return self._find(cache_key(self.synth.name, voice, text))

    def _find(self, key: str) -> Clip | None:
        clip = self._clips.get(key)
        if clip is None:
            clip = _load(self.directory / key[:2] / f"{key}.wav")
            if clip is not None:
                self._clips[key] = clip
        return clip

    def _get(self, text: str, voice: VoiceSettings) -> tuple[Clip, bool]:
        """The clip, and whether it was rendered now."""
        key = cache_key(self.synth.name, voice, text)
        clip = self._find(key)
        if clip is not None:
            return clip, False
        clip = self.synth.render(speakable(text), voice)
        _store(self.directory / key[:2] / f"{key}.wav", clip)
        self._clips[key] = clip
        return clip, True


def _load(path: Path) -> Clip | None:
    """A cached clip, or None when it is missing or damaged (unreadable, empty or cut short)."""
    try:
        with path.open("rb") as fh:
            header = fh.read(WAV_HEADER)
        size = path.stat().st_size
        clip = Clip.read(path)
    except (OSError, AudioError):
        return None
    declared = int.from_bytes(header[40:44], "little")  # the data chunk's size, as written
    if not len(clip.samples) or size != WAV_HEADER + declared:
        return None
    return clip


def _store(path: Path, clip: Clip) -> None:
    """Write ``clip`` to ``path`` atomically."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.stem[:8]}-", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise AudioError(f"cannot write speech cache file {path}: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(clip.to_wav_bytes())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise AudioError(f"cannot write speech cache file {path}: {exc.strerror or exc}") from exc
        raise
