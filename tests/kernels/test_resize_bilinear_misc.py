"""RESIZE_BILINEAR, REVERSE_V2, EMBEDDING_LOOKUP and DYNAMIC_UPDATE_SLICE against the wheel."""

from __future__ import annotations

import numpy as np
import pytest

from op_sweep import check_op, one_op, random_array

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("align,half", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("in_hw,out_hw", [((3, 4), (6, 8)), ((5, 7), (3, 2)), ((4, 4), (7, 5)),
                                          ((1, 3), (2, 9)), ((2, 2), (1, 1))])
def test_resize_bilinear(dtype: str, align: bool, half: bool, in_hw: tuple[int, int],
                         out_hw: tuple[int, int]) -> None:
    shape = (2, *in_hw, 3)
    model, _ = one_op("RESIZE_BILINEAR", [("x", (shape, dtype)),
                                          ("size", np.array(out_hw, np.int32))],
                      [((2, *out_hw, 3), dtype)], quant=(0.1, 0) if dtype == "int8" else None,
                      align_corners=align, half_pixel_centers=half)
    data = random_array(np.random.default_rng(17), shape, dtype)
    if dtype == "float32":
        data.reshape(-1)[:3] = [-0.0, np.inf, np.nan]
    check_op(model, [data])


@pytest.mark.parametrize("dtype", ["int32", "float32", "uint8", "int8", "int16", "int64", "bool"])
@pytest.mark.parametrize("shape,axes", [((5,), (0,)), ((3, 4), (1,)), ((3, 4), (-2,)),
                                        ((2, 3, 4), (1, 2)), ((2, 3, 4, 2), (0, 1)),
                                        ((2, 3, 4), (-1, 0, 1))])
def test_reverse_v2(dtype: str, shape: tuple[int, ...], axes: tuple[int, ...]) -> None:
    model, _ = one_op("REVERSE_V2", [("x", (shape, dtype)), ("a", np.array(axes, np.int32))],
                      [(shape, dtype)])
    check_op(model, [random_array(np.random.default_rng(18), shape, dtype)])


@pytest.mark.parametrize("table_type,out_type", [("float32", "float32"), ("int8", "int8"),
                                                 ("int8", "float32")])
@pytest.mark.parametrize("table_shape", [(5, 3), (4, 2, 3)])
def test_embedding_lookup(table_type: str, out_type: str, table_shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(19)
    lookup = np.array([3, 0, 1, 3, 2], np.int32)
    table = random_array(rng, table_shape, table_type)
    b_quant = (0.25, 0) if table_type == "int8" else None
    from tinyarena.builder import ModelBuilder
    b = ModelBuilder()
    ids = b.add_input("ids", lookup.shape, "int32")
    q = {} if b_quant is None else {"scale": b_quant[0], "zero_point": b_quant[1]}
    t = b.add_constant("table", table, **q)
    oq = q if out_type == "int8" else {}
    y = b.add_tensor("y", (lookup.size, *table_shape[1:]), out_type, **oq)
    b.add_operator("EMBEDDING_LOOKUP", [ids, t], [y])
    b.mark_output(y)
    check_op(b.build(), [lookup])


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16", "int32"])
@pytest.mark.parametrize("index_type", ["int32", "int64"])
@pytest.mark.parametrize("shape,update,start", [((6,), (2,), (3,)), ((4, 5), (2, 3), (1, 4)),
                                                ((4, 5), (2, 3), (-2, 1)),
                                                ((2, 3, 4), (1, 3, 2), (1, 0, 9)),
                                                ((3, 2), (3, 2), (1, 1))])
def test_dynamic_update_slice(dtype: str, index_type: str, shape: tuple[int, ...],
                              update: tuple[int, ...], start: tuple[int, ...]) -> None:
    model, _ = one_op("DYNAMIC_UPDATE_SLICE", [("x", (shape, dtype)), ("u", (update, dtype)),
                                               ("s", np.array(start, index_type))],
                      [(shape, dtype)])
    rng = np.random.default_rng(20)
    check_op(model, [random_array(rng, shape, dtype), random_array(rng, update, dtype)])
