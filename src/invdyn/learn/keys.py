"""Batch keys, as LeRobot names them, so that batches and datasets can be shared with it, and
the names of the files that tell a checkpoint from the other outputs of invdyn.

A batch is a mapping from these keys to arrays (or tensors) with a leading batch dimension;
the same names are the columns of a dataset on disk (see `invdyn.learn.data`).
"""

OBS_STATE = "observation.state"
"""(..., n_state) the measured state: joint positions and velocities, say."""

OBS_IMAGE_PREFIX = "observation.images."
"""Prefix of camera images: ``observation.images.<camera>``."""

ACTION = "action"
"""(..., n_action) the command: joint forces for inverse dynamics."""

TIMESTAMP = "timestamp"
"""(...,) time of the frame in seconds from the start of its episode."""

FRAME_INDEX = "frame_index"
"""(...,) index of the frame in its episode, from 0."""

EPISODE_INDEX = "episode_index"
"""(...,) index of the episode in the dataset, from 0."""

INDEX = "index"
"""(...,) index of the frame in the whole dataset, from 0."""

TASK_INDEX = "task_index"
"""(...,) index of the frame's task in the dataset's task table."""

MODEL_FILE = "model.safetensors"
"""A checkpoint's weights (`invdyn.learn.checkpoint`): the file that makes a directory one."""

IDENTIFICATION = "identification.npz"
"""The identified parameters in the output directory of an identification
(`invdyn.ident.run`), which a checkpoint's loader names when it is given one."""
