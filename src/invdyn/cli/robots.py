"""``invdyn robots``: the built-in robot names and whether each is installed
(`invdyn.io.robots`)."""

from __future__ import annotations

import argparse

from invdyn.cli.options import Commands, command
from invdyn.cli.output import print_table
from invdyn.io import robots


def add(commands: Commands) -> None:
    command(
        commands,
        "robots",
        run,
        help="list the built-in robot names",
        description="List the built-in robot names and whether each is installed.",
    )


def run(args: argparse.Namespace) -> int:
    del args
    registry = robots.available_robots()
    rows, installed = [], 0
    for name, info in registry.items():
        present = robots.is_installed(name)
        installed += present
        base = "floating" if info.floating_base else "fixed"
        rows.append([name, "yes" if present else "no", base, info.description])
    print_table(["name", "available", "base", "description"], rows)
    data = robots.example_robot_data_dir()
    where = f"installed at {data}" if data else "not installed (pip install example-robot-data)"
    print(f"\n{installed} of {len(registry)} available; example-robot-data {where}")
    aliases = ", ".join(f"{alias} -> {name}" for alias, name in sorted(robots.ALIASES.items()))
    print(f"aliases: {aliases}")
    return 0
