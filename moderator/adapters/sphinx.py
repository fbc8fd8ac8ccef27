"""pocketsphinx's decoders, in the game's process or in a process of their own.

``Decoders`` holds what the recognizer decodes with: a batch decoder for whole utterances (a grammar search,
and the free phone loop its confidence is measured against) and a streaming one for partial results while a
player speaks. ``DecoderProcess`` offers the same methods, with the decoders in a child process
(``python -m moderator.adapters.sphinx``): pocketsphinx keeps Python's global lock while it works (its
``process_raw`` does not release it, nor does compiling a grammar), 35-60 ms for a whole command on a laptop
and 220 ms at a stretch for a long one. Meanwhile the sound card's callbacks, which are Python, cannot run:
with 50 ms output blocks the card underruns, the moderator's voice clicks, and the echo canceller's reference
slips. With the decoders in a child, the game's thread waits on a pipe, which frees the lock.

The calls go over a pipe (``moderator.adapters.child``). The child imports pocketsphinx, not numpy or the game
(only its error classes). If it dies (killed, out of memory), the next call starts a new one and replays the
pronunciations and grammars it had been given, so a game never loses its recognizer to one crash.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from moderator.adapters import child
from moderator.adapters.child import Child
from moderator.errors import ModeratorError

#: Filler words of the en-us model (``<sil>``, ``[NOISE]``, ``++BREATH++``, ``SIL``), which are not words said.
FILLER = re.compile(r"<.*>|\[.*\]|SIL|\+.*\+")

#: The free phone loop's search name.
PHONES = "phones"

#: Each grammar search has a twin under its name and this suffix, whose result is the search's own best path
#: (Viterbi) instead of the best path through its word lattice (``bestpath``); see ``Decoders.add_jsgf``.
VITERBI = "/viterbi"

#: Decoder settings besides the model's own (none: pocketsphinx's defaults). The benchmarks override them to measure
#: a setting before shipping it (``python -m benchmarks.acceptance --decoder KEY=VALUE``); docs/benchmarks/changes.md
#: has those tried and not kept (``fillprob`` 1e-2, ``bestpath`` off).
DECODER_SETTINGS: dict[str, Any] = {}


class RecognitionError(ModeratorError):
    """Speech recognition could not be set up or run."""


class DecoderError(RecognitionError):
    """pocketsphinx refused or failed a call (the message is its), or its process could not be run. A
    ``RecognitionError``, so ``PocketsphinxRecognizer`` passes it on as it is."""


@dataclass(frozen=True)
class Decoded:
    """One search's result over one whole utterance."""

    text: str
    """The words, fillers left out."""
    score: float
    """The best path's score in natural-log units (-inf with no path)."""
    frames: int
    segments: tuple[tuple[str, int, int], ...]
    """(word, first frame, last frame) of the best path, fillers included."""
    complete: bool
    """Whether the words are a whole sentence of the search's grammar (not only a path cut short)."""


def _words(hypstr: str) -> str:
    return " ".join(w for w in hypstr.split() if not FILLER.fullmatch(w))


