"""Optional extras: every command checks the packages it needs before it starts, and names the
extra to install."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from invdyn import extras
from invdyn.cli import main
from invdyn.errors import MissingExtraError
from invdyn.extras import CPU_TORCH, extra_packages, require_extras


def _without(monkeypatch: pytest.MonkeyPatch, *packages: str) -> None:
    """Make `packages` look uninstalled to the extras check."""
    installed = extras.installed
    monkeypatch.setattr(extras, "installed", lambda name: name not in packages and installed(name))


def test_the_extras_are_those_of_pyproject() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11
    pyproject = Path(__file__).parents[2] / "pyproject.toml"
    declared = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]
    names = {
        extra: tuple(re.match(r"[A-Za-z0-9._-]+", r)[0] for r in requirements)
        for extra, requirements in declared.items()
    }
    assert extra_packages() == names
    assert set(names) >= {"sim", "oracle", "learn", "control", "ray"}


def test_a_missing_extra_names_it_and_its_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "proxsuite", "mujoco")
    with pytest.raises(MissingExtraError, match=r"^x needs the sim,control extras \(mujoco, pro"):
        require_extras("sim", "control", "learn", purpose="x")
    with pytest.raises(ImportError, match=r"pip install 'invdyn\[control\]'$"):
        require_extras("control", purpose="x")


def test_missing_torch_comes_with_the_cpu_only_advice(monkeypatch: pytest.MonkeyPatch) -> None:
    _without(monkeypatch, "torch")
    with pytest.raises(MissingExtraError) as raised:
        require_extras("learn", purpose="invdyn train")
    assert "pip install 'invdyn[learn]'" in str(raised.value)
    assert CPU_TORCH in str(raised.value)


@pytest.mark.parametrize(
    ("argv", "hidden", "extra"),
    [
        (["wbc", "go1"], "proxsuite", "control"),
        (["collect", "double_pendulum", "--out", "{tmp}/data"], "pyarrow", "learn"),
        (["train", "{tmp}/data", "--out", "{tmp}/run"], "torch", "learn"),
        (["track", "panda"], "mujoco", "sim"),
        (["demo"], "mujoco", "sim"),
        (["label", "{tmp}/run", "{tmp}/data", "--out", "{tmp}/l", "--workers", "2"], "ray", "ray"),
        (["follow", "{tmp}/run", "{tmp}/data"], "gymnasium", "sim"),
        (["ident", "{tmp}/data"], "h5py", "learn"),
    ],
)
def test_a_command_without_its_extra_fails_at_once_naming_it(
    argv: list[str],
    hidden: str,
    extra: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _without(monkeypatch, hidden)
    status = main([arg.format(tmp=tmp_path) for arg in argv])
    err = capsys.readouterr().err
    assert status == 2
    assert f"invdyn {argv[0]} needs the" in err and f"pip install 'invdyn[{extra}]'" in err
    assert not any(tmp_path.iterdir()), "the command started its work"
