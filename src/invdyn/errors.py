"""Exceptions and warnings raised by invdyn.

Every error names the quantity, file or element at fault, so that a user can fix the input
without reading the source.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
# frames that a warning passes through to the user's line: invdyn's, and its context managers'
_PASSED = (_PACKAGE, contextlib.__file__)


class InvdynError(Exception):
    """Base class of every error raised by invdyn."""


class ModelError(InvdynError, ValueError):
    """A robot description is malformed or cannot be used for dynamics."""


class InputError(InvdynError, ValueError):
    """An argument has the wrong shape, type or a non-finite value."""


class DataError(InvdynError, ValueError):
    """A dataset is truncated, inconsistent or in an unknown format."""


class MissingExtraError(InvdynError, ImportError):
    """An optional extra that the work needs is not installed."""


class ModelWarning(UserWarning):
    """A robot description is usable but physically doubtful (for example a bad inertia)."""


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """`warnings.warn`, attributed to the first caller outside invdyn: the user's line, through
    whichever public function or context manager it came (so that warning filters by module
    and line apply)."""
    frame = sys._getframe(1)
    level = 2
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PASSED):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


def check_field(ok: bool, name: str, message: str, value: object) -> None:
    """`InputError` ``"<name> <message>, got <value>"`` unless `ok`: a check of the field
    `name` of a configuration."""
    if not ok:
        raise InputError(f"{name} {message}, got {value!r}")


def check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    """`InputError` unless the field `name` holds one of `choices`."""
    if value not in choices:
        raise InputError(f"{name} must be one of {list(choices)}, got {value!r}")