class Decoders:
    """The batch and the streaming decoder of one recognizer, on one acoustic model and dictionary."""

    def __init__(self, hmm: str, dictionary: str) -> None:
        try:
            from pocketsphinx import Decoder

            self._new = lambda: Decoder(hmm=hmm, dict=dictionary, lm=None, loglevel="FATAL", **DECODER_SETTINGS)
            self.batch = self._new()
            # No phone LM: a uniform loop is the fairest yardstick for "any speech at all".
            self.batch.add_allphone_file(PHONES, None)
        except (ImportError, RuntimeError, ValueError, OSError) as exc:
            raise DecoderError(f"cannot load the pocketsphinx model from {hmm}: {exc}") from exc
        #: Partial results come from a decoder of its own, so that the batch decoder's state (its cepstral
        #: mean above all) is never touched by a stream.
        self._stream: Any = None
        self._streaming = False
        self._added: list[tuple[str, str]] = []
        self._jsgf: dict[str, str] = {}
        self._fsg: dict[str, Any] = {}
        self._streamed: set[str] = set()

    # -- dictionary and grammars ----------------------------------------------------

    def lookup(self, word: str) -> str | None:
        """The dictionary's phones for ``word``, or None."""
        return self.batch.lookup_word(word)  # type: ignore[no-any-return]

    def missing(self, words: list[str]) -> list[str]:
        """The words the dictionary lacks."""
        return [w for w in words if self.batch.lookup_word(w) is None]

    def add_word(self, word: str, phones: str) -> None:
        try:
            self.batch.add_word(word, phones, True)
            if self._stream is not None:
                self._stream.add_word(word, phones, True)
        except RuntimeError as exc:
            raise DecoderError(f"cannot add '{word}' /{phones}/ to the dictionary: {exc}") from exc
        self._added.append((word, phones))

    def add_jsgf(self, name: str, text: str) -> None:
        """Add a grammar search (the streaming decoder gets it at its first utterance with it), and its twin
        ``name + VITERBI``. pocketsphinx rescores a word lattice after the search (``bestpath``), and that lattice's
        best path need not end in the grammar's final state: in party noise it often stops a word short ("i appoint
        alice as the"). The search's own best path ends there whenever any path does. A search reads ``bestpath``
        from the decoder's settings when it is made, so the twin is made with it off, on the same decoder and
        acoustic model."""
        config = self.batch.config
        bestpath = config["bestpath"]
        try:
            self.batch.add_jsgf_string(name, text)
            config["bestpath"] = False
            self.batch.add_jsgf_string(name + VITERBI, text)
            self._fsg[name] = self._fsg[name + VITERBI] = self.batch.parse_jsgf(text)
        except (RuntimeError, ValueError) as exc:
            raise DecoderError(f"pocketsphinx refused the grammar: {exc}") from exc
        finally:
            config["bestpath"] = bestpath
        self._jsgf[name] = text

    def open_stream(self) -> None:
        """Load the streaming decoder now, not at the first word (it takes 0.1-0.2 s)."""
        if self._stream is None:
            stream = self._new()
            for word, phones in self._added:
                stream.add_word(word, phones, True)
            self._stream = stream

    # -- whole utterances -----------------------------------------------------------

    def decode(self, search: str, pcm: bytes) -> Decoded:
        """Decode 16-bit mono PCM at 16 kHz with ``search``.

        The front end starts afresh each time (``reinit_feat``, under 1 ms): the en-us model's noise removal
        otherwise follows the noise level from one utterance to the next, and the same recording scored 0.57
        or 0.72 depending on what had been decoded before it, even on the grammar and phone-loop passes over
        one utterance. Every result is then a function of its audio alone."""
        decoder = self._run(lambda d: d.activate_search(search), pcm, "decode")
        hyp = decoder.hyp()
        if hyp is None:
            return Decoded("", float("-inf"), decoder.n_frames(), (), False)
        # Hypothesis.score is logmath_exp(raw score), so its log is the score in natural-log units.
        score = math.log(hyp.score) if hyp.score > 0 else float("-inf")
        text = _words(hyp.hypstr)
        segments = tuple((s.word, s.start_frame, s.end_frame) for s in decoder.seg())
        fsg = self._fsg.get(search)
        return Decoded(text, score, decoder.n_frames(), segments, bool(fsg is not None and fsg.accept(text)))

    def align(self, words: str, pcm: bytes) -> float:
        """The score (natural-log units, as ``Decoded.score``) of ``words`` alone forced over the whole of ``pcm``,
        with silence allowed between them but no noise words; -inf when they cannot be aligned. A grammar search may
        explain talk around a command as noise ("++NOISE++") or by stretching a word; an alignment cannot."""
        hyp = self._run(lambda d: d.set_align_text(words), pcm, "align").hyp()
        return math.log(hyp.score) if hyp is not None and hyp.score > 0 else float("-inf")

    def _run(self, search: Callable[[Any], None], pcm: bytes, what: str) -> Any:
        """The batch decoder, after ``search`` set its search and it decoded ``pcm`` as one whole utterance, its
        front end started afresh (``decode``)."""
        decoder = self.batch
        try:
            decoder.reinit_feat()
            search(decoder)
            decoder.start_utt()
            decoder.process_raw(pcm, full_utt=True)
            decoder.end_utt()
        except (RuntimeError, KeyError, ValueError) as exc:
            raise DecoderError(f"pocketsphinx failed to {what}: {exc}") from exc
        return decoder

    # -- streaming ------------------------------------------------------------------

    def begin(self, search: str) -> None:
        """Start an utterance on the streaming decoder (an open one is ended first)."""
        self.finish()
        self.open_stream()
        try:
            if search not in self._streamed:
                self._stream.add_jsgf_string(search, self._jsgf[search])
                self._streamed.add(search)
            self._stream.activate_search(search)
            self._stream.reinit_feat()  # no noise estimate carried over from another utterance (``decode``)
            # The running mean starts where the last whole utterance left the batch decoder, not at the
            # model's default: short commands are over before a running mean from scratch settles.
            self._stream.set_cmn(self.batch.get_cmn())
            self._stream.start_utt()
        except (RuntimeError, KeyError) as exc:
            raise DecoderError(f"pocketsphinx failed to start an utterance: {exc}") from exc
        self._streaming = True

    def accept(self, pcm: bytes) -> str:
        """Decode more of the utterance; the words heard so far (the best partial path)."""
        if not self._streaming:
            raise DecoderError("no utterance is open: begin() first")
        try:
            self._stream.process_raw(pcm, full_utt=False)
        except RuntimeError as exc:
            raise DecoderError(f"pocketsphinx failed to decode: {exc}") from exc
        hyp = self._stream.hyp()
        return "" if hyp is None else _words(hyp.hypstr)

    def finish(self) -> None:
        """End the open utterance, if any."""
        if not self._streaming:
            return
        self._streaming = False
        try:
            self._stream.end_utt()
        except RuntimeError as exc:
            raise DecoderError(f"pocketsphinx failed to decode: {exc}") from exc

    def close(self) -> None:
        """Nothing to stop in this process."""


