"""int8 SOFTMAX's per-difference tables give the same bits as the element-wise reference.

The tables are built from the reference arithmetic itself, so here both forms run on rows
covering every difference 0..255 and on random rows, over several input scales and betas
(test_softmax.py holds the whole kernel against the wheel).
"""

from __future__ import annotations

import numpy as np
import pytest

from tinyarena.kernels import _softmax_math as sm
from tinyarena.model.types import TensorType


@pytest.mark.parametrize("out_bits", [8, 16])
def test_tables_match_reference(out_bits: int) -> None:
    rng = np.random.default_rng(8)
    for scale, beta in ((1 / 16, 1.0), (0.1, 0.5), (0.02, 2.0), (1.0, 1.0)):
        multiplier, shift = sm._preprocess_softmax_scaling(beta, scale)
        radius = sm.calculate_input_radius(sm._SCALED_DIFF_INTEGER_BITS, shift)
        exp, contrib, valid = sm._int8_tables(multiplier, shift, -radius)
        data = sm.SoftmaxOpData(TensorType.INT8, TensorType.INT8 if out_bits == 8 else
                                TensorType.INT16, beta, multiplier, shift, -radius,
                                exp, contrib, valid)
        every = np.arange(127, -129, -1, dtype=np.int8).reshape(1, 256)
        rows = np.concatenate([np.repeat(every, 2, axis=0),
                               rng.integers(-128, 128, size=(50, 256)).astype(np.int8)])
        for r in (rows, rows[:, :10], rows[:, :1]):
            assert np.array_equal(sm._softmax_int8(r, data, out_bits),
                                  sm._softmax_int8_reference(r, data, out_bits))
