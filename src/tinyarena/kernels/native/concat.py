"""Compiled CONCATENATION along an inner axis: every outer row takes each input's slab in turn.

The numpy bind copies such a concatenation with one strided 2-D copy per input (8 us for the
three 16x16 inputs of the mobilenet family's head); this loop moves the same bytes behind one
dispatch, as the widest unsigned words that divide every slab. The inputs go in as a tuple of
word views (numba's homogeneous tuple), their slab sizes in one array.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from tinyarena.kernels import native


@native.jit
def concat_rows(parts: Any, sizes: Any, out: Any, outer: int) -> None:  # pragma: no cover
    o = 0
    for r in range(outer):
        for j in range(len(parts)):
            size = sizes[j]
            src = parts[j]
            s = r * size
            for k in range(size):
                out[np.uint64(o + k)] = src[np.uint64(s + k)]
            o += size


def bind_concat_rows(out: np.ndarray, parts: Sequence[np.ndarray], outer: int,
                     sizes: Sequence[int]) -> Callable[[], None] | None:
    """``outer`` rows, each the inputs' slabs of ``sizes`` bytes in turn, or None (numpy) when
    the arrays do not hold exactly that, or an input shares the output's memory."""
    if not parts or len(parts) != len(sizes) or out.nbytes != outer * sum(sizes) or \
            not out.flags.c_contiguous or outer <= 0:
        return None
    common = 0
    for size in sizes:
        common = math.gcd(common, int(size))
    unit = next((u for u in (8, 4, 2, 1) if common and common % u == 0), 1)
    word = np.dtype(f"u{unit}")
    views = []
    for p, size in zip(parts, sizes):
        if p.nbytes != outer * size or not p.flags.c_contiguous or np.shares_memory(p, out):
            return None
        views.append(p.reshape(-1).view(np.uint8).view(word))
    return native.native_step(concat_rows, tuple(views),
                              np.array([s // unit for s in sizes], dtype=np.int64),
                              out.reshape(-1).view(np.uint8).view(word), int(outer))


__all__ = ["bind_concat_rows", "concat_rows"]
