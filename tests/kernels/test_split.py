"""SPLIT and SPLIT_V against the live wheel: axes (negative too), dtypes, uneven splits,
outputs and arena."""

from __future__ import annotations

import numpy as np
import pytest

from op_sweep import check_op, one_op, random_array

pytestmark = pytest.mark.oracle

DTYPES = ["float32", "int8", "int16", "int32"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis,num", [((6,), 0, 3), ((2, 6, 3), 1, 2), ((2, 6, 4), -1, 4),
                                            ((4, 3, 2, 2), -4, 2), ((3, 4), 0, 1)])
def test_split(dtype: str, shape: tuple[int, ...], axis: int, num: int) -> None:
    out_shape = list(shape)
    out_shape[axis] //= num
    model, _ = one_op("SPLIT", [("axis", np.array([axis], np.int32)), ("x", (shape, dtype))],
                      [(tuple(out_shape), dtype)] * num, num_splits=num)
    check_op(model, [random_array(np.random.default_rng(num), shape, dtype)])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis,sizes", [((7,), 0, (2, 5)), ((2, 9, 3), 1, (1, 3, 5)),
                                              ((2, 3, 6), -1, (4, 1, 1)), ((5, 2), -2, (5,))])
def test_split_v(dtype: str, shape: tuple[int, ...], axis: int, sizes: tuple[int, ...]) -> None:
    outs = []
    for s in sizes:
        o = list(shape)
        o[axis] = s
        outs.append((tuple(o), dtype))
    model, _ = one_op("SPLIT_V", [("x", (shape, dtype)), ("sizes", np.array(sizes, np.int32)),
                                  ("axis", np.array(axis, np.int32))],
                      outs, num_splits=len(sizes))
    check_op(model, [random_array(np.random.default_rng(len(sizes)), shape, dtype)])
