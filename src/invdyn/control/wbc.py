"""Whole-body control of floating-base robots: contact-constrained inverse dynamics by a QP.

At every control step the controller finds joint accelerations ``a`` and contact forces ``f``
(world axes, one 3-D force per point contact) that best achieve weighted tasks,

    minimise   sum_k w_k |J_k a + d_k - a_k*|^2 + w_f |f|^2
    subject to M_u a + h_u = J_u^T f                      (the unactuated base's equations)
               J_c a + d_c = 0                             (contacts do not move)
               |f_x|, |f_y| <= mu / sqrt(2) f_z,  f_min <= f_z <= f_max
               -tau_max <= M_j a + h_j - J_j^T f <= tau_max (torque limits)

where ``J a + d`` is a task's acceleration (``d`` the drift ``J_dot v``, `invdyn.frame_acceleration`
with ``a = 0``) and ``a_k* = a_ref + K_p e + K_d e_dot`` its reference acceleration with
feedback; the friction pyramid sits inside the cone, so forces that satisfy it satisfy the cone.
A frame with several contact points (the corners of a flat foot) is held still as a whole, its
angular and linear acceleration zero (6 rows, as TSID's 6-D contacts), since its points cannot
all have zero acceleration while it turns; each point still has its own force and cone.
The torques follow from the joints' rows of the equations of motion. This is the task-space
inverse dynamics of TSID (Del Prete et al. 2016) with weighted tasks. The QP is solved by
ProxQP (proxsuite, the ``control`` extra), warm-started from the previous step.

Tasks are frozen dataclasses: `CenterOfMassTask`, `OrientationTask` (of a frame, the base by
default), `FramePositionTask`, `PostureTask` and the contact force regularisation's weight;
references default to the state at a task's first step, so ``WholeBodyController(model,
contacts)`` holds the robot as it is. Contacts and tasks may change between steps
(`WholeBodyController.set_contacts`, `WholeBodyController.tasks`): a foot lifts off.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from invdyn._arrays import as_float_array, check_positive, check_real, not_a_model
from invdyn.centroidal import (
    center_of_mass,
    center_of_mass_jacobian,
    centroidal_momentum_rate,
)
from invdyn.configuration import difference
from invdyn.control.computed_torque import effort_limits
from invdyn.dynamics import bias, mass_matrix, rnea
from invdyn.errors import InputError, InvdynError
from invdyn.kinematics import forward_kinematics, frame_point, point_jacobian, point_motion
from invdyn.model import Model
from invdyn.spatial import rotation_vector

Float = NDArray[np.float64]
# a reference of time: (position, velocity, acceleration)
Reference = Callable[[float], tuple[ArrayLike, ArrayLike, ArrayLike]]
BASE_DOFS = 6
# singular values of the contacts' Jacobian below this, relative to the largest, are zero: a
# row that only a millionfold acceleration could satisfy constrains nothing, and near-dependent
# rows (legs without side joints) leave ProxQP reporting a feasible QP infeasible
RANK_TOLERANCE = 1e-6
# a body's origin, in its coordinates
_ORIGIN = np.zeros(3)


@dataclasses.dataclass(frozen=True)
class PointContact:
    """A point of the robot that touches the environment and must not move: level ground, its
    normal the world's +z axis (the friction pyramid is about that axis).

    Attributes:
      frame: the frame the contact point is fixed to (`Model.frame_name`).
      position: (3,) the point in the frame's coordinates; the origin by default.
      friction: friction coefficient ``mu`` of the contact, > 0.
      min_force: smallest normal force in newtons, >= 0.
      max_force: largest normal force in newtons, > min_force (inf: no bound).
    """

    frame: str
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    friction: float = 0.7
    min_force: float = 0.0
    max_force: float = math.inf

    def __post_init__(self) -> None:
        point = np.asarray(self.position, dtype=np.float64)
        if point.shape != (3,) or not np.all(np.isfinite(point)):
            raise InputError(f"PointContact {self.frame!r}: position must be 3 finite numbers")
        object.__setattr__(self, "position", tuple(float(x) for x in point))
        check_positive("PointContact.friction", self.friction)
        if not 0.0 <= self.min_force < self.max_force:
            raise InputError(
                f"PointContact {self.frame!r}: need 0 <= min_force < max_force, got "
                f"{self.min_force} and {self.max_force}"
            )


@dataclasses.dataclass(frozen=True)
class CenterOfMassTask:
    """Track a centre of mass trajectory.

    Attributes:
      reference: ``t -> (c, c_dot, c_ddot)`` in the world, each (3,); None holds the centre of
        mass of the first call.
      weight: the task's weight in the cost, > 0.
      stiffness: proportional gain, 1/s^2; the damping is critical, ``2 sqrt(stiffness)``.
    """

    reference: Reference | None = None
    weight: float = 1.0
    stiffness: float = 100.0

    def __post_init__(self) -> None:
        _check_gains(self)


@dataclasses.dataclass(frozen=True)
class OrientationTask:
    """Keep a frame's orientation (the floating base's, by default).

    Attributes:
      frame: a frame name; None for the floating base's body.
      weight: the task's weight, > 0.
      stiffness: proportional gain, 1/s^2; critical damping.
    """

    frame: str | None = None
    weight: float = 1.0
    stiffness: float = 100.0

    def __post_init__(self) -> None:
        _check_gains(self)


@dataclasses.dataclass(frozen=True)
class FramePositionTask:
    """Move a frame's origin along a trajectory (a swing foot, a hand).

    Attributes:
      frame: the frame's name.
      reference: ``t -> (p, p_dot, p_ddot)`` in the world, each (3,); None holds the first
        call's position.
      weight: the task's weight, > 0.
      stiffness: proportional gain, 1/s^2; critical damping.
    """

    frame: str
    reference: Reference | None = None
    weight: float = 1.0
    stiffness: float = 100.0

    def __post_init__(self) -> None:
        _check_gains(self)


@dataclasses.dataclass(frozen=True)
class PostureTask:
    """Pull the actuated joints towards a configuration.

    Attributes:
      reference: (nq,) configuration whose joints are the target; None for the first call's.
      weight: the task's weight, > 0 (small: posture resolves what the other tasks leave).
      stiffness: proportional gain, 1/s^2; critical damping.
    """

    reference: ArrayLike | None = None
    weight: float = 1e-3
    stiffness: float = 30.0

    def __post_init__(self) -> None:
        _check_gains(self)


TASKS = (CenterOfMassTask, OrientationTask, FramePositionTask, PostureTask)


class QPError(InvdynError):
    """The whole-body QP has no solution at a control step: no contact forces in the friction
    pyramids, within the torque limits, hold the contacts still (the robot tips over, say)."""


@dataclasses.dataclass(frozen=True)
class Step:
    """One control step's solution: (nv,) accelerations ``a`` and torques ``tau`` (zero on the
    base), (nc, 3) forces in world axes at the ``contacts`` held then, the time ``t``, and the
    seconds spent setting the QP up (dynamics, kinematics, tasks) and solving it."""

    t: float
    a: Float
    tau: Float
    forces: Float
    contacts: tuple[PointContact, ...]
    setup_time: float
    solve_time: float


class WholeBodyController:
    """``tau = controller(t, q, v)``: the torques of the task-space inverse dynamics QP.

    Args:
      model: a floating-base robot (its first joint free).
      contacts: the point contacts, each held still.
      tasks: the tasks; default a `CenterOfMassTask`, an `OrientationTask` of the base and a
        `PostureTask`, all holding the first call's state.
      force_weight: weight of the contact forces' squared norm (regularisation), > 0.
      torque_limit: (nv - 6,) or scalar bound on the joint torques, > 0 or inf; None for the
        model's ``dof_effort_limit`` (`invdyn.control.computed_torque.effort_limits`: zero or
        below bounds nothing).

    The solution of every step is appended to `steps` (`Step`).
    """

    def __init__(
        self,
        model: Model,
        contacts: Sequence[PointContact],
        tasks: Sequence[Any] | None = None,
        *,
        force_weight: float = 1e-5,
        torque_limit: ArrayLike | None = None,
    ) -> None:
        _check_floating_base(model)
        self.model = model
        self.set_contacts(contacts)
        self.tasks = tuple(
            (CenterOfMassTask(), OrientationTask(), PostureTask()) if tasks is None else tasks
        )
        self.force_weight = check_positive("force_weight", force_weight)
        limit = effort_limits(model)[BASE_DOFS:] if torque_limit is None else torque_limit
        try:
            limit = np.broadcast_to(np.asarray(limit, dtype=np.float64), (model.nv - BASE_DOFS,))
        except (TypeError, ValueError):
            raise InputError(
                f"torque_limit must be a number or {model.nv - BASE_DOFS} numbers, got {limit!r}"
            ) from None
        bad = [
            f"{name} = {value:g}"
            for name, value in zip(model.dof_names[BASE_DOFS:], limit)
            if not value > 0.0  # NaN too
        ]
        if bad:
            raise InputError(
                f"torque_limit must be > 0 (or inf) for every joint, got {', '.join(bad)}"
            )
        self.torque_limit = limit
        self.reset()

    def reset(self) -> None:
        """Forget the steps, the held references and the warm start: a fresh run."""
        self.steps: list[Step] = []
        self._held: dict[int, tuple[Any, Float]] = {}
        self._qp: Any = None

    def set_contacts(self, contacts: Sequence[PointContact]) -> None:
        """Hold these contacts from the next step on (a foot lifts off or lands); `tasks`
        may change between steps too, and a new task holds its reference from its first step."""
        contacts = tuple(contacts)
        if not contacts:
            raise InputError("WholeBodyController needs at least one contact")
        if not all(isinstance(c, PointContact) for c in contacts):
            raise InputError(f"contacts must be PointContact, got {contacts!r}")
        if contacts == getattr(self, "contacts", None):
            return
        self.frames = [frame_point(self.model, c.frame, c.position) for c in contacts]
        # a body with one contact point keeps the point still; with more, the whole body
        # (all its points at zero classical acceleration is impossible when it turns)
        bodies = [body for body, _ in self.frames]
        self.surfaces = [
            (*self.frames[bodies.index(body)], bodies.count(body) > 1)
            for body in dict.fromkeys(bodies)
        ]
        self.contacts = contacts
        self._qp = None

    def __call__(self, t: float, q: ArrayLike, v: ArrayLike) -> Float:
        """(nv,) torques at time `t` from the measured (nq,) `q` and (nv,) `v` (zero on the
        base); `QPError` when the QP has no solution."""
        started = time.perf_counter()
        model, nc = self.model, len(self.contacts)
        q, v = _vector("q", q, model.nq), _vector("v", v, model.nv)
        n = model.nv + 3 * nc
        mass, forces_of_state = mass_matrix(model, q), bias(model, q, v)
        kinematics = _Kinematics(model, q, v)
        contact_jacobian = np.vstack([kinematics.point_jacobian(*f) for f in self.frames])
        motion_jacobian, motion_drift = _independent_rows(*kinematics.held_still(self.surfaces))

        # cost: the tasks' weighted squared errors, and small forces (tasks gone forget theirs)
        live = {id(task): task for task in self.tasks}
        self._held = {k: e for k, e in self._held.items() if live.get(k) is e[0]}
        hessian, gradient = np.zeros((n, n)), np.zeros(n)
        for task in self.tasks:
            jacobian, drift, desired = self._task(task, t, q, v, kinematics)
            hessian[: model.nv, : model.nv] += task.weight * jacobian.T @ jacobian
            gradient[: model.nv] += task.weight * jacobian.T @ (drift - desired)
        hessian[model.nv :, model.nv :] += self.force_weight * np.eye(3 * nc)
        hessian[: model.nv, : model.nv] += 1e-8 * np.eye(model.nv)

        # the base's equations of motion, and contacts that do not accelerate
        equality = np.zeros((BASE_DOFS + len(motion_drift), n))
        equality[:BASE_DOFS, : model.nv] = mass[:BASE_DOFS]
        equality[:BASE_DOFS, model.nv :] = -contact_jacobian[:, :BASE_DOFS].T
        equality[BASE_DOFS:, : model.nv] = motion_jacobian
        target = np.concatenate([-forces_of_state[:BASE_DOFS], -motion_drift])

        # friction pyramids, normal force bounds and torque limits
        rows, lower, upper = _friction_rows(self.contacts, model.nv)
        torque_rows = np.hstack([mass[BASE_DOFS:], -contact_jacobian[:, BASE_DOFS:].T])
        joint_bias = forces_of_state[BASE_DOFS:]
        inequality = np.vstack([rows, torque_rows])
        lower = np.concatenate([lower, -self.torque_limit - joint_bias])
        upper = np.concatenate([upper, self.torque_limit - joint_bias])

        set_up = time.perf_counter()
        x = self._solve(hessian, gradient, equality, target, inequality, lower, upper, t)
        solved = time.perf_counter()
        a, forces = x[: model.nv], x[model.nv :]
        tau = np.zeros(model.nv)
        tau[BASE_DOFS:] = torque_rows @ x + joint_bias
        self.steps.append(
            Step(
                t=t,
                a=a,
                tau=tau,
                forces=forces.reshape(nc, 3),
                contacts=self.contacts,
                setup_time=set_up - started,
                solve_time=solved - set_up,
            )
        )
        return tau

    def _held_value(self, task: Any, value: Float) -> Float:
        """The value `task` holds: `value` at its first step, kept with the task itself."""
        entry = self._held.get(id(task))
        if entry is None or entry[0] is not task:
            entry = self._held[id(task)] = (task, value)
        return entry[1]

    def _task(
        self, task: Any, t: float, q: Float, v: Float, kinematics: _Kinematics
    ) -> tuple[Float, Float, Float]:
        """A task's Jacobian (m, nv), drift (m,) and desired acceleration (m,); references
        left None hold the value of the task's first step."""
        if not isinstance(task, TASKS):
            names = ", ".join(kind.__name__ for kind in TASKS)
            raise InputError(f"a task must be one of {names}, got {task!r}")
        damping = 2.0 * math.sqrt(task.stiffness)
        if isinstance(task, CenterOfMassTask):
            center, jacobian, drift = kinematics.center_of_mass()
            if task.reference is None:
                target = (self._held_value(task, center), np.zeros(3), np.zeros(3))
            else:
                target = _reference_at(task.reference, t)
            position, velocity, acceleration = target
            feedback = task.stiffness * (position - center) + damping * (velocity - jacobian @ v)
            return jacobian, drift, acceleration + feedback
        if isinstance(task, OrientationTask):
            body, rotation = kinematics.frame_rotation(task.frame)
            jacobian = kinematics.angular_jacobian(body)
            error = rotation_vector(self._held_value(task, rotation) @ rotation.T)
            desired = task.stiffness * error - damping * (jacobian @ v)
            return jacobian, kinematics.angular_drift(body), desired
        if isinstance(task, FramePositionTask):
            body, local = frame_point(self.model, task.frame)
            position = kinematics.point(body, local)
            jacobian = kinematics.point_jacobian(body, local)
            if task.reference is None:
                target = (self._held_value(task, position), np.zeros(3), np.zeros(3))
            else:
                target = _reference_at(task.reference, t)
            feedback = task.stiffness * (target[0] - position) + damping * (
                target[1] - jacobian @ v
            )
            return jacobian, kinematics.point_drift(body, local), target[2] + feedback
        # a PostureTask
        held = q.copy() if task.reference is None else _configuration(self.model, task)
        error = self._joint_error(q, self._held_value(task, held))
        desired = task.stiffness * error - damping * v[BASE_DOFS:]
        joints = np.eye(self.model.nv)[BASE_DOFS:]
        return joints, np.zeros(self.model.nv - BASE_DOFS), desired

    def _joint_error(self, q: Float, reference: Float) -> Float:
        """(nv - 6,) the joints' part of ``reference - q`` in the tangent space."""
        model = self.model
        if model.nq - 7 == model.nv - BASE_DOFS:  # one coordinate per joint after the base
            return reference[7:] - q[7:]
        return difference(model, q, reference)[BASE_DOFS:]

    def _solve(
        self,
        hessian: Float,
        gradient: Float,
        equality: Float,
        target: Float,
        inequality: Float,
        lower: Float,
        upper: Float,
        t: float,
    ) -> Float:
        """The QP's solution by ProxQP, warm-started from the last step's of the same size
        (the contacts, and the rank of their constraints, set the size). A warm start that
        fails is tried again from a cold one: near-dependent constraints (legs without side
        joints) can throw ProxQP's warm start, and it then reports a feasible QP infeasible."""
        proxqp = _proxqp()
        problem = (hessian, gradient, equality, target, inequality, lower, upper)
        warm = self._qp is not None and self._qp.model.n_eq == len(target)
        if warm:
            self._qp.update(*problem)
            self._qp.solve()
        if not warm or self._qp.results.info.status != proxqp.PROXQP_SOLVED:
            # cold: from the solution of the equality-constrained problem, ProxQP's default
            self._qp = proxqp.dense.QP(len(gradient), len(target), len(lower))
            self._qp.settings.eps_abs = 1e-9
            self._qp.init(*problem)
            self._qp.solve()
            self._qp.settings.initial_guess = proxqp.InitialGuess.WARM_START_WITH_PREVIOUS_RESULT
        status = self._qp.results.info.status
        if status != proxqp.PROXQP_SOLVED:
            raise QPError(f"whole-body QP not solved at t = {t:.4f} s ({status})")
        return np.array(self._qp.results.x)


