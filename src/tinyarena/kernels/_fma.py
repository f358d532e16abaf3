"""float32 fused multiply-add, as a Cortex-M FPU's VFMA.F32 computes it: ``a * b + c`` with one
rounding.

GCC contracts ``total += a * b`` in TFLM's float kernels into VFMA when it compiles for a
hard-float FPU (targets with ``float_fma``), so those builds' float sums differ from the
x86-64 wheel's in the last bits. numpy has no fma; this computes it exactly: the product of
two float32 values is exact in float64, the sum with ``c`` is rounded to float64 "to odd"
(rounded to nearest, then, when inexact, moved to the neighbour with an odd last bit — the
error term comes from Knuth's TwoSum), and a float64 rounded to odd rounds to float32 exactly
as the unrounded sum would (53 >= 24 + 2 bits).
"""

from __future__ import annotations

import numpy as np


def fma32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Elementwise ``fmaf(a, b, c)`` on float32 arrays (broadcasting), as float32."""
    p = np.multiply(a, b, dtype=np.float64)
    c64 = np.asarray(c, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        s = p + c64
        bb = s - p
        err = (p - (s - bb)) + (c64 - bb)
        inexact = (err != 0) & np.isfinite(s) & ((s.view(np.int64) & 1) == 0)
        if inexact.any():
            s = np.where(inexact, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
        return s.astype(np.float32)


def fused_dot_accumulate(x: np.ndarray, wmat: np.ndarray, acc: np.ndarray) -> None:
    """reference_ops::FullyConnected's ``total += input[d] * weights[d]`` over d in order, each
    step one fused multiply-add: ``x`` (batches, depth), ``wmat`` (depth, outputs), ``acc``
    (batches, outputs) float32, starting from its contents."""
    for d in range(x.shape[1]):
        acc[...] = fma32(x[:, d:d + 1], wmat[d], acc)


__all__ = ["fma32", "fused_dot_accumulate"]
