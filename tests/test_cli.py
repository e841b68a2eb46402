"""The ``invdyn`` command line: demo, info, robots and its user errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import invdyn
from conftest import requires_erd
from invdyn.cli import demo_trajectory, dof_labels, main
from invdyn.configuration import difference
from invdyn.io import robots

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert invdyn.__version__ in capsys.readouterr().out


@requires_erd
def test_demo_writes_plot_and_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "demo", "--out", str(tmp_path / "plots"), "--duration", "0.2")
    assert status == 0, err
    png = tmp_path / "plots" / "torques.png"
    assert png.read_bytes()[:8] == PNG_MAGIC
    assert str(png) in out
    assert "max |tau|" in out and "RMS tau" in out and "rnea:" in out
    for name in invdyn.load("panda").joint_names:
        assert name in out
    # written atomically: no temporary file left behind
    assert [p.name for p in png.parent.iterdir()] == ["torques.png"]


def test_demo_falls_back_without_example_robot_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(robots, "is_installed", lambda name: False)
    status, out, err = run(capsys, "demo", "--out", str(tmp_path), "--duration", "0.1")
    assert status == 0, err
    assert "double_pendulum" in out and "joint2" in out
    assert (tmp_path / "torques.png").read_bytes()[:8] == PNG_MAGIC


def test_demo_rejects_bad_duration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(
        capsys, "demo", "--robot", "pendulum", "--out", str(tmp_path), "--duration", "0"
    )
    assert status == 2
    assert err.startswith("invdyn: error: --duration")


@pytest.mark.parametrize("floating_base", [False, True])
def test_demo_trajectory_is_consistent(floating_base: bool) -> None:
    """v and a are the derivatives of q (central differences), and q stays within limits."""
    model = invdyn.load("double_pendulum", floating_base=floating_base)
    dt = 1e-4
    times = np.arange(0.0, 1.0, dt)
    q, v, a = demo_trajectory(model, times, period=1.0)
    finite_v = difference(model, q[:-2], q[2:]) / (2 * dt)
    finite_a = (v[2:] - v[:-2]) / (2 * dt)
    np.testing.assert_allclose(finite_v, v[1:-1], atol=1e-5)
    np.testing.assert_allclose(finite_a, a[1:-1], atol=1e-4)
    assert np.all((q >= model.q_lower) & (q <= model.q_upper))
    assert np.all(np.abs(v) <= model.dof_velocity_limit)
    assert len(dof_labels(model)) == model.nv


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
        [sys.executable, "-m", "invdyn.cli", "info", "no_such_robot"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("invdyn: error: unknown robot 'no_such_robot'")
    assert "Traceback" not in result.stderr
