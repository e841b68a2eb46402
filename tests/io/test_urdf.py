"""URDF loading: strict parsing, doubtful inertias, fixed-link merging, Pinocchio's layout."""

from __future__ import annotations

import os
import re
import threading
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

import invdyn
import invdyn.io.mjcf
from invdyn import InputError, JointType, ModelError, ModelWarning
from invdyn.configuration import neutral, random_configuration
from invdyn.io import robots
from invdyn.io.urdf import MAX_URDF_BYTES, link_shapes, load_urdf, parse_urdf, write_urdf
from invdyn.spatial import rpy_to_matrix

ROBOTS_DIR = Path(invdyn.__file__).parent / "robots"
ERD_DIR = robots.example_robot_data_dir()
ERD_URDFS = sorted(ERD_DIR.rglob("*.urdf")) if ERD_DIR is not None else []

# a rod of mass 1 and length 1 with radius 0.01, as in the built-in robots
IC = (3 * 0.01**2 + 1.0) / 12


def link(
    name: str,
    mass: object = 1.0,
    inertia: Sequence[object] = (1, 1, 1, 0, 0, 0),
    origin: str = "",
) -> str:
    """A <link> with an <inertial>; `inertia` lists ixx iyy izz ixy ixz iyz."""
    ixx, iyy, izz, ixy, ixz, iyz = inertia
    return (
        f'<link name="{name}"><inertial>{origin}<mass value="{mass}"/>'
        f'<inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="{ixy}" ixz="{ixz}" iyz="{iyz}"/>'
        "</inertial></link>"
    )


def joint(
    name: str,
    parent: str,
    child: str,
    kind: str = "revolute",
    *,
    extra: str = '<limit lower="-1" upper="1" effort="10" velocity="2"/>',
) -> str:
    """A <joint> of type `kind`; `extra` holds its origin, axis, limit and dynamics elements."""
    return (
        f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
        f"{extra}</joint>"
    )


def robot(*elements: str, name: str = "bot") -> str:
    """A URDF document of the given elements."""
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n' + "\n".join(elements) + "\n</robot>\n"


def arm(extra: str = '<limit lower="-1" upper="1" effort="10" velocity="2"/>', **kw: str) -> str:
    """A base and one link `b` on a joint `j` whose origin, axis and limits are `extra`."""
    return robot('<link name="base"/>', link("b", **kw), joint("j", "base", "b", extra=extra))


