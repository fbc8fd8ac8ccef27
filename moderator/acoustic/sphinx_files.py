"""Sphinx model files the adaptation needs: pocketsphinx's quantized ``sendump`` read back into mixture weights,
and sphinxtrain's binary ``mixture_weights`` format, read and written.

The pocketsphinx wheel's en-us model has only ``sendump`` (the mixture weights as 8-bit log values, made by
``mk_s2sendump``); sphinxtrain's ``bw`` and ``map_adapt`` need ``mixture_weights``. The reading follows
sphinxtrain's ``python/cmusphinx/sendump.py`` (Python 2), ported to Python 3 and numpy.
"""

from __future__ import annotations

import struct
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


def write_s3_3d(path: Path | str, array: np.ndarray) -> None:
    """Write a 3-d float array in sphinxtrain's binary parameter format (``mixture_weights``), version 1.0."""
    a = np.ascontiguousarray(array, dtype="<f4")
    d1, d2, d3 = a.shape
    head = b"s3\nversion 1.0\n"
    pad = (len(head) + len(b"endhdr\n")) & 3
    head += (b" " * (4 - pad) if pad else b"") + b"endhdr\n"
    with open(path, "wb") as fh:
        fh.write(head)
        fh.write(struct.pack("<i", 0x11223344))
        fh.write(struct.pack("<IIII", d1, d2, d3, d1 * d2 * d3))
        fh.write(a.tobytes())


def read_s3_3d(path: Path | str) -> np.ndarray:
    """Read a 3-d sphinxtrain binary parameter file (``mixture_weights``); a checksum, if any, is ignored."""
    raw = Path(path).read_bytes()
    if not raw.startswith(b"s3\n"):
        raise ValueError(f"{path}: not a sphinx binary parameter file")
    end = raw.index(b"endhdr\n") + len(b"endhdr\n")
    order = "<" if struct.unpack("<i", raw[end : end + 4])[0] == 0x11223344 else ">"
    d1, d2, d3, n = struct.unpack(order + "IIII", raw[end + 4 : end + 20])
    if n != d1 * d2 * d3:
        raise ValueError(f"{path}: {n} values for {d1} x {d2} x {d3}")
    return np.frombuffer(raw[end + 20 : end + 20 + 4 * n], order + "f4").astype(np.float64).reshape(d1, d2, d3)
