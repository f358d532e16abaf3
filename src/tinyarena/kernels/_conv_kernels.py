"""Arithmetic of CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED, bit-exact with TFLM.

The op modules (``conv_2d.py``, ``depthwise_conv_2d.py``, ``fully_connected.py``) own the
allocation behaviour (OpData, temp tensors, persistent arrays, scratch); they call the
``*_op_data`` functions here at the end of prepare, which compute what TFLM's
CalculateOpData* compute (padding, per-channel multipliers, activation range) plus the
Python-side workspaces, and use the ``*_eval`` functions as eval.

Quantized paths are exact: integer sums come from a float64 GEMM (exact below 2**53) or int32 /
int64 tap loops, requantised by ``_quant.requantize_inplace``. Float paths sum in TFLM's
order where that is cheap (small layers: results identical to TFLM), else via a float64 GEMM
rounded once to float32 (then within a few float32 ulps of TFLM's sequential float32 sum).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._conv_common import (
    ConvGeometry,
    Padding,
    compute_padding_height_width,
    conv_geometry,
    depthwise_taps_phased,
    fill_border,
    fill_padded,
    fill_phased,
    fill_phased_border,
    gemm,
    im2col_gemm,
    im2col_workspace_elements,
    phased_shape,
    phased_taps,
    tile_taps,
)
from tinyarena.kernels._quant import (
    clip_inplace,
    ChannelRequant,
    calculate_activation_range_float,
    calculate_activation_range_quantized,
    per_channel_multipliers,
    quantize_multiplier,
    requantize_inplace,
    requantize_int64_inplace,
)
from tinyarena.model.types import Operator, Tensor, TensorType

# Float layers whose sequential (TFLM-ordered) sum costs at most this many multiply-adds are
# computed in TFLM's order, giving identical float32 results; larger ones use a GEMM.
EXACT_FLOAT_WORK = 4_000_000

KIND_FLOAT = "float32"
KIND_INT8 = "int8"
KIND_INT16_ACC32 = "int16x8/int32"
KIND_INT16_ACC64 = "int16x8/int64"


def tensor_scale_zp(t: Tensor) -> tuple[float, int]:
    """Per-tensor (scale, zero point) as TFLM's TfLiteTensor.params: the first entries."""
    q = t.quantization
    if q is None or len(q.scale) == 0:
        return 0.0, 0
    zp = int(q.zero_point[0]) if len(q.zero_point) else 0
    return float(np.float32(q.scale[0])), zp


def filter_scales(t: Tensor, role: str) -> np.ndarray:
    q = t.quantization
    if q is None or len(q.scale) == 0:
        raise KernelError(f"{role} tensor {t.name!r} is not quantized; a quantized kernel needs "
                          "affine quantization on its filter")
    return np.asarray(q.scale, dtype=np.float32)


def _required(ctx: Any, index: int, role: str, op_name: str) -> Tensor:
    t = ctx.tensor(index) if index >= 0 else None
    if t is None:
        raise KernelError(f"{op_name} needs its {role} tensor")
    return t


def _kind(op_name: str, input_t: Tensor, filter_t: Tensor, output_t: Tensor,
          bias_t: Tensor | None, quantized_bias_type: str, int16_always_64: bool) -> str:
    """Which TFLM code path runs: float, int8, or 16x8 with an int32 or int64 accumulator."""
    if input_t.type != output_t.type:
        raise KernelError(f"{op_name}: input type {input_t.type.name} and output type "
                          f"{output_t.type.name} differ")
    if input_t.type == TensorType.FLOAT32 and filter_t.type == TensorType.FLOAT32:
        return KIND_FLOAT
    if input_t.type == TensorType.INT8 and filter_t.type in (TensorType.INT8, TensorType.INT4):
        return KIND_INT8
    if input_t.type == TensorType.INT16 and filter_t.type == TensorType.INT8:
        if int16_always_64:
            return KIND_INT16_ACC64
        if bias_t is not None:
            if bias_t.type == TensorType.INT32:
                return KIND_INT16_ACC32
            if bias_t.type == TensorType.INT64:
                return KIND_INT16_ACC64
            raise KernelError(f"{op_name}: int16 bias type {bias_t.type.name} is not supported; "
                              "use int32 or int64")
        return KIND_INT16_ACC32 if quantized_bias_type == "INT32" else KIND_INT16_ACC64
    raise KernelError(
        f"{op_name}: input {input_t.type.name} with filter {filter_t.type.name} is not supported "
        "(TFLM: float32/float32, int8/int8 or int16/int8; hybrid models are not supported)")


def _const(t: Tensor | None) -> np.ndarray | None:
    """A constant tensor's values (int4 unpacked to int8), or None for a runtime tensor."""
    return None if t is None or t.data is None else np.asarray(t.unpacked_data)


