"""L2_POOL_2D: TFLM's l2_pool_2d.cc and reference_ops::L2Pool, float32 only, 4-D NHWC.

Each output is sqrtf(sum of the window's squares / the number of taps inside the input),
the squares summed in float32 in the window's (y, x) order, then the fused activation clamp
(C++ std::max/std::min). Padded positions are left out of both the sum and the count (here
they read as zeros, whose squares add nothing to a sum that starts at +0.0).

Allocation: the parser allocates TfLitePoolParams; L2Prepare takes the output, then the input,
as temp tensors, and CreateWritableTensorDimsWithCopy allocates a persistent TfLiteIntArray
for the output's 4 dims (20 bytes); no OpData. The type is checked in Prepare.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._conv_common import compute_padding_height_width
from tinyarena.kernels._fma import fma32
from tinyarena.kernels._ieee import c_float_env, c_min_max_inplace
from tinyarena.kernels._quant import calculate_activation_range_float
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration
from tinyarena.model.options import Pool2DOptions
from tinyarena.model.types import Operator, TensorType

INPUT = 0
OUTPUT = 0
RANK = 4


@dataclass(frozen=True)
class OpData:
    in_shape: tuple[int, int, int, int]
    out_shape: tuple[int, int, int, int]
    stride_h: int
    stride_w: int
    filter_h: int
    filter_w: int
    pad_h: int
    pad_w: int
    act_min: float
    act_max: float
    padded: int  # scratch workspace: the zero-padded input
    square: int  # scratch workspace: one tap's squares, output-shaped
    counts: int  # persistent workspace: taps per output position (float32, (out_h, out_w, 1))
    fused: bool = False  # sums of squares as fused multiply-adds (the target's ``float_fma``)


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """L2Prepare."""
    if len(op.inputs) != 1 or len(op.outputs) != 1:
        raise KernelError(f"L2_POOL_2D takes one input and one output; got {len(op.inputs)} "
                          f"and {len(op.outputs)}")
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    inp, out = ctx.tensor(op.inputs[INPUT]), ctx.tensor(op.outputs[OUTPUT])
    if inp is None or out is None:
        raise KernelError("L2_POOL_2D needs an input and an output tensor")
    if len(inp.shape) != RANK or len(out.shape) != RANK:
        raise KernelError(f"L2_POOL_2D needs 4-D (NHWC) input and output; got {inp.shape} "
                          f"and {out.shape}")
    if inp.type != TensorType.FLOAT32 or out.type != TensorType.FLOAT32:
        raise KernelError(f"L2_POOL_2D supports float32 only in TFLM; got "
                          f"{inp.type.name.lower()} -> {out.type.name.lower()}")
    o = op.options if isinstance(op.options, Pool2DOptions) else Pool2DOptions()
    n, h, w, c = (int(d) for d in inp.shape)
    padding, out_h, out_w = compute_padding_height_width(
        o.stride_h, o.stride_w, 1, 1, h, w, o.filter_height, o.filter_width, o.padding)
    ctx.allocate_persistent(4 + 4 * RANK)  # CreateWritableTensorDimsWithCopy
    if tuple(out.shape) != (n, out_h, out_w, c):
        raise KernelError(f"L2_POOL_2D: the output shape should be {(n, out_h, out_w, c)} for "
                          f"this input, window and padding, not {out.shape}")
    act_min, act_max = calculate_activation_range_float(o.fused_activation_function)
    pad_h, pad_w = padding.height, padding.width
    ph = max(h + pad_h, (out_h - 1) * o.stride_h + o.filter_height)
    pw = max(w + pad_w, (out_w - 1) * o.stride_w + o.filter_width)
    padded = ctx.request_workspace((n, ph, pw, c), np.float32, persistent=False)
    ys = np.arange(out_h) * o.stride_h - pad_h
    xs = np.arange(out_w) * o.stride_w - pad_w
    count_y = np.minimum(o.filter_height, h - ys) - np.maximum(0, -ys)
    count_x = np.minimum(o.filter_width, w - xs) - np.maximum(0, -xs)
    counts = (count_y[:, None] * count_x[None, :]).astype(np.float32)[:, :, None]
    square = ctx.request_workspace((n, out_h, out_w, c), np.float32, persistent=False)
    counts_handle = ctx.request_workspace(counts.shape, np.float32, initial=counts)
    return OpData((n, h, w, c), (n, out_h, out_w, c), o.stride_h, o.stride_w, o.filter_height,
                  o.filter_width, pad_h, pad_w, act_min, act_max, padded, square, counts_handle,
                  bool(getattr(ctx.target, "float_fma", False)))


@c_float_env
def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """L2Eval / reference_ops::L2Pool."""
    x = ctx.tensor_data(op.inputs[INPUT]).reshape(data.in_shape)
    out = ctx.tensor_data(op.outputs[OUTPUT]).reshape(data.out_shape)
    padded = ctx.workspace(data.padded)
    padded.fill(0.0)
    _, h, w, _ = data.in_shape
    padded[:, data.pad_h:data.pad_h + h, data.pad_w:data.pad_w + w, :] = x
    _, out_h, out_w, _ = data.out_shape
    square = ctx.workspace(data.square)
    out[...] = 0.0  # the output is the accumulator (it never shares memory with the input)
    for ky in range(data.filter_h):
        for kx in range(data.filter_w):
            tap = padded[:, ky:ky + (out_h - 1) * data.stride_h + 1:data.stride_h,
                         kx:kx + (out_w - 1) * data.stride_w + 1:data.stride_w, :]
            if data.fused:  # sum_squares += val * val as one fmaf (a build with float_fma)
                out[...] = fma32(tap, tap, out)
                continue
            np.multiply(tap, tap, out=square)
            out += square
    np.divide(out, ctx.workspace(data.counts), out=out)
    np.sqrt(out, out=out)
    c_min_max_inplace(out, np.float32(data.act_min), np.float32(data.act_max))


REGISTRATION = Registration("L2_POOL_2D", init=None, prepare=prepare, eval=eval_,
                            builtin_data="TfLitePoolParams")