#: What the child may be asked, and which of it is replayed into a new child after a crash.
_CALLS = frozenset({"lookup", "missing", "add_word", "add_jsgf", "open_stream", "decode", "align", "begin",
                    "accept", "finish"})
_SETUP = frozenset({"add_word", "add_jsgf", "open_stream"})


class DecoderProcess:
    """``Decoders`` in a child process, started at once; the same methods, each a round trip over a pipe
    (``moderator.adapters.child``)."""

    def __init__(self, hmm: str, dictionary: str) -> None:
        self._child = Child("moderator.adapters.sphinx", (hmm, dictionary), error=DecoderError,
                            what="the decoding process", setup=_SETUP)

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """The child (None once closed, until a call starts a new one)."""
        return self._child.process

    def lookup(self, word: str) -> str | None:
        return self._call("lookup", word)  # type: ignore[no-any-return]

    def missing(self, words: list[str]) -> list[str]:
        return self._call("missing", words)  # type: ignore[no-any-return]

    def add_word(self, word: str, phones: str) -> None:
        self._call("add_word", word, phones)

    def add_jsgf(self, name: str, text: str) -> None:
        self._call("add_jsgf", name, text)

    def open_stream(self) -> None:
        self._call("open_stream")

    def decode(self, search: str, pcm: bytes) -> Decoded:
        return self._call("decode", search, pcm)  # type: ignore[no-any-return]

    def align(self, words: str, pcm: bytes) -> float:
        return self._call("align", words, pcm)  # type: ignore[no-any-return]

    def begin(self, search: str) -> None:
        self._call("begin", search)

    def accept(self, pcm: bytes) -> str:
        return self._call("accept", pcm)  # type: ignore[no-any-return]

    def finish(self) -> None:
        self._call("finish")

    def close(self) -> None:
        """Stop the child (a later call starts a new one)."""
        self._child.close()

    def _call(self, *request: Any) -> Any:
        return self._child.call(*request)


if __name__ == "__main__":
    # Served from the imported module, not from ``__main__``, so that what it pickles (``Decoded``) is the class
    # the parent knows.
    from moderator.adapters import sphinx

    child.main(lambda: sphinx.Decoders(sys.argv[1], sys.argv[2]), sphinx._CALLS, sphinx.DecoderError)
