"""What the commands print: tables of text columns, a dataset's summary, and the JSON copy of
the results that ``--json`` asks for."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from invdyn._files import json_text, write_json


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
