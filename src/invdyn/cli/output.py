"""What the commands print: tables of text columns, the tables of tracking runs and of
identification errors, and the JSON copy of the results that ``--json`` asks for."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from invdyn._files import json_text, write_json
from invdyn.model import Model


def print_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """Print left-aligned text columns, numbers right-aligned."""
    widths = [max(len(str(r[c])) for r in [header, *rows]) for c in range(len(header))]
    numeric = [all(_is_number(r[c]) for r in rows) for c in range(len(header))]
    for row in [header, *rows]:
        cells = [
            str(x).rjust(w) if num else str(x).ljust(w)
            for x, w, num in zip(row, widths, numeric, strict=True)
        ]
        print("  " + "  ".join(cells).rstrip())


def _is_number(text: str) -> bool:
    try:
        float(text.rstrip("%"))
    except ValueError:
        return text == "-"
    return True


def write_json_option(args: argparse.Namespace, data: Any) -> list[Path]:
    """Write `data` where --json says: the files written (none for standard output, written
    through `invdyn.cli.main`'s stream)."""
    if args.json is None:
        return []
    if args.json_stream is not None:
        args.json_stream.write(json_text(data))
        args.json_stream.flush()
        return []
    return [write_json(args.json, data)]


def print_results(model: Model, results: dict[str, Any]) -> None:
    """A summary of each controller's run, then a table per joint of each."""
    rows = []
    for name, result in results.items():
        torques = [joint.rms_torque for joint in result.joints]
        saturated = max(joint.saturated for joint in result.joints)
        rows.append(
            [
                name,
                f"{result.rms_error:.3e}",
                f"{result.max_error:.3e}",
                f"{max(torques):.2f}",
                f"{100 * saturated:.1f}%",
            ]
        )
    print_table(["controller", "RMS error", "max error", "max RMS effort", "saturated"], rows)
    units = model.dof_force_units
    limits = model.dof_effort_limit
    for name, result in results.items():
        print(f"\n  {name}, per joint (errors in rad or m, efforts in N·m or N):")
        print_table(
            ["joint", "RMS error", "max error", "RMS effort", "max effort", "limit", "saturated"],
            [
                [
                    joint.name,
                    f"{joint.rms_error:.3e}",
                    f"{joint.max_error:.3e}",
                    f"{joint.rms_torque:.3f}",
                    f"{joint.max_torque:.3f}",
                    f"{limits[k]:g} {units[k]}" if limits[k] > 0 else "-",
                    f"{100 * joint.saturated:.1f}%",
                ]
                for k, joint in enumerate(result.joints)
            ],
        )


def print_errors(model: Model, errors: dict[str, Any]) -> None:
    """A table of each joint's nMSE (rows) for each predictor (columns)."""
    rows = [
        [joint, *(f"{errors[name][k]:.3g}" for name in errors)]
        for k, joint in enumerate(model.dof_names)
    ]
    print_table(["joint", *(f"nMSE {name}" for name in errors)], rows)
