"""Compiled int8 ADD / SUB / MUL: one lookup per element in the op's 65536-entry table.

The numpy path (``kernels._elementwise``) already evaluates TFLM's AddFunc / MulFunc once on
every (x1, x2) pair at allocation and looks results up as ``table[(uint8(x1) << 8) |
uint8(x2)]``, in blocks of a few numpy calls each. This loop does the same lookups over the
collapsed broadcast (up to four axes, a stride of 0 on a broadcast axis): bit-exact by
construction, whatever target arithmetic the table was built with.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tinyarena.kernels import native

RANK = 4


@native.jit
def lookup_pairs(table: Any, a: Any, b: Any, out: Any, d: Any) -> None:  # pragma: no cover
    n0, n1, n2, n3 = d[0], d[1], d[2], d[3]
    a0, a1, a2, a3 = d[4], d[5], d[6], d[7]
    b0, b1, b2, b3 = d[8], d[9], d[10], d[11]
    o = 0
    for i0 in range(n0):
        for i1 in range(n1):
            for i2 in range(n2):
                ia = i0 * a0 + i1 * a1 + i2 * a2
                ib = i0 * b0 + i1 * b1 + i2 * b2
                for i3 in range(n3):
                    out[o] = table[(np.int64(a[ia + i3 * a3]) << 8) | np.int64(b[ib + i3 * b3])]
                    o += 1


def _strides(shape: Sequence[int], out_shape: Sequence[int]) -> list[int]:
    """C-order element strides of ``shape``, 0 on the axes it is broadcast along."""
    strides = []
    step = 1
    for size, full in zip(reversed(shape), reversed(out_shape)):
        strides.append(step if size == full else 0)
        step *= size
    return strides[::-1]


def bind_table_binary(table: np.ndarray, x1: np.ndarray, x2: np.ndarray, out: np.ndarray,
                      shape1: Sequence[int], shape2: Sequence[int], shape_out: Sequence[int]
                      ) -> Callable[[], None] | None:
    """The compiled lookup over these views and the collapsed broadcast shapes of the op's
    plan, or None (numpy runs) when the arrays do not match it or it has more than 4 axes."""
    rank = len(shape_out)
    if rank > RANK or len(shape1) != rank or len(shape2) != rank:
        return None
    if table.shape != (1 << 16,) or table.dtype != np.int8 or not all(
            a.dtype == np.int8 and a.flags.c_contiguous for a in (x1, x2, out)):
        return None
    size = int(np.prod(shape_out, dtype=np.int64))
    if x1.size != int(np.prod(shape1, dtype=np.int64)) or out.size != size or \
            x2.size != int(np.prod(shape2, dtype=np.int64)):
        return None
    if any(s not in (1, n) for shape in (shape1, shape2) for s, n in zip(shape, shape_out)):
        return None
    pad = [1] * (RANK - rank)
    zeros = [0] * (RANK - rank)
    dims = np.array(pad + list(shape_out) + zeros + _strides(shape1, shape_out) + zeros
                    + _strides(shape2, shape_out), dtype=np.int64)
    return native.native_step(lookup_pairs, table, x1.reshape(-1).view(np.uint8),
                              x2.reshape(-1).view(np.uint8), out.reshape(-1), dims)


__all__ = ["bind_table_binary", "lookup_pairs"]
