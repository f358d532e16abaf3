"""Compiled CAST from an integer type: ``out[i] = values[i]`` with C's conversions.

numpy's ``copyto(..., casting="unsafe")`` costs about a microsecond a call; the audio front
end's models cast twice per invoke (int16 log features to int32 or float32, int32 to int8).
numba converts as numpy does (and as C's static_cast does): integer narrowing keeps the low
bits, widening extends the sign, integer to float32 rounds to nearest. Float sources (whose
NaN and saturation rules ``cast._float_to_int`` spells out) and bool outputs stay with numpy.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyarena.kernels import native

INTEGER_SOURCES = (np.int8, np.int16, np.int32, np.uint32)
TARGETS = (np.int8, np.int16, np.int32, np.uint32, np.float32)


@native.jit
def convert(values: Any, out: Any) -> None:  # pragma: no cover - compiled
    for i in range(values.shape[0]):
        out[i] = values[i]


def bind_cast(values: np.ndarray, out: np.ndarray) -> Callable[[], None] | None:
    """None (numpy runs) unless both views are flat, contiguous, of the same size, from an
    integer type to an integer or float32 type, and separate."""
    if values.dtype.type not in INTEGER_SOURCES or out.dtype.type not in TARGETS or \
            not values.flags.c_contiguous or not out.flags.c_contiguous or \
            not out.flags.writeable or values.size != out.size or values.size == 0 or \
            np.may_share_memory(values, out):
        return None
    return native.native_step(convert, values.reshape(-1), out.reshape(-1))


__all__ = ["bind_cast", "convert"]
