"""Bad input to every public function: the documented error, naming the argument, never a crash.

Array arguments with the wrong trailing shape, non-broadcastable batches, NaN or infinity, or
values that are not numbers raise `invdyn.InputError` whose message starts with the argument's
name; unknown frames and references raise `InputError`; unusable robot descriptions and models
raise `invdyn.ModelError`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import invdyn
from conftest import requires_erd
from invdyn.model import JointType, Model

# ----------------------------------------------------------------------------------------------
# models and the functions under test
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pendulum2() -> Model:
    """The double pendulum: nq = nv = nbody = 2."""
    return invdyn.load("double_pendulum")


@pytest.fixture(scope="module")
def continuous(pendulum2) -> Model:
    """The double pendulum with continuous joints: nq = 4, nv = 2, so q and v sizes differ."""
    return pendulum2.replace(
        jnt_type=np.full(2, JointType.CONTINUOUS),
        q_lower=np.full(4, -np.inf),
        q_upper=np.full(4, np.inf),
    )


def _frame_placement(model, q):
    return invdyn.frame_placement(model, q, "tip")


def _frame_jacobian(model, q):
    return invdyn.frame_jacobian(model, q, "tip", reference="local")


def _frame_velocity(model, q, v):
    return invdyn.frame_velocity(model, q, v, "tip")


def _frame_acceleration(model, q, v, a):
    return invdyn.frame_acceleration(model, q, v, a, "tip", reference="local")


# name -> (function of (model, *arrays), the names of its array arguments)
FUNCTIONS: dict[str, tuple[Callable, tuple[str, ...]]] = {
    "rnea": (invdyn.rnea, ("q", "v", "a")),
    "aba": (invdyn.aba, ("q", "v", "tau")),
    "rnea_derivatives": (invdyn.rnea_derivatives, ("q", "v", "a")),
    "aba_derivatives": (invdyn.aba_derivatives, ("q", "v", "tau")),
    "mass_matrix": (invdyn.mass_matrix, ("q",)),
    "gravity": (invdyn.gravity, ("q",)),
    "bias": (invdyn.bias, ("q", "v")),
    "coriolis": (invdyn.coriolis, ("q", "v")),
    "joint_torque_regressor": (invdyn.joint_torque_regressor, ("q", "v", "a")),
    "forward_kinematics": (invdyn.forward_kinematics, ("q",)),
    "frame_placement": (_frame_placement, ("q",)),
    "frame_jacobian": (_frame_jacobian, ("q",)),
    "frame_velocity": (_frame_velocity, ("q", "v")),
    "frame_acceleration": (_frame_acceleration, ("q", "v", "a")),
    "center_of_mass": (invdyn.center_of_mass, ("q",)),
    "center_of_mass_jacobian": (invdyn.center_of_mass_jacobian, ("q",)),
    "centroidal_momentum_matrix": (invdyn.centroidal_momentum_matrix, ("q",)),
    "centroidal_momentum_rate": (invdyn.centroidal_momentum_rate, ("q", "v", "a")),
}
ARGUMENTS = [
    pytest.param(function, argument, id=f"{function}-{argument}")
    for function, (_, names) in FUNCTIONS.items()
    for argument in names
]
BATCHED = [
    pytest.param(function, id=function)
    for function, (_, names) in FUNCTIONS.items()
    if len(names) > 1
]


def _good(model: Model, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Valid arguments: q with (cos, sin) pairs on the unit circle; small v, a and tau."""
    q = np.zeros(model.nq)
    for jtype, start in zip(model.jnt_type, model.jnt_qadr):
        q[start] = 1.0 if jtype == JointType.CONTINUOUS else 0.3
    args = {"q": q}
    args.update({name: np.full(model.nv, 0.2) for name in names[1:]})
    return args


def _call(function: str, model: Model, **replaced):
    """Call `function` with valid arguments except those in `replaced`."""
    fn, names = FUNCTIONS[function]
    args = _good(model, names)
    args.update(replaced)
    return fn(model, *(args[name] for name in names))


