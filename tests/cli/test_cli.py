"""The ``invdyn`` command line: demo, track, info, robots and its user errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import invdyn
from conftest import requires_erd, run, unannounced, written_like
from invdyn import cli
from invdyn.cli import main
from invdyn.configuration import random_configuration
from invdyn.control.computed_torque import CONTROLLERS
from invdyn.io import robots
from invdyn.learn.config import preset
from invdyn.learn.datasets import read_dataset

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert invdyn.__version__ in capsys.readouterr().out


def test_an_unknown_option_is_reported_with_the_commands_usage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["robots", "--json", "out.json"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "usage: invdyn robots" in err
    assert "invdyn robots: error: unrecognized arguments: --json out.json" in err


@requires_erd
def test_demo_compares_controllers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The demo tracks with every controller on the exact model and three with model error,
    prints their errors per joint and writes plots, CSV logs and metrics."""
    out_dir = tmp_path / "demo"
    status, out, err = run(
        capsys, "demo", "--out", str(out_dir), "--duration", "3", "--no-progress"
    )
    assert status == 0, err
    for name in ("pd", "pd_gravity", "computed_torque", "feedforward"):
        assert name in out
        assert (out_dir / f"{name}.csv").exists()
    assert "2 kg payload" in out
    for name in invdyn.load("panda").joint_names:
        assert name in out
    for png in ("tracking.png", "tracking-payload.png"):
        assert (out_dir / png).read_bytes()[:8] == PNG_MAGIC
    metrics = json.loads((out_dir / "metrics.json").read_text())
    exact = metrics["exact"]["controllers"]
    assert exact["computed_torque"]["rms_error"] < exact["pd"]["rms_error"] / 20
    # written atomically: no temporary file left behind
    assert not [p for p in out_dir.iterdir() if p.name.startswith(".")]


def test_demo_falls_back_without_example_robot_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(robots, "is_installed", lambda name: False)
    status, out, err = run(
        capsys, "demo", "--out", str(tmp_path), "--duration", "0.5", "--no-progress"
    )
    assert status == 0, err
    assert "double_pendulum" in out and "joint2" in out
    assert (tmp_path / "tracking.png").read_bytes()[:8] == PNG_MAGIC


def test_demo_rejects_bad_duration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(
        capsys, "demo", "--robot", "pendulum", "--out", str(tmp_path), "--duration", "0"
    )
    assert status == 2
    assert err.startswith("invdyn: error: --duration")


def test_track_writes_metrics_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One controller: its rms_error, max_error and per_joint under "controllers", as for
    several, so that a script reads either the same way."""
    path = tmp_path / "metrics.json"
    status, out, err = run(
        capsys,
        "track",
        "double_pendulum",
        "--duration",
        "1",
        "--out",
        str(tmp_path / "run"),
        "--json",
        str(path),
        "--no-progress",
    )
    assert status == 0, err
    everything = json.loads(path.read_text())
    assert everything["robot"] == "double_pendulum" and set(everything["controllers"]) == {
        "computed_torque"
    }
    metrics = everything["controllers"]["computed_torque"]
    model = invdyn.load("double_pendulum")
    assert metrics["controller"] == "computed_torque"
    assert 0 < metrics["rms_error"] < 1e-3
    assert metrics["rms_error"] <= metrics["max_error"]
    assert set(metrics["per_joint"]) == set(model.joint_names)
    assert "RMS error" in out and str(path) in out
    log = np.loadtxt(tmp_path / "run" / "computed_torque.csv", delimiter=",", skiprows=1)
    assert log.shape == (1001, 1 + model.nq + 3 * model.nv)


def test_track_reads_a_csv_trajectory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = invdyn.load("double_pendulum")
    times = np.linspace(0.0, 1.0, 5)
    path = tmp_path / "reference.csv"
    rows = np.column_stack([times, 0.3 * np.sin(times), 0.2 * times])
    np.savetxt(path, rows, delimiter=",", header="time," + ",".join(model.joint_names), comments="")
    status, _, err = run(
        capsys,
        "track",
        "double_pendulum",
        "--trajectory",
        str(path),
        "--controller",
        "pd_gravity,feedforward",
        "--out",
        str(tmp_path / "run"),
        "--no-progress",
    )
    assert status == 0, err
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert set(metrics["controllers"]) == {"pd_gravity", "feedforward"}
    assert metrics["setup"]["duration"] == 1.0  # the file's, not --duration's default
    # the file sets the duration: --duration alongside it is refused, not ignored
    status, _, err = run(
        capsys, "track", "double_pendulum", "--trajectory", str(path), "--duration", "3"
    )
    assert status == 2 and "--duration applies to the minimum_jerk trajectory" in err, err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["track", "no_such_robot"], "unknown robot"),
        (["track", "double_pendulum", "--controller", "pid"], "unknown controller 'pid'"),
        (["track", "double_pendulum", "--bandwidth", "nan"], "bandwidth"),
        (["track", "double_pendulum", "--payload", "-1"], "--payload must be"),
        (["track", "double_pendulum", "--damping", "nan"], "--damping holds a non-finite"),
        (["track", "double_pendulum", "--sensor-noise", "-1"], "--sensor-noise must be"),
        (["track", "double_pendulum", "--payload-frame", "link1"], "give a mass too"),
        (["track", "double_pendulum", "--mass-error", "-1"], "--mass-error"),
        (["track", "double_pendulum", "--rate", "0"], "--rate must be a positive number"),
        (["track", "double_pendulum", "--trajectory", "missing.csv"], "missing.csv"),
        (["track", "double_pendulum", "--trajectory", "min_jerk"], "neither 'minimum_jerk' nor"),
        (["track", "."], ".: a directory, not a robot description file"),
        (["track", "double_pendulum", "--json", "."], "--json .: is a directory"),
        (["track", "double_pendulum", "--json", "/proc/m.json"], "cannot be written in /proc"),
        (["track", "double_pendulum", "--json", "/proc/version/m.json"], "(Not a directory)"),
    ],
)
def test_track_bad_input(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = run(capsys, *argv, "--out", str(tmp_path), "--no-progress")
    assert status == 2
    assert err.startswith("invdyn: error:") and message in err, err


def test_a_json_path_in_the_output_directory_is_refused_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--json naming --out itself, or a file in it (the plot the run writes there, say), is
    refused before the run, which then neither writes nor replaces anything."""
    out = tmp_path / "run"
    for json_path in (out, out / "tracking.png"):
        command = ["track", "pendulum", "--out", str(out), "--json", str(json_path)]
        status, _, err = run(capsys, *command)
        assert status == 2 and f"--json {json_path}: inside --out {out}" in err, err
        assert not out.exists()


