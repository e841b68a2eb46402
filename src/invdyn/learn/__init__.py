"""Learned inverse dynamics: datasets, models, training and evaluation.

``import invdyn`` does not import this package, and this package imports nothing heavy itself:
`invdyn.learn.datasets` loads pyarrow, h5py or PyAV only when a function needs them,
`invdyn.learn.config` (with `invdyn.learn.heads`, whose heads it checks) and `invdyn.learn.keys`
need neither, and the model, training and checkpoint modules import PyTorch (``pip install
'invdyn[learn]'``).
"""
