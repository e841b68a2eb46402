"""invdyn: inverse dynamics for robots, analytic and learned."""

from typing import Any

from invdyn._headless import choose_gl_backend
from invdyn.centroidal import (
    center_of_mass,
    center_of_mass_jacobian,
    centroidal_momentum_matrix,
    centroidal_momentum_rate,
)
from invdyn.dynamics import (
    aba,
    aba_derivatives,
    bias,
    coriolis,
    gravity,
    mass_matrix,
    rnea,
    rnea_derivatives,
)
from invdyn.errors import DataError, InputError, InvdynError, ModelError, ModelWarning
from invdyn.io import load
from invdyn.kinematics import (
    forward_kinematics,
    frame_acceleration,
    frame_jacobian,
    frame_placement,
    frame_velocity,
)
from invdyn.model import JointType, Model, inertial_parameters
from invdyn.regressor import joint_torque_regressor, with_parameters

# before anything imports MuJoCo: none of the modules above does (see invdyn._headless)
choose_gl_backend()


def __getattr__(name: str) -> Any:
    """`__version__`, read from the installed package's metadata (pyproject.toml's version)
    when first asked for: importing importlib.metadata takes longer than the rest of
    ``import invdyn`` needs."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import version

    globals()["__version__"] = found = version("invdyn")
    return found


__all__ = [
    "DataError",
    "InputError",
    "InvdynError",
    "JointType",
    "Model",
    "ModelError",
    "ModelWarning",
    "__version__",
    "aba",
    "aba_derivatives",
    "bias",
    "center_of_mass",
    "center_of_mass_jacobian",
    "centroidal_momentum_matrix",
    "centroidal_momentum_rate",
    "coriolis",
    "forward_kinematics",
    "frame_acceleration",
    "frame_jacobian",
    "frame_placement",
    "frame_velocity",
    "gravity",
    "inertial_parameters",
    "joint_torque_regressor",
    "load",
    "mass_matrix",
    "rnea",
    "rnea_derivatives",
    "with_parameters",
]
