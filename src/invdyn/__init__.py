"""invdyn: inverse dynamics for robots, analytic and learned."""

from invdyn.errors import DataError, InputError, InvdynError, ModelError, ModelWarning
from invdyn.model import JointType, Model

__version__ = "0.1.0"

__all__ = [
    "DataError",
    "InputError",
    "InvdynError",
    "JointType",
    "Model",
    "ModelError",
    "ModelWarning",
    "__version__",
]
