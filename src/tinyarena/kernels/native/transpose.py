"""Compiled TRANSPOSE: reference_ops::Transpose as one loop nest over the output.

numpy's strided copy for an NCHW -> NHWC input (innermost output axis of 3) runs element by
element through its buffered iterator, ~3 ns an element; the loop nest here reads each input
element once by its permuted strides. Pure data movement: the same bytes by construction.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tinyarena.kernels import native

RANK = 5  # TransposePrepare's limit


@native.jit
def transpose(x: Any, out: Any, d: Any) -> None:  # pragma: no cover - compiled
    # sizes and strides into locals first (``out`` could alias ``d`` for all the compiler knows)
    n0, n1, n2, n3, n4 = d[0], d[1], d[2], d[3], d[4]
    s0, s1, s2, s3, s4 = d[5], d[6], d[7], d[8], d[9]
    o = 0
    for i0 in range(n0):
        for i1 in range(n1):
            for i2 in range(n2):
                for i3 in range(n3):
                    base = i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3
                    for i4 in range(n4):
                        out[o + i4] = x[base + i4 * s4]
                    o += n4


def bind_transpose(x: np.ndarray, out: np.ndarray, perm: Sequence[int]
                   ) -> Callable[[], None] | None:
    """The compiled transpose of ``x`` by ``perm`` into ``out`` (its elements in C order, as
    eval's reshape writes them); None (numpy runs) for anything else."""
    rank = x.ndim
    if rank == 0 or rank > RANK or sorted(perm) != list(range(rank)) or \
            x.dtype != out.dtype or x.size != out.size or x.dtype.kind not in "iuf" or \
            not (x.flags.c_contiguous and out.flags.c_contiguous):
        return None
    strides = [int(np.prod(x.shape[k + 1:], dtype=np.int64)) for k in range(rank)]
    sizes = [1] * (RANK - rank) + [int(x.shape[p]) for p in perm]
    steps = [0] * (RANK - rank) + [strides[p] for p in perm]
    dims = np.array(sizes + steps, dtype=np.int64)
    return native.native_step(transpose, x.reshape(-1), out.reshape(-1), dims)


__all__ = ["bind_transpose", "transpose"]
