"""Small models written with ModelBuilder, one or a few ops each, with inputs to run them on.

Shared by the builder tests (wheel vs LiteRT vs read-back) and usable by anyone who wants a
known-valid model of one op. Each case returns a ``Case``; quantization follows the converter's
conventions (tinyarena.builder.quant), shapes are small so every case runs in milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from tinyarena.builder import ModelBuilder, quant


@dataclass(frozen=True)
class Case:
    model: bytes
    inputs: tuple[np.ndarray, ...]
    in_wheel: bool = True  # False for ops the tflite-micro wheel's resolver lacks
    litert_reference: bool = True  # compare with LiteRT's reference kernels (else optimised)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _int8(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-128, 128, size=shape, dtype=np.int8)


def _float(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.normal(size=shape).astype(np.float32)


def conv2d_int8() -> Case:
    rng = _rng(1)
    b = ModelBuilder()
    x = b.add_input("x", (1, 8, 8, 3), "int8", scale=0.05, zero_point=-3)
    wq, ws = quant.quantize_weights(rng.normal(size=(4, 3, 3, 3)), axis=0)
    w = b.add_constant("w", wq, scale=ws, zero_point=0, quantized_dimension=0)
    bq, bs = quant.quantize_bias(rng.normal(size=4), 0.05, ws)
    bias = b.add_constant("b", bq, scale=bs, zero_point=0)
    y = b.add_tensor("y", (1, 4, 4, 4), "int8", scale=0.1, zero_point=2)
    b.add_operator("CONV_2D", [x, w, bias], [y], padding="SAME", stride_w=2, stride_h=2,
                   fused_activation_function="RELU")
    b.mark_output(y)
    return Case(b.build(), (_int8(rng, (1, 8, 8, 3)),))


def conv2d_float_dilated() -> Case:
    rng = _rng(2)
    b = ModelBuilder()
    x = b.add_input("x", (1, 9, 9, 2), "float32")
    w = b.add_constant("w", _float(rng, (3, 3, 3, 2)))
    bias = b.add_constant("b", _float(rng, (3,)))
    y = b.add_tensor("y", (1, 5, 5, 3), "float32")
    b.add_operator("CONV_2D", [x, w, bias], [y], padding="VALID", stride_w=1, stride_h=1,
                   dilation_w_factor=2, dilation_h_factor=2, fused_activation_function="RELU6")
    b.mark_output(y)
    return Case(b.build(), (_float(rng, (1, 9, 9, 2)),))


def conv2d_int16x8() -> Case:
    rng = _rng(3)
    b = ModelBuilder()
    x = b.add_input("x", (1, 6, 6, 2), "int16", scale=0.001, zero_point=0)
    wq, ws = quant.quantize_weights(rng.normal(size=(3, 3, 3, 2)), axis=0)
    w = b.add_constant("w", wq, scale=ws, zero_point=0, quantized_dimension=0)
    bq, bs = quant.quantize_bias(rng.normal(size=3), 0.001, ws, dtype="int64")
    bias = b.add_constant("b", bq, scale=bs, zero_point=0)
    y = b.add_tensor("y", (1, 6, 6, 3), "int16", scale=0.002, zero_point=0)
    b.add_operator("CONV_2D", [x, w, bias], [y], padding="SAME", stride_w=1, stride_h=1)
    b.mark_output(y)
    data = rng.integers(-3000, 3000, size=(1, 6, 6, 2)).astype(np.int16)
    return Case(b.build(), (data,))


def depthwise_int8() -> Case:
    rng = _rng(4)
    b = ModelBuilder()
    x = b.add_input("x", (1, 8, 8, 3), "int8", scale=0.02, zero_point=5)
    wq, ws = quant.quantize_weights(rng.normal(size=(1, 3, 3, 6)), axis=3)
    w = b.add_constant("w", wq, scale=ws, zero_point=0, quantized_dimension=3)
    bq, bs = quant.quantize_bias(rng.normal(size=6), 0.02, ws)
    bias = b.add_constant("b", bq, scale=bs, zero_point=0)
    y = b.add_tensor("y", (1, 8, 8, 6), "int8", scale=0.05, zero_point=-10)
    b.add_operator("DEPTHWISE_CONV_2D", [x, w, bias], [y], padding="SAME", stride_w=1,
                   stride_h=1, depth_multiplier=2)
    b.mark_output(y)
    return Case(b.build(), (_int8(rng, (1, 8, 8, 3)),))


def fully_connected_int8() -> Case:
    rng = _rng(5)
    b = ModelBuilder()
    x = b.add_input("x", (2, 16), "int8", scale=0.03, zero_point=-7)
    wq, ws = quant.quantize_weights(rng.normal(size=(8, 16)), axis=None)
    w = b.add_constant("w", wq, scale=ws, zero_point=0)
    bq, bs = quant.quantize_bias(rng.normal(size=8), 0.03, ws)
    bias = b.add_constant("b", bq, scale=bs, zero_point=0)
    y = b.add_tensor("y", (2, 8), "int8", scale=0.08, zero_point=3)
    b.add_operator("FULLY_CONNECTED", [x, w, bias], [y], fused_activation_function="RELU")
    b.mark_output(y)
    return Case(b.build(), (_int8(rng, (2, 16)),))


def fully_connected_float_no_bias() -> Case:
    rng = _rng(6)
    b = ModelBuilder()
    x = b.add_input("x", (1, 2, 5), "float32")
    w = b.add_constant("w", _float(rng, (4, 5)))
    y = b.add_tensor("y", (1, 2, 4), "float32")
    b.add_operator("FULLY_CONNECTED", [x, w, -1], [y], keep_num_dims=True)
    b.mark_output(y)
    return Case(b.build(), (_float(rng, (1, 2, 5)),))


def pools_int8() -> Case:
    rng = _rng(7)
    b = ModelBuilder()
    x = b.add_input("x", (1, 8, 8, 3), "int8", scale=0.05, zero_point=1)
    a = b.add_tensor("avg", (1, 4, 4, 3), "int8", scale=0.05, zero_point=1)
    m = b.add_tensor("max", (1, 2, 2, 3), "int8", scale=0.05, zero_point=1)
    b.add_operator("AVERAGE_POOL_2D", [x], [a], padding="VALID", stride_w=2, stride_h=2,
                   filter_width=2, filter_height=2)
    b.add_operator("MAX_POOL_2D", [a], [m], padding="SAME", stride_w=2, stride_h=2,
                   filter_width=3, filter_height=3)
    b.mark_output(a, m)
    return Case(b.build(), (_int8(rng, (1, 8, 8, 3)),))


def softmax_int8() -> Case:
    rng = _rng(8)
    b = ModelBuilder()
    x = b.add_input("x", (2, 10), "int8", scale=0.1, zero_point=0)
    y = b.add_tensor("y", (2, 10), "int8", scale=1 / 256, zero_point=-128)
    b.add_operator("SOFTMAX", [x], [y], beta=1.0)
    b.mark_output(y)
    return Case(b.build(), (_int8(rng, (2, 10)),))


def softmax_float() -> Case:
    rng = _rng(9)
    b = ModelBuilder()
    x = b.add_input("x", (3, 7), "float32")
    y = b.add_tensor("y", (3, 7), "float32")
    b.add_operator("SOFTMAX", [x], [y], beta=0.5)
    b.mark_output(y)
    return Case(b.build(), (_float(rng, (3, 7)),))


def add_sub_mul_int8() -> Case:
    rng = _rng(10)
    b = ModelBuilder()
    x = b.add_input("x", (1, 4, 4, 3), "int8", scale=0.05, zero_point=-2)
    z = b.add_input("z", (1, 4, 4, 3), "int8", scale=0.07, zero_point=4)
    s = b.add_tensor("sum", (1, 4, 4, 3), "int8", scale=0.1, zero_point=0)
    d = b.add_tensor("diff", (1, 4, 4, 3), "int8", scale=0.1, zero_point=1)
    p = b.add_tensor("prod", (1, 4, 4, 3), "int8", scale=0.02, zero_point=-5)
    b.add_operator("ADD", [x, z], [s], fused_activation_function="RELU6")
    b.add_operator("SUB", [s, z], [d])
    b.add_operator("MUL", [d, x], [p])
    b.mark_output(s, d, p)
    return Case(b.build(), (_int8(rng, (1, 4, 4, 3)), _int8(rng, (1, 4, 4, 3))))


def add_broadcast_float() -> Case:
    rng = _rng(11)
    b = ModelBuilder()
    x = b.add_input("x", (2, 3, 4), "float32")
    c = b.add_constant("c", _float(rng, (1, 1, 4)))
    y = b.add_tensor("y", (2, 3, 4), "float32")
    b.add_operator("ADD", [x, c], [y])
    b.mark_output(y)
    return Case(b.build(), (_float(rng, (2, 3, 4)),))


def add_int16() -> Case:
    rng = _rng(12)
    b = ModelBuilder()
    x = b.add_input("x", (1, 16), "int16", scale=1 / 4096, zero_point=0)
    z = b.add_input("z", (1, 16), "int16", scale=1 / 2048, zero_point=0)
    y = b.add_tensor("y", (1, 16), "int16", scale=1 / 1024, zero_point=0)
    b.add_operator("ADD", [x, z], [y], pot_scale_int16=False)
    b.mark_output(y)
    gen = (rng.integers(-30000, 30000, size=(1, 16)).astype(np.int16) for _ in range(2))
    return Case(b.build(), tuple(gen))


def reshape_pad_transpose_int8() -> Case:
    rng = _rng(13)
    b = ModelBuilder()
    x = b.add_input("x", (1, 4, 4, 3), "int8", scale=0.05, zero_point=-3)
    pads = b.add_constant("paddings", np.array([[0, 0], [1, 1], [2, 0], [0, 1]], np.int32))
    p = b.add_tensor("padded", (1, 6, 6, 4), "int8", scale=0.05, zero_point=-3)
    b.add_operator("PAD", [x, pads], [p])
    perm = b.add_constant("perm", np.array([0, 3, 1, 2], np.int32))
    t = b.add_tensor("transposed", (1, 4, 6, 6), "int8", scale=0.05, zero_point=-3)
    b.add_operator("TRANSPOSE", [p, perm], [t])
    shape = b.add_constant("shape", np.array([1, 144], np.int32))
    r = b.add_tensor("flat", (1, 144), "int8", scale=0.05, zero_point=-3)
    b.add_operator("RESHAPE", [t, shape], [r], new_shape=[1, 144])
    b.mark_output(r)
    return Case(b.build(), (_int8(rng, (1, 4, 4, 3)),))


def padv2_float() -> Case:
    rng = _rng(14)
    b = ModelBuilder()
    x = b.add_input("x", (1, 3, 3, 1), "float32")
    pads = b.add_constant("paddings", np.array([[0, 0], [1, 2], [0, 1], [0, 0]], np.int32))
    value = b.add_constant("value", np.array([7.5], np.float32), shape=())
    y = b.add_tensor("y", (1, 6, 4, 1), "float32")
    b.add_operator("PADV2", [x, pads, value], [y])
    b.mark_output(y)
    return Case(b.build(), (_float(rng, (1, 3, 3, 1)),))


def mean_int8() -> Case:
    rng = _rng(15)
    b = ModelBuilder()
    x = b.add_input("x", (1, 4, 4, 8), "int8", scale=0.05, zero_point=-3)
    axes = b.add_constant("axes", np.array([1, 2], np.int32))
    m = b.add_tensor("mean", (1, 1, 1, 8), "int8", scale=0.02, zero_point=1)
    b.add_operator("MEAN", [x, axes], [m], keep_dims=True)
    b.mark_output(m)
    return Case(b.build(), (_int8(rng, (1, 4, 4, 8)),))


def sum_int8() -> Case:
    """Compared with LiteRT's optimised kernels: its reference int8 SUM disagrees with hand
    arithmetic (and with TFLM) when input and output scales differ."""
    rng = _rng(15)
    b = ModelBuilder()
    x = b.add_input("x", (1, 4, 4, 8), "int8", scale=0.05, zero_point=-3)
    axes = b.add_constant("axes", np.array([1, 2], np.int32))
    s = b.add_tensor("sum", (1, 8), "int8", scale=1.5, zero_point=0)
    b.add_operator("SUM", [x, axes], [s], keep_dims=False)
    b.mark_output(s)
    return Case(b.build(), (_int8(rng, (1, 4, 4, 8)),), litert_reference=False)


def concatenation_int8() -> Case:
    rng = _rng(16)
    b = ModelBuilder()
    x = b.add_input("x", (1, 2, 2, 3), "int8", scale=0.05, zero_point=0)
    z = b.add_input("z", (1, 2, 2, 5), "int8", scale=0.05, zero_point=0)
    y = b.add_tensor("y", (1, 2, 2, 8), "int8", scale=0.05, zero_point=0)
    b.add_operator("CONCATENATION", [x, z], [y], axis=3)
    b.mark_output(y)
    return Case(b.build(), (_int8(rng, (1, 2, 2, 3)), _int8(rng, (1, 2, 2, 5))))


def quantize_dequantize() -> Case:
    rng = _rng(17)
    b = ModelBuilder()
    x = b.add_input("x", (2, 6), "float32")
    params = quant.choose_quant_params(-2.0, 3.0, "int8")
    q = b.add_tensor("q", (2, 6), "int8", scale=params.scale, zero_point=params.zero_point)
    b.add_operator("QUANTIZE", [x], [q])
    q16 = b.add_tensor("q16", (2, 6), "int16", scale=1 / 8192, zero_point=0)
    b.add_operator("QUANTIZE", [q], [q16])
    y = b.add_tensor("y", (2, 6), "float32")
    b.add_operator("DEQUANTIZE", [q16], [y])
    b.mark_output(q, q16, y)
    return Case(b.build(), (_float(rng, (2, 6)),))


def activations_float() -> Case:
    rng = _rng(18)
    b = ModelBuilder()
    x = b.add_input("x", (2, 8), "float32")
    outs = []
    for op, kwargs in (("RELU", {}), ("RELU6", {}), ("LOGISTIC", {}), ("TANH", {}),
                       ("HARD_SWISH", {}), ("LEAKY_RELU", {"alpha": 0.2}), ("ABS", {})):
        y = b.add_tensor(op.lower(), (2, 8), "float32")
        b.add_operator(op, [x], [y], **kwargs)
        outs.append(y)
    b.mark_output(*outs)
    return Case(b.build(), (4 * _float(rng, (2, 8)),))


def activations_int8() -> Case:
    rng = _rng(19)
    b = ModelBuilder()
    # Input zero point 0: with another zero point TFLM's int8 TANH and LiteRT's disagree.
    x = b.add_input("x", (1, 32), "int8", scale=0.06, zero_point=0)
    # RELU6 keeps the input's quantization: TFLM's int8 RELU6 clamps without requantizing.
    specs = (("LOGISTIC", 1 / 256, -128), ("TANH", 1 / 128, 0), ("RELU", 0.03, -128),
             ("RELU6", 0.06, 0), ("LEAKY_RELU", 0.05, 0))
    outs = []
    for op, scale, zp in specs:
        y = b.add_tensor(op.lower(), (1, 32), "int8", scale=scale, zero_point=zp)
        kwargs = {"alpha": 0.3} if op == "LEAKY_RELU" else {}
        b.add_operator(op, [x], [y], **kwargs)
        outs.append(y)
    b.mark_output(*outs)
    return Case(b.build(), (_int8(rng, (1, 32)),))


def strided_slice_squeeze_int8() -> Case:
    rng = _rng(20)
    b = ModelBuilder()
    x = b.add_input("x", (1, 6, 5, 4), "int8", scale=0.05, zero_point=0)
    begin = b.add_constant("begin", np.array([0, 1, 0, 1], np.int32))
    end = b.add_constant("end", np.array([1, 6, 5, 4], np.int32))
    strides = b.add_constant("strides", np.array([1, 2, 2, 1], np.int32))
    y = b.add_tensor("y", (3, 3, 3), "int8", scale=0.05, zero_point=0)
    b.add_operator("STRIDED_SLICE", [x, begin, end, strides], [y], begin_mask=4, end_mask=4,
                   shrink_axis_mask=1)
    axis = b.add_constant("axis", np.array([0], np.int32))
    e = b.add_tensor("expanded", (1, 3, 3, 3), "int8", scale=0.05, zero_point=0)
    b.add_operator("EXPAND_DIMS", [y, axis], [e])
    s = b.add_tensor("squeezed", (3, 3, 3), "int8", scale=0.05, zero_point=0)
    b.add_operator("SQUEEZE", [e], [s], squeeze_dims=[0])
    b.mark_output(y, s)
    return Case(b.build(), (_int8(rng, (1, 6, 5, 4)),))


def svdf_int8() -> Case:
    """Quantization as in keyword_scrambled.tflite: int8 in/out, int16 time weights and state."""
    rng = _rng(21)
    batch, n_in, units, rank, memory = 1, 12, 4, 2, 5
    filters = units * rank
    b = ModelBuilder()
    x = b.add_input("x", (batch, n_in), "int8", scale=0.06, zero_point=-128)
    wf = b.add_constant("weights_feature", _int8(rng, (filters, n_in)), scale=0.009,
                        zero_point=0)
    wt = b.add_constant("weights_time",
                        rng.integers(-2000, 2000, size=(filters, memory)).astype(np.int16),
                        scale=0.0037, zero_point=0)
    bias = b.add_constant("bias", rng.integers(-500, 500, size=(units,)).astype(np.int32),
                          scale=1.6e-5, zero_point=0)
    state = b.add_tensor("state", (batch, memory * filters), "int16", scale=0.0044,
                         zero_point=0, is_variable=True)
    y = b.add_tensor("y", (batch, units), "int8", scale=0.24, zero_point=-128)
    b.add_operator("SVDF", [x, wf, wt, bias, state], [y], rank=rank,
                   fused_activation_function="RELU")
    b.mark_output(y)
    return Case(b.build(), (_int8(rng, (batch, n_in)),))


def svdf_float() -> Case:
    """With a bias: TFLM's float SVDF reads the bias even when it is omitted (-1) and crashes."""
    rng = _rng(22)
    batch, n_in, units, rank, memory = 2, 6, 3, 1, 4
    b = ModelBuilder()
    x = b.add_input("x", (batch, n_in), "float32")
    wf = b.add_constant("weights_feature", _float(rng, (units * rank, n_in)))
    wt = b.add_constant("weights_time", _float(rng, (units * rank, memory)))
    bias = b.add_constant("bias", _float(rng, (units,)))
    state = b.add_tensor("state", (batch, memory * units * rank), "float32", is_variable=True)
    y = b.add_tensor("y", (batch, units), "float32")
    b.add_operator("SVDF", [x, wf, wt, bias, state], [y], rank=rank)
    b.mark_output(y)
    return Case(b.build(), (_float(rng, (batch, n_in)),))


