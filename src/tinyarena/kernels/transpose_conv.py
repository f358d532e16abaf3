"""TRANSPOSE_CONV: TFLM's transpose_conv.cc with reference (integer_ops/)transpose_conv.h.

Allocation (facts sheet 5.2): the parser allocates ``TfLiteTransposeConvParams``; init
allocates the kernel's ``OpData`` (``OpDataTransposeConv``); prepare takes temp tensors output,
input, filter, allocates two per-channel arrays of 4 * C_out bytes (filter dim 0, float too),
requests the accumulator scratch (int8: 4 * output elements, int16: 8 * output elements), and,
for quantized inputs, takes temp tensors input, filter, bias, output again (CalculateOpData)
and requests 8 * bias elements when an int16 input has an int16 bias.

Arithmetic: TFLM scatters every input pixel through the filter into an accumulator. Here one
GEMM computes all input-pixel x filter-tap products (exact in float64 for integer types), and
each of the fh*fw taps adds its slab into the strided output positions it reaches. Float layers
small enough are summed in TFLM's own order (taps descending, then input channels), which gives
results identical to TFLM.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels._conv_common import Padding, compute_padding_height_width, gemm
from tinyarena.kernels._conv_kernels import (
    EXACT_FLOAT_WORK,
    KIND_FLOAT,
    KIND_INT8,
    KIND_INT16_ACC64,
    constant_workspace,
    conv_requant,
)
from tinyarena.kernels._fma import fma32
from tinyarena.kernels._quant import (
    ChannelRequant,
    calculate_activation_range_float,
    clip_inplace,
    requantize_inplace,
    requantize_int64_inplace,
    tensor_quant,
)
from tinyarena.kernels.base import (
    EvalContext,
    InitContext,
    PrepareContext,
    Registration,
    required_tensor,
)
from tinyarena.model.options import TransposeConvOptions
from tinyarena.model.types import Operator, Tensor, TensorType

OUTPUT_SHAPE = 0
FILTER = 1  # kTransposeConvFilterTensor
INPUT = 2  # kTransposeConvInputTensor
BIAS = 3  # kTransposeConvBiasTensor
OUTPUT = 0
QUANTIZED_DIMENSION = 0  # kTransposeConvQuantizedDimension


@dataclass(frozen=True)
class TapRange:
    """The input rows (or columns) one filter tap reads and the output ones it writes."""

    in_start: int
    in_stop: int
    out_start: int
    out_stop: int
    step: int


@dataclass(frozen=True)
class OpData:
    kind: str
    padding: Padding
    stride_h: int
    stride_w: int
    float_min: float
    float_max: float
    input_offset: int
    rq: ChannelRequant | None
    ws_wall: int  # persistent (C_in, fh * fw * C_out) float64 weights; -1: not constant
    bias: np.ndarray | None
    taps: tuple[tuple[int, int, TapRange, TapRange], ...]  # (ky, kx, rows, cols)
    exact_float: bool
    ws_x: int
    ws_prod: int
    ws_acc: int
    ws_acci: int
    ws_tmp: int
    fused: bool = False  # float sums as fused multiply-adds (the target's ``float_fma``)


def init(ctx: InitContext, op: Operator) -> None:
    """TransposeConvInit: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataTransposeConv"))


