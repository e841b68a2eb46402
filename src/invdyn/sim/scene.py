"""Scenes to render data in: a stick figure of an invdyn robot (`robot_scene`), or a Gymnasium
environment's own model with cameras added (`scene_for` picks one for a data source).

A robot scene draws on the bodies and joints that `build_mujoco` makes (it adds no geometry): a
capsule from each body's origin to each child's (and from the world origin to each root),
spheres at the origins, a marker at the end of each leaf body, one colour per link, a checker
floor below the robot, a headlight and a directional light, and the fixed cameras "front" (on
+x), "side" (on -y) and "top", aimed at the robot's workspace (`ROBOT_CAMERAS`), with "hand"
(`HAND_CAMERA`) following the tip of its longest chain, large in view. Every scene of
`scene_for` has the three fixed cameras; in a Gymnasium scene they frame the environment's moving
bodies, where MuJoCo's free camera frames the whole floor. `invdyn.sim.render` renders them.
"""

from __future__ import annotations

import math
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from invdyn._arrays import not_a_model
from invdyn.configuration import neutral
from invdyn.errors import InputError
from invdyn.kinematics import forward_kinematics
from invdyn.model import Model
from invdyn.sim.collect import import_gymnasium, load_robot_source, make_env
from invdyn.sim.mujoco_model import (
    add_joint,
    build_mujoco,
    import_mujoco,
    mujoco_body_names,
    mujoco_quaternion,
)

if TYPE_CHECKING:
    import mujoco

Float = NDArray[np.float64]
Int = NDArray[np.int64]

ROBOT_CAMERAS: tuple[str, ...] = ("front", "side", "top")
"""Cameras of `robot_scene` and of every scene of `scene_for`."""


HAND_CAMERA = "hand"
"""Camera of `robot_scene` that follows the tip of the robot's longest chain (an arm's hand)."""


# stick radius as a share of the reach, and its floor (m); joint spheres and leaf markers are
# larger by these factors; the reach of a robot smaller than MIN_REACH (m) counts as MIN_REACH
RADIUS_SHARE = 0.03


MIN_RADIUS = 0.005


JOINT_SCALE = 1.3


MARKER_SCALE = 1.8


MIN_REACH = 0.1


# sticks shorter than this (m) are not drawn
MIN_LENGTH = 1e-6


# link colours (matplotlib's tab10 less its grey, which a grey floor hides: a gripper's finger
# in it was lost), the base's colour, and the floor's two checker colours
PALETTE = (
    (0.12, 0.47, 0.71),
    (1.00, 0.50, 0.05),
    (0.17, 0.63, 0.17),
    (0.84, 0.15, 0.16),
    (0.58, 0.40, 0.74),
    (0.55, 0.34, 0.29),
    (0.89, 0.47, 0.76),
    (0.74, 0.74, 0.13),
    (0.09, 0.75, 0.81),
)


BASE_COLOUR = (0.3, 0.3, 0.3)


FLOOR_COLOURS = ((0.82, 0.82, 0.82), (0.62, 0.62, 0.62))


# checker squares per reach
FLOOR_SQUARES = 4


# camera elevation above the horizon for "front" and "side" (degrees), vertical field of view
# (degrees, MuJoCo's default), the share of the workspace's half-side that fills half the view
# (an arm seldom stretches to a corner of its workspace), and the room left around the figure
# at the neutral configuration, which is always in view (in a Gymnasium scene, around the
# robot in every configuration framed); the half-side of the hand camera's view, as a share
# of the reach (at 64x64 pixels, Panda's fingers span 3 to 4 pixels across, enough to tell
# them apart and so the wrist's roll, which its hand's half-turn symmetry hides)
ELEVATION = 30.0


FOVY = 45.0


FRAMED = 0.75


MARGIN = 1.15


HAND_SHARE = 0.12


# diffuse intensity of the headlight and of the directional light (`_add_lights`) in a robot
# scene, and in a Gymnasium scene without lights (its light floor would glare under the first)
ROBOT_DIFFUSE = (0.4, 0.6)


