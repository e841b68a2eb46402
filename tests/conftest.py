"""Fixtures shared by the whole test suite."""

from __future__ import annotations

import functools
import re
import warnings
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import invdyn
from invdyn.configuration import random_configuration
from invdyn.io import robots
from invdyn.model import Model

ERD_INSTALLED = robots.example_robot_data_dir() is not None

# real robots that together cover every joint type (continuous: kinova and
# double_pendulum_continuous; prismatic: tiago_no_hand, pr2) and fixed and floating bases
SAMPLE_ROBOTS = [
    ("panda", False),
    ("ur5", False),
    ("talos", True),
    ("solo12", True),
    ("anymal", True),
    ("g1", True),
    ("icub", True),
    ("kinova", False),
    ("tiago_no_hand", False),
    ("pr2", True),
    ("double_pendulum_continuous", False),
]


@functools.cache
def invdyn_and_pinocchio(name: str, floating: bool) -> tuple[Model, object]:
    """The invdyn model of a built-in robot and Pinocchio's model of the same URDF."""
    pin = pytest.importorskip("pinocchio")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", invdyn.ModelWarning)
        model = invdyn.load(name, floating_base=floating)
    path = str(robots.robot_path(name))
    pmodel = (
        pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
        if floating
        else pin.buildModelFromUrdf(path)
    )
    return model, pmodel


def robot_params(cases: list[tuple[str, bool]]) -> list:
    """pytest parameters (name, floating) with ids such as ``talos-floating``."""
    return [
        pytest.param(name, floating, id=f"{name}-{'floating' if floating else 'fixed'}")
        for name, floating in cases
    ]


requires_erd = pytest.mark.skipif(not ERD_INSTALLED, reason="example-robot-data is not installed")

# the lines of a wait that said what it was doing (`invdyn._waits.announced`), which a busy
# machine prints where a quiet one does not
_ANNOUNCED = re.compile(r"^invdyn: .*(\.\.\.|: done in [0-9.]+ s)\n", re.MULTILINE)


def unannounced(err: str) -> str:
    """Standard error `err` without the lines of waits that said what they were doing."""
    return _ANNOUNCED.sub("", err)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run the ``invdyn`` command with arguments `argv` in this process.

    Returns:
      The exit status and what it printed on standard output and standard error.
    """
    from invdyn.cli import main

    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def mujoco_mass_matrix(mj_model, data) -> np.ndarray:
    """(nv, nv) MuJoCo's dense mass matrix of `data` (after mj_forward or mj_fwdPosition), in
    MuJoCo 3's and 4's calling conventions."""
    import mujoco

    mass = np.zeros((mj_model.nv, mj_model.nv))
    if hasattr(data, "qM"):
        mujoco.mj_fullM(mj_model, mass, data.qM)  # mujoco 3
    else:
        mujoco.mj_fullM(mj_model, data, mass)  # mujoco 4 reads the matrix from data
    return mass


def assert_close(
    actual: np.ndarray, expected: np.ndarray, *, rtol: float = 1e-9, what: str = "value"
) -> None:
    """Assert ``max |actual - expected| <= rtol * max(1, max |expected|)``.

    The error is measured against the largest entry of `expected` (an infinity-norm relative
    error with an absolute floor of `rtol`), so entries that are zero up to rounding do not
    demand a relative accuracy that no floating-point algorithm has.
    """
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert np.all(np.isfinite(actual)), f"{what}: non-finite entries"
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    error = float(np.max(np.abs(actual - expected), initial=0.0))
    assert error <= rtol * scale, (
        f"{what}: max abs error {error:.3e} > {rtol:.0e} * {scale:.3e} "
        f"(relative {error / scale:.3e}, worst index "
        f"{np.unravel_index(np.argmax(np.abs(actual - expected)), actual.shape)})"
    )


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    """A generator seeded by the test's name: reproducible, yet different for each test."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


@functools.cache
def _load_robot(name: str, floating_base: bool | None) -> Model:
    return robots.load_robot(name, floating_base=floating_base)


