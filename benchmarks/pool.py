"""Worker processes for the listening benchmarks: each loads its own recognizers once."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numpy as np

#: The state of one worker process: grammar, recognizers by engine name, babble, anything kept alive.
W: dict[str, Any] = {}


def _init(engines: dict[str, Path | None], noise: np.ndarray, acoustic: str = "default",
          decoder: dict[str, Any] | None = None, second_opinion: str | None = None) -> None:
    from benchmarks.corpus import ROSTERS, basic_grammar
    from benchmarks.phases import grammar_for_intent, phase_intents
    from moderator.adapters import sphinx
    from moderator.listening import make_recognizer

    if decoder:
        sphinx.DECODER_SETTINGS = {**sphinx.DECODER_SETTINGS, **decoder}

    W.update(
        grammar=basic_grammar(),
        noise=noise,
        recognizers={name: make_recognizer(name, model, acoustic, second_opinion=second_opinion)
                     for name, model in engines.items()},
        phases={roster: grammar_for_intent(phase_intents(roster)) for roster in ROSTERS},
    )


def _call(job: tuple[Callable[[Any], Any], Any]) -> Any:
    fn, arg = job
    return fn(arg)


def run(engines: dict[str, Path | None], noise: np.ndarray, jobs: list[tuple[Callable[[Any], Any], Any]], *,
        processes: int = 2, log: Callable[[str], None] = print, label: str = "jobs",
        acoustic: str = "default", decoder: dict[str, Any] | None = None,
        second_opinion: str | None = None) -> list[Any]:
    """Run ``fn(arg)`` for every job over ``processes`` workers, pocketsphinx with the ``acoustic`` model
    (``--acoustic-model``) and ``decoder`` settings over ``moderator.adapters.sphinx.DECODER_SETTINGS`` (to compare
    a setting with the shipped ones), and ``second_opinion`` (``--second-opinion``); results in job order.

    Raises:
        BrokenProcessPool: a worker died (a recognizer crashing in its C code, say) instead of hanging.
    """
    started = time.perf_counter()
    results: list[Any] = [None] * len(jobs)
    with ProcessPoolExecutor(processes, initializer=_init, initargs=(engines, noise, acoustic, decoder,
                                                                                  second_opinion)) as executor:
        futures = {executor.submit(_call, job): i for i, job in enumerate(jobs)}
        for n, future in enumerate(as_completed(futures), 1):
            results[futures[future]] = future.result()
            if n % 100 == 0 or n == len(jobs):
                log(f"  {label}: {n}/{len(jobs)} ({time.perf_counter() - started:.0f} s)")
    return results
