"""Built-in robot names: a few tiny robots shipped with invdyn and the example-robot-data set.

``invdyn.load("panda")`` looks the name up here. Three small robots used by the analytic tests
live inside invdyn (``src/invdyn/robots``); the rest are the URDFs of Gepetto's
`example-robot-data <https://github.com/Gepetto/example-robot-data>`_ package, under the names
and with the floating-base defaults of its ``robots_loader.py``: legged robots, humanoids and
flying bases float, arms, hands and fixed manipulators do not. That package is data only (a
cmeel wheel, no Python module) and is optional: ``pip install example-robot-data``.

Differences from ``example_robot_data.load``: no SRDF is read, so no reference postures and no
rotor inertias (armature stays zero); ``ur3`` is the UR3 (upstream maps it to the UR5);
``so100`` and ``so101`` are fixed-base arms (upstream gives them a free flyer); ``human`` gets a
plain free flyer, without upstream's rotated root placement; ``talos_legs`` (built by truncating
a Pinocchio model) and ``cassie`` (SDF only) are not available.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib.metadata
import importlib.resources
import sys
from functools import cache
from pathlib import Path
from typing import Literal

from invdyn.errors import ModelError
from invdyn.model import Model

Package = Literal["invdyn", "example-robot-data"]

INVDYN: Package = "invdyn"
ERD: Package = "example-robot-data"


@dataclasses.dataclass(frozen=True)
class RobotInfo:
    """A built-in robot.

    Attributes:
      name: the name `load_robot` accepts.
      path: the URDF file, relative to the package's robot directory.
      package: ``"invdyn"`` for the robots shipped with invdyn, or ``"example-robot-data"``.
      floating_base: whether the robot is loaded with a free-flyer root joint by default.
      description: one line about the robot.
    """

    name: str
    path: str
    package: Package
    floating_base: bool
    description: str


def _robot(name: str, path: str, floating_base: bool, description: str) -> RobotInfo:
    return RobotInfo(name, path, ERD, floating_base, description)


_TINY = (
    RobotInfo("pendulum", "pendulum.urdf", INVDYN, False, "simple pendulum, one revolute joint"),
    RobotInfo("double_pendulum", "double_pendulum.urdf", INVDYN, False, "planar double pendulum"),
    RobotInfo("planar_2r", "planar_2r.urdf", INVDYN, False, "planar two-link 2R arm"),
)

# example-robot-data, with the names and free-flyer choices of its robots_loader.py
_EXAMPLE_ROBOT_DATA = (
    # quadrupeds
    _robot("a1", "a1_description/urdf/a1.urdf", True, "Unitree A1 quadruped"),
    _robot("go1", "go1_description/urdf/go1.urdf", True, "Unitree Go1 quadruped"),
    _robot("go2", "go2_description/urdf/go2.urdf", True, "Unitree Go2 quadruped"),
    _robot("b1", "b1_description/urdf/b1.urdf", True, "Unitree B1 quadruped"),
    _robot("b1_z1", "b1_description/urdf/b1-z1.urdf", True, "Unitree B1 carrying a Z1 arm"),
    _robot("anymal", "anymal_b_simple_description/robots/anymal.urdf", True, "ANYbotics ANYmal B"),
    _robot("anymal_c", "anymal_c_simple_description/urdf/anymal.urdf", True, "ANYbotics ANYmal C"),
    _robot(
        "anymal_kinova",
        "anymal_b_simple_description/robots/anymal-kinova.urdf",
        True,
        "ANYmal B carrying a Kinova arm",
    ),
    _robot("laikago", "laikago_description/urdf/laikago.urdf", True, "Unitree Laikago"),
    _robot("hyq", "hyq_description/robots/hyq_no_sensors.urdf", True, "IIT HyQ quadruped"),
    _robot("solo8", "solo_description/robots/solo.urdf", True, "ODRI Solo 8-DoF quadruped"),
    _robot("solo12", "solo_description/robots/solo12.urdf", True, "ODRI Solo 12-DoF quadruped"),
    _robot("quadruped", "quadruped_description/urdf/quadruped.urdf", True, "small 8-DoF quadruped"),
    # bipeds and humanoids
    _robot("bolt", "bolt_description/robots/bolt.urdf", True, "ODRI Bolt biped"),
    _robot("talos", "talos_data/robots/talos_reduced.urdf", True, "PAL TALOS humanoid, reduced"),
    _robot(
        "talos_box",
        "talos_data/robots/talos_reduced_box.urdf",
        True,
        "TALOS reduced, box collision shapes",
    ),
    _robot("talos_full", "talos_data/robots/talos_full_v2.urdf", True, "TALOS with hands and head"),
    _robot(
        "talos_full_box",
        "talos_data/robots/talos_full_v2_box.urdf",
        True,
        "TALOS full, box collision shapes",
    ),
    _robot("talos_arm", "talos_data/robots/talos_left_arm.urdf", False, "TALOS left arm alone"),
    _robot("g1", "g1_description/urdf/g1_29dof_rev_1_0.urdf", True, "Unitree G1 humanoid, 29 DoF"),
    _robot(
        "g1_with_hands",
        "g1_description/urdf/g1_29dof_with_hand_rev_1_0.urdf",
        True,
        "Unitree G1 humanoid with three-finger hands",
    ),
    _robot("icub", "icub_description/robots/icub.urdf", True, "IIT iCub humanoid"),
    _robot(
        "icub_reduced",
        "icub_description/robots/icub_reduced.urdf",
        True,
        "iCub without eyes and hands",
    ),
    _robot("romeo", "romeo_description/urdf/romeo.urdf", True, "Aldebaran Romeo humanoid"),
    _robot("romeo_small", "romeo_description/urdf/romeo_small.urdf", True, "Romeo without fingers"),
    _robot(
        "simple_humanoid",
        "simple_humanoid_description/urdf/simple_humanoid.urdf",
        True,
        "simple 29-DoF humanoid",
    ),
    _robot(
        "simple_humanoid_classical",
        "simple_humanoid_description/urdf/simple_humanoid_classical.urdf",
        True,
        "simple humanoid, classical joint frames",
    ),
    _robot("human", "human_description/robots/human.urdf", True, "human body model (Dumas 2007)"),
    _robot(
        "alexander",
        "alexander_description/urdf/alexander_v1.lowerBodyOnly.urdf",
        True,
        "IHMC Alexander, lower body",
    ),
    _robot(
        "alex_nub_hands",
        "alex_description/urdf/alex_nub_hands.urdf",
        False,
        "IHMC Alex upper body, nub hands",
    ),
    _robot(
        "alex_psyonic_hands",
        "alex_description/urdf/alex_psyonic_hands.urdf",
        False,
        "IHMC Alex upper body, PSYONIC hands",
    ),
    _robot(
        "alex_sake_hands",
        "alex_description/urdf/alex_sake_hands.urdf",
        False,
        "IHMC Alex upper body, SAKE hands",
    ),
    _robot(
        "centauro", "centauro_description/urdf/centauro.urdf", True, "IIT Centauro, legs on wheels"
    ),
    # flying bases
    _robot(
        "hector", "hector_description/robots/quadrotor_base.urdf", True, "Hector quadrotor body"
    ),
    _robot("iris", "iris_description/robots/iris_simple.urdf", True, "3DR Iris quadrotor body"),
    _robot(
        "iris_rotors", "iris_description/robots/iris.urdf", True, "3DR Iris with spinning rotors"
    ),
    _robot(
        "borinot",
        "borinot_description/urdf/borinot_flying_arm_2.urdf",
        True,
        "Borinot hexarotor with a 2-DoF arm",
    ),
    _robot(
        "hextilt",
        "hextilt_description/urdf/hextilt_flying_arm_5.urdf",
        True,
        "tilted hexarotor with a 5-DoF arm",
    ),
    # mobile manipulators
    _robot("pr2", "pr2_description/urdf/pr2.urdf", True, "Willow Garage PR2"),
    _robot("tiago", "tiago_description/robots/tiago.urdf", False, "PAL TIAGo"),
    _robot("tiago_dual", "tiago_description/robots/tiago_dual.urdf", False, "PAL TIAGo, two arms"),
    _robot(
        "tiago_no_hand",
        "tiago_description/robots/tiago_no_hand.urdf",
        False,
        "PAL TIAGo without hand",
    ),
    _robot("tiago_pro", "tiago_pro_description/robots/tiago_pro.urdf", False, "PAL TIAGo Pro"),
    _robot("baxter", "baxter_description/urdf/baxter.urdf", False, "Rethink Baxter"),
    # arms
    _robot("panda", "panda_description/urdf/panda.urdf", False, "Franka Emika Panda with gripper"),
    _robot(
        "panda_collision",
        "panda_description/urdf/panda_collision.urdf",
        False,
        "Panda, primitive collision shapes",
    ),
    _robot("ur3", "ur_description/urdf/ur3_robot.urdf", False, "Universal Robots UR3"),
    _robot("ur3_gripper", "ur_description/urdf/ur3_gripper.urdf", False, "UR3 with a gripper"),
    _robot(
        "ur3_limited",
        "ur_description/urdf/ur3_joint_limited_robot.urdf",
        False,
        "UR3, joint limits of +-pi",
    ),
    _robot("ur5", "ur_description/urdf/ur5_robot.urdf", False, "Universal Robots UR5"),
    _robot("ur5_gripper", "ur_description/urdf/ur5_gripper.urdf", False, "UR5 with a gripper"),
    _robot(
        "ur5_limited",
        "ur_description/urdf/ur5_joint_limited_robot.urdf",
        False,
        "UR5, joint limits of +-pi",
    ),
    _robot("ur10", "ur_description/urdf/ur10_robot.urdf", False, "Universal Robots UR10"),
    _robot(
        "ur10_limited",
        "ur_description/urdf/ur10_joint_limited_robot.urdf",
        False,
        "UR10, joint limits of +-pi",
    ),
    _robot("kinova", "kinova_description/robots/kinova.urdf", False, "Kinova Jaco 6-DoF arm"),
    _robot("xarm7", "xarm_description/urdf/xarm7.urdf", False, "UFACTORY xArm 7"),
    _robot("z1", "z1_description/urdf/z1.urdf", False, "Unitree Z1 arm"),
    _robot("so100", "so_arm_description/urdf/so100.urdf", False, "SO-ARM100 low-cost arm"),
    _robot("so101", "so_arm_description/urdf/so101.urdf", False, "SO-ARM101 low-cost arm"),
    _robot(
        "finger_edu",
        "finger_edu_description/robots/finger_edu.urdf",
        False,
        "ODRI educational finger",
    ),
    _robot("asr_twodof", "asr_twodof_description/urdf/TwoDofs.urdf", False, "ASR 2-DoF arm"),
    # hands
    _robot(
        "allegro_right_hand",
        "allegro_hand_description/urdf/allegro_right_hand.urdf",
        False,
        "Wonik Allegro right hand",
    ),
    _robot(
        "allegro_left_hand",
        "allegro_hand_description/urdf/allegro_left_hand.urdf",
        False,
        "Wonik Allegro left hand",
    ),
    # pendulums (``double_pendulum`` is invdyn's own)
    _robot(
        "double_pendulum_erd",
        "double_pendulum_description/urdf/double_pendulum.urdf",
        False,
        "example-robot-data double pendulum",
    ),
    _robot(
        "double_pendulum_continuous",
        "double_pendulum_description/urdf/double_pendulum_continuous.urdf",
        False,
        "double pendulum with continuous joints",
    ),
    _robot(
        "double_pendulum_simple",
        "double_pendulum_description/urdf/double_pendulum_simple.urdf",
        False,
        "double pendulum, simplified inertias",
    ),
)

# other names users know, each mapped to a registered name
ALIASES: dict[str, str] = {
    "solo": "solo8",
    "anymal_b": "anymal",
    "talos_left_arm": "talos_arm",
    "talos_reduced": "talos",
    "allegro_left": "allegro_left_hand",
    "allegro_right": "allegro_right_hand",
    "quadrotor": "hector",
    "franka": "panda",
    "jaco": "kinova",
    "g1_29dof": "g1",
    "so_arm100": "so100",
    "so_arm101": "so101",
}

_REGISTRY: dict[str, RobotInfo] = {r.name: r for r in (*_TINY, *_EXAMPLE_ROBOT_DATA)}


def available_robots() -> dict[str, RobotInfo]:
    """Every built-in robot by name, installed or not (aliases excluded; see `ALIASES`)."""
    return dict(_REGISTRY)


def robot_info(name: str) -> RobotInfo:
    """The `RobotInfo` of a built-in name or alias.

    Raises:
      ModelError: the name is unknown; the message lists the closest names.
    """
    key = ALIASES.get(name, name)
    if key in _REGISTRY:
        return _REGISTRY[key]
    known = sorted([*_REGISTRY, *ALIASES])
    close = difflib.get_close_matches(name.lower(), known, n=5, cutoff=0.5)
    hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
    raise ModelError(
        f"unknown robot {name!r}{hint} (a file path needs a .urdf or .xml suffix; "
        "invdyn.io.robots.available_robots(), or 'invdyn robots', lists the built-in names)"
    )


def robot_path(name: str) -> Path:
    """The URDF file of a built-in robot.

    Raises:
      ModelError: the name is unknown, example-robot-data is not installed, or the file is
        missing from the installed package.
    """
    info = robot_info(name)
    root = _invdyn_dir() if info.package == INVDYN else example_robot_data_dir()
    if root is None:
        raise ModelError(
            f"robot {info.name!r} comes from example-robot-data, which is not installed: "
            "pip install example-robot-data"
        )
    path = root / info.path
    if not path.is_file():
        raise ModelError(
            f"robot {info.name!r}: {path} does not exist; the installed {info.package} "
            "package lacks this robot (upgrade it, or load the URDF by path)"
        )
    return path


def load_robot(
    name: str,
    *,
    floating_base: bool | None = None,
    strict: bool = False,
    friction: bool = False,
) -> Model:
    """Load a built-in robot by name.

    Args:
      name: a name of `available_robots` or an alias of `ALIASES`.
      floating_base: attach the root link by a free-flyer joint; ``None`` takes the robot's
        default (`RobotInfo.floating_base`).
      strict: raise `ModelError` instead of warning on physically doubtful inertias.
      friction: read joint damping and Coulomb friction from the URDF.

    Returns:
      The validated model, named `name` as registered, with ``source`` the URDF path.
    """
    from invdyn.io.urdf import load_urdf

    info = robot_info(name)
    path = robot_path(info.name)
    floating = info.floating_base if floating_base is None else bool(floating_base)
    model = load_urdf(path, floating_base=floating, strict=strict, friction=friction)
    return model.replace(name=info.name, source=str(path))


def is_installed(name: str) -> bool:
    """Whether the URDF of a built-in robot is present, so `load_robot` can find it."""
    try:
        robot_path(name)
    except ModelError:
        return False
    return True


def _invdyn_dir() -> Path:
    """The directory of the URDFs shipped inside invdyn."""
    return Path(str(importlib.resources.files("invdyn") / "robots"))


@cache
def example_robot_data_dir() -> Path | None:
    """The ``robots`` directory of the installed example-robot-data, or ``None``.

    The cmeel wheel installs the data under ``<site-packages>/cmeel.prefix/share``; conda and
    system packages put it under ``<prefix>/share``.
    """
    relative = Path("share", "example-robot-data", "robots")
    candidates = []
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        candidates.append(Path(str(dist.locate_file(Path("cmeel.prefix") / relative))))
        # otherwise the directory above any installed file under share/example-robot-data/robots
        marker = relative.as_posix() + "/"
        for file in dist.files or ():
            posix = Path(str(file)).as_posix()
            if marker in posix:
                prefix = posix[: posix.index(marker) + len(marker) - 1]
                candidates.append(Path(str(dist.locate_file(prefix))))
                break
    candidates += [Path(sys.prefix) / relative, Path(sys.base_prefix) / relative]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate.resolve()
    return None


__all__ = [
    "ALIASES",
    "RobotInfo",
    "available_robots",
    "example_robot_data_dir",
    "is_installed",
    "load_robot",
    "robot_info",
    "robot_path",
]
