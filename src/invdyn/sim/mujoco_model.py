"""MuJoCo models of invdyn robots and plants.

`build_mujoco` writes a `Model` into a ``mujoco.MjSpec`` and compiles it: one MuJoCo body per
invdyn body, named alike, placed at its joint frame (``pos``, ``quat`` from ``jnt_pos``,
``jnt_rot``), with one joint at the body origin whose axis is ``jnt_axis`` in the body frame
(revolute and continuous -> hinge, prismatic -> slide, spherical -> ball, free -> free). Joint
names are invdyn's, so `invdyn.io.mujoco_state.to_mujoco_state` and `from_mujoco_state` convert
states. There is no geometry and contacts are disabled, unless the plant has feet
(`Plant.feet`): then a ground plane at height 0 and a sphere at each foot, which touch nothing
but the ground.

Inertias are exactly invdyn's (mass, centre of mass, and the inertia diagonalised: principal
moments and the quaternion of the principal axes) except where MuJoCo refuses them:

* MuJoCo wants every moving body to have a mass and principal moments of at least ``mjMINVAL``
  (1e-15). A body below `MIN_MASS` (1e-12 kg) gets that mass, a principal moment below
  `MIN_INERTIA` (1e-12 kg m^2) gets that moment. A massless body therefore adds at most about
  1e-12 (1 + r^2) to the mass matrix (r the lever arm in metres); bodies with a real mass and
  inertia are untouched.
* MuJoCo wants principal moments that satisfy the triangle inequality ``A + B >= C`` exactly.
  The two smaller moments are lifted by half the gap each (the smallest change that passes);
  a gap beyond rounding (1e-9 of ``C``) also warns with `invdyn.ModelWarning`.

Joint armature, damping (``damping``) and Coulomb friction (``frictionloss``) are the model's,
per dof. (A free joint's linear terms act along the world axes in MuJoCo and along the base axes
in invdyn: its linear damping agrees when the three values are equal, its linear armature only
when zero, as MuJoCo's multiplies the world-frame acceleration. Loaders leave both zero.)
Revolute and prismatic joints with a finite limit get MuJoCo's ``range`` (an infinite
side stays infinite) and are ``limited``: MuJoCo enforces the range by a soft constraint unless
``Plant.joint_limits`` is False. Gravity is the model's.

`prepare_mujoco` sets up a model that MuJoCo compiled from an MJCF file as a plant instead:
its actuators are disabled (forces enter as ``qfrc_applied``), and the plant's options are
applied to a copy of the compiled arrays.
"""

from __future__ import annotations

import copy
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from invdyn.errors import InputError, ModelError, ModelWarning, warn
from invdyn.io.mjcf import applies_force, combine_inertias, turned_off_by
from invdyn.io.mujoco_state import from_mujoco_state, mujoco_index
from invdyn.kinematics import forward_kinematics, frame_point
from invdyn.model import JointType, Model
from invdyn.sim.plant import Plant, dof_values, payload_point, plant_model

if TYPE_CHECKING:
    import mujoco

Float = NDArray[np.float64]
Int = NDArray[np.int64]

# the smallest mass (kg) and principal moment (kg m^2) a simulated body gets; MuJoCo wants 1e-15
MIN_MASS = 1e-12
MIN_INERTIA = 1e-12
# a triangle-inequality gap beyond this fraction of the largest moment is more than rounding
_TRIANGLE_TOLERANCE = 1e-9


def import_mujoco() -> ModuleType:
    """The ``mujoco`` module, or an ImportError that says how to install it (its OpenGL
    backend chosen by `invdyn._headless` when invdyn was imported)."""
    try:
        import mujoco
    except ModuleNotFoundError as error:
        if error.name != "mujoco":  # installed, but something it imports is not
            raise
        raise ImportError("invdyn.sim needs mujoco: pip install 'invdyn[sim]'") from error
    return mujoco


