"""Oracle: invdyn against MuJoCo on every example-robot-data robot that MuJoCo compiles.

MuJoCo reads each URDF itself (its own importer, with visual and collision elements removed so
that no mesh is needed), so the comparison also checks the URDF semantics of invdyn's loader.
``mj_rne`` with ``flg_acc=1`` gives ``M(q) qacc + c(q, qvel)`` without armature or passive
forces, which is invdyn's ``rnea`` of the ideal rigid-body tree; ``mj_fullM`` gives ``M(q)``.
MuJoCo rejects some inertias that Pinocchio and invdyn accept (not positive definite, or
breaking the triangle inequality); for those robots the test checks that the refusal is about
inertias only.

Joints are matched by name, and states converted by `invdyn.io.mujoco_state.to_mujoco_state`.
MuJoCo's free joint has its linear velocity in the world frame where invdyn (like Pinocchio)
expresses it in the base frame, so ``qacc``, the forces and the mass matrix are converted here.

Agreement means ``max |invdyn - mujoco| <= 1e-9 * max(1, max |mujoco|)``.
"""

from __future__ import annotations

import functools
import warnings
import xml.etree.ElementTree as ET
import zlib

import numpy as np
import pytest

import invdyn
from conftest import assert_close, mujoco_mass_matrix, requires_erd
from invdyn import configuration
from invdyn.io import mujoco_state, robots
from invdyn.spatial import quaternion_to_matrix

mujoco = pytest.importorskip("mujoco")

pytestmark = requires_erd

RTOL = 1e-9
NSTATES = 3

ROBOTS = robots.available_robots()
ERD = [n for n, r in ROBOTS.items() if r.package == "example-robot-data"]
FLOATING = [n for n in ERD if ROBOTS[n].floating_base]


@pytest.fixture(autouse=True)
def _mujoco_log_elsewhere(tmp_path, monkeypatch):
    # mujoco writes MUJOCO_LOG.TXT into the working directory on a warning
    monkeypatch.chdir(tmp_path)


def _mujoco_urdf(path) -> str:
    """The URDF text with visuals and collisions removed and MuJoCo compiler options added."""
    root = ET.parse(path).getroot()
    for parent in root.iter():
        for child in list(parent):
            if child.tag in ("visual", "collision", "mujoco"):
                parent.remove(child)
    options = ET.SubElement(root, "mujoco")
    # fusing static bodies would drop the rotational inertia of massless links (bolt's feet)
    ET.SubElement(
        options,
        "compiler",
        fusestatic="false",
        discardvisual="true",
        balanceinertia="false",
        inertiafromgeom="false",
    )
    return ET.tostring(root, encoding="unicode")


