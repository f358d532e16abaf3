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
from functools import partial
from typing import Any, Callable

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels import native
from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels._conv_common import (
    CHUNK_BYTES,
    GEMM_MACS_PER_CALL,
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
    phased_shape,
    phased_taps,
    tile_taps,
)
from tinyarena.kernels._fma import fma32, fused_dot_accumulate
from tinyarena.kernels._quant import (
    ChannelRequant,
    bound_requantize,
    calculate_activation_range_float,
    calculate_activation_range_quantized,
    clip_inplace,
    per_channel_multipliers,
    quantize_multiplier,
    requantize_inplace,
    requantize_int64_inplace,
    tensor_quant,
)
from tinyarena.kernels._tflm_version import WHEEL, ScaleArithmetic, scale_arithmetic
from tinyarena.kernels.base import required_tensor
from tinyarena.model.types import Operator, Tensor, TensorType

# Float layers whose sequential (TFLM-ordered) sum costs at most this many multiply-adds are
# computed in TFLM's order, giving identical float32 results; larger ones use a GEMM.
EXACT_FLOAT_WORK = 4_000_000

KIND_FLOAT = "float32"
KIND_INT8 = "int8"
KIND_INT16_ACC32 = "int16x8/int32"
KIND_INT16_ACC64 = "int16x8/int64"


def filter_scales(t: Tensor, role: str) -> np.ndarray:
    q = t.quantization
    if q is None or len(q.scale) == 0:
        raise KernelError(f"{role} tensor {t.name!r} is not quantized; a quantized kernel needs "
                          "affine quantization on its filter")
    return np.asarray(q.scale, dtype=np.float32)


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


def _require_quantized(t: Tensor, role: str) -> None:
    """TFLM refuses a quantized conv whose input is not affine-quantized, and one whose output
    scale is zero (CalculateActivationRangeQuantized's overflow check, or with no activation
    an infinite multiplier that is undefined behaviour in C): both are broken exports."""
    if tensor_quant(t).scale == 0.0:
        raise KernelError(f"{role} tensor {t.name!r} is not quantized; a quantized kernel needs "
                          f"a scale and zero point on its {role}")


def conv_requant(kind: str, input_t: Tensor, filter_t: Tensor, output_t: Tensor,
                 activation: str, channels: int) -> ChannelRequant:
    """PopulateConvolutionQuantizationParams + CalculateActivationRangeQuantized (the
    CalculateOpData* of CONV_2D, DEPTHWISE_CONV_2D and TRANSPOSE_CONV all call these)."""
    _require_quantized(input_t, "input")
    _require_quantized(output_t, "output")
    in_scale = tensor_quant(input_t).scale
    out_scale, out_zp = tensor_quant(output_t)
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


def _op_tensors(ctx: Any, op: Operator, name: str, input_i: int = 0, filter_i: int = 1,
                bias_i: int = 2, output_i: int = 0
                ) -> tuple[Tensor, Tensor, Tensor | None, Tensor]:
    """(input, filter, bias or None, output): input, filter and output are required; the bias
    may be omitted (-1) or left out of a shorter input list."""
    input_t = required_tensor(ctx, op.inputs[input_i], name, "input")
    filter_t = required_tensor(ctx, op.inputs[filter_i], name, "filter")
    output_t = required_tensor(ctx, op.outputs[output_i], name, "output")
    bias_t = ctx.tensor(op.inputs[bias_i]) if len(op.inputs) > bias_i else None
    return input_t, filter_t, bias_t, output_t


def _quantized_params(name: str, kind: str, input_t: Tensor, filter_t: Tensor,
                      output_t: Tensor, activation: str, channels: int,
                      quantized_dimension: int) -> tuple[ChannelRequant | None, int]:
    """(requantisation, input offset) as CalculateOpDataConv and CalculateOpDataDepthwiseConv
    fill them: none and 0 for float; the offset is -input zero point for int8 only."""
    if kind == KIND_FLOAT:
        return None, 0
    _check_per_channel_count(filter_t, quantized_dimension, name)
    rq = conv_requant(kind, input_t, filter_t, output_t, activation, channels)
    return rq, (-tensor_quant(input_t)[1] if kind == KIND_INT8 else 0)