def lstm_float() -> Case:
    """A float UNIDIRECTIONAL_SEQUENCE_LSTM with all four gates, no peepholes/projection."""
    rng = _rng(23)
    batch, time, n_in, n_cell = 1, 3, 4, 5
    b = ModelBuilder()
    x = b.add_input("x", (batch, time, n_in), "float32")
    w_in = [b.add_constant(f"w_input_{g}", 0.5 * _float(rng, (n_cell, n_in))) for g in "ifco"]
    w_rec = [b.add_constant(f"w_recurrent_{g}", 0.5 * _float(rng, (n_cell, n_cell)))
             for g in "ifco"]
    biases = [b.add_constant(f"bias_{g}", _float(rng, (n_cell,))) for g in "ifco"]
    out_state = b.add_tensor("output_state", (batch, n_cell), "float32", is_variable=True)
    cell_state = b.add_tensor("cell_state", (batch, n_cell), "float32", is_variable=True)
    y = b.add_tensor("y", (batch, time, n_cell), "float32")
    inputs = [x, *w_in, *w_rec, -1, -1, -1, *biases, -1, -1, out_state, cell_state,
              -1, -1, -1, -1]
    b.add_operator("UNIDIRECTIONAL_SEQUENCE_LSTM", inputs, [y], fused_activation_function="TANH",
                   cell_clip=10.0, proj_clip=0.0, time_major=False)
    b.mark_output(y)
    return Case(b.build(), (_float(rng, (batch, time, n_in)),))


