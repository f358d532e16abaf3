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

from tinyarena import errors
from tinyarena._util import lazy_exports
from tinyarena.errors import (
    ArenaTooSmallError,
    BuildError,
    InterpreterError,
    KernelError,
    ModelError,
    PlanError,
    TinyArenaError,
    UnsupportedOpError,
    UsageError,
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


__getattr__, __dir__ = lazy_exports("tinyarena", _LAZY, globals())


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
    "UsageError",
    "__version__",
    "allocate_model",
    "errors",
    "optimize_model",
    "read_model",
]