def contact_inverse_dynamics(
    model: Model, q: ArrayLike, v: ArrayLike, a: ArrayLike, contacts: Sequence[PointContact]
) -> tuple[Float, Float]:
    """Joint torques and contact forces that produce the motion ``(q, v, a)`` of a
    floating-base robot: the smallest forces (least squares) in their friction pyramids that
    the unactuated base's equations need, then the joints' torques.

    ``M a + h = S^T tau + sum_c J_c^T f_c``, rows of the base: ``M_u a + h_u = J_u^T f``.

    Args:
      model: a floating-base robot.
      q: (nq,) joint positions.
      v: (nv,) joint velocities.
      a: (nv,) joint accelerations.
      contacts: the point contacts that carry the robot.

    Returns:
      (nv,) joint forces (zero on the base) and (nc, 3) contact forces in world axes.

    Raises:
      InputError: a fixed-base robot, a joint that no actuator drives, bad contacts or states.
      InvdynError: no forces in the pyramids produce the motion (the QP is infeasible).
    """
    _check_floating_base(model)
    contacts = tuple(contacts)
    if not contacts:
        raise InputError("contact_inverse_dynamics needs at least one contact")
    frames = [frame_point(model, c.frame, c.position) for c in contacts]
    q = _vector("q", q, model.nq)
    v, a = _vector("v", v, model.nv), _vector("a", a, model.nv)
    needed = rnea(model, q, v, a)
    kinematics = _Kinematics(model, q, v)
    jacobian = np.vstack([kinematics.point_jacobian(*f) for f in frames])
    nc = len(contacts)
    rows, lower, upper = _friction_rows(contacts, 0)
    proxqp = _proxqp()

    problem = proxqp.dense.QP(3 * nc, BASE_DOFS, len(lower))
    problem.settings.eps_abs = 1e-10
    problem.init(
        np.eye(3 * nc), np.zeros(3 * nc), jacobian[:, :BASE_DOFS].T, needed[:BASE_DOFS], rows,
        lower, upper,
    )  # fmt: skip
    problem.solve()
    if problem.results.info.status != proxqp.PROXQP_SOLVED:
        raise InvdynError(
            f"no contact forces in their friction pyramids produce this motion of {model.name}"
        )
    forces = np.array(problem.results.x)
    tau = needed - jacobian.T @ forces
    tau[:BASE_DOFS] = 0.0
    return tau, forces.reshape(nc, 3)