def transpose_conv_int8() -> Case:
    rng = _rng(24)
    b = ModelBuilder()
    out_shape = b.add_constant("output_shape", np.array([1, 8, 8, 2], np.int32))
    wq, ws = quant.quantize_weights(rng.normal(size=(2, 3, 3, 3)), axis=0)
    w = b.add_constant("w", wq, scale=ws, zero_point=0, quantized_dimension=0)
    x = b.add_input("x", (1, 4, 4, 3), "int8", scale=0.04, zero_point=2)
    bq, bs = quant.quantize_bias(rng.normal(size=2), 0.04, ws)
    bias = b.add_constant("b", bq, scale=bs, zero_point=0)
    y = b.add_tensor("y", (1, 8, 8, 2), "int8", scale=0.1, zero_point=-1)
    b.add_operator("TRANSPOSE_CONV", [out_shape, w, x, bias], [y], padding="SAME", stride_w=2,
                   stride_h=2)
    b.mark_output(y)
    return Case(b.build(), (_int8(rng, (1, 4, 4, 3)),))


def conv3d_float() -> Case:
    """CONV_3D: not in the tflite-micro wheel's resolver, checked in LiteRT only."""
    rng = _rng(25)
    b = ModelBuilder()
    x = b.add_input("x", (1, 4, 5, 5, 2), "float32")
    w = b.add_constant("w", _float(rng, (2, 3, 3, 2, 3)))
    bias = b.add_constant("b", _float(rng, (3,)))
    y = b.add_tensor("y", (1, 4, 5, 5, 3), "float32")  # SAME keeps depth, height, width
    b.add_operator("CONV_3D", [x, w, bias], [y], padding="SAME", stride_d=1, stride_w=1,
                   stride_h=1)
    b.mark_output(y)
    return Case(b.build(), (_float(rng, (1, 4, 5, 5, 2)),), in_wheel=False)


