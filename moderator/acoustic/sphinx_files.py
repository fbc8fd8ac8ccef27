"""Sphinx model files the adaptation needs: pocketsphinx's quantized ``sendump`` read back into mixture weights,
sphinxtrain's binary parameter files (``mixture_weights``, ``means``, ``variances``) read and written, and the PTM
model made continuous (``ptm_to_continuous``, for the build's ``continuous`` recipe).

The pocketsphinx wheel's en-us model has only ``sendump`` (the mixture weights as 8-bit log values, made by
``mk_s2sendump``); sphinxtrain's ``bw`` and ``map_adapt`` need ``mixture_weights``. The reading follows
sphinxtrain's ``python/cmusphinx/sendump.py`` (Python 2), ported to Python 3 and numpy.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

LOG_BASE = 1.0001
"""The log base of pocketsphinx's integer log values."""


@dataclass(frozen=True)
class Sendump:
    """A decoded ``sendump``: ``mixw[senone, feature, codeword]`` (probabilities, each row normalised to 1),
    and its header."""

    mixw: np.ndarray
    header: dict[str, str]
    quantized: np.ndarray
    """The raw bytes, ``[feature, codeword, senone]``, as stored."""


def _int(fh: BinaryIO, fmt: list[str]) -> int:
    """One int32; the first read decides the byte order (a length over 65536 means the other one)."""
    raw = fh.read(4)
    if len(raw) != 4:
        raise ValueError("sendump: unexpected end of file")
    value = struct.unpack(fmt[0], raw)[0]
    if value > 65536 and fmt[0] == "<I":
        fmt[0] = ">I"
        value = struct.unpack(fmt[0], raw)[0]
    return int(value)


def _string(fh: BinaryIO, fmt: list[str]) -> str | None:
    n = _int(fh, fmt)
    return None if n == 0 else fh.read(n)[:-1].decode("latin-1")


def read_sendump(path: Path | str) -> Sendump:
    """Read a pocketsphinx ``sendump`` (semi-continuous / PTM models) into mixture weights."""
    fmt = ["<I"]
    with open(path, "rb") as fh:
        header: dict[str, str] = {"title": _string(fh, fmt) or ""}
        while (line := _string(fh, fmt)) is not None:
            key, _, value = line.partition(" ")
            header[key] = value.strip()
        mixw_shift = int(header.get("mixw_shift", 10))
        features = int(header.get("feature_count", 0))
        codewords = int(header.get("cluster_count", 0))
        if codewords:
            raise ValueError("sendump: clustered (cluster_count > 0) files are not supported")
        codewords = _int(fh, fmt)  # "model_count" in sendump.py: codewords per codebook
        senones = _int(fh, fmt)  # "mixture_count": senones
        if not features:
            raise ValueError("sendump: no feature_count in the header")
        data = np.frombuffer(fh.read(), np.uint8)
    if len(data) < features * codewords * senones:
        raise ValueError(f"sendump: {len(data)} bytes for {features} x {codewords} x {senones}")
    quantized = data[: features * codewords * senones].reshape(features, codewords, senones)
    logs = quantized.astype(np.float64) * (1 << mixw_shift)
    mixw = np.power(LOG_BASE, -logs).transpose(2, 0, 1)  # [senone, feature, codeword]
    mixw /= mixw.sum(axis=2, keepdims=True)
    return Sendump(np.ascontiguousarray(mixw), header, quantized)


def _s3_header() -> bytes:
    """sphinxtrain's binary header, version 1.0, padded so that the values start on a 4-byte boundary."""
    head = b"s3\nversion 1.0\n"
    pad = (len(head) + len(b"endhdr\n")) & 3
    return head + (b" " * (4 - pad) if pad else b"") + b"endhdr\n" + struct.pack("<i", 0x11223344)


def write_s3_3d(path: Path | str, array: np.ndarray) -> None:
    """Write a 3-d float array in sphinxtrain's binary parameter format (``mixture_weights``), version 1.0."""
    a = np.ascontiguousarray(array, dtype="<f4")
    d1, d2, d3 = a.shape
    with open(path, "wb") as fh:
        fh.write(_s3_header())
        fh.write(struct.pack("<IIII", d1, d2, d3, d1 * d2 * d3))
        fh.write(a.tobytes())


