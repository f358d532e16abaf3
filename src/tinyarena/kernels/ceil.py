"""CEIL: TFLM's ceil.cc (reference_ops::Ceil = std::ceil), float32 only.

np.ceil is the same IEEE operation on numbers; a NaN keeps its exact bits, as in
glibc. Allocation: CeilPrepare takes the input and the output as
temp tensors (in that order); no OpData and no builtin options.
"""

from __future__ import annotations

import numpy as np

from tinyarena.kernels._float_unary import float_registration


def ceilf(x: np.ndarray) -> np.ndarray:
    """glibc's ceilf: a NaN comes back as it went in (a signalling NaN is not quieted, as
    the SSE rounding instruction behind np.ceil would do)."""
    return np.where(np.isnan(x), x, np.ceil(x))


REGISTRATION = float_registration("CEIL", ceilf, has_prepare=True)
