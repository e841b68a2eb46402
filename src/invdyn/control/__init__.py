"""Control in joint space: reference trajectories and computed-torque tracking controllers.

Build a trajectory (`quintic`, `minimum_jerk`, `via_points`, `fourier`, `from_csv`), gains
(`Gains`) and a controller (`pd`, `pd_gravity`, `computed_torque`, `feedforward`, or by name from
`CONTROLLERS`); then ``tau = controller(t, q, v)`` at every control step.
"""

from invdyn.control.computed_torque import (
    CONTROLLERS,
    PD,
    ComputedTorque,
    Controller,
    ControllerFactory,
    Feedforward,
    Gains,
    JointController,
    PDGravity,
    computed_torque,
    feedforward,
    joint_inertia,
    pd,
    pd_gravity,
)
from invdyn.control.trajectories import (
    CubicSpline,
    Curve,
    FourierSeries,
    JointTrajectory,
    QuinticBlend,
    Trajectory,
    fourier,
    from_csv,
    minimum_jerk,
    quintic,
    via_points,
)

__all__ = [
    "CONTROLLERS",
    "PD",
    "ComputedTorque",
    "Controller",
    "ControllerFactory",
    "CubicSpline",
    "Curve",
    "Feedforward",
    "FourierSeries",
    "Gains",
    "JointController",
    "JointTrajectory",
    "PDGravity",
    "QuinticBlend",
    "Trajectory",
    "computed_torque",
    "feedforward",
    "fourier",
    "from_csv",
    "joint_inertia",
    "minimum_jerk",
    "pd",
    "pd_gravity",
    "quintic",
    "via_points",
]
