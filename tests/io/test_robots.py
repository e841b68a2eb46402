"""The built-in robot names: registry, resolution, loading and errors."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import warnings
from pathlib import Path

import pytest

import invdyn
from conftest import ERD_INSTALLED, requires_erd
from invdyn.io import load, robots

ROBOTS = robots.available_robots()
TINY = [n for n, r in ROBOTS.items() if r.package == "invdyn"]
ERD = [n for n, r in ROBOTS.items() if r.package == "example-robot-data"]


def test_registry_is_consistent():
    assert set(TINY) == {"pendulum", "double_pendulum", "planar_2r"}
    assert len(ERD) >= 60
    for name, info in ROBOTS.items():
        assert info.name == name
        assert info.package in ("invdyn", "example-robot-data")
        assert info.path.endswith(".urdf") and not Path(info.path).is_absolute()
        assert info.description
    with pytest.raises(dataclasses.FrozenInstanceError):
        ROBOTS["panda"].floating_base = True  # type: ignore[misc]
    # aliases point at robots and never shadow one
    assert not set(robots.ALIASES) & set(ROBOTS)
    assert set(robots.ALIASES.values()) <= set(ROBOTS)
    # the registry is a copy: callers cannot change it
    robots.available_robots().clear()
    assert robots.available_robots() == ROBOTS


@pytest.mark.parametrize(
    ("name", "floating"),
    [
        ("panda", False),
        ("ur5", False),
        ("kinova", False),
        ("talos_arm", False),
        ("allegro_right_hand", False),
        ("tiago", False),
        ("so100", False),
        ("solo12", True),
        ("anymal", True),
        ("go2", True),
        ("talos", True),
        ("g1", True),
        ("icub", True),
        ("hector", True),
        ("pendulum", False),
    ],
)
def test_floating_base_defaults(name, floating):
    assert robots.robot_info(name).floating_base is floating


def test_known_files():
    assert ROBOTS["talos"].path == "talos_data/robots/talos_reduced.urdf"
    assert ROBOTS["anymal"].path == "anymal_b_simple_description/robots/anymal.urdf"
    assert ROBOTS["ur3"].path == "ur_description/urdf/ur3_robot.urdf"


@pytest.mark.parametrize(("alias", "target"), sorted(robots.ALIASES.items()))
def test_alias_resolves(alias, target):
    assert robots.robot_info(alias) is ROBOTS[target]


def test_tiny_robot_paths():
    for name in TINY:
        path = robots.robot_path(name)
        assert path.is_file(), path
        assert path.parent.name == "robots" and path.parent.parent.name == "invdyn"


@requires_erd
def test_example_robot_data_dir():
    root = robots.example_robot_data_dir()
    assert root is not None and root.is_dir()
    assert (root / ROBOTS["panda"].path).is_file()
    assert robots.robot_path("panda") == root / ROBOTS["panda"].path


@pytest.mark.parametrize("name", list(ROBOTS))
def test_every_robot_loads(name, load_robot):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", invdyn.ModelWarning)
        model = load_robot(name)
    info = ROBOTS[name]
    assert isinstance(model, invdyn.Model)
    assert model.name == name
    assert model.floating_base == info.floating_base
    assert model.nv >= (6 if info.floating_base else 1)
    assert model.total_mass > 0
    assert len(set(model.joint_names)) == model.nbody


@pytest.mark.parametrize(("name", "floating"), [("panda", True), ("solo12", False)])
def test_floating_base_override(name, floating, load_robot):
    default = load_robot(name)
    model = load_robot(name, floating)
    assert model.floating_base == floating
    assert model.nv == default.nv + (6 if floating else -6)


def test_load_by_name_and_alias():
    model = load("pendulum")
    assert model.name == "pendulum" and not model.floating_base
    if ERD_INSTALLED:
        solo = load("solo")
        assert solo.name == "solo8" and solo.floating_base and solo.nv == 14


@pytest.mark.parametrize(
    ("name", "suggestion"),
    [("pandda", "panda"), ("solo_12", "solo12"), ("talos_ful", "talos_full"), ("UR5", "ur5")],
)
def test_unknown_name_suggests(name, suggestion):
    with pytest.raises(invdyn.ModelError, match=f"unknown robot {name!r}.*{suggestion!r}"):
        robots.load_robot(name)
    with pytest.raises(ValueError, match="did you mean"):
        load(name)


def test_unknown_name_without_match():
    with pytest.raises(invdyn.ModelError, match="unknown robot 'xyzzy'") as info:
        robots.robot_path("xyzzy")
    assert "did you mean" not in str(info.value)
    assert "available_robots" in str(info.value)


def test_missing_example_robot_data(monkeypatch):
    monkeypatch.setattr(robots, "example_robot_data_dir", lambda: None)
    with pytest.raises(invdyn.ModelError, match="pip install example-robot-data"):
        robots.load_robot("panda")
    assert not robots.is_installed("panda")
    # robots shipped with invdyn do not need it
    assert robots.robot_path("pendulum").is_file()


def test_example_robot_data_dir_not_found(monkeypatch, tmp_path):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    monkeypatch.setattr(robots.sys, "prefix", str(tmp_path))
    monkeypatch.setattr(robots.sys, "base_prefix", str(tmp_path))
    assert robots.example_robot_data_dir.__wrapped__() is None
    # a system or conda install under <prefix>/share is found
    share = tmp_path / "share" / "example-robot-data" / "robots"
    share.mkdir(parents=True)
    assert robots.example_robot_data_dir.__wrapped__() == share.resolve()


@requires_erd
def test_missing_file_in_installed_package(monkeypatch):
    info = dataclasses.replace(ROBOTS["panda"], path="panda_description/urdf/nope.urdf")
    monkeypatch.setitem(robots._REGISTRY, "panda", info)
    with pytest.raises(invdyn.ModelError, match=r"nope\.urdf does not exist"):
        robots.load_robot("panda")
