"""The command line's one error type."""

from __future__ import annotations


class CliError(Exception):
    """An error the user can fix: printed as one line, no traceback."""
