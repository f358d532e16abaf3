"""The new data-movement ops chained in one graph (planner lifetimes, several outputs), against
the wheel; and every one-op model of them sized on every target profile."""

from __future__ import annotations

import numpy as np
import pytest

from op_sweep import check_op
from tinyarena.arena.allocator import allocate_model
from tinyarena.arena.targets import PROFILES
from tinyarena.builder import ModelBuilder
from tinyarena.model import read_model

Q = {"scale": 0.05, "zero_point": -2}


def _graph() -> bytes:
    b = ModelBuilder()
    x = b.add_input("x", (1, 8, 8, 4), "int8", **Q)
    i32 = lambda name, v: b.add_constant(name, np.array(v, np.int32))  # noqa: E731
    a = b.add_tensor("a", (1, 8, 8, 1), "int8", **Q)
    c = b.add_tensor("c", (1, 8, 8, 3), "int8", **Q)
    b.add_operator("SPLIT_V", [x, i32("sizes", [1, 3]), i32("axis", [3])], [a, c], num_splits=2)
    big = b.add_tensor("big", (1, 16, 16, 3), "int8", **Q)
    b.add_operator("RESIZE_NEAREST_NEIGHBOR", [c, i32("hw", [16, 16])], [big],
                   half_pixel_centers=True)
    peak = b.add_tensor("peak", (1, 1, 1, 3), "int8", **Q)
    b.add_operator("REDUCE_MAX", [big, i32("r", [1, -2])], [peak], keep_dims=True)
    deep = b.add_tensor("deep", (1, 4, 4, 4), "int8", **Q)
    b.add_operator("SPACE_TO_DEPTH", [a], [deep], block_size=2)
    picked = b.add_tensor("picked", (1, 4, 4, 2), "int8", **Q)
    b.add_operator("GATHER", [deep, i32("g", [3, 0])], [picked], axis=3)
    padded = b.add_tensor("padded", (1, 6, 7, 2), "int8", **Q)
    b.add_operator("MIRROR_PAD", [picked, i32("p", [[0, 0], [1, 1], [2, 1], [0, 0]])], [padded],
                   mode="SYMMETRIC")
    rows = [b.add_tensor(f"row{i}", (1, 7, 2), "int8", **Q) for i in range(6)]
    b.add_operator("UNPACK", [padded], rows, num=6, axis=1)
    stacked = b.add_tensor("stacked", (1, 7, 2, 3), "int8", **Q)
    b.add_operator("PACK", [rows[0], rows[5], rows[2]], [stacked], values_count=3, axis=-1)
    part = b.add_tensor("part", (1, 3, 2, 2), "int8", **Q)
    b.add_operator("SLICE", [stacked, i32("b0", [0, 2, 0, 1]), i32("s0", [-1, 3, -1, 2])],
                   [part])
    shape = b.add_tensor("shape", (4,), "int32")
    b.add_operator("SHAPE", [part], [shape], out_type="INT32")
    wide = b.add_tensor("wide", (1, 3, 2, 2), "float32")
    b.add_operator("CAST", [part], [wide])
    for t in (peak, part, shape, wide):
        b.mark_output(t)
    return b.build()


@pytest.mark.oracle
def test_graph_of_new_ops_matches_the_wheel() -> None:
    data = np.random.default_rng(31).integers(-128, 128, size=(1, 8, 8, 4)).astype(np.int8)
    check_op(_graph(), [data])


def test_every_target_sizes_the_graph() -> None:
    model = read_model(_graph())
    sizes = {name: allocate_model(model, target=name) for name in PROFILES}
    assert sizes["arm32"].tail < sizes["host-x64"].tail  # 4-byte pointers, smaller structs
    assert sizes["arm32-short-enums"].tail <= sizes["arm32"].tail
    assert len({s.head for s in sizes.values()}) == 1  # the plan does not depend on the ABI


