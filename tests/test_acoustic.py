"""The acoustic-model resolver, the shipped party model, and the model files the adaptation relies on."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from moderator.acoustic import DICTIONARY, PARTY, AcousticModelError, acoustic_model, missing_files
from moderator.acoustic.sphinx_files import read_s3_3d, read_sendump, write_s3_3d
from moderator.errors import ModeratorError

pocketsphinx = pytest.importorskip("pocketsphinx")

WHEEL = Path(pocketsphinx.get_model_path()) / "en-us"
MK_S2SENDUMP = Path("/usr/lib/sphinxtrain/mk_s2sendump")
shipped = pytest.mark.skipif(bool(missing_files(PARTY / "en-us")),
                             reason="the party model is not built")


def test_default_is_the_wheels_model():
    assert acoustic_model("default") is None


def test_a_path_that_does_not_exist_is_a_clear_error(tmp_path):
    with pytest.raises(ModeratorError, match="default or party"):
        acoustic_model(str(tmp_path / "nowhere"))
    with pytest.raises(AcousticModelError, match="does not exist"):
        acoustic_model("partey")


def test_an_incomplete_directory_is_refused(tmp_path):
    (tmp_path / "en-us").mkdir()
    (tmp_path / "en-us" / "mdef").write_bytes(b"")
    with pytest.raises(AcousticModelError, match="sendump"):
        acoustic_model(str(tmp_path))


def test_a_model_directory_is_taken_as_it_is():
    assert acoustic_model(str(WHEEL)) == WHEEL


def test_a_model_with_unpacked_mixture_weights_is_taken_and_one_with_neither_is_refused(tmp_path):
    """A continuous model (``build_party_model.py --recipe continuous``) has mixture_weights, not sendump."""
    (tmp_path / "en-us").mkdir()
    for name in ("mdef", "means", "variances", "transition_matrices", "mixture_weights", "feat.params", "noisedict"):
        (tmp_path / "en-us" / name).write_bytes(b"")
    (tmp_path / "cmudict-en-us.dict").write_bytes(b"")
    assert acoustic_model(str(tmp_path)) == tmp_path
    (tmp_path / "en-us" / "mixture_weights").unlink()
    with pytest.raises(AcousticModelError, match="sendump"):
        acoustic_model(str(tmp_path))


@shipped
def test_party_resolves_to_a_complete_layout(tmp_path):
    root = acoustic_model("party", cache=tmp_path)
    assert root is not None
    assert (root / "en-us" / "sendump").read_bytes() == (PARTY / "en-us" / "sendump").read_bytes()
    assert (root / DICTIONARY).resolve() == (WHEEL / DICTIONARY).resolve()
    assert acoustic_model("party", cache=tmp_path) == root  # made once, then reused


def _party_layout(cache: str) -> str:
    """A worker of the test below: the party model's layout in ``cache``, as each benchmark worker makes it."""
    return str(acoustic_model("party", cache=Path(cache)))


@shipped
def test_processes_that_start_at_once_all_get_the_layout(tmp_path):
    """A benchmark's workers (and two moderators started together) make the party model's layout at the same time
    in a cache where it is missing or points elsewhere: none of them fails, and the links end up right."""
    import multiprocessing

    other = tmp_path / "other"
    (other / "en-us").mkdir(parents=True)
    for round_ in range(3):
        cache = tmp_path / f"cache{round_}"
        if round_ == 1:  # a layout of another checkout's model, to be replaced
            (cache / "acoustic" / "party").mkdir(parents=True)
            (cache / "acoustic" / "party" / "en-us").symlink_to(other / "en-us", target_is_directory=True)
        if round_ == 2:  # a copy from a machine without symlinks, and a half-made link of a process that died
            shutil.copytree(PARTY / "en-us", cache / "acoustic" / "party" / "en-us")
            (cache / "acoustic" / "party" / ".en-us.1").symlink_to(other / "en-us")
        with multiprocessing.get_context("spawn").Pool(6) as pool:
            roots = pool.map(_party_layout, [str(cache)] * 12)
        root = cache / "acoustic" / "party"
        assert set(roots) == {str(root)}
        assert (root / "en-us").resolve() == (PARTY / "en-us").resolve()
        assert (root / DICTIONARY).resolve() == (WHEEL / DICTIONARY).resolve()
        # no half-made link of these processes is left (the dead process's is not theirs to remove)
        assert {p.name for p in root.iterdir()} == {DICTIONARY, "en-us"} | ({".en-us.1"} if round_ == 2 else set())


