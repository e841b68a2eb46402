"""Every script in examples/ runs to completion (each checks its own results)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ERD_INSTALLED

EXAMPLES = sorted((Path(__file__).parents[1] / "examples").glob("*.py"))
# the examples that train a network for half a minute or more
SLOW = {"learned_inverse_dynamics"}


def test_examples_exist() -> None:
    assert len(EXAMPLES) >= 2


@pytest.mark.parametrize(
    "script",
    [
        pytest.param(p, id=p.stem, marks=[pytest.mark.slow] if p.stem in SLOW else [])
        for p in EXAMPLES
    ],
)
def test_example_runs(script: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"{script.name} failed:\n{result.stdout}\n{result.stderr}"
    assert result.stdout.strip(), f"{script.name} printed nothing"


@pytest.mark.skipif(not ERD_INSTALLED, reason="the README tour loads the Panda")
def test_readme_tour_runs(capsys: pytest.CaptureFixture[str]) -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.DOTALL)
    assert len(blocks) >= 3, "README.md lacks the tour's python blocks"
    namespace: dict[str, object] = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)
    assert "must have shape" in capsys.readouterr().out
    # derivatives and tensors, on the first block's states
    pytest.importorskip("torch")
    exec(compile(blocks[1], "README.md", "exec"), namespace)
    params = namespace["params"]
    assert params.grad is not None and params.grad.shape == params.shape
    # frames and centroidal quantities, on the same states
    exec(compile(blocks[2], "README.md", "exec"), namespace)
    assert namespace["Ag"].shape == (6, 9) and namespace["h_dot"].shape == (6,)