def _tap_range(k: int, pad: int, stride: int, in_size: int, out_size: int) -> TapRange | None:
    """Inputs i with 0 <= i*stride - pad + k < out_size, as a slice pair (None if empty)."""
    lo = max(0, -((k - pad) // stride))
    top = out_size - 1 + pad - k
    if top < 0:
        return None
    hi = min(in_size - 1, top // stride)
    if hi < lo:
        return None
    out_start = lo * stride - pad + k
    return TapRange(lo, hi + 1, out_start, out_start + (hi - lo) * stride + 1, stride)


def _kind(input_t: Tensor, filter_t: Tensor, output_t: Tensor, bias_t: Tensor | None) -> str:
    if input_t.type != output_t.type:
        raise KernelError(f"TRANSPOSE_CONV: input {input_t.type.name} and output "
                          f"{output_t.type.name} types differ")
    if input_t.type == TensorType.FLOAT32 and filter_t.type == TensorType.FLOAT32:
        return KIND_FLOAT
    if input_t.type == TensorType.INT8 and filter_t.type == TensorType.INT8:
        return KIND_INT8
    if input_t.type == TensorType.INT16 and filter_t.type == TensorType.INT8:
        if bias_t is not None and bias_t.type not in (TensorType.INT16, TensorType.INT64):
            raise KernelError(f"TRANSPOSE_CONV: int16 input needs an int16 or int64 bias, got "
                              f"{bias_t.type.name}")
        return KIND_INT16_ACC64
    raise KernelError(f"TRANSPOSE_CONV: input {input_t.type.name} with filter "
                      f"{filter_t.type.name} is not supported (hybrid models are not supported)")


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """TransposeConvPrepare + CalculateOpData, allocations in TFLM's order."""
    if len(op.inputs) not in (3, 4) or len(op.outputs) != 1:
        raise KernelError("TRANSPOSE_CONV takes 3 or 4 inputs and 1 output")
    bias_index = op.inputs[BIAS] if len(op.inputs) > BIAS else -1
    for index in (op.outputs[OUTPUT], op.inputs[INPUT], op.inputs[FILTER]):
        ctx.allocate_temp_tensor(index)
    output_t = required_tensor(ctx, op.outputs[OUTPUT], "TRANSPOSE_CONV", "output")
    input_t = required_tensor(ctx, op.inputs[INPUT], "TRANSPOSE_CONV", "input")
    filter_t = required_tensor(ctx, op.inputs[FILTER], "TRANSPOSE_CONV", "filter")
    bias_t = ctx.tensor(bias_index) if bias_index >= 0 else None
    kind = _kind(input_t, filter_t, output_t, bias_t)
    channels = filter_t.shape[QUANTIZED_DIMENSION]
    ctx.allocate_persistent(4 * channels)  # per_channel_output_multiplier
    ctx.allocate_persistent(4 * channels)  # per_channel_output_shift
    out_elems = output_t.element_count
    if kind == KIND_INT8:
        ctx.request_scratch(4 * out_elems)
    elif kind == KIND_INT16_ACC64:
        ctx.request_scratch(8 * out_elems)
    opts = op.options if isinstance(op.options, TransposeConvOptions) else TransposeConvOptions()
    for name, shape in (("input", input_t.shape), ("filter", filter_t.shape),
                        ("output", output_t.shape)):
        if len(shape) != 4:
            raise KernelError(f"TRANSPOSE_CONV {name} must be 4-D, got {shape}")
    stride_h, stride_w = int(opts.stride_h), int(opts.stride_w)
    if stride_h <= 0 or stride_w <= 0:
        raise KernelError(f"TRANSPOSE_CONV strides must be positive, got {stride_h}, {stride_w}")
    padding, _, _ = compute_padding_height_width(
        stride_h, stride_w, 1, 1, output_t.shape[1], output_t.shape[2], filter_t.shape[1],
        filter_t.shape[2], opts.padding)
    if input_t.shape[3] != filter_t.shape[3] or output_t.shape[3] != channels \
            or input_t.shape[0] != output_t.shape[0]:
        raise KernelError(f"TRANSPOSE_CONV shapes do not match: input {input_t.shape}, filter "
                          f"{filter_t.shape}, output {output_t.shape}")
    activation = opts.fused_activation_function
    fmin, fmax = calculate_activation_range_float(activation)
    rq = None
    if kind != KIND_FLOAT:  # CalculateOpData's quantized part
        for index in (op.inputs[INPUT], op.inputs[FILTER], bias_index, op.outputs[OUTPUT]):
            ctx.allocate_temp_tensor(index)
        q = filter_t.quantization
        if q is None or len(q.scale) not in (1, channels):
            raise KernelError("TRANSPOSE_CONV: the filter needs one scale or one per output "
                              "channel")
        rq = conv_requant(kind, input_t, filter_t, output_t, activation, channels)
        if kind == KIND_INT16_ACC64 and bias_t is not None and bias_t.type == TensorType.INT16:
            ctx.request_scratch(8 * bias_t.element_count)
    input_offset = -tensor_quant(input_t)[1] if kind == KIND_INT8 else 0
    n, h, w, cin = input_t.shape
    _, oh, ow, cout = output_t.shape
    fh, fw = filter_t.shape[1], filter_t.shape[2]
    taps = []
    for ky in range(fh - 1, -1, -1):  # TFLM's per-output order: taps descending
        rows = _tap_range(ky, padding.height, stride_h, h, oh)
        for kx in range(fw - 1, -1, -1):
            cols = _tap_range(kx, padding.width, stride_w, w, ow)
            if rows is not None and cols is not None:
                taps.append((ky, kx, rows, cols))
    fused = kind == KIND_FLOAT and bool(getattr(ctx.target, "float_fma", False))
    # A fused build's sums have one order and one rounding per step: always the exact path.
    exact_float = kind == KIND_FLOAT and (
        fused or n * h * w * cin * fh * fw * cout <= EXACT_FLOAT_WORK)
    # the GEMM's weights, converted once (the exact float path reads the filter itself)
    ws_wall = -1 if filter_t.data is None or exact_float else \
        constant_workspace(ctx, _wall(np.asarray(filter_t.data)))
    bias = None
    if bias_t is not None and bias_t.data is not None:
        bias = np.asarray(bias_t.data, np.float32 if kind == KIND_FLOAT else np.int64)
    # All scratch: eval writes (or zero-fills) every workspace before reading it.
    def scratch(shape: tuple[int, ...], dtype: Any) -> int:
        return int(ctx.request_workspace(shape, dtype, persistent=False))

    ws_x = ws_prod = ws_acc = ws_acci = ws_tmp = -1
    if exact_float:  # the TFLM-ordered float sum needs only the product temporary
        ws_tmp = scratch((n, h, w, cout), np.float32)
    else:
        ws_x = scratch((n * h * w, cin), np.float64)
        ws_prod = scratch((n, h, w, fh, fw, cout), np.float64)
        ws_acc = scratch((n, oh, ow, cout), np.float64)
    if kind != KIND_FLOAT:
        ws_acci = scratch((n, oh, ow, cout), np.int64)
        ws_tmp = scratch((n, oh, ow, cout), np.int64)
    return OpData(kind, padding, stride_h, stride_w, fmin, fmax, input_offset, rq, ws_wall, bias,
                  tuple(taps), exact_float, ws_x, ws_prod, ws_acc, ws_acci, ws_tmp, fused)


def _wall(filt: np.ndarray) -> np.ndarray:
    """(C_out, fh, fw, C_in) filter -> (C_in, fh*fw*C_out) float64 GEMM operand."""
    cout, fh, fw, cin = filt.shape
    return np.ascontiguousarray(
        np.asarray(filt, np.float64).transpose(3, 1, 2, 0).reshape(cin, fh * fw * cout))


def _out_view(acc: np.ndarray, rows: TapRange, cols: TapRange) -> np.ndarray:
    return acc[:, rows.out_start:rows.out_stop:rows.step, cols.out_start:cols.out_stop:cols.step]


def _float_exact(data: OpData, x: np.ndarray, filt: np.ndarray, out: np.ndarray,
                 tmp: np.ndarray) -> None:
    """reference_ops::TransposeConv's float32 sums, in the order each output receives them;
    each ``output += input * filter`` one fused multiply-add on a build with ``float_fma``."""
    out.fill(0.0)
    f32 = np.asarray(filt, np.float32)
    for ky, kx, rows, cols in data.taps:
        src = x[:, rows.in_start:rows.in_stop, cols.in_start:cols.in_stop, :]
        dst = _out_view(out, rows, cols)
        t = tmp[:, :src.shape[1], :src.shape[2], :]
        for c in range(x.shape[3]):
            if data.fused:
                dst[...] = fma32(src[..., c, None], f32[:, ky, kx, c], dst)
                continue
            np.multiply(src[..., c, None], f32[:, ky, kx, c], out=t)
            np.add(dst, t, out=dst)


@c_float_env
def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """TransposeConvEval."""
    x = ctx.tensor_data(op.inputs[INPUT])
    filt = ctx.tensor_data(op.inputs[FILTER])
    out = ctx.tensor_data(op.outputs[OUTPUT])
    bias = data.bias
    if bias is None and len(op.inputs) > BIAS and op.inputs[BIAS] >= 0:
        bias = ctx.tensor_data(op.inputs[BIAS])
    if data.kind == KIND_FLOAT and data.exact_float:
        _float_exact(data, x, filt, out, ctx.workspace(data.ws_tmp))
    else:
        xs = ctx.workspace(data.ws_x)
        np.copyto(xs, x.reshape(xs.shape), casting="unsafe")  # a cast copy allocates nothing
        if data.input_offset:
            xs += float(data.input_offset)
        prod = ctx.workspace(data.ws_prod)
        wall = ctx.workspace(data.ws_wall) if data.ws_wall >= 0 else _wall(np.asarray(filt))
        gemm(xs, wall, prod.reshape(xs.shape[0], -1))
        acc = ctx.workspace(data.ws_acc)
        acc.fill(0.0)
        for ky, kx, rows, cols in data.taps:
            dst = _out_view(acc, rows, cols)
            dst += prod[:, rows.in_start:rows.in_stop, cols.in_start:cols.in_stop, ky, kx, :]
        if data.kind == KIND_FLOAT:
            np.copyto(out, acc, casting="unsafe")
    if data.kind == KIND_FLOAT:
        if bias is not None:
            np.add(out, np.asarray(bias, np.float32), out=out)
        clip_inplace(out, np.float32(data.float_min), np.float32(data.float_max))
        return
    acci = ctx.workspace(data.ws_acci)
    np.copyto(acci, ctx.workspace(data.ws_acc), casting="unsafe")
    if bias is not None:
        acci += bias if bias.dtype == np.int64 else np.asarray(bias, np.int64)
    assert data.rq is not None
    if data.kind == KIND_INT16_ACC64:
        requantize_int64_inplace(acci, data.rq, out)
    else:
        requantize_inplace(acci, data.rq, out, ctx.workspace(data.ws_tmp))


REGISTRATION = Registration("TRANSPOSE_CONV", init=init, prepare=prepare, eval=eval_,
                            builtin_data="TfLiteTransposeConvParams")

__all__ = ["REGISTRATION", "OpData", "init", "prepare", "eval_"]
