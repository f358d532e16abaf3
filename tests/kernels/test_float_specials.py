"""Quiet, exact numerics (issue 8, item 4): NaN, infinities, signed zeros, denormals and
overflowing values in the inputs or weights of the float kernels (and QUANTIZE) give the
wheel's outputs bit for bit, with every numpy warning turned into an error."""

from __future__ import annotations

import warnings
from typing import Callable

import numpy as np
import pytest

from kernel_runner import run_kernels
from tflm_oracle import tflm_run
from tinyarena.builder import ModelBuilder

pytestmark = pytest.mark.oracle

SPECIAL = np.array([np.nan, np.inf, -np.inf, 3.4e38, -3.4e38, 1e38, -1e38, 0.0, -0.0, 1e-45,
                    -1e-45, 1.0, -2.5, 0.5], np.float32)


def mixed(rng: np.random.Generator, shape: tuple[int, ...], p_special: float = 0.4) -> np.ndarray:
    normal = rng.normal(0, 3, size=shape).astype(np.float32)
    pick = rng.random(size=shape) < p_special
    special = rng.choice(SPECIAL, size=shape)
    return np.where(pick, special, normal).astype(np.float32)


def unary_model(op: str, shape: tuple[int, ...], out_shape: tuple[int, ...] | None = None,
                out_dtype: str = "float32", out_q: dict | None = None,
                **options: object) -> bytes:
    b = ModelBuilder()
    x = b.add_input("x", shape, "float32")
    y = b.add_tensor("y", out_shape or shape, out_dtype, **(out_q or {}))
    b.add_operator(op, [x], [y], **options)
    b.mark_output(y)
    return b.build()


def binary_model(op: str, activation: str) -> bytes:
    b = ModelBuilder()
    x1 = b.add_input("x1", (4, 14), "float32")
    x2 = b.add_input("x2", (14,), "float32")
    y = b.add_tensor("y", (4, 14), "float32")
    b.add_operator(op, [x1, x2], [y], fused_activation_function=activation)
    b.mark_output(y)
    return b.build()


def weighted_model(op: str, weights: np.ndarray) -> bytes:
    b = ModelBuilder()
    if op == "FULLY_CONNECTED":
        x = b.add_input("x", (2, 6), "float32")
        w = b.add_constant("w", weights.reshape(3, 6))
        bias = b.add_constant("b", np.array([0.0, 1e38, -0.0], np.float32))
        y = b.add_tensor("y", (2, 3), "float32")
        b.add_operator(op, [x, w, bias], [y])
    else:
        x = b.add_input("x", (1, 5, 5, 2), "float32")
        depthwise = op == "DEPTHWISE_CONV_2D"
        w = b.add_constant("w", weights.reshape((1, 3, 3, 2) if depthwise else (2, 3, 3, 2)))
        bias = b.add_constant("b", np.array([0.0, -0.0], np.float32))
        y = b.add_tensor("y", (1, 5, 5, 2), "float32")
        options: dict[str, object] = dict(padding="SAME", stride_w=1, stride_h=1,
                                          fused_activation_function="RELU")
        if depthwise:
            options["depth_multiplier"] = 1
        b.add_operator(op, [x, w, bias], [y], **options)
    b.mark_output(y)
    return b.build()


