"""REDUCE_MAX, REDUCE_MIN and REDUCE_ALL against the live wheel: axes (negative, repeated,
several), keep_dims, NaN/inf/signed zeros, outputs and arena (two scratch requests)."""

from __future__ import annotations

import numpy as np
import pytest

from op_sweep import check_op, one_op, random_array

pytestmark = pytest.mark.oracle

CASES = [((2, 5, 3), (1,)), ((2, 5, 3), (-1,)), ((2, 5, 3), (0, 2)), ((4, 3), (1, -1)),
         ((1, 4, 4, 3), (1, 2)), ((6,), (0,)), ((2, 3, 4), (0, 1, 2))]


def _out_shape(shape: tuple[int, ...], axes: tuple[int, ...], keep: bool) -> tuple[int, ...]:
    resolved = {a % len(shape) for a in axes}
    if keep:
        return tuple(1 if i in resolved else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in resolved)


@pytest.mark.parametrize("op", ["REDUCE_MAX", "REDUCE_MIN"])
@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("shape,axes", CASES)
def test_min_max(op: str, dtype: str, keep: bool, shape: tuple[int, ...],
                 axes: tuple[int, ...]) -> None:
    quant = (0.05, -3) if dtype == "int8" else None
    model, _ = one_op(op, [("x", (shape, dtype)), ("axis", np.array(axes, np.int32))],
                      [(_out_shape(shape, axes, keep), dtype)], quant=quant, keep_dims=keep)
    check_op(model, [random_array(np.random.default_rng(len(shape)), shape, dtype)])


@pytest.mark.parametrize("op", ["REDUCE_MAX", "REDUCE_MIN"])
def test_min_max_special_floats(op: str) -> None:
    rows = np.array([[np.nan, 1.0, -2.0, np.nan], [np.nan] * 4, [-0.0, 0.0, -1.0, np.nan],
                     [0.0, -0.0, 1.0, -1.0], [np.inf, -np.inf, 0.0, 3e38],
                     [-np.inf, -np.inf, -np.inf, -np.inf]], np.float32)
    model, _ = one_op(op, [("x", (rows.shape, "float32")), ("axis", np.array([1], np.int32))],
                      [((rows.shape[0],), "float32")])
    check_op(model, [rows])


@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("shape,axes", CASES[:5])
def test_all(keep: bool, shape: tuple[int, ...], axes: tuple[int, ...]) -> None:
    model, _ = one_op("REDUCE_ALL", [("x", (shape, "bool")), ("axis", np.array(axes, np.int32))],
                      [(_out_shape(shape, axes, keep), "bool")], keep_dims=keep)
    data = np.random.default_rng(1).random(shape) < 0.9
    check_op(model, [data])