def _requant(kind: str, input_t: Tensor, filter_t: Tensor, output_t: Tensor, activation: str,
             channels: int) -> ChannelRequant:
    """PopulateConvolutionQuantizationParams + CalculateActivationRangeQuantized."""
    in_scale, in_zp = tensor_scale_zp(input_t)
    out_scale, out_zp = tensor_scale_zp(output_t)
    m, s = per_channel_multipliers(in_scale, filter_scales(filter_t, "filter"), out_scale,
                                   channels)
    dtype = np.int8 if kind == KIND_INT8 else np.int16
    lo, hi = calculate_activation_range_quantized(activation, out_scale, out_zp, dtype)
    # the 16x8 kernels add no output offset (symmetric int16)
    offset = out_zp if kind == KIND_INT8 else 0
    return ChannelRequant.make(m, s, offset, lo, hi)


def _check_per_channel_count(filter_t: Tensor, dim: int, op_name: str) -> None:
    q = filter_t.quantization
    if q is not None and len(q.scale) not in (1, filter_t.shape[dim]):
        raise KernelError(f"{op_name}: filter has {len(q.scale)} scales but {filter_t.shape[dim]} "
                          f"channels in dimension {dim}; use one scale or one per channel")


# ----------------------------------------------------------------------------------------------
# CONV_2D
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConvData:
    """OpDataConv plus what the numpy kernel precomputes and its workspace handles.

    Quantized inputs are copied raw into the bordered buffer, whose border holds the input zero
    point, so a border element still contributes (zp - zp) * w = 0 like TFLM's skipped taps;
    the input offset is folded into the per-channel constant ``acc_bias`` instead
    (sum (x + off) * w = sum x * w + off * sum w), which saves a pass and a mixed-dtype ufunc.
    """

    kind: str
    geom: ConvGeometry
    padding: Padding
    groups: int
    float_min: float
    float_max: float
    input_offset: int
    rq: ChannelRequant | None
    wmat: np.ndarray | None  # (groups, K, out_c / groups), None when the filter is not const
    bias: np.ndarray | None  # float32 bias of the float kernel (None: absent or not const)
    acc_bias: np.ndarray | None  # int kinds: int64 bias + off * sum(w), when all const
    acc_bias_const: bool  # False: a runtime filter or bias, acc_bias is computed at eval
    border: int  # value of the buffer's border: the int8 input zero point, else 0
    exact_float: bool
    ws_padded: int
    ws_cols: int
    ws_acc: int
    ws_acci: int
    ws_tmp: int
    gemm_dtype: Any = np.float64  # of the padded input, im2col tiles, weights and GEMM sums
    views: dict = field(default_factory=dict, compare=False, repr=False)  # see DepthwiseData


def float32_gemm_is_exact(filt: np.ndarray) -> bool:
    """Can an int8 conv run its GEMM in float32 and still get the exact integer sums?

    The GEMM multiplies raw int8 inputs (or the zero point in the border: |value| <= 128) by
    the weights. Every product and every partial sum, in whatever order BLAS adds them, is
    bounded by 128 * sum_k |w[o, k]| for the worst output channel o; below 2**24 all of them
    are integers float32 represents exactly, so the result is the integer sum TFLM computes.
    Halves the GEMM's time and memory traffic for typical int8 layers.
    """
    w = np.abs(np.asarray(filt, dtype=np.int64).reshape(filt.shape[0], -1))
    return int(w.sum(axis=1).max(initial=0)) * 128 < (1 << 24)


def _conv_wmat(filt: np.ndarray, groups: int, dtype: Any) -> np.ndarray:
    out_c = filt.shape[0]
    per_group = out_c // groups
    k = filt.shape[1] * filt.shape[2] * filt.shape[3]
    w = np.asarray(filt, dtype=dtype).reshape(groups, per_group, k)
    return np.ascontiguousarray(w.transpose(0, 2, 1))


def folded_bias(weight_sums: np.ndarray, input_offset: int,
                bias: np.ndarray | None) -> np.ndarray | None:
    """int64 bias + input_offset * (sum of each output channel's weights); None if all zero."""
    if input_offset == 0 and bias is None:
        return None
    total = np.asarray(weight_sums, dtype=np.int64).reshape(-1) * np.int64(input_offset)
    if bias is not None:
        total = total + np.asarray(bias, dtype=np.int64).reshape(-1)[:total.size]
    return np.ascontiguousarray(total)


