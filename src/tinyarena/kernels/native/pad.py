"""Compiled PAD / PADV2 of small tensors: reference_ops::Pad as one pass over the output.

Each output row is the pad value, the input row it covers, the pad value. No arithmetic: the
same values by construction. An output planned to share memory with the input (optimizer plans
that TFLM's order makes safe) is left to the numpy path, which stages the input first.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tinyarena.kernels import native

RANK = 5  # PadKernelMaxDimensionCount
# Larger outputs stay with numpy: its three bulk calls (stage, fill, copy) move memory faster
# than this loop once their ~3 us of call overhead is paid off (about 20k elements here).
MAX_ELEMENTS = 1 << 12


@native.jit
def pad(x: Any, value: Any, out: Any, d: Any) -> None:  # pragma: no cover - compiled
    # d: output sizes (5), input sizes (5), befores (5), input strides (5); read into locals
    # first (a write to ``out`` could alias ``d`` as far as the compiler knows)
    n0, n1, n2, n3, n4 = d[0], d[1], d[2], d[3], d[4]
    m0, m1, m2, m3, m4 = d[5], d[6], d[7], d[8], d[9]
    b0, b1, b2, b3, b4 = d[10], d[11], d[12], d[13], d[14]
    s0, s1, s2, s3 = d[15], d[16], d[17], d[18]
    v = value[0]
    o = 0
    for i0 in range(n0):
        j0 = i0 - b0
        for i1 in range(n1):
            j1 = i1 - b1
            for i2 in range(n2):
                j2 = i2 - b2
                for i3 in range(n3):
                    j3 = i3 - b3
                    # rows as views indexed from 0: loops the compiler can vectorise
                    row = out[o:o + n4]
                    if 0 <= j0 < m0 and 0 <= j1 < m1 and 0 <= j2 < m2 and 0 <= j3 < m3:
                        base = j0 * s0 + j1 * s1 + j2 * s2 + j3 * s3
                        src = x[base:base + m4]
                        for i4 in range(b4):
                            row[i4] = v
                        middle = row[b4:b4 + m4]
                        for i4 in range(m4):
                            middle[i4] = src[i4]
                        for i4 in range(b4 + m4, n4):
                            row[i4] = v
                    else:
                        for i4 in range(n4):
                            row[i4] = v
                    o += n4


def bind_pad(x: np.ndarray, value: np.ndarray, out: np.ndarray,
             paddings: Sequence[tuple[int, int]]) -> Callable[[], None] | None:
    """The compiled pad over these views (``value``: one element of the output's dtype, read
    at every invoke); None (numpy runs) for large outputs and shapes that do not match the
    paddings."""
    rank = x.ndim
    if out.size > MAX_ELEMENTS or rank == 0 or rank > RANK or len(paddings) != rank or \
            out.ndim != rank or value.size != 1 or value.dtype != out.dtype or \
            x.dtype != out.dtype or not all(a.flags.c_contiguous for a in (x, out, value)) or \
            np.may_share_memory(x, out):
        return None
    if any(b < 0 or a < 0 or n + b + a != m
           for (b, a), n, m in zip(paddings, x.shape, out.shape)):
        return None
    lead = [1] * (RANK - rank)
    zeros = [0] * (RANK - rank)
    strides = [int(np.prod(x.shape[k + 1:], dtype=np.int64)) for k in range(rank)]
    dims = np.array(lead + list(out.shape) + lead + list(x.shape) + zeros
                    + [b for b, _ in paddings] + zeros + strides, dtype=np.int64)
    return native.native_step(pad, x.reshape(-1), value.reshape(-1), out.reshape(-1), dims)


__all__ = ["bind_pad", "pad"]
