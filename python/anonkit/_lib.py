"""Loading libanonkit through cffi in ABI mode (no compiler needed).

The library is looked for, in order: the path in the ANONKIT_LIBRARY
environment variable; a libanonkit.so* next to this package; the build tree
this package sits in (python/anonkit -> build/libanonkit.so); the installed
library (the system's search path: libanonkit.so.0, then libanonkit.so).

cffi releases the GIL around every call into the library, so a run started
from one thread lets the others go on (docs/python.md, "Threads and the GIL").
"""
from __future__ import annotations

import glob
import os

import cffi

from ._cdef import CDEF

ffi = cffi.FFI()
ffi.cdef(CDEF)


def _candidates() -> list[str]:
    found = []
    env = os.environ.get("ANONKIT_LIBRARY")
    if env:
        found.append(env)
    here = os.path.dirname(os.path.abspath(__file__))
    found += sorted(glob.glob(os.path.join(here, "libanonkit.so*")))
    root = os.path.dirname(os.path.dirname(here))
    for build in ("build", "build-asan"):
        path = os.path.join(root, build, "libanonkit.so")
        if os.path.exists(path):
            found.append(path)
    found += ["libanonkit.so.0", "libanonkit.so"]
    return found


def _load():
    errors = []
    for path in _candidates():
        try:
            return ffi.dlopen(path), path
        except OSError as e:
            errors.append(f"{path}: {e}")
            if path == os.environ.get("ANONKIT_LIBRARY"):
                break  # an explicit choice that fails is not replaced silently
    raise ImportError("anonkit: cannot load libanonkit (set ANONKIT_LIBRARY to its path):\n  " + "\n  ".join(errors))


lib, library_path = _load()
