"""Invoke-time allocation of the pooling, reduce, SVDF and element-wise kernels stays bounded.

Each case is a one-operator model with tensors far larger than the bound, run through
``tinyarena.Interpreter``: its outputs must equal the live wheel's (so the allocation-free
paths are also checked for bits at sizes where they cut the work into many blocks, windows or
taps), and tracemalloc's peak over one invoke must stay under a few KiB.
"""

from __future__ import annotations

import tracemalloc
from typing import Any, Sequence

import numpy as np
import pytest

import tinyarena
from tflm_oracle import tflm_run
from tinyarena.builder import ModelBuilder
from unary_cases import random_input, single_op_model

pytestmark = pytest.mark.oracle
BOUND = 8 * 1024  # bytes: Python frames, views and small scalars, never tensor-sized buffers


def _check(model: bytes, inputs: Sequence[np.ndarray], steps: int = 1,
           bound: int = BOUND) -> None:
    ip = tinyarena.Interpreter(model)
    ip.allocate_tensors()
    for i, x in enumerate(inputs):
        ip.set_input(x, i)
    ip.invoke()  # warm-up (first calls fill numpy's caches)
    ip.reset()
    outs: list[list[np.ndarray]] = []
    peak = 0
    for _ in range(steps):
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            ip.invoke()
            peak = max(peak, tracemalloc.get_traced_memory()[1] - before)
        finally:
            tracemalloc.stop()
        outs.append([ip.get_output(i).copy() for i in range(len(ip.get_output_details()))])
    want = tflm_run(model, list(inputs))
    for got, w in zip(outs[0], want):
        assert got.dtype == w.dtype and np.array_equal(got.view(np.uint8), w.view(np.uint8))
    assert peak < bound, peak


_POOLS = [  # (op, dtype, shape, filter, stride, padding): taps and windows loops, padded or not
    ("AVERAGE_POOL_2D", "int8", (1, 25, 5, 64), (25, 5), (1, 1), "VALID"),
    ("AVERAGE_POOL_2D", "int8", (2, 40, 30, 8), (3, 3), (2, 2), "SAME"),
    ("AVERAGE_POOL_2D", "float32", (1, 33, 31, 16), (4, 3), (3, 2), "SAME"),
    ("AVERAGE_POOL_2D", "int16", (1, 20, 20, 4), (7, 7), (5, 5), "SAME"),
    ("MAX_POOL_2D", "int8", (1, 48, 48, 12), (2, 2), (2, 2), "VALID"),
    ("MAX_POOL_2D", "float32", (2, 30, 30, 8), (3, 3), (2, 2), "SAME"),
    ("MAX_POOL_2D", "int16", (1, 9, 9, 5), (9, 9), (1, 1), "VALID"),
]


@pytest.mark.parametrize("op,dtype,shape,filt,stride,padding", _POOLS)
def test_pooling(op: str, dtype: str, shape: tuple[int, ...], filt: tuple[int, int],
                 stride: tuple[int, int], padding: str) -> None:
    from tinyarena.kernels._conv_common import compute_out_size

    oh = compute_out_size(padding, shape[1], filt[0], stride[0])
    ow = compute_out_size(padding, shape[2], filt[1], stride[1])
    q = {"int8": (0.05, 3), "int16": (0.001, 0)}.get(dtype)
    model = single_op_model(op, shape, dtype, q, (shape[0], oh, ow, shape[3]), dtype, q,
                            padding=padding, stride_w=stride[1], stride_h=stride[0],
                            filter_width=filt[1], filter_height=filt[0],
                            fused_activation_function="RELU6")
    _check(model, [random_input(np.random.default_rng(1), shape, dtype, 6.0)])


@pytest.mark.parametrize("dtype", ["int8", "float32", "int16"])
@pytest.mark.parametrize("constant_axis", [True, False])
def test_mean(dtype: str, constant_axis: bool) -> None:
    shape, axes = (1, 14, 14, 96), np.array([1, 2], np.int32)
    q = {"int8": ((0.05, -7), (0.02, 4)), "int16": ((0.001, 0), (0.0005, 0))}.get(dtype)
    if constant_axis:
        model = single_op_model("MEAN", shape, dtype, q and q[0], (1, 1, 1, 96), dtype,
                                q and q[1], extra_inputs=[axes], keep_dims=True)
        inputs = [random_input(np.random.default_rng(2), shape, dtype)]
    else:
        b = ModelBuilder()
        kw: list[dict[str, Any]] = [{} if q is None else {"scale": s, "zero_point": z}
                                    for s, z in (q or ((None, None),) * 2)]
        x = b.add_input("x", shape, dtype, **kw[0])
        a = b.add_input("axis", (2,), "int32")
        y = b.add_tensor("y", (1, 1, 1, 96), dtype, **kw[1])
        b.add_operator("MEAN", [x, a], [y], keep_dims=True)
        b.mark_output(y)
        model = b.build()
        inputs = [random_input(np.random.default_rng(2), shape, dtype), axes]
    _check(model, inputs)


