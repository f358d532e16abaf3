"""CONV_3D (float32): TFLite's reference Conv3D (kernels/internal/reference/conv3d.h).

Not a TFLM kernel: TFLM has no CONV_3D, so this kernel is tinyarena-only. There is no TFLM
allocation behaviour to port; the allocation below (nothing persistent, no scratch, no temp
tensors, no builtin-data struct) is a tinyarena extension, and an arena size computed for a
model containing CONV_3D describes no real TFLM run. ``REGISTRATION.tflm`` is False so that
the arena emulation can refuse such models (TFLM cannot run them).

Layouts as in TFLite: input NDHWC, filter (fd, fh, fw, C_in, C_out), output NDHWC, optional
float32 bias of C_out. Padding per axis comes from TFLite's ComputePadding3DValues.

Arithmetic: the reference sums, per output, over taps (fd, fy, fx) then input channels in
float32, skipping taps outside the input, then adds the bias and clamps. Layers up to
``EXACT_FLOAT_WORK`` multiply-adds are summed here in exactly that order over a zero-bordered
copy of the input (a skipped tap and a zero one add the same nothing), so results equal the
reference's bit for bit. Bigger layers run one float64 GEMM per tap (products of two float32
are exact in float64) and round the sum once to float32.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels._conv_common import compute_out_size, gemm, padding_with_offset
from tinyarena.kernels._conv_kernels import EXACT_FLOAT_WORK, constant_workspace
from tinyarena.kernels._quant import calculate_activation_range_float, clip_inplace
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration, required_tensor
from tinyarena.model.types import Operator, Tensor, TensorType

INPUT = 0
FILTER = 1
BIAS = 2
OUTPUT = 0


@dataclass(frozen=True)
class Geometry3D:
    """Sizes, strides, dilations and leading padding of one NDHWC convolution."""

    batches: int
    in_shape: tuple[int, int, int]  # (depth, height, width)
    in_c: int
    out_shape: tuple[int, int, int]
    out_c: int
    kernel: tuple[int, int, int]
    stride: tuple[int, int, int]
    dilation: tuple[int, int, int]
    pad: tuple[int, int, int]

    @property
    def padded_shape(self) -> tuple[int, int, int, int, int]:
        """Zero-bordered input extent: leading padding plus whatever the last tap reaches."""
        dims = tuple(
            max(i + p, (o - 1) * s + (k - 1) * d + 1) if o > 0 else i + p
            for i, o, k, s, d, p in zip(self.in_shape, self.out_shape, self.kernel, self.stride,
                                        self.dilation, self.pad))
        return (self.batches, *dims, self.in_c)

    @property
    def outputs(self) -> int:
        od, oh, ow = self.out_shape
        return self.batches * od * oh * ow

    @property
    def work(self) -> int:
        """Multiply-adds of the whole layer."""
        kd, kh, kw = self.kernel
        return self.outputs * self.out_c * kd * kh * kw * self.in_c

    def taps(self) -> tuple[tuple[int, int, int], ...]:
        """Filter taps in the reference's loop order (fd, fy, fx)."""
        kd, kh, kw = self.kernel
        return tuple((z, y, x) for z in range(kd) for y in range(kh) for x in range(kw))

    def interior(self, padded: np.ndarray) -> np.ndarray:
        (pd, ph, pw), (d, h, w) = self.pad, self.in_shape
        return padded[:, pd:pd + d, ph:ph + h, pw:pw + w, :]

    def tap(self, padded: np.ndarray, z: int, y: int, x: int) -> np.ndarray:
        """Strided view of what tap (z, y, x) reads for every output position."""
        starts = [k * d for k, d in zip((z, y, x), self.dilation)]
        sl = [slice(s0, s0 + (o - 1) * st + 1, st)
              for s0, o, st in zip(starts, self.out_shape, self.stride)]
        return padded[:, sl[0], sl[1], sl[2], :]


