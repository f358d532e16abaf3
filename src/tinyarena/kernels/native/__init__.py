"""Compiled kernels: the optional ``fast`` extra (``pip install 'tinyarena[fast]'``, numba).

Why: a numpy call costs about a microsecond whatever its size, and the small operators of
streaming and recurrent models (a 1x3 conv over 32 channels, an LSTM time step) need several
calls each, where TFLM's C kernel finishes in half a microsecond. Measured with
``benchmarks/invoke.py``, the pure numpy paths stay 7-150x behind the wheel on such models;
the same loops compiled by numba run at C speed behind one ~0.5 us dispatch.

The contract for a kernel's ``bind`` (see ``kernels.base``):

* ``enabled(ctx)`` says whether this interpreter runs compiled kernels (``Interpreter(...,
  native=None|True|False)``; ``None`` means "when numba is installed", and the environment
  variable ``TINYARENA_NATIVE=0`` turns them off).
* The compiled loops live in this package, one module per kernel family, and import numba at
  module level: import them inside ``bind`` only after ``enabled(ctx)``.
* ``native_step(fn, *args)`` binds a compiled function to its arrays (arena views,
  workspaces, constants packed at bind time) and marks the step as needing no numpy error
  state (``quiet``); ``interpreter.invoke_plan`` skips ``np.errstate`` when every step is quiet.
* A compiled loop must reproduce the numpy path bit for bit (that path stays the reference:
  tests run both), allocate nothing, and never index outside the arrays it is given: bind
  checks every shape first, since compiled code does not (``boundscheck=False``).
"""

from __future__ import annotations

import functools
import os
from types import ModuleType
from typing import Any, Callable

ENVIRONMENT_SWITCH = "TINYARENA_NATIVE"
INSTALL_HINT = "pip install 'tinyarena[fast]' (or: pip install numba)"


@functools.lru_cache(maxsize=1)
def numba_module() -> ModuleType | None:
    """numba, or None when it is not installed (or fails to import)."""
    try:
        import numba
    except Exception:  # ImportError, or a numba/numpy version mismatch raising at import
        return None
    return numba


@functools.lru_cache(maxsize=1)
def available() -> bool:
    """numba is installed. Looked up without importing it (that takes ~0.3 s): the import
    happens when the first compiled kernel is bound; a numba that then fails to import
    leaves the numpy kernels in place (``numba_module``)."""
    import importlib.util

    return importlib.util.find_spec("numba") is not None


def cache_is_warm() -> bool:
    """Some compiled kernel of this package is in numba's disk cache (an index file beside
    the modules, or under ``NUMBA_CACHE_DIR``): kernels then load in under a second, where a
    first build on a machine takes seconds per kernel family. Per machine, not per model: a
    model whose kernel families were never built still builds them."""
    from pathlib import Path

    roots = [Path(__file__).parent / "__pycache__"]
    if os.environ.get("NUMBA_CACHE_DIR"):
        roots.append(Path(os.environ["NUMBA_CACHE_DIR"]))
    modules = {p.stem for p in Path(__file__).parent.glob("*.py")}
    return any(f.name.split(".", 1)[0] in modules
               for root in roots if root.is_dir() for f in root.rglob("*.nbi"))


def switched_off() -> bool:
    """``TINYARENA_NATIVE=0`` (or ``false``/``no``/``off``) in the environment."""
    return os.environ.get(ENVIRONMENT_SWITCH, "").strip().lower() in ("0", "false", "no", "off")


def resolve(requested: bool | None) -> bool:
    """The interpreter's setting: None -> compiled when available and not switched off;
    True -> compiled or an error naming the extra; False -> numpy only."""
    if requested is None:
        return available() and not switched_off()
    if requested and not available():
        from tinyarena.errors import InterpreterError

        raise InterpreterError(
            f"native=True needs numba, which is not installed: {INSTALL_HINT}; or pass "
            "native=False to run the pure numpy kernels")
    return bool(requested)


def enabled(ctx: Any) -> bool:
    """The context's interpreter runs compiled kernels (and numba imports: the first call
    pays for that import, at bind time, never at invoke time)."""
    return bool(getattr(ctx, "native", False)) and numba_module() is not None


def jit(fn: Callable[..., Any]) -> Any:
    """numba's ``njit`` with the settings every compiled kernel uses: results cached on disk
    (the first compile of a kernel takes a second or two, later processes load it), the GIL
    released, numpy's integer/float error model, no bounds checks (bind checks shapes)."""
    numba = numba_module()
    if numba is None:  # pragma: no cover - modules here are imported only when enabled
        raise ImportError(f"compiled kernels need numba: {INSTALL_HINT}")
    return numba.njit(cache=True, nogil=True, error_model="numpy", boundscheck=False)(fn)


def jit_inline(fn: Callable[..., Any]) -> Any:
    """``jit``'s settings plus ``inline="always"``, for helpers called from compiled loops: a
    call into a separately compiled function is not inlined by LLVM, costs a call per element
    and the loop's vectorisation (measured 4x slower in the conv loops)."""
    numba = numba_module()
    if numba is None:  # pragma: no cover - modules here are imported only when enabled
        raise ImportError(f"compiled kernels need numba: {INSTALL_HINT}")
    return numba.njit(inline="always", nogil=True, error_model="numpy",
                      boundscheck=False)(fn)


def quiet(step: Callable[[], None]) -> Callable[[], None]:
    """Mark ``step`` as one that never raises numpy floating-point warnings (compiled code,
    byte copies), so that an invoke made only of such steps needs no ``np.errstate``."""
    try:
        setattr(step, "quiet", True)
    except AttributeError:  # a builtin method or a slotted object: wrap it
        inner = step

        def step() -> None:
            inner()
        setattr(step, "quiet", True)
    return step


def is_quiet(step: Callable[[], None]) -> bool:
    return bool(getattr(step, "quiet", False))


def native_step(fn: Callable[..., None], *args: Any) -> Callable[[], None]:
    """``fn(*args)`` as a quiet zero-argument step (``functools.partial``: a C-level call).

    The compiled function is made (or loaded from numba's disk cache) here, for exactly these
    argument types, so that ``allocate_tensors`` does all the work and the first invoke, like
    every other, compiles and allocates nothing (TFLM's contract)."""
    numba = numba_module()
    if numba is not None and hasattr(fn, "compile"):
        try:
            fn.compile(tuple(numba.typeof(a) for a in args))
        except Exception as exc:  # numba's typing/lowering errors, a cache it cannot write...
            raise CompileFailed(f"{getattr(fn, '__name__', fn)}: {type(exc).__name__}: "
                                f"{str(exc).splitlines()[0] if str(exc) else ''}") from exc
    return quiet(functools.partial(fn, *args))


class CompileFailed(Exception):
    """numba could not build a compiled kernel for its bound arrays. The interpreter then runs
    that operator's numpy kernel (same results) and says so with a RuntimeWarning: a missing
    speed-up is no reason to refuse a model."""


__all__ = ["CompileFailed", "ENVIRONMENT_SWITCH", "INSTALL_HINT", "available", "cache_is_warm",
           "enabled", "is_quiet", "jit", "jit_inline", "native_step", "numba_module", "quiet",
           "resolve", "switched_off"]
