"""Printing of the benchmarks' result tables."""

from __future__ import annotations


def table(header: list[str], rows: list[list[str]]) -> None:
    """Print columns, text left-aligned and numbers right-aligned."""
    widths = [max(len(r[c]) for r in [header, *rows]) for c in range(len(header))]
    numeric = [all(is_number(r[c]) for r in rows) for c in range(len(header))]
    for row in [header, *rows]:
        cells = [
            x.rjust(w) if num else x.ljust(w)
            for x, w, num in zip(row, widths, numeric, strict=True)
        ]
        print("  " + "  ".join(cells).rstrip())


def is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
