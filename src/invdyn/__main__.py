"""``python -m invdyn``: the ``invdyn`` command (`invdyn.cli.main`)."""

from invdyn.cli import main

raise SystemExit(main())
