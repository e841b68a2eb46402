"""Straight-line programs of one model's algorithms: the recursions unrolled over the model's
bodies into scalar statements, with the model's constants written in and folded.

A program computes one state per lane: every name in it holds one scalar per batch element (a
Triton block, a torch vector), so the same text runs as a fused GPU kernel
(`invdyn.kernels.triton`) and, for checks, on torch tensors on any device (`torch_rnea`).
Joint placements, axes, motion subspaces and gravity are constants of the program, and products
with their zeros and ones are never written: a revolute joint about a coordinate axis costs four
products per rotated vector rather than nine. The dynamic parameters are either constants too
(the model's own) or inputs (one row per state, or one for all).

Bodies are visited depth first, each body's force passed to its parent as soon as its subtree is
done, so that a program holds the forces of one path from the root at a time rather than of
every body.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import cast

import numpy as np

from invdyn.model import JointType, Model, inertial_parameters

Value = float | str
"""A scalar of a program: a constant, or the name of a statement's result."""

Vector = list[Value]
Matrix = list[list[Value]]


@dataclasses.dataclass(frozen=True)
class Program:
    """A straight-line program.

    Attributes:
      inputs: names of the inputs, by array: ``{"q": [...], "v": [...], "a": [...], "params":
        [...]}``, each list in the array's column order (``params`` empty when the parameters
        are constants).
      statements: (name, expression, operand names) in order of evaluation; expressions use the
        names of inputs and earlier statements, Python's arithmetic operators, ``cos``, ``sin``,
        ``sign`` and constants as written by the program's literal function.
      outputs: one statement name per output column.
    """

    inputs: dict[str, list[str]]
    statements: list[tuple[str, str, tuple[str, ...]]]
    outputs: list[str]

    def source(
        self,
        load: Callable[[str, int, list[str]], list[str]],
        store: Callable[[int, list[str]], list[str]],
        indent: str,
        group: int = 1,
    ) -> str:
        """The program as source lines, each with `indent`. Inputs and outputs go in groups of
        `group` consecutive columns: ``load(array, first, names)`` (statements that define
        `names`, the columns of an input array from `first` on) right before the first use of
        any of them, and ``store(first, names)`` (statements that write `names`, the outputs
        from column `first` on) right after the last of them is computed, so that inputs and
        outputs hold no registers for longer than they must."""
        where = {
            name: (array, k) for array, names in self.inputs.items() for k, name in enumerate(names)
        }
        column = {name: k for k, name in enumerate(self.outputs)}
        pending = {
            first: set(self.outputs[first : first + group])
            for first in range(0, len(self.outputs), group)
        }
        loaded: set[str] = set()
        lines = []
        for name, expression, operands in self.statements:
            for operand in operands:
                if operand in where and operand not in loaded:
                    array, k = where[operand]
                    first = k - k % group
                    names = self.inputs[array][first : first + group]
                    loaded.update(names)
                    lines += load(array, first, names)
            lines.append(f"{name} = {expression}")
            if name in column:
                first = column[name] - column[name] % group
                pending[first].discard(name)
                if not pending[first]:
                    lines += store(first, self.outputs[first : first + group])
        return "".join(f"{indent}{line}\n" for line in lines)


