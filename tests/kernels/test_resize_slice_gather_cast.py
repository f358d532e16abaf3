"""RESIZE_NEAREST_NEIGHBOR, SLICE, GATHER and CAST against the live wheel."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from op_sweep import check_op, one_op, random_array

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16"])
@pytest.mark.parametrize("align,half", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("in_hw,out_hw", [((3, 4), (6, 8)), ((5, 7), (3, 2)), ((4, 4), (7, 5)),
                                          ((1, 3), (1, 9)), ((6, 6), (6, 6))])
def test_resize_nearest_neighbor(dtype: str, align: bool, half: bool,
                                 in_hw: tuple[int, int], out_hw: tuple[int, int]) -> None:
    shape = (2, *in_hw, 3)
    model, _ = one_op("RESIZE_NEAREST_NEIGHBOR",
                      [("x", (shape, dtype)), ("size", np.array(out_hw, np.int32))],
                      [((2, *out_hw, 3), dtype)], align_corners=align, half_pixel_centers=half)
    check_op(model, [random_array(np.random.default_rng(3), shape, dtype)])


SLICES = [((5,), (1,), (3,)), ((4, 6), (1, 2), (2, -1)), ((2, 3, 4), (0, 1, 1), (-1, 2, 3)),
          ((2, 3, 4, 5), (1, 0, 2, 1), (1, 3, 1, 4)), ((2, 2, 3, 4, 2), (0, 1, 0, 1, 0),
                                                      (2, 1, 3, 2, -1))]


@pytest.mark.parametrize("dtype", ["float32", "int32", "int8", "int16", "bool"])
@pytest.mark.parametrize("index_type", ["int32", "int64"])
@pytest.mark.parametrize("shape,begin,size", SLICES)
def test_slice(dtype: str, index_type: str, shape: tuple[int, ...], begin: tuple[int, ...],
               size: tuple[int, ...]) -> None:
    out = tuple(d - b if s == -1 else s for d, b, s in zip(shape, begin, size))
    model, _ = one_op("SLICE", [("x", (shape, dtype)), ("begin", np.array(begin, index_type)),
                                ("size", np.array(size, index_type))], [(out, dtype)])
    check_op(model, [random_array(np.random.default_rng(5), shape, dtype)])


GATHERS = [((5,), (3,), 0, 0), ((4, 3), (2, 2), 0, 0), ((4, 3), (5,), 1, 0), ((2, 5, 3), (4,), -2, 0),
           ((2, 5, 3), (2, 3), 1, 1), ((3, 4, 2), (3, 2, 2), 2, -2), ((2, 3), (), 1, 0)]


@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("shape,coords_shape,axis,batch_dims", GATHERS)
def test_gather(dtype: str, shape: tuple[int, ...], coords_shape: tuple[int, ...], axis: int,
                batch_dims: int) -> None:
    rng = np.random.default_rng(7)
    pos_axis = axis % len(shape)
    coords = rng.integers(0, shape[pos_axis], size=coords_shape).astype(np.int32)
    bd = batch_dims % len(coords_shape) if batch_dims < 0 else batch_dims
    out = shape[:pos_axis] + coords_shape[bd:] + shape[pos_axis + 1:]
    model, _ = one_op("GATHER", [("x", (shape, dtype)), ("pos", coords)], [(out, dtype)],
                      axis=axis, batch_dims=batch_dims)
    check_op(model, [random_array(rng, shape, dtype)])


IN_TYPES = ["int8", "int16", "int32", "uint32", "float32", "bool"]
OUT_TYPES = ["int8", "int16", "int32", "uint32", "float32", "bool"]


@pytest.mark.parametrize("src,dst", list(itertools.product(IN_TYPES, OUT_TYPES)))
def test_cast(src: str, dst: str) -> None:
    rng = np.random.default_rng(11)
    if src == "float32":  # in range, halves, negatives, plus the wheel's out-of-range answers
        data = np.concatenate([rng.standard_normal(40) * 300, [0.5, -0.5, 1.5, -2.5, 127.9,
                               -128.9, 3e9, -3e9, 1e20, np.inf, -np.inf, np.nan, -0.0]])
        data = data.astype(np.float32)
    elif src == "bool":
        data = rng.integers(0, 2, size=16).astype(bool)
    else:
        info = np.iinfo(np.dtype(src))
        data = np.concatenate([rng.integers(info.min, info.max, size=40, endpoint=True),
                               [info.min, info.max, 0]]).astype(src)
    model, _ = one_op("CAST", [("x", (data.shape, src))], [(data.shape, dst)],
                      in_data_type=src.upper(), out_data_type=dst.upper())
    check_op(model, [data])
