"""Closed-loop experiments in MuJoCo: controllers of `invdyn.control` run on `invdyn.sim` plants.

`tracking` compares joint-space controllers on a robot carrying an unmodelled payload;
`balance` runs whole-body control of a legged robot through scenarios (pushes, reaches).
`track`, `demo` and `wbc` are the work of the commands of those names: runs checked before
they start and written to a folder.
"""