def conv2d_op_data(ctx: Any, op: Operator, input_i: int = 0, filter_i: int = 1,
                   bias_i: int = 2, output_i: int = 0) -> ConvData:
    """ConvPrepare/CalculateOpDataConv arithmetic (no arena allocations) + workspaces."""
    name = "CONV_2D"
    opts = op.options
    input_t = _required(ctx, op.inputs[input_i], "input", name)
    filter_t = _required(ctx, op.inputs[filter_i], "filter", name)
    output_t = _required(ctx, op.outputs[output_i], "output", name)
    bias_t = ctx.tensor(op.inputs[bias_i]) if len(op.inputs) > bias_i else None
    kind = _kind(name, input_t, filter_t, output_t, bias_t,
                 getattr(opts, "quantized_bias_type", "FLOAT32"), False)
    stride_h, stride_w = int(opts.stride_h), int(opts.stride_w)
    dil_h, dil_w = int(opts.dilation_h_factor), int(opts.dilation_w_factor)
    padding, _, _ = compute_padding_height_width(
        stride_h, stride_w, dil_h, dil_w, input_t.shape[1], input_t.shape[2],
        filter_t.shape[1], filter_t.shape[2], opts.padding)
    geom = conv_geometry(input_t.shape, filter_t.shape, output_t.shape, stride_h, stride_w,
                         dil_h, dil_w, padding)
    out_c = filter_t.shape[0]
    if output_t.shape[3] != out_c:
        raise KernelError(f"{name}: output depth {output_t.shape[3]} != filter count {out_c}")
    cin_g = filter_t.shape[3]
    if cin_g <= 0 or geom.in_c % cin_g or out_c % (geom.in_c // cin_g):
        raise KernelError(f"{name}: input depth {geom.in_c} is not a multiple of the filter "
                          f"depth {cin_g} (groups must divide both)")
    groups = geom.in_c // cin_g
    activation = opts.fused_activation_function
    rq = None
    fmin, fmax = calculate_activation_range_float(activation)
    input_offset = 0
    if kind != KIND_FLOAT:
        _check_per_channel_count(filter_t, 0, name)
        rq = _requant(kind, input_t, filter_t, output_t, activation, out_c)
        if kind == KIND_INT8:
            input_offset = -tensor_scale_zp(input_t)[1]
    filt = _const(filter_t)
    k = geom.filter_h * geom.filter_w * cin_g
    m = geom.batches * geom.out_h * geom.out_w
    exact_float = kind == KIND_FLOAT and k * m * out_c <= EXACT_FLOAT_WORK
    gemm_dtype: Any = np.float64
    if (kind == KIND_INT8 and filt is not None and float32_gemm_is_exact(filt)) or exact_float:
        gemm_dtype = np.float32
    wmat = None if filt is None or exact_float else _conv_wmat(filt, groups, gemm_dtype)
    bias_data = _const(bias_t)
    bias = None
    acc_bias = None
    acc_bias_const = (filt is not None or input_offset == 0) and \
        (bias_t is None or bias_data is not None)
    if kind == KIND_FLOAT:
        bias = None if bias_data is None else np.asarray(bias_data, np.float32)
    elif acc_bias_const:
        sums = np.zeros(out_c, np.int64) if filt is None else \
            np.asarray(filt, np.int64).reshape(out_c, -1).sum(axis=1)
        acc_bias = folded_bias(sums, input_offset, bias_data)
    # Every workspace is scratch: eval writes the padded buffer's border and interior, the
    # im2col tiles, the accumulators and the requantisation temporaries before reading them.
    def scratch(shape: tuple[int, ...], dtype: Any) -> int:
        return int(ctx.request_workspace(shape, dtype, persistent=False))

    ws_padded = scratch(geom.padded_shape(geom.in_c), gemm_dtype)
    ws_cols = ws_acc = ws_acci = ws_tmp = -1
    if exact_float:
        ws_tmp = scratch((m, out_c), np.float32)
    else:
        ws_cols = scratch((max(1, im2col_workspace_elements(geom, k)),), gemm_dtype)
        ws_acc = scratch((m, out_c), gemm_dtype)
    if kind != KIND_FLOAT:
        ws_acci = scratch((m, out_c), np.int64)
        ws_tmp = scratch((m, out_c), np.int64)
    return ConvData(kind, geom, padding, groups, fmin, fmax, input_offset, rq, wmat, bias,
                    acc_bias, acc_bias_const, -input_offset, exact_float, ws_padded, ws_cols,
                    ws_acc, ws_acci, ws_tmp, gemm_dtype)


def _conv_float_exact(padded: np.ndarray, geom: ConvGeometry, filt: np.ndarray, groups: int,
                      out: np.ndarray, tmp: np.ndarray) -> None:
    """reference_ops::Conv's float32 sum in its own order: taps (ky, kx), then input channels.

    ``padded`` and ``filt`` are float32; ``out`` and ``tmp`` (N, out_h, out_w, out_c).
    """
    out_c = filt.shape[0]
    per_group = out_c // groups
    cin_g = filt.shape[3]
    out.fill(0.0)
    for g in range(groups):
        cols = slice(g * per_group, (g + 1) * per_group)
        a = out[..., cols]
        t = tmp[..., cols]
        for ky in range(geom.filter_h):
            for kx in range(geom.filter_w):
                view = geom.tap(padded, ky, kx)
                for c in range(g * cin_g, (g + 1) * cin_g):
                    np.multiply(view[..., c:c + 1], filt[cols, ky, kx, c - g * cin_g], out=t)
                    np.add(a, t, out=a)


def conv2d_eval_arrays(data: ConvData, x: np.ndarray, filt: np.ndarray,
                       bias_arr: np.ndarray | None, out: np.ndarray, ws: Any) -> None:
    """The conv itself, on arrays; ``ws(handle)`` returns a workspace."""
    geom = data.geom
    padded = ws(data.ws_padded)  # scratch: border and interior written every eval
    fill_border(padded, geom, data.border)
    fill_padded(padded, geom, x)
    if data.kind == KIND_FLOAT:
        bias = data.bias if data.bias is not None or bias_arr is None else bias_arr
        if data.exact_float:
            tmp = ws(data.ws_tmp).reshape(out.shape)
            _conv_float_exact(padded, geom, np.asarray(filt, np.float32), data.groups, out,
                              tmp)
        else:
            acc = ws(data.ws_acc)
            _conv_gemm(data, padded, filt, acc, ws)
            np.copyto(out, acc.reshape(out.shape), casting="unsafe")
        if bias is not None:
            np.add(out, np.asarray(bias, np.float32), out=out)
        clip_inplace(out, np.float32(data.float_min), np.float32(data.float_max))
        return
    acc = ws(data.ws_acc)
    wmat = _conv_gemm(data, padded, filt, acc, ws)
    acci = ws(data.ws_acci)
    np.copyto(acci, acc, casting="unsafe")
    acc_bias = data.acc_bias
    if not data.acc_bias_const:
        sums = wmat.sum(axis=1).reshape(-1)  # exact: integer weights in float
        acc_bias = folded_bias(sums, data.input_offset, bias_arr)
    if acc_bias is not None:
        acci += acc_bias
    assert data.rq is not None
    if data.kind == KIND_INT16_ACC64:
        requantize_int64_inplace(acci, data.rq, out)
        return
    if data.kind == KIND_INT16_ACC32:  # int32 accumulation wraps as in C
        acci += 1 << 31
        np.bitwise_and(acci, 0xFFFFFFFF, out=acci)
        acci -= 1 << 31
    requantize_inplace(acci, data.rq, out, ws(data.ws_tmp))


def _conv_gemm(data: ConvData, padded: np.ndarray, filt: np.ndarray, acc: np.ndarray,
               ws: Any) -> np.ndarray:
    """acc = im2col(padded) @ weights; returns the weight matrix used."""
    wmat = data.wmat if data.wmat is not None else _conv_wmat(filt, data.groups, acc.dtype)
    cols = ws(data.ws_cols)
    if data.groups == 1:
        im2col_gemm(padded, data.geom, wmat[0], cols, acc)
        return wmat
    cin_g = filt.shape[3]
    per_group = wmat.shape[2]
    part = np.empty((acc.shape[0], per_group), dtype=acc.dtype)  # grouped convs: rare
    for g in range(data.groups):
        sub = np.ascontiguousarray(padded[..., g * cin_g:(g + 1) * cin_g])
        im2col_gemm(sub, data.geom, wmat[g], cols, part)
        acc[:, g * per_group:(g + 1) * per_group] = part
    return wmat


def conv2d_eval(ctx: Any, op: Operator, data: ConvData) -> None:
    """ConvEval: reads input/filter/bias, writes the output view in place."""
    bias_arr = None
    if not data.acc_bias_const or data.kind == KIND_FLOAT and data.bias is None:
        if len(op.inputs) > 2 and op.inputs[2] >= 0:
            bias_arr = ctx.tensor_data(op.inputs[2])
    filt = ctx.tensor_data(op.inputs[1])
    conv2d_eval_arrays(data, ctx.tensor_data(op.inputs[0]), filt, bias_arr,
                       ctx.tensor_data(op.outputs[0]), ctx.workspace)


# ----------------------------------------------------------------------------------------------
# DEPTHWISE_CONV_2D
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DepthwiseData:
    """OpDataConv for the depthwise kernel plus precomputed weights and workspaces."""

    kind: str
    geom: ConvGeometry
    padding: Padding
    depth_multiplier: int
    float_min: float
    float_max: float
    input_offset: int
    rq: ChannelRequant | None
    weights: np.ndarray | None  # (fh * fw, out_w * C) tiled, in the accumulator dtype
    bias: np.ndarray | None  # float32 bias of the float kernel (None: absent or not const)
    acc_bias: np.ndarray | None  # int kinds, accumulator dtype: bias + off * sum of taps
    acc_bias_const: bool  # False: a runtime filter or bias, acc_bias is computed at eval
    border: int  # value of the buffer's border: the int8 input zero point (see ConvData)
    acc_dtype: Any
    ws_padded: int
    ws_acc: int
    ws_tmp: int
    ws_acci: int
    ws_tmpi: int
    # Views of this op's own workspaces (the tap views, reshaped accumulators), made at the
    # first eval and reused: rebuilding ~20 views costs more than the arithmetic of a small
    # layer. Keyed by the padded buffer's identity, so another set of workspaces rebuilds them.
    views: dict = field(default_factory=dict, compare=False, repr=False)


def depthwise_op_data(ctx: Any, op: Operator) -> DepthwiseData:
    """DepthwiseConvPrepare/CalculateOpDataDepthwiseConv arithmetic + workspaces."""
    name = "DEPTHWISE_CONV_2D"
    opts = op.options
    input_t = _required(ctx, op.inputs[0], "input", name)
    filter_t = _required(ctx, op.inputs[1], "filter", name)
    output_t = _required(ctx, op.outputs[0], "output", name)
    bias_t = ctx.tensor(op.inputs[2]) if len(op.inputs) > 2 else None
    kind = _kind(name, input_t, filter_t, output_t, bias_t, "FLOAT32", True)
    if kind == KIND_INT16_ACC64 and bias_t is not None and bias_t.type != TensorType.INT64:
        raise KernelError(f"{name}: int16 input needs an int64 bias (TFLM reads it as int64), "
                          f"got {bias_t.type.name}")
    stride_h, stride_w = int(opts.stride_h), int(opts.stride_w)
    dil_h, dil_w = int(opts.dilation_h_factor), int(opts.dilation_w_factor)
    padding, _, _ = compute_padding_height_width(
        stride_h, stride_w, dil_h, dil_w, input_t.shape[1], input_t.shape[2],
        filter_t.shape[1], filter_t.shape[2], opts.padding)
    geom = conv_geometry(input_t.shape, filter_t.shape, output_t.shape, stride_h, stride_w,
                         dil_h, dil_w, padding)
    out_c = output_t.shape[3]
    mult = int(opts.depth_multiplier)
    if filter_t.shape[3] != out_c or mult <= 0 or geom.in_c * mult != out_c:
        raise KernelError(
            f"{name}: output depth {out_c} must equal input depth {geom.in_c} x depth_multiplier "
            f"{mult} and the filter's last dimension {filter_t.shape[3]}")
    activation = opts.fused_activation_function
    fmin, fmax = calculate_activation_range_float(activation)
    rq = None
    input_offset = 0
    if kind != KIND_FLOAT:
        _check_per_channel_count(filter_t, 3, name)
        rq = _requant(kind, input_t, filter_t, output_t, activation, out_c)
        if kind == KIND_INT8:
            input_offset = -tensor_scale_zp(input_t)[1]
    acc_dtype = {KIND_FLOAT: np.float32, KIND_INT8: np.int32}.get(kind, np.int64)
    filt = _const(filter_t)
    weights = None if filt is None else tile_taps(np.asarray(filt, acc_dtype)[0], geom.out_w)
    bias_data = _const(bias_t)
    bias = acc_bias = None
    acc_bias_const = (filt is not None or input_offset == 0) and \
        (bias_t is None or bias_data is not None)
    if kind == KIND_FLOAT:
        bias = None if bias_data is None else np.asarray(bias_data, np.float32)
    elif acc_bias_const:
        sums = np.zeros(out_c, np.int64) if filt is None else \
            np.asarray(filt, np.int64)[0].reshape(-1, out_c).sum(axis=0)
        folded = folded_bias(sums, input_offset, bias_data)
        acc_bias = None if folded is None else folded.astype(acc_dtype)  # int32: wraps as C
    out_shape = (geom.batches, geom.out_h, geom.out_w, out_c)
    # All scratch: eval writes the phased buffer's border and interior, and every
    # accumulator and temporary, before reading them.
    def scratch(shape: tuple[int, ...], dtype: Any) -> int:
        return int(ctx.request_workspace(shape, dtype, persistent=False))

    ws_padded = scratch(phased_shape(geom, out_c), acc_dtype)
    ws_acc = scratch(out_shape, acc_dtype)
    ws_tmp = scratch(out_shape, acc_dtype)
    ws_acci = ws_tmpi = -1
    if kind != KIND_FLOAT:
        ws_acci = scratch(out_shape, np.int64)
        ws_tmpi = scratch(out_shape, np.int64)
    return DepthwiseData(kind, geom, padding, mult, fmin, fmax, input_offset, rq, weights, bias,
                         acc_bias, acc_bias_const, -input_offset, acc_dtype, ws_padded, ws_acc,
                         ws_tmp, ws_acci, ws_tmpi)


def depthwise_eval_arrays(data: DepthwiseData, x: np.ndarray, filt: np.ndarray,
                          bias_arr: np.ndarray | None, out: np.ndarray, ws: Any) -> None:
    geom = data.geom
    padded = ws(data.ws_padded)  # scratch: border and interior written every eval
    fill_phased_border(padded, geom, data.border)
    fill_phased(padded, geom, x, data.depth_multiplier)
    weights = data.weights
    if weights is None:
        weights = tile_taps(np.asarray(filt, data.acc_dtype)[0], geom.out_w)
    rows = (geom.batches, geom.out_h, -1)
    cached = data.views.get("taps")
    if cached is None or cached[0] is not padded:
        cached = (padded, phased_taps(padded, geom), ws(data.ws_tmp).reshape(rows),
                  ws(data.ws_acc).reshape(rows))
        data.views["taps"] = cached
    _, taps, tmp, acc_rows = cached
    if data.kind == KIND_FLOAT:
        bias = data.bias if data.bias is not None else bias_arr
        if out.flags.c_contiguous:
            depthwise_taps_phased(taps, weights, out.reshape(rows), tmp)
        else:
            depthwise_taps_phased(taps, weights, acc_rows, tmp)
            np.copyto(out, acc_rows.reshape(out.shape))
        if bias is not None:
            np.add(out, np.asarray(bias, np.float32), out=out)
        clip_inplace(out, np.float32(data.float_min), np.float32(data.float_max))
        return
    assert data.rq is not None
    acc = ws(data.ws_acc)
    depthwise_taps_phased(taps, weights, acc_rows, tmp)
    acc_bias = data.acc_bias
    if not data.acc_bias_const:
        sums = np.asarray(filt, np.int64)[0].reshape(-1, acc.shape[3]).sum(axis=0)
        folded = folded_bias(sums, data.input_offset, bias_arr)
        acc_bias = None if folded is None else folded.astype(data.acc_dtype)
    if acc_bias is not None:  # TFLM's acc += bias (int32 wraps like C)
        acc += acc_bias
    acci = ws(data.ws_acci)
    if data.kind == KIND_INT16_ACC64:
        np.copyto(acci, acc)
        requantize_int64_inplace(acci, data.rq, out)
        return
    requantize_inplace(acc, data.rq, out, ws(data.ws_tmpi), work=acci)


def depthwise_eval(ctx: Any, op: Operator, data: DepthwiseData) -> None:
    """DepthwiseConvEval."""
    bias_arr = None
    if not data.acc_bias_const or data.kind == KIND_FLOAT and data.bias is None:
        if len(op.inputs) > 2 and op.inputs[2] >= 0:
            bias_arr = ctx.tensor_data(op.inputs[2])
    depthwise_eval_arrays(data, ctx.tensor_data(op.inputs[0]), ctx.tensor_data(op.inputs[1]),
                          bias_arr, ctx.tensor_data(op.outputs[0]), ctx.workspace)


# ----------------------------------------------------------------------------------------------
# FULLY_CONNECTED
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FullyConnectedData:
    """OpDataFullyConnected plus precomputed weights and workspaces."""

    kind: str
    per_channel: bool
    batches: int
    accum_depth: int
    output_depth: int
    float_min: float
    float_max: float
    input_offset: int
    filter_offset: int
    rq: ChannelRequant | None
    wmat: np.ndarray | None  # (accum_depth, output_depth) float64 incl. the filter offset
    bias: np.ndarray | None
    exact_float: bool
    ws_x: int
    ws_acc: int
    ws_acci: int
    ws_tmp: int
    # int kinds: int64 bias + input_offset * column sums of wmat (the input offset folded into
    # a constant, see ConvData); None with acc_bias_const False: computed at eval
    acc_bias: np.ndarray | None = None
    acc_bias_const: bool = True


def fully_connected_requant(kind: str, input_t: Tensor, filter_t: Tensor,
                            bias_t: Tensor | None, output_t: Tensor, activation: str,
                            output_depth: int) -> tuple[ChannelRequant, bool]:
    """CalculateOpDataFullyConnected's quantized part: (requant constants, is_per_channel)."""
    in_scale, _ = tensor_scale_zp(input_t)
    out_scale, out_zp = tensor_scale_zp(output_t)
    scales = filter_scales(filter_t, "filter")
    per_channel = len(scales) > 1
    if per_channel:
        qdim = filter_t.quantization.quantized_dimension if filter_t.quantization else 0
        if len(scales) != filter_t.shape[qdim]:
            raise KernelError(f"FULLY_CONNECTED: {len(scales)} filter scales but dimension "
                              f"{qdim} has {filter_t.shape[qdim]} entries")
        m, s = per_channel_multipliers(in_scale, scales, out_scale, len(scales))
        m, s = m[:output_depth], s[:output_depth]
    else:
        # GetQuantizedConvolutionMultipler: the bias-scale sanity check, then
        # double(input_scale) * double(filter_scale) / double(output_scale). The TFLM source
        # snapshot rounds the product to float32 first, but the pinned wheel does not: outputs
        # sitting on a rounding boundary between the two multipliers match the wheel only with
        # the double product (tests/kernels/test_fully_connected.py, multiplier regression).
        product = float(np.float32(in_scale)) * float(scales[0])
        if bias_t is not None:
            bias_scale = tensor_scale_zp(bias_t)[0]
            if abs(product - bias_scale) / out_scale > 0.02:
                raise KernelError(
                    "FULLY_CONNECTED: bias scale differs from input_scale * filter_scale by more "
                    "than 2% of the output scale; requantize the bias")
        if product < 0:
            raise KernelError("FULLY_CONNECTED: negative input_scale * filter_scale")
        mult, shift = quantize_multiplier(product / out_scale)
        m, s = np.array([mult]), np.array([shift])
    dtype = np.int8 if kind == KIND_INT8 else np.int16
    lo, hi = calculate_activation_range_quantized(activation, out_scale, out_zp, dtype)
    return ChannelRequant.make(m, s, out_zp, lo, hi), per_channel


def fully_connected_op_data(ctx: Any, op: Operator) -> FullyConnectedData:
    """FullyConnectedPrepare/CalculateOpDataFullyConnected arithmetic + workspaces."""
    name = "FULLY_CONNECTED"
    opts = op.options
    input_t = _required(ctx, op.inputs[0], "input", name)
    filter_t = _required(ctx, op.inputs[1], "filter", name)
    output_t = _required(ctx, op.outputs[0], "output", name)
    bias_t = ctx.tensor(op.inputs[2]) if len(op.inputs) > 2 else None
    kind = _kind(name, input_t, filter_t, output_t, bias_t,
                 getattr(opts, "quantized_bias_type", "FLOAT32"), False)
    if len(filter_t.shape) < 2 or len(output_t.shape) < 1:
        raise KernelError(f"{name}: filter must be at least 2-D and output at least 1-D")
    accum_depth = filter_t.shape[-1]
    output_depth = output_t.shape[-1]
    if output_depth > filter_t.shape[-2]:
        raise KernelError(f"{name}: output depth {output_depth} exceeds the filter's "
                          f"{filter_t.shape[-2]} units")
    batches = int(np.prod(output_t.shape[:-1], dtype=np.int64))
    in_count = int(np.prod(input_t.shape, dtype=np.int64))
    if in_count < batches * accum_depth:
        raise KernelError(f"{name}: input has {in_count} elements, fewer than batches "
                          f"{batches} x accum depth {accum_depth}")
    activation = opts.fused_activation_function
    fmin, fmax = calculate_activation_range_float(activation)
    rq = None
    per_channel = False
    input_offset = filter_offset = 0
    if kind != KIND_FLOAT:
        rq, per_channel = fully_connected_requant(kind, input_t, filter_t, bias_t, output_t,
                                                  activation, output_depth)
        input_offset = -tensor_scale_zp(input_t)[1]  # added for int8 and int16 alike
        if not per_channel:  # the per-channel kernel ignores the filter zero point
            filter_offset = -tensor_scale_zp(filter_t)[1]
    exact_float = kind == KIND_FLOAT and batches * accum_depth * output_depth <= EXACT_FLOAT_WORK
    filt = _const(filter_t)
    wmat = None if filt is None else _fc_wmat(filt, output_depth, accum_depth, filter_offset,
                                              exact_float)
    bias_data = _const(bias_t)
    bias = None
    if bias_data is not None:
        bias = np.asarray(bias_data, dtype=np.float32 if kind == KIND_FLOAT else np.int64)
        bias = bias.reshape(-1)[:output_depth]
    # All scratch: the staged input, the accumulators and temporaries are written (or
    # zero-filled) by eval before they are read.
    def scratch(shape: tuple[int, ...], dtype: Any) -> int:
        return int(ctx.request_workspace(shape, dtype, persistent=False))

    ws_x = scratch((batches, accum_depth) if not exact_float else (0,), np.float64)
    ws_acc = scratch((batches, output_depth), np.float32 if exact_float else np.float64)
    ws_acci = ws_tmp = -1
    if kind != KIND_FLOAT:
        ws_acci = scratch((batches, output_depth), np.int64)
        ws_tmp = scratch((batches, output_depth), np.int64)
    elif exact_float:
        ws_tmp = scratch((batches, output_depth), np.float32)
    acc_bias_const = (wmat is not None or input_offset == 0) and \
        (bias_t is None or bias_data is not None)
    acc_bias = None
    if kind != KIND_FLOAT and acc_bias_const:
        sums = np.zeros(output_depth) if wmat is None else wmat.sum(axis=0)
        acc_bias = folded_bias(sums, input_offset, bias)
    return FullyConnectedData(kind, per_channel, batches, accum_depth, output_depth, fmin, fmax,
                              input_offset, filter_offset, rq, wmat, bias, exact_float, ws_x,
                              ws_acc, ws_acci, ws_tmp, acc_bias, acc_bias_const)


def _fc_wmat(filt: np.ndarray, output_depth: int, accum_depth: int, filter_offset: int,
             exact_float: bool) -> np.ndarray:
    """(accum_depth, output_depth) weights: float32 for the TFLM-ordered float sum, else
    float64 for the GEMM (integer kinds include the filter offset)."""
    w = np.asarray(filt).reshape(-1, accum_depth)[:output_depth]
    if exact_float:
        return np.ascontiguousarray(w.astype(np.float32).T)
    return np.ascontiguousarray((w.astype(np.float64) + filter_offset).T)


def fully_connected_eval_arrays(data: FullyConnectedData, x: np.ndarray, filt: np.ndarray,
                                bias_arr: np.ndarray | None, out: np.ndarray, ws: Any) -> None:
    wmat = data.wmat
    if wmat is None:
        wmat = _fc_wmat(filt, data.output_depth, data.accum_depth, data.filter_offset,
                        data.exact_float)
    x2 = x.reshape(-1)[:data.batches * data.accum_depth].reshape(data.batches, data.accum_depth)
    out2 = out.reshape(data.batches, data.output_depth)
    bias = data.bias if data.bias is not None else (
        None if bias_arr is None else bias_arr.reshape(-1)[:data.output_depth])
    if data.kind == KIND_FLOAT:
        if data.exact_float:  # reference_ops::FullyConnected's sequential float32 sum
            acc = ws(data.ws_acc)
            tmp = ws(data.ws_tmp)
            acc.fill(0.0)
            for d in range(data.accum_depth):
                np.multiply(x2[:, d:d + 1], wmat[d], out=tmp)
                acc += tmp
        else:
            xs = ws(data.ws_x)
            np.copyto(xs, x2)
            acc = ws(data.ws_acc)
            gemm(xs, wmat, acc)
        np.copyto(out2, acc, casting="unsafe")
        if bias is not None:
            np.add(out2, np.asarray(bias, np.float32), out=out2)
        clip_inplace(out2, np.float32(data.float_min), np.float32(data.float_max))
        return
    xs = ws(data.ws_x)
    np.copyto(xs, x2, casting="unsafe")
    acc = ws(data.ws_acc)
    gemm(xs, wmat, acc)
    acci = ws(data.ws_acci)
    np.copyto(acci, acc, casting="unsafe")
    acc_bias = data.acc_bias if data.acc_bias_const else \
        folded_bias(wmat.sum(axis=0), data.input_offset, bias)
    if acc_bias is not None:
        acci += acc_bias
    assert data.rq is not None
    if data.kind == KIND_INT16_ACC64:
        requantize_int64_inplace(acci, data.rq, out2)
        return
    if data.kind == KIND_INT16_ACC32:
        acci += 1 << 31
        np.bitwise_and(acci, 0xFFFFFFFF, out=acci)
        acci -= 1 << 31
    requantize_inplace(acci, data.rq, out2, ws(data.ws_tmp))


def fully_connected_eval(ctx: Any, op: Operator, data: FullyConnectedData) -> None:
    """FullyConnectedEval."""
    bias_arr = None
    if data.bias is None and len(op.inputs) > 2 and op.inputs[2] >= 0:
        bias_arr = ctx.tensor_data(op.inputs[2])
    fully_connected_eval_arrays(data, ctx.tensor_data(op.inputs[0]),
                                ctx.tensor_data(op.inputs[1]), bias_arr,
                                ctx.tensor_data(op.outputs[0]), ctx.workspace)