@functools.cache
def _models(name: str, floating: bool):
    """The invdyn model and the compiled MjModel of one robot, or a skip reason."""
    spec = mujoco.MjSpec.from_string(_mujoco_urdf(robots.robot_path(name)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", invdyn.ModelWarning)
        model = invdyn.load(name, floating_base=floating)
    if floating:
        root = spec.worldbody.first_body()
        if root.name != model.body_name[0]:
            return None, None, f"MuJoCo's root body {root.name!r} is not {model.body_name[0]!r}"
        root.add_freejoint(name="root_joint")
    try:
        mj_model = spec.compile()
    except Exception as exc:
        return None, None, f"MuJoCo rejects {name}: {str(exc).splitlines()[0]}"
    if mj_model.nv == 0:
        return None, None, f"{name} has no moving joint with a fixed base"
    mj_model.dof_armature[:] = 0.0
    return model, mj_model, None


def _load(name: str, floating: bool):
    model, mj_model, reason = _models(name, floating)
    assert reason is None, reason
    return model, mj_model


class _Layout:
    """Index maps between invdyn's ``v`` and MuJoCo's ``qvel``, joints matched by name."""

    def __init__(self, model, mj_model):
        names = [mj_model.joint(j).name for j in range(mj_model.njnt)]
        assert sorted(names) == sorted(model.joint_names), "joint names differ"
        assert mj_model.nv == model.nv
        self.model = model
        # dof_perm[k]: MuJoCo dof of invdyn's velocity coordinate k
        joints = mujoco_state.mujoco_index(model, mj_model)
        self.dof_perm = np.concatenate(
            [mj_model.jnt_dofadr[j] + np.arange(model.jnt_nv[i]) for i, j in enumerate(joints)]
        )
        assert sorted(self.dof_perm) == list(range(model.nv))

    def base_rotation(self, q):
        """(nv, nv) map T with MuJoCo ``qvel[dof_perm] = T @ v``: the free flyer's linear part
        turns from the base frame to the world frame."""
        t = np.eye(self.model.nv)
        if self.model.floating_base:
            t[:3, :3] = quaternion_to_matrix(q[3:7])
        return t

    def qacc(self, q, v, a):
        """MuJoCo ``qacc`` of invdyn's ``a`` at ``(q, v)``."""
        qacc = self.base_rotation(q) @ a
        if self.model.floating_base:
            # world acceleration of the base origin: R (dv/dt + omega x v) in base coordinates
            qacc[:3] += self.base_rotation(q)[:3, :3] @ np.cross(v[3:6], v[:3])
        out = np.zeros(self.model.nv)
        out[self.dof_perm] = qacc
        return out


def _mujoco_rne(mj_model, qpos, qvel, qacc):
    """``M(qpos) qacc + c(qpos, qvel)`` and ``M(qpos)`` from MuJoCo."""
    data = mujoco.MjData(mj_model)
    data.qpos[:], data.qvel[:], data.qacc[:] = qpos, qvel, qacc
    mujoco.mj_fwdPosition(mj_model, data)  # kinematics, com positions, composite inertias, qM
    mujoco.mj_fwdVelocity(mj_model, data)  # com velocities and cdof_dot
    tau = np.zeros(mj_model.nv)
    mujoco.mj_rne(mj_model, data, 1, tau)
    mass = mujoco_mass_matrix(mj_model, data)
    return tau, mass


def _compare(name: str, floating: bool):
    model, mj_model = _load(name, floating)
    layout = _Layout(model, mj_model)
    rng = np.random.default_rng(zlib.crc32(f"{name}/{floating}".encode()))
    for k in range(NSTATES):
        where = f"{name} ({'floating' if floating else 'fixed'}) state {k}"
        q = configuration.random_configuration(model, rng=rng)
        v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
        qpos, qvel = mujoco_state.to_mujoco_state(model, mj_model, q, v)
        assert_close(qvel[layout.dof_perm], layout.base_rotation(q) @ v, what="qvel")
        tau_mj, mass_mj = _mujoco_rne(mj_model, qpos, qvel, layout.qacc(q, v, a))
        # generalised forces and the mass matrix back to invdyn's coordinates: T^T (.) T
        t = layout.base_rotation(q)
        tau = t.T @ tau_mj[layout.dof_perm]
        mass = t.T @ mass_mj[np.ix_(layout.dof_perm, layout.dof_perm)] @ t
        assert_close(invdyn.rnea(model, q, v, a), tau, rtol=RTOL, what=f"rnea {where}")
        assert_close(invdyn.mass_matrix(model, q), mass, rtol=RTOL, what=f"M {where}")


def _compiled(names, floating):
    return [n for n in names if _models(n, floating)[2] is None]


# decided at collection: the robots MuJoCo compiles are compared, the others are checked below
FIXED_OK = _compiled(ERD, False)
FLOATING_OK = _compiled(FLOATING, True)
REJECTED = [n for n in ERD if "rejects" in (_models(n, False)[2] or "")]


@pytest.mark.parametrize("name", FIXED_OK)
def test_fixed_base(name):
    _compare(name, False)


@pytest.mark.parametrize("name", FLOATING_OK)
def test_floating_base(name):
    _compare(name, True)


# MuJoCo's own inertia checks, stricter than invdyn's (it wants strictly positive eigenvalues)
INERTIA_ERRORS = (
    "inertia must have positive eigenvalues",
    "inertia must satisfy A + B >= C",
    "mass and inertia of moving bodies must be larger than mjMINVAL",
)


@pytest.mark.parametrize("name", REJECTED)
def test_mujoco_rejects_only_inertias(name):
    """MuJoCo refuses a robot only for its inertias, never for the description itself."""
    reason = _models(name, False)[2]
    assert any(message in reason for message in INERTIA_ERRORS), reason


def test_enough_robots():
    """MuJoCo compiles enough robots for the oracle to mean something."""
    compiled = [name for name in ERD if _models(name, False)[2] is None]
    assert len(compiled) >= 20
    assert {"talos", "g1", "solo12", "panda", "ur5"} <= set(compiled)
