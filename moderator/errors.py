"""The one root error of the project, its families, and the exit codes the CLI gives them.

Every error a user can cause (bad roster, bad scenario, bad option) is a
``ModeratorError``; the CLI turns it into a message and an ``ExitStatus``.
"""

from enum import IntEnum


class ExitStatus(IntEnum):
    """What ``moderator`` exits with."""

    OK = 0
    ERROR = 1
    """A runtime error: a file, a device, the saved game or the recognizer failed."""
    USAGE = 2
    """A usage error: the command line itself is wrong (argparse's own status for its errors too)."""
    INTERRUPTED = 130
    """Ctrl-C (128 + SIGINT, as a shell reports it)."""
    BROKEN_PIPE = 141
    """The output's reader went away (``moderator presets | head``): 128 + SIGPIPE, as a shell reports it."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, with what the command has to say about it (``play``: the latest changes could not be saved)."""

    def __init__(self, note: str) -> None:
        super().__init__(note)
        self.note = note


class ModeratorError(Exception):
    """Root of every error the CLI reports as a clean message; a runtime error unless a subclass says not."""

    exit_code: ExitStatus = ExitStatus.ERROR


class UsageError(ModeratorError):
    """Options that do not go together, or a missing or malformed option, found before anything runs."""

    exit_code = ExitStatus.USAGE


class RulesError(ModeratorError):
    """A game set-up the rules do not allow (player count, rounds, ...)."""


class GrammarError(ModeratorError):
    """The command grammar file is invalid."""


class CatalogError(ModeratorError):
    """A phrase catalogue is invalid or lacks a key."""


class StatechartError(ModeratorError):
    """The statechart file is invalid."""


class ScenarioError(ModeratorError):
    """A scenario file is invalid (bad YAML, unknown player, ...)."""


class RosterError(ModeratorError):
    """A roster is invalid (too few names, duplicates, ...)."""


class JournalError(ModeratorError):
    """A saved game cannot be read or written."""


class DeviceError(ModeratorError):
    """An audio device is unknown or failed."""


class SynthesisError(ModeratorError):
    """Speech could not be synthesized."""


class WebError(ModeratorError):
    """The web panel cannot serve (its address is in use, or not this machine's)."""