def _padding_and_geometry(opts: Any, input_t: Tensor, filter_t: Tensor, output_t: Tensor
                          ) -> tuple[Padding, ConvGeometry]:
    """ComputePaddingHeightWidth as CalculateOpDataConv / CalculateOpDataDepthwiseConv call it
    (filter (., fh, fw, .)), and the geometry of the numpy kernel."""
    stride_h, stride_w = int(opts.stride_h), int(opts.stride_w)
    dil_h, dil_w = int(opts.dilation_h_factor), int(opts.dilation_w_factor)
    padding, _, _ = compute_padding_height_width(
        stride_h, stride_w, dil_h, dil_w, input_t.shape[1], input_t.shape[2],
        filter_t.shape[1], filter_t.shape[2], opts.padding)
    geom = conv_geometry(input_t.shape, filter_t.shape, output_t.shape, stride_h, stride_w,
                         dil_h, dil_w, padding)
    return padding, geom


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

    The GEMM path works in chunks of ``chunk_rows`` output rows (``chunk_pixels`` pixels for a
    pointwise conv): im2col, GEMM, then bias, requantisation or clamp straight into the
    output, so the accumulators are chunk-sized (at most about CHUNK_BYTES each) whatever the
    layer size.
    """

    kind: str
    geom: ConvGeometry
    padding: Padding
    groups: int
    float_min: float
    float_max: float
    input_offset: int
    rq: ChannelRequant | None
    ws_wmat: int  # persistent (groups, K, out_c / groups) weights; -1 for a runtime filter
    bias: np.ndarray | None  # float32 bias of the float kernel (None: absent or not const)
    acc_bias: np.ndarray | None  # int kinds: int64 bias + off * sum(w), when all const
    acc_bias_const: bool  # False: a runtime filter or bias, acc_bias is computed at eval
    border: int  # value of the buffer's border: the int8 input zero point, else 0
    exact_float: bool
    chunk_rows: int  # output rows per chunk (im2col path)
    chunk_pixels: int  # output pixels per chunk (pointwise path)
    ws_padded: int  # bordered input; for a pointwise conv a chunk of staged input rows
    ws_cols: int
    ws_acc: int
    ws_acci: int
    ws_tmp: int
    gemm_dtype: Any = np.float64  # of the padded input, im2col tiles, weights and GEMM sums
    fused: bool = False  # float sums as fused multiply-adds (the target's ``float_fma``)
    filter_finite: bool = True  # False: a constant float filter holds inf or NaN


def float32_gemm_is_exact(filt: np.ndarray) -> bool:
    """Can an int8 conv run its GEMM in float32 and still get the exact integer sums?

    The GEMM multiplies raw int8 inputs (or the zero point in the border: |value| <= 128) by
    the weights. Every product and every partial sum, in whatever order BLAS adds them, is
    bounded by 128 * sum_k |w[o, k]| for the worst output channel o; below 2**24 all of them
    are integers float32 represents exactly, so the result is the integer sum TFLM computes.
    Halves the GEMM's time and memory traffic (and the weight copy) for typical int8 layers.
    """
    a = np.asarray(filt)
    # |int8| and |int8 + offset| (within 255) fit int16: a quarter of the int64 copy's bytes
    narrow = a.dtype.kind in "iu" and a.dtype.itemsize == 1
    depth = a.size // max(1, a.shape[0]) if a.ndim else a.size
    if narrow and a.dtype.kind == "i" and 128 * 128 * depth < (1 << 24):
        return True  # |w| <= 128 everywhere, so no row can reach the bound (sizing skips the sum)
    w = np.abs(a.astype(np.int16 if narrow else np.int64).reshape(a.shape[0], -1))
    return int(w.sum(axis=1, dtype=np.int64).max(initial=0)) * 128 < (1 << 24)


def constant_workspace(ctx: Any, array: np.ndarray) -> int:
    """A persistent workspace holding ``array`` (weights converted in prepare): the context
    keeps that array itself, so it is counted in the workspace bytes and held once."""
    return int(ctx.request_workspace(array.shape, array.dtype, initial=array))


def lazy_constant_workspace(ctx: Any, shape: tuple[int, ...], dtype: Any,
                            make: Callable[[], np.ndarray]) -> int:
    """``constant_workspace`` for an array whose shape and dtype are known without making it:
    ``make`` runs only when the interpreter builds its workspaces, so sizing skips the
    conversion."""
    return int(ctx.request_workspace(shape, dtype, initial=make))


def chunk_pixels(channels: int) -> int:
    """Pixels per chunk so that an int64 (pixels, channels) buffer stays within CHUNK_BYTES."""
    return max(1, CHUNK_BYTES // (8 * max(1, channels)))


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
    input_t, filter_t, bias_t, output_t = _op_tensors(ctx, op, name, input_i, filter_i, bias_i,
                                                      output_i)
    kind = _kind(name, input_t, filter_t, output_t, bias_t,
                 getattr(opts, "quantized_bias_type", "FLOAT32"), False)
    padding, geom = _padding_and_geometry(opts, input_t, filter_t, output_t)
    out_c = filter_t.shape[0]
    if output_t.shape[3] != out_c:
        raise KernelError(f"{name}: output depth {output_t.shape[3]} != filter count {out_c}")
    cin_g = filter_t.shape[3]
    if cin_g <= 0 or geom.in_c % cin_g or out_c % (geom.in_c // cin_g):
        raise KernelError(f"{name}: input depth {geom.in_c} is not a multiple of the filter "
                          f"depth {cin_g} (groups must divide both)")
    groups = geom.in_c // cin_g
    activation = opts.fused_activation_function
    fmin, fmax = calculate_activation_range_float(activation)
    rq, input_offset = _quantized_params(name, kind, input_t, filter_t, output_t, activation,
                                         out_c, 0)
    filt = _const(filter_t)
    k = geom.filter_h * geom.filter_w * cin_g  # per group
    m = geom.batches * geom.out_h * geom.out_w
    fused = kind == KIND_FLOAT and bool(getattr(ctx.target, "float_fma", False))
    # A fused build's sums have one order and one rounding per step: always the exact path.
    exact_float = kind == KIND_FLOAT and (fused or k * m * out_c <= EXACT_FLOAT_WORK)
    gemm_dtype: Any = np.float64
    if (kind == KIND_INT8 and filt is not None and float32_gemm_is_exact(filt)) or exact_float:
        gemm_dtype = np.float32
    # the exact float path reads the float32 filter itself: no copy
    ws_wmat = -1 if filt is None or exact_float else lazy_constant_workspace(
        ctx, (groups, k, out_c // groups), gemm_dtype,
        partial(_conv_wmat, filt, groups, gemm_dtype))
    bias_data = _const(bias_t)
    bias = None
    acc_bias = None
    acc_bias_const = (filt is not None or input_offset == 0) and \
        (bias_t is None or bias_data is not None)
    if kind == KIND_FLOAT:
        bias = None if bias_data is None else np.asarray(bias_data, np.float32)
    elif acc_bias_const:
        sums = np.zeros(out_c, np.int64) if filt is None else \
            np.asarray(filt).reshape(out_c, -1).sum(axis=1, dtype=np.int64)
        acc_bias = folded_bias(sums, input_offset, bias_data)
    pixels = chunk_pixels(out_c)
    if not geom.is_pointwise:  # an im2col tile also stays within IM2COL_TILE_ELEMENTS
        pixels = min(pixels, geom.tile_rows(k) * geom.out_w)
    rows = max(1, min(geom.out_h, pixels // max(1, geom.out_w)))
    pixels = max(1, min(pixels, m))
    chunk = pixels if geom.is_pointwise else rows * geom.out_w

    # Every workspace is scratch: eval writes the padded buffer's border and interior, the
    # im2col tiles, the accumulators and the requantisation temporaries before reading them.
    def scratch(shape: tuple[int, ...], dtype: Any) -> int:
        return int(ctx.request_workspace(shape, dtype, persistent=False))

    ws_cols = ws_acc = ws_acci = ws_tmp = -1
    if exact_float:
        ws_padded = scratch(geom.padded_shape(geom.in_c), gemm_dtype)
        ws_tmp = scratch((m, out_c), np.float32)
    elif geom.is_pointwise:  # the input itself is the im2col matrix: stage it chunk by chunk
        ws_padded = scratch((chunk, geom.in_c), gemm_dtype)
        ws_acc = scratch((chunk, out_c), gemm_dtype)
    else:
        ws_padded = scratch(geom.padded_shape(geom.in_c), gemm_dtype)
        ws_cols = scratch((chunk * k,), gemm_dtype)
        ws_acc = scratch((chunk, out_c), gemm_dtype)
    if kind != KIND_FLOAT:
        ws_acci = scratch((chunk, out_c), np.int64)
        ws_tmp = scratch((chunk, out_c), np.int64)
    return ConvData(kind, geom, padding, groups, fmin, fmax, input_offset, rq, ws_wmat, bias,
                    acc_bias, acc_bias_const, -input_offset, exact_float, rows, pixels,
                    ws_padded, ws_cols, ws_acc, ws_acci, ws_tmp, gemm_dtype, fused,
                    kind != KIND_FLOAT or filt is None or bool(np.isfinite(filt).all()))


def padding_validity(geom: ConvGeometry) -> np.ndarray:
    """(N, padded_h, padded_w, 1) bool: True where the padded buffer holds input, not padding.

    TFLM's float kernels skip the taps that fall in the padding; multiplying the zero border
    instead gives the same sums unless a weight is infinite or NaN (0 * inf is NaN). Kernels
    use this mask only for such filters."""
    valid = np.zeros(geom.padded_shape(1), bool)
    geom.interior(valid)[...] = True
    return valid


def _conv_float_exact(padded: np.ndarray, geom: ConvGeometry, filt: np.ndarray, groups: int,
                      out: np.ndarray, tmp: np.ndarray, fused: bool = False,
                      valid: np.ndarray | None = None) -> None:
    """reference_ops::Conv's float32 sum in its own order: taps (ky, kx), then input channels;
    ``fused``: each ``total += a * b`` one fused multiply-add (a build with ``float_fma``).

    ``padded`` and ``filt`` are float32; ``out`` and ``tmp`` (N, out_h, out_w, out_c).
    ``valid`` (:func:`padding_validity`): products of padded taps are dropped, as TFLM skips
    those taps (needed only when a weight is not finite).
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
                skip = None if valid is None else ~geom.tap(valid, ky, kx)
                for c in range(g * cin_g, (g + 1) * cin_g):
                    w = filt[cols, ky, kx, c - g * cin_g]
                    if fused:
                        total = fma32(view[..., c:c + 1], w, a)
                        a[...] = total if skip is None else np.where(skip, a, total)
                        continue
                    np.multiply(view[..., c:c + 1], w, out=t)
                    if skip is not None:
                        np.copyto(t, 0.0, where=skip)
                    np.add(a, t, out=a)


