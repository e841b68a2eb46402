"""Closed-loop experiments in MuJoCo: controllers of `invdyn.control` run on `invdyn.sim` plants.

`tracking` compares joint-space controllers on a robot carrying an unmodelled payload;
`balance` runs whole-body control of a legged robot through scenarios (pushes, reaches).
"""
