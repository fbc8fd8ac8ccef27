"""pocketsphinx in a process of its own (moderator.adapters.sphinx): what the game process hears, and no crash
costs a game its recognizer."""

from __future__ import annotations

import math
import shutil
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pocketsphinx")

from moderator.adapters.asr_pocketsphinx import PocketsphinxRecognizer
from moderator.adapters.sphinx import DecoderError, DecoderProcess
from moderator.audio.clip import Clip
from moderator.speech.grammar import load_grammar

ROSTER = ["Alice", "Bob", "Carol", "Dave", "Xiomara"]  # Xiomara is not in the dictionary: a derived word
LINES = ("I appoint Xiomara as leader", "hostages Bob and Carol", "how much time is left",
         "did anyone see where I left my drink")

pytestmark = pytest.mark.skipif(shutil.which("flite") is None, reason="flite is not installed")


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> list[Clip]:
    folder = tmp_path_factory.mktemp("worker")
    out = []
    for i, line in enumerate(LINES):
        path = folder / f"{i}.wav"
        subprocess.run(["flite", "-voice", "rms", "-t", line, "-o", str(path)], check=True, timeout=30)
        out.append(Clip.read(path))
    return out


@pytest.fixture
def worker_recognizer():
    rec = PocketsphinxRecognizer(worker=True)
    rec.expect(load_grammar("en"), ROSTER)
    yield rec
    rec.close()


def _heard(rec: PocketsphinxRecognizer, clips: list[Clip]) -> list[tuple[str, float, str, float, float | None]]:
    """What ``rec`` heard of each clip, with its checks (the alignment's ``aligned``: None where not measured)."""
    out = []
    for clip in clips:
        transcript = rec.recognize(clip.samples, clip.rate)
        assert rec.last is not None
        aligned = None if math.isnan(rec.last.aligned) else rec.last.aligned
        out.append((transcript.text, transcript.confidence, transcript.guess, rec.last.absorbed, aligned))
    return out


def test_the_worker_hears_exactly_what_the_game_process_hears(clips, worker_recognizer) -> None:
    here = PocketsphinxRecognizer()
    here.expect(load_grammar("en"), ROSTER)
    expected = _heard(here, clips)
    assert expected[0][0] == "i appoint xiomara as leader"  # the derived word reached the worker too
    assert expected[0][4] is not None, "taken, so aligned (Decoders.align, through the worker too)"
    assert _heard(worker_recognizer, clips) == expected
    # Streams too: the partial results as the audio comes, chunk by chunk.
    def partials(rec: PocketsphinxRecognizer) -> list[str]:
        rec.begin()
        got = [rec.accept(clips[1].samples[i:i + 800], clips[1].rate) for i in range(0, len(clips[1].samples), 800)]
        rec.finish()
        return got

    streamed = partials(here)
    assert streamed[-1] == "hostages bob and carol"
    assert partials(worker_recognizer) == streamed


def test_a_forked_recognizer_has_a_worker_of_its_own(clips, worker_recognizer) -> None:
    fork = worker_recognizer.fork()
    try:
        assert isinstance(fork._sphinx, DecoderProcess)
        assert fork._sphinx.process is not worker_recognizer._sphinx.process
        fork.expect(load_grammar("en"), ROSTER)
        assert _heard(fork, clips[:2]) == _heard(worker_recognizer, clips[:2])
    finally:
        fork.close()


def test_a_killed_or_closed_worker_is_replaced_with_its_words_and_grammars(clips, worker_recognizer) -> None:
    before = _heard(worker_recognizer, clips[:1])
    proc = worker_recognizer._sphinx.process
    assert proc is not None
    proc.kill()
    proc.wait()
    assert _heard(worker_recognizer, clips[:1]) == before
    assert worker_recognizer._sphinx.process is not proc
    worker_recognizer.close()  # as a listener does once it has forked a recognizer per microphone
    assert worker_recognizer._sphinx.process is None
    assert _heard(worker_recognizer, clips[:1]) == before


def test_a_grammar_the_worker_refuses_is_an_error_and_is_not_replayed() -> None:
    worker = DecoderProcess(*_model_files())
    try:
        worker.add_word("zorblax", "Z AO R B L AE K S")
        with pytest.raises(DecoderError, match="refused the grammar"):
            worker.add_jsgf("bad", "#JSGF V1.0;\ngrammar g;\npublic <s> = quuxlet;\n")  # not in the dictionary
        assert [request[0] for request in worker._child._setup] == ["add_word"]
        worker.add_jsgf("good", "#JSGF V1.0;\ngrammar g;\npublic <s> = zorblax | bob;\n")
        assert worker.decode("good", np.zeros(16000, "<i2").tobytes()).frames > 0
    finally:
        worker.close()


def test_a_model_that_cannot_load_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DecoderError, match="cannot load the pocketsphinx model"):
        DecoderProcess(str(tmp_path / "nothing"), str(tmp_path / "nothing.dict"))


def test_the_game_thread_runs_while_the_worker_decodes(clips, worker_recognizer) -> None:
    """In the game's process, pocketsphinx keeps the interpreter's lock for a whole decode; with the worker,
    another thread runs meanwhile. Counted, not timed: the other thread must get many turns during a decode
    that, in process, would give it none."""
    long = Clip(np.concatenate([c.samples for c in clips] * 3), clips[0].rate)
    turns = 0
    decoding = threading.Event()
    done = threading.Event()

    def other() -> None:
        nonlocal turns
        decoding.wait()
        while not done.is_set():
            turns += 1
            time.sleep(0)  # give the lock back at once: only a lock held by the decoder stops this loop

    thread = threading.Thread(target=other)
    thread.start()
    decoding.set()
    worker_recognizer.recognize(long.samples, long.rate)
    done.set()
    thread.join()
    assert turns > 1000


def _model_files() -> tuple[str, str]:
    from moderator.adapters.asr_pocketsphinx import _default_model

    root = _default_model()
    return str(root / "en-us"), str(root / "cmudict-en-us.dict")


def test_ctrl_c_is_left_to_the_game(clips, worker_recognizer) -> None:
    """Ctrl-C in a terminal reaches every process of the group: the game decides what it means (save and
    leave), so the decoding process goes on until the game closes its pipe."""
    import signal

    before = _heard(worker_recognizer, clips[:1])
    proc = worker_recognizer._sphinx.process
    proc.send_signal(signal.SIGINT)
    assert _heard(worker_recognizer, clips[:1]) == before
    assert worker_recognizer._sphinx.process is proc, "the same process answered"
    worker_recognizer.close()
    assert proc.wait(timeout=5) == 0, "and it ends when its pipe is closed"