def build_mujoco(model: Model, *, plant: Plant | None = None) -> mujoco.MjModel:
    """A MuJoCo model of `model` as the plant `plant`, built through ``mujoco.MjSpec``.

    See the module docstring for the mapping and for where the inertias deviate from invdyn's
    (massless bodies, inertias that break the triangle inequality).

    Args:
      model: the robot.
      plant: the simulated plant: time step, integrator, joint limits, and the changes of
        `invdyn.sim.plant_model` (payload, mass scale, extra friction); None for `Plant()`.

    Returns:
      The compiled ``mujoco.MjModel``; its joints, dofs and bodies are in invdyn's order.

    Raises:
      ModelError: a free joint is not the root of its tree with an identity joint frame (the
        layout MuJoCo and `invdyn.io.mujoco_state.to_mujoco_state` assume), or MuJoCo cannot
        compile the model.
      InputError: a plant option does not fit the model.
    """
    mujoco = import_mujoco()
    plant = checked_plant(plant)
    target = plant_model(model, plant)
    _check_free_joints(target)

    spec = mujoco.MjSpec()
    spec.modelname = model.name or "invdyn"
    # radians everywhere, limits only where set below
    spec.compiler.degree = False
    spec.compiler.autolimits = False
    _set_options(mujoco, spec.option, plant, gravity=target.gravity)
    if not plant.feet:
        spec.option.disableflags = int(spec.option.disableflags) | int(
            mujoco.mjtDisableBit.mjDSBL_CONTACT
        )

    # bodies in depth-first order, each placed at its joint frame
    bodies: list[Any] = []
    names = mujoco_body_names(target)
    for i in range(target.nbody):
        parent = target.body_parent[i]
        mj_parent = spec.worldbody if parent < 0 else bodies[parent]
        body = mj_parent.add_body(
            name=names[i], pos=target.jnt_pos[i], quat=mujoco_quaternion(mujoco, target.jnt_rot[i])
        )
        mass, moments, axes = _simulated_inertia(target, i)
        body.explicitinertial = True
        body.mass = mass
        body.ipos = target.body_com[i]
        body.inertia = moments
        body.iquat = mujoco_quaternion(mujoco, axes)
        add_joint(mujoco, body, target, i)
        bodies.append(body)
    if plant.feet:
        _add_ground_and_feet(mujoco, spec, bodies, target, plant)

    try:
        mj_model = spec.compile()
    except Exception as error:  # mujoco reports compile errors as ValueError
        message = " ".join(str(error).split())
        raise ModelError(f"model {model.name!r}: MuJoCo cannot compile it: {message}") from None

    # per-dof parameters exactly (a ball or free joint holds one value per joint in MjSpec)
    dofs = dof_addresses(target, mj_model)
    per_dof = {
        "dof_armature": target.dof_armature,
        "dof_damping": target.dof_damping,
        "dof_frictionloss": target.dof_friction,
    }
    if any(not np.array_equal(getattr(mj_model, f)[dofs], v) for f, v in per_dof.items()):
        for field, values in per_dof.items():
            getattr(mj_model, field)[dofs] = values
        mujoco.mj_setConst(mj_model, mujoco.MjData(mj_model))
    return mj_model


def mujoco_body_names(model: Model) -> list[str]:
    """(nbody,) the names `build_mujoco` gives the bodies: their own, but for a body called
    ``world`` (the root link of many URDF files, floated), whose name MuJoCo keeps for its world
    body, and which takes a ``_link`` suffix (more where that is taken)."""
    names = list(model.body_name)
    for i, name in enumerate(names):
        if name == "world":
            while name in names:
                name += "_link"
            names[i] = name
    return names