class _Builder:
    """Writes statements, folding constants: ``x * 0`` is 0, ``x * 1`` is ``x``, ``x + 0`` is
    ``x``, and operations on constants are constants."""

    def __init__(self, literal: Callable[[float], str]) -> None:
        self._literal = literal
        self.statements: list[tuple[str, str, tuple[str, ...]]] = []

    def text(self, x: Value) -> str:
        if isinstance(x, str):
            return x
        text = self._literal(x)
        return f"({text})" if x < 0 or " " in text else text

    def emit(self, expression: str, *operands: Value) -> str:
        name = f"t{len(self.statements)}"
        names = tuple(x for x in operands if isinstance(x, str))
        self.statements.append((name, expression, names))
        return name

    def function(self, name: str, x: Value) -> Value:
        return self.emit(f"{name}({self.text(x)})", x)

    def neg(self, x: Value) -> Value:
        return -x if isinstance(x, float) else self.emit(f"-{x}", x)

    def add(self, x: Value, y: Value) -> Value:
        if isinstance(x, float) and isinstance(y, float):
            return x + y
        if x == 0.0:
            return y
        if y == 0.0:
            return x
        if isinstance(y, float) and y < 0:
            return self.emit(f"{self.text(x)} - {self.text(-y)}", x)
        return self.emit(f"{self.text(x)} + {self.text(y)}", x, y)

    def sub(self, x: Value, y: Value) -> Value:
        if isinstance(x, float) and isinstance(y, float):
            return x - y
        if y == 0.0:
            return x
        if x == 0.0:
            return self.neg(y)
        return self.emit(f"{self.text(x)} - {self.text(y)}", x, y)

    def mul(self, x: Value, y: Value) -> Value:
        if isinstance(x, float) and isinstance(y, float):
            return x * y
        if isinstance(y, float):
            x, y = y, x
        if x == 0.0:
            return 0.0
        if x == 1.0:
            return y
        if x == -1.0:
            return self.neg(y)
        return self.emit(f"{self.text(x)} * {self.text(y)}", x, y)

    def total(self, terms: Sequence[Value]) -> Value:
        out: Value = 0.0
        for term in terms:
            out = self.add(out, term)
        return out

    def dot(self, x: Sequence[Value], y: Sequence[Value]) -> Value:
        return self.total([self.mul(a, b) for a, b in zip(x, y)])

    def vadd(self, x: Vector, y: Vector) -> Vector:
        return [self.add(a, b) for a, b in zip(x, y)]

    def vsub(self, x: Vector, y: Vector) -> Vector:
        return [self.sub(a, b) for a, b in zip(x, y)]

    def scale(self, s: Value, x: Vector) -> Vector:
        return [self.mul(s, a) for a in x]

    def cross(self, x: Vector, y: Vector) -> Vector:
        return [
            self.sub(self.mul(x[1], y[2]), self.mul(x[2], y[1])),
            self.sub(self.mul(x[2], y[0]), self.mul(x[0], y[2])),
            self.sub(self.mul(x[0], y[1]), self.mul(x[1], y[0])),
        ]

    def rotate(self, rot: Matrix | None, x: Vector) -> Vector:
        """R x; x when R is None (the identity)."""
        return x if rot is None else [self.dot(row, x) for row in rot]

    def rotate_back(self, rot: Matrix | None, x: Vector) -> Vector:
        """R^T x."""
        return x if rot is None else [self.dot([row[k] for row in rot], x) for k in range(3)]

    def pruned(self, outputs: Sequence[str]) -> list[tuple[str, str, tuple[str, ...]]]:
        """The statements that the outputs depend on, in order."""
        needed = set(outputs)
        kept = []
        for statement in reversed(self.statements):
            if statement[0] in needed:
                needed.update(statement[2])
                kept.append(statement)
        return kept[::-1]


@dataclasses.dataclass(frozen=True)
class _Transform:
    """A placement of a child frame in its parent: rotation R (None for the identity) and
    origin p (None for zero)."""

    rot: Matrix | None
    pos: Vector | None


def _constant_matrix(x: np.ndarray) -> Matrix | None:
    return None if np.array_equal(x, np.eye(3)) else [[float(e) for e in row] for row in x]


def _constant_vector(x: np.ndarray) -> Vector | None:
    return None if not np.any(x) else [float(e) for e in x]


def _motion_to_child(b: _Builder, x: _Transform, m: Vector) -> Vector:
    """A parent's spatial motion in the child's coordinates: (R^T w, R^T (u + w x p))."""
    w, u = m[:3], m[3:]
    if x.pos is not None:
        u = b.vadd(u, b.cross(w, x.pos))
    return b.rotate_back(x.rot, w) + b.rotate_back(x.rot, u)