def test_every_profile_knows_the_new_structs() -> None:
    from tinyarena.kernels import MODULES, registration

    structs = {"OpDataMirrorPad", "OpDataSelect", "OpDataCumSum", "SpaceToBatchParams",
               "OpDataEmbeddingLookup", "OpDataReduce"}
    structs |= {registration(n).builtin_data for n in MODULES
                if n in _NEW and registration(n).builtin_data}
    missing = {(p.name, s) for p in PROFILES.values() for s in structs if not p.has(s)}
    assert missing == set()
    assert PROFILES["arm32"].sizeof("OpDataEmbeddingLookup") == 8  # float + 32-bit size_t
    assert PROFILES["arm32-short-enums"].sizeof("TfLiteShapeParams") == 1  # one enum


_NEW = {"ARG_MAX", "ARG_MIN", "BATCH_TO_SPACE_ND", "BROADCAST_ARGS", "BROADCAST_TO", "CAST",
        "CUMSUM", "DEPTH_TO_SPACE", "DYNAMIC_UPDATE_SLICE", "EMBEDDING_LOOKUP", "FILL", "GATHER",
        "GATHER_ND", "MIRROR_PAD", "PACK", "REDUCE_ALL", "REDUCE_MAX", "REDUCE_MIN",
        "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR", "REVERSE_V2", "SELECT_V2", "SHAPE",
        "SLICE", "SPACE_TO_BATCH_ND", "SPACE_TO_DEPTH", "SPLIT", "SPLIT_V", "UNPACK",
        "ZEROS_LIKE"}


@pytest.mark.oracle
def test_dynamic_reshape_pattern_matches_the_wheel() -> None:
    """What the converter emits for ``tf.reshape(x, [tf.shape(x)[0], -1])``: SHAPE ->
    STRIDED_SLICE (shrink to a scalar) -> PACK with a constant -> RESHAPE by that tensor."""
    b = ModelBuilder()
    x = b.add_input("x", (2, 4, 3), "float32")
    shape = b.add_tensor("shape", (3,), "int32")
    b.add_operator("SHAPE", [x], [shape], out_type="INT32")
    batch = b.add_tensor("batch", (), "int32")
    one = b.add_constant("one", np.array([1], np.int32))
    b.add_operator("STRIDED_SLICE", [shape, b.add_constant("zero", np.array([0], np.int32)),
                                     one, one], [batch], shrink_axis_mask=1)
    new_shape = b.add_tensor("new_shape", (2,), "int32")
    b.add_operator("PACK", [batch, b.add_constant("rest", np.array(-1, np.int32))], [new_shape],
                   values_count=2, axis=0)
    y = b.add_tensor("y", (2, 12), "float32")
    b.add_operator("RESHAPE", [x, new_shape], [y])
    b.mark_output(y)
    b.mark_output(new_shape)
    data = np.random.default_rng(3).standard_normal((2, 4, 3)).astype(np.float32)
    out = check_op(b.build(), [data])
    assert out[1].tolist() == [2, -1]


@pytest.mark.oracle
def test_optimizer_handles_the_new_ops() -> None:
    """optimize needs only allocation behaviour: the rewritten model runs unchanged in the
    wheel, in the head tinyarena predicted, and tinyarena runs it identically."""
    from tflm_oracle import tflm_allocations, tflm_run
    from tinyarena.interpreter import Interpreter
    from tinyarena.optimize import optimize_model

    model = _graph()
    result = optimize_model(model, time_budget_s=0.2)
    optimized = bytes(result.model)
    data = np.random.default_rng(31).integers(-128, 128, size=(1, 8, 8, 4)).astype(np.int8)
    want = tflm_run(model, [data])
    assert all(np.array_equal(a, b) for a, b in zip(want, tflm_run(optimized, [data])))
    assert tflm_allocations(optimized).head == result.after.head <= result.before.head
    ip = Interpreter(read_model(optimized))
    ip.allocate_tensors()
    ip.set_input(0, data)
    ip.invoke()
    assert all(np.array_equal(ip.get_output(i), w) for i, w in enumerate(want))


