"""Offscreen rendering of MuJoCo states, the frames of video datasets for inverse dynamics.

`render_frames` renders rows of MuJoCo's full state ``(qpos, qvel)`` from one camera;
`render_collection` renders every episode of a `invdyn.sim.Collection` from its
``full_state``, in the MuJoCo model that `scene_for` finds for its source: the Gymnasium
environment's own model, or for an invdyn robot `robot_scene`, a stick figure of it.
`build_mujoco` adds no geometry, so the stick figure is drawn on the same bodies and joints:
a capsule from each body's origin to each child's (and from the world origin to each root),
spheres at the origins, a marker at the end of each leaf body, one colour per link, a checker
floor below the robot, a headlight and a directional light, and the fixed cameras "front"
(on +x), "side" (on -y) and "top", aimed at the robot's workspace.

Rendering needs an OpenGL context without a window. MuJoCo chooses its backend when it is
first imported, from the environment variable ``MUJOCO_GL``, which is always honoured. When it
is unset and there is no display, ``import invdyn`` sets it (`invdyn._headless`): EGL, headless
and hardware accelerated where a GPU driver provides it, else OSMesa, software rendering. If
MuJoCo was imported before invdyn without ``MUJOCO_GL`` (by Gymnasium or a user's script, say),
it uses GLFW, which needs a display: set ``MUJOCO_GL=egl`` (or ``osmesa``) in the environment
then.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from tqdm.auto import tqdm

from invdyn._arrays import not_a_model
from invdyn.configuration import neutral
from invdyn.errors import InputError, InvdynError
from invdyn.io import load
from invdyn.kinematics import forward_kinematics
from invdyn.model import Model
from invdyn.sim.collect import Collection, _import_gymnasium, _make_env
from invdyn.sim.mujoco_model import _add_joint, _quat, build_mujoco, import_mujoco

if TYPE_CHECKING:
    import mujoco

Float = NDArray[np.float64]
Frames = NDArray[np.uint8]
Int = NDArray[np.int64]

DEFAULT_CAMERA = "default"
"""Camera name of MuJoCo's free camera (id -1), placed by ``mjv_defaultFreeCamera``."""

ROBOT_CAMERAS: tuple[str, ...] = ("front", "side", "top")
"""Fixed cameras of `robot_scene`."""

