"""The exceptions csl_ai raises: one small hierarchy, all ValueErrors.

Every message names the bad field or echoes the bad input with repr, so a CLI can print
it as one line and exit.
"""


class CslError(ValueError):
    """Base class of every error csl_ai raises on bad input."""


class RulesError(CslError):
    """A rules configuration that is not allowed (player count, sides, options)."""


class DeckError(CslError):
    """A sky-deck file that cannot be read or fails validation."""


class NotationError(CslError):
    """Text that is not valid card or move notation."""


class IllegalMoveError(CslError):
    """A well-formed move that the rules do not allow in this state."""


class InvalidPositionError(CslError):
    """A position (one seat's view) that is malformed or impossible."""


class InvalidRecordError(CslError):
    """A game record that is malformed, or whose steps or scores are wrong."""


class RecordWriteError(CslError):
    """A record or results file that cannot be written."""


class TallyError(CslError):
    """End-of-game tallies that no game under the rules can produce."""