def _big_graph() -> bytes:
    """Tensors of 256 KiB and more through the new ops (float32 and int8)."""
    b = ModelBuilder()
    i32 = lambda name, v: b.add_constant(name, np.array(v, np.int32))  # noqa: E731
    x = b.add_input("x", (1, 64, 64, 16), "float32")
    a = b.add_tensor("a", (1, 64, 64, 4), "float32")
    c = b.add_tensor("c", (1, 64, 64, 12), "float32")
    b.add_operator("SPLIT_V", [x, i32("s", [4, 12]), i32("ax", [-1])], [a, c], num_splits=2)
    up = b.add_tensor("up", (1, 128, 128, 4), "float32")
    b.add_operator("RESIZE_BILINEAR", [a, i32("hw", [128, 128])], [up], half_pixel_centers=True)
    near = b.add_tensor("near", (1, 128, 128, 12), "float32")
    b.add_operator("RESIZE_NEAREST_NEIGHBOR", [c, i32("hw2", [128, 128])], [near])
    peak = b.add_tensor("peak", (1, 12), "float32")
    b.add_operator("REDUCE_MAX", [near, i32("r", [1, 2])], [peak])
    arg = b.add_tensor("arg", (1, 128, 128), "int32")
    b.add_operator("ARG_MAX", [near, i32("am", [3])], [arg], output_type="INT32")
    rev = b.add_tensor("rev", (1, 128, 128, 4), "float32")
    b.add_operator("REVERSE_V2", [up, i32("rv", [1, 2])], [rev])
    padded = b.add_tensor("padded", (1, 132, 132, 4), "float32")
    b.add_operator("MIRROR_PAD", [rev, i32("mp", [[0, 0], [2, 2], [2, 2], [0, 0]])], [padded],
                   mode="REFLECT")
    deep = b.add_tensor("deep", (1, 66, 66, 16), "float32")
    b.add_operator("SPACE_TO_DEPTH", [padded], [deep], block_size=2)
    cum = b.add_tensor("cum", (1, 66, 66, 16), "float32")
    b.add_operator("CUMSUM", [deep, i32("cx", 2)], [cum], reverse=True)
    g = b.add_tensor("g", (1, 66, 66, 8), "float32")
    b.add_operator("GATHER", [cum, i32("gi", [15, 0, 3, 3, 7, 1, 2, 9])], [g], axis=3)
    q = b.add_tensor("q", (1, 66, 66, 8), "int32")
    b.add_operator("CAST", [g], [q])
    sl = b.add_tensor("sl", (1, 64, 64, 8), "int32")
    b.add_operator("SLICE", [q, i32("b0", [0, 1, 1, 0]), i32("z0", [-1, 64, 64, -1])], [sl])
    for t in (peak, arg, sl):
        b.mark_output(t)
    return b.build()


def test_invoke_allocates_under_the_projects_bound() -> None:
    """The interpreter's no-allocation contract (tests/unit/test_no_alloc_invoke.py): one
    invoke of large tensors through the new kernels stays under the same fixed bound."""
    import tracemalloc

    from tinyarena.interpreter import Interpreter

    ip = Interpreter(read_model(_big_graph()))
    ip.allocate_tensors()
    ip.set_input(0, np.random.default_rng(0).standard_normal((1, 64, 64, 16)).astype(np.float32))
    ip.invoke()  # warm-up
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        ip.invoke()
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert peak < 128 * 1024, peak


@pytest.mark.oracle
def test_big_graph_matches_the_wheel() -> None:
    data = np.random.default_rng(0).standard_normal((1, 64, 64, 16)).astype(np.float32)
    check_op(_big_graph(), [data])


@pytest.mark.oracle
def test_minimum_arena_is_the_wheels() -> None:
    """min_arena works in the wheel and 16 bytes less does not (temp tensors included)."""
    from tflm_oracle import tflm_fits

    model = _graph()
    minimum = allocate_model(read_model(model)).min_arena
    assert tflm_fits(model, minimum)[0]
    assert not tflm_fits(model, minimum - 16)[0]