@dataclass(frozen=True)
class OpData:
    geom: Geometry3D
    float_min: float
    float_max: float
    # persistent (taps, C_in, C_out) float64 GEMM weights; -1: the filter itself is read
    # (the exact float32 path, whose weights are a view of it, or a runtime filter)
    ws_weights: int
    bias: np.ndarray | None
    exact: bool
    ws_padded: int
    ws_tmp: int
    ws_cols: int
    ws_acc: int


def _geometry(input_t: Tensor, filter_t: Tensor, output_t: Tensor, opts: Any) -> Geometry3D:
    """ComputePadding3DValues plus shape checks (conv3d.cc Prepare)."""
    if len(input_t.shape) != 5 or len(filter_t.shape) != 5 or len(output_t.shape) != 5:
        raise KernelError(
            f"CONV_3D needs 5-D input (NDHWC), filter (D, H, W, C_in, C_out) and output; got "
            f"{input_t.shape}, {filter_t.shape}, {output_t.shape}")
    n, d, h, w, cin = input_t.shape
    kd, kh, kw, fcin, cout = filter_t.shape
    if fcin != cin:
        raise KernelError(f"CONV_3D: input has {cin} channels but the filter expects {fcin}")
    stride = (int(opts.stride_d), int(opts.stride_h), int(opts.stride_w))
    dilation = (int(opts.dilation_d_factor), int(opts.dilation_h_factor),
                int(opts.dilation_w_factor))
    if min(stride) <= 0 or min(dilation) <= 0:
        raise KernelError(f"CONV_3D strides {stride} and dilations {dilation} must be positive")
    sizes = [compute_out_size(opts.padding, i, k, s, dl)
             for i, k, s, dl in zip((d, h, w), (kd, kh, kw), stride, dilation)]
    out_d, out_h, out_w = (0 if s is None else s for s in sizes)  # ComputeOutSize: 0 if invalid
    out = (out_d, out_h, out_w)
    expected = (n, *out, cout)
    if tuple(output_t.shape) != expected:
        raise KernelError(f"CONV_3D output shape {tuple(output_t.shape)} differs from the "
                          f"{expected} that padding {opts.padding} gives; fix the model")
    pad_d, pad_h, pad_w = (padding_with_offset(s, dl, i, k, o)[0]
                           for s, dl, i, k, o in zip(stride, dilation, (d, h, w), (kd, kh, kw),
                                                     out))
    return Geometry3D(n, (d, h, w), cin, out, cout, (kd, kh, kw), stride, dilation,
                      (pad_d, pad_h, pad_w))


def _weights(filt: np.ndarray, dtype: Any) -> np.ndarray:
    kd, kh, kw, cin, cout = filt.shape
    return np.ascontiguousarray(np.asarray(filt, dtype=dtype).reshape(kd * kh * kw, cin, cout))


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """conv3d.cc Prepare's checks and padding; float32 only (tinyarena-only kernel)."""
    if len(op.inputs) not in (2, 3) or len(op.outputs) != 1:
        raise KernelError(f"CONV_3D takes 2 or 3 inputs and 1 output, got {len(op.inputs)} "
                          f"and {len(op.outputs)}")
    input_t = required_tensor(ctx, op.inputs[INPUT], "CONV_3D", "input")
    filter_t = required_tensor(ctx, op.inputs[FILTER], "CONV_3D", "filter")
    output_t = required_tensor(ctx, op.outputs[OUTPUT], "CONV_3D", "output")
    bias_t = ctx.tensor(op.inputs[BIAS]) if len(op.inputs) > BIAS else None
    for role, t in (("input", input_t), ("filter", filter_t), ("output", output_t),
                    ("bias", bias_t)):
        if t is not None and t.type != TensorType.FLOAT32:
            raise KernelError(
                f"CONV_3D: {role} tensor {t.name!r} is {t.type.name}; tinyarena's CONV_3D "
                "supports float32 only (TFLM has no CONV_3D kernel at all); use a float model")
    geom = _geometry(input_t, filter_t, output_t, op.options)
    if bias_t is not None and bias_t.element_count != geom.out_c:
        raise KernelError(f"CONV_3D bias has {bias_t.element_count} elements, expected "
                          f"{geom.out_c} (one per output channel)")
    fmin, fmax = calculate_activation_range_float(op.options.fused_activation_function)
    exact = geom.work <= EXACT_FLOAT_WORK
    filt = None if filter_t.data is None else np.asarray(filter_t.data)
    ws_weights = -1 if filt is None or exact else \
        constant_workspace(ctx, _weights(filt, np.float64))
    bias = None if bias_t is None or bias_t.data is None else \
        np.asarray(bias_t.data, dtype=np.float32).reshape(-1)
    out_5d = (geom.batches, *geom.out_shape, geom.out_c)
    # persistent: its zero border is never written (only the interior is, every eval)
    ws_padded = ctx.request_workspace(geom.padded_shape, np.float32)
    # scratch: the products, tap columns and sums are written before they are read
    if exact:
        ws_tmp = ctx.request_workspace(out_5d, np.float32, persistent=False)
        ws_cols = ws_acc = -1
    else:
        ws_tmp = ctx.request_workspace((geom.outputs, geom.out_c), np.float64,
                                       persistent=False)
        ws_cols = ctx.request_workspace((*out_5d[:4], geom.in_c), np.float64,
                                        persistent=False)
        ws_acc = ctx.request_workspace((geom.outputs, geom.out_c), np.float64,
                                       persistent=False)
    return OpData(geom, fmin, fmax, ws_weights, bias, exact, ws_padded, ws_tmp, ws_cols, ws_acc)