@pytest.fixture(scope="session")
def load_robot() -> Callable[..., Model]:
    """``load_robot(name, floating_base=None)``: a built-in robot, loaded once per session.

    Skips the test when the robot comes from example-robot-data and that is not installed.
    """

    def load(name: str, floating_base: bool | None = None) -> Model:
        info = robots.robot_info(name)
        if info.package == "example-robot-data" and not ERD_INSTALLED:
            pytest.skip("example-robot-data is not installed")
        return _load_robot(info.name, floating_base)

    return load


def load_quietly(name: str) -> Model:
    """``invdyn.load(name)``, its `invdyn.ModelWarning` s silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", invdyn.ModelWarning)
        return invdyn.load(name)


@pytest.fixture
def mujoco_log_elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the test in its tmp_path: MuJoCo writes MUJOCO_LOG.TXT into the working directory
    on a warning."""
    monkeypatch.chdir(tmp_path)


def driven_pendulums(
    n_episodes: int, steps: int, seed: int, dt: float
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Episodes (state (steps, 4) = (q, v), action (steps, 2)) of two damped pendulums on springs,
    m qdd = a - c qd - k q - g sin q by semi-implicit Euler, driven by a ~ N(0, 2^2): transitions
    whose inverse dynamics a small network learns in seconds."""
    mass, damping = np.array([1.0, 0.5]), np.array([0.5, 0.3])
    stiffness, gravity = np.array([2.0, 1.0]), np.array([5.0, 3.0])
    rng = np.random.default_rng(seed)
    episodes = []
    for _ in range(n_episodes):
        q, v = rng.uniform(-1, 1, 2), rng.uniform(-1, 1, 2)
        state = np.zeros((steps, 4))
        action = rng.normal(0.0, 2.0, (steps, 2))
        for t in range(steps):
            state[t] = np.concatenate([q, v])
            v = v + dt * (action[t] - damping * v - stiffness * q - gravity * np.sin(q)) / mass
            q = q + dt * v
        episodes.append((state, action))
    return episodes


# ----------------------------------------------------------------------------------------------
# robots of the dynamics identities, numpy and torch: the `robot` and `model` fixtures
# ----------------------------------------------------------------------------------------------

# a floating torso with two ball-jointed limbs, a hinge and a slide; joints sit at their body
# origins, so every invdyn body frame is the MuJoCo body frame (identity placement)
BALL_MJCF = """
<mujoco model="balls">
  <option gravity="0.3 -0.2 -9.81"/>
  <worldbody>
    <body name="torso" pos="0 0 1">
      <freejoint name="root"/>
      <inertial pos="0.02 -0.01 0.03" quat="0.9 0.1 0.2 -0.1" mass="3" diaginertia="0.1 0.12 0.08"/>
      <body name="upper" pos="0.2 0.1 -0.1" euler="10 20 -30">
        <joint name="shoulder" type="ball" armature="0.01" damping="0.2" frictionloss="0.1"/>
        <inertial pos="0 0 -0.15" mass="1.2" diaginertia="0.02 0.021 0.004"/>
        <body name="lower" pos="0 0 -0.3">
          <joint name="elbow" type="hinge" axis="0.2 1 0.1" damping="0.1"/>
          <inertial pos="0.01 0 -0.12" quat="0.8 0.2 -0.3 0.1" mass="0.8"
                    diaginertia="0.01 0.011 0.002"/>
          <body name="hand" pos="0 0 -0.25">
            <joint name="wrist" type="ball"/>
            <inertial pos="0 0.02 -0.04" mass="0.3" diaginertia="0.001 0.0012 0.0008"/>
          </body>
        </body>
      </body>
      <body name="leg" pos="-0.1 0 -0.2">
        <joint name="hip" type="ball" armature="0.02"/>
        <inertial pos="0 0 -0.2" mass="2" diaginertia="0.05 0.05 0.01"/>
        <body name="shin" pos="0 0 -0.4">
          <joint name="knee" type="slide" axis="0.1 0 1" frictionloss="0.3"/>
          <inertial pos="0 0.01 -0.15" mass="1" diaginertia="0.02 0.02 0.003"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

# (robot, floating base): arms, quadrupeds and humanoids; kinova and tiago_no_hand have continuous
# joints, panda, tiago_no_hand and pr2 prismatic ones, pr2 both on a floating base
# the shared sample, plus the other base of panda and solo12: the `robot` and `model` fixtures
ROBOTS = [*SAMPLE_ROBOTS, ("panda", True), ("solo12", False)]
CASES = [
    *(
        pytest.param(
            (name, floating),
            id=f"{name}-{'floating' if floating else 'fixed'}",
            marks=pytest.mark.skipif(not ERD_INSTALLED, reason="example-robot-data missing"),
        )
        for name, floating in ROBOTS
    ),
    pytest.param(("mjcf_balls", True), id="mjcf_balls"),
]


@pytest.fixture(scope="module")
def mjcf_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("mjcf") / "balls.xml"
    path.write_text(BALL_MJCF)
    return path


_MODELS: dict[tuple[str, bool], Model] = {}


@pytest.fixture(params=CASES, scope="module")
def robot(request, load_robot, mjcf_path) -> Model:
    """Each robot of CASES, loaded once."""
    name, floating = request.param
    key = (name, floating)
    if key not in _MODELS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", invdyn.ModelWarning)
            if name == "mjcf_balls":
                pytest.importorskip("mujoco")
                _MODELS[key] = invdyn.load(mjcf_path, friction=False)
            else:
                _MODELS[key] = load_robot(name, floating_base=floating)
    return _MODELS[key]


def with_joint_terms(model: Model, seed: int = 0) -> Model:
    """A copy of `model` with non-zero armature, viscous and Coulomb friction on every dof."""
    rng = np.random.default_rng(seed)
    return model.replace(
        dof_armature=rng.uniform(0.01, 0.1, model.nv),
        dof_damping=rng.uniform(0.1, 1.0, model.nv),
        dof_friction=rng.uniform(0.1, 1.0, model.nv),
    )


@pytest.fixture(params=[False, True], ids=["plain", "joint_terms"])
def model(request, robot) -> Model:
    return with_joint_terms(robot) if request.param else robot


def states(model: Model, seed: str, n: int = 3):
    """`n` random states (q, v, a), reproducible from `seed`."""
    rng = np.random.default_rng(zlib.crc32(seed.encode()))
    q = random_configuration(model, rng=rng, shape=n)
    v = rng.normal(size=(n, model.nv))
    a = rng.normal(size=(n, model.nv))
    return q, v, a


def rotation_blocks(model: Model) -> list[slice]:
    """The slices of q that hold a quaternion or a (cos θ, sin θ) pair."""
    return [
        slice(k + spec.direction.start, k + spec.direction.stop)
        for spec, k in zip(model.jnt_spec, model.jnt_qadr, strict=True)
        if spec.direction is not None
    ]


def same_quaternions(model: Model, q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
    """`q1` with each quaternion's sign flipped to agree with `q0`'s (q and -q are one rotation)."""
    q1 = np.array(q1)
    for block in rotation_blocks(model):
        if block.stop - block.start == 4:
            sign = np.sign(np.sum(q0[..., block] * q1[..., block], axis=-1, keepdims=True))
            q1[..., block] *= sign
    return q1


def off_unit(model: Model, q: np.ndarray, seed: int = 0) -> np.ndarray:
    """`q` (n, nq) with each quaternion and (cos θ, sin θ) pair scaled by its own factor in
    [0.2, 5]."""
    rng = np.random.default_rng(seed)
    out = np.array(q, dtype=np.float64)
    for block in rotation_blocks(model):
        out[:, block] *= np.exp(rng.uniform(np.log(0.2), np.log(5.0), size=(len(out), 1)))
    return out


def written_like(dataset, episodes, path, dtype=None):
    """`episodes` (in precision `dtype`; None: as they are) written to `path` as a dataset of
    `dataset`'s frame rate, names and source."""
    from invdyn.learn.datasets import Episode, write_dataset

    if dtype is not None:
        episodes = [
            Episode(e.state.astype(dtype), e.action.astype(dtype), e.timestamp) for e in episodes
        ]
    info = dataset.info
    return write_dataset(
        path, episodes, fps=info.fps, state_names=info.state_names,
        action_names=info.action_names, source=info.source,
    )  # fmt: skip
