"""Tests of invdyn._files: JSON that strict parsers read."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from invdyn._files import write_json


def _strict_load(path: Path) -> object:
    """The JSON of `path`, refusing NaN and Infinity as JavaScript's JSON.parse does."""

    def refuse(token: str) -> None:
        raise ValueError(f"{path}: {token} is not JSON")

    return json.loads(path.read_text(), parse_constant=refuse)


def test_non_finite_numbers_are_written_as_null(tmp_path: Path) -> None:
    """An undefined metric (R^2 of a constant action: NaN) leaves the file valid JSON."""
    metrics = {
        "r2_mean": math.nan,
        "mae_mean": 0.5,
        "per_action": [{"r2": np.float32("nan"), "nmse": np.float64(2.0)}],
        "bounds": (-math.inf, math.inf),
        "curve": np.array([1.0, np.nan]),
        "note": None,
    }
    written = _strict_load(write_json(tmp_path / "metrics.json", metrics))
    assert written == {
        "r2_mean": None,
        "mae_mean": 0.5,
        "per_action": [{"r2": None, "nmse": 2.0}],
        "bounds": [None, None],
        "curve": [1.0, None],
        "note": None,
    }