def prepare_mujoco(
    model: Model, mj_model: mujoco.MjModel, *, plant: Plant | None = None
) -> mujoco.MjModel:
    """A copy of a compiled ``MjModel`` (an MJCF robot, say) set up as the plant `plant`.

    The copy takes the plant's time step, integrator and extra damping and friction; its
    actuators are disabled (``mjDSBL_ACTUATION``: joint forces enter as ``qfrc_applied``), and
    so are its joint limits when ``plant.joint_limits`` is False. ``mass_scale`` scales the mass
    and inertia of every MuJoCo body that moves with a joint of `model` (bodies welded to them
    included, other bodies of the scene not). The payload is merged into the MuJoCo body of its
    frame, placed by comparing invdyn's and MuJoCo's kinematics at ``qpos0``. Everything else
    (contacts, tendons, equality constraints, springs, gravity) stays as compiled.

    Args:
      model: the robot, with joints named as in `mj_model` (as `invdyn.io.mjcf.load_mjcf`
        builds it).
      mj_model: the compiled MuJoCo model; it is not modified.
      plant: the plant; None for `Plant()`.

    Returns:
      The modified copy.

    Raises:
      InputError: a joint of `model` is missing from `mj_model`, a plant option does not fit
        the model, or the payload frame lies on a body that MuJoCo merges with later joints.
    """
    mujoco = import_mujoco()
    plant = checked_plant(plant)
    if plant.feet:
        raise InputError(
            "Plant.feet adds feet and a ground to a model built from an invdyn Model; an MJCF "
            "scene (mj_model=...) brings its own geometry: leave feet empty"
        )
    mj = copy.deepcopy(mj_model)
    _set_options(mujoco, mj.opt, plant, gravity=None)
    mj.opt.disableflags = int(mj.opt.disableflags) | int(mujoco.mjtDisableBit.mjDSBL_ACTUATION)

    # extra friction at the model's dofs, which the file's flags must let MuJoCo apply
    dofs = dof_addresses(model, mj)
    for name, field, force in (
        ("damping", "dof_damping", "damper"),
        ("friction", "dof_frictionloss", "frictionloss"),
    ):
        extra = dof_values(model, name, getattr(plant, name))
        if np.any(extra) and not applies_force(mj, force):
            raise InputError(
                f"Plant.{name} (--{name}): the MJCF file turns it off ({turned_off_by(force)}), "
                f"so the plant would have no {name}; remove the flag to add it"
            )
        getattr(mj, field)[dofs] += extra

    # link masses, then the payload
    if plant.mass_scale != 1.0:
        moving = _robot_bodies(model, mj)
        mj.body_mass[moving] *= plant.mass_scale
        mj.body_inertia[moving] *= plant.mass_scale
    if plant.payload > 0.0:
        _attach_payload(mujoco, model, mj, plant)
    mujoco.mj_setConst(mj, mujoco.MjData(mj))
    return mj


def dof_addresses(model: Model, mj_model: mujoco.MjModel) -> Int:
    """(nv,) MuJoCo dof of each velocity coordinate of `model`, joints matched by name.

    Args:
      model: the robot.
      mj_model: a compiled MuJoCo model holding the joints of `model`.

    Returns:
      (nv,) indices into MuJoCo's ``qvel``.
    """
    joints = mujoco_index(model, mj_model)
    spans = [
        int(mj_model.jnt_dofadr[j]) + np.arange(int(model.jnt_nv[i])) for i, j in enumerate(joints)
    ]
    return np.concatenate([np.zeros(0, dtype=np.int64), *spans]).astype(np.int64)


# helpers


def checked_plant(plant: Plant | None) -> Plant:
    """`plant` (`InputError` unless a `Plant`), or the default `Plant()` for None."""
    if plant is None:
        return Plant()
    if not isinstance(plant, Plant):
        raise InputError(f"plant must be an invdyn.sim.Plant or None, got {type(plant).__name__}")
    return plant


def _set_options(mujoco: ModuleType, option: Any, plant: Plant, *, gravity: Float | None) -> None:
    """Time step, integrator, gravity and the joint-limit flag of a spec's or model's options."""
    option.timestep = plant.timestep
    option.integrator = int(getattr(mujoco.mjtIntegrator, f"mjINT_{plant.integrator.upper()}"))
    if gravity is not None:
        option.gravity = gravity
    if not plant.joint_limits:
        option.disableflags = int(option.disableflags) | int(mujoco.mjtDisableBit.mjDSBL_LIMIT)


