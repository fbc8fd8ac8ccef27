"""Whole-utterance pocketsphinx decoding in a process of its own, so that it never holds the game's thread.

pocketsphinx keeps Python's global lock while it decodes (its ``process_raw`` does not release it): a whole
command takes it for 35-60 ms on a laptop, longer on a Raspberry Pi. Meanwhile PortAudio's output callbacks,
which are Python, cannot run; with 50 ms output blocks the sound card underruns, the moderator's voice
clicks, and the echo canceller's reference slips. Here the batch decoder lives in a child process
(``python -m moderator.adapters.decoder_worker``) and the game's thread waits on a pipe, which frees the lock.

The protocol is pickled tuples over the child's stdin and stdout, one request and one reply at a time:

- ``("word", word, phones)``: add a pronunciation;
- ``("jsgf", name, text)``: add a JSGF search;
- ``("decode", search, pcm)``: decode 16-bit mono PCM at 16 kHz with a search; the reply is ``Decoded``;
- ``("close",)``: exit.

Each reply is ``("ok", value)`` or ``("error", message)``. The child imports pocketsphinx only, not numpy
or the game. If it dies (killed, out of memory), the next request starts a new one and replays the
pronunciations and searches it had been given, so a game never loses its recognizer to one crash.
"""

from __future__ import annotations

import math
import pickle
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

#: Filler words of the en-us model (``<sil>``, ``[NOISE]``, ``++BREATH++``, ``SIL``), which are not words said.
FILLER = re.compile(r"<.*>|\[.*\]|SIL|\+.*\+")


@dataclass(frozen=True)
class Decoded:
    """One search's result over one utterance."""

    text: str
    """The words, fillers left out."""
    score: float
    """The best path's score in natural-log units (-inf with no path)."""
    frames: int
    segments: tuple[tuple[str, int, int], ...]
    """(word, first frame, last frame) of the best path, fillers included."""
    cmn: str
    """The decoder's cepstral mean after the utterance (``Decoder.get_cmn``)."""


def new_decoder(hmm: str, dictionary: str) -> Any:
    """A grammar-less decoder on an acoustic model and its dictionary, quiet but for fatal errors."""
    from pocketsphinx import Decoder

    return Decoder(hmm=hmm, dict=dictionary, lm=None, loglevel="FATAL")


def decode(decoder: Any, search: str, pcm: bytes) -> Decoded:
    """Decode ``pcm`` with ``search`` on ``decoder``, its front end started afresh (``reinit_feat``): every
    result is a function of its audio alone, not of what was decoded before."""
    decoder.reinit_feat()
    decoder.activate_search(search)
    decoder.start_utt()
    decoder.process_raw(pcm, full_utt=True)
    decoder.end_utt()
    hyp = decoder.hyp()
    if hyp is None:
        return Decoded("", float("-inf"), decoder.n_frames(), (), decoder.get_cmn())
    # Hypothesis.score is logmath_exp(raw score), so its log is the score in natural-log units.
    score = math.log(hyp.score) if hyp.score > 0 else float("-inf")
    text = " ".join(w for w in hyp.hypstr.split() if not FILLER.fullmatch(w))
    segments = tuple((s.word, s.start_frame, s.end_frame) for s in decoder.seg())
    return Decoded(text, score, decoder.n_frames(), segments, decoder.get_cmn())


class WorkerError(Exception):
    """The worker refused a request (the message is pocketsphinx's) or could not be run."""


