"""Compiled table lookups: an element-wise int8/uint8 op as ``out[i] = table[x[i]]``.

``kernels._bound.unary_lut`` evaluates an op's own arithmetic once on all 256 inputs; the
lookup then is the op (LOGISTIC, TANH, QUANTIZE from 8 bits...). numpy's ``take`` costs about
a microsecond a call; this loop runs behind numba's dispatch alone. Bit-exact by
construction: it reads the very table the numpy step reads.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyarena.kernels import native


@native.jit
def lookup(table: Any, index: Any, out: Any) -> None:  # pragma: no cover - compiled
    for i in range(index.shape[0]):
        out[i] = table[index[i]]


def bind_lookup(table: np.ndarray, index: np.ndarray, out: np.ndarray
                ) -> Callable[[], None] | None:
    """``out[i] = table[index[i]]`` over flat views; None when the shapes do not fit (uint8
    indices into a 256-entry table, as many outputs as indices)."""
    if table.shape != (256,) or index.dtype != np.uint8 or index.ndim != 1 or \
            out.ndim != 1 or out.shape != index.shape or table.dtype != out.dtype or \
            out.dtype.kind not in "iubf":
        return None
    return native.native_step(lookup, table, index, out)


__all__ = ["bind_lookup", "lookup"]
