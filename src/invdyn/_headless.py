"""A headless OpenGL backend for MuJoCo's offscreen rendering, chosen before MuJoCo loads.

MuJoCo reads ``MUJOCO_GL`` once, when first imported: without a display its default (GLFW)
cannot render. So ``import invdyn`` sets, on Linux without ``DISPLAY`` and when the user has
not chosen, ``MUJOCO_GL`` (and ``PYOPENGL_PLATFORM``, unless set) to ``"egl"`` where the EGL
library loads, else to ``"osmesa"`` where OSMesa does. A process that imported MuJoCo before
invdyn keeps the backend MuJoCo chose.

The libraries are probed by loading them by name (about 3 ms), not with
``ctypes.util.find_library``, which imports subprocess and runs ``ldconfig`` (about 30 ms on
every ``import invdyn``).
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import sys

# backend -> the library names (sonames) that provide it
_LIBRARIES = {
    "egl": ("libEGL.so.1", "libEGL.so"),
    "osmesa": ("libOSMesa.so.8", "libOSMesa.so.6", "libOSMesa.so"),
}


def choose_gl_backend() -> str | None:
    """Set ``MUJOCO_GL`` for headless rendering where needed; the backend set, or None."""
    headless = sys.platform.startswith("linux") and not os.environ.get("DISPLAY")
    if not headless or "MUJOCO_GL" in os.environ or "mujoco" in sys.modules:
        return None
    for backend, names in _LIBRARIES.items():
        if any(_loads(name) for name in names):
            os.environ["MUJOCO_GL"] = backend
            os.environ.setdefault("PYOPENGL_PLATFORM", backend)
            return backend
    return None


def _loads(name: str) -> bool:
    """Whether the shared library `name` loads."""
    try:
        ctypes.CDLL(name)
    except OSError:
        return False
    return True


def prepare_gl_context() -> None:
    """Import Triton, where it is installed, before MuJoCo's first EGL context: Mesa's software
    renderer loads an LLVM of its own, and a process that imports Triton after that (as
    ``torch.compile`` does) crashes in Triton's LLVM, where the other order works."""
    if os.environ.get("MUJOCO_GL") != "egl" or "triton" in sys.modules:
        return
    if importlib.util.find_spec("triton") is not None:
        import triton  # noqa: F401