@requires_erd
def test_track_floating_base_needs_fixed_base(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = run(capsys, "track", "solo12", "--out", str(tmp_path), "--no-progress")
    assert status == 2 and "--fixed-base" in err, err
    status, _, err = run(capsys, "demo", "--robot", "solo12", "--out", str(tmp_path))
    assert status == 2 and "invdyn track solo12 --fixed-base welds what free joints move" in err, (
        err
    )
    status, out, err = run(
        capsys,
        "track",
        "solo12",
        "--fixed-base",
        "--duration",
        "1",
        "--out",
        str(tmp_path),
        "--no-progress",
    )
    assert status == 0, err
    assert "FL_HAA" in out


def test_track_rejects_bad_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Wrong columns and a trajectory outside the joint limits are named."""
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("time,elbow\n0,0\n1,0.1\n")
    status, _, err = run(
        capsys, "track", "double_pendulum", "--trajectory", str(wrong), "--out", str(tmp_path)
    )
    assert status == 2 and "elbow" in err, err
    model = invdyn.load("planar_2r")
    joint = model.joint_names[0]
    outside = tmp_path / "outside.csv"
    beyond = model.q_upper[0] + 0.5
    columns = ",".join(model.joint_names)
    outside.write_text(f"time,{columns}\n0,0,0\n1,{beyond},0\n")
    status, _, err = run(
        capsys, "track", "planar_2r", "--trajectory", str(outside), "--out", str(tmp_path)
    )
    assert status == 2 and joint in err and "limit" in err, err
    assert "pass --no-limit-check to skip this check" in err, err
    status, _, err = run(
        capsys, "track", "planar_2r", "--trajectory", str(outside), "--no-limit-check",
        "--controller", "pd", "--out", str(tmp_path), "--no-progress",
    )  # fmt: skip
    assert status == 0, err


CART_POLE = """
<mujoco model="cart_pole">
  <worldbody>
    <body name="cart"><joint name="slider" type="slide" axis="1 0 0" range="-1 1"/>
      <geom type="box" size="0.2 0.1 0.05" mass="1"/>
      <body name="pole"><joint name="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 0.6" size="0.02" mass="0.2"/>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="slider" gear="10" ctrlrange="-1 1"/></actuator>
</mujoco>
"""


def test_underactuated_mjcf_is_shown_and_not_tracked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("mujoco")
    path = tmp_path / "cart_pole.xml"
    path.write_text(CART_POLE)
    status, out, err = run(capsys, "info", str(path))
    assert status == 0, err
    joints = out.split("joints")[1].split("masses")[0]
    assert [line.split()[-1] for line in joints.splitlines()[2:4]] == ["10", "passive"], joints
    for command in (["track", str(path)], ["demo", "--robot", str(path)]):
        status, out, err = run(capsys, *command, "--out", str(tmp_path / "run"))
        assert status == 2 and "'cart_pole' is underactuated: no actuator drives hinge" in err, err
        assert not out and not (tmp_path / "run").exists()


COUPLED_ARM = """
<mujoco model="coupled_arm">
  <worldbody>
    <body name="upper" pos="0 0 1">
      <joint name="shoulder" axis="0 1 0" range="-1 1" damping="3"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.03" mass="1"/>
      <body name="fore" pos="0.4 0 0"><joint name="elbow" axis="0 1 0" range="-1 1"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="0.5"/>
      </body>
    </body>
  </worldbody>
  {equality}
</mujoco>
"""


def test_track_simulates_an_mjcf_file_as_it_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The plant of an MJCF robot is the file itself: an equality constraint that the model
    leaves out (with a warning at load) pulls the elbow off the move, where the same arm
    without it tracks, its joint damping in the controller's model."""
    pytest.importorskip("mujoco")
    errors = {}
    for name, equality in (
        ("free", ""),
        ("coupled", '<equality><joint joint1="elbow" joint2="shoulder" polycoef="0 -1 0 0 0"/>'
         "</equality>"),
    ):  # fmt: skip
        path = tmp_path / f"{name}.xml"
        path.write_text(COUPLED_ARM.format(equality=equality))
        status, out, err = run(
            capsys, "track", str(path), "--duration", "1", "--out", str(tmp_path / name),
            "--json", str(tmp_path / f"{name}.json"), "--no-progress",
        )  # fmt: skip
        assert status == 0, err
        assert f"the plant is {path} itself" in out
        assert ("MuJoCo applies equality constraints, which the model leaves out" in err) == bool(
            equality
        ), err
        metrics = json.loads((tmp_path / f"{name}.json").read_text())
        errors[name] = metrics["controllers"]["computed_torque"]["per_joint"]["elbow"]["max_error"]
    assert errors["free"] < 1e-3 and errors["coupled"] > 20 * errors["free"], errors


def test_servos_of_an_mjcf_file_are_said_to_become_torques(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Tracking (and the demo) drives the joints with torques; a file whose actuators are
    position servos is told so, one of motors is not."""
    pytest.importorskip("mujoco")
    for actuator, warns in (("position", True), ("motor", False)):
        path = tmp_path / f"{actuator}.xml"
        actuators = (
            f'<actuator><{actuator} joint="shoulder"/><{actuator} joint="elbow"/></actuator>'
        )
        path.write_text(COUPLED_ARM.format(equality=actuators))
        for command in (
            ["track", str(path), "--controller", "pd"],
            ["demo", "--robot", str(path)],
        ):
            status, _, err = run(
                capsys, *command, "--duration", "0.2", "--out", str(tmp_path / actuator),
                "--no-progress",
            )  # fmt: skip
            assert status == 0, err
            said = "drives elbow, shoulder with actuators whose force depends on the joints'"
            assert (said in err) == warns, (command, err)


def test_a_free_object_in_an_mjcf_scene_is_named_and_welded_by_fixed_base(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("mujoco")
    cube = '<body name="cube" pos="1 0 0.1"><freejoint name="cube"/><geom size="0.05"/></body>'
    path = tmp_path / "scene.xml"
    path.write_text(COUPLED_ARM.format(equality="").replace("</worldbody>", cube + "</worldbody>"))
    command = ["track", str(path), "--duration", "0.5", "--out", str(tmp_path), "--no-progress"]
    status, _, err = run(capsys, *command)
    assert status == 2 and "has a free joint, 'cube', which joint-space tracking" in err, err
    status, out, err = run(capsys, *command, "--fixed-base")
    assert status == 0 and "elbow" in out, err


def test_a_floating_joint_inside_a_urdf_is_not_sent_to_fixed_base(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--fixed-base welds a URDF's root; a floating joint below it stays free, so the advice
    is to fix it in the file, not the option that already failed."""
    inertial = (
        '<inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" '
        'iyz="0"/></inertial>'
    )
    path = tmp_path / "inner.urdf"
    path.write_text(
        f'<robot name="inner"><link name="base"/><link name="a">{inertial}</link>'
        f'<link name="b">{inertial}</link>'
        '<joint name="j" type="revolute"><parent link="base"/><child link="a"/>'
        '<limit lower="-1" upper="1" effort="10" velocity="2"/></joint>'
        '<joint name="float" type="floating"><parent link="a"/><child link="b"/></joint></robot>'
    )
    for fixed in ([], ["--fixed-base"]):
        status, _, err = run(capsys, "track", str(path), *fixed, "--out", str(tmp_path))
        assert status == 2 and "'float', which joint-space tracking cannot drive" in err, err
        assert "make it a fixed joint in the description" in err and "--fixed-base" not in err


UNTRACKABLE = {
    "light": (
        '<robot name="light"><link name="base"/>'
        '<link name="a"><inertial><origin xyz="0 0 -0.5"/><mass value="1"/>'
        '<inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        '<link name="b"/>'
        '<joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 1 0"/>'
        '<limit lower="-1" upper="1" effort="10" velocity="2"/></joint>'
        '<joint name="j2" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 1 0"/>'
        '<limit lower="-1" upper="1" effort="10" velocity="2"/></joint></robot>',
        "tracking: the mass matrix of 'light' is singular: joints 'j2'",
    ),
    "bolted": (
        '<robot name="bolted"><link name="base"/><link name="plate"><inertial><mass value="1"/>'
        '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        '<joint name="bolt" type="fixed"><parent link="base"/><child link="plate"/></joint>'
        "</robot>",
        "bolted has no moving joints: there is nothing to track",
    ),
    # welding its free joint (the advice for a floating robot with joints) leaves nothing
    "drone": (
        '<mujoco model="drone"><worldbody><body name="hull"><freejoint/>'
        '<geom type="box" size="0.2 0.2 0.05" mass="1"/></body></worldbody></mujoco>',
        "drone has no moving joints besides its free joint: there is nothing to track",
    ),
}


def test_a_payload_on_the_axis_of_every_joint_that_moves_it_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The pendulum's rod turns about its own origin: a payload there changes no torque (the
    runs with and without it are the same), and the warning names the frames that would; at
    the tip it acts, quietly."""
    command = ["track", "pendulum", "--duration", "0.3", "--no-progress"]
    logs = {}
    for name, payload in [
        ("none", []),
        ("rod", ["--payload", "5"]),
        ("tip", ["--payload", "5", "--payload-frame", "tip"]),
    ]:
        status, _, err = run(capsys, *command, *payload, "--out", str(tmp_path / name))
        assert status == 0, err
        named = "payload at rod lies on the axes of the joints that move it" in err
        assert named == (name == "rod"), err
        assert ("frames of pendulum: base, rod, tip" in err) == named
        log = tmp_path / name / "computed_torque.csv"
        logs[name] = np.loadtxt(log, delimiter=",", skiprows=1)
    np.testing.assert_allclose(logs["rod"], logs["none"], atol=1e-9)
    assert np.abs(logs["tip"] - logs["none"]).max() > 1.0


@pytest.mark.parametrize(
    "command", [["track", "pendulum"], ["demo", "--robot", "pendulum"]], ids=["track", "demo"]
)
def test_a_run_too_long_to_log_in_memory_is_refused_first(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A billion seconds at 1 kHz: refused first, naming the memory its logs would take,
    rather than planned and checked for hours before running out of it."""
    status, _, err = run(capsys, *command, "--duration", "1e9", "--out", str(tmp_path / "r"))
    assert status == 2 and "--duration 1e+09 s at 1000 Hz is 1e+12 control steps" in err, err
    assert "exceed this machine's memory" in err and not (tmp_path / "r").exists()


@pytest.mark.parametrize("name", list(UNTRACKABLE))
def test_a_robot_with_nothing_to_track_is_refused_first(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A robot without moving joints, or with one that moves no mass (a singular mass
    matrix), is refused before anything is simulated or written."""
    text, message = UNTRACKABLE[name]
    path = tmp_path / f"{name}.{'xml' if text.startswith('<mujoco') else 'urdf'}"
    path.write_text(text)
    for command in (["track", str(path)], ["demo", "--robot", str(path)]):
        status, out, err = run(capsys, *command, "--out", str(tmp_path / "run"))
        assert status == 2 and message in err, err
        assert not out and not (tmp_path / "run").exists()


@pytest.mark.parametrize("command", [["demo"], ["track", "pendulum"], ["wbc", "solo12"]])
def test_an_out_that_is_a_file_is_refused_first(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = tmp_path / "taken"
    taken.write_text("mine")
    status, out, err = run(capsys, *command, "--out", str(taken))
    assert status == 2 and f"--out {taken}: exists and is not a directory" in err, err
    assert not out and taken.read_text() == "mine"
    # below a file, no directory can be made; an empty path is not the working directory
    status, out, err = run(capsys, *command, "--out", str(taken / "run"))
    assert status == 2 and f"cannot be made, {taken} is not a directory" in err, err
    with pytest.raises(SystemExit):
        run(capsys, *command, "--out", "")
    assert "argument --out: an empty path" in capsys.readouterr().err


@requires_erd
def test_info_panda(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "info", "panda")
    assert status == 0, err
    assert "nq 9, nv 9, nbody 9" in out
    assert "panda_link7 [panda_joint7, revolute]" in out
    assert "panda_finger_joint1  prismatic  [0, 0.04] m" in out
    assert "fixed base" in out and "total" in out


def test_info_tiny_robot(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "info", "double_pendulum")
    assert status == 0, err
    assert "nq 2, nv 2, nbody 2" in out
    # link2 hangs from link1, one level deeper in the tree
    tree = out.split("kinematic tree")[1].split("joints")[0].splitlines()
    link1 = next(line for line in tree if "link1 [joint1" in line)
    link2 = next(line for line in tree if "link2 [joint2" in line)
    assert len(link2) - len(link2.lstrip()) > len(link1) - len(link1.lstrip())
    assert "total" in out and "2.0000" in out


def test_info_floating_base(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "info", "pendulum", "--floating-base")
    assert status == 0
    assert "[root_joint, free]" in out and "floating base" in out
    status, out, _ = run(capsys, "info", "pendulum", "--fixed-base")
    assert status == 0 and "root_joint" not in out


def test_info_urdf_path(capsys: pytest.CaptureFixture[str]) -> None:
    path = robots.robot_path("pendulum")
    status, out, _ = run(capsys, "info", str(path))
    assert status == 0 and str(path) in out


def test_robots_listing(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "robots")
    assert status == 0
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines()[1:] if line.strip()}
    assert rows["pendulum"] == "yes"
    assert rows["panda"] == ("yes" if robots.is_installed("panda") else "no")
    assert "aliases:" in out


def test_unknown_robot_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "info", "pandaa")
    assert status == 2
    assert err.startswith("invdyn: error: unknown robot 'pandaa'")
    assert "'panda'" in err and "invdyn robots" in err
    assert "Traceback" not in err + out


def test_malformed_urdf_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "broken.urdf"
    path.write_text('<robot name="broken"><link name="base"/>')
    status, _, err = run(capsys, "info", str(path))
    assert status == 2
    assert err.startswith(f"invdyn: error: {path}") and "malformed" in err


def test_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "info", str(tmp_path / "missing.urdf"))
    assert status == 2
    assert err.startswith("invdyn: error:") and "missing.urdf" in err


def test_console_entry_point_prints_no_traceback() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "invdyn", "info", "no_such_robot"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("invdyn: error: unknown robot 'no_such_robot'")
    assert "Traceback" not in result.stderr


# what the console script that installers write for `invdyn` runs: pyproject's entry point,
# here with an import of the command's heavy package (MuJoCo) held up until the test interrupts
# it
_STALLED_ENTRY_POINT = """
import importlib.abc, sys, time

class Stall(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == {stalled!r}:
            print("importing " + name, flush=True)
            time.sleep(120)
        return None

sys.meta_path.insert(0, Stall())
sys.argv = ["invdyn", *{argv!r}]
from {module} import {function}
sys.exit({function}())
"""


def test_ctrl_c_while_a_command_loads_mujoco_is_one_line(tmp_path: Path) -> None:
    """Ctrl-C while the console script's command imports MuJoCo (torch or MuJoCo may take a
    while) ends it as a Ctrl-C during a command does: status 130, one line, no traceback."""
    pytest.importorskip("mujoco")
    tomllib = pytest.importorskip("tomllib")  # Python 3.11
    pyproject = Path(__file__).parents[2] / "pyproject.toml"
    entry = tomllib.loads(pyproject.read_text())["project"]["scripts"]["invdyn"]
    module, function = entry.split(":")
    argv = ["track", "pendulum", "--duration", "0.1", "--out", str(tmp_path), "--no-progress"]
    code = _STALLED_ENTRY_POINT.format(
        module=module, function=function, stalled="mujoco", argv=argv
    )
    with subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        assert process.stdout is not None
        assert process.stdout.readline() == "importing mujoco\n"
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert unannounced(err) == "invdyn: interrupted\n"


def test_sigterm_stops_a_command_as_ctrl_c_does(tmp_path: Path) -> None:
    """A scheduler's SIGTERM unwinds the command (its clean-ups run) and exits 143, quietly."""
    pytest.importorskip("mujoco")
    command = [sys.executable, "-m", "invdyn", "demo", "--robot", "pendulum"]
    options = ["--duration", "10000", "--out", str(tmp_path), "--no-progress"]
    with subprocess.Popen(
        [*command, *options], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        assert process.stdout is not None and process.stdout.readline().startswith("pendulum")
        process.terminate()
        _, err = process.communicate(timeout=120)
    assert process.returncode == 143, err
    assert err.strip().splitlines()[-1] == "invdyn: terminated" and "Traceback" not in err


@pytest.mark.parametrize(
    ("stop", "status", "said"),
    [(cli._Terminated, 143, "invdyn: terminated"), (KeyboardInterrupt, 130, "invdyn: interrupted")],
)
def test_a_stop_during_an_import_is_a_stop_not_a_missing_package(
    stop: type[BaseException],
    status: int,
    said: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A SIGTERM or Ctrl-C that lands while a module loads can come out of the import as an
    ImportError: it still stops the command as what it was."""

    def importing(args: object) -> int:
        try:
            raise stop()
        except BaseException as error:
            raise ImportError("cannot import name 'mjModel' (partially initialized)") from error

    monkeypatch.setattr(cli.robots, "run", importing)
    assert main(["robots"]) == status
    assert capsys.readouterr().err.strip() == said


def test_collect_and_train(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """collect writes a LeRobot v3 dataset that train reads; a second train resumes it."""
    dataset, run_dir = tmp_path / "data", tmp_path / "run"
    status, out, err = run(
        capsys, "collect", "double_pendulum", "--episodes", "3", "--duration", "1",
        "--out", str(dataset), "--no-progress",
    )  # fmt: skip
    assert status == 0, err
    assert "3 episodes" in out and (dataset / "meta" / "info.json").exists()
    argv = ["train", str(dataset), "--out", str(run_dir), "--preset", "small", "--no-progress"]
    status, _, err = run(capsys, *argv, "--set", "dataset=elsewhere")
    assert status == 2 and "the dataset is the command's first argument" in err, err
    status, out, err = run(capsys, *argv, "--set", "train.num_threads=1")
    assert status == 0, err
    assert (run_dir / "checkpoint" / "model.safetensors").exists()
    assert "r2_mean" in out
    # without a progress bar, a line per epoch
    epochs = preset("small").train.epochs
    lines = [line for line in out.splitlines() if line.startswith("epoch ")]
    assert [line.split()[1] for line in lines] == [f"{k}/{epochs}" for k in range(1, epochs + 1)]
    assert "train_loss" in lines[-1] and "val_loss" in lines[-1] and lines[-1].endswith("min)")
    # the same dataset again refuses to overwrite, and a finished run is returned as is
    status, _, err = run(capsys, "collect", "double_pendulum", "--out", str(dataset))
    assert status == 2 and "exists" in err, err
    status, _, err = run(capsys, "evaluate", str(run_dir), str(dataset))
    assert status == 0 and (run_dir / "evaluation" / "metrics.json").exists(), err
    status, out, err = run(capsys, *argv, "--set", "train.num_threads=1")
    assert status == 0 and f"the run had done its {epochs} epochs; nothing to train" in out, err
    assert "wrote" not in out and (run_dir / "evaluation" / "metrics.json").exists()
    # a run killed after its first epoch resumes from there, and says so first
    checkpoint = run_dir / "checkpoint"
    train_state = json.loads((checkpoint / "train_state.json").read_text())
    (checkpoint / "train_state.json").write_text(json.dumps(train_state | {"epoch": 1}))
    debris = run_dir / ".checkpoint.tmp-killed"
    debris.mkdir()
    status, out, err = run(capsys, *argv, "--set", "train.num_threads=1")
    assert status == 0, err
    assert out.splitlines()[0] == "resuming from epoch 1", out
    assert f"trained epochs 2-{epochs}, resumed from epoch 1" in out
    assert not debris.exists()  # what a save killed before its swap left is removed
    # the scores of the checkpoint it replaced are gone
    assert "the scores of the checkpoint this run replaced" in out
    assert not (run_dir / "evaluation").exists()
    # a run that starts from this one's model: on other episodes of the robot, not another's
    for robot, seed in (("double_pendulum", "1"), ("pendulum", "0")):
        status, _, err = run(
            capsys, "collect", robot, "--episodes", "2", "--duration", "1", "--seed", seed,
            "--out", str(tmp_path / robot), "--no-progress",
        )  # fmt: skip
        assert status == 0, err
    tuned = ["--out", str(tmp_path / "tuned"), "--preset", "small", "--no-progress"]
    tuned += ["--set", "train.num_threads=1", "--set", f"train.init={run_dir}"]
    status, out, err = run(capsys, "train", str(tmp_path / "double_pendulum"), *tuned)
    assert status == 0 and "r2_mean" in out, err
    status, _, err = run(capsys, "train", str(tmp_path / "pendulum"), *tuned, "--restart")
    assert status == 2 and "training from train.init" in err and "state names" in err, err


@pytest.mark.slow
@requires_erd
def test_hybrid_learns_the_friction_that_identification_misses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Panda with Coulomb friction (MuJoCo's frictionloss: smooth at low speed, where the
    identified model's is a step), a payload and noisy sensors: on held-out episodes the
    end-to-end hybrid at least halves the wrist's torque error of the identified model and
    of a network alone, and the per-joint residual networks reduce it, on 32 s of data."""
    dataset, out = tmp_path / "panda", tmp_path / "ident"

    def collect(episodes: int, seed: int, target: Path) -> None:
        status, _, err = run(
            capsys, "collect", "panda", "--episodes", str(episodes), "--duration", "4",
            "--rate", "200", "--payload", "1.0", "--friction", "1.0", "--sensor-noise",
            "0.001", "--seed", str(seed), "--out", str(target), "--no-progress",
        )  # fmt: skip
        assert status == 0, err

    collect(10, 5, dataset)
    status, printed, err = run(
        capsys, "ident", str(dataset), "--out", str(out), "--offset", "--cutoff", "none",
        "--learn", "--preset", "small", "--set", "train.epochs=10",
        "--set", "train.num_threads=1", "--no-progress",
    )  # fmt: skip
    assert status == 0, err
    assert "all on the held-out samples that the networks' windows cover" in printed
    scores = json.loads((out / "report.json").read_text())["held_out_nmse_all"]
    for joint in ("panda_joint5", "panda_joint6", "panda_joint7"):
        better = min(scores["identified"][joint], scores["learned"][joint])
        assert scores["end_to_end"][joint] < 0.5 * better, (joint, scores)
        assert scores["hybrid"][joint] < better, (joint, scores)
    # on trajectories of another seed, invdyn evaluate scores what invdyn ident wrote
    other = tmp_path / "other"
    collect(2, 9, other)
    status, printed, err = run(capsys, "evaluate", str(out), str(other))
    assert status == 0, err
    assert "torque nMSE on the 2 episodes" in printed and "nMSE hybrid" in printed
    again = json.loads((out / "evaluation" / "report.json").read_text())["nmse"]
    assert set(again) == {"nominal", "identified", "learned", "hybrid"}
    wrist = ("panda_joint5", "panda_joint6", "panda_joint7")
    assert sum(again["hybrid"][j] for j in wrist) < sum(again["identified"][j] for j in wrist)
    assert (out / "evaluation" / "nmse.png").stat().st_size > 0
    # identified again into the directory: the scores of the earlier identification are gone
    status, _, err = run(capsys, "ident", str(dataset), "--method", "ols", "--out", str(out))
    assert status == 0 and not (out / "evaluation").exists(), err


@pytest.mark.slow
@requires_erd
def test_collect_with_a_payload_then_identify(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Panda collected carrying an unmodelled kilogram and joint damping; ident identifies
    it from the recorded dataset: a URDF, a report and plots, and on held-out episodes the
    identified model predicts the arm's torques better than the Panda as described."""
    dataset, out = tmp_path / "panda", tmp_path / "ident"
    status, _, err = run(
        capsys, "collect", "panda", "--episodes", "5", "--duration", "4", "--rate", "200",
        "--payload", "1.0", "--damping", "0.2", "--seed", "3", "--out", str(dataset),
        "--no-progress",
    )  # fmt: skip
    assert status == 0, err
    status, printed, err = run(capsys, "ident", str(dataset), "--out", str(out), "--offset")
    assert status == 0, err
    assert "consistent, identified on episodes 0-3, held out episode 4" in printed
    report = json.loads((out / "report.json").read_text())
    assert report["filter"] == {"cutoff": 10.0, "order": 4} and report["method"] == "consistent"
    arm = [f"panda_joint{k}" for k in range(1, 8)]
    nominal, identified = (report["held_out_nmse"][key] for key in ("nominal", "identified"))
    assert all(identified[j] < 0.5 * nominal[j] for j in arm), (nominal, identified)
    assert sum(identified[j] for j in arm) < 0.1 * sum(nominal[j] for j in arm)
    # the torques go through the accelerations' filter: no joint is left to the frequencies
    # that the filter takes from the accelerations alone
    assert max(report["held_out_nmse"]["identified"].values()) < 1e-3, identified
    assert (out / "nmse.png").stat().st_size > 0 and (out / "held_out.png").stat().st_size > 0
    # scored on its own dataset, the identification leaves out the episodes it was fitted on:
    # the held-out episode's scores are those of the report
    status, printed, err = run(capsys, "evaluate", str(out), str(dataset))
    assert status == 0, err
    assert "4 of the 5 episodes" in err and "were fitted on" not in err, err
    assert "torque nMSE on the 1 held-out episodes of 5" in printed, printed
    evaluation = json.loads((out / "evaluation" / "report.json").read_text())
    assert evaluation["episodes"] == [4] and evaluation["selection"] == "held out"
    for joint in arm:
        assert evaluation["nmse"]["identified"][joint] == pytest.approx(identified[joint])
    # a dataset of fitted episodes alone is scored whole, with a warning
    fitted = read_dataset(dataset)
    written_like(fitted, [fitted.episode(i) for i in (2, 0)], tmp_path / "fitted")
    status, printed, err = run(capsys, "evaluate", str(out), str(tmp_path / "fitted"))
    assert status == 0 and "scores are of fitted data" in err, err
    assert "torque nMSE on the 2 episodes of 2" in printed, printed
    # the written URDF holds the load: its gravity torques are the plant's, not the model's
    from invdyn.kinematics import end_effector
    from invdyn.sim import Plant, plant_model

    panda = invdyn.load("panda")
    plant = plant_model(panda, Plant(payload=1.0, payload_frame=end_effector(panda)))
    identified = invdyn.load(out / "identified.urdf", friction=True)
    q = random_configuration(panda, rng=0, shape=20)
    expected = invdyn.gravity(plant, q)[:, :7]
    error = np.abs(invdyn.gravity(identified, q)[:, :7] - expected).max()
    assert (
        error
        < 0.05 * np.abs(expected).max()
        < np.abs(invdyn.gravity(panda, q)[:, :7] - expected).max()
    )
    # the plant's 0.2 on every joint (taken at the frames' starts, the lagging gravity torque
    # of the shoulder made it 0.12)
    assert np.allclose(identified.dof_damping[:7], 0.2, atol=0.01), identified.dof_damping
    # networks alone and on the identified model's residual, scored on the same frames
    status, printed, err = run(
        capsys, "ident", str(dataset), "--out", str(tmp_path / "hybrid"), "--learn",
        "--preset", "small", "--set", "train.num_threads=1", "--set", "train.epochs=3",
        "--no-progress",
    )  # fmt: skip
    assert status == 0, err
    assert "nMSE learned  nMSE hybrid" in printed
    scores = json.loads((tmp_path / "hybrid" / "report.json").read_text())["held_out_nmse_all"]
    assert set(scores) == {"nominal", "identified", "learned", "hybrid", "end_to_end"}
    # the residual network starts from the identified model: far better than a tiny network
    # that has to learn gravity from four episodes
    learned = sum(scores["learned"][j] for j in arm)
    assert sum(scores["hybrid"][j] for j in arm) < 0.2 * learned
    # the joints where the residual made the identified model worse are named, and only they
    worse = [j for j, error in scores["hybrid"].items() if error > scores["identified"][j]]
    warning = [line for line in err.splitlines() if "the hybrid's held-out torque" in line]
    named = warning[0].partition(" on ")[2].partition(" the hybrid's")[0] if warning else ""
    assert named == ", ".join(worse), (worse, err)
    # trained from the identified parameters through the differentiable rnea
    assert sum(scores["end_to_end"][j] for j in arm) < 0.2 * learned
    runs = tmp_path / "hybrid" / "networks" / "hybrid"
    assert (runs / "0-panda_joint1" / "checkpoint").is_dir() and len(list(runs.iterdir())) == 9
    # the networks of another configuration are refused, and --restart trains them afresh
    again = [
        "ident", str(dataset), "--out", str(tmp_path / "hybrid"), "--learn", "--preset", "small",
        "--set", "train.num_threads=1", "--set", "train.epochs=1", "--no-progress",
    ]  # fmt: skip
    status, _, err = run(capsys, *again)
    assert status == 2 and "train.epochs" in err and "--restart" in err, err
    status, _, err = run(capsys, *again, "--restart")
    assert status == 0, err
    state = json.loads((runs / "0-panda_joint1" / "checkpoint" / "train_state.json").read_text())
    assert state["epoch"] == 1
    # a run without networks into the same directory: the earlier run's networks stay, but
    # evaluate scores what the report does (no URDF of ols either)
    status, _, err = run(
        capsys, "ident", str(dataset), "--method", "ols", "--out", str(tmp_path / "hybrid")
    )
    assert status == 0, err
    assert not (tmp_path / "hybrid" / "identified.urdf").exists()
    status, printed, err = run(capsys, "evaluate", str(tmp_path / "hybrid"), str(dataset))
    assert status == 0 and "nMSE learned" not in printed, err
    # another robot than the recorded one is warned of
    status, _, err = run(capsys, "ident", str(dataset), "--robot", "ur5", "--out", str(out))
    assert status == 2 and "recorded on panda, and is identified as ur5 (--robot)" in err, err
    # bad options name themselves
    status, _, err = run(capsys, "ident", str(dataset), "--cutoff", "fast")
    assert status == 2 and "--cutoff must be a number or 'none'" in err, err
    status, _, err = run(capsys, "ident", str(dataset), "--cutoff", "500", "--out", str(out))
    assert status == 2 and "not below 100 Hz, half the sampling rate of 200 Hz" in err, err


@requires_erd
def test_identify_from_a_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Rows of (q, v, a) -> tau in a CSV file, from a Panda with heavier links: identified by
    weighted least squares (no URDF: only base parameters), exact on the held-out rows."""
    panda = invdyn.load("panda")
    plant = panda.replace(body_mass=panda.body_mass * 1.2)
    rng = np.random.default_rng(0)
    q = random_configuration(panda, rng=rng, shape=600)
    v, a = rng.normal(size=(2, 600, panda.nv))
    tau = invdyn.rnea(plant, q, v, a)
    header = [f"{k}.{j}" for k in ("q", "v", "a", "tau") for j in panda.joint_names]
    # the columns in another order than the model's: matched by name
    order = np.random.default_rng(1).permutation(len(header))
    table = tmp_path / "rows.csv"
    np.savetxt(table, np.hstack([q, v, a, tau])[:, order], delimiter=",",
               header=",".join(header[k] for k in order), comments="", fmt="%.17g")  # fmt: skip
    out = tmp_path / "ident"
    status, printed, err = run(
        capsys, "ident", str(table), "--robot", "panda", "--method", "wls", "--out", str(out)
    )
    assert status == 0, err
    assert "identified on rows 0-479, held out rows 480-599" in printed
    report = json.loads((out / "report.json").read_text())
    assert report["filter"]["cutoff"] is None
    assert max(report["held_out_nmse"]["identified"].values()) < 1e-12
    assert not (out / "identified.urdf").exists()
    status, _, err = run(capsys, "ident", str(table), "--out", str(out))
    assert status == 2 and "is a table: pass --robot" in err, err
    other = tmp_path / "notes.json"
    other.write_text("{}")
    status, _, err = run(capsys, "ident", str(other), "--robot", "panda", "--out", str(out))
    assert status == 2 and "notes.json: neither a dataset directory nor a table (.csv" in err
    status, _, err = run(capsys, "ident", str(table), "--robot", "ur5", "--out", str(out))
    assert status == 2 and "no column 'q.shoulder_pan_joint'" in err, err
    # options that a table would ignore
    for option, refused in [
        (["--cutoff", "5"], "taken as they are: --cutoff needs a dataset of episodes"),
        (["--learn"], "taken as they are: --learn needs a dataset of episodes"),
        (["--set", "train.epochs=2"], "--preset, --set and --restart are about the networks"),
        (["--restart"], "--preset, --set and --restart are about the networks of --learn"),
    ]:
        status, _, err = run(capsys, "ident", str(table), "--robot", "panda", *option)
        assert status == 2 and refused in err, err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["collect", "NoSuchEnv-v5", "--out", "x"], "NoSuchEnv-v5"),
        (["collect", "double_pendulum", "--episodes", "0", "--out", "x"], "episodes"),
        (["train", "missing-dataset", "--out", "x"], "missing-dataset"),
        (["collect", "double_pendulum", "--camera", "front", "--size", "63x64", "--out", "x"],
         "even width and height"),
        (["collect", "double_pendulum", "--camera", "front", "--size", "big", "--out", "x"],
         "WIDTHxHEIGHT"),
        (["collect", "double_pendulum", "--camera", "back", "--episodes", "1", "--duration",
          "0.1", "--out", "x"], "unknown camera"),
        # options that would be ignored
        (["collect", "double_pendulum", "--steps", "5", "--policy", "noisy", "--out", "x"],
         "--steps, --policy: not options of an invdyn robot (double_pendulum)"),
        (["collect", "Reacher-v5", "--duration", "1", "--out", "x"],
         "--duration: not an option of a Gymnasium environment (Reacher-v5)"),
        (["collect", "Reacher-v5", "--meshes", "--payload", "1", "--out", "x"],
         "--meshes, --payload: not options of a Gymnasium environment"),
        (["collect", "Reacher-v5", "--size", "32x32", "--out", "x"], "pass --camera too"),
        (["collect", "panda", "--meshes", "--out", "x"], "--meshes applies to rendered frames"),
        (["collect", "Reacher-v5", "--steps", "1", "--out", "x"], "--steps must be an integer"),
        (["collect", "planar_2r", "--episodes", "0", "--out", "x"], "--episodes must be an"),
        (["collect", "planar_2r", "--rate", "-1", "--out", "x"], "--rate must be a positive"),
        (["collect", "planar_2r", "--duration", "0", "--out", "x"], "--duration must be a"),
        (["track", "planar_2r", "--bandwidth", "0", "--out", "x"], "--bandwidth must be a"),
    ],
)  # fmt: skip
def test_collect_and_train_bad_input(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    status, _, err = run(capsys, *argv)
    assert status == 2
    assert err.startswith("invdyn: error:") and message in err, err


def test_a_reader_that_leaves_early_costs_no_output(tmp_path: Path) -> None:
    """invdyn track ... | head: the table goes nowhere once the pipe is closed, and the
    command still writes its files and succeeds."""
    out = tmp_path / "tracked"
    argv = ["track", "planar_2r", "--duration", "0.2", "--controller", "pd", "--out", str(out)]
    command = [sys.executable, "-m", "invdyn", *argv]
    # block-buffered, as a pipe's output is unless PYTHONUNBUFFERED says otherwise
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment
    )
    assert process.stdout is not None
    process.stdout.close()
    _, err = process.communicate(timeout=600)
    assert process.returncode == 0, err.decode()
    assert (out / "metrics.json").is_file() and b"Error" not in err, err.decode()


def test_json_into_standard_output_is_the_json_alone(tmp_path: Path) -> None:
    """--json - (or /dev/stdout) with the output going to a file: that file holds the JSON
    alone, which a program reads; the table goes to standard error."""
    log = tmp_path / "log.json"
    argv = ["track", "planar_2r", "--duration", "0.2", "--controller", "pd"]
    command = [sys.executable, "-m", "invdyn", *argv, "--out", str(tmp_path / "out")]
    for json_path in ("/dev/stdout", "-"):
        with log.open("w") as out:
            done = subprocess.run(
                [*command, "--json", json_path], stdout=out, stderr=subprocess.PIPE,
                check=True, timeout=600, text=True,
            )  # fmt: skip
        assert "controllers" in json.loads(log.read_text())
        assert "controller" in done.stderr and "wrote /dev/stdout" not in done.stderr


def test_paths_of_the_wrong_kind_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from invdyn._files import write_json

    taken = tmp_path / "taken"
    taken.write_text("mine")
    status, _, err = run(capsys, "train", str(tmp_path / "data"), "--out", str(taken))
    assert status == 2 and f"--out {taken}: exists and is not a directory" in err, err
    status, _, err = run(capsys, "label", str(tmp_path), str(taken), "--out", str(tmp_path / "o"))
    assert status == 2 and f"{taken} is neither a dataset" in err, err
    with pytest.raises(IsADirectoryError, match="a directory, not a file to write"):
        write_json(tmp_path, {})
    assert taken.read_text() == "mine"
    # a run's files do not go into a dataset
    dataset = tmp_path / "dataset"
    (dataset / "meta").mkdir(parents=True)
    (dataset / "meta" / "info.json").write_text("{}")
    status, _, err = run(capsys, "train", str(tmp_path / "data"), "--out", str(dataset))
    assert status == 2 and f"--out {dataset}: holds a dataset" in err, err
    # nor does anything else go into a dataset or a checkpoint, whose files the commands read
    (dataset / "data").mkdir()
    checkpoint = tmp_path / "run" / "checkpoint"
    checkpoint.mkdir(parents=True)
    (checkpoint / "model.safetensors").write_text("weights")
    outputs = {
        ("train", str(tmp_path / "data"), "--out", str(dataset / "runs")): "inside the dataset",
        ("track", "double_pendulum", "--json", str(dataset / "meta/info.json")): "inside the",
        ("evaluate", str(checkpoint), str(dataset), "--out", str(checkpoint)): "the checkpoint",
        ("track", "double_pendulum", "--json", str(checkpoint / "config.json")): "checkpoint",
        ("label", str(checkpoint), str(dataset), "--out", str(dataset / "labelled")): "inside",
    }
    for argv, message in outputs.items():
        status, _, err = run(capsys, *argv)
        assert status == 2 and message in err, (argv, err)
    assert (dataset / "meta" / "info.json").read_text() == "{}"
    assert sorted(p.name for p in checkpoint.iterdir()) == ["model.safetensors"]


def test_collect_refuses_an_occupied_out_before_simulating(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An --out that is not empty (and not a dataset to --overwrite) is refused before any
    episode is simulated, and what it holds is left alone."""
    import invdyn.sim.collect

    def must_not_run(*args: object, **kwargs: object) -> None:
        raise AssertionError("simulated before checking --out")

    monkeypatch.setattr(invdyn.sim.collect, "collect_robot", must_not_run)
    out = tmp_path / "notes"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    for extra in ([], ["--overwrite"]):
        status, _, err = run(
            capsys, "collect", "double_pendulum", "--episodes", "1000", "--out", str(out), *extra
        )
        assert status == 2 and str(out) in err, err
    assert (out / "keep.txt").read_text() == "mine"


def test_collect_renders_cameras(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--camera renders each episode into the dataset's videos, one per camera."""
    from invdyn.learn.datasets import read_dataset

    path = tmp_path / "data"
    status, _, err = run(
        capsys, "collect", "double_pendulum", "--episodes", "2", "--duration", "0.2",
        "--camera", "front", "--camera", "top", "--size", "48x32", "--out", str(path),
        "--no-progress",
    )  # fmt: skip
    assert status == 0, err
    dataset = read_dataset(path)
    assert set(dataset.info.videos) == {"observation.images.front", "observation.images.top"}
    frames = dataset.frames("front", 1)
    assert frames.shape == (len(dataset.episode(1)), 32, 48, 3)
    # the pendulum swings: the frames change
    assert np.abs(frames[-1].astype(int) - frames[0]).mean() > 0.1


def test_collect_renders_in_parallel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--workers 2 renders (as well as simulates) in two processes, streaming more episodes
    than a shard to the videos: the dataset's frames are those of one process."""
    from invdyn.learn.datasets import read_dataset
    from invdyn.sim.render import RENDER_SHARD

    episodes = str(RENDER_SHARD + 3)
    datasets = []
    for workers in ("1", "2"):
        path = tmp_path / f"data{workers}"
        status, _, err = run(
            capsys, "collect", "double_pendulum", "--episodes", episodes, "--duration", "0.05",
            "--camera", "front", "--camera", "side", "--workers", workers, "--out", str(path),
            "--no-progress",
        )  # fmt: skip
        assert status == 0, err
        datasets.append(read_dataset(path))
    one, two = datasets
    assert len(one) == len(two) == RENDER_SHARD + 3
    for k in range(len(one)):
        for camera in ("front", "side"):
            np.testing.assert_array_equal(one.frames(camera, k), two.frames(camera, k))


def test_collect_run_again_renders_only_what_it_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A collection that fails after rendering keeps its shards in <out>.rendered; run again,
    it renders none and writes the same frames, then removes them."""
    from invdyn.learn import datasets as data
    from invdyn.learn.datasets import read_dataset
    from invdyn.sim import render

    argv = [
        "collect", "double_pendulum", "--episodes", "3", "--duration", "0.1",
        "--camera", "front", "--no-progress",
    ]  # fmt: skip
    fresh = tmp_path / "fresh"
    assert run(capsys, *argv, "--out", str(fresh))[0] == 0
    assert not fresh.with_name("fresh.rendered").exists()

    out = tmp_path / "data"
    write = data.write_collection

    def full_disk(*args: object, **kwargs: object) -> Path:
        for _ in kwargs["videos"]["front"]:  # type: ignore[index]
            pass  # the frames are all rendered, then the write fails
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(data, "write_collection", full_disk)
    status, _, err = run(capsys, *argv, "--out", str(out))
    assert status == 2 and "No space left" in err
    assert f"rendered so far stay in {tmp_path / 'data.rendered'}" in err
    assert not out.exists() and len(list(tmp_path.joinpath("data.rendered").iterdir())) == 1

    def no_drawing(*args: object, **kwargs: object) -> None:
        raise AssertionError("a saved shard was rendered again")

    monkeypatch.setattr(data, "write_collection", write)
    monkeypatch.setattr(render, "_render_episodes", no_drawing)
    status, printed, err = run(capsys, *argv, "--out", str(out))
    assert status == 0, err
    assert "holds 1 shards rendered by an earlier run" in printed
    assert not tmp_path.joinpath("data.rendered").exists()
    for k in range(3):
        np.testing.assert_array_equal(
            read_dataset(out).frames("front", k), read_dataset(fresh).frames("front", k)
        )

    # a file where the shards would go is refused before anything is simulated
    tmp_path.joinpath("other.rendered").write_text("mine")
    status, _, err = run(capsys, *argv, "--out", str(tmp_path / "other"))
    assert status == 2 and "other.rendered is a file" in err
    assert tmp_path.joinpath("other.rendered").read_text() == "mine"


def test_learning_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """collect, train, evaluate on other episodes, then label them: the README's workflow on
    tiny data (the double pendulum at 100 Hz)."""
    from invdyn.learn.datasets import read_dataset
    from invdyn.learn.label import read_labels

    train_data, test_data = tmp_path / "train", tmp_path / "test"
    for path, seed in ((train_data, "0"), (test_data, "1")):
        argv = ["collect", "double_pendulum", "--episodes", "20", "--duration", "2"]
        status, _, err = run(capsys, *argv, "--seed", seed, "--out", str(path), "--no-progress")
        assert status == 0, err
    run_dir = tmp_path / "run"
    status, _, err = run(
        capsys, "train", str(train_data), "--out", str(run_dir), "--no-progress",
        "--set", "train.epochs=40", "--set", "train.batch_size=64", "--set", "train.num_threads=1",
        "--set", "hidden=128,128",
    )  # fmt: skip
    assert status == 0, err
    metrics_path = tmp_path / "evaluation.json"
    status, out, err = run(
        capsys, "evaluate", str(run_dir), str(test_data), "--json", str(metrics_path)
    )
    assert status == 0, err
    metrics = json.loads(metrics_path.read_text())
    oracle = metrics["baselines"]["oracle"]
    assert oracle["available"] and oracle["r2_mean"] > 0.999, oracle
    assert metrics["r2_mean"] > metrics["baselines"]["linear"]["r2_mean"], metrics
    assert "oracle R^2" in out
    # the plots and metrics lie beside the checkpoint, which training replaces whole
    assert (run_dir / "evaluation" / "metrics.json").is_file(), sorted(run_dir.rglob("*"))
    labelled = tmp_path / "labelled"
    argv = ["label", str(run_dir), str(test_data), "--out", str(labelled), "--no-progress"]
    status, _, err = run(capsys, *argv)
    assert status == 2 and "--replace" in err, err
    # a dataset that lost its info.json is not taken for a folder of plain videos
    broken = tmp_path / "broken"
    (broken / "meta").mkdir(parents=True)
    status, _, err = run(capsys, "label", str(run_dir), str(broken), "--out", str(labelled))
    assert status == 2 and "has meta/ but no meta/info.json" in err, err
    status, _, err = run(capsys, *argv, "--replace")
    assert status == 0, err
    recorded = read_dataset(test_data).arrays().action
    labels = read_labels(labelled)
    assert labels.action.shape == recorded.shape
    error = labels.action[labels.is_labelled] - recorded[labels.is_labelled]
    r2 = 1.0 - np.mean(error**2, axis=0) / np.var(recorded[labels.is_labelled], axis=0)
    # the labels reproduce the held-out actions as well as evaluate reports (same windows)
    assert abs(np.mean(r2) - metrics["r2_mean"]) < 0.02, (r2, metrics["r2_mean"])
    # follow an episode's states with the model, the plant carrying an unmodelled load
    follow_path = tmp_path / "follow.json"
    status, out, err = run(
        capsys, "follow", str(run_dir), str(test_data), "--episode", "1", "--seconds", "1",
        "--payload", "0.3", "--mass-error", "0.1", "--json", str(follow_path),
    )  # fmt: skip
    assert status == 0, err
    assert "open_loop" in out and "oracle" in out
    followed = json.loads(follow_path.read_text())
    assert len(followed["time"]) == 101
    status, _, err = run(capsys, "follow", str(run_dir), str(test_data), "--mass-error", "-1")
    assert status == 2 and "--mass-error must be a number above -1" in err, err


def test_track_controls_faster_than_a_kilohertz_on_a_finer_timestep(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command = ["track", "pendulum", "--duration", "0.5", "--rate", "2000", "--no-progress"]
    status, _, err = run(capsys, *command, "--out", str(tmp_path))
    assert (
        status == 2 and "multiple of the physics step Plant.timestep (--timestep) = 0.001 s" in err
    ), err
    status, _, err = run(capsys, *command, "--timestep", "5e-4", "--out", str(tmp_path))
    assert status == 0, err
    setup = json.loads((tmp_path / "metrics.json").read_text())["setup"]
    assert setup["physics_timestep"] == 5e-4 and setup["control_rate"] == 2000
    status, _, err = run(capsys, *command, "--timestep", "0", "--out", str(tmp_path))
    assert status == 2 and "--timestep must be" in err, err


def test_track_into_the_same_directory_leaves_only_this_runs_logs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The logs of controllers that the run before wrote and this one left out are removed;
    files of those names that no run wrote are the user's, and stay."""
    command = ["track", "pendulum", "--duration", "0.2", "--out", str(tmp_path), "--no-progress"]
    status, _, err = run(capsys, *command, "--controller", "all")
    assert status == 0, err
    assert {p.stem for p in tmp_path.glob("*.csv")} == set(CONTROLLERS)
    status, _, err = run(capsys, *command, "--controller", "pd")
    assert status == 0, err
    assert [p.name for p in tmp_path.glob("*.csv")] == ["pd.csv"]
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "feedforward.csv").write_text("mine")
    (mine / "pd-payload.csv").write_text("mine")
    # a file that track does not write now, and one that demo never writes
    for again, kept in (
        (["track", "pendulum", "--controller", "pd"], "feedforward.csv"),
        (["demo", "--robot", "pendulum"], "pd-payload.csv"),
    ):
        status, _, err = run(capsys, *again, "--duration", "0.2", "--out", str(mine))
        assert status == 0, err
        assert (mine / kept).read_text() == "mine"


def test_an_interrupted_track_leaves_the_earlier_runs_outputs_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped while it writes its logs, a rerun leaves the earlier run's set of outputs as it
    was, not partly replaced, and nothing of its own."""
    import invdyn.sim

    command = ["track", "pendulum", "--duration", "0.2", "--out", str(tmp_path), "--no-progress"]
    status, _, err = run(capsys, *command, "--controller", "all")
    assert status == 0, err
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert {"tracking.png", "metrics.json", "pd.csv"} <= set(before)
    written = []

    def interrupted(*args: object) -> None:
        written.append(args)
        if len(written) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(invdyn.sim, "save_csv", interrupted)
    status, _, _ = run(capsys, *command, "--controller", "pd,computed_torque", "--payload", "1")
    assert status == 130 and len(written) == 2
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


@requires_erd
def test_collect_says_it_fixes_a_floating_base(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(
        capsys, "collect", "go1", "--episodes", "1", "--duration", "0.05",
        "--out", str(tmp_path / "go1"), "--no-progress",
    )  # fmt: skip
    assert status == 0, err
    assert "warning: go1: its floating base is fixed to the world" in err, err
    assert "state 24, action 12" in out
