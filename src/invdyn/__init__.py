"""invdyn: inverse dynamics for robots, analytic and learned."""

from invdyn._headless import choose_gl_backend
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
from invdyn.kinematics import forward_kinematics, frame_jacobian, frame_placement
from invdyn.model import JointType, Model
from invdyn.regressor import inertial_parameters, joint_torque_regressor, with_parameters

# before anything imports MuJoCo: none of the modules above does (see invdyn._headless)
choose_gl_backend()

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
    "aba",
    "aba_derivatives",
    "bias",
    "coriolis",
    "forward_kinematics",
    "frame_jacobian",
    "frame_placement",
    "gravity",
    "inertial_parameters",
    "joint_torque_regressor",
    "load",
    "mass_matrix",
    "rnea",
    "rnea_derivatives",
    "with_parameters",
]