def residual_int8() -> Case:
    """conv -> (conv, identity) -> ADD, with a metadata entry and a signature."""
    rng = _rng(26)
    b = ModelBuilder()
    x = b.add_input("x", (1, 6, 6, 4), "int8", scale=0.05, zero_point=0)

    def conv(src: int, name: str) -> int:
        wq, ws = quant.quantize_weights(rng.normal(size=(4, 1, 1, 4)), axis=0)
        w = b.add_constant(f"{name}_w", wq, scale=ws, zero_point=0)
        bq, bs = quant.quantize_bias(rng.normal(size=4), 0.05, ws)
        bias = b.add_constant(f"{name}_b", bq, scale=bs, zero_point=0)
        y = b.add_tensor(name, (1, 6, 6, 4), "int8", scale=0.05, zero_point=0)
        b.add_operator("CONV_2D", [src, w, bias], [y], padding="VALID", stride_w=1, stride_h=1,
                       fused_activation_function="RELU")
        return y

    c1 = conv(x, "c1")
    c2 = conv(c1, "c2")
    y = b.add_tensor("y", (1, 6, 6, 4), "int8", scale=0.1, zero_point=-2)
    b.add_operator("ADD", [c1, c2], [y])
    b.mark_output(y)
    b.add_metadata("min_runtime_version", b"1.5.0\0\0\0\0\0\0\0\0\0\0\0")
    b.add_signature("serving_default")
    return Case(b.build(), (_int8(rng, (1, 6, 6, 4)),))


