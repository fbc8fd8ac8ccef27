#!/usr/bin/env bash
# Set up moderator on a fresh Debian/Ubuntu machine: system packages, then a virtualenv in .venv.
# Safe to run again; it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# System packages:
#   python3 python3-venv python3-pip   the virtualenv
#   libespeak-ng1 espeak-ng            pyttsx3's Linux voice (and the command-line fallback)
#   libportaudio2                      sounddevice's PortAudio
#   libspeexdsp1                       Speex's echo canceller: players are heard while the moderator talks
#   pulseaudio pulseaudio-utils libasound2-plugins
#                                      virtual speakers (null sinks) for the audio tests, on machines without a sound card
#   flite                              synthetic players' voices for the listening tests
#   pocketsphinx-testdata              short human recordings (LibriVox readings, spoken cards and digits): real
#                                      speech without commands for the false-accept benchmark (python -m benchmarks)
#   asterisk-core-sounds-en(-g722)     Asterisk's prompts, said by Allison Smith (16 kHz G.722) with transcripts: a
#                                      human voice for choosing (python -m benchmarks.human_dev), 10 MB
#   chromium chromium-driver           a real headless browser for the web panel's tests (play --web)
if command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends python3 python3-venv python3-pip \
    libespeak-ng1 espeak-ng libportaudio2 libspeexdsp1 pulseaudio pulseaudio-utils libasound2-plugins flite \
    pocketsphinx-testdata pocketsphinx sphinxtrain chromium chromium-driver \
    asterisk-core-sounds-en asterisk-core-sounds-en-g722 >/dev/null
fi

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
# whisper: the optional second opinion (--second-opinion whisper), about 500 MB; its tests run with the rest.
.venv/bin/python -m pip install -q -e '.[test,whisper]'
echo "moderator is set up: .venv/bin/moderator --help"
