"""Exceptions and warnings raised by invdyn.

Every error names the quantity, file or element at fault, so that a user can fix the input
without reading the source.
"""


class InvdynError(Exception):
    """Base class of every error raised by invdyn."""


class ModelError(InvdynError, ValueError):
    """A robot description is malformed or cannot be used for dynamics."""


class InputError(InvdynError, ValueError):
    """An argument has the wrong shape, type or a non-finite value."""


class DataError(InvdynError, ValueError):
    """A dataset is truncated, inconsistent or in an unknown format."""


class ModelWarning(UserWarning):
    """A robot description is usable but physically doubtful (for example a bad inertia)."""