def resource_variables_call_once() -> Case:
    """Subgraph 1 (run once by CALL_ONCE) initialises a resource variable that subgraph 0
    reads, adds its input to, and writes back: state across invokes."""
    b = ModelBuilder()
    init = b.add_subgraph("init")
    handle0 = b.add_tensor("handle", (1,), "resource")
    x = b.add_input("x", (1, 4), "float32")
    value = b.add_tensor("value", (1, 4), "float32")
    y = b.add_tensor("y", (1, 4), "float32")
    b.add_operator("CALL_ONCE", [], [], init_subgraph_index=init.index)
    b.add_operator("VAR_HANDLE", [], [handle0], container="", shared_name="acc")
    b.add_operator("READ_VARIABLE", [handle0], [value])
    b.add_operator("ADD", [value, x], [y])
    b.add_operator("ASSIGN_VARIABLE", [handle0, y], [])
    b.mark_output(y)
    handle1 = init.add_tensor("handle", (1,), "resource")
    start = init.add_constant("start", np.array([[1.0, 2.0, 3.0, 4.0]], np.float32))
    init.add_operator("VAR_HANDLE", [], [handle1], container="", shared_name="acc")
    init.add_operator("ASSIGN_VARIABLE", [handle1, start], [])
    return Case(b.build(), (np.array([[0.5, -1.0, 2.0, 0.0]], np.float32),))