@shipped
@pytest.mark.skipif(shutil.which("flite") is None, reason="flite is not installed")
def test_the_party_model_recognizes_a_clean_command(tmp_path):
    from moderator.adapters.asr_pocketsphinx import PocketsphinxRecognizer
    from moderator.audio.clip import Clip
    from moderator.speech.grammar import load_grammar

    wav = tmp_path / "line.wav"
    subprocess.run(["flite", "-voice", "slt", "-t", "hostages Grace and Heidi", "-o", str(wav)], check=True)
    recognizer = PocketsphinxRecognizer(acoustic_model("party", cache=tmp_path))
    recognizer.expect(load_grammar("en"), ["Alice", "Bob", "Carol", "Grace", "Heidi"])
    clip = Clip.read(wav)
    heard = recognizer.recognize(clip.samples, clip.rate)
    assert heard.text == "hostages grace and heidi"


def test_sendump_reads_back_to_normalised_mixture_weights(tmp_path):
    dump = read_sendump(WHEEL / "en-us" / "sendump")
    assert dump.mixw.shape == (5126, 3, 128)  # senones x feature streams x codewords of the en-us PTM model
    assert np.allclose(dump.mixw.sum(axis=2), 1.0)
    write_s3_3d(tmp_path / "mixture_weights", dump.mixw)
    assert np.allclose(read_s3_3d(tmp_path / "mixture_weights"), dump.mixw, rtol=1e-6, atol=0)


@pytest.mark.skipif(not MK_S2SENDUMP.exists() or shutil.which("pocketsphinx_mdef_convert") is None,
                    reason="sphinxtrain and pocketsphinx (Debian) are not installed")
def test_sendump_round_trip_through_mk_s2sendump(tmp_path):
    """sendump -> mixture_weights (ours) -> sendump (sphinxtrain) gives back the wheel's bytes, except that
    weights under the floor come back at the floor."""
    dump = read_sendump(WHEEL / "en-us" / "sendump")
    write_s3_3d(tmp_path / "mixw", dump.mixw)
    subprocess.run(["pocketsphinx_mdef_convert", "-text", str(WHEEL / "en-us" / "mdef"), str(tmp_path / "mdef.txt")],
                   check=True, capture_output=True)
    subprocess.run([str(MK_S2SENDUMP), "-pocketsphinx", "yes", "-moddeffn", str(tmp_path / "mdef.txt"),
                    "-mixwfn", str(tmp_path / "mixw"), "-mwfloor", "1e-7", "-sendumpfn", str(tmp_path / "sendump")],
                   check=True, capture_output=True)
    again = read_sendump(tmp_path / "sendump").quantized.astype(int)
    original = dump.quantized.astype(int)
    floor = int(np.max(again))
    below = original < floor
    assert below.mean() > 0.9
    assert np.array_equal(again[below], original[below])
    assert np.all(again[~below] == floor)


def _model_copy(root: Path, calibration: str | None = None) -> Path:
    """A model directory whose en-us/ links to the wheel's files, with ``calibration`` as en-us/calibration.json."""
    (root / "en-us").mkdir(parents=True)
    for f in (WHEEL / "en-us").iterdir():
        (root / "en-us" / f.name).symlink_to(f)
    (root / DICTIONARY).symlink_to(WHEEL / DICTIONARY)
    if calibration is not None:
        (root / "en-us" / "calibration.json").write_text(calibration)
    return root


def test_a_models_calibration_file_sets_its_recognizers_midpoint_only(tmp_path):
    from moderator.adapters import asr_pocketsphinx as asr

    plain = asr.PocketsphinxRecognizer(_model_copy(tmp_path / "plain"))
    assert (plain.llr_midpoint, plain.llr_slope) == (asr.LLR_MIDPOINT, asr.LLR_SLOPE) == (-0.15, 22.0)
    default = asr.PocketsphinxRecognizer()
    assert (default.llr_midpoint, default.llr_slope) == (asr.LLR_MIDPOINT, asr.LLR_SLOPE)
    tuned = asr.PocketsphinxRecognizer(_model_copy(tmp_path / "tuned", '{"llr_midpoint": -0.3, "note": "dev"}'))
    assert (tuned.llr_midpoint, tuned.llr_slope) == (-0.3, asr.LLR_SLOPE)
    assert asr.confidence_from_llr(-0.3, tuned.llr_midpoint, tuned.llr_slope) == 0.5
    assert asr.confidence_from_llr(-0.3) < 0.05  # the module's default, and the other recognizers, are unchanged
    assert (plain.llr_midpoint, asr.LLR_MIDPOINT) == (-0.15, -0.15)
    assert asr.read_calibration(tmp_path / "tuned" / "en-us") == (-0.3, 22.0)
    with_slope = _model_copy(tmp_path / "slope", '{"llr_midpoint": -0.2, "llr_slope": 30}')
    assert asr.read_calibration(with_slope / "en-us") == (-0.2, 30.0)


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"llr_slope": 22}', '{"llr_midpoint": "low"}',
                                  '{"llr_midpoint": NaN}', '{"llr_midpoint": -0.2, "llr_slope": 0}',
                                  '{"llr_midpoint": true}'])
