"""Offscreen rendering: the robot scene mirrors `build_mujoco`, frames show the motion.

Needs MuJoCo (the Gymnasium tests Gymnasium) and an offscreen OpenGL context: EGL or OSMesa
where there is no display (`invdyn._headless`); without one the rendering tests fail.
"""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

import invdyn
from conftest import load_quietly, requires_erd
from invdyn.model import Model
from invdyn.sim import (
    CollectedEpisode,
    Collection,
    build_mujoco,
    collect_gym,
    collect_robot,
    render,
)
from invdyn.sim.mujoco_model import import_mujoco
from invdyn.sim.render import RENDER_SHARD, render_collection, render_frames
from invdyn.sim.scene import HAND_CAMERA, ROBOT_CAMERAS, robot_scene, scene_for

if importlib.util.find_spec("mujoco") is None:
    pytest.skip("mujoco is not installed", allow_module_level=True)
mujoco = import_mujoco()

requires_gym = pytest.mark.skipif(
    importlib.util.find_spec("gymnasium") is None, reason="gymnasium is not installed"
)
ROBOTS = [
    pytest.param("panda", marks=requires_erd),
    pytest.param("ur5", marks=requires_erd),
    "double_pendulum",
]


pytestmark = pytest.mark.usefixtures("mujoco_log_elsewhere")


def _states(model: Model, scene, q: np.ndarray) -> np.ndarray:
    """(T, nq + nv) MuJoCo states of the (T, nq) configurations `q` (fixed base), at rest."""
    assert scene.nq == model.nq
    return np.concatenate([q, np.zeros((len(q), scene.nv))], axis=1)


@pytest.mark.parametrize("name", ROBOTS)
def test_robot_scene_mirrors_build_mujoco(name):
    model = load_quietly(name)
    scene, sim = robot_scene(model), build_mujoco(model)
    # the same joints, coordinates and inertias, so a collection's full_state applies as it is
    assert (scene.nq, scene.nv, scene.njnt) == (sim.nq, sim.nv, sim.njnt)
    names = [scene.joint(j).name for j in range(scene.njnt)]
    assert names == [sim.joint(j).name for j in range(sim.njnt)] == list(model.jnt_name)
    for field in ("jnt_qposadr", "jnt_dofadr", "jnt_type", "qpos0", "body_mass", "dof_armature"):
        np.testing.assert_array_equal(getattr(scene, field), getattr(sim, field), err_msg=field)
    # cameras, and visuals that touch nothing
    assert [scene.camera(i).name for i in range(scene.ncam)] == [*ROBOT_CAMERAS, HAND_CAMERA]
    assert scene.ngeom > model.nbody
    assert not scene.geom_contype.any() and not scene.geom_conaffinity.any()


@pytest.mark.parametrize("name", ROBOTS)
def test_robot_frames_show_the_configuration(name):
    model = load_quietly(name)
    scene = robot_scene(model)
    # neutral twice, then a configuration within the limits
    rng = np.random.default_rng(0)
    lower, upper = np.maximum(model.q_lower, -1.5), np.minimum(model.q_upper, 1.5)
    q = np.stack([np.zeros(model.nq), np.zeros(model.nq), rng.uniform(lower, upper)])
    for camera in ("front", "side", HAND_CAMERA, -1):
        frames = render_frames(scene, _states(model, scene, q), camera=camera, width=48, height=40)
        assert frames.shape == (3, 40, 48, 3) and frames.dtype == np.uint8
        assert np.ptp(frames[0]) > 0
        np.testing.assert_array_equal(frames[0], frames[1])
        moved = np.any(frames[0] != frames[2], axis=-1).mean()
        assert moved > 0.005, f"{camera}: {moved:.4f} of the pixels changed"