@dataclass(frozen=True)
class _ConvChunkEnd:
    """What happens to each chunk of GEMM sums: bias + requantisation, or bias + clamp."""

    data: ConvData
    acc_bias: np.ndarray | None  # int kinds
    bias: np.ndarray | None  # float kind
    acci: np.ndarray | None  # (chunk, out_c) int64 scratch
    tmp: np.ndarray | None

    def __call__(self, acc: np.ndarray, out: np.ndarray) -> None:
        data = self.data
        if data.kind == KIND_FLOAT:
            np.copyto(out, acc, casting="unsafe")
            if self.bias is not None:
                np.add(out, self.bias, out=out)
            clip_inplace(out, np.float32(data.float_min), np.float32(data.float_max))
            return
        assert data.rq is not None and self.acci is not None and self.tmp is not None
        count = acc.shape[0]
        acci = self.acci[:count]
        np.copyto(acci, acc, casting="unsafe")
        if self.acc_bias is not None:
            acci += self.acc_bias
        if data.kind == KIND_INT16_ACC64:
            requantize_int64_inplace(acci, data.rq, out)
            return
        if data.kind == KIND_INT16_ACC32:  # int32 accumulation wraps as in C
            acci += 1 << 31
            np.bitwise_and(acci, 0xFFFFFFFF, out=acci)
            acci -= 1 << 31
        requantize_inplace(acci, data.rq, out, self.tmp[:count])


def _gemm_groups(a: np.ndarray, wmat: np.ndarray, acc: np.ndarray, groups: int,
                 cin_g: int) -> None:
    """acc = a @ wmat per group; for groups > 1, ``a`` holds every group's columns side by
    side (pointwise) and group g's output channels are acc's g-th column block."""
    if groups == 1:
        gemm(a, wmat[0], acc)
        return
    per_group = wmat.shape[2]
    for g in range(groups):  # grouped convs are rare: numpy may buffer the strided operands
        gemm(a[:, g * cin_g:(g + 1) * cin_g], wmat[g],
             acc[:, g * per_group:(g + 1) * per_group])


def conv2d_eval_arrays(data: ConvData, x: np.ndarray, filt: np.ndarray,
                       bias_arr: np.ndarray | None, out: np.ndarray, ws: Any) -> None:
    """The conv itself, on arrays; ``ws(handle)`` returns a workspace."""
    geom = data.geom
    # constant filters were checked at prepare; a runtime one is checked on the small exact
    # path only (a large conv with a runtime non-finite filter keeps the zero-padding product)
    finite = data.filter_finite and not (data.exact_float and not np.isfinite(filt).all())
    if data.exact_float or not finite:
        if data.exact_float:
            padded = ws(data.ws_padded)  # scratch: border and interior written every eval
            tmp = ws(data.ws_tmp).reshape(out.shape)
        else:  # a non-finite filter: the exact path, on temporaries (a rare case)
            padded = np.empty(geom.padded_shape(geom.in_c), np.float32)
            tmp = np.empty(out.shape, np.float32)
        fill_border(padded, geom, data.border)
        fill_padded(padded, geom, x)
        valid = None if finite else padding_validity(geom)
        _conv_float_exact(padded, geom, np.asarray(filt, np.float32), data.groups, out, tmp,
                          data.fused, valid)
        bias = data.bias if data.bias is not None or bias_arr is None else bias_arr
        if bias is not None:
            np.add(out, np.asarray(bias, np.float32), out=out)
        clip_inplace(out, np.float32(data.float_min), np.float32(data.float_max))
        return
    wmat = ws(data.ws_wmat) if data.ws_wmat >= 0 else \
        _conv_wmat(filt, data.groups, data.gemm_dtype)
    end = _chunk_end(data, wmat, bias_arr, ws)
    out_c = out.shape[3]
    out2 = out.reshape(-1, out_c)
    acc = ws(data.ws_acc)
    cin_g = geom.in_c // data.groups
    if geom.is_pointwise:
        xin = x.reshape(-1, geom.in_c)
        stage = ws(data.ws_padded)
        step = data.chunk_pixels
        for p0 in range(0, xin.shape[0], step):
            p1 = min(xin.shape[0], p0 + step)
            a = stage[:p1 - p0]
            np.copyto(a, xin[p0:p1], casting="unsafe")
            _gemm_groups(a, wmat, acc[:p1 - p0], data.groups, cin_g)
            end(acc[:p1 - p0], out2[p0:p1])
        return
    padded = ws(data.ws_padded)  # scratch: border and interior written every eval
    fill_border(padded, geom, data.border)
    fill_padded(padded, geom, x)
    cols = ws(data.ws_cols)
    k = geom.filter_h * geom.filter_w * cin_g
    for n in range(geom.batches):
        for y0 in range(0, geom.out_h, data.chunk_rows):
            y1 = min(geom.out_h, y0 + data.chunk_rows)
            count = (y1 - y0) * geom.out_w
            chunk = acc[:count]
            for g in range(data.groups):
                image = padded[n:n + 1, :, :, g * cin_g:(g + 1) * cin_g]
                tile = cols[:count * k].reshape(1, y1 - y0, geom.out_w, geom.filter_h,
                                                geom.filter_w, cin_g)
                np.copyto(tile, geom.patches(image, y0, y1))
                per_group = wmat.shape[2]
                gemm(tile.reshape(count, k), wmat[g],
                     chunk[:, g * per_group:(g + 1) * per_group])
            start = (n * geom.out_h + y0) * geom.out_w
            end(chunk, out2[start:start + count])