def parse_quietly(text: str, **options: bool) -> invdyn.Model:
    """`parse_urdf`, with doubtful-inertia warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)
        return parse_urdf(text, **options)


# structure: every malformed document raises ModelError naming the element at fault
MALFORMED = {
    "child of two joints": (
        robot(
            '<link name="a"/>',
            link("b"),
            link("c"),
            joint("j1", "a", "b"),
            joint("j2", "b", "c"),
            joint("j3", "c", "b"),
        ),
        r"link 'b' is the child of two joints, 'j1' and 'j3' \(a cycle\)",
    ),
    "loop without a root": (
        robot(link("a"), link("b"), joint("j1", "a", "b"), joint("j2", "b", "a")),
        r"no root link: every link is a joint's child \(a cycle\)",
    ),
    "loop beside the root": (
        robot(
            '<link name="a"/>', link("b"), link("c"), joint("j1", "b", "c"), joint("j2", "c", "b")
        ),
        r"link 'b' is not reachable from the root link 'a': its joints form a cycle",
    ),
    "joint to itself": (
        robot('<link name="a"/>', link("b"), joint("j", "a", "b"), joint("k", "b", "b")),
        r"joint 'k': joins link 'b' to itself",
    ),
    "two roots": (
        robot('<link name="a"/>', link("b"), link("c"), joint("j", "a", "b")),
        r"2 root links \('a', 'c'\); a URDF must have exactly one",
    ),
    "duplicate link": (
        robot('<link name="a"/>', link("b"), link("b"), joint("j", "a", "b")),
        r"link 'b' is defined twice",
    ),
    "duplicate joint": (
        robot('<link name="a"/>', link("b"), link("c"), joint("j", "a", "b"), joint("j", "b", "c")),
        r"joint 'j' is defined twice",
    ),
    "missing child link": (
        robot('<link name="a"/>', joint("j", "a", "ghost")),
        r"joint 'j': child link 'ghost' does not exist",
    ),
    "missing parent link": (
        robot('<link name="a"/>', link("b"), joint("j", "ghost", "b")),
        r"joint 'j': parent link 'ghost' does not exist",
    ),
    "unknown joint type": (
        robot('<link name="a"/>', link("b"), joint("j", "a", "b", "ball")),
        r"joint 'j': unknown joint type 'ball'",
    ),
    "no joint type": (
        robot('<link name="a"/>', link("b"), '<joint name="j"><parent link="a"/></joint>'),
        r"joint 'j': has no type attribute",
    ),
    "planar joint": (
        robot('<link name="a"/>', link("b"), joint("j", "a", "b", "planar")),
        r"joint 'j': planar joints are not supported",
    ),
    "no child element": (
        robot('<link name="a"/>', '<joint name="j" type="fixed"><parent link="a"/></joint>'),
        r"joint 'j': <joint> has no <child> element",
    ),
    "unnamed joint": (
        robot('<link name="a"/>', link("b"), '<joint type="fixed"/>'),
        r"joint #1 has no name",
    ),
    "unnamed link": (robot('<link name="a"/>', "<link/>"), r"link #2 has no name"),
    "no links": (robot(), r"robot 'bot' has no links"),
    "no robot name": ('<robot><link name="a"/></robot>', r"<robot> has no name attribute"),
    "not a robot": ('<sdf version="1.6"/>', r"the root element is <sdf>, expected <robot>"),
    "missing limit": (
        arm(extra='<axis xyz="0 0 1"/>'),
        r"joint 'j': a revolute joint needs a <limit> element",
    ),
    "missing limit, prismatic": (
        robot('<link name="a"/>', link("b"), joint("j", "a", "b", "prismatic", extra="")),
        r"joint 'j': a prismatic joint needs a <limit> element",
    ),
    "lower above upper": (
        arm(extra='<limit lower="1" upper="-1" effort="1" velocity="1"/>'),
        r"joint 'j': limit lower 1 is above upper -1",
    ),
    "negative velocity limit": (
        arm(extra='<limit lower="-1" upper="1" effort="1" velocity="-1"/>'),
        r"joint 'j': limit velocity -1 is negative",
    ),
    "negative damping": (
        arm(extra='<limit effort="1" velocity="1"/><dynamics damping="-0.5"/>'),
        r"joint 'j': dynamics damping -0.5 is negative",
    ),
    "zero axis": (
        arm(extra='<axis xyz="0 0 0"/><limit effort="1" velocity="1"/>'),
        r"joint 'j': axis xyz='0 0 0' has zero length",
    ),
    "negative mass": (arm(mass=-1.0), r"link 'b': mass -1 is negative"),
    "no mass element": (
        robot('<link name="a"><inertial><inertia ixx="1"/></inertial></link>'),
        r"link 'a': <inertial> has no <mass> element",
    ),
    "missing inertia attribute": (
        robot('<link name="a"><inertial><mass value="1"/><inertia ixx="1"/></inertial></link>'),
        r"link 'a': inertia ixy is missing",
    ),
    "two inertials": (
        robot(link("a").replace("</link>", '<inertial><mass value="2"/></inertial></link>')),
        r"link 'a': <link> has 2 <inertial> elements; the format allows one",
    ),
    "two masses": (
        robot(link("a").replace("</inertial>", '<mass value="2"/></inertial>')),
        r"link 'a': <inertial> has 2 <mass> elements",
    ),
    "two joint origins": (
        arm(extra='<origin xyz="0 0 1"/><origin xyz="0 0 2"/><limit effort="1" velocity="1"/>'),
        r"joint 'j': <joint> has 2 <origin> elements",
    ),
    "two axes": (
        arm(extra='<axis xyz="0 0 1"/><axis xyz="1 0 0"/><limit effort="1" velocity="1"/>'),
        r"joint 'j': <joint> has 2 <axis> elements",
    ),
    "two limits": (
        arm(extra='<limit effort="1" velocity="1"/><limit effort="2" velocity="1"/>'),
        r"joint 'j': <joint> has 2 <limit> elements",
    ),
    "two child elements": (
        robot(
            link("a"),
            link("b"),
            link("c"),
            joint("j", "a", "b").replace("</joint>", '<child link="c"/></joint>'),
        ),
        r"joint 'j': <joint> has 2 <child> elements",
    ),
    "xacro markup": (
        robot(link("a"), '<xacro:macro name="leg" params="side"/>').replace(
            'name="bot"', 'name="bot" xmlns:xacro="http://www.ros.org/wiki/xacro"'
        ),
        r"<xacro:macro> is xacro markup, not URDF: expand the file with xacro first",
    ),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_structure_raises_model_error(case: str) -> None:
    text, match = MALFORMED[case]
    with pytest.raises(ModelError, match=match):
        parse_urdf(text, source="bad.urdf")
    with pytest.raises(ModelError, match=r"^bad\.urdf: "):
        parse_urdf(text, source="bad.urdf")


def test_root_joint_name_is_reserved_for_the_floating_base() -> None:
    text = robot('<link name="a"/>', link("b"), joint("root_joint", "a", "b", "fixed"))
    assert parse_urdf(text).frame_name == ("a", "b")
    with pytest.raises(ModelError, match=r"joint 'root_joint': the name is reserved"):
        parse_urdf(text, floating_base=True)


# numbers: NaN, infinities, overflow, garbage and wrong counts, in every kind of attribute
BAD_NUMBERS = [
    "nan 0 0",
    "0 inf 0",
    "0 0 -inf",
    "1e999 0 0",
    "abc",
    "1 2",
    "1 2 3 4",
    "1_0 0 0",
    "",
]


@pytest.mark.parametrize("value", BAD_NUMBERS)
@pytest.mark.parametrize("where", ["joint origin xyz", "joint origin rpy", "axis xyz"])
def test_bad_vector_raises_model_error(where: str, value: str) -> None:
    limit = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'
    element = {
        "joint origin xyz": f'<origin xyz="{value}"/>',
        "joint origin rpy": f'<origin rpy="{value}"/>',
        "axis xyz": f'<axis xyz="{value}"/>',
    }[where]
    what = where.replace("joint ", "")
    with pytest.raises(ModelError, match=rf"joint 'j': {what}='{value}' is not 3 finite numbers"):
        parse_urdf(arm(extra=element + limit))


def test_bad_inertial_origin_raises_model_error() -> None:
    text = arm(origin='<origin xyz="0 0 nan"/>')
    with pytest.raises(ModelError, match=r"link 'b': inertial origin xyz='0 0 nan' is not 3"):
        parse_urdf(text)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "abc", "1 2", "", "0x10", "1e400"])
def test_bad_scalar_raises_model_error(value: str) -> None:
    with pytest.raises(ModelError, match=rf"link 'b': mass value='{value}' is not a finite number"):
        parse_urdf(arm(mass=value))
    with pytest.raises(ModelError, match=r"link 'b': inertia ixx="):
        parse_urdf(arm(inertia=(value, 1, 1, 0, 0, 0)))
    limit = f'<limit lower="{value}" upper="1" effort="1" velocity="1"/>'
    with pytest.raises(ModelError, match=rf"joint 'j': limit lower='{value}' is not a finite"):
        parse_urdf(arm(extra=limit))
    dynamics = f'<limit effort="1" velocity="1"/><dynamics friction="{value}"/>'
    with pytest.raises(ModelError, match=r"joint 'j': dynamics friction="):
        parse_urdf(arm(extra=dynamics))


# XML level: hostile or broken documents
BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
  <!ENTITY lol "lol">
  <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
  <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<robot name="&lol4;"><link name="a"/></robot>
"""
EXTERNAL_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE robot [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<robot name="bot"><link name="&xxe;"/></robot>
"""
EXTERNAL_DTD = """<?xml version="1.0"?>
<!DOCTYPE robot SYSTEM "http://example.com/robot.dtd">
<robot name="bot"><link name="a"/></robot>
"""


@pytest.mark.parametrize("text", [BILLION_LAUGHS, EXTERNAL_ENTITY, EXTERNAL_DTD])
def test_dtd_and_entities_are_refused(text: str) -> None:
    with pytest.raises(ModelError, match=r"^evil\.urdf: document type declarations \(DTD\)"):
        parse_urdf(text, source="evil.urdf")


@pytest.mark.parametrize("cut", [0, 10, 50, -30, -3])
def test_truncated_xml_raises_model_error(cut: int) -> None:
    text = (ROBOTS_DIR / "pendulum.urdf").read_text()
    with pytest.raises(ModelError, match=r"^cut\.urdf: malformed XML \(.*line \d+"):
        parse_urdf(text[:cut], source="cut.urdf")


def test_garbage_bytes_raise_model_error() -> None:
    with pytest.raises(ModelError, match=r"malformed XML"):
        parse_urdf(b"\xff\xfe\x00garbage<robot")
    with pytest.raises(ModelError, match=r"malformed XML"):
        parse_urdf("<robot name='a'><link name='a'></robot>")


def test_oversize_file_raises_model_error(tmp_path: Path) -> None:
    path = tmp_path / "huge.urdf"
    with open(path, "wb") as file:
        file.truncate(MAX_URDF_BYTES + 1)  # sparse: costs no disk
    with pytest.raises(ModelError, match=r"huge\.urdf: the file is larger than the 67108864"):
        load_urdf(path)
    with pytest.raises(ModelError, match=r"<string>: the file is larger than"):
        parse_urdf(b" " * (MAX_URDF_BYTES + 1))


def test_unreadable_file_raises_model_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"nope\.urdf: cannot read the file"):
        load_urdf(tmp_path / "nope.urdf")


def _raised_by(load: Callable[[Path], object], fifo: Path) -> BaseException | None:
    """What ``load(fifo)`` raises, run in a thread that a writer opening `fifo` frees if it
    blocks on it for 10 s (the test then fails rather than hangs)."""
    raised: list[BaseException | None] = [None]

    def target() -> None:
        try:
            load(fifo)
        except BaseException as error:
            raised[0] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(10)
    if thread.is_alive():
        with open(fifo, "w"):
            pass
        thread.join()
        pytest.fail(f"{load.__name__} blocked on the pipe {fifo}")
    return raised[0]


@pytest.mark.parametrize("suffix", [".urdf", ".xml"])
def test_paths_that_are_not_regular_files_are_refused(tmp_path: Path, suffix: str) -> None:
    """A pipe, a directory or a device given as a description is refused before it is opened
    (reading a pipe without a writer blocks forever, a device may never end), naming it."""
    fifo = tmp_path / f"pipe{suffix}"
    os.mkfifo(fifo)
    loaders: list[Callable[[Path], object]] = [invdyn.load, invdyn.io.load_simulated]
    loaders.append(load_urdf if suffix == ".urdf" else invdyn.io.mjcf.load_mjcf)
    for load in loaders:
        error = _raised_by(load, fifo)
        assert isinstance(error, InputError), error
        assert str(error).startswith(f"{fifo}: a pipe (FIFO), not a")
    folder = tmp_path / f"folder{suffix}"
    folder.mkdir()
    for load in loaders:
        with pytest.raises(InputError, match=rf"^{re.escape(str(folder))}: a directory, not a"):
            load(folder)
    with pytest.raises(InputError, match=r"^/dev/zero: a character device, not a"):
        invdyn.load("/dev/zero")


def test_a_pipe_of_a_process_substitution_is_refused() -> None:
    """``invdyn info <(cat robot.urdf)`` gives /dev/fd/N, a pipe: refused as one, not looked
    up as a robot's name."""
    read, write = os.pipe()
    try:
        with pytest.raises(InputError, match=rf"^/dev/fd/{read}: a pipe \(FIFO\), not a"):
            invdyn.load(f"/dev/fd/{read}")
    finally:
        os.close(read)
        os.close(write)


def test_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "robot.urdf"
    path.write_text(arm(mass=-2.0))
    with pytest.raises(ModelError, match=rf"^{re.escape(str(path))}: link 'b': mass -2 is neg"):
        load_urdf(path)


def test_a_negative_moment_about_the_joint_axis_loads_with_model_warnings_alone() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", ModelWarning)
        model = parse_urdf(arm(inertia=(-0.5, 1, 1, 0, 0, 0)))
    assert model.body_inertia[0, 0, 0] == -0.5


# physically doubtful inertias: a warning naming file and link, or an error under strict
DOUBTFUL = {
    "zero mass with inertia": (
        {"mass": 0.0},
        r"link 'b': zero mass with a non-zero rotational inertia",
    ),
    "not positive semi-definite": (
        {"inertia": (1, 1, 1, 2, 0, 0)},
        r"link 'b': rotational inertia is not positive semi-definite \(smallest principal "
        r"moment -1\)",
    ),
    "triangle inequality": (
        {"inertia": (1, 1, 3, 0, 0, 0)},
        r"link 'b': principal moments violate the triangle inequality \(1 \+ 1 < 3\)",
    ),
}


@pytest.mark.parametrize("case", list(DOUBTFUL))
def test_doubtful_inertia_warns_and_raises_under_strict(case: str, tmp_path: Path) -> None:
    options, match = DOUBTFUL[case]
    path = tmp_path / "doubt.urdf"
    path.write_text(arm(**options))
    where = re.escape(str(path))
    with pytest.warns(ModelWarning, match=rf"^{where}: {match}; loaded as written$"):
        model = load_urdf(path)
    with pytest.raises(ModelError, match=rf"^{where}: {match}$"):
        load_urdf(path, strict=True)

    # the values are kept as written
    ixx, iyy, izz, ixy, ixz, iyz = options.get("inertia", (1, 1, 1, 0, 0, 0))
    written = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    np.testing.assert_array_equal(model.body_inertia[0], written)
    assert model.body_mass[0] == float(options.get("mass", 1.0))


def test_a_link_welded_into_a_body_is_checked_as_part_of_it() -> None:
    """A dummy link's rank-one inertia (go1's 'base': 1e-6 in every entry) breaks the triangle
    inequality alone, but not the body it is welded into, which is what the dynamics see; a
    body whose welded links break it together is named by its links."""
    dummy = link("d", mass=1e-6, inertia=(1e-6,) * 6)
    text = robot(
        '<link name="base"/>',
        link("b"),
        dummy,
        joint("j", "base", "b"),
        joint("w", "b", "d", "fixed"),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse_urdf(text, strict=True)
        parse_urdf(robot(dummy, link("b"), joint("j", "d", "b")), strict=True)  # the world's
    # alone, the same link is a body, and doubtful
    with pytest.raises(ModelError, match=r"link 'd': principal moments violate the triangle"):
        parse_urdf(robot('<link name="base"/>', dummy, joint("j", "base", "d")), strict=True)
    # a negative moment is a typo, whatever a link is welded to
    negative = text.replace(link("b"), link("b", inertia=(5, 5, 5, 0, 0, 0))).replace(
        'ixx="1e-06"', 'ixx="-1"'
    )
    with pytest.raises(ModelError, match=r"link 'd': rotational inertia is not positive semi-"):
        parse_urdf(negative, strict=True)


def test_massless_subtree_warns_naming_the_joint() -> None:
    text = robot('<link name="a"/>', '<link name="b"/>', '<link name="c"/>', joint("j", "a", "b"))
    text = text.replace("</robot>", joint("k", "b", "c", "fixed") + "</robot>")
    match = r"^m\.urdf: joint 'j': moves a subtree with zero mass and zero inertia, so the mass"
    with pytest.warns(ModelWarning, match=match):
        parse_urdf(text, source="m.urdf")
    with pytest.raises(ModelError, match=match):
        parse_urdf(text, source="m.urdf", strict=True)
    # a massive fixed child makes the subtree usable
    heavy = text.replace('<link name="c"/>', link("c"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse_urdf(heavy, strict=True)


def test_a_default_namespace_is_read_as_urdfdom_reads_it(tmp_path: Path) -> None:
    text = robot(link("a"), link("b"), joint("j", "a", "b"))
    spaced = text.replace('<robot name="bot"', '<robot name="bot" xmlns="http://www.ros.org"', 1)
    assert spaced != text
    plain = parse_urdf(text)
    path = tmp_path / "spaced.xml"
    path.write_text(spaced)
    for model in (parse_urdf(spaced), invdyn.load(path)):
        assert model.joint_names == plain.joint_names == ("j",)
        np.testing.assert_array_equal(model.body_inertia, plain.body_inertia)


def test_a_floating_massless_root_that_its_children_can_undo_warns() -> None:
    """A massless link on a free joint with one moving child: the child's joint undoes the
    base's motion about its axis, so M is singular although every subtree has mass; loading
    warns and aba's error says why. Children on three different axes cannot undo it."""
    text = robot('<link name="a"/>', link("b"), joint("j", "a", "b"))
    match = r"^m\.urdf: joint 'root_joint': floats link 'a', which has zero mass and zero inertia"
    with pytest.warns(ModelWarning, match=match):
        model = parse_urdf(text, source="m.urdf", floating_base=True)
    with pytest.raises(ModelError, match=match):
        parse_urdf(text, source="m.urdf", floating_base=True, strict=True)
    assert np.linalg.eigvalsh(invdyn.mass_matrix(model, neutral(model)))[0] < 1e-12
    with pytest.raises(ModelError, match="a free joint floats a body with none"):
        invdyn.aba(model, neutral(model), np.zeros(model.nv), np.zeros(model.nv))
    limit = '<limit lower="-1" upper="1" effort="10" velocity="2"/>'
    legs = [link(n) for n in "bcd"] + [
        joint(f"j{n}", "a", n, extra=f'<axis xyz="{axis}"/>{limit}')
        for n, axis in zip("bcd", ("1 0 0", "0 1 0", "0 0 1"), strict=True)
    ]
    branching = robot('<link name="a"/>', *legs)
    # fixed to the world, with mass of its own, or on branching legs, the root is fine
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse_urdf(text, source="m.urdf", strict=True)
        parse_urdf(text.replace('<link name="a"/>', link("a")), floating_base=True, strict=True)
        three = parse_urdf(branching, floating_base=True, strict=True)
    assert np.linalg.eigvalsh(invdyn.mass_matrix(three, neutral(three)))[0] > 1e-6


def test_a_welded_link_that_breaks_the_triangle_inequality_is_doubtful_if_its_body_is() -> None:
    def welded(b: tuple[float, ...]) -> str:
        return robot(
            '<link name="a"/>',
            link("b", inertia=b),
            link("c", inertia=(1, 1, 3, 0, 0, 0)),
            joint("j", "a", "b"),
            joint("k", "b", "c", "fixed"),
        )

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse_urdf(welded((1, 1, 1, 0, 0, 0)), strict=True)  # together: 2 + 2 = 4
    with pytest.warns(
        ModelWarning,
        match=r"links 'b', 'c', welded together: principal moments violate the "
        r"triangle inequality \(1\.1 \+ 1\.1 < 3\.1\)",
    ):
        parse_urdf(welded((0.1, 0.1, 0.1, 0, 0, 0)))


def test_round_off_is_not_doubtful() -> None:
    # a rod of zero radius (turned across its length) and an eigenvalue of -1e-14 are within
    # round-off
    texts = [
        arm(
            '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" velocity="2"/>',
            inertia=(0, 1, 1, 0, 0, 0),
        ),
        arm(inertia=(1, 1, 2.0000000000005, 0, 0, 0)),
        arm(inertia=(1, 1, 0, 0, 0, 1e-7)),
        robot(
            '<link name="a"/>',
            link("b"),
            link("c", mass=0.0, inertia=(1e-13, 0, 0, 0, 0, 0)),
            joint("j", "a", "b"),
            joint("k", "b", "c", "fixed"),
        ),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for text in texts:
            parse_urdf(text, strict=True)


def test_a_joint_that_moves_no_inertia_is_doubtful() -> None:
    """A rod of zero radius spun about its own axis, centre of mass on the axis: the mass
    matrix is singular although every inertia is physical."""
    with pytest.warns(ModelWarning, match=r"mass matrix is singular .* joints 'j' together"):
        parse_urdf(arm(inertia=(0, 1, 1, 0, 0, 0)))


def chain(count: int, tip: str | None = None) -> str:
    """A serial chain of `count` links of 1 kg and 0.1 m on z-axis joints j1..j<count>, its
    last link `tip` where given."""
    limit = '<limit lower="-1" upper="1" effort="10" velocity="2"/>'
    extra = f'<origin xyz="0.1 0 0"/><axis xyz="0 0 1"/>{limit}'
    inertial = link("l", inertia=(1e-3, 1e-3, 1e-3, 0, 0, 0), origin='<origin xyz="0.05 0 0"/>')
    links = [inertial.replace('name="l"', f'name="l{k}"') for k in range(1, count + 1)]
    if tip is not None:
        links[-1] = tip.replace('name="tip"', f'name="l{count}"')
    joints = [joint(f"j{k}", f"l{k - 1}", f"l{k}", extra=extra) for k in range(1, count + 1)]
    return robot('<link name="l0"/>', *links, *joints)


def test_a_long_chain_is_not_singular() -> None:
    """3000 links in a row: the mass matrix's eigenvalues span more than 1e14, yet every joint
    moves mass; no singular warning. A last link whose mass sits on its joint's axis with no
    inertia about it is still named, at the end of that chain."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = parse_urdf(chain(3000), strict=True)
    eigenvalues = np.linalg.eigvalsh(invdyn.mass_matrix(model, neutral(model)))
    assert eigenvalues[0] < 1e-14 * eigenvalues[-1]
    q = random_configuration(model, rng=np.random.default_rng(0))
    assert invdyn.dynamics.singular_joints(model, q) == ()
    rod = link("tip", inertia=(1e-3, 1e-3, 0, 0, 0, 0))
    with pytest.warns(ModelWarning, match=r"singular .*: joints 'j3000' together"):
        tipped = parse_urdf(chain(3000, tip=rod))
    assert invdyn.dynamics.singular_joints(tipped, q) == ("j3000",)


def test_strict_error_counts_the_other_doubts() -> None:
    text = robot(
        '<link name="a"/>',
        link("b", mass=0.0),
        link("c", inertia=(1, 1, 3, 0, 0, 0)),
        joint("j", "a", "b"),
        joint("k", "b", "c"),
    )
    with pytest.raises(ModelError, match=r"link 'b': zero mass .* \(and 1 more\)$"):
        parse_urdf(text, strict=True)


# built-in robots
@pytest.mark.parametrize("name", ["pendulum", "double_pendulum", "planar_2r"])
def test_builtin_robots_load_cleanly(name: str) -> None:
    path = ROBOTS_DIR / f"{name}.urdf"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = load_urdf(path, strict=True)
    nbody = 1 if name == "pendulum" else 2
    assert model.name == name
    assert model.source == str(path)
    assert model.nbody == model.nq == model.nv == nbody
    assert model.jnt_name == (("joint",) if nbody == 1 else ("joint1", "joint2"))
    assert model.frame_name[0] == "base" and model.frame_body[0] == -1
    assert model.frame_name[-1] == "tip" and model.frame_body[-1] == nbody - 1
    np.testing.assert_array_equal(model.jnt_type, [JointType.REVOLUTE] * nbody)
    np.testing.assert_array_equal(model.body_mass, np.ones(nbody))
    np.testing.assert_array_equal(model.gravity, [0.0, 0.0, -9.81])

    # a rod of length 1 along -z, or along +x for the planar arm
    along = np.array([1.0, 0.0, 0.0]) if name == "planar_2r" else np.array([0.0, 0.0, -1.0])
    rod = IC * (np.eye(3) - np.outer(along, along)) + 0.5 * 0.01**2 * np.outer(along, along)
    np.testing.assert_allclose(model.body_com, np.tile(along / 2, (nbody, 1)), atol=1e-15)
    np.testing.assert_allclose(model.body_inertia, np.tile(rod, (nbody, 1, 1)), rtol=1e-14)
    np.testing.assert_allclose(model.frame_pos[-1], along, atol=1e-15)
    axis = [0.0, 0.0, 1.0] if name == "planar_2r" else [0.0, 1.0, 0.0]
    np.testing.assert_array_equal(model.jnt_axis, np.tile(axis, (nbody, 1)))
    np.testing.assert_array_equal(model.jnt_pos, np.array([np.zeros(3), along])[:nbody])


@pytest.mark.parametrize("name", ["pendulum", "double_pendulum", "planar_2r"])
def test_builtin_robots_match_their_documented_closed_form(
    name: str, rng: np.random.Generator
) -> None:
    pin = pytest.importorskip("pinocchio")
    m, length, g, h, ic = 1.0, 1.0, 9.81, 0.5, IC
    pin_model = pin.buildModelFromUrdf(str(ROBOTS_DIR / f"{name}.urdf"))
    data = pin_model.createData()
    for _ in range(5):
        q, v, a = rng.uniform(-3, 3, (3, pin_model.nv))
        if name == "pendulum":
            expected = np.array([(ic + m * h**2) * a[0] + m * g * h * np.sin(q[0])])
        else:
            c2, s2, s12 = np.cos(q[1]), np.sin(q[1]), np.sin(q[0] + q[1])
            m11 = 2 * ic + m * h**2 + m * (length**2 + h**2 + 2 * length * h * c2)
            m12 = ic + m * (h**2 + length * h * c2)
            mass_matrix = np.array([[m11, m12], [m12, ic + m * h**2]])
            bias = m * length * h * s2 * np.array([-(2 * v[0] * v[1] + v[1] ** 2), v[0] ** 2])
            gravity = np.zeros(2)
            if name == "double_pendulum":
                g1 = (m * h + m * length) * g * np.sin(q[0]) + m * h * g * s12
                gravity = np.array([g1, m * h * g * s12])
            expected = mass_matrix @ a + bias + gravity
        np.testing.assert_allclose(pin.rnea(pin_model, data, q, v, a), expected, atol=1e-12)


# layout: joint order, merged fixed links, frames, limits
def test_children_are_visited_depth_first_in_joint_name_order() -> None:
    # document order differs from name order; the fixed joint 'a_fix' is walked in its place
    text = robot(
        '<link name="r"/>',
        link("x"),
        link("z"),
        link("f"),
        link("y"),
        joint("b_rev", "r", "x"),
        joint("a_rev2", "x", "z"),
        joint("c_rev", "f", "y"),
        joint("a_fix", "r", "f", "fixed"),
    )
    model = parse_urdf(text)
    assert model.jnt_name == ("c_rev", "b_rev", "a_rev2")
    assert model.body_name == ("y", "x", "z")
    np.testing.assert_array_equal(model.body_parent, [-1, -1, 1])
    assert model.frame_name == ("r", "f", "y", "x", "z")
    np.testing.assert_array_equal(model.frame_body, [-1, -1, 0, 1, 2])
    pin = pytest.importorskip("pinocchio")
    assert tuple(pin.buildModelFromXML(text).names[1:]) == model.jnt_name


FIXED_CHILD = robot(
    '<link name="a"/>',
    link("b"),
    link("c", inertia=(1, 2, 3, 0, 0, 0)),
    '<link name="d"/>',
    joint("j", "a", "b", extra='<origin xyz="0 0 1"/><limit effort="1" velocity="1"/>'),
    joint("k", "b", "c", "fixed", extra='<origin xyz="2 0 0" rpy="0 0 1.5707963267948966"/>'),
    joint("l", "c", "d", extra='<origin xyz="1 0 0"/><limit effort="1" velocity="1"/>'),
)
# by hand: c's inertia diag(1, 2, 3) turned a quarter about z is diag(2, 1, 3) in b; the centre
# of mass is (1, 0, 0), and each unit mass at distance 1 adds diag(0, 1, 1)
COMBINED_BY_HAND = robot(
    '<link name="a"/>',
    link(
        "b",
        mass=2.0,
        inertia=(4, 3, 6, 0, 0, 0),
        origin='<origin xyz="1 0 0" rpy="0 0 1.5707963267948966"/>',
    ),
    '<link name="d"/>',
    joint("j", "a", "b", extra='<origin xyz="0 0 1"/><limit effort="1" velocity="1"/>'),
    joint(
        "l",
        "b",
        "d",
        extra='<origin xyz="2 1 0" rpy="0 0 1.5707963267948966"/><limit effort="1" velocity="1"/>',
    ),
)


def test_fixed_child_merges_into_its_parent_exactly() -> None:
    merged = parse_quietly(FIXED_CHILD)
    by_hand = parse_quietly(COMBINED_BY_HAND)
    assert merged.jnt_name == by_hand.jnt_name == ("j", "l")
    assert merged.body_name == by_hand.body_name == ("b", "d")
    for field in ("body_parent", "jnt_type", "jnt_axis", "q_lower", "q_upper"):
        np.testing.assert_array_equal(getattr(merged, field), getattr(by_hand, field))
    for field in ("body_mass", "body_com", "body_inertia", "jnt_pos", "jnt_rot"):
        np.testing.assert_allclose(getattr(merged, field), getattr(by_hand, field), atol=1e-14)
    np.testing.assert_allclose(merged.body_inertia[0], np.diag([3.0, 4.0, 6.0]), atol=1e-14)

    # every link is a frame; c is placed in b where the fixed joint puts it
    assert merged.frame_name == ("a", "b", "c", "d")
    np.testing.assert_array_equal(merged.frame_body, [-1, 0, 0, 1])
    np.testing.assert_allclose(merged.frame_pos[2], [2.0, 0.0, 0.0])
    np.testing.assert_allclose(merged.frame_rot[2], rpy_to_matrix([0, 0, np.pi / 2]))
    np.testing.assert_array_equal(merged.frame_rot[[0, 1, 3]], np.tile(np.eye(3), (3, 1, 1)))


def test_fixed_base_root_is_the_world_and_floating_base_adds_root_joint() -> None:
    text = robot(link("a", mass=5.0), link("b"), joint("j", "a", "b"))
    fixed = parse_urdf(text)
    assert fixed.jnt_name == ("j",) and fixed.total_mass == 1.0
    floating = parse_urdf(text, floating_base=True)
    assert floating.jnt_name == ("root_joint", "j")
    assert floating.body_name == ("a", "b")
    assert floating.floating_base and floating.nq == 8 and floating.nv == 7
    np.testing.assert_array_equal(floating.body_parent, [-1, 0])
    np.testing.assert_array_equal(floating.body_mass, [5.0, 1.0])
    np.testing.assert_array_equal(floating.jnt_pos[0], np.zeros(3))
    np.testing.assert_array_equal(floating.jnt_rot[0], np.eye(3))
    np.testing.assert_array_equal(floating.q_lower[:7], np.full(7, -np.inf))
    np.testing.assert_array_equal(floating.q_upper[:7], np.full(7, np.inf))
    np.testing.assert_array_equal(floating.dof_velocity_limit[:6], np.full(6, np.inf))
    np.testing.assert_array_equal(floating.frame_body, [0, 1])
    # the joints are driven, the base is not
    assert fixed.passive_dofs == ()
    assert floating.passive_dofs == tuple(
        f"root_joint.{a}" for a in ("vx", "vy", "vz", "wx", "wy", "wz")
    )


def test_joint_types_limits_and_dynamics() -> None:
    dynamics = '<dynamics damping="0.5" friction="0.25"/>'
    text = robot(
        '<link name="w"/>',
        *(link(n) for n in "abcde"),
        joint("j1", "w", "a", extra='<axis xyz="0 0 2"/><limit lower="-2" upper="3"/>' + dynamics),
        joint("j2", "a", "b", "continuous", extra='<limit effort="7" velocity="8"/>' + dynamics),
        joint("j3", "b", "c", "prismatic", extra='<axis xyz="0 1 0"/><limit upper="0.5"/>'),
        joint("j4", "c", "d", "floating", extra='<axis xyz="0 0 0"/>'),
        joint("j5", "d", "e", "continuous", extra='<mimic joint="j2" multiplier="2"/>'),
    )
    model = parse_urdf(text)
    F, R, C, P = JointType.FREE, JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PRISMATIC
    np.testing.assert_array_equal(model.jnt_type, [R, C, P, F, C])
    assert (model.nq, model.nv) == (1 + 2 + 1 + 7 + 2, 1 + 1 + 1 + 6 + 1)
    np.testing.assert_array_equal(model.jnt_axis[:3], [[0, 0, 1], [1, 0, 0], [0, 1, 0]])
    inf = np.inf
    np.testing.assert_array_equal(model.q_lower, [-2, -inf, -inf, 0] + [-inf] * 9)
    np.testing.assert_array_equal(model.q_upper, [3, inf, inf, 0.5] + [inf] * 9)
    np.testing.assert_array_equal(model.dof_velocity_limit, [inf, 8] + [inf] * 8)
    np.testing.assert_array_equal(model.dof_effort_limit, [inf, 7] + [inf] * 8)
    np.testing.assert_array_equal(model.dof_armature, np.zeros(10))
    np.testing.assert_array_equal(model.dof_damping, np.zeros(10))
    np.testing.assert_array_equal(model.dof_friction, np.zeros(10))

    # friction=True reads <dynamics>
    lossy = parse_urdf(text, friction=True)
    np.testing.assert_array_equal(lossy.dof_damping, [0.5, 0.5] + [0.0] * 8)
    np.testing.assert_array_equal(lossy.dof_friction, [0.25, 0.25] + [0.0] * 8)


@pytest.mark.parametrize("kind", ["revolute", "prismatic"])
@pytest.mark.parametrize(
    "limit",
    ['<limit lower="0" upper="0" effort="1" velocity="1"/>', '<limit effort="1" velocity="1"/>'],
)
def test_an_empty_range_is_no_limit(kind: str, limit: str) -> None:
    """lower = upper = 0, written or left to the defaults, as MuJoCo's importer reads it; any
    other range, even one side at 0, is kept."""
    text = robot(
        '<link name="a"/>',
        *(link(n) for n in "bc"),
        joint("j1", "a", "b", kind, extra=limit),
        joint("j2", "b", "c", kind, extra='<limit lower="0" upper="0.5"/>'),
    )
    model = parse_urdf(text)
    np.testing.assert_array_equal(model.q_lower, [-np.inf, 0.0])
    np.testing.assert_array_equal(model.q_upper, [np.inf, 0.5])


def test_origins_compose_through_fixed_joints() -> None:
    model = parse_quietly(FIXED_CHILD)
    # l sits at (1, 0, 0) in c, and c at (2, 0, 0) turned a quarter about z in b
    np.testing.assert_allclose(model.jnt_pos[1], [2.0, 1.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(model.jnt_rot[1], rpy_to_matrix([0, 0, np.pi / 2]))
    np.testing.assert_array_equal(model.jnt_pos[0], [0.0, 0.0, 1.0])


def test_meshes_are_never_opened_and_unknown_elements_are_ignored() -> None:
    text = robot(
        '<link name="a"><visual><geometry><mesh filename="/no/such/mesh.stl"/></geometry>'
        '</visual><collision><geometry><mesh filename="package://x/y.dae"/></geometry>'
        "</collision></link>",
        '<material name="red"><color rgba="1 0 0 1"/></material>',
        '<transmission name="t"><joint name="ghost"/></transmission>',
        '<gazebo reference="a"><sensor type="camera"/></gazebo>',
    )
    model = parse_urdf(text.encode(), source="mesh.urdf")
    assert model.nbody == 0 and model.frame_name == ("a",)
    assert model.source == "mesh.urdf"
    assert parse_urdf(text).source == "<string>"


def test_link_shapes_are_meshes_that_exist_and_primitives(tmp_path: Path) -> None:
    (tmp_path / "meshes").mkdir()
    (tmp_path / "meshes" / "a.stl").write_bytes(b"solid a\nendsolid a\n")
    shapes = (
        '<collision><origin xyz="0 0 1" rpy="0 0 1.5707963267948966"/><geometry>'
        '<box size="0.2 0.4 0.6"/></geometry></collision>'
        '<collision><geometry><cylinder radius="0.1" length="0.5"/></geometry></collision>'
        '<collision><geometry><sphere radius="0.3"/></geometry></collision>'
        '<collision><geometry><mesh filename="meshes/a.stl" scale="2 2 2"/></geometry></collision>'
        '<collision><geometry><mesh filename="meshes/missing.stl"/></geometry></collision>'
        '<collision><geometry><mesh filename="meshes/a.dae"/></geometry></collision>'
        '<visual><geometry><sphere radius="9"/></geometry></visual>'
    )
    file = tmp_path / "bot.urdf"
    file.write_text(robot(f'<link name="a">{shapes}</link>'))
    left_out = r"2 collision meshes left out, .*: meshes/missing.stl, meshes/a.dae$"
    with pytest.warns(ModelWarning, match=left_out):
        found = link_shapes(file)
    assert [s.kind for s in found] == ["box", "cylinder", "sphere", "mesh"]
    assert all(s.link == "a" for s in found)
    box, cylinder, sphere, mesh = found
    np.testing.assert_allclose(box.size, [0.1, 0.2, 0.3])
    np.testing.assert_allclose(box.pos, [0.0, 0.0, 1.0])
    np.testing.assert_allclose(box.rot, rpy_to_matrix([0.0, 0.0, np.pi / 2]))
    np.testing.assert_allclose(cylinder.size, [0.1, 0.25, 0.0])
    np.testing.assert_allclose(sphere.size, [0.3, 0.0, 0.0])
    assert box.file is None and mesh.file == tmp_path / "meshes" / "a.stl"
    np.testing.assert_allclose(mesh.size, [2.0, 2.0, 2.0])
    assert [s.kind for s in link_shapes(file, element="visual")] == ["sphere"]
    # package:// names resolve against the folder of that name above the file, with or
    # without an empty host (package:///...)
    package = tmp_path / "bot_description"
    (package / "urdf").mkdir(parents=True)
    (package / "meshes").mkdir()
    (package / "meshes" / "b.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
    for uri in (
        "package://bot_description/meshes/b.obj",
        "package:///bot_description/meshes/b.obj",
    ):
        mesh = f'<collision><geometry><mesh filename="{uri}"/></geometry></collision>'
        (package / "urdf" / "bot.urdf").write_text(robot(f'<link name="a">{mesh}</link>'))
        (shape,) = link_shapes(package / "urdf" / "bot.urdf")
        assert shape.file == package / "meshes" / "b.obj"

    for bad, field in [
        ('<box size="1 2"/>', "box size"),
        ('<cylinder radius="-1" length="1"/>', "cylinder radius"),
        ('<sphere radius="nan"/>', "sphere radius"),
        ('<cylinder radius="1"/>', "cylinder length"),
    ]:
        collision = f"<collision><geometry>{bad}</geometry></collision>"
        file.write_text(robot(f'<link name="b">{collision}</link>'))
        with pytest.raises(ModelError, match=f"link 'b'.*{field}"):
            link_shapes(file)


# example-robot-data: every robot loads, and matches Pinocchio where Pinocchio loads it
@pytest.mark.skipif(not ERD_URDFS, reason="example-robot-data is not installed")
@pytest.mark.filterwarnings("ignore::invdyn.ModelWarning")
def test_example_robot_data_loads() -> None:
    loaded = 0
    for path in ERD_URDFS:
        for floating_base in (False, True):
            try:
                model = load_urdf(path, floating_base=floating_base, strict=False)
            except ModelError as error:
                assert str(error).startswith(str(path))
                continue
            loaded += 1
            assert model.floating_base == floating_base
            assert len(model.frame_name) == len(set(model.frame_name))
    assert loaded >= 2 * (len(ERD_URDFS) - 1)


PIN_TYPES = {
    "R": JointType.REVOLUTE,
    "RevoluteUnaligned": JointType.REVOLUTE,
    "RUB": JointType.CONTINUOUS,
    "RevoluteUnboundedUnaligned": JointType.CONTINUOUS,
    "P": JointType.PRISMATIC,
    "PrismaticUnaligned": JointType.PRISMATIC,
    "FreeFlyer": JointType.FREE,
}


def _compare_with_pinocchio(path: Path, floating_base: bool) -> None:
    """Assert that `load_urdf` lays out `path` as Pinocchio's buildModelFromUrdf does."""
    import pinocchio as pin

    try:
        if floating_base:
            pin_model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
        else:
            pin_model = pin.buildModelFromUrdf(str(path))
    except ValueError:
        # urdfdom refuses it (ur3.urdf has no robot name): so do we
        with pytest.raises(ModelError):
            parse_quietly(path.read_text(), floating_base=floating_base)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)
        model = load_urdf(path, floating_base=floating_base)
    where = f"{path.name} (floating_base={floating_base})"

    # joint order, tree and sizes
    assert model.jnt_name == tuple(pin_model.names[1:]), where
    np.testing.assert_array_equal(model.body_parent, np.array(pin_model.parents[1:]) - 1)
    assert (model.nq, model.nv) == (pin_model.nq, pin_model.nv), where

    # joint types and axes
    for i, joint in enumerate(pin_model.joints[1:]):
        kind = joint.shortname().removeprefix("JointModel")
        expected = PIN_TYPES[kind.rstrip("XYZ") if kind[-1] in "XYZ" else kind]
        assert model.jnt_type[i] == expected, f"{where}: {model.jnt_name[i]} is {kind}"
        if expected != JointType.FREE:
            axis = joint.extract().axis if "Unaligned" in kind else np.eye(3)["XYZ".index(kind[-1])]
            np.testing.assert_allclose(model.jnt_axis[i], axis, atol=1e-15, err_msg=where)

    # inertias about the centre of mass and joint placements in the parent joint frame
    for i in range(model.nbody):
        inertia, placement = pin_model.inertias[i + 1], pin_model.jointPlacements[i + 1]
        scale = max(1.0, inertia.mass)
        assert abs(model.body_mass[i] - inertia.mass) <= 1e-12 * scale, where
        np.testing.assert_allclose(model.body_com[i], inertia.lever, atol=1e-10, err_msg=where)
        np.testing.assert_allclose(
            model.body_inertia[i], inertia.inertia, atol=1e-10 * scale, err_msg=where
        )
        np.testing.assert_allclose(model.jnt_rot[i], placement.rotation, atol=1e-12)
        np.testing.assert_allclose(model.jnt_pos[i], placement.translation, atol=1e-12)

    # every link frame, placed in its body
    pin_frames = [f for f in pin_model.frames if f.type == pin.FrameType.BODY]
    assert set(model.frame_name) == {f.name for f in pin_frames}, where
    for frame in pin_frames:
        k = model.frame_id(frame.name)
        assert model.frame_body[k] == frame.parentJoint - 1, where
        np.testing.assert_allclose(model.frame_pos[k], frame.placement.translation, atol=1e-12)
        np.testing.assert_allclose(model.frame_rot[k], frame.placement.rotation, atol=1e-12)

    # position limits of bounded joints, but for the empty range [0, 0] that invdyn reads as no
    # limit; velocity and effort limits where the URDF gives them
    bounded = np.isin(model.jnt_type, [JointType.REVOLUTE, JointType.PRISMATIC])
    q_index = model.jnt_qadr[bounded]
    pin_lower, pin_upper = pin_model.lowerPositionLimit, pin_model.upperPositionLimit
    empty = (pin_lower[q_index] == 0) & (pin_upper[q_index] == 0)
    lower = np.where(empty, -np.inf, pin_lower[q_index])
    upper = np.where(empty, np.inf, pin_upper[q_index])
    np.testing.assert_array_equal(model.q_lower[q_index], lower, err_msg=where)
    np.testing.assert_array_equal(model.q_upper[q_index], upper, err_msg=where)
    given = np.isfinite(model.dof_velocity_limit)
    np.testing.assert_array_equal(model.dof_velocity_limit[given], pin_model.velocityLimit[given])
    given = np.isfinite(model.dof_effort_limit)
    np.testing.assert_array_equal(model.dof_effort_limit[given], pin_model.effortLimit[given])


@pytest.mark.skipif(not ERD_URDFS, reason="example-robot-data is not installed")
@pytest.mark.parametrize("path", ERD_URDFS, ids=lambda p: p.name)
def test_example_robot_data_matches_pinocchio(path: Path) -> None:
    pytest.importorskip("pinocchio")
    _compare_with_pinocchio(path, floating_base=False)
    _compare_with_pinocchio(path, floating_base=True)


# ----------------------------------------------------------------------------------------------
# writing: a description with other dynamic parameters
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "floating"),
    [("panda", False), ("ur5", False), ("talos", True), ("tiago_no_hand", False), ("pr2", True)],
)
def test_written_urdf_has_the_models_dynamics(load_robot, tmp_path, name, floating):
    """Heavier links, moved centres of mass and friction written, loaded back, same rnea; the
    UR5's URDF repeats joint names inside <transmission>, which must not be taken for joints."""
    model = load_robot(name, floating_base=floating)
    rng = np.random.default_rng(0)
    friction = rng.uniform(0.0, 1.0, (2, model.nv))
    if floating:
        friction[:, :6] = 0.0  # the free flyer has no joint in the file
    changed = model.replace(
        body_mass=model.body_mass * 1.3,
        body_com=model.body_com + 0.01,
        dof_damping=friction[0],
        dof_friction=friction[1],
    )
    path = tmp_path / "written.urdf"
    write_urdf(changed, path)
    with warnings.catch_warnings():
        # links the source already had doubtful inertias on (tiago, pr2) keep them
        warnings.simplefilter("ignore", ModelWarning)
        loaded = invdyn.load(path, floating_base=floating, friction=True)
    assert loaded.joint_names == model.joint_names and loaded.frame_name == model.frame_name
    q = random_configuration(model, rng=rng, shape=4)
    v, a = rng.normal(size=(2, 4, model.nv))
    expected = invdyn.rnea(changed, q, v, a)
    assert np.abs(invdyn.rnea(loaded, q, v, a) - expected).max() <= 1e-12 * max(
        1.0, np.abs(expected).max()
    )


def test_writing_needs_the_source_urdf(tmp_path):
    model = invdyn.load("pendulum")
    with pytest.raises(invdyn.InputError, match="needs the URDF the model was loaded from"):
        write_urdf(model, tmp_path / "out.urdf", source=tmp_path / "missing.urdf")
    other = tmp_path / "other.urdf"
    other.write_text('<robot name="x"><link name="base"/></robot>')
    with pytest.raises(invdyn.ModelError, match="no link named"):
        write_urdf(model, tmp_path / "out.urdf", source=other)
