"""int8 SOFTMAX's fast paths at their boundaries, against the live wheel and the reference form.

Two paths skip the vectorised per-row reciprocal: rows of two values read a prepare-time table
of every output by difference (any row count; chunked above ``SMALL_ROWS`` rows), and up to
``SMALL_ROWS`` rows of any other depth take each row's GetReciprocal in Python integers.
"""

from __future__ import annotations

import numpy as np
import pytest

from tinyarena.kernels import _softmax_math as sm
from tinyarena.kernels._fixedpoint import get_reciprocal
from tinyarena.model.types import TensorType
from unary_cases import compare, random_input, single_op_model

OUT_Q = {"int8": (1 / 256, -128), "int16": (1 / 65536, -32768)}
# (input scale, beta): typical, large (diff_min cuts off most differences) and small scales.
SCALES = ((0.1, 1.0), (1.0, 1.0), (0.004, 2.0), (0.05, 0.3))


def _every_pair_difference() -> np.ndarray:
    """512 rows of two int8 values whose differences cover -255..255."""
    a = np.arange(-128, 128, dtype=np.int8)
    return np.concatenate([np.stack([a, np.full_like(a, 127)], axis=1),
                           np.stack([a, np.full_like(a, -128)], axis=1)])


@pytest.mark.oracle
@pytest.mark.parametrize("out_dtype", ["int8", "int16"])
def test_pair_table_matches_tflm(out_dtype: str) -> None:
    rng = np.random.default_rng(21)
    shapes = [(2,), (sm.SMALL_ROWS, 2), (sm.SMALL_ROWS + 1, 2), (4, 5, 2)]
    for scale, beta in SCALES:
        zero_point = int(rng.integers(-128, 128))
        for shape in shapes:
            model = single_op_model("SOFTMAX", shape, "int8", (scale, zero_point), shape,
                                    out_dtype, OUT_Q[out_dtype], beta=beta)
            compare(model, [random_input(rng, shape, "int8")])
        every = _every_pair_difference()  # 1024 elements: more than one chunk
        model = single_op_model("SOFTMAX", every.shape, "int8", (scale, zero_point), every.shape,
                                out_dtype, OUT_Q[out_dtype], beta=beta)
        compare(model, [every])


@pytest.mark.oracle
@pytest.mark.parametrize("out_dtype", ["int8", "int16"])
def test_small_rows_match_tflm(out_dtype: str) -> None:
    rng = np.random.default_rng(22)
    for scale, beta in SCALES:
        for rows in (1, 3, sm.SMALL_ROWS, sm.SMALL_ROWS + 1):
            depth = int(rng.integers(3, 40))
            shape = (rows, depth) if rows > 1 else (depth,)
            model = single_op_model("SOFTMAX", shape, "int8", (scale, int(rng.integers(-20, 20))),
                                    shape, out_dtype, OUT_Q[out_dtype], beta=beta)
            for _ in range(2):
                compare(model, [random_input(rng, shape, "int8")])
        shape = (1, 1)
        model = single_op_model("SOFTMAX", shape, "int8", (scale, 0), shape, out_dtype,
                                OUT_Q[out_dtype], beta=beta)
        compare(model, [random_input(rng, shape, "int8")])


def _data(scale: float, beta: float, out_bits: int) -> sm.SoftmaxOpData:
    multiplier, shift = sm._preprocess_softmax_scaling(beta, scale)
    radius = sm.calculate_input_radius(sm._SCALED_DIFF_INTEGER_BITS, shift)
    exp, contrib, valid = sm._int8_tables(multiplier, shift, -radius)
    out_type = TensorType.INT8 if out_bits == 8 else TensorType.INT16
    return sm.SoftmaxOpData(TensorType.INT8, out_type, beta, multiplier, shift, -radius,
                            exp, contrib, valid)


@pytest.mark.parametrize("out_bits", [8, 16])
def test_pair_table_matches_reference(out_bits: int) -> None:
    """Every difference, both orders, against the element-wise reference."""
    rows = _every_pair_difference()
    for scale, beta in SCALES:
        data = _data(scale, beta, out_bits)
        table = sm._int8_pair_table(data)
        expected = sm._softmax_int8_reference(rows, data, out_bits)
        assert np.array_equal(table[sm._pair_index(rows)], expected)


@pytest.mark.parametrize("out_bits", [8, 16])
def test_small_path_matches_reference(out_bits: int) -> None:
    rng = np.random.default_rng(23)
    for scale, beta in SCALES:
        data = _data(scale, beta, out_bits)
        assert data.exp_table is not None and data.contrib_table is not None
        for rows, depth in ((1, 1), (1, 7), (sm.SMALL_ROWS, 256), (5, 3)):
            x = rng.integers(-128, 128, size=(rows, depth)).astype(np.int8)
            got = sm._softmax_int8_small(x, data.exp_table, data.contrib_table, out_bits)
            assert np.array_equal(got, sm._softmax_int8_reference(x, data, out_bits))


def test_scalar_reciprocal_matches_vectorised() -> None:
    """Sums of exps lie in [2**19, 2**31) (wrapped beyond); edges, powers of two, random."""
    rng = np.random.default_rng(24)
    powers = np.array([1 << k for k in range(19, 31)], dtype=np.int64)
    x = np.concatenate([powers - 1, powers, powers + 1, [(1 << 31) - 1, -(1 << 31), -1, 1],
                        rng.integers(1 << 19, 1 << 31, size=3000),
                        rng.integers(-(1 << 31), 0, size=200)])
    scale, bits = get_reciprocal(x, 12)
    got = [sm._reciprocal_scalar(int(v), 12) for v in x]
    assert [g[0] for g in got] == scale.tolist()
    assert [g[1] for g in got] == bits.tolist()
