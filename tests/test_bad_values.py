"""Bad command-line values (exit 2), outputs that cannot be written, and bad WAV files (issue 15).

Each is a one-line error; nothing is left half done, and no input file is changed.
"""

from __future__ import annotations

import io
import struct
from pathlib import Path

import numpy as np
import pytest
from fake_recognizer import ScriptedRecognizer

from moderator import cli, limits
from moderator.audio.clip import AudioError, Clip, wav_header
from moderator.env import Environment
from moderator.errors import ExitStatus

SCENARIO = "players: [Alice, Bob, Carol, Dave, Erin, Frank]\noptions: {mics: shared}\nsteps:\n  - {at: 1, say: pause}\n"


def run(*argv: str, recognizer: ScriptedRecognizer | None = None) -> tuple[int, str, str]:
    """The CLI in-process: (status, stdout, stderr)."""
    env = Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())
    if recognizer is not None:
        env.make_recognizer = lambda *args, **kwargs: recognizer
    status = cli.main(list(argv), env)
    return status, env.stdout.getvalue(), env.stderr.getvalue()


def one_line(err: str, *words: str) -> None:
    assert err.startswith("moderator: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    for word in words:
        assert word in err, err


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "game.yaml"
    path.write_text(SCENARIO)
    return path


# --- numbers on the command line: exit 2 ----------------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "words"), [
    (["--round-minutes", "nan"], ["--round-minutes must be positive", "got nan"]),
    (["--round-minutes", "inf"], ["got inf"]),
    (["--round-minutes=-inf"], ["got -inf"]),
    (["--round-minutes", "1e308"], ["--round-minutes 1e+308 is too long: a round lasts at most 60 minutes"]),
    (["--round-minutes", "61"], ["at most 60 minutes"]),
    (["--round-minutes", "0"], ["must be positive"]),
    (["--round-minutes", "0.0067"], ["--round-minutes 0.0067 is a round of 0.4 s; a round lasts at least 1 s"]),
    (["--durations", "0,60,60"], ["--durations: a round lasts 1 to 3600 seconds; got 0"]),
    (["--durations", "60,60,99999999999999999999999"], ["got 99999999999999999999999"]),
])
def test_round_lengths_out_of_range_exit_2(argv: list[str], words: list[str]) -> None:
    status, out, err = run("plan", "--players", "8", *argv)
    assert (status, out) == (ExitStatus.USAGE, "")
    one_line(err, *words)


def test_a_round_of_a_minute_and_a_bit_is_rounded_to_the_second() -> None:
    status, out, err = run("plan", "--players", "8", "--round-minutes", "1.004", "--json")
    assert (status, err) == (0, "")
    assert '"seconds": 60' in out


@pytest.mark.parametrize(("option", "value"), [("--snr", "nan"), ("--snr", "inf"), ("--echo", "nan")])
def test_decibels_must_be_finite(scenario: Path, option: str, value: str) -> None:
    before = scenario.read_bytes()
    extra = ["--noise", "babble"] if option == "--snr" else ["--input", "voice"]
    status, _, err = run("simulate", str(scenario), *extra, option, value)
    assert status == ExitStatus.USAGE
    one_line(err, f"{option} takes a number of decibels, e.g. 12; got {value}")
    assert scenario.read_bytes() == before


@pytest.mark.parametrize(("extra", "words"), [
    (["--repeats", "2"], "--repeats is for spoken commands: use it with --input voice"),
    (["--input", "voice", "--repeats", "-1"], "--repeats takes a count of 0 or more; got -1"),
])
def test_repeats_are_for_voices_and_counted(scenario: Path, extra: list[str], words: str) -> None:
    status, _, err = run("simulate", str(scenario), *extra)
    assert status == ExitStatus.USAGE
    one_line(err, words)


# --- outputs --------------------------------------------------------------------------------------------------------


def test_audio_out_naming_a_file_exits_2_before_the_game(scenario: Path) -> None:
    status, out, err = run("simulate", str(scenario), "--audio-out", "/proc/version")
    assert (status, out) == (ExitStatus.USAGE, "")
    one_line(err, "--audio-out /proc/version is not a directory")


def test_audio_out_that_cannot_be_made_exits_1(scenario: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    status, _, err = run("simulate", str(scenario), "--audio-out", str(tmp_path / "file" / "out"))
    assert status == ExitStatus.ERROR
    one_line(err, "cannot make the --audio-out directory", "Not a directory")
    assert (tmp_path / "file").read_text() == "x"


def test_play_checks_audio_out_too(tmp_path: Path) -> None:
    status, _, err = run("play", "--players", "Alice,Bob,Carol,Dave,Erin,Frank", "--audio-out", "/proc/version",
                         "--state", str(tmp_path / "game.json"))
    assert status == ExitStatus.USAGE
    one_line(err, "--audio-out /proc/version is not a directory")


@pytest.mark.parametrize(("events", "words"), [
    ("/proc/version", ["cannot write the event log /proc/version"]),
    ("{tmp}", ["cannot write the event log", "Is a directory"]),
])
def test_an_event_log_that_cannot_be_written_exits_1(scenario: Path, tmp_path: Path, events: str,
                                                      words: list[str]) -> None:
    status, _, err = run("simulate", str(scenario), "--quiet", "--events", events.format(tmp=tmp_path))
    assert status == ExitStatus.ERROR
    one_line(err, *words)


def test_the_event_log_may_not_overwrite_the_scenario(scenario: Path) -> None:
    before = scenario.read_bytes()
    status, _, err = run("simulate", str(scenario), "--events", str(scenario))
    assert status == ExitStatus.USAGE
    one_line(err, f"--events would overwrite {scenario}, which this command reads")
    assert scenario.read_bytes() == before


# --- WAV files ------------------------------------------------------------------------------------------------------


def wav(path: Path, *, rate: int = 16000, channels: int = 1, width: int = 2, fmt: int = 1, data: bytes = b"",
        frames: int | None = None) -> Path:
    """A WAV file whose header says what it is told to, whatever the data."""
    block = channels * width
    chunk = struct.pack("<HHIIHH", fmt, channels, rate, (rate * block) & 0xFFFFFFFF, block & 0xFFFF, 8 * width)
    size = len(data) if frames is None else frames * block
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(chunk)) + chunk + b"data" + struct.pack("<I", size) + data
    path.write_bytes(b"RIFF" + struct.pack("<I", len(body)) + body)
    return path