GYM_DIFFUSE = (0.3, 0.3)


# configurations sampled to frame a Gymnasium environment (`_configurations`), and their seed
FRAME_SAMPLES = 64


FRAME_SEED = 0


def robot_scene(model: Model, *, meshes: bool = False) -> mujoco.MjModel:
    """A MuJoCo model of `model` to render: `build_mujoco`'s, with a stick figure to see, or
    with the meshes of its URDF.

    Bodies, joints, inertias and options are those of ``build_mujoco(model)``, so ``qpos`` and
    ``qvel`` have its layout and a collection's ``full_state`` applies as it is. The visuals
    are described in the module docstring; their geoms have no contacts and leave the inertias,
    which are explicit, as they are. The stick radius is `RADIUS_SHARE` of the reach, the
    longest chain of sticks from the world origin, and the cameras frame the workspace: a
    cube of half-side the reach of the arm about each root body at the neutral configuration,
    cut at the floor, which lies one radius below the lowest point of the neutral figure. The
    cameras are fixed in the world: a floating base that walks away leaves their view.

    A fourth camera, `HAND_CAMERA`, follows the tip of the longest chain (`_add_hand_camera`):
    the wrist and hand of an arm, large in its view whatever the pose.

    With `meshes`, every link to which the URDF the model was loaded from gives collision
    geometry shows it, in its body's colour (`invdyn.io.urdf.link_shapes`: meshes MuJoCo
    reads, STL and OBJ, and boxes, cylinders and spheres), and only the bodies without any
    keep their sticks: asymmetric shapes show the turns of joints about their own links (a
    wrist's roll), which a stick hides.

    Args:
      model: the robot.
      meshes: draw the description's meshes where it has them.

    Returns:
      The compiled ``mujoco.MjModel``, with the cameras of `ROBOT_CAMERAS`, then
      `HAND_CAMERA`.

    Raises:
      ModelError: as `build_mujoco`.
    """
    mujoco = import_mujoco()
    if not isinstance(model, Model):
        raise not_a_model(model)
    sim = build_mujoco(model)
    sticks = _sticks(model)
    lengths, roots = _chains(model, sticks)
    reach = max(float(lengths.max(initial=0.0)), MIN_REACH)
    radius = max(RADIUS_SHARE * reach, MIN_RADIUS)

    spec = mujoco.MjSpec()
    spec.modelname = model.name or "invdyn"
    spec.compiler.degree = False
    spec.compiler.autolimits = False
    spec.option.timestep = sim.opt.timestep
    spec.option.gravity = sim.opt.gravity
    spec.option.integrator = sim.opt.integrator
    spec.option.disableflags = sim.opt.disableflags

    # bodies as build_mujoco placed them, with its inertias and invdyn's joints
    bodies: list[Any] = []
    names = mujoco_body_names(model)
    for i in range(model.nbody):
        parent = model.body_parent[i]
        mj_parent = spec.worldbody if parent < 0 else bodies[parent]
        body = mj_parent.add_body(name=names[i], pos=sim.body_pos[i + 1], quat=sim.body_quat[i + 1])
        body.explicitinertial = True
        body.mass = sim.body_mass[i + 1]
        body.ipos = sim.body_ipos[i + 1]
        body.inertia = sim.body_inertia[i + 1]
        body.iquat = sim.body_iquat[i + 1]
        add_joint(mujoco, body, model, i)
        bodies.append(body)

    # the description's meshes, then the stick figure of the bodies without: sticks, joint
    # spheres, leaf markers
    drawn = _add_meshes(mujoco, spec, model, bodies) if meshes else set()
    for owner, end, leaf in sticks:
        if owner in drawn:
            continue
        body = spec.worldbody if owner < 0 else bodies[owner]
        rgba = [*(BASE_COLOUR if owner < 0 else PALETTE[owner % len(PALETTE)]), 1.0]
        if np.linalg.norm(end) >= MIN_LENGTH:
            _add_visual(mujoco, body, "capsule", [radius], rgba, fromto=[0, 0, 0, *end])
        if leaf:
            _add_visual(mujoco, body, "sphere", [MARKER_SCALE * radius], rgba, pos=end)
    for i, body in enumerate(bodies):
        if i in drawn:
            continue
        rgba = [*PALETTE[i % len(PALETTE)], 1.0]
        _add_visual(mujoco, body, "sphere", [JOINT_SCALE * radius], rgba, pos=[0, 0, 0])

    # floor, lights and cameras about the workspace
    rotations, origins = forward_kinematics(model, neutral(model))
    points = np.array([[0.0, 0.0, 0.0], *(_world_end(rotations, origins, s) for s in sticks)])
    floor = float(points[:, 2].min()) - radius
    low, high = _workspace(origins, lengths, roots, floor)
    centre = 0.5 * (low + high)
    _add_floor(mujoco, spec, centre, floor, reach)
    _add_lights(mujoco, spec, centre, reach, ROBOT_DIFFUSE)
    half = max(
        FRAMED * float(np.max(high - low)) / 2.0,
        MARGIN * float(np.linalg.norm(points - centre, axis=1).max()),
    )
    for name in ROBOT_CAMERAS:
        position, rotation = _camera_pose(name, centre, half)
        camera = spec.worldbody.add_camera(name=name, pos=position)
        camera.fovy = FOVY
        camera.quat = mujoco_quaternion(mujoco, rotation)
    _add_hand_camera(mujoco, bodies, sticks, lengths, (rotations, origins), reach)

    try:
        scene = spec.compile()
    except ValueError as error:  # a mesh file: the rest build_mujoco compiled
        if not meshes:
            raise
        raise InputError(
            f"{model.name}: MuJoCo cannot draw the meshes of {model.source} "
            f"({' '.join(str(error).split())}); render it without meshes"
        ) from error
    # per-dof armature and friction exactly, as build_mujoco sets them
    for field in ("dof_armature", "dof_damping", "dof_frictionloss"):
        getattr(scene, field)[:] = getattr(sim, field)
    mujoco.mj_setConst(scene, mujoco.MjData(scene))
    return scene