def test_a_malformed_calibration_file_is_a_clear_error(tmp_path, text):
    from moderator.adapters.asr_pocketsphinx import PocketsphinxRecognizer, RecognitionError

    root = _model_copy(tmp_path / "bad", text)
    with pytest.raises(RecognitionError, match=r"calibration\.json"):
        PocketsphinxRecognizer(root)


@pytest.mark.parametrize(("name", "dims"), [("means", (42, 3, 128, 13, 13, 13)),
                                            ("transition_matrices", (42, 3, 4))])
def test_a_parameter_file_is_written_back_with_only_the_chosen_values_changed(tmp_path, name, dims):
    from moderator.acoustic.sphinx_files import read_s3_block, write_s3_block

    block = read_s3_block(WHEEL / "en-us" / name)
    assert block.dims == dims and block.data.size == dims[0] * (sum(dims[3:]) * dims[2] if len(dims) > 3
                                                                  else dims[1] * dims[2])
    write_s3_block(tmp_path / name, block, block.data)
    assert (tmp_path / name).read_bytes() == block.raw, "the same values: the same file, checksum and all"
    data = block.data.copy()
    size = data.size // dims[0]
    data[size : 2 * size] = 7.0  # the second codebook (or matrix) only
    write_s3_block(tmp_path / name, block, data)
    again = read_s3_block(tmp_path / name)
    assert again.dims == dims and len(again.raw) == len(block.raw)
    assert np.all(again.data[size : 2 * size] == 7.0)
    assert np.array_equal(np.delete(again.data, np.s_[size : 2 * size]), np.delete(block.data, np.s_[size : 2 * size]))
    with pytest.raises(ValueError, match="values for a block"):
        write_s3_block(tmp_path / name, block, data[:-1])


@pytest.mark.skipif(shutil.which("pocketsphinx_mdef_convert") is None, reason="pocketsphinx (Debian) is not installed")
def test_the_filler_phones_are_silence_and_the_two_noises(tmp_path):
    from moderator.acoustic.sphinx_files import filler_ids

    subprocess.run(["pocketsphinx_mdef_convert", "-text", str(WHEEL / "en-us" / "mdef"), str(tmp_path / "mdef.txt")],
                   check=True, capture_output=True)
    codebooks, senones, tmats = filler_ids(tmp_path / "mdef.txt")
    lines = [line.split() for line in (tmp_path / "mdef.txt").read_text().splitlines()]
    bases = [f[0] for f in lines if len(f) > 7 and f[1:4] == ["-", "-", "-"]]
    assert [bases[i] for i in codebooks] == ["+NSN+", "+SPN+", "SIL"]
    assert len(senones) == 9 and tmats == codebooks


def test_fewer_densities_keep_each_senones_heaviest_gaussians_of_its_phone(tmp_path):
    from moderator.acoustic.sphinx_files import ptm_to_continuous

    # 2 phones' codebooks of 4 densities in 1 stream of 2 dimensions; 3 senones, the last of phone 0.
    means = np.arange(16, dtype=np.float32).reshape(2, 1, 4, 2)
    variances = means + 100
    mixw = np.array([[[0.1, 0.5, 0.3, 0.1]], [[0.4, 0.0, 0.2, 0.4]], [[0.25, 0.25, 0.05, 0.45]]])
    model = ptm_to_continuous(means, variances, mixw, np.array([0, 1, 0]), 2)
    assert model.means.shape == (3, 1, 2, 2)
    assert model.means[0, 0].tolist() == [[2, 3], [4, 5]]  # phone 0's densities 1 and 2 (weights 0.5, 0.3)
    assert model.means[1, 0].tolist() == [[8, 9], [14, 15]]  # phone 1's densities 0 and 3; ties keep their order
    assert model.means[2, 0].tolist() == [[6, 7], [0, 1]]  # phone 0's densities 3 and 0
    assert np.array_equal(model.variances, model.means + 100)
    assert np.allclose(model.mixw[:, 0], [[0.5 / 0.8, 0.3 / 0.8], [0.5, 0.5], [0.45 / 0.7, 0.25 / 0.7]])
    assert np.allclose(model.kept[:, 0], [0.8, 0.8, 0.7])
    with pytest.raises(ValueError, match="densities must be 1 to 4"):
        ptm_to_continuous(means, variances, mixw, np.array([0, 1, 0]), 5)
    with pytest.raises(ValueError, match="2 senone phones for 3 senones"):
        ptm_to_continuous(means, variances, mixw, np.array([0, 1]), 2)


