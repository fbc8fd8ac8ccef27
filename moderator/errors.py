"""The one root error of the project, and its families.

Every error a user can cause (bad roster, bad scenario, bad option) is a
``ModeratorError``; the CLI turns it into a message and a non-zero exit code.
"""


class ModeratorError(Exception):
    """Root of every error the CLI reports as a clean message."""

    exit_code = 2


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