def scene_for(source: str) -> mujoco.MjModel:
    """The MuJoCo model that renders the ``full_state`` of data from `source`.

    A Gymnasium scene is the environment's MJCF file (``env.unwrapped.fullpath``) compiled
    with the cameras of `ROBOT_CAMERAS` that it lacks (a camera of the environment's own with
    that name is kept), and a headlight and a directional light when it has no light; its
    joints, ``qpos0``, geoms, options and cameras are the environment's, so a recorded
    ``full_state`` renders as it is. The environment's cameras keep their names, though their
    ids shift when ours come first in MuJoCo's order (by body).

    The cameras frame the environment's robot: the moving bodies of the kinematic trees that
    hold an actuated joint (not Reacher's target or Pusher's object), their origins and
    geoms (bounding spheres), at ``qpos0`` and at `FRAME_SAMPLES` - 1 random configurations
    of the hinges and limited slides, each view fitted in perspective with `MARGIN` to spare.
    When that robot has one root body and a free or slide joint moves it (HalfCheetah, Hopper,
    Ant, the inverted pendulums), the cameras sit on that body in mode ``trackcom``: they
    keep their offset from its subtree's centre of mass at ``qpos0`` and their orientation in
    the world, so the robot stays in view as it runs and the floor moves behind it; its own
    joints stay at ``qpos0`` when framing. Otherwise (Reacher, Pusher) they are fixed in the
    world.

    Args:
      source: ``"invdyn:<robot>"`` (`robot_scene` of its `load_robot_source`) or
        ``"gym:<env id>"`` (the environment's model with cameras), as
        `invdyn.sim.Collection.source` names it.

    Returns:
      The compiled ``mujoco.MjModel``, with the cameras of `ROBOT_CAMERAS`.

    Raises:
      InputError: another source, a robot that `load_robot_source` cannot load (render
        with ``render_collection(..., scene=robot_scene(model))`` then), an unknown
        environment, or one whose MJCF file compiles to other joints than its model's (render
        with ``scene=env.unwrapped.model`` then).
    """
    mujoco = import_mujoco()
    if not isinstance(source, str):
        raise InputError(f"source must be a string, got {type(source).__name__}")
    kind, _, name = source.partition(":")
    if kind == "invdyn":
        try:
            model = load_robot_source(source)
        except InputError as error:
            raise InputError(
                f"{error}; pass scene=robot_scene(model) to render_collection"
            ) from None
        return robot_scene(model)
    if kind == "gym":
        return _gym_scene(mujoco, source, name)
    raise InputError(
        f"source {source!r} is not rendered; expected 'invdyn:<robot>' or 'gym:<env id>'"
    )


