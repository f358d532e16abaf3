"""ROUND: TFLM's round.cc (reference_ops::Round, RoundToNearest), float32 only.

RoundToNearest is floor(x), plus one unless the fraction is below one half or exactly one half
with an even floor (the parity from ``static_cast<int>(floor)``). That is half-to-even, but not
np.rint: the "+ 1.0f" turns -0.4 and -0.5 into +0.0 where rint gives -0.0, so the formula is
ported as written. For |x| >= 2**31 the cast overflows (x86-64 gives INT32_MIN, even), but such
floats are integers, so their fraction is 0 and the floor is returned either way; NaN and inf
fail every comparison and come back as floor + 1, i.e. unchanged.

Allocation: RoundPrepare takes the input and output as temp tensors; no OpData, no options.
"""

from __future__ import annotations

import numpy as np

from tinyarena.kernels._float_unary import float_registration


def round_to_nearest(x: np.ndarray) -> np.ndarray:
    """RoundToNearest on float32 values (float32 arithmetic, as in C)."""
    floor_val = np.floor(x)
    diff = x - floor_val
    # static_cast<int>(floor) parity; out-of-range values are integers (diff == 0) anyway.
    parity_even = np.remainder(floor_val.astype(np.float64), 2.0) == 0.0
    keep = (diff < np.float32(0.5)) | ((diff == np.float32(0.5)) & parity_even)
    return np.where(keep, floor_val, floor_val + np.float32(1.0)).astype(np.float32)


REGISTRATION = float_registration("ROUND", round_to_nearest, has_prepare=True)
