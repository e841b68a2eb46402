"""The ``invdyn`` console command: `invdyn.cli.main`, imported so that a Ctrl-C while it loads
(numpy, torch, MuJoCo: up to seconds) ends it as one later does, with
``invdyn: interrupted`` and status 130 rather than a traceback.

A module of its own, outside the invdyn package: importing any module of the package runs
``invdyn/__init__.py`` first, which holds the very imports to guard.
"""

from __future__ import annotations

import sys


def main() -> int:
    """Run the ``invdyn`` command line (`invdyn.cli.main`) and return its exit status."""
    try:
        from invdyn.cli import main as run

        return run()
    except KeyboardInterrupt:
        # while importing, or outside the command's own handler (parsing its arguments)
        print("invdyn: interrupted", file=sys.stderr)
        return 130
