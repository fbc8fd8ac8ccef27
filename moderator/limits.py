"""The limits on what moderator reads: one place that names them (the README's "Limits" lists them too).

Each keeps a broken or hostile file from costing minutes and gigabytes: beyond it the file is refused
with a one-line error, before anything big is built from it.
"""

from __future__ import annotations

#: A roster file (names, one per line, or a YAML/JSON list): far more than any party's names.
ROSTER_MAX_BYTES = 64 * 1024
#: A settings file (``--settings``).
SETTINGS_MAX_BYTES = 64 * 1024
#: A scenario file: a 10,000-step script is about 0.3 MB. Parsing 1 MB of YAML takes up to 10 s and 400 MB.
SCENARIO_MAX_BYTES = 1_000_000
#: Steps in one scenario (10,000 typed steps play in about 3 s).
SCENARIO_MAX_STEPS = 10_000
#: The latest (and, negative, the earliest) ``at`` of a scenario step, in seconds: 2 hours. A game's
#: audio (``--audio-out``) is held in memory until it is written, about 0.2 GB per room per hour.
SCRIPT_MAX_SECONDS = 2 * 3600
#: How deeply a YAML file may nest lists and mappings (ours nest 6 deep at most).
YAML_MAX_DEPTH = 64

#: The shortest round a variant may set, in seconds (a shorter one would be a round of 0 s) ...
ROUND_MIN_SECONDS = 1
#: ... and the longest (the rules' longest round is 5 minutes).
ROUND_MAX_SECONDS = 3600
#: Time warnings in a settings file's schedule.
SCHEDULE_MAX_WARNINGS = 20
#: The longest spoken countdown (``countdown:`` in a settings file), in seconds.
COUNTDOWN_MAX_SECONDS = 60

#: WAV files read (``recognize``, ``simulate --noise``, a scenario's ``audio:`` steps): the lowest sample
#: rate (telephone speech) ...
WAV_MIN_RATE = 8000
#: ... the highest ...
WAV_MAX_RATE = 192_000
#: ... the longest recording, in seconds ...
WAV_MAX_SECONDS = 600
#: ... the most channels (they are mixed down to mono) ...
WAV_MAX_CHANNELS = 8
#: ... and the most sample data, in bytes (10 minutes of 16-bit stereo at 96 kHz is 230 MB).
WAV_MAX_BYTES = 256 * 1024 * 1024
