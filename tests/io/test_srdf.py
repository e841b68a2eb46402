"""Reference configurations from SRDF files."""

from __future__ import annotations

import numpy as np
import pytest

import invdyn
from conftest import requires_erd
from invdyn.io.srdf import reference_configurations, robot_configurations

SRDF = """<robot name="two">
  <virtual_joint name="floating" type="floating" parent_frame="world" child_link="base"/>
  <group_state name="crouch" group="all">
    <joint name="floating" value="0 0 0.3 0 0 0 1"/>
    <joint name="joint1" value="0.5"/>
  </group_state>
</robot>
"""


def test_group_states_become_configurations(tmp_path, load_robot):
    model = load_robot("double_pendulum", floating_base=True)
    path = tmp_path / "two.srdf"
    path.write_text(SRDF.replace("joint1", model.jnt_name[1]))
    (q,) = reference_configurations(model, path).values()
    assert np.array_equal(q[:7], [0, 0, 0.3, 0, 0, 0, 1]) and q[7] == 0.5 and q[8] == 0.0
    path.write_text(
        SRDF.replace('value="0.5"', 'value="0.5 1"').replace("joint1", model.jnt_name[1])
    )
    with pytest.raises(invdyn.ModelError, match="needs 1 finite values"):
        reference_configurations(model, path)
    path.write_text(SRDF.replace("joint1", "elbow"))
    with pytest.raises(invdyn.ModelError, match="has no joint named 'elbow'"):
        reference_configurations(model, path)
    # a reduced model of the file's robot: the joints it lacks left out
    (q,) = reference_configurations(model, path, skip_unknown=True).values()
    assert np.array_equal(q[:7], [0, 0, 0.3, 0, 0, 0, 1]) and np.all(q[7:] == 0.0)
    with pytest.raises(invdyn.ModelError, match="cannot read an SRDF file"):
        reference_configurations(model, tmp_path / "missing.srdf")


@requires_erd
def test_example_robot_data_standing_poses(load_robot):
    """The quadrupeds' standing and Talos' half-sitting poses, as Pinocchio reads them."""
    pin = pytest.importorskip("pinocchio")
    from invdyn.io import robots

    for name, state in (("go1", "standing"), ("solo12", "standing"), ("talos", "half_sitting")):
        model = load_robot(name, floating_base=True)
        ours = robot_configurations(model)[state]
        pmodel = pin.buildModelFromUrdf(str(robots.robot_path(name)), pin.JointModelFreeFlyer())
        srdf = next((robots.robot_path(name).parent.parent / "srdf").glob("*.srdf"))
        pin.loadReferenceConfigurations(pmodel, str(srdf), False)
        assert np.allclose(ours, pmodel.referenceConfigurations[state]), name


@requires_erd
def test_fixed_base_models_skip_the_floating_base(load_robot):
    fixed = load_robot("solo12", floating_base=False)
    standing = robot_configurations(fixed)["standing"]
    floating = robot_configurations(load_robot("solo12", floating_base=True))["standing"]
    assert np.array_equal(standing, floating[7:])


@requires_erd
def test_a_reduced_robot_reads_its_own_srdf_without_the_joints_it_lacks(load_robot):
    """romeo_small.srdf names the toes that romeo_small.urdf drops; its half-sitting pose
    holds for the other joints, as Pinocchio reads it."""
    pin = pytest.importorskip("pinocchio")
    from invdyn.io import robots

    model = load_robot("romeo_small", floating_base=True)
    ours = robot_configurations(model)["half_sitting"]
    path = robots.robot_path("romeo_small")
    pmodel = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    pin.loadReferenceConfigurations(pmodel, str(path.parent.parent / "srdf/romeo_small.srdf"))
    assert np.allclose(ours, pmodel.referenceConfigurations["half_sitting"])
