"""Geometry and vectorised building blocks shared by the convolution-style kernels.

TFLM's reference convolutions loop over every output pixel and skip filter taps that fall
outside the image. The same sums are computed here with whole-array numpy operations:

* the input is copied once per invoke into a zero-bordered buffer (after subtracting the input
  zero point, so a border element contributes exactly what a skipped tap does: nothing);
* CONV_2D gathers patches from that buffer (im2col, in bounded tiles of output rows) and runs
  one float64 (or, when provably exact, float32) GEMM per tile, then requantises the tile.
  Products of int8 x int8 (or int16 x int8) summed over a filter stay far below 2**53, so
  the float64 result is the exact integer sum;
* DEPTHWISE_CONV_2D loops over the kh*kw filter taps only, each tap one multiply-add over all
  pixels and channels at once, on a copy of the input split by column phase so that each
  tap's reads are contiguous rows (see phased_shape).
* every GEMM is cut into calls small enough that OpenBLAS runs them on the calling thread.

Every buffer comes from ``ctx.request_workspace`` in prepare, so eval allocates only small
temporaries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tinyarena.errors import KernelError
from tinyarena.kernels._fma import fma32
from tinyarena.model.types import Operator, TensorType

# Largest im2col tile, in float64 elements (8 MiB): bounded memory whatever the layer size.
IM2COL_TILE_ELEMENTS = 1 << 20

# Largest int64 accumulator chunk of the conv kernels, in bytes: the GEMM sums of CONV_2D and
# the tap sums of DEPTHWISE_CONV_2D are made, requantised and stored a band of output rows at a
# time, so their buffers stay about this small (and in cache) whatever the layer size.
CHUNK_BYTES = 1 << 18

# Largest GEMM handed to numpy in one call, in multiply-adds: below OpenBLAS's threading
# threshold of 65536 * 4, see gemm().
GEMM_MACS_PER_CALL = 1 << 17


@dataclass(frozen=True)
class Padding:
    """TFLM's TfLitePaddingValues: leading padding plus the odd extra at the far side."""

    height: int = 0
    width: int = 0
    height_offset: int = 0
    width_offset: int = 0


def effective_filter_size(filter_size: int, dilation: int) -> int:
    """ComputeEffectiveFilterSize: the span a dilated filter covers."""
    return (filter_size - 1) * dilation + 1