def _wheel_ptm(tmp_path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The wheel's codebooks (means, variances), mixture weights and each senone's phone."""
    from moderator.acoustic.sphinx_files import read_s3_gaussians, senone_phones

    subprocess.run(["pocketsphinx_mdef_convert", "-text", str(WHEEL / "en-us" / "mdef"), str(tmp_path / "mdef.txt")],
                   check=True, capture_output=True)
    return (read_s3_gaussians(WHEEL / "en-us" / "means"), read_s3_gaussians(WHEEL / "en-us" / "variances"),
            read_sendump(WHEEL / "en-us" / "sendump").mixw, senone_phones(tmp_path / "mdef.txt"))


@pytest.mark.skipif(shutil.which("pocketsphinx_mdef_convert") is None, reason="pocketsphinx (Debian) is not installed")
def test_the_wheels_model_made_continuous_with_every_density_is_the_same_mixture(tmp_path):
    from moderator.acoustic.sphinx_files import ptm_to_continuous

    means, variances, mixw, phones = _wheel_ptm(tmp_path)
    assert len(phones) == 5126 and phones.max() == 41  # 42 base phones (fillers included), one codebook each
    some = np.arange(0, 5126, 97)  # every 97th senone: all 128 densities of all 5126 would be 200 MB
    model = ptm_to_continuous(means, variances, mixw[some], phones[some], 128)
    assert np.allclose(model.kept, 1.0)
    for row, senone in enumerate(some):
        for stream in range(3):
            order = np.lexsort((model.means[row, stream, :, 0], model.mixw[row, stream]))
            original = np.lexsort((means[phones[senone], stream, :, 0], mixw[senone, stream]))
            assert np.array_equal(model.means[row, stream][order], means[phones[senone], stream][original])
            assert np.allclose(model.mixw[row, stream][order], mixw[senone, stream][original])


@pytest.mark.skipif(shutil.which("pocketsphinx_mdef_convert") is None or shutil.which("flite") is None,
                    reason="pocketsphinx (Debian) or flite is not installed")
def test_a_continuous_model_written_from_the_wheels_loads_and_hears_a_command(tmp_path):
    """What the build's continuous recipe starts from: pocketsphinx reads the files as a continuous model."""
    from moderator.acoustic.sphinx_files import ptm_to_continuous, read_s3_3d, read_s3_block, write_s3_gaussians
    from moderator.adapters.asr_pocketsphinx import PocketsphinxRecognizer
    from moderator.audio.clip import Clip
    from moderator.speech.grammar import load_grammar

    model = ptm_to_continuous(*_wheel_ptm(tmp_path), 16)
    hmm = tmp_path / "cont" / "en-us"
    hmm.mkdir(parents=True)
    write_s3_gaussians(hmm / "means", model.means)
    write_s3_gaussians(hmm / "variances", model.variances)
    write_s3_3d(hmm / "mixture_weights", model.mixw)
    for name in ("mdef", "noisedict", "transition_matrices"):
        (hmm / name).symlink_to(WHEEL / "en-us" / name)
    (hmm / "feat.params").write_text((WHEEL / "en-us" / "feat.params").read_text().replace("-model ptm", "-model cont"))
    (tmp_path / "cont" / DICTIONARY).symlink_to(WHEEL / DICTIONARY)
    back = read_s3_block(hmm / "means")
    assert back.dims == (5126, 3, 16, 13, 13, 13) and np.array_equal(back.data, model.means.ravel())
    assert np.allclose(read_s3_3d(hmm / "mixture_weights"), model.mixw)

    wav = tmp_path / "line.wav"
    subprocess.run(["flite", "-voice", "slt", "-t", "hostages Grace and Heidi", "-o", str(wav)], check=True)
    recognizer = PocketsphinxRecognizer(tmp_path / "cont")
    recognizer.expect(load_grammar("en"), ["Alice", "Bob", "Carol", "Grace", "Heidi"])
    clip = Clip.read(wav)
    assert recognizer.recognize(clip.samples, clip.rate).text == "hostages grace and heidi"
