"""tinyarena: TensorFlow Lite Micro's runtime and tensor arena, in Python.

The public names load lazily, so ``import tinyarena`` stays cheap and a command that needs only
the model reader does not import the kernels::

    import tinyarena
    ip = tinyarena.Interpreter("person_detect.tflite", arena_size=100_000)
    ip.allocate_tensors()
    ip.set_input(image, 0)
    ip.invoke()
    scores = ip.get_output(0)
"""

from __future__ import annotations

import importlib
from typing import Any

from tinyarena import errors
from tinyarena.errors import (
    ArenaTooSmallError,
    BuildError,
    InterpreterError,
    KernelError,
    ModelError,
    PlanError,
    TinyArenaError,
    UnsupportedOpError,
)

from tinyarena._version import __version__

# public name -> module defining it (imported on first use)
_LAZY: dict[str, str] = {
    "Interpreter": "tinyarena.interpreter.interpreter",
    "AllocationReport": "tinyarena.interpreter.interpreter",
    "OpResolver": "tinyarena.interpreter.resolver",
    "SharedAllocator": "tinyarena.interpreter.placement",
    "Registration": "tinyarena.kernels.base",
    "read_model": "tinyarena.model.reader",
    "allocate_model": "tinyarena.arena.allocator",
    "ModelBuilder": "tinyarena.builder",
    "optimize_model": "tinyarena.optimize",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tinyarena' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "AllocationReport",
    "ArenaTooSmallError",
    "BuildError",
    "Interpreter",
    "InterpreterError",
    "KernelError",
    "ModelBuilder",
    "ModelError",
    "OpResolver",
    "PlanError",
    "Registration",
    "SharedAllocator",
    "TinyArenaError",
    "UnsupportedOpError",
    "__version__",
    "allocate_model",
    "errors",
    "optimize_model",
    "read_model",
]
