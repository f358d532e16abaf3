"""ARG_MAX/ARG_MIN, BATCH_TO_SPACE_ND/SPACE_TO_BATCH_ND, BROADCAST_ARGS/BROADCAST_TO,
DEPTH_TO_SPACE/SPACE_TO_DEPTH, FILL and ZEROS_LIKE against the live wheel."""

from __future__ import annotations

import numpy as np
import pytest

from op_sweep import check_op, one_op, random_array

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("op", ["ARG_MAX", "ARG_MIN"])
@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("shape,axis", [((7,), 0), ((3, 5), 1), ((3, 5), -2), ((2, 4, 3), 1),
                                        ((2, 3, 4, 5), -1)])
def test_arg_min_max(op: str, dtype: str, shape: tuple[int, ...], axis: int) -> None:
    out = tuple(d for i, d in enumerate(shape) if i != axis % len(shape))
    model, _ = one_op(op, [("x", (shape, dtype)), ("a", np.array([axis], np.int32))],
                      [(out, "int32")], quant=(0.1, 0) if dtype == "int8" else None,
                      output_type="INT32")
    data = random_array(np.random.default_rng(8), shape, dtype)
    if dtype == "int8":  # many ties
        data = (data // 64).astype(np.int8)
    check_op(model, [data])


@pytest.mark.parametrize("op", ["ARG_MAX", "ARG_MIN"])
def test_arg_min_max_special_floats(op: str) -> None:
    rows = np.array([[np.nan, 1.0, 5.0], [1.0, np.nan, 5.0], [-0.0, 0.0, -1.0],
                     [0.0, -0.0, 1.0], [np.inf, -np.inf, np.nan], [2.0, 2.0, 2.0]], np.float32)
    model, _ = one_op(op, [("x", (rows.shape, "float32")), ("a", np.array([1], np.int32))],
                      [((rows.shape[0],), "int32")], output_type="INT32")
    check_op(model, [rows])


@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("shape,block,edges", [((8, 2, 3, 2), (2, 2), ((0, 0), (0, 0))),
                                               ((4, 3, 2, 1), (2, 2), ((1, 0), (0, 1))),
                                               ((6, 2, 2, 3), (3, 2), ((2, 1), (1, 1))),
                                               ((4, 3, 2), (2,), ((1, 1),)),
                                               ((8, 2, 3, 1), (2, 2), ((3, 0), (1, 2)))])
def test_batch_to_space_nd(dtype: str, shape: tuple[int, ...], block: tuple[int, ...],
                           edges: tuple[tuple[int, int], ...]) -> None:
    out = [shape[0] // int(np.prod(block))]
    for i, b in enumerate(block):
        out.append(shape[1 + i] * b - sum(edges[i]))
    out += list(shape[1 + len(block):])
    crops = np.array(edges, np.int32)
    model, _ = one_op("BATCH_TO_SPACE_ND", [("x", (shape, dtype)), ("b", np.array(block, np.int32)),
                                            ("c", crops)], [(tuple(out), dtype)])
    check_op(model, [random_array(np.random.default_rng(9), shape, dtype)])


@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("shape,block,edges", [((1, 4, 4, 2), (2, 2), ((0, 0), (0, 0))),
                                               ((2, 3, 2, 1), (2, 2), ((1, 0), (0, 2))),
                                               ((1, 4, 3, 3), (3, 2), ((1, 1), (0, 1))),
                                               ((2, 3, 2), (2,), ((0, 1),)),
                                               ((1, 2, 3, 1), (2, 3), ((3, 1), (2, 4)))])
def test_space_to_batch_nd(dtype: str, shape: tuple[int, ...], block: tuple[int, ...],
                           edges: tuple[tuple[int, int], ...]) -> None:
    out = [shape[0] * int(np.prod(block))]
    for i, b in enumerate(block):
        out.append((shape[1 + i] + sum(edges[i])) // b)
    out += list(shape[1 + len(block):])
    model, _ = one_op("SPACE_TO_BATCH_ND", [("x", (shape, dtype)),
                                            ("b", np.array(block, np.int32)),
                                            ("p", np.array(edges, np.int32))],
                      [(tuple(out), dtype)], quant=(0.1, 3) if dtype == "int8" else None)
    check_op(model, [random_array(np.random.default_rng(10), shape, dtype)])


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("s1,s2", [((2, 1, 3), (4, 1)), ((5,), (1, 1, 5)), ((1,), (3, 2)),
                                   ((2, 3), (2, 3))])
def test_broadcast_args(dtype: str, s1: tuple[int, ...], s2: tuple[int, ...]) -> None:
    n = max(len(s1), len(s2))
    model, _ = one_op("BROADCAST_ARGS", [("a", ((len(s1),), dtype)), ("b", ((len(s2),), dtype))],
                      [((n,), dtype)])
    want = check_op(model, [np.array(s1, dtype), np.array(s2, dtype)])
    assert tuple(want[0]) == np.broadcast_shapes(s1, s2)


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16", "int32", "int64", "bool", "uint8",
                                   "float16"])
@pytest.mark.parametrize("shape,target", [((3,), (2, 3)), ((2, 1), (2, 4)), ((1, 3, 1), (2, 2, 3, 4)),
                                          ((1,), (2, 1, 2, 1, 3))])
def test_broadcast_to(dtype: str, shape: tuple[int, ...], target: tuple[int, ...]) -> None:
    shape_type = np.int64 if dtype in ("int16", "bool") else np.int32  # both index types
    model, _ = one_op("BROADCAST_TO", [("x", (shape, dtype)), ("s", np.array(target, shape_type))],
                      [(target, dtype)])
    rng = np.random.default_rng(12)
    data = (rng.standard_normal(shape).astype(np.float16) if dtype == "float16"
            else random_array(rng, shape, dtype))
    check_op(model, [data])


@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("shape,size", [((1, 2, 3, 8), 2), ((2, 1, 2, 18), 3), ((1, 2, 2, 4), 1)])
def test_depth_to_space(dtype: str, shape: tuple[int, ...], size: int) -> None:
    b, h, w, c = shape
    out = (b, h * size, w * size, c // size // size)
    model, _ = one_op("DEPTH_TO_SPACE", [("x", (shape, dtype))], [(out, dtype)], block_size=size)
    check_op(model, [random_array(np.random.default_rng(13), shape, dtype)])


@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("shape,size", [((1, 4, 6, 2), 2), ((2, 3, 6, 1), 3), ((1, 2, 2, 4), 1)])
def test_space_to_depth(dtype: str, shape: tuple[int, ...], size: int) -> None:
    b, h, w, c = shape
    out = (b, h // size, w // size, c * size * size)
    model, _ = one_op("SPACE_TO_DEPTH", [("x", (shape, dtype))], [(out, dtype)], block_size=size)
    check_op(model, [random_array(np.random.default_rng(14), shape, dtype)])


@pytest.mark.parametrize("dtype", ["float32", "int32", "int8"])
@pytest.mark.parametrize("dims_type", ["int32", "int64"])
@pytest.mark.parametrize("shape", [(3,), (2, 3, 4), (1, 1, 2, 2, 1)])
def test_fill(dtype: str, dims_type: str, shape: tuple[int, ...]) -> None:
    model, _ = one_op("FILL", [("d", np.array(shape, dims_type)), ("v", ((), dtype))],
                      [(shape, dtype)])
    check_op(model, [random_array(np.random.default_rng(15), (), dtype)])


@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "float32"])
def test_zeros_like(dtype: str) -> None:
    model, _ = one_op("ZEROS_LIKE", [("x", ((2, 3, 4), dtype))], [((2, 3, 4), dtype)])
    check_op(model, [random_array(np.random.default_rng(16), (2, 3, 4), dtype)])