def _size(model: Model, argument: str) -> int:
    return model.nq if argument == "q" else model.nv


def test_valid_arguments_work(pendulum2, continuous):
    for model in (pendulum2, continuous):
        for function in FUNCTIONS:
            result = _call(function, model)
            for array in result if isinstance(result, tuple) else (result,):
                assert np.all(np.isfinite(array))


@pytest.mark.parametrize("function", FUNCTIONS)
def test_array_subclasses_are_read_as_arrays(function, pendulum2):
    """A masked array (an ndarray subclass) gives the plain array's result."""
    _, names = FUNCTIONS[function]
    plain = _good(pendulum2, names)
    masked = {name: np.ma.masked_array(x) for name, x in plain.items()}
    result, expected = _call(function, pendulum2, **masked), _call(function, pendulum2)
    for want, got in zip(*(r if isinstance(r, tuple) else (r,) for r in (expected, result))):
        np.testing.assert_array_equal(np.asarray(got), want)


# ----------------------------------------------------------------------------------------------
# shapes
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("function", "argument"), ARGUMENTS)
def test_wrong_last_dimension(function, argument, pendulum2, continuous):
    for model in (pendulum2, continuous):
        size = _size(model, argument)
        # one too many, one too few, a scalar, and the size of the other space (nq vs nv)
        other = model.nv if argument == "q" else model.nq
        for bad in (np.zeros(size + 1), np.zeros(size - 1), np.float64(0.5), np.zeros((3, other))):
            if bad.shape[-1:] == (size,):
                continue
            with pytest.raises(
                invdyn.InputError, match=rf"^{argument} must have shape \(\.\.\., {size}\)"
            ):
                _call(function, model, **{argument: bad})


@pytest.mark.parametrize(("function", "argument"), ARGUMENTS)
def test_a_scalar_is_not_a_vector_of_one(function, argument):
    """For a robot of one coordinate, a scalar is refused by its own shape, (), rather than
    read as the vector of shape (1,) that the functions take."""
    pendulum = invdyn.load("pendulum")
    assert pendulum.nq == pendulum.nv == 1
    _call(function, pendulum, **{argument: np.full(1, 0.3)})
    with pytest.raises(
        invdyn.InputError, match=rf"^{argument} must have shape \(\.\.\., 1\), got \(\)"
    ):
        _call(function, pendulum, **{argument: 0.3})


@pytest.mark.parametrize(("function", "argument"), ARGUMENTS)
def test_transposed_batch(function, argument, continuous):
    """A batch laid out (size, batch) instead of (batch, size) is refused, not reinterpreted."""
    size = _size(continuous, argument)
    with pytest.raises(invdyn.InputError, match=rf"^{argument} must have shape"):
        _call(function, continuous, **{argument: np.zeros((size, 5))})


@pytest.mark.parametrize("function", BATCHED)
def test_batches_that_do_not_broadcast(function, continuous):
    _, names = FUNCTIONS[function]
    good = _good(continuous, names)
    first, second = names[0], names[1]
    replaced = {
        first: np.broadcast_to(good[first], (3, good[first].size)),
        second: np.broadcast_to(good[second], (4, good[second].size)),
    }
    with pytest.raises(
        invdyn.InputError, match=rf"do not broadcast: {first} \(3,\), {second} \(4,\)"
    ):
        _call(function, continuous, **replaced)
    # nor do (2, 3) and (3, 2)
    replaced = {
        first: np.broadcast_to(good[first], (2, 3, good[first].size)),
        second: np.broadcast_to(good[second], (3, 2, good[second].size)),
    }
    with pytest.raises(invdyn.InputError, match="do not broadcast"):
        _call(function, continuous, **replaced)