@requires_erd
def test_robot_scene_with_meshes_shows_a_wrist_roll():
    """The Panda drawn with its collision meshes: other pixels than the stick figure, the roll
    of its last joint about its own link shows, and the dynamics stay build_mujoco's."""
    model = load_quietly("panda")
    q = np.stack([np.zeros(model.nq), np.zeros(model.nq)])
    q[1, 6] = 1.2  # panda_joint7 turns the hand about the last link's axis
    frames = {}
    for meshes in (False, True):
        scene = robot_scene(model, meshes=meshes)
        np.testing.assert_array_equal(scene.body_mass, build_mujoco(model).body_mass)
        assert not scene.geom_contype.any() and not scene.geom_conaffinity.any()
        states = _states(model, scene, q)
        frames[meshes] = render_frames(scene, states, camera="front", width=96, height=96)
    assert scene.nmesh >= 8
    # the fingers, which have collision boxes and no mesh, show them rather than sticks
    fingers = [scene.body(f"panda_{side}finger").id for side in ("left", "right")]
    for finger in fingers:
        kinds = scene.geom_type[scene.geom_bodyid == finger]
        assert (kinds == mujoco.mjtGeom.mjGEOM_BOX).sum() == 4, kinds
    assert np.any(frames[True][0] != frames[False][0], axis=-1).mean() > 0.01
    assert np.any(frames[True][0] != frames[True][1], axis=-1).mean() > 0.002
    pendulum = invdyn.load("pendulum").replace(source="pendulum")
    with pytest.raises(invdyn.InputError, match="meshes come from the URDF"):
        robot_scene(pendulum, meshes=True)


def test_render_collection_robot():
    model = load_quietly("double_pendulum")
    collection = collect_robot(model, episodes=1, duration=0.1, control_rate=100.0, seed=0)
    videos = list(render_collection(collection, cameras=("front", "top", -1), width=32, height=24))
    assert len(videos) == 1 and list(videos[0]) == ["front", "top", "default"]
    for frames in videos[0].values():
        assert frames.shape == (11, 24, 32, 3) and frames.dtype == np.uint8
    # the scene renders what render_frames renders from the full state
    again = render_frames(
        robot_scene(model), collection.episodes[0].full_state, camera="top", width=32, height=24
    )
    np.testing.assert_array_equal(videos[0]["top"], again)


def test_render_collection_in_parallel_equals_serial():
    """Two processes, each with its own OpenGL context, render the frames of one."""
    model = load_quietly("double_pendulum")
    collection = collect_robot(model, episodes=3, duration=0.05, control_rate=100.0, seed=2)
    serial, parallel = (
        list(render_collection(collection, cameras=("front", "side"), workers=w)) for w in (1, 2)
    )
    assert len(parallel) == 3
    for one, other in zip(serial, parallel, strict=True):
        assert list(one) == list(other) == ["front", "side"]
        for camera in one:
            np.testing.assert_array_equal(one[camera], other[camera])
    with pytest.raises(invdyn.InputError, match="workers"):
        render_collection(collection, workers=0)