def _gym_scene(mujoco: ModuleType, source: str, env_id: str) -> mujoco.MjModel:
    """`scene_for`'s scene of the Gymnasium environment `env_id` (see `scene_for`)."""
    env = make_env(import_gymnasium(), env_id, None)
    try:
        sim, path = env.unwrapped.model, env.unwrapped.fullpath
    finally:
        env.close()

    # the framed bodies in many configurations, their root's joints frozen when cameras follow it
    bodies = _framed_bodies(mujoco, sim)
    root = _tracked_root(mujoco, sim, bodies)
    qpos = _configurations(mujoco, sim, root, np.random.default_rng(FRAME_SEED))
    points, radii = _spheres(mujoco, sim, bodies, qpos)

    # the environment's own MJCF, with lights if it has none and the cameras it lacks
    spec = mujoco.MjSpec.from_file(path)
    if sim.nlight == 0:
        reach = float(np.ptp(points, axis=0).max())
        _add_lights(mujoco, spec, points.mean(axis=0), reach, GYM_DIFFUSE)
    data = mujoco.MjData(sim)
    mujoco.mj_kinematics(sim, data)
    owned = {sim.camera(i).name for i in range(sim.ncam)}
    for name in ROBOT_CAMERAS:
        if name in owned:
            continue
        centre, half = _fit_view(name, points, radii)
        position, rotation = _camera_pose(name, centre, MARGIN * half)
        if root is None:
            camera = spec.worldbody.add_camera(name=name, pos=position)
        else:
            # placed at qpos0 in the root's frame; MuJoCo keeps its offset from the root's
            # subtree centre of mass and its orientation in the world
            frame = (data.xmat[root].reshape(3, 3), data.xpos[root])
            position, rotation = _in_frame(frame, position, rotation)
            camera = spec.bodies[root].add_camera(name=name, pos=position)
            camera.mode = mujoco.mjtCamLight.mjCAMLIGHT_TRACKCOM
        camera.fovy = FOVY
        camera.quat = mujoco_quaternion(mujoco, rotation)
    scene = spec.compile()

    # a recorded full state must mean the same in the scene as in the environment
    joints = [[m.joint(j).name for j in range(m.njnt)] for m in (scene, sim)]
    if (
        (scene.nq, scene.nv) != (sim.nq, sim.nv)
        or joints[0] != joints[1]
        or not np.array_equal(scene.qpos0, sim.qpos0)
    ):
        raise InputError(
            f"source {source!r}: {path} compiles to a model with other joints than the "
            f"environment's (nq {scene.nq} vs {sim.nq}, nv {scene.nv} vs {sim.nv}, joint names "
            "or qpos0 differ); pass scene=env.unwrapped.model to render_collection"
        )
    return scene