# ----------------------------------------------------------------------------------------------
# values
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize(("function", "argument"), ARGUMENTS)
def test_non_finite_values(function, argument, value, pendulum2):
    size = _size(pendulum2, argument)
    single = np.full(size, 0.1)
    single[-1] = value
    with pytest.raises(invdyn.InputError, match=rf"^{argument} holds a non-finite value"):
        _call(function, pendulum2, **{argument: single})
    # one bad sample hidden in a batch, and in a list
    batch = np.full((2, 3, size), 0.1)
    batch[1, 2, 0] = value
    with pytest.raises(invdyn.InputError, match=rf"^{argument} holds a non-finite value"):
        _call(function, pendulum2, **{argument: batch})
    with pytest.raises(invdyn.InputError, match=rf"^{argument} holds a non-finite value"):
        _call(function, pendulum2, **{argument: list(single)})


def floating_pendulum() -> Model:
    """The double pendulum on a floating base of 1 kg (its URDF's base has no mass)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", invdyn.ModelWarning)
        model = invdyn.load("double_pendulum", floating_base=True)
    mass, inertia = model.body_mass.copy(), model.body_inertia.copy()
    mass[0], inertia[0] = 1.0, 0.01 * np.eye(3)
    return model.replace(body_mass=mass, body_inertia=inertia)


@pytest.mark.parametrize("function", list(FUNCTIONS))
@pytest.mark.parametrize("floating", [False, True], ids=["pair", "quaternion"])
def test_a_nan_rotation_is_not_read_as_no_rotation(function, floating, continuous):
    """A NaN in a (cos, sin) pair or a quaternion, whose zero reads as no rotation, is refused
    on both paths, alone and in a batch, however finite the result it could give."""
    model = floating_pendulum() if floating else continuous
    good = _good(model, ("q",))["q"]
    q = good.copy()
    q[slice(3, 7) if floating else slice(0, 2)] = np.nan
    for bad in (q, np.stack([good, q])):
        with pytest.raises(invdyn.InputError, match="^q holds a non-finite value"):
            _call(function, model, q=bad)
    torch = pytest.importorskip("torch")
    with pytest.raises(invdyn.InputError, match="^q holds a non-finite value"):
        _call(function, model, q=torch.tensor(q))


NOT_NUMBERS = [
    pytest.param("abc", id="string"),
    pytest.param(["a", "b"], id="list-of-strings"),
    pytest.param(object(), id="object"),
    pytest.param({"q": 1}, id="dict"),
    pytest.param([[0.1, 0.2], [0.3]], id="ragged"),
    pytest.param(lambda: 0, id="function"),
]


@pytest.mark.parametrize("bad", NOT_NUMBERS)
@pytest.mark.parametrize(("function", "argument"), ARGUMENTS)
def test_not_numbers(function, argument, bad, pendulum2):
    with pytest.raises(invdyn.InputError, match=rf"^{argument} must be an array of numbers"):
        _call(function, pendulum2, **{argument: bad})


@pytest.mark.parametrize(("function", "argument"), ARGUMENTS)
def test_none(function, argument, pendulum2):
    with pytest.raises(invdyn.InputError, match=rf"^{argument} "):
        _call(function, pendulum2, **{argument: None})


@pytest.mark.parametrize("function", ["rnea", "mass_matrix"])
def test_complex_values_are_refused(function, pendulum2):
    with pytest.raises(invdyn.InputError, match="^q "):
        _call(function, pendulum2, q=np.array([0.3 + 1j, 0.3]))


@pytest.mark.parametrize(("function", "argument"), ARGUMENTS)
def test_booleans_are_refused(function, argument, pendulum2):
    """A boolean array is a mistake (a mask passed for a state), not zeros and ones."""
    with pytest.raises(invdyn.InputError, match=rf"^{argument} .*dtype bool"):
        _call(function, pendulum2, **{argument: np.zeros(2, dtype=bool)})


@pytest.mark.parametrize("function", ["rnea", "aba", "bias"])
def test_huge_finite_values_give_no_nan(function, pendulum2):
    v = np.array([1e200, -1e200])
    try:
        result = _call(function, pendulum2, v=v)
    except invdyn.InputError:
        return
    assert np.all(np.isfinite(result)), f"{function} returned {result}"


# ----------------------------------------------------------------------------------------------
# external forces
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("function", ["rnea", "aba"])
def test_f_ext_shape(function, pendulum2):
    fn, names = FUNCTIONS[function]
    args = [_good(pendulum2, names)[name] for name in names]
    nbody = pendulum2.nbody
    for bad in (
        np.zeros(6),
        np.zeros(nbody * 6),
        np.zeros((nbody, 3)),
        np.zeros((nbody, 7)),
        np.zeros((nbody + 1, 6)),
        np.zeros((6, nbody)),
        np.zeros((3, nbody - 1, 6)),
    ):
        with pytest.raises(
            invdyn.InputError, match=rf"^f_ext must have shape \(\.\.\., {nbody}, 6\)"
        ):
            fn(pendulum2, *args, f_ext=bad)
    # batch dimensions that do not broadcast with q
    q = np.broadcast_to(args[0], (3, pendulum2.nq))
    with pytest.raises(invdyn.InputError, match=r"do not broadcast: .*f_ext \(4,\)"):
        fn(pendulum2, q, *args[1:], f_ext=np.zeros((4, nbody, 6)))


@pytest.mark.parametrize("function", ["rnea", "aba"])
@pytest.mark.parametrize(
    "bad", [np.nan, np.inf, -np.inf, "abc", object()], ids=["nan", "inf", "-inf", "text", "object"]
)
def test_f_ext_values(function, bad, pendulum2):
    fn, names = FUNCTIONS[function]
    args = [_good(pendulum2, names)[name] for name in names]
    if isinstance(bad, float):
        forces = np.zeros((2, pendulum2.nbody, 6))
        forces[1, 1, 4] = bad
        message = "^f_ext holds a non-finite value"
    else:
        forces = bad
        message = "^f_ext must be an array of numbers"
    with pytest.raises(invdyn.InputError, match=message):
        fn(pendulum2, *args, f_ext=forces)


# ----------------------------------------------------------------------------------------------
# frames and references
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("function", [invdyn.frame_placement, invdyn.frame_jacobian])
@pytest.mark.parametrize(
    ("frame", "message"),
    [
        ("nope", "has no frame named 'nope'"),
        ("", "has no frame named ''"),
        ("TIP", "has no frame named 'TIP'"),
        ("link_2", "has no frame named 'link_2'; did you mean 'link2'"),
        (4, "^frame must be a frame name or an index from -4 to 3"),
        (-5, "^frame must be a frame name or an index from -4 to 3"),
        (1.0, "^frame must be"),
        (None, "^frame must be"),
        (["tip"], "^frame must be"),
    ],
)
def test_unknown_frame(function, frame, message, pendulum2):
    with pytest.raises(invdyn.InputError, match=message):
        function(pendulum2, np.zeros(2), frame)


@pytest.mark.parametrize("function", [invdyn.frame_placement, invdyn.frame_jacobian])
def test_bool_is_not_a_frame(function, pendulum2):
    with pytest.raises(invdyn.InputError, match="^frame must be"):
        function(pendulum2, np.zeros(2), True)


@pytest.mark.parametrize("reference", ["LOCAL", "global", "", None, 0, ("local",)])
def test_unknown_reference(reference, pendulum2):
    with pytest.raises(invdyn.InputError, match="^reference must be 'local', 'world' or"):
        invdyn.frame_jacobian(pendulum2, np.zeros(2), "tip", reference=reference)


def test_array_reference(pendulum2):
    with pytest.raises(invdyn.InputError, match="^reference must be"):
        invdyn.frame_jacobian(pendulum2, np.zeros(2), "tip", reference=np.array(["local", "world"]))


def test_bad_q_with_an_unknown_reference_names_the_reference(pendulum2):
    with pytest.raises(invdyn.InputError, match="^reference"):
        invdyn.frame_jacobian(pendulum2, np.full(2, np.nan), "tip", reference="nope")


def test_world_frame_jacobian_checks_q(pendulum2):
    assert pendulum2.frame_body[pendulum2.frame_id("base")] == -1
    with pytest.raises(invdyn.InputError, match="^q holds a non-finite"):
        invdyn.frame_jacobian(pendulum2, np.array([np.nan, 0.0]), "base")


def test_world_frame_placement_checks_q(pendulum2):
    with pytest.raises(invdyn.InputError, match="^q holds a non-finite"):
        invdyn.frame_placement(pendulum2, np.array([np.nan, 0.0]), "base")


# ----------------------------------------------------------------------------------------------
# the model argument and model construction
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("function", list(FUNCTIONS))
@pytest.mark.parametrize("bad", [None, "double_pendulum"], ids=["None", "name"])
def test_model_must_be_a_model(function, bad, pendulum2):
    fn, names = FUNCTIONS[function]
    args = _good(pendulum2, names)
    with pytest.raises(invdyn.InputError, match="model"):
        fn(bad, *(args[name] for name in names))


def test_inertial_parameters_needs_a_model():
    with pytest.raises(invdyn.InputError, match="model"):
        invdyn.inertial_parameters(None)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"body_mass": np.array([1.0, np.nan])}, "body_mass holds a non-finite value"),
        ({"body_mass": np.array([1.0, -1.0])}, "'link2' has negative mass"),
        ({"body_mass": np.ones(3)}, r"body_mass has shape \(3,\), expected \(2,\)"),
        ({"dof_damping": np.array([0.1, np.inf])}, "dof_damping holds a non-finite value"),
        ({"dof_friction": np.ones(1)}, r"dof_friction has shape \(1,\)"),
        ({"dof_armature": [0.1, -1.0]}, r"dof_armature\[1\] \(joint 'joint2'\) is -1; it cannot"),
        ({"dof_effort_limit": [-2.0, 1.0]}, r"dof_effort_limit\[0\] \(joint 'joint1'\) is -2"),
        ({"dof_actuated": [True]}, r"dof_actuated has shape \(1,\), expected \(2,\)"),
        ({"dof_actuated": ["no", "yes"]}, "dof_actuated must hold booleans"),
        ({"dof_actuated": [0.5, 1.0]}, "dof_actuated must hold booleans"),
        ({"dof_actuated": [2, 0]}, "dof_actuated must hold booleans"),
        ({"dof_actuated": [None, 1]}, "dof_actuated must hold booleans"),
        ({"body_parent": np.array([-1, 1])}, "parents must come before their children"),
        ({"jnt_type": np.array([0, 9])}, "unknown type 9"),
        ({"jnt_axis": np.array([[0, 1, 0], [0, 2, 0]])}, "axis is not a unit vector"),
        ({"gravity": np.zeros(2)}, r"gravity has shape \(2,\)"),
        ({"frame_body": np.array([-1, 0, 1, 5])}, "frame_body holds an index outside"),
        ({"q_lower": np.array([np.nan, -1.0])}, r"q_lower holds NaN \(an absent limit is inf\)"),
        ({"dof_effort_limit": np.array([1.0, np.nan])}, "dof_effort_limit holds NaN"),
        ({"jnt_rot": np.stack([np.eye(3), 2 * np.eye(3)])}, "jnt_rot of 'joint2' is not a rot"),
        ({"jnt_rot": np.stack([np.eye(3), -np.eye(3)])}, "jnt_rot of 'joint2' is not a rot"),
        ({"frame_rot": np.array([np.eye(3)] * 3 + [np.eye(3)[::-1]])}, "frame_rot of '\\w+'"),
        ({"body_inertia": np.array([np.eye(3), np.triu(np.ones((3, 3)))])}, "not symmetric"),
        ({"jnt_name": ("joint1", "joint1")}, "jnt_name holds 'joint1' more than once"),
        ({"body_name": ("link", "link")}, "body_name holds 'link' more than once"),
    ],
)
def test_bad_model_fields(changes, message, pendulum2):
    with pytest.raises(invdyn.ModelError, match=message):
        pendulum2.replace(**changes)


def test_non_numeric_model_field(pendulum2):
    with pytest.raises(invdyn.ModelError, match="body_mass"):
        pendulum2.replace(body_mass="heavy")


# ----------------------------------------------------------------------------------------------
# aba on a singular mass matrix
# ----------------------------------------------------------------------------------------------


def _massless(model: Model, bodies: list[int]) -> Model:
    mass, inertia = model.body_mass.copy(), model.body_inertia.copy()
    mass[bodies], inertia[bodies] = 0.0, 0.0
    return model.replace(body_mass=mass, body_inertia=inertia)


@pytest.mark.parametrize("bodies", [[1], [0, 1]], ids=["leaf", "whole-tree"])
def test_aba_on_a_massless_subtree(bodies, pendulum2):
    model = _massless(pendulum2, bodies)
    q = np.array([0.3, -0.2])
    with pytest.raises(invdyn.ModelError, match="mass matrix is singular"):
        invdyn.aba(model, q, np.zeros(2), np.zeros(2))
    with pytest.raises(invdyn.ModelError, match="mass matrix is singular"):
        invdyn.aba(model, np.stack([q, q]), np.zeros(2), np.zeros(2))
    with pytest.raises(invdyn.ModelError, match="mass matrix is singular"):
        invdyn.aba(model, q, np.zeros(2), np.zeros(2), f_ext=np.ones((2, 6)))
    # the other algorithms still work: the mass matrix is merely singular
    assert np.all(np.isfinite(invdyn.rnea(model, q, np.ones(2), np.ones(2))))
    assert np.linalg.eigvalsh(invdyn.mass_matrix(model, q))[0] < 1e-12


def test_armature_makes_a_massless_subtree_invertible(pendulum2):
    model = _massless(pendulum2, [1]).replace(dof_armature=np.array([0.0, 0.1]))
    q, v, a = np.array([0.3, -0.2]), np.array([0.5, 1.0]), np.array([-1.0, 2.0])
    tau = invdyn.rnea(model, q, v, a)
    np.testing.assert_allclose(invdyn.aba(model, q, v, tau), a, rtol=1e-9, atol=1e-12)


def test_aba_on_a_massless_free_body():
    pendulum = invdyn.load("pendulum")
    model = pendulum.replace(
        jnt_type=np.array([JointType.FREE]),
        body_mass=np.zeros(1),
        body_inertia=np.zeros((1, 3, 3)),
        q_lower=np.full(7, -np.inf),
        q_upper=np.full(7, np.inf),
        dof_velocity_limit=np.full(6, np.inf),
        dof_effort_limit=np.full(6, np.inf),
        dof_armature=np.zeros(6),
        dof_damping=np.zeros(6),
        dof_friction=np.zeros(6),
    )
    q = np.array([0, 0, 1, 0, 0, 0, 1.0])
    with pytest.raises(invdyn.ModelError, match="mass matrix is singular"):
        invdyn.aba(model, q, np.zeros(6), np.zeros(6))


@requires_erd
def test_aba_on_a_real_robot_with_massless_bodies():
    """romeo's URDF has massless moving links (its fingers' sensors)."""
    with pytest.warns(invdyn.ModelWarning):
        model = invdyn.load("romeo")
    from invdyn.configuration import neutral

    with pytest.raises(invdyn.ModelError, match="romeo: the mass matrix is singular"):
        invdyn.aba(model, neutral(model), np.zeros(model.nv), np.zeros(model.nv))


def test_non_finite_input_wins_over_a_singular_model(pendulum2):
    """A NaN argument is reported as such even when the model is singular."""
    model = _massless(pendulum2, [1])
    with pytest.raises(invdyn.InputError, match="^tau holds a non-finite"):
        invdyn.aba(model, np.zeros(2), np.zeros(2), np.array([np.nan, 0.0]))


# ----------------------------------------------------------------------------------------------
# load
# ----------------------------------------------------------------------------------------------


def test_load_unknown_name():
    with pytest.raises(invdyn.ModelError, match="unknown robot 'pandaa'.*did you mean 'panda'"):
        invdyn.load("pandaa")
    with pytest.raises(invdyn.ModelError, match="unknown robot ''"):
        invdyn.load("")


def test_load_unknown_format(tmp_path: Path):
    path = tmp_path / "robot.sdf"
    path.write_text("<sdf/>")
    with pytest.raises(invdyn.ModelError, match=r"unknown description format '\.sdf'"):
        invdyn.load(path)
    xacro = tmp_path / "robot.urdf.xacro"
    xacro.write_text('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro"/>')
    with pytest.raises(invdyn.ModelError, match=r"expand it with xacro first \(xacro robot"):
        invdyn.load(xacro)


@pytest.mark.parametrize("suffix", [".urdf", ".xml"])
def test_load_missing_file(suffix, tmp_path: Path):
    path = tmp_path / f"missing{suffix}"
    with pytest.raises(invdyn.ModelError, match="missing"):
        invdyn.load(path)


@pytest.mark.parametrize(
    "text",
    ["", "<robot", "not xml at all", "<robot name='r'><link name='a'/><joint/></robot>"],
    ids=["empty", "truncated", "text", "joint-without-type"],
)
@pytest.mark.parametrize("suffix", [".urdf", ".xml"])
def test_load_malformed_file(text, suffix, tmp_path: Path):
    path = tmp_path / f"bad{suffix}"
    path.write_text(text)
    with pytest.raises(invdyn.ModelError, match="bad"):
        invdyn.load(path)


@pytest.mark.parametrize("suffix", [".urdf", ".xml"])
def test_load_directory(suffix, tmp_path: Path):
    path = tmp_path / f"robot{suffix}"
    path.mkdir()
    with pytest.raises(invdyn.InputError, match=rf"robot\{suffix}: .*directory"):
        invdyn.load(path)


def test_load_mjcf_with_floating_base(tmp_path: Path):
    path = tmp_path / "r.xml"
    path.write_text("<mujoco><worldbody/></mujoco>")
    with pytest.raises(invdyn.ModelError, match=r"r\.xml: no free joint at the root of the first"):
        invdyn.load(path, floating_base=True)


@pytest.mark.parametrize("source", [None, 123, object()], ids=["None", "int", "object"])
def test_load_non_path(source):
    with pytest.raises((invdyn.InputError, invdyn.ModelError), match="source"):
        invdyn.load(source)


def test_load_xml_text_points_at_parse_urdf():
    text = invdyn.io.robots.robot_path("double_pendulum").read_text()
    with pytest.raises(invdyn.InputError, match="source is XML text.*parse_urdf") as info:
        invdyn.load(text)
    assert len(str(info.value)) < 200  # the document is not repeated
    assert invdyn.io.urdf.parse_urdf(text).nv == invdyn.load("double_pendulum").nv


@pytest.mark.parametrize(
    ("option", "value", "allowed"),
    [("floating_base", "no", "True, False or None"), ("strict", 1, "True or False"),
     ("friction", None, "True or False")],
)  # fmt: skip
def test_load_options_must_be_booleans(option, value, allowed):
    with pytest.raises(invdyn.InputError, match=f"{option} must be {allowed}, got {value!r}"):
        invdyn.load("pendulum", **{option: value})


def test_errors_are_value_errors():
    assert issubclass(invdyn.InputError, ValueError) and issubclass(invdyn.ModelError, ValueError)
    assert issubclass(invdyn.InputError, invdyn.InvdynError)


def test_singular_joints_takes_one_configuration(pendulum2):
    with pytest.raises(invdyn.InputError, match=r"q must be one configuration, shape \(2,\)"):
        invdyn.dynamics.singular_joints(pendulum2, np.zeros((3, 2)))


def test_a_model_prints_its_sizes_not_its_arrays(pendulum2):
    assert repr(pendulum2) == (
        f"Model(name='double_pendulum', nq=2, nv=2, nbody=2, nframe=4, fixed base, "
        f"total_mass={pendulum2.total_mass:.6g}, source={pendulum2.source!r})"
    )