def raw(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


SECOND = b"\x00\x00" * 16000


@pytest.mark.parametrize(("make", "words"), [
    (lambda p: raw(p, b""), ["cannot read WAV", ": the file is empty"]),
    (lambda p: raw(p, b"RIFF\x10\x00"), ["the file is cut short (6 bytes): its header is incomplete"]),
    (lambda p: raw(p, b"ID3\x03 not a wav"), ["not a WAV file"]),
    (lambda p: wav(p, rate=0, data=SECOND), ["sample rate of 0 Hz; moderator reads 8000 to 192000 Hz"]),
    (lambda p: wav(p, rate=1, data=SECOND), ["sample rate of 1 Hz"]),
    (lambda p: wav(p, rate=10**9, data=SECOND), ["sample rate of 1000000000 Hz"]),
    (lambda p: wav(p, width=3, data=b"\0" * 48000), ["24-bit samples are not supported"]),
    (lambda p: wav(p, fmt=3, width=4, data=b"\0" * 64000), ["only uncompressed PCM WAV"]),
    (lambda p: wav(p, channels=9, data=b"\0" * 18 * 100), ["9 channels; moderator reads at most 8"]),
    (lambda p: wav(p, rate=8000, width=1, data=b"\x80" * 8000 * (limits.WAV_MAX_SECONDS + 1)),
     ["it holds 601 s of audio", "at most 600 s"]),
])
def test_a_bad_wav_is_one_line_for_recognize(tmp_path: Path, make: object, words: list[str]) -> None:
    path = make(tmp_path / "take.wav")  # type: ignore[operator]
    before = path.read_bytes()
    status, out, err = run("recognize", str(path), "--players", "Alice,Bob", recognizer=ScriptedRecognizer(["pause"]))
    assert (status, out) == (ExitStatus.ERROR, "")
    one_line(err, f"cannot read WAV {path}", *words)
    assert path.read_bytes() == before


def test_a_wav_name_too_long_for_the_file_system_is_one_line() -> None:
    status, _, err = run("recognize", "a" * 5000 + ".wav", "--players", "Alice,Bob", recognizer=ScriptedRecognizer([]))
    assert status == ExitStatus.ERROR
    one_line(err, "cannot read WAV aaa", "File name too long")


def test_a_wav_whose_header_does_not_know_its_length_is_read(tmp_path: Path) -> None:
    # arecord writing to a pipe leaves the largest size in the header: the data is what the file holds.
    path = wav(tmp_path / "piped.wav", data=SECOND, frames=0x7FFFFFFF)
    clip = Clip.read(path)
    assert (clip.rate, len(clip.samples)) == (16000, 16000)


def test_a_scenario_audio_step_is_checked_when_the_scenario_is_loaded(tmp_path: Path) -> None:
    wav(tmp_path / "take.wav", rate=1, data=SECOND)
    path = tmp_path / "game.yaml"
    path.write_text(SCENARIO.replace("{at: 1, say: pause}", "{at: 1, audio: take.wav}"))
    status, _, err = run("simulate", str(path), "--events", str(tmp_path / "events.jsonl"))
    assert status == ExitStatus.ERROR
    one_line(err, f"{path}: step 1: cannot read WAV", "sample rate of 1 Hz")
    assert not (tmp_path / "events.jsonl").exists()


def test_a_good_wav_passes_the_limits(tmp_path: Path) -> None:
    path = tmp_path / "ok.wav"
    Clip(np.zeros(8000, np.float32), 8000).write(path)
    assert wav_header(path) == (1, 2, 8000, 8000)
    with pytest.raises(AudioError, match="cannot read WAV"):
        wav_header(tmp_path / "missing.wav")


# --- the limits are documented --------------------------------------------------------------------------------------


def test_every_limit_is_in_the_readme_with_its_value() -> None:
    from moderator.inputs import size_text

    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Limits\n", 1)[1].split("\n## ", 1)[0]
    names = [name for name in vars(limits) if name.isupper()]
    assert len(names) == 15
    for name in names:
        row = next((line for line in section.splitlines() if f"`{name}`" in line), None)
        assert row is not None, f"{name} is not in the README's Limits"
        value = getattr(limits, name)
        shown = [size_text(value)] if name.endswith("_BYTES") else [str(value), f"{value:,}"]
        assert any(text in row for text in shown), (name, shown, row)
