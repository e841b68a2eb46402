"""A headless OpenGL backend for MuJoCo's offscreen rendering, chosen before MuJoCo loads.

MuJoCo reads ``MUJOCO_GL`` once, when first imported: without a display its default (GLFW)
cannot render. So ``import invdyn`` sets, on Linux without ``DISPLAY`` and when the user has
not chosen, ``MUJOCO_GL`` (and ``PYOPENGL_PLATFORM``, unless set) to ``"egl"`` where the EGL
library is found, else to ``"osmesa"`` where OSMesa is. A process that imported MuJoCo before
invdyn keeps the backend MuJoCo chose.
"""

from __future__ import annotations

import ctypes.util
import os
import sys


def choose_gl_backend() -> str | None:
    """Set ``MUJOCO_GL`` for headless rendering where needed; the backend set, or None."""
    headless = sys.platform.startswith("linux") and not os.environ.get("DISPLAY")
    if not headless or "MUJOCO_GL" in os.environ or "mujoco" in sys.modules:
        return None
    for backend, library in (("egl", "EGL"), ("osmesa", "OSMesa")):
        if ctypes.util.find_library(library):
            os.environ["MUJOCO_GL"] = backend
            os.environ.setdefault("PYOPENGL_PLATFORM", backend)
            return backend
    return None