class _Kinematics:
    """One state's kinematics, as contacts and tasks ask for it: points' Jacobians and drifts
    (one compiled kernel call each), frame orientations."""

    def __init__(self, model: Model, q: Float, v: Float) -> None:
        self.model, self.q, self.v = model, q, v
        self.rotations, self.origins = forward_kinematics(model, q)

    def point(self, body: int, local: Float) -> Float:
        return self.origins[body] + self.rotations[body] @ local

    def point_jacobian(self, body: int, local: Float) -> Float:
        """(3, nv) world velocity of a point fixed to `body` at `local` (body coordinates)."""
        return point_jacobian(self.model, self.q, body, local)[3:]

    def point_drift(self, body: int, local: Float) -> Float:
        """(3,) the point's classical acceleration at zero joint acceleration."""
        return point_motion(self.model, self.q, self.v, body, local)[9:]

    def held_still(self, surfaces: Sequence[tuple[int, Float, bool]]) -> tuple[Float, Float]:
        """(m, nv) Jacobian and (m,) drift of the contacts' motion: per `(body, local,
        whole)`, the point at `local` of `body` (3 rows), or the whole body (6 rows: angular,
        and the point) when `whole`."""
        rows, drifts = [], []
        for body, local, whole in surfaces:
            kept = slice(0 if whole else 3, 6)
            rows.append(point_jacobian(self.model, self.q, body, local)[kept])
            drifts.append(point_motion(self.model, self.q, self.v, body, local)[6:][kept])
        return np.vstack(rows), np.concatenate(drifts)

    def angular_jacobian(self, body: int) -> Float:
        """(3, nv) the body's world angular velocity."""
        return point_jacobian(self.model, self.q, body, _ORIGIN)[:3]

    def angular_drift(self, body: int) -> Float:
        return point_motion(self.model, self.q, self.v, body, _ORIGIN)[6:9]

    def frame_rotation(self, frame: str | None) -> tuple[int, Float]:
        """The body of `frame` (None: the base) and the frame's world rotation."""
        if frame is None:
            return 0, self.rotations[0]
        body, _ = frame_point(self.model, frame)
        index = self.model.frame_name.index(frame)
        return body, self.rotations[body] @ self.model.frame_rot[index]

    def center_of_mass(self) -> tuple[Float, Float, Float]:
        """(3,) the centre of mass, its (3, nv) Jacobian and (3,) drift (the linear
        centroidal momentum rate at zero acceleration over the mass)."""
        model, q, v = self.model, self.q, self.v
        rate = centroidal_momentum_rate(model, q, v, np.zeros(model.nv))
        drift = rate[3:] / model.total_mass
        return center_of_mass(model, q), center_of_mass_jacobian(model, q), drift