# stick radius as a share of the reach, and its floor (m); joint spheres and leaf markers are
# larger by these factors; the reach of a robot smaller than MIN_REACH (m) counts as MIN_REACH
RADIUS_SHARE = 0.03
MIN_RADIUS = 0.005
JOINT_SCALE = 1.3
MARKER_SCALE = 1.8
MIN_REACH = 0.1
# sticks shorter than this (m) are not drawn
MIN_LENGTH = 1e-6
# link colours (matplotlib's tab10), the base's colour, and the floor's two checker colours
PALETTE = (
    (0.12, 0.47, 0.71),
    (1.00, 0.50, 0.05),
    (0.17, 0.63, 0.17),
    (0.84, 0.15, 0.16),
    (0.58, 0.40, 0.74),
    (0.55, 0.34, 0.29),
    (0.89, 0.47, 0.76),
    (0.50, 0.50, 0.50),
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
# at the neutral configuration, which is always in view
ELEVATION = 30.0
FOVY = 45.0
FRAMED = 0.75
MARGIN = 1.15


def robot_scene(model: Model) -> mujoco.MjModel:
    """A MuJoCo model of `model` to render: `build_mujoco`'s, with a stick figure to see.

    Bodies, joints, inertias and options are those of ``build_mujoco(model)``, so ``qpos`` and
    ``qvel`` have its layout and a collection's ``full_state`` applies as it is. The visuals
    are described in the module docstring; their geoms have no contacts and leave the inertias,
    which are explicit, as they are. The stick radius is `RADIUS_SHARE` of the reach, the
    longest chain of sticks from the world origin, and the cameras frame the workspace: a
    cube of half-side the reach of the arm about each root body at the neutral configuration,
    cut at the floor, which lies one radius below the lowest point of the neutral figure. The
    cameras are fixed in the world: a floating base that walks away leaves their view.

    Args:
      model: the robot.

    Returns:
      The compiled ``mujoco.MjModel``, with the cameras of `ROBOT_CAMERAS`.

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
    for i in range(model.nbody):
        parent = model.body_parent[i]
        mj_parent = spec.worldbody if parent < 0 else bodies[parent]
        body = mj_parent.add_body(
            name=model.body_name[i], pos=sim.body_pos[i + 1], quat=sim.body_quat[i + 1]
        )
        body.explicitinertial = True
        body.mass = sim.body_mass[i + 1]
        body.ipos = sim.body_ipos[i + 1]
        body.inertia = sim.body_inertia[i + 1]
        body.iquat = sim.body_iquat[i + 1]
        _add_joint(mujoco, body, model, i)
        bodies.append(body)

    # the stick figure: sticks, joint spheres, leaf markers
    for owner, end, leaf in sticks:
        body = spec.worldbody if owner < 0 else bodies[owner]
        rgba = [*(BASE_COLOUR if owner < 0 else PALETTE[owner % len(PALETTE)]), 1.0]
        if np.linalg.norm(end) >= MIN_LENGTH:
            _add_visual(mujoco, body, "capsule", [radius], rgba, fromto=[0, 0, 0, *end])
        if leaf:
            _add_visual(mujoco, body, "sphere", [MARKER_SCALE * radius], rgba, pos=end)
    for i, body in enumerate(bodies):
        rgba = [*PALETTE[i % len(PALETTE)], 1.0]
        _add_visual(mujoco, body, "sphere", [JOINT_SCALE * radius], rgba, pos=[0, 0, 0])

    # floor, lights and cameras about the workspace
    rotations, origins = forward_kinematics(model, neutral(model))
    points = np.array([[0.0, 0.0, 0.0], *(_world_end(rotations, origins, s) for s in sticks)])
    floor = float(points[:, 2].min()) - radius
    low, high = _workspace(origins, lengths, roots, floor)
    centre = 0.5 * (low + high)
    _add_floor(mujoco, spec, centre, floor, reach)
    _add_lights(mujoco, spec, centre, reach)
    half = max(
        FRAMED * float(np.max(high - low)) / 2.0,
        MARGIN * float(np.linalg.norm(points - centre, axis=1).max()),
    )
    distance = half / math.tan(math.radians(FOVY / 2.0))
    for name in ROBOT_CAMERAS:
        direction, right = _view(name)
        up = np.cross(direction, right)
        camera = spec.worldbody.add_camera(name=name, pos=centre + distance * direction)
        camera.fovy = FOVY
        camera.quat = _quat(mujoco, np.column_stack([right, up, direction]))

    scene = spec.compile()
    # per-dof armature and friction exactly, as build_mujoco sets them
    for field in ("dof_armature", "dof_damping", "dof_frictionloss"):
        getattr(scene, field)[:] = getattr(sim, field)
    mujoco.mj_setConst(scene, mujoco.MjData(scene))
    return scene


def render_frames(
    mj_model: mujoco.MjModel,
    full_states: ArrayLike,
    *,
    camera: str | int,
    width: int = 64,
    height: int = 64,
) -> Frames:
    """Images of MuJoCo states from one camera: ``mj_forward`` at each state, then render.

    Args:
      mj_model: the MuJoCo model; a copy with a larger offscreen buffer is rendered when
        `width` or `height` exceed its own (``vis.global_.offwidth``, ``offheight``).
      full_states: (T, nq + nv) ``qpos`` and ``qvel`` of `mj_model` at each frame.
      camera: a camera name or id of `mj_model`, or `DEFAULT_CAMERA` (``"default"``) or -1
        for MuJoCo's free camera.
      width: image width in pixels, >= 1.
      height: image height in pixels, >= 1.

    Returns:
      (T, height, width, 3) RGB images, uint8.

    Raises:
      InputError: a bad argument; an unknown camera's message lists the model's cameras.
      InvdynError: MuJoCo cannot create an OpenGL context (see the module docstring).
    """
    mujoco = import_mujoco()
    camera_id = _camera_id(mj_model, camera)
    states = _full_states(mj_model, full_states, "full_states")
    with _renderer(mujoco, mj_model, _pixels("width", width), _pixels("height", height)) as r:
        return _render(mujoco, r, states, camera_id)


def scene_for(source: str) -> mujoco.MjModel:
    """The MuJoCo model that renders the ``full_state`` of data from `source`.

    Args:
      source: ``"invdyn:<robot>"`` (`robot_scene` of ``invdyn.load(robot)``) or
        ``"gym:<env id>"`` (the environment's model, cameras as it defines them), as
        `invdyn.sim.Collection.source` names it.

    Returns:
      The compiled ``mujoco.MjModel``.

    Raises:
      InputError: another source, or a robot that ``invdyn.load`` cannot find by name (render
        with ``render_collection(..., scene=robot_scene(model))`` then).
    """
    import_mujoco()
    if not isinstance(source, str):
        raise InputError(f"source must be a string, got {type(source).__name__}")
    kind, _, name = source.partition(":")
    if kind == "invdyn":
        try:
            model = load(name)
        except InvdynError as error:
            raise InputError(
                f"source {source!r}: cannot load the robot ({error}); pass "
                "scene=robot_scene(model) to render_collection"
            ) from None
        return robot_scene(model)
    if kind == "gym":
        env = _make_env(_import_gymnasium(), name, None)
        try:
            return env.unwrapped.model
        finally:
            env.close()
    raise InputError(
        f"source {source!r} is not rendered; expected 'invdyn:<robot>' or 'gym:<env id>'"
    )


def render_collection(
    collection: Collection,
    *,
    cameras: Sequence[str | int] = ("front",),
    width: int = 64,
    height: int = 64,
    scene: mujoco.MjModel | None = None,
    progress: bool = False,
) -> list[dict[str, Frames]]:
    """Videos of every episode of `collection`, from its ``full_state``, one per camera.

    Args:
      collection: the episodes, each with a ``full_state``.
      cameras: camera names or ids of the scene; `DEFAULT_CAMERA` (``"default"``) or -1 is
        MuJoCo's free camera, which every scene has. `robot_scene` has `ROBOT_CAMERAS`.
      width: image width in pixels, >= 1.
      height: image height in pixels, >= 1.
      scene: the MuJoCo model to render in; None for ``scene_for(collection.source)``.
      progress: show a progress bar over episodes.

    Returns:
      Per episode, a dict from camera name (``"default"`` for -1) to its (T, height, width, 3)
      uint8 frames.

    Raises:
      InputError: a bad argument, an episode without ``full_state`` or with one that does not
        fit the scene, or an unknown camera (the message lists the scene's cameras).
      InvdynError: MuJoCo cannot create an OpenGL context (see the module docstring).
    """
    mujoco = import_mujoco()
    if not isinstance(collection, Collection):
        raise InputError(
            f"collection must be an invdyn.sim.Collection, got {type(collection).__name__}"
        )
    mj_model = scene_for(collection.source) if scene is None else scene
    ids = camera_ids(mj_model, cameras)
    videos = []
    for k, episode in enumerate(collection.episodes):
        if episode.full_state is None:
            raise InputError(
                f"collection.episodes[{k}] has no full_state (MuJoCo's qpos and qvel) to render"
            )
        name = f"collection.episodes[{k}].full_state"
        videos.append(_full_states(mj_model, episode.full_state, name))
    size = _pixels("width", width), _pixels("height", height)
    rendered = []
    with _renderer(mujoco, mj_model, *size) as renderer:
        for states in tqdm(videos, disable=not progress, desc="render", unit="ep"):
            rendered.append({name: _render(mujoco, renderer, states, i) for name, i in ids.items()})
    return rendered


# rendering


def _renderer(mujoco: ModuleType, mj_model: Any, width: int, height: int) -> Any:
    """A ``mujoco.Renderer`` of `width` x `height`, the buffer enlarged on a copy if needed."""
    buffer = mj_model.vis.global_
    if width > buffer.offwidth or height > buffer.offheight:
        mj_model = copy.deepcopy(mj_model)
        mj_model.vis.global_.offwidth = max(width, buffer.offwidth)
        mj_model.vis.global_.offheight = max(height, buffer.offheight)
    try:
        return mujoco.Renderer(mj_model, height=height, width=width)
    except Exception as error:  # GLFW without a display, no EGL device, ...
        raise InvdynError(
            f"MuJoCo cannot render offscreen ({' '.join(str(error).split())}); without a "
            "display set MUJOCO_GL=egl or MUJOCO_GL=osmesa before mujoco is imported"
        ) from error


def _render(mujoco: ModuleType, renderer: Any, states: Float, camera_id: int) -> Frames:
    """(T, H, W, 3) images of the (T, nq + nv) states from camera `camera_id`."""
    mj_model = renderer.model
    data = mujoco.MjData(mj_model)
    frames = np.empty((len(states), renderer.height, renderer.width, 3), dtype=np.uint8)
    for t, state in enumerate(states):
        data.qpos[:] = state[: mj_model.nq]
        data.qvel[:] = state[mj_model.nq :]
        mujoco.mj_forward(mj_model, data)
        renderer.update_scene(data, camera=camera_id)
        renderer.render(out=frames[t])
    return frames


# argument checks


def camera_ids(mj_model: Any, cameras: Sequence[str | int]) -> dict[str, int]:
    """The cameras of `mj_model` that `render_collection` takes: name -> id (-1: free).

    Raises:
      InputError: not a non-empty sequence, an unknown camera (the message lists the model's),
        or one camera twice.
    """
    if not isinstance(cameras, Sequence) or isinstance(cameras, str) or not cameras:
        raise InputError(
            f"cameras must be a non-empty sequence of camera names or ids, got {cameras!r}"
        )
    ids: dict[str, int] = {}
    for camera in cameras:
        camera_id = _camera_id(mj_model, camera)
        ids[_camera_name(mj_model, camera, camera_id)] = camera_id
    if len(ids) < len(cameras):
        raise InputError(f"cameras names a camera twice: {list(cameras)!r}")
    return ids


def _camera_id(mj_model: Any, camera: object) -> int:
    """The id of `camera` (a name or an id of `mj_model`, -1 or "default"), or `InputError`."""
    names = [mj_model.camera(i).name for i in range(mj_model.ncam)]
    if isinstance(camera, str):
        if camera in names:
            return names.index(camera)
        if camera == DEFAULT_CAMERA:
            return -1
    elif isinstance(camera, (int, np.integer)) and not isinstance(camera, bool):
        if -1 <= camera < mj_model.ncam:
            return int(camera)
    available = ", ".join([*(repr(n) for n in names), f"{DEFAULT_CAMERA!r} (or -1, free)"])
    raise InputError(f"unknown camera {camera!r}; the model has {available}")


def _camera_name(mj_model: Any, camera: str | int, camera_id: int) -> str:
    """The name under which `render_collection` returns the frames of `camera` (id `camera_id`)."""
    if isinstance(camera, str):
        return camera
    return DEFAULT_CAMERA if camera_id < 0 else mj_model.camera(camera_id).name or str(camera_id)


def _full_states(mj_model: Any, values: Any, name: str) -> Float:
    """`values` as (T, nq + nv) finite float64 states of `mj_model`, or `InputError`."""
    size = mj_model.nq + mj_model.nv
    try:
        states = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(
            f"{name} must be an array of numbers, got {type(values).__name__}"
        ) from None
    if states.ndim != 2 or states.shape[1] != size:
        raise InputError(
            f"{name} must have shape (T, {size}) (qpos and qvel: nq = {mj_model.nq}, "
            f"nv = {mj_model.nv}), got {states.shape}"
        )
    if not np.all(np.isfinite(states)):
        raise InputError(f"{name} holds a non-finite value (NaN or inf)")
    return states


def _pixels(name: str, value: object) -> int:
    """`value` as an image size (an integer >= 1), or `InputError` naming it."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{name} must be an integer >= 1 (pixels), got {value!r}")
    if value < 1:
        raise InputError(f"{name} must be an integer >= 1 (pixels), got {value}")
    return int(value)


# the stick figure


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


def _add_lights(mujoco: ModuleType, spec: Any, centre: Float, reach: float) -> None:
    """A soft headlight, and a directional light from above, the front (+x) and the left (+y)."""
    spec.visual.headlight.ambient = [0.3] * 3
    spec.visual.headlight.diffuse = [0.4] * 3
    spec.visual.headlight.specular = [0.1] * 3
    direction = np.array([-0.5, -0.3, -1.0]) / np.linalg.norm([-0.5, -0.3, -1.0])
    spec.worldbody.add_light(
        type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL,
        pos=centre - 3.0 * reach * direction,
        dir=direction,
        diffuse=[0.6] * 3,
        specular=[0.2] * 3,
        castshadow=False,
    )


def _view(name: str) -> tuple[Float, Float]:
    """(3,) unit direction from the target to camera `name`, and (3,) the image's right."""
    c, s = math.cos(math.radians(ELEVATION)), math.sin(math.radians(ELEVATION))
    views = {
        "front": ([c, 0.0, s], [0.0, 1.0, 0.0]),
        "side": ([0.0, -c, s], [1.0, 0.0, 0.0]),
        "top": ([0.0, 0.0, 1.0], [0.0, -1.0, 0.0]),
    }
    direction, right = views[name]
    return np.array(direction), np.array(right)