def check_bits(model: bytes, inputs: list[np.ndarray], *, ulps: int = 0) -> None:
    """Bit-identical outputs, NaN sign bits included. ``ulps``: finite results within that
    many float32 ulps (SIN, COS, LOG: libm's sinf/cosf/logf are not ported bit for bit;
    non-finite results must still be identical)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = run_kernels(model, inputs)[0]
    theirs = tflm_run(model, inputs)[0]
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    same = ours.reshape(-1).view(np.uint8) == theirs.reshape(-1).view(np.uint8)
    if ours.dtype == np.float32:
        a, b = ours.reshape(-1), theirs.reshape(-1)
        same = a.view(np.uint32) == b.view(np.uint32)
        if ulps:
            finite = np.isfinite(a) & np.isfinite(b) & (np.sign(a) == np.sign(b))
            gap = np.abs(a.view(np.int32).astype(np.int64) - b.view(np.int32).astype(np.int64))
            same |= finite & (gap <= ulps)
    assert same.all(), (inputs, ours, theirs)


POOL = dict(stride_w=1, stride_h=1, filter_width=2, filter_height=2)
UNARY_CASES: dict[str, Callable[[], bytes]] = {
    "avg_pool_valid": lambda: unary_model("AVERAGE_POOL_2D", (1, 6, 6, 2), (1, 5, 5, 2),
                                          padding="VALID", **POOL),
    "avg_pool_same_relu": lambda: unary_model(
        "AVERAGE_POOL_2D", (1, 6, 6, 2), (1, 3, 3, 2), padding="SAME", stride_w=2,
        stride_h=2, filter_width=3, filter_height=3, fused_activation_function="RELU"),
    "max_pool_valid": lambda: unary_model("MAX_POOL_2D", (1, 6, 6, 2), (1, 5, 5, 2),
                                          padding="VALID", **POOL),
    "max_pool_same_relu": lambda: unary_model(
        "MAX_POOL_2D", (1, 6, 6, 2), (1, 3, 3, 2), padding="SAME", stride_w=2, stride_h=2,
        filter_width=3, filter_height=3, fused_activation_function="RELU"),
    "max_pool_big_window": lambda: unary_model(
        "MAX_POOL_2D", (1, 9, 9, 1), (1, 1, 1, 1), padding="VALID", stride_w=1, stride_h=1,
        filter_width=9, filter_height=9),
    "softmax": lambda: unary_model("SOFTMAX", (6, 5), beta=1.0),
    "mean": lambda: unary_model("MEAN_placeholder", (1,)),
    "quantize_int8": lambda: unary_model("QUANTIZE", (4, 14), out_dtype="int8",
                                         out_q={"scale": 0.1, "zero_point": 3}),
    "quantize_int16": lambda: unary_model("QUANTIZE", (4, 14), out_dtype="int16",
                                          out_q={"scale": 0.001, "zero_point": 0}),
}
for _op in ("RELU", "RELU6", "LOGISTIC", "TANH", "HARD_SWISH", "LEAKY_RELU", "ABS", "SQRT",
            "RSQRT", "LOG", "SIN", "COS", "SQUARE"):
    UNARY_CASES[_op.lower()] = (lambda op=_op: unary_model(op, (4, 14)))
del UNARY_CASES["mean"]


@pytest.mark.parametrize("case", sorted(UNARY_CASES))
def test_unary_float_specials_match_tflm(case: str) -> None:
    model = UNARY_CASES[case]()
    rng = np.random.default_rng(len(case))
    from tinyarena.model import read_model

    sg = read_model(model).subgraphs[0]
    shape = tuple(sg.tensors[sg.inputs[0]].shape)
    for _ in range(3):
        check_bits(model, [mixed(rng, shape)],
                   ulps=1 if case in ("sin", "cos", "log") else 0)


@pytest.mark.parametrize("activation", ("NONE", "RELU", "RELU6", "RELU_N1_TO_1"))
@pytest.mark.parametrize("op", ("ADD", "SUB", "MUL"))
def test_binary_float_specials_match_tflm(op: str, activation: str) -> None:
    rng = np.random.default_rng(len(op) * 7 + len(activation))
    model = binary_model(op, activation)
    for _ in range(3):
        check_bits(model, [mixed(rng, (4, 14)), mixed(rng, (14,))])


@pytest.mark.parametrize("op", ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"))
def test_weighted_float_specials_match_tflm(op: str) -> None:
    """Overflowing and infinite weights as well as inputs: an infinite weight on a tap in the
    padding must not turn the output into NaN (TFLM skips padded taps)."""
    rng = np.random.default_rng(len(op))
    size = {"CONV_2D": 36, "DEPTHWISE_CONV_2D": 18, "FULLY_CONNECTED": 18}[op]
    weights = mixed(rng, (size,), p_special=0.2)
    weights[weights != weights] = 2.0  # NaN weights would make every output NaN
    weights[0] = np.inf  # tap (0, 0): in the padding for the first output row and column
    model = weighted_model(op, weights)
    shape = (2, 6) if op == "FULLY_CONNECTED" else (1, 5, 5, 2)
    for p in (0.0, 0.1, 0.5):
        check_bits(model, [mixed(rng, shape, p)])


def test_large_conv_with_infinite_weight_matches_tflm() -> None:
    """A conv above the exact path's size (float64 GEMM otherwise): an infinite weight sends it
    to TFLM's own summation order with padded taps skipped, so it is bit-exact too."""
    rng = np.random.default_rng(5)
    b = ModelBuilder()
    x = b.add_input("x", (1, 32, 32, 16), "float32")
    w = rng.normal(0, 0.2, size=(64, 3, 3, 16)).astype(np.float32)
    w[3, 0, 0, 5] = np.inf
    w[9, 2, 2, 0] = -np.inf
    wt = b.add_constant("w", w)
    bias = b.add_constant("b", rng.normal(0, 1, 64).astype(np.float32))
    y = b.add_tensor("y", (1, 32, 32, 64), "float32")
    b.add_operator("CONV_2D", [x, wt, bias], [y], padding="SAME", stride_w=1, stride_h=1,
                   fused_activation_function="NONE")
    b.mark_output(y)
    check_bits(b.build(), [rng.normal(0, 1, size=(1, 32, 32, 16)).astype(np.float32)])