def write_s3_gaussians(path: Path | str, array: np.ndarray) -> None:
    """Write ``means`` or ``variances``: ``array[codebook, feature stream, density, dimension]`` (every stream of
    the same length, as the en-us model's three of 13), in the format ``read_s3_block`` reads."""
    a = np.ascontiguousarray(array, dtype="<f4")
    codebooks, streams, densities, length = a.shape
    with open(path, "wb") as fh:
        fh.write(_s3_header())
        fh.write(struct.pack("<III", codebooks, streams, densities))
        fh.write(struct.pack(f"<{streams}I", *([length] * streams)))
        fh.write(struct.pack("<I", a.size))
        fh.write(a.tobytes())


def senone_phones(mdef_text: Path | str) -> np.ndarray:
    """Each senone's base phone, as its index among the base phones of a text ``mdef``: in a PTM model, the codebook
    whose Gaussians the senone's mixture weights weigh."""
    bases: dict[str, int] = {}
    phone_of: dict[int, int] = {}
    for fields in _mdef_phones(mdef_text):
        if fields[1:4] == ["-", "-", "-"]:
            bases[fields[0]] = len(bases)
        for senone in fields[6:-1]:
            phone_of[int(senone)] = bases[fields[0]]
    if sorted(phone_of) != list(range(len(phone_of))):
        raise ValueError(f"{mdef_text}: the senones are not numbered 0 to {len(phone_of) - 1}")
    return np.array([phone_of[s] for s in range(len(phone_of))])


@dataclass(frozen=True)
class Continuous:
    """A continuous model's parameters: each senone its own Gaussians (``means`` and ``variances`` are
    ``[senone, stream, density, dimension]``) and mixture weights (``mixw[senone, stream, density]``)."""

    means: np.ndarray
    variances: np.ndarray
    mixw: np.ndarray
    kept: np.ndarray
    """The share of each senone's and stream's original mixture weight that its densities carry."""


def ptm_to_continuous(means: np.ndarray, variances: np.ndarray, mixw: np.ndarray, phones: np.ndarray,
                      densities: int) -> Continuous:
    """A PTM model made continuous: each senone gets its own copy of the ``densities`` Gaussians of its base phone's
    codebook that its mixture weights weigh most, per stream, and those weights made to sum to 1 again.

    ``means`` and ``variances`` are the PTM codebooks, ``[phone, stream, density, dimension]``; ``mixw`` the
    senones' weights, ``[senone, stream, density]``; ``phones`` each senone's codebook (``senone_phones``). With all
    the densities it is the same model, each senone's Gaussians copied; with fewer, MAP can then move each senone's
    Gaussians on its own data, where the PTM model's are shared by every senone of a phone."""
    if not 1 <= densities <= mixw.shape[2]:
        raise ValueError(f"densities must be 1 to {mixw.shape[2]}, not {densities}")
    if len(phones) != mixw.shape[0]:
        raise ValueError(f"{len(phones)} senone phones for {mixw.shape[0]} senones")
    top = np.argsort(-mixw, axis=2, kind="stable")[:, :, :densities]  # [senone, stream, density]
    weights = np.take_along_axis(mixw, top, axis=2)
    kept = weights.sum(axis=2)
    streams = np.arange(mixw.shape[1])[None, :, None]
    codebook = phones[:, None, None]
    return Continuous(means[codebook, streams, top], variances[codebook, streams, top],
                      weights / kept[:, :, None], kept)


def read_s3_3d(path: Path | str) -> np.ndarray:
    """Read a 3-d sphinxtrain binary parameter file (``mixture_weights``); a checksum, if any, is ignored."""
    block = read_s3_block(path)
    if len(block.dims) != 3:
        raise ValueError(f"{path}: not a 3-d parameter file ({block.dims})")
    return block.data.astype(np.float64).reshape(block.dims)


def read_s3_gaussians(path: Path | str) -> np.ndarray:
    """Read ``means`` or ``variances`` whose streams are all of one length (``write_s3_gaussians``'s layout):
    ``[codebook, stream, density, dimension]``."""
    block = read_s3_block(path)
    if len(block.dims) < 4 or len(set(block.dims[3:])) != 1:
        raise ValueError(f"{path}: not a Gaussian file with streams of one length ({block.dims})")
    return block.data.reshape(*block.dims[:3], block.dims[3])


@dataclass(frozen=True)
class S3Block:
    """A sphinxtrain binary parameter file's values (``data``, flat float32 as stored) and where they lie in its
    bytes, so that some of them can be replaced and the file written back with its own header."""

    raw: bytes
    order: str
    start: int
    dims: tuple[int, ...]
    data: np.ndarray