def _sum_in_reference_order(data: OpData, padded: np.ndarray, weights: np.ndarray,
                            out: np.ndarray, tmp: np.ndarray) -> None:
    """reference_ops::Conv3D's float32 total, tap by tap and channel by channel."""
    geom = data.geom
    out.fill(0.0)
    for t, (z, y, x) in enumerate(geom.taps()):
        view = geom.tap(padded, z, y, x)
        for c in range(geom.in_c):
            np.multiply(view[..., c:c + 1], weights[t, c], out=tmp)
            np.add(out, tmp, out=out)


def _sum_by_gemm(data: OpData, padded: np.ndarray, weights: np.ndarray, out: np.ndarray,
                 ws: Any) -> None:
    """Per-tap float64 GEMMs, summed in float64 and rounded once to float32."""
    geom = data.geom
    cols, acc, tmp = ws(data.ws_cols), ws(data.ws_acc), ws(data.ws_tmp)
    flat = cols.reshape(geom.outputs, geom.in_c)
    for t, (z, y, x) in enumerate(geom.taps()):
        np.copyto(cols, geom.tap(padded, z, y, x))
        if t == 0:
            gemm(flat, weights[t], acc)
        else:
            gemm(flat, weights[t], tmp)
            acc += tmp
    np.copyto(out, acc.reshape(out.shape), casting="same_kind")


@c_float_env
def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """EvalFloat with the reference kernel: conv sum, + bias, clamp to the activation."""
    geom = data.geom
    out = ctx.tensor_data(op.outputs[OUTPUT])
    padded = ctx.workspace(data.ws_padded)
    np.copyto(geom.interior(padded), ctx.tensor_data(op.inputs[INPUT]))
    if data.ws_weights >= 0:
        weights = ctx.workspace(data.ws_weights)
    else:  # exact path: a view of the float32 filter; a runtime filter: converted here
        weights = _weights(ctx.tensor_data(op.inputs[FILTER]),
                           np.float32 if data.exact else np.float64)
    if geom.outputs and geom.out_c:
        if data.exact:
            _sum_in_reference_order(data, padded, weights, out, ctx.workspace(data.ws_tmp))
        else:
            _sum_by_gemm(data, padded, weights, out, ctx.workspace)
    bias = data.bias
    if bias is None and len(op.inputs) > BIAS and op.inputs[BIAS] >= 0:
        bias = ctx.tensor_data(op.inputs[BIAS]).reshape(-1)
    if bias is not None:
        np.add(out, bias, out=out)
    clip_inplace(out, np.float32(data.float_min), np.float32(data.float_max))


REGISTRATION = Registration("CONV_3D", init=None, prepare=prepare, eval=eval_,
                            builtin_data=None, tflm=False)
