"""Compiled CAST: ``static_cast`` per element as the numpy kernel (``kernels.cast``) does it.

Three cases, fixed at bind: a plain conversion (integer widening, two's complement narrowing,
integer -> float32 rounding to nearest even, float32 -> float32), which a typed assignment in
the compiled loop performs exactly as numpy's ``copyto(casting="unsafe")``; float32 -> integer
as the pinned wheel computes it (truncate toward zero, saturate to the type, NaN -> 0); and
any type -> bool (non-zero, NaN included, is true).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyarena.kernels import native

MODE_CONVERT, MODE_FLOAT_TO_INT, MODE_TO_BOOL = 0, 1, 2


@native.jit
def cast_values(x: Any, out: Any, mode: int, lo: float, hi: float) -> None:  # pragma: no cover
    if mode == MODE_TO_BOOL:
        for i in range(x.shape[0]):
            out[i] = x[i] != 0
    elif mode == MODE_FLOAT_TO_INT:
        for i in range(x.shape[0]):
            v = np.float64(x[i])
            if v != v:
                v = 0.0
            v = np.trunc(v)
            if v < lo:
                v = lo
            if v > hi:
                v = hi
            out[i] = np.int64(v)
    else:
        for i in range(x.shape[0]):
            out[i] = x[i]


_INTEGER = tuple(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.uint32))
_TYPES = _INTEGER + (np.dtype(np.float32), np.dtype(np.bool_))


def bind_cast(x: np.ndarray, out: np.ndarray) -> Callable[[], None] | None:
    """The compiled cast over flat views, or None (numpy runs) for other types, mismatched
    sizes, or an output sharing the input's memory."""
    if x.dtype not in _TYPES or out.dtype not in _TYPES or x.size != out.size or \
            x.size == 0 or not (x.flags.c_contiguous and out.flags.c_contiguous) or \
            np.shares_memory(x, out):
        return None
    lo = hi = 0.0
    if out.dtype == np.bool_:
        mode = MODE_TO_BOOL
    elif x.dtype == np.float32 and out.dtype in _INTEGER:
        mode = MODE_FLOAT_TO_INT
        info = np.iinfo(out.dtype)
        lo, hi = float(info.min), float(info.max)
    else:
        mode = MODE_CONVERT
    return native.native_step(cast_values, x.reshape(-1), out.reshape(-1), mode, lo, hi)


__all__ = ["bind_cast", "cast_values"]