def _independent_rows(jacobian: Float, drift: Float) -> tuple[Float, Float]:
    """The constraint ``jacobian @ a = -drift`` as independent rows: (r, nv) and (r,) for
    the rank r of the (m, nv) `jacobian`, the part of `drift` that no acceleration can cancel
    dropped. Legs of fewer joints than their feet have constraints (two per leg, a point
    foot's three) make the rows dependent, and a slipping foot's drift then leaves their
    range: as they were, the QP had no solution."""
    u, s, vt = np.linalg.svd(jacobian, full_matrices=False)
    kept = s > RANK_TOLERANCE * s[0]
    return s[kept, None] * vt[kept], u[:, kept].T @ drift


def _proxqp() -> Any:
    """proxsuite's ProxQP, or an ImportError that says how to install it."""
    try:
        from proxsuite import proxqp
    except ImportError as exc:
        raise ImportError(
            f"whole-body control needs ProxQP, the control extra: pip install 'invdyn[control]' "
            f"({exc})"
        ) from exc
    return proxqp


def _configuration(model: Model, task: PostureTask) -> Float:
    """`task`'s reference as a finite (nq,) array, or `InputError`."""
    reference = np.asarray(task.reference, dtype=np.float64)
    if reference.shape != (model.nq,) or not np.all(np.isfinite(reference)):
        raise InputError(
            f"PostureTask.reference must be {model.nq} finite numbers (q of {model.name}), "
            f"got shape {reference.shape}"
        )
    return reference