def _chunk_end(data: ConvData, wmat: np.ndarray, bias_arr: np.ndarray | None,
               ws: Any) -> _ConvChunkEnd:
    if data.kind == KIND_FLOAT:
        bias = data.bias if data.bias is not None or bias_arr is None else bias_arr
        return _ConvChunkEnd(data, None, None if bias is None else np.asarray(bias, np.float32),
                             None, None)
    acc_bias = data.acc_bias
    if not data.acc_bias_const:
        sums = wmat.sum(axis=1).reshape(-1)  # exact: integer weights in float
        acc_bias = folded_bias(sums, data.input_offset, bias_arr)
    return _ConvChunkEnd(data, acc_bias, None, ws(data.ws_acci), ws(data.ws_tmp))


@c_float_env
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
    """OpDataConv for the depthwise kernel plus precomputed weights and workspaces.

    Eval sums the taps over ``chunk_rows`` output rows at a time and requantises each chunk
    straight into the output, so the accumulators are chunk-sized (about CHUNK_BYTES for the
    int64 ones) whatever the layer size; only the column-phase input copy is whole.
    """

    kind: str
    geom: ConvGeometry
    padding: Padding
    depth_multiplier: int
    float_min: float
    float_max: float
    input_offset: int
    rq: ChannelRequant | None
    ws_weights: int  # persistent (fh * fw, out_w * C) tiled weights; -1 for a runtime filter
    bias: np.ndarray | None  # float32 bias of the float kernel (None: absent or not const)
    acc_bias: np.ndarray | None  # int kinds, accumulator dtype: bias + off * sum of taps
    acc_bias_const: bool  # False: a runtime filter or bias, acc_bias is computed at eval
    border: int  # value of the buffer's border: the int8 input zero point (see ConvData)
    acc_dtype: Any
    chunk_rows: int
    ws_padded: int
    ws_acc: int  # (chunk_rows, out_w, C) in the accumulator dtype
    ws_tmp: int
    ws_acci: int  # int8 kind: (chunk_rows, out_w, C) int64 requantisation buffers
    ws_tmpi: int
    # Per chunk (n, y0, y1, tap views), made at the first eval and reused: rebuilding the
    # views costs more than the arithmetic of a small layer. Keyed by the padded buffer's
    # identity, so another set of workspaces rebuilds them.
    views: dict = field(default_factory=dict, compare=False, repr=False)
    fused: bool = False  # float sums as fused multiply-adds (the target's ``float_fma``)
    filter_finite: bool = True  # False: a constant float filter holds inf or NaN