@pytest.mark.parametrize("beta", (1.0, 0.0, 2.5))
def test_softmax_nan_rows_match_tflm_bit_for_bit(beta: float) -> None:
    """The row maximum skips NaNs (std::max from the lowest float), the sum adds left to right
    keeping the first operand's NaN, and each output is exp / sum: NaN sign bits follow."""
    nan, inf = np.nan, np.inf
    rows = np.array([[nan, 0, 1, 2, -1], [inf, 0, 1, 2, -1], [nan, inf, -inf, 1e38, 0],
                     [-1e-45, -2.5, inf, nan, 3.4e38], [inf, nan, 0, 0, 0],
                     [-inf, -inf, -inf, -inf, -inf], [3e38, -3e38, 0, 0, 1]], np.float32)
    check_bits(unary_model("SOFTMAX", rows.shape, beta=beta), [rows])


def _reduce_model(op: str) -> bytes:
    b = ModelBuilder()
    x = b.add_input("x", (2, 3, 4, 5), "float32")
    axes = b.add_constant("axes", np.array([1, 2], np.int32))
    y = b.add_tensor("y", (2, 1, 1, 5), "float32")
    b.add_operator(op, [x, axes], [y], keep_dims=True)
    b.mark_output(y)
    return b.build()


def _transpose_conv_model(rng: np.random.Generator) -> bytes:
    b = ModelBuilder()
    shape = b.add_constant("shape", np.array([1, 5, 5, 2], np.int32))
    w = rng.normal(0, 1, (2, 3, 3, 2)).astype(np.float32)
    w[0, 1, 1, 0] = 3e38
    x = b.add_input("x", (1, 3, 3, 2), "float32")
    y = b.add_tensor("y", (1, 5, 5, 2), "float32")
    b.add_operator("TRANSPOSE_CONV", [shape, b.add_constant("w", w), x], [y], padding="VALID",
                   stride_w=1, stride_h=1, fused_activation_function="NONE")
    b.mark_output(y)
    return b.build()


@pytest.mark.parametrize("case", ("MEAN", "SUM", "TRANSPOSE_CONV"))
def test_more_float_kernels_with_specials_match_tflm(case: str) -> None:
    rng = np.random.default_rng(len(case) + 100)
    if case in ("MEAN", "SUM"):
        model, shape = _reduce_model(case), (2, 3, 4, 5)
    else:
        model, shape = _transpose_conv_model(rng), (1, 3, 3, 2)
    for p in (0.1, 0.4):
        check_bits(model, [mixed(rng, shape, p)])