def _add_ground_and_feet(
    mujoco: ModuleType, spec: Any, bodies: list[Any], model: Model, plant: Plant
) -> None:
    """A ground plane at height 0 and a sphere at each of `plant.feet`, which alone touch it."""
    friction = [plant.ground_friction, 0.005, 0.0001]
    # contacts where (contype & conaffinity) of one geom meets the other's: feet-ground only
    spec.worldbody.add_geom(
        name="ground",
        type=mujoco.mjtGeom.mjGEOM_PLANE,
        size=[0.0, 0.0, 1.0],
        contype=0,
        conaffinity=1,
        friction=friction,
    )
    for k, (name, point) in enumerate(plant.feet):
        body, position = frame_point(model, name, point)
        bodies[body].add_geom(
            name=f"foot{k}:{name}",
            type=mujoco.mjtGeom.mjGEOM_SPHERE,
            size=[plant.foot_radius, 0.0, 0.0],
            pos=position,
            contype=1,
            conaffinity=0,
            friction=friction,
        )


def _check_free_joints(model: Model) -> None:
    """`ModelError` unless every free joint hangs from the world with an identity joint frame."""
    for i in np.flatnonzero(model.jnt_type == JointType.FREE):
        if model.body_parent[i] >= 0 or not (
            np.allclose(model.jnt_rot[i], np.eye(3), rtol=0.0, atol=1e-12)
            and np.allclose(model.jnt_pos[i], 0.0, rtol=0.0, atol=1e-12)
        ):
            raise ModelError(
                f"model {model.name!r}: free joint {model.jnt_name[i]!r} must attach its body to "
                "the world with an identity joint frame to be simulated in MuJoCo"
            )


def add_joint(mujoco: ModuleType, body: Any, model: Model, i: int) -> None:
    """Add the joint of invdyn body `i` to the MjSpec `body`, at its origin."""
    spec = model.jnt_spec[i]
    kind = getattr(mujoco.mjtJoint, f"mjJNT_{spec.mujoco.upper()}")
    joint = body.add_joint(name=model.jnt_name[i], type=kind)
    joint.pos = np.zeros(3)
    joint.axis = model.jnt_axis[i] if spec.axial else [0, 0, 1]
    # one value per joint here; per-dof values are set on the compiled model
    first = int(model.jnt_vadr[i])
    joint.armature = float(model.dof_armature[first])
    _set_coefficient(joint, "damping", float(model.dof_damping[first]))
    joint.frictionloss = float(model.dof_friction[first])
    # position limits of revolute and prismatic joints
    joint.limited = mujoco.mjtLimited.mjLIMITED_FALSE
    if spec.bounded:
        start = int(model.jnt_qadr[i])
        lower, upper = float(model.q_lower[start]), float(model.q_upper[start])
        if lower == upper:
            raise InputError(
                f"{model.name}: joint {model.jnt_name[i]!r} has position limits lower = upper = "
                f"{lower:g}, so it cannot move, and MuJoCo needs lower < upper: make it a fixed "
                "joint, or widen its limits"
            )
        if np.isfinite(lower) or np.isfinite(upper):
            joint.limited = mujoco.mjtLimited.mjLIMITED_TRUE
            joint.range = [lower, upper]


def _set_coefficient(element: Any, name: str, value: float) -> None:
    """Set a linear coefficient that MuJoCo 4 stores first in a polynomial, MuJoCo 3 alone."""
    current = np.asarray(getattr(element, name))
    if current.ndim == 0:
        setattr(element, name, value)
    else:
        coefficients = np.zeros(current.shape)
        coefficients[0] = value
        setattr(element, name, coefficients)


def _simulated_inertia(model: Model, i: int) -> tuple[float, Float, Float]:
    """Mass, (3,) principal moments and (3, 3) principal axes of body `i`, as MuJoCo takes them.

    Exact except below the floors `MIN_MASS` and `MIN_INERTIA` and where the moments break the
    triangle inequality (see the module docstring).
    """
    moments, axes = principal_inertia(model.body_inertia[i])
    mass = max(float(model.body_mass[i]), MIN_MASS)
    simulated = np.maximum(moments, MIN_INERTIA)
    # lift the two smaller moments by half the gap each, until A + B >= C holds exactly
    order = np.argsort(simulated)
    a, b, c = (float(x) for x in simulated[order])
    gap = c - (a + b)
    if gap > 0.0:
        a, b = a + gap / 2.0, b + gap / 2.0
        while a + b < c:
            b = float(np.nextafter(b, np.inf))
        simulated[order[0]], simulated[order[1]] = a, b
    scale = max(float(np.max(np.abs(moments))), MIN_INERTIA)
    if gap > _TRIANGLE_TOLERANCE * c or np.min(moments) < -_TRIANGLE_TOLERANCE * scale:
        warn(
            f"model {model.name!r}: body {model.body_name[i]!r} has principal moments "
            f"{moments.tolist()} that MuJoCo refuses (negative, or A + B < C); simulated with "
            f"{simulated.tolist()}",
            ModelWarning,
        )
    return mass, simulated, axes