def read_s3_block(path: Path | str) -> S3Block:
    """Read a sphinxtrain binary parameter file: ``mixture_weights`` or ``transition_matrices`` (3 dimensions), or
    ``means`` / ``variances`` (codebooks, features, densities, then one vector length per feature)."""
    raw = Path(path).read_bytes()
    if not raw.startswith(b"s3\n"):
        raise ValueError(f"{path}: not a sphinx binary parameter file")
    at = raw.index(b"endhdr\n") + len(b"endhdr\n")
    order = "<" if struct.unpack("<i", raw[at : at + 4])[0] == 0x11223344 else ">"
    ints = lambda k, n: struct.unpack(order + "I" * n, raw[k : k + 4 * n])  # noqa: E731
    if _is_gaussian(raw, at, order):
        n_cb, n_feat, density = ints(at + 4, 3)
        veclen = ints(at + 16, n_feat)
        start = at + 16 + 4 * n_feat
        (n,) = ints(start, 1)
        if n != n_cb * density * sum(veclen):
            raise ValueError(f"{path}: {n} values for {n_cb} x {density} x {veclen}")
        dims: tuple[int, ...] = (n_cb, n_feat, density, *veclen)
    else:
        d1, d2, d3, n = ints(at + 4, 4)
        if n != d1 * d2 * d3:
            raise ValueError(f"{path}: {n} values for {d1} x {d2} x {d3}")
        start, dims = at + 16, (d1, d2, d3)
    data = np.frombuffer(raw[start + 4 : start + 4 + 4 * n], order + "f4").copy()
    return S3Block(raw, order, start + 4, dims, data)


def _is_gaussian(raw: bytes, at: int, order: str) -> bool:
    """Whether the ints after the byte-order mark read as a Gaussian file's (codebooks, features, densities,
    vector lengths, total) rather than a 3-d file's (d1, d2, d3, total)."""
    n_cb, n_feat, density = struct.unpack(order + "III", raw[at + 4 : at + 16])
    if not 1 <= n_feat <= 4:
        return False
    rest = struct.unpack(order + "I" * (n_feat + 1), raw[at + 16 : at + 20 + 4 * n_feat])
    return rest[-1] == n_cb * density * sum(rest[:-1])


def write_s3_block(path: Path | str, block: S3Block, data: np.ndarray) -> None:
    """``block``'s file with its values replaced by ``data`` (same length), its header kept, and its checksum (when
    it ends with one) made anew."""
    values = np.ascontiguousarray(data, dtype=block.order + "f4")
    if values.size != block.data.size:
        raise ValueError(f"{values.size} values for a block of {block.data.size}")
    end = block.start + 4 * values.size
    raw = block.raw[: block.start] + values.tobytes() + block.raw[end:]
    at = raw.index(b"endhdr\n") + len(b"endhdr\n")
    if b"chksum0 yes" in raw[:at] and len(raw) == end + 4:  # sphinxtrain's checksum of everything after the mark
        words = np.frombuffer(raw[at + 4 : end], block.order + "u4")
        raw = raw[:end] + struct.pack(block.order + "I", _checksum(words))
    Path(path).write_bytes(raw)


def _checksum(words: np.ndarray) -> int:
    """sphinxbase's ``bio.c`` checksum of 4-byte values: rotate left by 20 bits, add."""
    total = 0
    for word in words.tolist():
        total = (((total << 20) | (total >> 12)) + word) & 0xFFFFFFFF
    return total


def filler_ids(mdef_text: Path | str) -> tuple[list[int], list[int], list[int]]:
    """(codebooks, senones, transition matrices) of the filler phones (SIL, +NSN+, +SPN+ ...) in a text ``mdef``:
    a PTM model has one codebook per base phone, in the order of the base phones."""
    codebooks, senones, tmats = [], [], []
    base = 0
    for fields in _mdef_phones(mdef_text):
        if fields[1:4] != ["-", "-", "-"]:
            continue
        if fields[4] == "filler" or fields[0] == "SIL":
            codebooks.append(base)
            tmats.append(int(fields[5]))
            senones.extend(int(s) for s in fields[6:-1])
        base += 1
    return codebooks, senones, tmats


def _mdef_phones(mdef_text: Path | str) -> Iterator[list[str]]:
    """The fields of each phone's line of a text ``mdef`` (base phones first, then triphones): base, left, right,
    position, attribute, transition matrix, senones, and "N"."""
    for line in Path(mdef_text).read_text().splitlines():
        fields = line.split()
        if len(fields) >= 8 and not line.startswith("#") and fields[-1] == "N":
            yield fields
