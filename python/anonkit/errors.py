"""The exceptions of anonkit: one class per status code of the library, each
carrying the library's message (anonkit_errmsg) and the status."""
from __future__ import annotations

from typing import Dict, Type


class Error(Exception):
    """A failure of the library. ``message`` is the library's text (as the
    command line prints it after ``anonkit:``), ``status`` the ANONKIT_E_* code."""

    status: int = -7

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class InputError(Error):
    """Bad input data or hierarchy (ANONKIT_E_INPUT): an unknown column, a value missing from a hierarchy."""

    status = -1


class UsageError(Error):
    """A bad or missing parameter (ANONKIT_E_USAGE): k larger than the table, an unknown option."""

    status = -2


class IneligibleError(Error):
    """The whole table cannot satisfy the privacy model (ANONKIT_E_INELIGIBLE)."""

    status = -3


class FileError(Error):
    """A file could not be read or written (ANONKIT_E_IO)."""

    status = -4


class OutOfMemoryError(Error):
    """The library ran out of memory (ANONKIT_E_NOMEM)."""

    status = -5


class ViolationError(Error):
    """check: a class violates the privacy model (ANONKIT_E_VIOLATION); the message names it."""

    status = -6


class InternalError(Error):
    """A bug in the library (ANONKIT_E_INTERNAL): please report it."""

    status = -7


class CancelledError(Error):
    """The run was cancelled from a progress callback."""

    status = -8


_BY_STATUS: Dict[int, Type[Error]] = {
    c.status: c
    for c in (InputError, UsageError, IneligibleError, FileError, OutOfMemoryError, ViolationError, InternalError,
              CancelledError)
}


def error_for(status: int, message: str) -> Error:
    """The exception of a status code."""
    return _BY_STATUS.get(status, Error)(message, status)