class DecoderWorker:
    """The parent's handle on a decoding child process, started on first use."""

    def __init__(self, hmm: Path, dictionary: Path) -> None:
        self._args = (str(hmm), str(dictionary))
        self._proc: subprocess.Popen[bytes] | None = None
        #: Everything the child was told but decodes, in order: replayed into a new child after a crash.
        self._setup: list[tuple[Any, ...]] = []

    def add_word(self, word: str, phones: str) -> None:
        self._ask(("word", word, phones))
        self._setup.append(("word", word, phones))

    def add_jsgf(self, name: str, text: str) -> None:
        self._ask(("jsgf", name, text))
        self._setup.append(("jsgf", name, text))  # only once accepted: a refused grammar is not replayed

    def start(self) -> None:
        """Start the child now rather than at the first request (loading the model takes a few tenths of a
        second)."""
        try:
            self._running()
        except (OSError, EOFError, pickle.UnpicklingError) as exc:
            raise WorkerError(f"the decoding process failed to start ({exc!r})") from exc

    def decode(self, search: str, pcm: bytes) -> Decoded:
        return self._ask(("decode", search, pcm))  # type: ignore[no-any-return]

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            _send(proc.stdin, ("close",))
        except OSError:
            pass
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def _ask(self, request: tuple[Any, ...]) -> Any:
        """Send one request and wait for its answer; a dead child is replaced once, then it is an error."""
        for attempt in (1, 2):
            proc = self._running()
            try:
                _send(proc.stdin, request)
                status, value = pickle.load(proc.stdout)  # type: ignore[arg-type]
            except (OSError, EOFError, pickle.UnpicklingError) as exc:
                self._proc = None
                proc.kill()
                proc.wait()
                if attempt == 2:
                    raise WorkerError(f"the decoding process died twice ({exc!r})") from exc
                continue
            if status == "error":
                raise WorkerError(value)
            return value
        raise AssertionError("unreachable")

    def _running(self) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        try:
            proc = subprocess.Popen([sys.executable, "-m", "moderator.adapters.decoder_worker", *self._args],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except OSError as exc:
            raise WorkerError(f"cannot start the decoding process: {exc}") from exc
        self._proc = proc
        status, value = pickle.load(proc.stdout)  # type: ignore[arg-type]  # the model is loaded
        if status == "error":
            self.close()
            raise WorkerError(value)
        for request in self._setup:
            _send(proc.stdin, request)
            status, value = pickle.load(proc.stdout)  # type: ignore[arg-type]
            if status == "error":
                raise WorkerError(value)
        return proc


def _send(stream: IO[bytes] | None, message: tuple[Any, ...]) -> None:
    assert stream is not None
    pickle.dump(message, stream, protocol=pickle.HIGHEST_PROTOCOL)
    stream.flush()


def serve(hmm: str, dictionary: str, requests: IO[bytes], replies: IO[bytes]) -> None:
    """The child's loop: answer requests until ``close`` or the end of input."""
    try:
        decoder = new_decoder(hmm, dictionary)
        decoder.add_allphone_file("phones", None)  # the free phone loop the confidence is measured against
    except Exception as exc:  # noqa: BLE001 - every failure goes back to the parent as a message
        _send(replies, ("error", f"cannot load the pocketsphinx model from {hmm}: {exc}"))
        return
    _send(replies, ("ok", None))
    while True:
        try:
            request = pickle.load(requests)
        except EOFError:
            return
        kind = request[0]
        if kind == "close":
            return
        try:
            if kind == "word":
                decoder.add_word(request[1], request[2], True)
                reply: Any = None
            elif kind == "jsgf":
                decoder.add_jsgf_string(request[1], request[2])
                reply = None
            elif kind == "decode":
                reply = decode(decoder, request[1], request[2])
            else:
                raise ValueError(f"unknown request {kind!r}")
        except Exception as exc:  # noqa: BLE001
            _send(replies, ("error", str(exc) or type(exc).__name__))
        else:
            _send(replies, ("ok", reply))


if __name__ == "__main__":
    # Served from the imported module, not from ``__main__``, so that what it pickles (``Decoded``) is the class
    # the parent knows.
    from moderator.adapters import decoder_worker

    decoder_worker.serve(sys.argv[1], sys.argv[2], sys.stdin.buffer, sys.stdout.buffer)