def principal_inertia(inertia: Float) -> tuple[Float, Float]:
    """Principal moments and axes of a rotational inertia: ``I = R diag(moments) R^T``.

    Args:
      inertia: (3, 3) symmetric inertia.

    Returns:
      (3,) principal moments, ascending, and the (3, 3) rotation R whose columns are the
      principal axes.
    """
    moments, axes = np.linalg.eigh(0.5 * (inertia + np.swapaxes(inertia, -1, -2)))
    if np.linalg.det(axes) < 0.0:
        axes[:, 2] = -axes[:, 2]
    return moments, axes


def mujoco_quaternion(mujoco: ModuleType, rotation: Float) -> Float:
    """(4,) MuJoCo quaternion ``[w, x, y, z]`` of a (3, 3) rotation."""
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(rotation, dtype=np.float64).ravel())
    return quat


def _robot_bodies(model: Model, mj_model: Any) -> Int:
    """MuJoCo bodies that move with a joint of `model`, bodies welded to them included."""
    carriers = {int(mj_model.jnt_bodyid[j]) for j in mujoco_index(model, mj_model)}
    weld = np.asarray(mj_model.body_weldid)
    return np.flatnonzero(np.isin(weld, sorted(carriers)) & (np.arange(mj_model.nbody) > 0))


def _attach_payload(mujoco: ModuleType, model: Model, mj_model: Any, plant: Plant) -> None:
    """Merge the plant's payload into the compiled MuJoCo body that carries its frame."""
    body, point = payload_point(model, plant)
    joint = int(mujoco_index(model, mj_model)[body])
    mj_body = int(mj_model.jnt_bodyid[joint])
    last = int(mj_model.body_jntadr[mj_body] + mj_model.body_jntnum[mj_body] - 1)
    if joint != last:
        raise InputError(
            f"Plant.payload_frame (--payload-frame): body {model.body_name[body]!r} is an "
            f"intermediate body of the MuJoCo body {mj_model.body(mj_body).name!r}, which has "
            "several joints; attach the payload to a frame of its last joint's body"
        )
    # the payload in the world at qpos0 by invdyn's kinematics, then in the MuJoCo body frame
    data = mujoco.MjData(mj_model)
    mujoco.mj_kinematics(mj_model, data)
    q, _ = from_mujoco_state(model, mj_model, mj_model.qpos0)
    rotations, origins = forward_kinematics(model, q)
    world = origins[body] + rotations[body] @ point
    local = data.xmat[mj_body].reshape(3, 3).T @ (world - data.xpos[mj_body])
    # merge it into the body's inertia, then diagonalise again
    flat = np.zeros(9)
    mujoco.mju_quat2Mat(flat, mj_model.body_iquat[mj_body])
    frame = flat.reshape(3, 3)
    inertia = frame @ np.diag(mj_model.body_inertia[mj_body]) @ frame.T
    mass, com, inertia = combine_inertias(
        float(mj_model.body_mass[mj_body]),
        np.array(mj_model.body_ipos[mj_body]),
        inertia,
        plant.payload,
        local,
        np.zeros((3, 3)),
    )
    moments, axes = principal_inertia(inertia)
    mj_model.body_mass[mj_body] = mass
    mj_model.body_ipos[mj_body] = com
    mj_model.body_inertia[mj_body] = np.maximum(moments, MIN_INERTIA)
    mj_model.body_iquat[mj_body] = mujoco_quaternion(mujoco, axes)