def compute_out_size(padding: str, image_size: int, filter_size: int, stride: int,
                     dilation: int = 1) -> int | None:
    """ComputeOutSizeChecked: output extent for SAME/VALID padding, None when invalid."""
    if padding not in ("SAME", "VALID") or image_size < 0 or filter_size <= 0 or stride <= 0 \
            or dilation <= 0:
        return None
    if padding == "SAME":
        value = (image_size + stride - 1) // stride
    else:
        # C division truncates; the numerator can be negative for an oversized filter
        num = image_size + stride - effective_filter_size(filter_size, dilation)
        value = -((-num) // stride) if num < 0 else num // stride
    return None if value < 0 else value


def padding_with_offset(stride: int, dilation: int, in_size: int, filter_size: int,
                        out_size: int) -> tuple[int, int]:
    """ComputePaddingWithOffset: (leading padding, odd offset) for one spatial axis."""
    total = (out_size - 1) * stride + effective_filter_size(filter_size, dilation) - in_size
    total = max(total, 0)
    return total // 2, total % 2


def compute_padding_height_width(stride_h: int, stride_w: int, dilation_h: int,
                                 dilation_w: int, in_h: int, in_w: int, filter_h: int,
                                 filter_w: int, padding: str) -> tuple[Padding, int, int]:
    """ComputePaddingHeightWidth: (padding, out_h, out_w) as TFLM's conv kernels compute them.

    Like TFLM, invalid arguments (zero stride, unknown padding) give zero padding and zero
    output size rather than an error; the kernels then loop over the output tensor's shape.
    """
    out_w = compute_out_size(padding, in_w, filter_w, stride_w, dilation_w)
    if out_w is None:
        return Padding(), 0, 0
    out_h = compute_out_size(padding, in_h, filter_h, stride_h, dilation_h)
    if out_h is None:
        return Padding(), 0, out_w
    ph, oh = padding_with_offset(stride_h, dilation_h, in_h, filter_h, out_h)
    pw, ow = padding_with_offset(stride_w, dilation_w, in_w, filter_w, out_w)
    return Padding(ph, pw, oh, ow), out_h, out_w


@dataclass(frozen=True)
class ConvGeometry:
    """Shapes, strides and the zero-bordered buffer extent of one 2-D convolution."""

    batches: int
    in_h: int
    in_w: int
    in_c: int
    out_h: int
    out_w: int
    filter_h: int
    filter_w: int
    stride_h: int
    stride_w: int
    dilation_h: int
    dilation_w: int
    pad_h: int
    pad_w: int

    @property
    def padded_h(self) -> int:
        reach = (self.out_h - 1) * self.stride_h + (self.filter_h - 1) * self.dilation_h + 1
        return max(self.in_h + self.pad_h, reach)

    @property
    def padded_w(self) -> int:
        reach = (self.out_w - 1) * self.stride_w + (self.filter_w - 1) * self.dilation_w + 1
        return max(self.in_w + self.pad_w, reach)

    @property
    def needs_border(self) -> bool:
        """False when the buffer would equal the input (no padding, nothing read past it)."""
        return (self.pad_h, self.pad_w) != (0, 0) or self.padded_h != self.in_h \
            or self.padded_w != self.in_w

    @property
    def is_pointwise(self) -> bool:
        """A 1x1, stride-1, unpadded conv: the input itself is the im2col matrix."""
        return (self.filter_h, self.filter_w, self.stride_h, self.stride_w) == (1, 1, 1, 1) \
            and not self.needs_border and (self.out_h, self.out_w) == (self.in_h, self.in_w)

    def padded_shape(self, channels: int) -> tuple[int, int, int, int]:
        return (self.batches, self.padded_h, self.padded_w, channels)

    def interior(self, padded: np.ndarray) -> np.ndarray:
        """The view of a padded buffer where the input goes."""
        return padded[:, self.pad_h:self.pad_h + self.in_h, self.pad_w:self.pad_w + self.in_w, :]

    def tap(self, padded: np.ndarray, ky: int, kx: int) -> np.ndarray:
        """Strided view of the padded buffer that filter tap (ky, kx) reads for every output."""
        y0 = ky * self.dilation_h
        x0 = kx * self.dilation_w
        return padded[:, y0:y0 + (self.out_h - 1) * self.stride_h + 1:self.stride_h,
                      x0:x0 + (self.out_w - 1) * self.stride_w + 1:self.stride_w, :]

    def patches(self, padded: np.ndarray, y_start: int, y_stop: int) -> np.ndarray:
        """(N, rows, out_w, fh, fw, C) read-only view of the patches of output rows
        ``y_start:y_stop`` (no copy)."""
        n, _, _, c = padded.shape
        sn, sh, sw, sc = padded.strides
        base = padded[:, y_start * self.stride_h:, :, :]
        return as_strided(
            base,
            shape=(n, y_stop - y_start, self.out_w, self.filter_h, self.filter_w, c),
            strides=(sn, sh * self.stride_h, sw * self.stride_w, sh * self.dilation_h,
                     sw * self.dilation_w, sc),
            writeable=False,
        )

    def tile_rows(self, k: int) -> int:
        """Output rows per im2col tile (one image) so that a tile holds at most
        IM2COL_TILE_ELEMENTS."""
        per_row = max(1, self.out_w * k)
        return max(1, min(self.out_h, IM2COL_TILE_ELEMENTS // per_row))


def conv_geometry(input_shape: tuple[int, ...], filter_shape: tuple[int, ...],
                  output_shape: tuple[int, ...], stride_h: int, stride_w: int,
                  dilation_h: int, dilation_w: int, padding: Padding) -> ConvGeometry:
    """Geometry of an NHWC conv whose filter is (·, fh, fw, ·)."""
    for name, shape in (("input", input_shape), ("filter", filter_shape),
                        ("output", output_shape)):
        if len(shape) != 4:
            raise KernelError(f"convolution {name} must be 4-D (NHWC), got shape {shape}")
    if stride_h <= 0 or stride_w <= 0 or dilation_h <= 0 or dilation_w <= 0:
        raise KernelError(f"convolution strides ({stride_h}, {stride_w}) and dilations "
                          f"({dilation_h}, {dilation_w}) must be positive")
    if input_shape[0] != output_shape[0]:
        raise KernelError(f"convolution batch mismatch: input {input_shape}, "
                          f"output {output_shape}")
    return ConvGeometry(
        batches=input_shape[0], in_h=input_shape[1], in_w=input_shape[2], in_c=input_shape[3],
        out_h=output_shape[1], out_w=output_shape[2], filter_h=filter_shape[1],
        filter_w=filter_shape[2], stride_h=stride_h, stride_w=stride_w, dilation_h=dilation_h,
        dilation_w=dilation_w, pad_h=padding.height, pad_w=padding.width,
    )


def fill_padded(padded: np.ndarray, geom: ConvGeometry, x: np.ndarray) -> None:
    """Copy ``x`` into the buffer's interior, converted to the buffer's dtype (a plain cast
    copy: numpy allocates nothing for it, unlike a mixed-dtype ufunc). The border is never
    written here: :func:`fill_border` writes it (zero, or the input zero point)."""
    np.copyto(geom.interior(padded), x, casting="unsafe")


def fill_border(padded: np.ndarray, geom: ConvGeometry, value: int) -> None:
    """Write ``value`` to every element of a padded buffer outside its interior (the part
    :func:`fill_padded` writes), so a scratch buffer (contents undefined at each eval) is
    fully defined after both. Only the border strips are touched: a few small fills."""
    top, left = geom.pad_h, geom.pad_w
    bottom, right = top + geom.in_h, left + geom.in_w
    if top:
        padded[:, :top].fill(value)
    if bottom < padded.shape[1]:
        padded[:, bottom:].fill(value)
    if left:
        padded[:, top:bottom, :left].fill(value)
    if right < padded.shape[2]:
        padded[:, top:bottom, right:].fill(value)


def gemm(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """out = a @ b, in row chunks of at most GEMM_MACS_PER_CALL multiply-adds.

    OpenBLAS hands a GEMM to its thread pool once m*n*k passes 65536 * 4
    (SMP_THRESHOLD_MIN * GEMM_MULTITHREAD_THRESHOLD in its interface/gemm.c). On a loaded
    two-core machine that hand-off was measured to cost milliseconds per call (a 4.8 ms
    person_detect invoke became 40-110 ms), while TFLM itself is single-threaded. Chunks
    below the threshold keep every call on the calling thread.
    """
    rows, k = a.shape
    n = b.shape[1]
    if rows * k * n <= GEMM_MACS_PER_CALL:
        np.matmul(a, b, out=out)
        return
    step = GEMM_MACS_PER_CALL // max(1, k * n)
    if step >= 1:
        for i in range(0, rows, step):
            np.matmul(a[i:i + step], b, out=out[i:i + step])
        return
    # one row is already too big (a large FULLY_CONNECTED): split the columns as well
    col_step = max(1, GEMM_MACS_PER_CALL // max(1, k))
    for i in range(rows):
        for j in range(0, n, col_step):
            np.matmul(a[i:i + 1], b[:, j:j + col_step], out=out[i:i + 1, j:j + col_step])


# ----------------------------------------------------------------------------------------------
# Column-phase layout for the depthwise tap loop
# ----------------------------------------------------------------------------------------------
#
# A tap of a depthwise conv reads columns x0, x0 + stride_w, x0 + 2 * stride_w, ... of the
# bordered input. In plain NHWC those are not adjacent, so every numpy pass over a tap walks an
# inner loop only C long (C is 1, 8 or 16 in the first layers of small models: slow). Storing
# the bordered input split by column phase, buffer[n, y, x % stride_w, x // stride_w, c], puts
# the columns one tap reads next to each other: each tap is then a (N, out_h, out_w * C) view
# whose inner loop is out_w * C long, and its weights are tiled out_w times to match.


def phased_shape(geom: ConvGeometry, channels: int) -> tuple[int, int, int, int, int]:
    """Shape of the column-phase buffer: (N, padded_h, stride_w, ceil(padded_w / sw), C)."""
    sw = geom.stride_w
    return (geom.batches, geom.padded_h, sw, -(-geom.padded_w // sw), channels)


def fill_phased(buf: np.ndarray, geom: ConvGeometry, x: np.ndarray, repeat: int = 1) -> None:
    """Copy ``x`` (cast to the buffer's dtype) into the interior of a column-phase buffer,
    every input channel repeated ``repeat`` times (depth multiplier: buffer channel
    ``c * repeat + m`` holds input channel ``c``). The border is written by
    :func:`fill_phased_border`, not here."""
    sw = geom.stride_w
    n, h, w, c = x.shape
    rows = slice(geom.pad_h, geom.pad_h + h)
    for phase in range(sw):
        j0 = max(0, -(-(geom.pad_w - phase) // sw))  # first buffer column of this phase inside
        first = phase + sw * j0 - geom.pad_w  # the input column it holds
        if first >= w:
            continue
        count = (w - 1 - first) // sw + 1
        dst = buf[:, rows, phase, j0:j0 + count, :]
        src = x[:, :, first::sw, :]
        if repeat == 1:
            np.copyto(dst, src, casting="unsafe")
        elif c >= repeat:
            np.copyto(dst.reshape(n, h, count, c, repeat), src[..., None], casting="unsafe")
        else:  # few input channels (a grayscale first layer): one pass per replica is faster
            # than a broadcast whose inner loop is only ``repeat`` long
            rep = dst.reshape(n, h, count, c, repeat)
            np.copyto(rep[..., 0], src, casting="unsafe")
            for m in range(1, repeat):
                np.copyto(rep[..., m], rep[..., 0])


def fill_phased_border(buf: np.ndarray, geom: ConvGeometry, value: int) -> None:
    """Write ``value`` to every element of a column-phase buffer that :func:`fill_phased`
    does not write (rows above and below the input, and per phase the columns before and
    after it), so a scratch buffer is fully defined after both."""
    top = geom.pad_h
    bottom = top + geom.in_h
    if top:
        buf[:, :top].fill(value)
    if bottom < buf.shape[1]:
        buf[:, bottom:].fill(value)
    sw = geom.stride_w
    for phase in range(sw):
        j0 = max(0, -(-(geom.pad_w - phase) // sw))  # as in fill_phased
        first = phase + sw * j0 - geom.pad_w
        count = 0 if first >= geom.in_w else (geom.in_w - 1 - first) // sw + 1
        if count == 0:
            buf[:, top:bottom, phase].fill(value)
            continue
        if j0:
            buf[:, top:bottom, phase, :j0].fill(value)
        if j0 + count < buf.shape[3]:
            buf[:, top:bottom, phase, j0 + count:].fill(value)


def phased_tap(buf: np.ndarray, geom: ConvGeometry, ky: int, kx: int) -> np.ndarray:
    """(N, out_h, out_w * C) view of what filter tap (ky, kx) reads for every output."""
    x0 = kx * geom.dilation_w
    phase, j = x0 % geom.stride_w, x0 // geom.stride_w
    y0 = ky * geom.dilation_h
    view = buf[:, y0:y0 + (geom.out_h - 1) * geom.stride_h + 1:geom.stride_h, phase,
               j:j + geom.out_w, :]
    return view.reshape(geom.batches, geom.out_h, geom.out_w * buf.shape[4])


def tile_taps(weights: np.ndarray, out_w: int) -> np.ndarray:
    """(fh, fw, C) depthwise weights -> (fh * fw, out_w * C), each tap's row tiled out_w times
    to line up with :func:`phased_tap` views."""
    fh, fw, c = weights.shape
    return np.ascontiguousarray(np.tile(weights.reshape(fh * fw, 1, c), (1, out_w, 1))
                                .reshape(fh * fw, out_w * c))


def phased_taps(buf: np.ndarray, geom: ConvGeometry) -> tuple[np.ndarray, ...]:
    """Every tap's :func:`phased_tap` view, in TFLM's (ky, kx) order."""
    return tuple(phased_tap(buf, geom, ky, kx)
                 for ky in range(geom.filter_h) for kx in range(geom.filter_w))


def depthwise_taps_phased(taps: tuple[np.ndarray, ...], tiled: np.ndarray, acc: np.ndarray,
                          tmp: np.ndarray, fused: bool = False) -> None:
    """acc = sum over taps in TFLM's (ky, kx) order of tap_view * tiled weights.

    ``taps`` come from :func:`phased_taps`; ``acc`` and ``tmp`` are (N, out_h, out_w * C) in
    the accumulator dtype. The order of the float32 additions is the reference kernel's, so
    float results are identical to TFLM's; ``fused``: each ``total += a * b`` is one fused
    multiply-add from ``total = 0`` (a build with ``float_fma``).
    """
    if fused:
        acc.fill(0.0)
        for t in range(len(taps)):
            acc[...] = fma32(taps[t], tiled[t], acc)
        return
    np.multiply(taps[0], tiled[0], out=acc)
    for t in range(1, len(taps)):
        np.multiply(taps[t], tiled[t], out=tmp)
        np.add(acc, tmp, out=acc)


# ----------------------------------------------------------------------------------------------
# Arena side of prepare
# ----------------------------------------------------------------------------------------------

CONV_INPUT, CONV_FILTER, CONV_BIAS, CONV_OUTPUT = 0, 1, 2, 0  # kConv*/kDepthwiseConv*Tensor


def allocate_conv_prepare(ctx: Any, op: Operator, quantized_dimension: int) -> None:
    """The arena allocations ConvPrepare and DepthwiseConvPrepare make, in their order.

    Temp tensors output, input, filter; two persistent per-channel int32 arrays
    (per_channel_output_multiplier, per_channel_output_shift) with one entry per filter
    dimension ``quantized_dimension`` (float too); temp tensors input, filter, bias, output
    again (CalculateOpDataConv / CalculateOpDataDepthwiseConv); an unpack scratch for int4
    filters. DepthwiseConvPrepare requests that scratch before its CalculateOpData, ConvPrepare
    after: a request is only recorded here, so the arena is the same either way.
    """
    bias = op.inputs[CONV_BIAS] if len(op.inputs) > CONV_BIAS else -1
    for index in (op.outputs[CONV_OUTPUT], op.inputs[CONV_INPUT], op.inputs[CONV_FILTER]):
        ctx.allocate_temp_tensor(index)
    weights = ctx.tensor(op.inputs[CONV_FILTER])
    channels = weights.shape[quantized_dimension] if weights is not None else 0
    ctx.allocate_persistent(4 * channels)  # per_channel_output_multiplier
    ctx.allocate_persistent(4 * channels)  # per_channel_output_shift
    for index in (op.inputs[CONV_INPUT], op.inputs[CONV_FILTER], bias, op.outputs[CONV_OUTPUT]):
        ctx.allocate_temp_tensor(index)
    if weights is not None and weights.type == TensorType.INT4:
        ctx.request_scratch(weights.element_count)


__all__ = [
    "CONV_BIAS",
    "CONV_FILTER",
    "CONV_INPUT",
    "CONV_OUTPUT",
    "ConvGeometry",
    "CHUNK_BYTES",
    "IM2COL_TILE_ELEMENTS",
    "allocate_conv_prepare",
    "Padding",
    "compute_out_size",
    "compute_padding_height_width",
    "conv_geometry",
    "effective_filter_size",
    "fill_border",
    "fill_padded",
    "gemm",
    "GEMM_MACS_PER_CALL",
    "depthwise_taps_phased",
    "fill_phased",
    "fill_phased_border",
    "padding_with_offset",
    "phased_shape",
    "phased_tap",
    "phased_taps",
    "tile_taps",
]