def _check_gains(task: Any) -> None:
    """`InputError` unless the task's weight is positive and its stiffness not negative."""
    name = type(task).__name__
    check_positive(f"{name}.weight", task.weight)
    check_real(f"{name}.stiffness", task.stiffness, minimum=0.0)


def _vector(name: str, x: ArrayLike, size: int) -> Float:
    """`x` as a (size,) float array (one state, not a batch), or `InputError` naming it."""
    array = as_float_array(name, x, size)
    if array.shape != (size,):
        raise InputError(f"{name} must have shape ({size},), one state, got {array.shape}")
    return array


def _check_floating_base(model: Model) -> None:
    if not isinstance(model, Model):
        raise not_a_model(model)
    if not model.floating_base:
        raise InputError(
            f"{model.name}: whole-body control needs a floating base (load it with "
            "floating_base=True)"
        )
    passive = [name for name in model.passive_dofs if name not in model.dof_names[:BASE_DOFS]]
    if passive:
        raise InputError(
            f"{model.name}: whole-body control drives every joint but the floating base, and no "
            f"actuator drives {', '.join(passive)}"
        )


def _friction_rows(contacts: Sequence[PointContact], nv: int) -> tuple[Float, Float, Float]:
    """Rows, lower and upper bounds of the friction pyramids and normal force bounds."""
    rows, lower, upper = [], [], []
    for k, contact in enumerate(contacts):
        mu = contact.friction / math.sqrt(2.0)
        base = nv + 3 * k
        for axis in (0, 1):
            for sign in (1.0, -1.0):
                row = np.zeros(nv + 3 * len(contacts))
                row[base + axis], row[base + 2] = sign, -mu
                rows.append(row)
                lower.append(-math.inf)
                upper.append(0.0)
        row = np.zeros(nv + 3 * len(contacts))
        row[base + 2] = 1.0
        rows.append(row)
        lower.append(contact.min_force)
        upper.append(contact.max_force)
    return np.array(rows), np.array(lower), np.array(upper)


def _reference_at(reference: Reference, t: float) -> tuple[Float, Float, Float]:
    """A reference's (3,) position, velocity and acceleration at `t`."""
    values = reference(t)
    arrays = tuple(np.asarray(x, dtype=np.float64) for x in values)
    if len(arrays) != 3 or any(x.shape != (3,) or not np.all(np.isfinite(x)) for x in arrays):
        raise InputError(
            f"a task's reference must give three finite (3,) arrays, got {values!r} at t = {t}"
        )
    return arrays[0], arrays[1], arrays[2]