def _framed_bodies(mujoco: ModuleType, mj_model: Any) -> Int:
    """(n,) bodies the cameras of a Gymnasium scene frame.

    Those that move (a joint in their ancestry) in the kinematic trees (a child of the world
    and its descendants) that hold an actuated joint: the robot, not a target or an object
    that it pushes. All that move when no joint is actuated.
    """
    moving = np.flatnonzero(mj_model.body_weldid > 0)
    by_joint = [int(mujoco.mjtTrn.mjTRN_JOINT), int(mujoco.mjtTrn.mjTRN_JOINTINPARENT)]
    actuated = mj_model.actuator_trnid[np.isin(mj_model.actuator_trntype, by_joint), 0]
    trees = mj_model.body_rootid[mj_model.jnt_bodyid[actuated]]
    driven = moving[np.isin(mj_model.body_rootid[moving], trees)]
    return driven if len(driven) else moving


def _tracked_root(mujoco: ModuleType, mj_model: Any, bodies: Int) -> int | None:
    """The body the cameras follow: the one root of `bodies`, if a free or slide joint moves it."""
    roots = np.unique(mj_model.body_rootid[bodies])
    if len(roots) != 1:
        return None
    root = int(roots[0])
    kinds = mj_model.jnt_type[mj_model.jnt_bodyid == root]
    mobile = [int(mujoco.mjtJoint.mjJNT_FREE), int(mujoco.mjtJoint.mjJNT_SLIDE)]
    return root if np.isin(kinds, mobile).any() else None


def _configurations(
    mujoco: ModuleType, mj_model: Any, frozen: int | None, rng: np.random.Generator
) -> Float:
    """(FRAME_SAMPLES, nq) configurations to frame: qpos0, then random ones.

    Hinges and limited slides are uniform in their range, a hinge without limits over a full
    turn about qpos0; other joints (free, ball, slides without limits) and those of body
    `frozen` stay at qpos0.
    """
    qpos = np.tile(mj_model.qpos0, (FRAME_SAMPLES, 1))
    hinge, slide = int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)
    for j in range(mj_model.njnt):
        kind, limited = int(mj_model.jnt_type[j]), mj_model.jnt_limited[j]
        if mj_model.jnt_bodyid[j] == frozen or kind not in (hinge, slide):
            continue
        adr = mj_model.jnt_qposadr[j]
        if limited:
            low, high = mj_model.jnt_range[j]
        elif kind == hinge:
            low, high = mj_model.qpos0[adr] - math.pi, mj_model.qpos0[adr] + math.pi
        else:
            continue
        qpos[1:, adr] = rng.uniform(low, high, FRAME_SAMPLES - 1)
    return qpos


def _spheres(mujoco: ModuleType, mj_model: Any, bodies: Int, qpos: Float) -> tuple[Float, Float]:
    """The origins and geoms of `bodies` in every configuration, as spheres to frame.

    A body's origin is a point (radius 0), a geom its bounding sphere (``geom_rbound``).

    Args:
      mj_model: the MuJoCo model.
      bodies: (n,) body ids.
      qpos: (T, nq) configurations.

    Returns:
      (m, 3) world centres and (m,) radii (m).
    """
    data = mujoco.MjData(mj_model)
    geoms = np.flatnonzero(np.isin(mj_model.geom_bodyid, bodies))
    centres = []
    for q in qpos:
        data.qpos[:] = q
        mujoco.mj_kinematics(mj_model, data)
        centres += [data.xpos[bodies], data.geom_xpos[geoms]]
    radii = np.concatenate([np.zeros(len(bodies)), mj_model.geom_rbound[geoms]])
    return np.concatenate(centres), np.tile(radii, len(qpos))


def _sticks(model: Model) -> list[tuple[int, Float, bool]]:
    """The sticks of `robot_scene`: (owner body or -1 for the world, (3,) end, is a leaf's end).

    Each stick runs from its owner's origin to `end`, in the owner's frame: to each child's
    origin, and for a leaf body to its end (`_leaf_end`).
    """
    sticks = [
        (int(model.body_parent[i]), np.asarray(model.jnt_pos[i]), False) for i in range(model.nbody)
    ]
    leaves = set(range(model.nbody)) - {int(p) for p in model.body_parent}
    sticks += [(i, _leaf_end(model, i), True) for i in sorted(leaves)]
    return sticks


