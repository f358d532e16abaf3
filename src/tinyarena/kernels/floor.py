"""FLOOR: TFLM's floor.cc (reference_ops::Floor = std::floor), float32 only.

np.floor is the same IEEE operation on numbers (signed zeros and infinities kept); a NaN
keeps its exact bits, as in glibc. TFLM registers only an Eval: no OpData, no temp tensors,
no builtin options; the type is checked when it runs.
"""

from __future__ import annotations

import numpy as np

from tinyarena.kernels._float_unary import float_registration


def floorf(x: np.ndarray) -> np.ndarray:
    """glibc's floorf: a NaN comes back as it went in (a signalling NaN is not quieted, as
    the SSE rounding instruction behind np.floor would do)."""
    return np.where(np.isnan(x), x, np.floor(x))


REGISTRATION = float_registration("FLOOR", floorf, has_prepare=False)
