"""PACK, UNPACK and SHAPE against the live wheel: axes (negative too), dtypes, ranks."""

from __future__ import annotations

import numpy as np
import pytest

from op_sweep import check_op, one_op, random_array

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("shape,axis,count", [((3,), 0, 2), ((2, 3), 1, 3), ((2, 3), -1, 4),
                                              ((2, 1, 3), 0, 1), ((), 0, 3)])
def test_pack(dtype: str, shape: tuple[int, ...], axis: int, count: int) -> None:
    out = list(shape)
    out.insert(axis if axis >= 0 else len(shape) + 1 + axis, count)
    model, _ = one_op("PACK", [(f"x{i}", (shape, dtype)) for i in range(count)],
                      [(tuple(out), dtype)], values_count=count, axis=axis)
    rng = np.random.default_rng(count)
    check_op(model, [random_array(rng, shape, dtype) for _ in range(count)])


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16", "int32"])
@pytest.mark.parametrize("shape,axis", [((3,), 0), ((2, 3), 1), ((2, 3, 4), -1), ((4, 2, 3), -3)])
def test_unpack(dtype: str, shape: tuple[int, ...], axis: int) -> None:
    num = shape[axis]
    out = list(shape)
    del out[axis]
    model, _ = one_op("UNPACK", [("x", (shape, dtype))], [(tuple(out), dtype)] * num,
                      num=num, axis=axis)
    check_op(model, [random_array(np.random.default_rng(num), shape, dtype)])


@pytest.mark.parametrize("dtype", ["float32", "int8", "bool"])
@pytest.mark.parametrize("shape", [(5,), (1, 4, 4, 3), (2, 3, 1, 2, 7), ()])
def test_shape(dtype: str, shape: tuple[int, ...]) -> None:
    model, _ = one_op("SHAPE", [("x", (shape, dtype))], [((len(shape),), "int32")],
                      out_type="INT32")
    want = check_op(model, [random_array(np.random.default_rng(0), shape, dtype)])
    assert want[0].tolist() == list(shape)  # the wheel agrees with the plain fact too
