"""Tests for the quiet alsa-lib error handler: messages are counted and kept instead of printed over the prompt."""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from moderator.adapters import alsa_log

ROOT = Path(__file__).resolve().parents[1]


def _libasound() -> str | None:
    name = ctypes.util.find_library("asound") or "libasound.so.2"
    try:
        ctypes.CDLL(name)
    except OSError:
        return None
    return name


needs_alsa = pytest.mark.skipif(
    _libasound() is None,
    reason="libasound.so.2 is not installed (apt-get install libasound2; libportaudio2 pulls it in)",
)

#: Opens a PCM that does not exist, which makes alsa-lib report "Unknown PCM nonexistent_pcm_xyz" to its handler.
PROVOKE = r"""
import ctypes, json, sys
from moderator.adapters import alsa_log

how = sys.argv[1]
if how == "install":
    installed = alsa_log.install()
elif how == "sounddevice":
    from moderator.adapters.portaudio import load_sounddevice
    load_sounddevice()
    installed = alsa_log.installed()
else:
    installed = False
before, startup = alsa_log.count(), alsa_log.during_startup()
lib = ctypes.CDLL("libasound.so.2")
handle = ctypes.c_void_p()
names = (b"nonexistent_pcm_xyz", b"hw:CARD=nocard_xyz")
results = [lib.snd_pcm_open(ctypes.byref(handle), name, 0, 0) for name in names]
print(json.dumps({
    "installed": installed, "results": results, "before": before, "after": alsa_log.count(), "startup": startup,
    "recent": alsa_log.recent(), "alerts": alsa_log.alerts(),
}))
"""


def provoke(how: str) -> tuple[dict[str, Any], str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run(
        [sys.executable, "-c", PROVOKE, how], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), proc.stderr


@needs_alsa
def test_without_the_handler_alsa_lib_prints_to_stderr() -> None:
    result, err = provoke("none")
    assert result["results"][0] < 0 and result["results"][1] < 0
    assert "ALSA lib" in err and "Unknown PCM nonexistent_pcm_xyz" in err, err
    assert result["after"] == 0


@needs_alsa
def test_with_the_handler_stderr_stays_clean_and_the_messages_are_counted_and_formatted() -> None:
    result, err = provoke("install")
    assert result["installed"] is True
    assert err == ""
    assert result["after"] >= result["before"] + 2, result
    assert any(
        text.endswith("Unknown PCM nonexistent_pcm_xyz") and "(snd_pcm_open_noupdate)" in text
        for text in result["recent"]
    ), result["recent"]
    assert any("nocard_xyz" in text for text in result["recent"]), result["recent"]  # formatted, not "%s"
    assert len(result["alerts"]) == 1
    alert = result["alerts"][0]
    assert alert.startswith(f"audio: {result['after']} ALSA warnings hidden (last: "), alert


@needs_alsa
def test_portaudio_starts_with_the_handler_in_place_and_its_device_scan_is_no_alert() -> None:
    result, err = provoke("sounddevice")
    assert result["installed"] is True
    assert "ALSA lib" not in err, err
    assert result["startup"] == result["before"]  # whatever the device scan said is filed as the scan's
    assert result["after"] >= result["before"] + 2
    assert result["alerts"][0].startswith(f"audio: {result['after'] - result['before']} ALSA warnings hidden")


TOGGLE_AND_THREADS = r"""
import ctypes, sys, threading
from moderator.adapters import alsa_log

lib = ctypes.CDLL("libasound.so.2")
def provoke(name):
    handle = ctypes.c_void_p()
    lib.snd_pcm_open(ctypes.byref(handle), name, 0, 0)

assert alsa_log.install()
alsa_log.uninstall()
provoke(b"heard_after_uninstall")
assert alsa_log.install() and alsa_log.install()
provoke(b"hidden_after_reinstall")
threads = [threading.Thread(target=lambda: [provoke(b"from_a_thread") for _ in range(200)]) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(alsa_log.count(), alsa_log.recent()[-1])
"""


@needs_alsa
def test_it_can_be_uninstalled_and_installed_again_and_takes_messages_from_many_threads() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", TOGGLE_AND_THREADS], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().endswith("Unknown PCM heard_after_uninstall") and "ALSA lib" in proc.stderr
    assert "hidden_after_reinstall" not in proc.stderr and "from_a_thread" not in proc.stderr
    count, last = proc.stdout.rstrip().split(" ", 1)
    assert count == "801" and last.endswith("(snd_pcm_open_noupdate) Unknown PCM from_a_thread"), proc.stdout


def test_without_libasound_it_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(alsa_log, "_load", lambda: None)
    for name, value in (("_lib", None), ("_handler", None), ("_active", False), ("_tried", False)):
        monkeypatch.setattr(alsa_log, name, value)
    assert alsa_log.install() is False
    with alsa_log.startup() as ok:
        assert ok is False
    assert not alsa_log.installed()


def test_the_alert_appears_only_with_warnings_and_names_underruns(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in (("_count", 0), ("_underruns", 0), ("_at_startup", 0), ("_recent", alsa_log.deque(maxlen=20))):
        monkeypatch.setattr(alsa_log, name, value)
    assert alsa_log.alerts() == []
    for _ in range(12):
        alsa_log._on_message(b"pcm.c", 8570, b"snd_pcm_recover", 0, b"underrun occurred")
    assert alsa_log.alerts() == ["audio: 12 ALSA warnings (underruns) hidden"]
    alsa_log._on_message(b"pcm.c", 2666, b"snd_pcm_open_noupdate", 0, b"Unknown PCM roomC")
    assert alsa_log.count() == 13 and alsa_log.underruns() == 12
    assert alsa_log.alerts() == [
        "audio: 13 ALSA warnings hidden (12 underruns; last: pcm.c:2666:(snd_pcm_open_noupdate) Unknown PCM roomC)"
    ]
    assert alsa_log.recent()[0] == "pcm.c:8570:(snd_pcm_recover) underrun occurred"
    alsa_log.reset()
    assert alsa_log.count() == 0 and alsa_log.alerts() == [] and alsa_log.recent() == []


def test_formats_like_printf_from_the_argument_words() -> None:
    name = ctypes.create_string_buffer(b"roomC")
    address = ctypes.addressof(name)
    minus_two = (1 << 64) - 2  # how a negative int arrives in a register
    assert alsa_log._format(b"Unknown PCM %s", (address,)) == "Unknown PCM roomC"
    assert alsa_log._format(b"card %i err %d (%u%%)", (3, minus_two, 7)) == "card 3 err -2 (7%)"
    assert alsa_log._format(b"[%5s|%-4d|%.2s|%03x|%c]", (address, 9, address, 255, 65)) == "[roomC|9   |ro|0ff|A]"
    assert alsa_log._format(b"%*d|%lu|%s", (4, 5, minus_two, 0)) == f"   5|{minus_two}|(null)"
    assert alsa_log._format(b"rate %f Hz", (1,)) == "rate %f Hz"  # floats travel elsewhere: the format stays
    assert alsa_log._format(b"%s and %s", (address,)) == "%s and %s"  # fewer words than conversions