def _leaf_end(model: Model, i: int) -> Float:
    """(3,) end of leaf body `i` in its frame: its farthest frame, else twice its centre of mass.

    A link without frames off its origin is taken as uniform, so its end lies twice as far as
    its centre of mass; a body with neither ends at its origin.
    """
    frames = np.asarray(model.frame_pos)[np.asarray(model.frame_body) == i]
    if len(frames) and np.linalg.norm(frames, axis=1).max() >= MIN_LENGTH:
        return frames[np.argmax(np.linalg.norm(frames, axis=1))]
    return 2.0 * np.asarray(model.body_com[i])


def _chains(model: Model, sticks: list[tuple[int, Float, bool]]) -> tuple[Float, Int]:
    """Length of the chain of sticks from the world origin to each body and leaf end, and root.

    No pose puts a point farther from the world origin (or from its root body's origin, less
    the root's length) than its chain.

    Returns:
      (nbody + nleaf,) chain lengths (m), bodies then the leaf ends of `sticks`, and the root
      body of each.
    """
    chain = np.zeros(model.nbody)
    root = np.arange(model.nbody)
    for i in range(model.nbody):
        parent = model.body_parent[i]
        chain[i] = np.linalg.norm(model.jnt_pos[i]) + (0.0 if parent < 0 else chain[parent])
        root[i] = i if parent < 0 else root[parent]
    leaves = [(owner, end) for owner, end, leaf in sticks if leaf]
    ends = [chain[owner] + np.linalg.norm(end) for owner, end in leaves]
    lengths = np.concatenate([chain, np.array(ends, dtype=np.float64).reshape(-1)])
    roots = np.concatenate([root, np.array([root[o] for o, _ in leaves], dtype=np.int64)])
    return lengths, roots


def _world_end(rotations: Float, origins: Float, stick: tuple[int, Float, bool]) -> Float:
    """(3,) world position of a stick's end, given the (nbody, 3, 3), (nbody, 3) placements."""
    owner, end, _ = stick
    return end if owner < 0 else origins[owner] + rotations[owner] @ end


def _workspace(origins: Float, lengths: Float, roots: Int, floor: float) -> tuple[Float, Float]:
    """(3,) low and high corners of the box the cameras frame, above `floor`.

    It holds the world origin and, about each root body's origin, a cube of half-side the
    longest chain from that origin (see `_chains`).

    Args:
      origins: (nbody, 3) body origins in the world.
      lengths: (n,) chain lengths of `_chains`.
      roots: (n,) their root bodies.
      floor: the floor's height.
    """
    low, high = np.zeros(3), np.zeros(3)
    for root in np.unique(roots):
        arm = float(lengths[roots == root].max() - lengths[root])
        low = np.minimum(low, origins[root] - arm)
        high = np.maximum(high, origins[root] + arm)
    low[2] = max(low[2], floor)
    return low, high


def _add_meshes(mujoco: ModuleType, spec: Any, model: Model, bodies: list[Any]) -> set[int]:
    """Add the collision geometries of the model's URDF (meshes and primitives) to the
    MjSpec; the bodies that got one (-1 for the world)."""
    from invdyn.io.urdf import link_shapes

    if Path(model.source).suffix.lower() != ".urdf" or not Path(model.source).is_file():
        raise InputError(
            f"{model.name}: meshes come from the URDF the model was loaded from, and "
            f"{model.source!r} is not one"
        )
    spec.compiler.inertiafromgeom = mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_FALSE
    drawn = set()
    for k, shape in enumerate(link_shapes(model.source)):
        if shape.link not in model.frame_name:
            continue
        frame = model.frame_name.index(shape.link)
        owner = int(model.frame_body[frame])
        rot = model.frame_rot[frame] @ shape.rot
        pos = model.frame_pos[frame] + model.frame_rot[frame] @ shape.pos
        body = spec.worldbody if owner < 0 else bodies[owner]
        rgba = [*(BASE_COLOUR if owner < 0 else PALETTE[owner % len(PALETTE)]), 1.0]
        quat = mujoco_quaternion(mujoco, rot)
        if shape.file is None:
            _add_visual(mujoco, body, shape.kind, list(shape.size), rgba, pos=pos, quat=quat)
        else:
            asset = spec.add_mesh()
            asset.name, asset.file, asset.scale = f"mesh{k}", str(shape.file), shape.size
            # drawn only: a thin or open mesh needs no volume
            asset.inertia = mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL
            _add_visual(mujoco, body, "mesh", [], rgba, meshname=asset.name, pos=pos, quat=quat)
        drawn.add(owner)
    return drawn