def _force_to_parent(b: _Builder, x: _Transform, f: Vector) -> Vector:
    """A child's spatial force in the parent's coordinates: (R n + p x R f, R f)."""
    n, linear = b.rotate(x.rot, f[:3]), b.rotate(x.rot, f[3:])
    if x.pos is not None:
        n = b.vadd(n, b.cross(x.pos, linear))
    return n + linear


def _cross_motion(b: _Builder, v: Vector, m: Vector) -> Vector:
    """v x m: (w x a, w x b + u x a)."""
    w, u, x, y = v[:3], v[3:], m[:3], m[3:]
    return b.cross(w, x) + b.vadd(b.cross(w, y), b.cross(u, x))


def _cross_force(b: _Builder, v: Vector, f: Vector) -> Vector:
    """v x* f: (w x n + u x f, w x f)."""
    w, u, n, g = v[:3], v[3:], f[:3], f[3:]
    return b.vadd(b.cross(w, n), b.cross(u, g)) + b.cross(w, g)


def _inertia_times(b: _Builder, p: Sequence[Value], m: Vector) -> Vector:
    """I m for the spatial inertia of parameters p = [m, h, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]:
    (I_bar w + h x u, mass u - h x w)."""
    mass, h = p[0], list(p[1:4])
    ixx, ixy, iyy, ixz, iyz, izz = p[4:10]
    w, u = m[:3], m[3:]
    rotational = [[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]
    n = b.vadd(b.rotate(rotational, w), b.cross(h, u))
    return n + b.vsub(b.scale(mass, u), b.cross(h, w))


def _quaternion_rotation(b: _Builder, quat: Vector) -> Matrix:
    """R of the quaternion [x, y, z, w] of any norm, as of its unit quaternion: the unit
    quaternion's 2 (products) are 2 / |quat|^2 here; a zero quaternion (2 / |quat|^2 taken as
    0) is no rotation, as the numpy path reads it."""
    x, y, z, w = quat
    inverse = b.function("inverse_norm", b.dot(quat, quat))
    twice_unit = b.mul(2.0, b.mul(inverse, inverse))

    def twice(s: Value, t: Value, sign: float, u: Value, v: Value) -> Value:
        return b.mul(twice_unit, b.add(b.mul(s, t), b.mul(sign, b.mul(u, v))))

    def diagonal(s: Value, t: Value) -> Value:
        return b.sub(1.0, b.mul(twice_unit, b.add(b.mul(s, s), b.mul(t, t))))

    return [
        [diagonal(y, z), twice(x, y, -1.0, z, w), twice(x, z, 1.0, y, w)],
        [twice(x, y, 1.0, z, w), diagonal(x, z), twice(y, z, -1.0, x, w)],
        [twice(x, z, -1.0, y, w), twice(y, z, 1.0, x, w), diagonal(x, y)],
    ]


def _unit_pair(b: _Builder, c: Value, s: Value) -> tuple[Value, Value]:
    """(cos θ, sin θ) of the pair (c, s) of any norm: (c, s) / |(c, s)|, and (1, 0) (no
    rotation) for (0, 0), as the numpy path reads it."""
    square = b.dot([c, s], [c, s])
    inverse = b.function("inverse_norm", square)
    return b.add(b.mul(c, inverse), b.function("is_zero", square)), b.mul(s, inverse)


def _axis_rotation(b: _Builder, axis: np.ndarray, c: Value, s: Value) -> Matrix:
    """c (1 - u u^T) + s [u]_x + u u^T: the rotation of cosine c and sine s about the unit
    axis u, with the axis' zeros folded."""
    outer = np.outer(axis, axis)
    skew = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    cosine = np.eye(3) - outer
    return [
        [
            b.total(
                [b.mul(float(cosine[r, k]), c), b.mul(float(skew[r, k]), s), float(outer[r, k])]
            )
            for k in range(3)
        ]
        for r in range(3)
    ]


def _joint_transform(b: _Builder, model: Model, i: int, q: Sequence[str]) -> _Transform:
    """The placement of body i in its joint frame at q: (R_j(q), p_j(q))."""
    k, jtype, axis = int(model.jnt_qadr[i]), int(model.jnt_type[i]), model.jnt_axis[i]
    if jtype == JointType.REVOLUTE:
        c, s = b.function("cos", q[k]), b.function("sin", q[k])
        return _Transform(_axis_rotation(b, axis, c, s), None)
    if jtype == JointType.CONTINUOUS:
        return _Transform(_axis_rotation(b, axis, *_unit_pair(b, q[k], q[k + 1])), None)
    if jtype == JointType.PRISMATIC:
        return _Transform(None, b.scale(q[k], [float(e) for e in axis]))
    if jtype == JointType.SPHERICAL:
        return _Transform(_quaternion_rotation(b, list(q[k : k + 4])), None)
    return _Transform(_quaternion_rotation(b, list(q[k + 3 : k + 7])), list(q[k : k + 3]))


def rnea_program(model: Model, constant_params: bool, literal: Callable[[float], str]) -> Program:
    """The recursive Newton-Euler algorithm of `model` as a straight-line program.

    Inputs ``q`` (nq), ``v`` and ``a`` (nv) and, unless `constant_params`, ``params``
    (10 nbody + 3 nv, `invdyn.model.inertial_parameters`); outputs the nv joint forces,
    friction and armature included (as `invdyn.rnea` without external forces). `literal`
    writes a constant as source text.
    """
    b = _Builder(literal)
    inputs = {
        "q": [f"q{k}" for k in range(model.nq)],
        "v": [f"v{k}" for k in range(model.nv)],
        "a": [f"a{k}" for k in range(model.nv)],
    }
    nparams = 10 * model.nbody + 3 * model.nv
    inputs["params"] = [] if constant_params else [f"p{k}" for k in range(nparams)]
    params: list[Value] = (
        [float(x) for x in inertial_parameters(model)]
        if constant_params
        else list(inputs["params"])
    )
    subspace = model.motion_subspace
    children = _children_smallest_first(model)
    outputs = [""] * model.nv
    world_acceleration: Vector = [0.0, 0.0, 0.0, *(-float(g) for g in model.gravity)]

    def joint_motion(i: int, x: Sequence[str]) -> Vector:
        start, count = int(model.jnt_vadr[i]), int(model.jnt_nv[i])
        columns = [
            b.scale(x[d], [float(e) for e in subspace[d]]) for d in range(start, start + count)
        ]
        return [b.total([column[r] for column in columns]) for r in range(6)]

    def visit(i: int, velocity: Vector | None, acceleration: Vector) -> Vector:
        """Body i and its subtree: records their joint forces; returns body i's force in its
        parent's coordinates."""
        fixed = _Transform(_constant_matrix(model.jnt_rot[i]), _constant_vector(model.jnt_pos[i]))
        joint = _joint_transform(b, model, i, inputs["q"])
        moving = joint_motion(i, inputs["v"])
        if velocity is None:
            velocity = moving
        else:
            velocity = b.vadd(
                _motion_to_child(b, joint, _motion_to_child(b, fixed, velocity)), moving
            )
        acceleration = _motion_to_child(b, joint, _motion_to_child(b, fixed, acceleration))
        acceleration = b.vadd(acceleration, joint_motion(i, inputs["a"]))
        acceleration = b.vadd(acceleration, _cross_motion(b, velocity, moving))
        body = params[10 * i : 10 * i + 10]
        force = b.vadd(
            _inertia_times(b, body, acceleration),
            _cross_force(b, velocity, _inertia_times(b, body, velocity)),
        )
        for child in children[i]:
            force = b.vadd(force, visit(child, velocity, acceleration))
        start = int(model.jnt_vadr[i])
        for d in range(start, start + int(model.jnt_nv[i])):
            projected = b.dot([float(e) for e in subspace[d]], force)
            outputs[d] = _output(b, _joint_terms(b, model, params, d, projected))
        return _force_to_parent(b, fixed, _force_to_parent(b, joint, force))

    for root in (i for i, parent in enumerate(model.body_parent) if parent < 0):
        visit(root, None, world_acceleration)
    return Program(inputs, b.pruned(outputs), outputs)


def _children_smallest_first(model: Model) -> list[list[int]]:
    """Each body's children, the one with the fewest bodies below it first: a body's velocity
    and acceleration stay live while all but its last child are visited, so the largest
    subtree goes last."""
    size = [1] * model.nbody
    for i in range(model.nbody - 1, -1, -1):
        if model.body_parent[i] >= 0:
            size[int(model.body_parent[i])] += size[i]
    children: list[list[int]] = [[] for _ in range(model.nbody)]
    for i, parent in enumerate(model.body_parent):
        if parent >= 0:
            children[int(parent)].append(i)
    return [sorted(below, key=lambda child: size[child]) for below in children]


def _joint_terms(b: _Builder, model: Model, params: Sequence[Value], d: int, tau: Value) -> Value:
    """tau + armature a + damping v + friction sign(v) of dof d."""
    nv, start = model.nv, 10 * model.nbody
    armature, damping, friction = (
        params[start + d],
        params[start + nv + d],
        params[start + 2 * nv + d],
    )
    velocity = f"v{d}"
    tau = b.add(tau, b.mul(armature, f"a{d}"))
    tau = b.add(tau, b.mul(damping, velocity))
    if friction != 0.0:
        tau = b.add(tau, b.mul(friction, b.function("sign", velocity)))
    return tau


def _output(b: _Builder, x: Value) -> str:
    """x as a statement of its own: an output is a name even where it is a constant or an
    input."""
    if isinstance(x, float):
        return b.emit(f"zero + {b.text(x)}")
    return b.emit(f"{x} + 0", x) if not x.startswith("t") else x


def torch_rnea(model: Model, constant_params: bool) -> Callable[..., object]:
    """The program of `rnea_program` as a function of torch tensors ``(q (B, nq), v (B, nv),
    a (B, nv), params (B or 1, 10 nbody + 3 nv)) -> tau (B, nv)``: the text that the fused GPU
    kernel runs, evaluated by torch, one operation per statement."""
    import torch

    program = rnea_program(model, constant_params, repr)
    lines = [
        "def rnea(q, v, a, params):\n",
        "    zero = torch.zeros_like(v[:, 0])\n",
        "    tau = torch.empty_like(v)\n",
        program.source(
            lambda array, k, names: [f"{names[0]} = {array}[:, {k}]"],
            lambda k, names: [f"tau[:, {k}] = {names[0]}"],
            "    ",
        ),
        "    return tau\n",
    ]
    namespace = {
        "torch": torch,
        "cos": torch.cos,
        "sin": torch.sin,
        "sign": torch.sign,
        "inverse_norm": lambda square: torch.where(square != 0, torch.rsqrt(square), 0.0),
        "is_zero": lambda square: (square == 0).to(square.dtype),
    }
    exec(compile("".join(lines), f"<invdyn rnea of {model.name}>", "exec"), namespace)
    return cast(Callable[..., object], namespace["rnea"])


def flops(program: Program) -> int:
    """Arithmetic operations of a program (each +, -, *, cos, sin, sign, inverse_norm and
    is_zero counts one)."""
    functions = ("cos(", "sin(", "sign(", "inverse_norm(", "is_zero(")
    count = 0
    for _, expression, _ in program.statements:
        count += sum(expression.count(op) for op in (" + ", " - ", " * ", *functions))
        count += expression.startswith("-")
    return count