def depthwise_op_data(ctx: Any, op: Operator) -> DepthwiseData:
    """DepthwiseConvPrepare/CalculateOpDataDepthwiseConv arithmetic + workspaces."""
    name = "DEPTHWISE_CONV_2D"
    opts = op.options
    input_t, filter_t, bias_t, output_t = _op_tensors(ctx, op, name)
    kind = _kind(name, input_t, filter_t, output_t, bias_t, "FLOAT32", True)
    if kind == KIND_INT16_ACC64 and bias_t is not None and bias_t.type != TensorType.INT64:
        raise KernelError(f"{name}: int16 input needs an int64 bias (TFLM reads it as int64), "
                          f"got {bias_t.type.name}")
    padding, geom = _padding_and_geometry(opts, input_t, filter_t, output_t)
    out_c = output_t.shape[3]
    mult = int(opts.depth_multiplier)
    if filter_t.shape[3] != out_c or mult <= 0 or geom.in_c * mult != out_c:
        raise KernelError(
            f"{name}: output depth {out_c} must equal input depth {geom.in_c} x depth_multiplier "
            f"{mult} and the filter's last dimension {filter_t.shape[3]}")
    activation = opts.fused_activation_function
    fmin, fmax = calculate_activation_range_float(activation)
    rq, input_offset = _quantized_params(name, kind, input_t, filter_t, output_t, activation,
                                         out_c, 3)
    acc_dtype = {KIND_FLOAT: np.float32, KIND_INT8: np.int32}.get(kind, np.int64)
    filt = _const(filter_t)
    ws_weights = -1 if filt is None else \
        constant_workspace(ctx, tile_taps(np.asarray(filt, acc_dtype)[0], geom.out_w))
    bias_data = _const(bias_t)
    bias = acc_bias = None
    acc_bias_const = (filt is not None or input_offset == 0) and \
        (bias_t is None or bias_data is not None)
    if kind == KIND_FLOAT:
        bias = None if bias_data is None else np.asarray(bias_data, np.float32)
    elif acc_bias_const:
        sums = np.zeros(out_c, np.int64) if filt is None else \
            np.asarray(filt)[0].reshape(-1, out_c).sum(axis=0, dtype=np.int64)
        folded = folded_bias(sums, input_offset, bias_data)
        acc_bias = None if folded is None else folded.astype(acc_dtype)  # int32: wraps as C
    rows = max(1, min(geom.out_h, chunk_pixels(out_c) // max(1, geom.out_w)))
    chunk = (rows, geom.out_w, out_c)

    # All scratch: eval writes the phased buffer's border and interior, and every
    # accumulator and temporary, before reading them.
    def scratch(shape: tuple[int, ...], dtype: Any) -> int:
        return int(ctx.request_workspace(shape, dtype, persistent=False))

    ws_padded = scratch(phased_shape(geom, out_c), acc_dtype)
    ws_acc = scratch(chunk, acc_dtype)
    ws_tmp = scratch(chunk, acc_dtype)
    ws_acci = ws_tmpi = -1
    if kind == KIND_INT8:  # the int64 kind requantises its accumulator in place
        ws_acci = scratch(chunk, np.int64)
        ws_tmpi = scratch(chunk, np.int64)
    return DepthwiseData(kind, geom, padding, mult, fmin, fmax, input_offset, rq, ws_weights,
                         bias, acc_bias, acc_bias_const, -input_offset, acc_dtype, rows,
                         ws_padded, ws_acc, ws_tmp, ws_acci, ws_tmpi,
                         fused=kind == KIND_FLOAT and bool(getattr(ctx.target, "float_fma",
                                                                   False)),
                         filter_finite=kind != KIND_FLOAT or filt is None
                         or bool(np.isfinite(filt).all()))


def _depthwise_chunks(data: DepthwiseData, padded: np.ndarray
                      ) -> tuple[tuple[int, int, int, tuple[np.ndarray, ...]], ...]:
    """(n, y0, y1, tap views of those output rows) for every chunk, cached per buffer."""
    cached = data.views.get("chunks")
    if cached is not None and cached[0] is padded:
        return cached[1]
    geom = data.geom
    taps = phased_taps(padded, geom)
    chunks = tuple((n, y0, min(geom.out_h, y0 + data.chunk_rows),
                    tuple(t[n, y0:y0 + data.chunk_rows] for t in taps))
                   for n in range(geom.batches) for y0 in range(0, geom.out_h, data.chunk_rows))
    data.views["chunks"] = (padded, chunks)
    return chunks


def _depthwise_float_skipping_padding(
        data: DepthwiseData, padded: np.ndarray, x: np.ndarray, weights: np.ndarray,
        chunks: tuple[tuple[int, int, int, tuple[np.ndarray, ...]], ...],
        out: np.ndarray) -> None:
    """The float depthwise sums with the padded taps left out, as TFLM's loop skips them:
    for a filter holding inf or NaN, where 0 * weight would be NaN (a rare case, computed on
    temporaries)."""
    geom = data.geom
    valid = np.zeros(padded.shape, np.float32)
    fill_phased_border(valid, geom, 0)
    fill_phased(valid, geom, np.ones(x.shape, np.float32), data.depth_multiplier)
    valid_taps = phased_taps(valid, geom)
    for n, y0, y1, taps in chunks:
        acc: np.ndarray | None = None
        for t, tap in enumerate(taps):
            inside = valid_taps[t][n, y0:y0 + data.chunk_rows]
            if data.fused:  # total = fma(x, w, total) from 0, padded taps skipped
                start = np.zeros(np.shape(tap), np.float32) if acc is None else acc
                acc = np.where(inside == 0, start, fma32(tap, weights[t], start))
                continue
            product = np.where(inside == 0, np.float32(0.0),
                               np.multiply(tap, weights[t], dtype=np.float32))
            acc = product if acc is None else np.add(acc, product, dtype=np.float32)
        if acc is not None:
            out[n, y0:y1] = acc.reshape(out[n, y0:y1].shape)


def depthwise_eval_arrays(data: DepthwiseData, x: np.ndarray, filt: np.ndarray,
                          bias_arr: np.ndarray | None, out: np.ndarray, ws: Any) -> None:
    geom = data.geom
    padded = ws(data.ws_padded)  # scratch: border and interior written every eval
    fill_phased_border(padded, geom, data.border)
    fill_phased(padded, geom, x, data.depth_multiplier)
    weights = ws(data.ws_weights) if data.ws_weights >= 0 else \
        tile_taps(np.asarray(filt, data.acc_dtype)[0], geom.out_w)
    chunks = _depthwise_chunks(data, padded)
    acc_all, tmp_all = ws(data.ws_acc), ws(data.ws_tmp)
    width = acc_all.shape[1] * acc_all.shape[2]
    if data.kind == KIND_FLOAT and not data.filter_finite:
        _depthwise_float_skipping_padding(data, padded, x, weights, chunks, out)
        bias = data.bias if data.bias is not None else bias_arr
        if bias is not None:
            np.add(out, np.asarray(bias, np.float32), out=out)
        clip_inplace(out, np.float32(data.float_min), np.float32(data.float_max))
        return
    if data.kind == KIND_FLOAT:
        bias = data.bias if data.bias is not None else bias_arr
        direct = out.flags.c_contiguous
        for n, y0, y1, taps in chunks:
            dst = out[n, y0:y1]
            rows = dst.reshape(y1 - y0, width) if direct else acc_all[:y1 - y0].reshape(-1, width)
            depthwise_taps_phased(taps, weights, rows, tmp_all[:y1 - y0].reshape(-1, width),
                                  data.fused)
            if not direct:
                np.copyto(dst, acc_all[:y1 - y0])
        if bias is not None:
            np.add(out, np.asarray(bias, np.float32), out=out)
        clip_inplace(out, np.float32(data.float_min), np.float32(data.float_max))
        return
    assert data.rq is not None
    acc_bias = data.acc_bias
    if not data.acc_bias_const:
        sums = np.asarray(filt, np.int64)[0].reshape(-1, out.shape[3]).sum(axis=0)
        folded = folded_bias(sums, data.input_offset, bias_arr)
        acc_bias = None if folded is None else folded.astype(data.acc_dtype)
    for n, y0, y1, taps in chunks:
        acc = acc_all[:y1 - y0]
        depthwise_taps_phased(taps, weights, acc.reshape(-1, width),
                              tmp_all[:y1 - y0].reshape(-1, width))
        if acc_bias is not None:  # TFLM's acc += bias (int32 wraps like C)
            acc += acc_bias
        if data.kind == KIND_INT16_ACC64:  # acc is int64 already
            requantize_int64_inplace(acc, data.rq, out[n, y0:y1])
        else:
            requantize_inplace(acc, data.rq, out[n, y0:y1], ws(data.ws_tmpi)[:y1 - y0],
                               work=ws(data.ws_acci)[:y1 - y0])


@c_float_env
def depthwise_eval(ctx: Any, op: Operator, data: DepthwiseData) -> None:
    """DepthwiseConvEval."""
    bias_arr = None
    if not data.acc_bias_const or data.kind == KIND_FLOAT and data.bias is None:
        if len(op.inputs) > 2 and op.inputs[2] >= 0:
            bias_arr = ctx.tensor_data(op.inputs[2])
    depthwise_eval_arrays(data, ctx.tensor_data(op.inputs[0]), ctx.tensor_data(op.inputs[1]),
                          bias_arr, ctx.tensor_data(op.outputs[0]), ctx.workspace)


# ----------------------------------------------------------------------------------------------
# Bound steps (kernels.base: bind) for convolutions that produce one output pixel
# ----------------------------------------------------------------------------------------------
#
# Streaming models (a ring buffer window in, one new frame out) run many small convolutions
# whose output is a single pixel read from an unpadded window of the input. Their patch is a
# fixed view of the arena, so at bind time the conv becomes one product of that view with the
# weights, then eval's own bias + requantisation. Anything else keeps the general eval.

BIND_MAX_WEIGHT_BYTES = 1 << 16


def _single_pixel_patch(geom: ConvGeometry, x: np.ndarray, channels: int) -> np.ndarray | None:
    """(taps, channels) view of the input window of output pixel (0, 0), or None."""
    if (geom.batches, geom.out_h, geom.out_w) != (1, 1, 1) or geom.needs_border \
            or x.shape[3] != channels:
        return None
    window = x[0, 0:(geom.filter_h - 1) * geom.dilation_h + 1:geom.dilation_h,
               0:(geom.filter_w - 1) * geom.dilation_w + 1:geom.dilation_w, :]
    flat = window.reshape(-1, channels)
    return flat if np.shares_memory(flat, x) else None  # a copy would go stale


def bind_conv2d(ctx: Any, op: Operator, data: ConvData) -> Callable[[], None] | None:
    """CONV_2D: the compiled kernel when the interpreter runs them (``kernels.native``);
    else, int8 with one output pixel: the patch view times the GEMM weights, then the same
    chunk end (bias, requantisation) as :func:`conv2d_eval_arrays`."""
    if native.enabled(ctx):
        from tinyarena.kernels.native import conv as native_conv

        compiled = native_conv.bind_conv2d(ctx, op, data)
        if compiled is not None:
            return compiled
    geom = data.geom
    if data.kind != KIND_INT8 or data.exact_float or data.groups != 1 or data.ws_wmat < 0 \
            or not data.acc_bias_const:
        return None
    x = ctx.tensor_data(op.inputs[0])
    patch = _single_pixel_patch(geom, x, geom.in_c)
    if patch is None:
        return None
    row = patch.reshape(1, -1)
    if not np.shares_memory(row, x):
        return None
    wmat = ctx.workspace(data.ws_wmat)[0]
    if wmat.shape[0] != row.shape[1]:
        return None
    out = ctx.tensor_data(op.outputs[0])
    out2 = out.reshape(1, -1)
    stage = ctx.workspace(data.ws_cols if data.ws_cols >= 0 else data.ws_padded)
    xs = stage.reshape(-1)[:row.shape[1]].reshape(1, -1)
    acc = ctx.workspace(data.ws_acc)[:1]
    acci = ctx.workspace(data.ws_acci)[:1]
    tmp = ctx.workspace(data.ws_tmp)[:1]
    acc_bias, rq = data.acc_bias, data.rq
    if rq is None:
        return None

    requantize = bound_requantize(acci, rq, out2, tmp)

    def step() -> None:  # _ConvChunkEnd's int8 steps, on views made once
        xs[...] = row
        np.dot(xs, wmat, out=acc)
        acci[...] = acc
        if acc_bias is not None:
            np.add(acci, acc_bias, out=acci)
        requantize()
    return step


def bind_depthwise(ctx: Any, op: Operator, data: DepthwiseData) -> Callable[[], None] | None:
    """DEPTHWISE_CONV_2D: the compiled kernel when the interpreter runs them; else, int8,
    multiplier 1, one output pixel: the products of the patch view with the taps summed over
    the taps in eval's int32 accumulator (wrapping as C), then the same bias and
    requantisation as :func:`depthwise_eval_arrays`."""
    if native.enabled(ctx):
        from tinyarena.kernels.native import conv as native_conv

        compiled = native_conv.bind_depthwise(ctx, op, data)
        if compiled is not None:
            return compiled
    geom = data.geom
    if data.kind != KIND_INT8 or data.depth_multiplier != 1 or not data.acc_bias_const:
        return None
    x = ctx.tensor_data(op.inputs[0])
    out = ctx.tensor_data(op.outputs[0])
    channels = out.shape[3]
    patch = _single_pixel_patch(geom, x, channels)
    filt = ctx.tensor_data(op.inputs[1])
    if patch is None or filt.shape[1] * filt.shape[2] != patch.shape[0]:
        return None
    taps = np.ascontiguousarray(np.asarray(filt[0], data.acc_dtype).reshape(-1, channels))
    if 2 * taps.nbytes > BIND_MAX_WEIGHT_BYTES:
        return None
    prod = np.empty_like(taps)  # made once here, rewritten by every step
    acc = ctx.workspace(data.ws_acc).reshape(-1)[:channels]
    acci = ctx.workspace(data.ws_acci).reshape(-1)[:channels]
    tmpi = ctx.workspace(data.ws_tmpi).reshape(-1)[:channels]
    flat_out = out.reshape(-1)
    acc_bias = data.acc_bias
    rq = data.rq
    if rq is None or acc.dtype != taps.dtype:
        return None

    requantize = bound_requantize(acci, rq, flat_out, tmpi)

    def step() -> None:
        np.multiply(patch, taps, out=prod, casting="unsafe")
        np.add.reduce(prod, axis=0, out=acc)
        if acc_bias is not None:
            np.add(acc, acc_bias, out=acc)
        acci[...] = acc  # requantize_inplace's ``work`` copy
        requantize()
    return step


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
    # persistent (accum_depth, output_depth) weights incl. the filter offset, in gemm_dtype;
    # -1 for a runtime filter
    ws_wmat: int
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
    gemm_dtype: Any = np.float64  # float32 when exact (see float32_gemm_is_exact)
    # Small layers (see fully_connected_small): SMALL_NONE, SMALL_INT or SMALL_FLOAT.
    small: int = 0
    ws_wt: int = -1  # SMALL_FLOAT: constant (output_depth, accum_depth) float32 weights
    ws_prod: int = -1  # SMALL_FLOAT: scratch (batches, output_depth, accum_depth) float32
    bias_f: np.ndarray | None = None  # SMALL_FLOAT: (output_depth,) float32 bias, -0.0 as +0.0
    fused: bool = False  # float sums as fused multiply-adds (the target's ``float_fma``)


def fully_connected_requant(kind: str, input_t: Tensor, filter_t: Tensor,
                            bias_t: Tensor | None, output_t: Tensor, activation: str,
                            output_depth: int, arithmetic: ScaleArithmetic = WHEEL
                            ) -> tuple[ChannelRequant, bool]:
    """CalculateOpDataFullyConnected's quantized part: (requant constants, is_per_channel);
    ``arithmetic``: the TFLM version's (``_tflm_version``)."""
    in_scale, _ = tensor_quant(input_t)
    out_scale, out_zp = tensor_quant(output_t)
    # Unlike the convolutions, FULLY_CONNECTED never checks the filter's quantization type: an
    # unquantized filter's TfLiteTensor scale reads 0, the multiplier is 0, TFLM runs it.
    scales = np.asarray([tensor_quant(filter_t).scale], np.float32) \
        if filter_t.quantization is None or len(filter_t.quantization.scale) == 0 \
        else filter_scales(filter_t, "filter")
    per_channel = len(scales) > 1
    if per_channel:
        qdim = filter_t.quantization.quantized_dimension if filter_t.quantization else 0
        if len(scales) != filter_t.shape[qdim]:
            raise KernelError(f"FULLY_CONNECTED: {len(scales)} filter scales but dimension "
                              f"{qdim} has {filter_t.shape[qdim]} entries")
        m, s = per_channel_multipliers(in_scale, scales, out_scale, len(scales))
        m, s = m[:output_depth], s[:output_depth]
    else:
        # GetQuantizedConvolutionMultipler: the bias-scale sanity check on the double product,
        # then the product / double(output_scale). The wheel (8f6596d) multiplies the widened
        # scales in double; TFLM 90b983c2 rounds the product to float32 first. Outputs on a
        # rounding boundary between the two multipliers differ by one step
        # (tests/kernels/test_fully_connected.py, multiplier regression).
        product = float(np.float32(in_scale)) * float(scales[0])
        if bias_t is not None:
            bias_scale = tensor_quant(bias_t)[0]
            if abs(product - bias_scale) / out_scale > 0.02:
                raise KernelError(
                    "FULLY_CONNECTED: bias scale differs from input_scale * filter_scale by more "
                    "than 2% of the output scale; requantize the bias")
        if product < 0:
            raise KernelError("FULLY_CONNECTED: negative input_scale * filter_scale")
        mult, shift = quantize_multiplier(arithmetic.product(in_scale, scales[0]) / out_scale)
        m, s = np.array([mult]), np.array([shift])
    dtype = np.int8 if kind == KIND_INT8 else np.int16
    lo, hi = calculate_activation_range_quantized(activation, out_scale, out_zp, dtype)
    return ChannelRequant.make(m, s, out_zp, lo, hi), per_channel


SMALL_NONE = 0
SMALL_INT = 1
SMALL_FLOAT = 2
# Multiply-adds up to which a float FULLY_CONNECTED takes SMALL_FLOAT: its broadcast multiply
# lets numpy buffer one operand, a few KiB at this size.
SMALL_FLOAT_WORK = 2048


def _fc_small(ctx: Any, kind: str, batches: int, accum_depth: int, output_depth: int,
              exact_float: bool, filt: np.ndarray | None, wmat: np.ndarray | None,
              bias_t: Tensor | None, bias: np.ndarray | None, acc_bias_const: bool
              ) -> tuple[int, int, int, np.ndarray | None]:
    """Which small-layer path applies, with the SMALL_FLOAT constants and workspaces:
    (small, ws_wt, ws_prod, bias_f). ``wmat``: the GEMM weights, or any stand-in for them
    (only whether the layer has constant weights matters here)."""
    macs = batches * accum_depth * output_depth
    if kind == KIND_INT8 and wmat is not None and acc_bias_const \
            and macs <= GEMM_MACS_PER_CALL:
        return SMALL_INT, -1, -1, None
    if kind != KIND_FLOAT or not exact_float or filt is None or macs > SMALL_FLOAT_WORK \
            or (bias_t is not None and bias is None):
        return SMALL_NONE, -1, -1, None
    wt = np.ascontiguousarray(np.asarray(filt, np.float32).reshape(-1, accum_depth)
                              [:output_depth])
    # total + bias in TFLM starts from total = 0.0f; np.add.accumulate starts from the first
    # product instead, which differs only in a -0.0 total. total + b with b = +0.0 turns that
    # into +0.0, and a -0.0 bias may become +0.0 (s + -0.0 == s + +0.0 for the C total s,
    # which is never -0.0).
    bias_f = np.zeros(output_depth, np.float32) if bias is None else \
        np.asarray(bias, np.float32).reshape(-1)[:output_depth] + np.float32(0.0)
    ws_wt = constant_workspace(ctx, wt)
    ws_prod = int(ctx.request_workspace((batches, output_depth, accum_depth), np.float32,
                                        persistent=False))
    return SMALL_FLOAT, ws_wt, ws_prod, np.ascontiguousarray(bias_f)


def fully_connected_op_data(ctx: Any, op: Operator) -> FullyConnectedData:
    """FullyConnectedPrepare/CalculateOpDataFullyConnected arithmetic + workspaces."""
    name = "FULLY_CONNECTED"
    opts = op.options
    input_t, filter_t, bias_t, output_t = _op_tensors(ctx, op, name)
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
                                                  activation, output_depth,
                                                  scale_arithmetic(ctx.target))
        input_offset = -tensor_quant(input_t)[1]  # added for int8 and int16 alike
        if not per_channel:  # the per-channel kernel ignores the filter zero point
            filter_offset = -tensor_quant(filter_t)[1]
    fused = kind == KIND_FLOAT and bool(getattr(ctx.target, "float_fma", False))
    # A fused build's sums have one order and one rounding per step: always the exact path.
    exact_float = kind == KIND_FLOAT and (
        fused or batches * accum_depth * output_depth <= EXACT_FLOAT_WORK)
    filt = _const(filter_t)
    gemm_dtype: Any = np.float32 if exact_float else np.float64
    if kind == KIND_INT8 and filt is not None and float32_gemm_is_exact(
            _offset_filter(filt, accum_depth, output_depth, filter_offset)):
        gemm_dtype = np.float32  # raw int8 inputs: the conv's bound holds
    # The GEMM weights are made by the interpreter only (sizing skips the conversion).
    ws_wmat = -1 if filt is None else lazy_constant_workspace(
        ctx, (accum_depth, output_depth), gemm_dtype,
        partial(_fc_wmat, filt, output_depth, accum_depth, filter_offset, gemm_dtype))
    bias_data = _const(bias_t)
    bias = None
    if bias_data is not None:
        bias = np.asarray(bias_data, dtype=np.float32 if kind == KIND_FLOAT else np.int64)
        bias = bias.reshape(-1)[:output_depth]
    # All scratch: the staged input, the accumulators and temporaries are written (or
    # zero-filled) by eval before they are read.
    def scratch(shape: tuple[int, ...], dtype: Any) -> int:
        return int(ctx.request_workspace(shape, dtype, persistent=False))

    ws_x = scratch((batches, accum_depth) if not exact_float else (0,), gemm_dtype)
    ws_acc = scratch((batches, output_depth), gemm_dtype)
    ws_acci = ws_tmp = -1
    if kind != KIND_FLOAT:
        ws_acci = scratch((batches, output_depth), np.int64)
        ws_tmp = scratch((batches, output_depth), np.int64)
    elif exact_float:
        ws_tmp = scratch((batches, output_depth), np.float32)
    acc_bias_const = (filt is not None or input_offset == 0) and \
        (bias_t is None or bias_data is not None)
    acc_bias = None
    if kind != KIND_FLOAT and acc_bias_const:
        # each output's sum of (w + filter offset): the GEMM weights' column sums, exactly
        sums = np.zeros(output_depth, np.int64) if filt is None else \
            np.asarray(filt).reshape(-1, accum_depth)[:output_depth].sum(
                axis=1, dtype=np.int64) + accum_depth * filter_offset
        acc_bias = folded_bias(sums, input_offset, bias)
    # A fused build takes the general path (its fused_dot_accumulate), never the small one.
    small = (SMALL_NONE, -1, -1, None) if fused else \
        _fc_small(ctx, kind, batches, accum_depth, output_depth, exact_float, filt, filt,
                  bias_t, bias, acc_bias_const)
    return FullyConnectedData(kind, per_channel, batches, accum_depth, output_depth, fmin, fmax,
                              input_offset, filter_offset, rq, ws_wmat, bias, exact_float,
                              ws_x, ws_acc, ws_acci, ws_tmp, acc_bias, acc_bias_const,
                              gemm_dtype, *small, fused=fused)


def _offset_filter(filt: np.ndarray, accum_depth: int, output_depth: int,
                   filter_offset: int) -> np.ndarray:
    """The (output_depth, accum_depth) integer weights plus the filter offset: int16 when the
    filter is 8-bit and the offset small (every sum fits), else int64."""
    w = np.asarray(filt).reshape(-1, accum_depth)[:output_depth]
    if w.dtype.kind in "iu" and w.dtype.itemsize == 1 and abs(filter_offset) <= 255:
        return w.astype(np.int16) + np.int16(filter_offset)
    return w.astype(np.int64) + filter_offset


def _fc_wmat(filt: np.ndarray, output_depth: int, accum_depth: int, filter_offset: int,
             dtype: Any) -> np.ndarray:
    """(accum_depth, output_depth) weights in ``dtype`` (float32 for the TFLM-ordered float
    sum or an exact float32 GEMM, else float64); integer kinds include the filter offset."""
    w = np.asarray(filt).reshape(-1, accum_depth)[:output_depth]
    if filter_offset:
        w = w.astype(np.int64) + filter_offset
    return np.ascontiguousarray(w.astype(dtype).T)


def fully_connected_eval_arrays(data: FullyConnectedData, x: np.ndarray, filt: np.ndarray,
                                bias_arr: np.ndarray | None, out: np.ndarray, ws: Any) -> None:
    wmat = ws(data.ws_wmat) if data.ws_wmat >= 0 else \
        _fc_wmat(filt, data.output_depth, data.accum_depth, data.filter_offset, data.gemm_dtype)
    x2 = x.reshape(-1)[:data.batches * data.accum_depth].reshape(data.batches, data.accum_depth)
    out2 = out.reshape(data.batches, data.output_depth)
    bias = data.bias if data.bias is not None else (
        None if bias_arr is None else bias_arr.reshape(-1)[:data.output_depth])
    if data.kind == KIND_FLOAT:
        if data.exact_float:  # reference_ops::FullyConnected's sequential float32 sum
            acc = ws(data.ws_acc)
            tmp = ws(data.ws_tmp)
            acc.fill(0.0)
            if data.fused:
                fused_dot_accumulate(x2, wmat, acc)
            else:
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
        folded_bias(wmat.sum(axis=0, dtype=np.float64), data.input_offset, bias)
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


def fully_connected_small(data: FullyConnectedData, x: np.ndarray, out: np.ndarray,
                         ws: Any) -> None:
    """fully_connected_eval_arrays for small layers with constant weights, in fewer calls.

    SMALL_INT: one np.dot (exact, as the general path's GEMM) and the requantisation.
    SMALL_FLOAT: reference_ops::FullyConnected's sequential float32 sums as one product array
    accumulated along its rows (np.add.accumulate is sequential), then + bias and the clamp.
    """
    x2 = x.reshape(-1)[:data.batches * data.accum_depth].reshape(data.batches,
                                                                 data.accum_depth)
    out2 = out.reshape(data.batches, data.output_depth)
    if data.small == SMALL_INT:
        xs = ws(data.ws_x)
        np.copyto(xs, x2, casting="unsafe")
        acc = ws(data.ws_acc)
        np.dot(xs, ws(data.ws_wmat), out=acc)
        acci = ws(data.ws_acci)
        np.copyto(acci, acc, casting="unsafe")
        if data.acc_bias is not None:
            np.add(acci, data.acc_bias, out=acci)
        if data.rq is None:
            raise KernelError("internal error: a quantized FULLY_CONNECTED was prepared without "
                              "its requantisation constants")
        requantize_inplace(acci, data.rq, out2, ws(data.ws_tmp))
        return
    if data.bias_f is None:
        raise KernelError("internal error: a small float FULLY_CONNECTED was prepared without "
                          "its bias row")
    prod = ws(data.ws_prod)
    np.multiply(ws(data.ws_wt), x2[:, None, :], out=prod)
    np.add.accumulate(prod, axis=2, out=prod)
    np.add(prod[:, :, -1], data.bias_f, out=out2)
    np.maximum(out2, np.float32(data.float_min), out=out2)
    np.minimum(out2, np.float32(data.float_max), out=out2)


def bind_fully_connected(ctx: Any, op: Operator, data: FullyConnectedData
                         ) -> Callable[[], None] | None:
    """The compiled kernel when the interpreter runs them; else :func:`fully_connected_small`'s
    steps over views and constants fixed at bind time (the small layers of tiny models, where
    each numpy call costs more than its arithmetic)."""
    if native.enabled(ctx):
        from tinyarena.kernels.native import conv as native_conv

        compiled = native_conv.bind_fully_connected(ctx, op, data)
        if compiled is not None:
            return compiled
    if not data.small:
        return None
    x = ctx.tensor_data(op.inputs[0])
    out = ctx.tensor_data(op.outputs[0])
    if not (x.flags.c_contiguous and out.flags.c_contiguous):
        return None
    x2 = x.reshape(-1)[:data.batches * data.accum_depth].reshape(data.batches,
                                                                 data.accum_depth)
    out2 = out.reshape(data.batches, data.output_depth)
    if data.small == SMALL_INT:
        xs, acc = ctx.workspace(data.ws_x), ctx.workspace(data.ws_acc)
        wmat, acci, tmp = ctx.workspace(data.ws_wmat), ctx.workspace(data.ws_acci), \
            ctx.workspace(data.ws_tmp)
        acc_bias, rq = data.acc_bias, data.rq
        if rq is None:
            return None
        if data.batches * data.accum_depth == 1 and x.dtype == np.int8:
            # The output depends on one int8 value: these very steps, run once at bind on
            # all 256 of them, give every output the op can produce; a step is a row copy.
            probe = np.arange(256, dtype=np.uint8).view(np.int8).reshape(256, 1)
            acc_all = np.dot(probe.astype(xs.dtype), wmat)
            acci_all = acc_all.astype(np.int64)
            if acc_bias is not None:
                acci_all += acc_bias
            table = np.empty((256, data.output_depth), out.dtype)
            requantize_inplace(acci_all, rq, table, np.empty_like(acci_all))
            index = x.reshape(-1).view(np.uint8)
            row = out2.reshape(-1)

            def table_step() -> None:
                row[...] = table[index[0]]
            return table_step

        requantize = bound_requantize(acci, rq, out2, tmp)

        def int_step() -> None:
            xs[...] = x2
            np.dot(xs, wmat, out=acc)
            acci[...] = acc
            if acc_bias is not None:
                np.add(acci, acc_bias, out=acci)
            requantize()
        return int_step
    if data.bias_f is None:
        return None
    prod, wt, bias_f = ctx.workspace(data.ws_prod), ctx.workspace(data.ws_wt), data.bias_f
    x3 = x2[:, None, :]
    last = prod[:, :, -1]
    lo = np.array(data.float_min, np.float32)
    hi = np.array(data.float_max, np.float32)
    # max(x, -inf) and min(x, +inf) change nothing (NaN stays NaN): skip them.
    use_lo, use_hi = bool(np.isfinite(lo)), bool(np.isfinite(hi))

    def float_step() -> None:
        np.multiply(wt, x3, out=prod)
        np.add.accumulate(prod, axis=2, out=prod)
        np.add(last, bias_f, out=out2)
        if use_lo:
            np.maximum(out2, lo, out=out2)
        if use_hi:
            np.minimum(out2, hi, out=out2)
    return float_step


@c_float_env
def fully_connected_eval(ctx: Any, op: Operator, data: FullyConnectedData) -> None:
    """FullyConnectedEval."""
    if data.small:
        fully_connected_small(data, ctx.tensor_data(op.inputs[0]),
                              ctx.tensor_data(op.outputs[0]), ctx.workspace)
        return
    bias_arr = None
    if data.bias is None and len(op.inputs) > 2 and op.inputs[2] >= 0:
        bias_arr = ctx.tensor_data(op.inputs[2])
    fully_connected_eval_arrays(data, ctx.tensor_data(op.inputs[0]),
                                ctx.tensor_data(op.inputs[1]), bias_arr,
                                ctx.tensor_data(op.outputs[0]), ctx.workspace)