def test_render_collection_cache_renders_each_shard_once(tmp_path, monkeypatch):
    """Saved shards are read back, not rendered; a damaged one is rendered and saved again;
    other inputs draw new ones; a save that fails warns and the frames go on."""
    model = load_quietly("double_pendulum")
    collection = collect_robot(
        model, episodes=RENDER_SHARD + 2, duration=0.05, control_rate=100.0, seed=3
    )
    cameras = ("front", "side")
    plain = list(render_collection(collection, cameras=cameras))
    cache = tmp_path / "cache"
    first = list(render_collection(collection, cameras=cameras, cache=cache))
    assert render.cached_shards(cache) == 2  # a full shard and a shard of two
    # the shard of two episodes: their videos and the camera names
    small = next(f for f in cache.iterdir() if len(np.load(f).files) == 2 * len(cameras) + 1)

    drawn: list[int] = []
    draw = render._render_episodes

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        drawn.append(len(args[-1]))
        return draw(*args, **kwargs)

    monkeypatch.setattr(render, "_render_episodes", counting)
    small.write_bytes(small.read_bytes()[:100])  # a shard killed while being written
    again = list(render_collection(collection, cameras=cameras, cache=cache))
    assert drawn == [2]
    assert len(np.load(small).files) == 2 * len(cameras) + 1  # saved again, whole
    for videos in (first, again):
        assert len(videos) == len(plain)
        for got, want in zip(videos, plain):
            assert list(got) == list(cameras)
            for camera in cameras:
                np.testing.assert_array_equal(got[camera], want[camera])
    # another size and other cameras are drawn anew
    drawn.clear()
    list(render_collection(collection, cameras=cameras, width=32, cache=cache))
    list(render_collection(collection, cameras=("side",), cache=cache))
    assert sorted(drawn) == [2, 2, RENDER_SHARD, RENDER_SHARD]
    assert render.cached_shards(cache) == 6

    # a save that fails: a warning, and the frames all the same
    def full_disk(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(render, "atomic_open", full_disk)
    with pytest.warns(UserWarning, match="not saved in .*No space left"):
        tall = list(render_collection(collection, cameras=cameras, height=48, cache=cache))
    assert len(tall) == len(plain) and tall[0]["front"].shape[1:] == (48, 64, 3)
    assert render.cached_shards(cache) == 6

    # removing the cache leaves what else the directory holds, and then the directory
    (cache / ".shard-x.npz.tmp").write_bytes(b"killed")
    (cache / "notes.txt").write_text("mine")
    render.remove_cache(cache)
    assert [p.name for p in cache.iterdir()] == ["notes.txt"]
    (cache / "notes.txt").unlink()
    render.remove_cache(cache)
    assert not cache.exists() and render.cached_shards(cache) == 0


@requires_gym
def test_render_collection_gym():
    collection = collect_gym("Reacher-v5", episodes=1, steps_per_episode=5, seed=0)
    videos = list(render_collection(collection, cameras=("default",), width=40, height=32))
    assert videos[0]["default"].shape == (6, 32, 40, 3)

    # two arm configurations give two images
    scene = scene_for(collection.source)
    states = np.repeat(collection.episodes[0].full_state[:1], 2, axis=0)
    states[1, :2] += [1.0, -1.0]
    frames = render_frames(scene, states, camera="default", width=64, height=64)
    assert np.any(frames[0] != frames[1], axis=-1).mean() > 0.002


def test_meshes_flat_or_unreadable(tmp_path):
    """A flat mesh (no volume) is drawn; one MuJoCo cannot read is named in an InputError."""
    header = b"\0" * 80
    # a square of two facets: normal, then three vertices each
    square = [
        [0, 0, 1, 0, 0, 0, 0.1, 0, 0, 0, 0.1, 0],
        [0, 0, 1, 0.1, 0, 0, 0.1, 0.1, 0, 0, 0.1, 0],
    ]
    facets = b"".join(np.array(f, np.float32).tobytes() + b"\0\0" for f in square)
    (tmp_path / "flat.stl").write_bytes(header + np.uint32(2).tobytes() + facets)
    (tmp_path / "empty.stl").write_bytes(header + np.uint32(0).tobytes())
    inertia = 'ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"'
    inertial = f'<inertial><mass value="1"/><inertia {inertia}/></inertial>'

    def arm(mesh: str) -> Model:
        """A one-link arm whose link shows the mesh file `mesh`."""
        collision = f'<collision><geometry><mesh filename="{mesh}"/></geometry></collision>'
        (tmp_path / "arm.urdf").write_text(
            f'<robot name="arm"><link name="base"/><link name="b">{inertial}{collision}</link>'
            '<joint name="j" type="continuous"><parent link="base"/><child link="b"/>'
            '<axis xyz="0 0 1"/></joint></robot>'
        )
        return invdyn.load(tmp_path / "arm.urdf")

    assert robot_scene(arm("flat.stl"), meshes=True).nmesh == 1
    with pytest.raises(invdyn.InputError, match="cannot draw the meshes of .*arm.urdf"):
        robot_scene(arm("empty.stl"), meshes=True)


@requires_erd
def test_hand_camera_follows_the_hand():
    """The hand camera keeps its offset from the hand and its orientation in the world, so a
    turn of the wrist changes much more of its view than of the front camera's."""
    model = load_quietly("panda")
    scene = robot_scene(model, meshes=True)
    camera = scene.camera(HAND_CAMERA)
    body = int(camera.bodyid[0])
    assert camera.mode == mujoco.mjtCamLight.mjCAMLIGHT_TRACK
    assert scene.body(body).name in ("panda_leftfinger", "panda_rightfinger")

    rng = np.random.default_rng(3)
    q = rng.uniform(np.maximum(model.q_lower, -2.0), np.minimum(model.q_upper, 2.0), (4, 9))
    data = mujoco.MjData(scene)
    placements = []
    for row in q:
        data.qpos[:] = row
        mujoco.mj_forward(scene, data)
        offset = data.cam_xpos[camera.id] - data.xpos[body]
        placements.append(np.concatenate([offset, data.cam_xmat[camera.id]]))
    np.testing.assert_allclose(placements, [placements[0]] * len(q), atol=1e-9)
    assert np.linalg.norm(placements[0][:3]) > 0.1

    # the hand's roll about the last link
    rolled = np.stack([q[0], q[0]])
    rolled[1, 6] += 0.6
    states = _states(model, scene, rolled)
    hand = _changed(render_frames(scene, states, camera=HAND_CAMERA, width=64, height=64))
    front = _changed(render_frames(scene, states, camera="front", width=64, height=64))
    assert hand > 0.03 and hand > 4.0 * front, f"hand {hand:.4f}, front {front:.4f}"


def _changed(frames: np.ndarray) -> float:
    """Share of the pixels that differ between the two frames of `frames`."""
    return float(np.any(frames[0] != frames[1], axis=-1).mean())


@requires_gym
def test_gym_scene_frames_the_arm():
    import gymnasium

    env = gymnasium.make("Reacher-v5")
    sim = env.unwrapped.model
    env.close()
    scene = scene_for("gym:Reacher-v5")
    # the environment's joints and layout, and the three cameras, fixed (no root slides)
    assert [scene.camera(i).name for i in range(scene.ncam)] == list(ROBOT_CAMERAS)
    assert not scene.cam_mode.any()
    assert (scene.nq, scene.nv, scene.ngeom) == (sim.nq, sim.nv, sim.ngeom)
    names = [scene.joint(j).name for j in range(scene.njnt)]
    assert names == [sim.joint(j).name for j in range(sim.njnt)]
    np.testing.assert_array_equal(scene.qpos0, sim.qpos0)

    # the arm fills the top view: two arm configurations differ in many more pixels there
    states = np.zeros((2, scene.nq + scene.nv))
    states[:, : scene.nq] = scene.qpos0
    states[1, :2] += [1.0, -1.0]
    top = _changed(render_frames(scene, states, camera="top", width=64, height=64))
    free = _changed(render_frames(scene, states, camera="default", width=64, height=64))
    assert top > 0.02 and top > 3.0 * free, f"top {top:.4f}, default {free:.4f}"


@requires_gym
def test_gym_scene_follows_a_runner():
    scene = scene_for("gym:HalfCheetah-v5")
    # the environment's camera first, then ours, which track the torso's centre of mass
    names = [scene.camera(i).name for i in range(scene.ncam)]
    assert names == ["track", *ROBOT_CAMERAS]
    assert (scene.cam_mode == mujoco.mjtCamLight.mjCAMLIGHT_TRACKCOM).all()
    states = np.zeros((2, scene.nq + scene.nv))
    states[:, : scene.nq] = scene.qpos0
    states[1, 3:] = 0.5  # legs bent
    for camera in ROBOT_CAMERAS:
        frames = render_frames(scene, states, camera=camera, width=48, height=48)
        assert np.ptp(frames[0]) > 0 and _changed(frames) > 0.005, camera

    # 5 m on, the cameras moved with it
    data = mujoco.MjData(scene)
    mujoco.mj_forward(scene, data)
    start = data.cam_xpos.copy()
    data.qpos[0] += 5.0
    mujoco.mj_forward(scene, data)
    np.testing.assert_allclose(data.cam_xpos - start, [[5.0, 0.0, 0.0]] * 4, atol=1e-9)


@requires_gym
def test_gym_scene_needs_the_environment_joints(monkeypatch):
    import gymnasium.envs.mujoco

    # the environment's MJCF file read as another one, with other joints
    from_file = mujoco.MjSpec.from_file
    other = f"{gymnasium.envs.mujoco.__path__[0]}/assets/hopper.xml"
    monkeypatch.setattr(mujoco.MjSpec, "from_file", lambda path: from_file(other))
    with pytest.raises(invdyn.InputError, match="compiles to a model with other joints"):
        scene_for("gym:Reacher-v5")


def test_buffer_enlarged_on_a_copy():
    scene = robot_scene(load_quietly("double_pendulum"))
    frames = render_frames(scene, np.zeros((1, 4)), camera="front", width=700, height=8)
    assert frames.shape == (1, 8, 700, 3)
    assert scene.vis.global_.offwidth == 640


def test_bad_input():
    model = load_quietly("double_pendulum")
    scene = robot_scene(model)
    states = np.zeros((2, 4))
    listed = (
        r"unknown camera 'back'.*'front', 'side', 'top', 'hand', 'default' \(the free camera\)$"
    )
    with pytest.raises(invdyn.InputError, match=listed):
        render_frames(scene, states, camera="back")
    with pytest.raises(
        invdyn.InputError, match=r"unknown camera 4.*; or ids 0 to 3, or -1 for the"
    ):
        render_frames(scene, states, camera=4)
    with pytest.raises(invdyn.InputError, match="width must be an integer >= 1"):
        render_frames(scene, states, camera="front", width=0)
    with pytest.raises(invdyn.InputError, match="height must be an integer >= 1"):
        render_frames(scene, states, camera="front", height=True)
    with pytest.raises(invdyn.InputError, match=r"full_states must have shape \(T, 4\)"):
        render_frames(scene, np.zeros((2, 3)), camera="front")
    with pytest.raises(invdyn.InputError, match="non-finite"):
        render_frames(scene, np.full((2, 4), np.nan), camera="front")
    with pytest.raises(invdyn.InputError, match="model must be an invdyn.Model"):
        robot_scene("double_pendulum")

    # collections: no full_state, a wrong one, another source, cameras as a string
    episode = CollectedEpisode(state=np.zeros((2, 4)), action=np.zeros((2, 2)), timestamp=[0, 1])
    collection = Collection((episode,), ("a",) * 4, ("b",) * 2, 1.0, "invdyn:double_pendulum")
    with pytest.raises(invdyn.InputError, match=r"episodes\[0\] has no full_state"):
        render_collection(collection, scene=scene)
    good, wrong = (
        CollectedEpisode(
            state=np.zeros((2, 4)), action=np.zeros((2, 2)), timestamp=[0, 1], full_state=full
        )
        for full in (np.zeros((2, 4)), np.zeros((2, 2)))
    )
    with pytest.raises(invdyn.InputError, match=r"episodes\[1\].full_state must have shape"):
        render_collection(Collection((good, wrong), ("a",) * 4, ("b",) * 2, 1.0, "x"), scene=scene)
    with pytest.raises(invdyn.InputError, match="cameras must be a non-empty sequence"):
        render_collection(collection, cameras="front", scene=scene)
    with pytest.raises(invdyn.InputError, match="names a camera twice"):
        render_collection(collection, cameras=("default", -1), scene=scene)
    with pytest.raises(invdyn.InputError, match="source 'robot:x' is not rendered"):
        render_collection(Collection((episode,), ("a",) * 4, ("b",) * 2, 1.0, "robot:x"))
    with pytest.raises(invdyn.InputError, match="cannot be loaded"):
        scene_for("invdyn:nosuchrobot")


def test_headless_backend_choice(monkeypatch):
    """Without a display, before MuJoCo loads, EGL is chosen where it loads (as here)."""
    import sys

    from invdyn._headless import choose_gl_backend

    for name in ("MUJOCO_GL", "PYOPENGL_PLATFORM", "DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delitem(sys.modules, "mujoco", raising=False)
    if sys.platform.startswith("linux"):
        assert choose_gl_backend() == "egl"
        assert os.environ["MUJOCO_GL"] == os.environ["PYOPENGL_PLATFORM"] == "egl"
    # the user's choice, a display, or MuJoCo already loaded: left alone
    monkeypatch.setenv("MUJOCO_GL", "osmesa")
    assert choose_gl_backend() is None and os.environ["MUJOCO_GL"] == "osmesa"
    monkeypatch.delenv("MUJOCO_GL")
    monkeypatch.setenv("DISPLAY", ":0")
    assert choose_gl_backend() is None and "MUJOCO_GL" not in os.environ