@pytest.mark.parametrize("dtype,shapes", [
    ("int8", ((1, 112, 112, 16), (1, 112, 112, 16))),
    ("int8", ((1, 60, 60, 32), (32,))),
    ("int16", ((1, 50, 50, 8), (1, 50, 1, 8))),
    ("float32", ((1, 70, 70, 9), (70, 1, 9))),
])
def test_add(dtype: str, shapes: tuple[tuple[int, ...], ...]) -> None:
    q = {"int8": [(0.05, -3), (0.07, 10), (0.1, 2)], "int16": [(0.001, 0)] * 3}.get(dtype)
    b = ModelBuilder()
    kw = [{} if q is None else {"scale": s, "zero_point": z} for s, z in (q or [(0, 0)] * 3)]
    x1 = b.add_input("x1", shapes[0], dtype, **kw[0])
    x2 = b.add_input("x2", shapes[1], dtype, **kw[1])
    y = b.add_tensor("y", tuple(np.broadcast_shapes(*shapes)), dtype, **kw[2])
    b.add_operator("ADD", [x1, x2], [y], fused_activation_function="RELU")
    b.mark_output(y)
    rng = np.random.default_rng(3)
    _check(b.build(), [random_input(rng, s, dtype) for s in shapes])


@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_svdf(dtype: str) -> None:
    """A large SVDF over several steps (its state shifts every invoke)."""
    rng = np.random.default_rng(4)
    batch, n_in, units, rank, memory = 2, 120, 64, 2, 30
    filters = units * rank
    b = ModelBuilder()
    if dtype == "float32":
        x = b.add_input("x", (batch, n_in), "float32")
        wf = b.add_constant("wf", rng.normal(0, 0.2, (filters, n_in)).astype(np.float32))
        wt = b.add_constant("wt", rng.normal(0, 0.2, (filters, memory)).astype(np.float32))
        bias = b.add_constant("b", rng.normal(0, 0.3, units).astype(np.float32))
        st = b.add_tensor("state", (batch, memory * filters), "float32", is_variable=True)
        y = b.add_tensor("y", (batch, units), "float32")
    else:
        x = b.add_input("x", (batch, n_in), "int8", scale=0.03, zero_point=2)
        wf = b.add_constant("wf", rng.integers(-127, 128, (filters, n_in)).astype(np.int8),
                            scale=0.01, zero_point=0)
        wt = b.add_constant("wt", rng.integers(-32767, 32768, (filters, memory))
                            .astype(np.int16), scale=2e-5, zero_point=0)
        bias = b.add_constant("b", rng.integers(-5000, 5000, units).astype(np.int32),
                              scale=float(np.float32(np.float32(0.02) * np.float32(2e-5))),
                              zero_point=0)
        st = b.add_tensor("state", (batch, memory * filters), "int16", scale=0.02,
                          zero_point=0, is_variable=True)
        y = b.add_tensor("y", (batch, units), "int8", scale=0.5, zero_point=-3)
    b.add_operator("SVDF", [x, wf, wt, bias, st], [y], rank=rank,
                   fused_activation_function="RELU")
    b.mark_output(y)
    _check(b.build(), [random_input(rng, (batch, n_in), dtype)], steps=3)


@pytest.mark.parametrize("op,dtype", [("MAXIMUM", "float32"), ("MINIMUM", "int8"),
                                      ("LESS", "int8"), ("GREATER_EQUAL", "float32")])
def test_maximum_minimum_and_comparisons_stay_bounded(op: str, dtype: str) -> None:
    shape1, shape2 = (2, 64, 48, 8), (1, 64, 1, 8)  # broadcast along one axis
    quant = {"scale": 0.05, "zero_point": 3} if dtype == "int8" else {}
    b = ModelBuilder()
    x1 = b.add_input("x1", shape1, dtype, **quant)
    x2 = b.add_input("x2", shape2, dtype, **({"scale": 0.04, "zero_point": -2}
                                             if dtype == "int8" else {}))
    is_comparison = op not in ("MAXIMUM", "MINIMUM")
    y = b.add_tensor("y", shape1, "bool" if is_comparison else dtype,
                     **({} if is_comparison else quant))
    b.add_operator(op, [x1, x2], [y])
    b.mark_output(y)
    rng = np.random.default_rng(7)
    inputs = [random_input(rng, shape, dtype) for shape in (shape1, shape2)]
    # Broadcasting through a ufunc lets numpy buffer the broadcast operand: at most its ufunc
    # buffer (8192 elements), whatever the tensor size (these tensors hold 49,152 elements).
    _check(b.build(), inputs, bound=8192 * 8 + BOUND)


@pytest.mark.parametrize("op,dtype", [("ABS", "int8"), ("RSQRT", "int8"), ("ABS", "int16"),
                                      ("SQRT", "float32"), ("SQUARE", "float32")])
def test_elementwise_unary_stays_bounded(op: str, dtype: str) -> None:
    shape = (4, 64, 64, 8)  # 131,072 elements: far above any per-invoke bound below
    quant = {"int8": {"scale": 0.05, "zero_point": -128 if op == "RSQRT" else 3},
             "int16": {"scale": 0.01, "zero_point": 0}}.get(dtype, {})
    b = ModelBuilder()
    x = b.add_input("x", shape, dtype, **quant)
    y = b.add_tensor("y", shape, dtype, **quant)
    b.add_operator(op, [x], [y])
    b.mark_output(y)
    rng = np.random.default_rng(11)
    data = random_input(rng, shape, dtype)
    if op in ("SQRT",):
        data = np.abs(data)
    # Blocks of 512 elements: a few KiB of per-block temporaries, whatever the tensor size.
    _check(b.build(), [data], bound=4 * BOUND)