def _add_visual(
    mujoco: ModuleType, body: Any, kind: str, size: list[float], rgba: list[float], **where: Any
) -> None:
    """Add a geom to see and not to touch (no contacts) to the MjSpec `body`."""
    geom = body.add_geom(type=getattr(mujoco.mjtGeom, f"mjGEOM_{kind.upper()}"), rgba=rgba)
    geom.size[: len(size)] = size
    geom.contype = geom.conaffinity = 0
    for name, value in where.items():
        setattr(geom, name, value)


def _add_floor(mujoco: ModuleType, spec: Any, centre: Float, floor: float, reach: float) -> None:
    """A checker floor plane at height `floor`, under `centre`, of `FLOOR_SQUARES` per reach."""
    spec.add_texture(
        name="floor",
        type=mujoco.mjtTexture.mjTEXTURE_2D,
        builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER,
        rgb1=FLOOR_COLOURS[0],
        rgb2=FLOOR_COLOURS[1],
        width=64,
        height=64,
    )
    material = spec.add_material(name="floor", texuniform=True)
    material.texrepeat = [FLOOR_SQUARES / (2.0 * reach)] * 2
    material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "floor"
    geom = spec.worldbody.add_geom(
        type=mujoco.mjtGeom.mjGEOM_PLANE,
        pos=[centre[0], centre[1], floor],
        size=[4.0 * reach, 4.0 * reach, 0.1 * reach],
        material="floor",
    )
    geom.contype = geom.conaffinity = 0


def _add_lights(
    mujoco: ModuleType, spec: Any, centre: Float, reach: float, diffuse: tuple[float, float]
) -> None:
    """A soft headlight, and a directional light from above, the front (+x) and the left (+y).

    `diffuse` is the headlight's and the directional light's diffuse intensity.
    """
    spec.visual.headlight.ambient = [0.3] * 3
    spec.visual.headlight.diffuse = [diffuse[0]] * 3
    spec.visual.headlight.specular = [0.1] * 3
    direction = np.array([-0.5, -0.3, -1.0]) / np.linalg.norm([-0.5, -0.3, -1.0])
    spec.worldbody.add_light(
        type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL,
        pos=centre - 3.0 * reach * direction,
        dir=direction,
        diffuse=[diffuse[1]] * 3,
        specular=[0.2] * 3,
        castshadow=False,
    )


def _add_hand_camera(
    mujoco: ModuleType,
    bodies: list[Any],
    sticks: list[tuple[int, Float, bool]],
    lengths: Float,
    placements: tuple[Float, Float],
    reach: float,
) -> None:
    """Add `HAND_CAMERA` to the body that holds the tip of the longest chain of sticks.

    The camera looks at that body's origin along `_view`, its view of half-side `HAND_SHARE`
    times `reach` there, and follows it in MuJoCo's mode ``track``: a constant offset and
    orientation in the world, so that the hand stays in the middle of its view, seen from one
    side, while the hand's own turns show.

    Args:
      bodies: the MjSpec bodies of the model's bodies, in order.
      sticks: `_sticks`; lengths: their `_chains` lengths, bodies then leaf ends.
      placements: (nbody, 3, 3) rotations and (nbody, 3) origins at qpos0, where MuJoCo takes
        the offset.
    """
    leaves = [owner for owner, _, leaf in sticks if leaf]
    owner = leaves[int(np.argmax(lengths[len(bodies) :]))]
    rotations, origins = placements
    position, rotation = _camera_pose(HAND_CAMERA, origins[owner], HAND_SHARE * reach)
    frame = (rotations[owner], origins[owner])
    position, rotation = _in_frame(frame, position, rotation)
    camera = bodies[owner].add_camera(name=HAND_CAMERA, pos=position)
    camera.mode = mujoco.mjtCamLight.mjCAMLIGHT_TRACK
    camera.fovy = FOVY
    camera.quat = mujoco_quaternion(mujoco, rotation)