def if_subgraphs() -> Case:
    """IF on a bool input choosing between ADD and MUL subgraphs."""
    b = ModelBuilder()
    then = b.add_subgraph("then")
    other = b.add_subgraph("else")
    for sub, op in ((then, "ADD"), (other, "MUL")):
        u = sub.add_input("u", (1, 3), "float32")
        v = sub.add_input("v", (1, 3), "float32")
        w = sub.add_tensor("w", (1, 3), "float32")
        sub.add_operator(op, [u, v], [w])
        sub.mark_output(w)
    cond = b.add_input("cond", (1,), "bool")
    x = b.add_input("x", (1, 3), "float32")
    z = b.add_input("z", (1, 3), "float32")
    y = b.add_tensor("y", (1, 3), "float32")
    b.add_operator("IF", [cond, x, z], [y], then_subgraph_index=then.index,
                   else_subgraph_index=other.index)
    b.mark_output(y)
    inputs = (np.array([False]), np.array([[1.0, 2.0, 3.0]], np.float32),
              np.array([[4.0, 5.0, 6.0]], np.float32))
    return Case(b.build(), inputs)


CASES: dict[str, Callable[[], Case]] = {
    fn.__name__: fn
    for fn in (
        conv2d_int8, conv2d_float_dilated, conv2d_int16x8, depthwise_int8, fully_connected_int8,
        fully_connected_float_no_bias, pools_int8, softmax_int8, softmax_float,
        add_sub_mul_int8, add_broadcast_float, add_int16, reshape_pad_transpose_int8,
        padv2_float, mean_int8, sum_int8, concatenation_int8, quantize_dequantize,
        activations_float, activations_int8, strided_slice_squeeze_int8, svdf_int8, svdf_float,
        lstm_float,
        transpose_conv_int8, conv3d_float, residual_int8, resource_variables_call_once,
        if_subgraphs,
    )
}