def test_max_pool_skips_signaling_nans_as_tflm() -> None:
    """A window pooled whole (the numpy path's running maximum down the window) with
    signaling and negative NaNs among finite values and infinities: TFLM's ``max < x`` skips
    every NaN, where np.fmax returns a signaling one and restarts after it."""
    model = UNARY_CASES["max_pool_big_window"]()
    rng = np.random.default_rng(13)
    nans = np.array([0x7FA00001, 0xFF812345, 0xFFC00000, 0x7FC00000],
                    np.uint32).view(np.float32)
    for k in range(4):
        x = rng.normal(0, 3, size=(1, 9, 9, 1)).astype(np.float32)
        flat = x.reshape(-1)
        flat[rng.choice(81, 12, replace=False)] = rng.choice(nans, 12)
        flat[rng.integers(81)] = np.float32(np.inf) if k % 2 else np.float32(-np.inf)
        check_bits(model, [x])


@pytest.mark.parametrize("op", ("REDUCE_MAX", "REDUCE_MIN"))
def test_reduce_max_min_skip_signaling_nans_as_tflm(op: str) -> None:
    """ReduceGeneric's ``in > current`` (``<``) skips signaling NaNs too; np.fmax/fmin would
    return them."""
    b = ModelBuilder()
    x = b.add_input("x", (4, 100), "float32")
    axis = b.add_constant("axis", np.array([1], np.int32))
    y = b.add_tensor("y", (4,), "float32")
    b.add_operator(op, [x, axis], [y])
    b.mark_output(y)
    model = b.build()
    rng = np.random.default_rng(17)
    specials = np.array([0x7FA00001, 0xFF812345, 0x7FC00000, 0x7F800000, 0xFF800000, 0x80000000],
                        np.uint32).view(np.float32)
    for _ in range(4):
        v = rng.normal(0, 3, size=(4, 100)).astype(np.float32)
        flat = v.reshape(-1)
        picks = rng.choice(flat.size, 100, replace=False)
        flat[picks] = rng.choice(specials, picks.size)
        check_bits(model, [v])


def test_tanh_quiets_signaling_nans_as_tflm() -> None:
    """glibc's tanhf returns ``one/x + one`` for a NaN: a signaling NaN comes back quieted
    (payload and sign kept), not as it went in."""
    model = unary_model("TANH", (2, 8))
    nans = np.array([0x7FA00001, 0xFF812345, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFBFFFFF,
                     0x3F800000, 0x80000000], np.uint32).view(np.float32)
    check_bits(model, [np.stack([nans, nans[::-1]])])


NAN_LAYOUTS = [((2, 5, 7), (2, 5, 7)), ((1,), (3, 4, 6)), ((3, 4, 6), ()), ((2, 3, 8), (8,)),
               ((2, 1, 6), (1, 5, 1)), ((3, 1, 4, 1), (1, 5, 1, 6)), ((4, 1), (4, 9)),
               ((17,), (1,)), ((1,), (17,)), ((2, 1), (1,)), ((1,), (1,))]


@pytest.mark.parametrize("op", ("ADD", "MUL", "SUB", "DIV", "SQUARED_DIFFERENCE"))
def test_binary_two_nan_operands_match_tflm(op: str) -> None:
    """Where both inputs are NaN (different payloads and signs), which one comes out depends
    on the op and on the wheel's loop for the broadcast layout (``second_nan_wins``)."""
    nans = np.array([0x7FA00001, 0xFF812345, 0x7FC00000, 0xFFC00000, 0x7FC0BEEF],
                    np.uint32).view(np.float32)
    rng = np.random.default_rng(len(op))
    for shape1, shape2 in NAN_LAYOUTS:
        out = np.broadcast_shapes(shape1, shape2)
        b = ModelBuilder()
        x1 = b.add_input("x1", shape1, "float32")
        x2 = b.add_input("x2", shape2, "float32")
        y = b.add_tensor("y", out, "float32")
        b.add_operator(op, [x1, x2], [y])
        b.mark_output(y)
        inputs = [np.where(rng.random(s) < 0.8, rng.choice(nans, s), np.float32(1.5))
                  .astype(np.float32) for s in (shape1, shape2)]
        check_bits(b.build(), inputs)