def _in_frame(frame: tuple[Float, Float], position: Float, rotation: Float) -> tuple[Float, Float]:
    """A world placement, (3,) position and (3, 3) rotation, in the body frame `frame`: its
    (3, 3) rotation and (3,) origin in the world."""
    axes, origin = frame
    return axes.T @ (position - origin), axes.T @ rotation


def _camera_pose(name: str, centre: Float, half: float) -> tuple[Float, Float]:
    """World placement of camera `name` aimed at `centre`, its view of half-side `half` there.

    The camera looks along `_view` from the distance at which its `FOVY` spans ``2 * half`` at
    `centre`.

    Args:
      name: one of `ROBOT_CAMERAS` or `HAND_CAMERA`.
      centre: (3,) the point in the middle of the view.
      half: half the side of the square the view spans at `centre` (m).

    Returns:
      (3,) position and (3, 3) orientation, its columns the image's right, its up and the
      camera's backward direction (MuJoCo's camera frame).
    """
    direction, right = _view(name)
    up = np.cross(direction, right)
    distance = half / math.tan(math.radians(FOVY / 2.0))
    return centre + distance * direction, np.column_stack([right, up, direction])


def _fit_view(name: str, points: Float, radii: Float) -> tuple[Float, float]:
    """The centre and half-side of camera `name`'s view (`_camera_pose`) that hold the spheres.

    The centre is the middle of their extent across the view and along it; the half-side
    puts each sphere inside the perspective view: ``|x| + r <= tan(FOVY / 2) (d - z)`` for its
    offset ``x`` across the view (right or up) and ``z`` toward the camera, at the camera's
    distance ``d`` from the centre.

    Args:
      name: one of `ROBOT_CAMERAS`.
      points: (m, 3) sphere centres in the world.
      radii: (m,) their radii.

    Returns:
      (3,) centre and half-side (m).
    """
    direction, right = _view(name)
    axes = np.stack([right, np.cross(direction, right), direction])
    offsets = points @ axes.T
    low = (offsets - radii[:, None]).min(axis=0)
    high = (offsets + radii[:, None]).max(axis=0)
    middle = 0.5 * (low + high)
    offsets -= middle
    across = np.abs(offsets[:, :2]).max(axis=1) + radii
    slope = math.tan(math.radians(FOVY / 2.0))
    return middle @ axes, float((across + slope * offsets[:, 2]).max())


def _view(name: str) -> tuple[Float, Float]:
    """(3,) unit direction from the target to camera `name`, and (3,) the image's right.

    The hand camera looks from between the front and the side cameras, at their elevation.
    """
    c, s = math.cos(math.radians(ELEVATION)), math.sin(math.radians(ELEVATION))
    half = math.sqrt(0.5)
    views = {
        "front": ([c, 0.0, s], [0.0, 1.0, 0.0]),
        "side": ([0.0, -c, s], [1.0, 0.0, 0.0]),
        "top": ([0.0, 0.0, 1.0], [0.0, -1.0, 0.0]),
        HAND_CAMERA: ([c * half, -c * half, s], [half, half, 0.0]),
    }
    direction, right = views[name]
    return np.array(direction), np.array(right)
