"""Fixtures shared by the test modules. Shared fakes live in their own modules (``fakes.py``,
``fake_recognizer.py``, ``fake_sounddevice.py``, ``fake_sd_in.py``); the PulseAudio bench in ``pulse.py``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pulse import PulseBench


@pytest.fixture(scope="module")
def bench() -> Iterator[PulseBench]:
    """Two private PulseAudio null sinks (``roomA``, ``roomB``) for the module's tests; skips without PulseAudio."""
    from pulse import pulse_bench  # here, not above: pulse.py needs the checkout on sys.path (python -m pytest)

    with pulse_bench() as b:
        yield b
