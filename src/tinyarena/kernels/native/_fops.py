"""float32 operations for the compiled float kernels, inlined into their loops: each rounds
once, as numpy's float32 ufuncs do, and where both operands are NaN returns the first one's
(quieted), x86's rule that numpy's loops keep and that a compiler may otherwise commute away.

Editing this module: numba's disk cache checks only a kernel's own source file, so the
kernels that inline these keep the old code until their files change (or
``kernels/native/__pycache__/*.nb[ic]`` is deleted).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tinyarena.kernels import native




@native.jit_inline
def first_nan(a: Any, b: Any, s: Any) -> Any:  # pragma: no cover - compiled
    """The NaN x86 gives for ``a op b`` when the result ``s`` is NaN: ``a``'s, else ``b``'s,
    quieted; else ``s`` (the default NaN of an invalid operation, e.g. inf - inf)."""
    if a != a:
        return np.int32(np.float32(a).view(np.int32) | 0x400000).view(np.float32)
    if b != b:
        return np.int32(np.float32(b).view(np.int32) | 0x400000).view(np.float32)
    return s


@native.jit_inline
def fadd(a: Any, b: Any) -> Any:  # pragma: no cover - compiled
    s = a + b
    return first_nan(a, b, s) if s != s else s


@native.jit_inline
def fsub(a: Any, b: Any) -> Any:  # pragma: no cover - compiled
    s = a - b
    return first_nan(a, b, s) if s != s else s


@native.jit_inline
def fmul(a: Any, b: Any) -> Any:  # pragma: no cover - compiled
    s = a * b
    return first_nan(a, b, s) if s != s else s


@native.jit_inline
def fdiv(a: Any, b: Any) -> Any:  # pragma: no cover - compiled
    s = a / b
    return first_nan(a, b, s) if s != s else s


@native.jit_inline
def clamp(v: Any, lo: Any, hi: Any) -> Any:  # pragma: no cover - compiled
    """``c_min_max_inplace``: ``v < lo ? lo : v``, then ``hi < v ? hi : v`` (NaN passes,
    -0.0 stays against a bound of +0.0)."""
    if v < lo:
        v = lo
    if hi < v:
        v = hi
    return v


__all__ = ["clamp", "fadd", "fdiv", "first_nan", "fmul", "fsub"]
