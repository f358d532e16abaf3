"""How far an op's output may overlap its own input (rule (c) of ``overlap``).

TFLM's reference CONV_2D (``reference_ops::Conv``, ``reference_integer_ops::ConvPerChannel``),
DEPTHWISE_CONV_2D (``reference_ops::DepthwiseConv``, ``reference_integer_ops::
DepthwiseConvPerChannel``) and pooling (``reference_ops::AveragePool``/``MaxPool``,
``reference_integer_ops::AveragePool``/``MaxPool``) share one loop nest:

    for batch, out_y, out_x:               # output pixels in memory order
        for out_channel (conv) | in_channel, m (depthwise) | channel (pool):
            read the element's receptive field, then write the element

Depthwise writes channel ``in_channel * multiplier + m``, so in every kernel the output
elements are written one by one in increasing address order, each after all of its own reads.
PAD (``reference_ops::PadImpl``) walks the output in memory order too, writing either the pad
value or the next input element (``*out_ptr++ = *in_ptr++``).

Derivation of the margin. Measure addresses from the input's first byte and let the output
start at ``d``. Output element k (write order = memory order) occupies ``[d + k*eo,
d + (k+1)*eo)``. Let ``need(k)`` be the lowest input byte read by any element written after k.
Because writes only ever grow one contiguous block upwards from ``d``, the plan is safe when
``d + (k+1)*eo <= need(k)`` for every k that has a later reader; hence

    dF = min over k of (need(k) - (k+1)*eo)

and every ``d <= dF`` is safe. The bound is tight: at ``d = dF + 1`` the write of the binding
element k covers byte ``dF + (k+1)*eo = need(k)``, which a later element still reads.

For the window ops, element (pixel p, channel j) reads lowest the first valid tap of its
window: byte ``base(p) + chan(j)`` with ``base(p) = first_pixel(p) * in_channels * ei`` and
``chan(j)`` the channel offset it starts at (conv: its group's first input channel; depthwise:
``j // multiplier``; pooling: ``j``), times ``ei``. ``chan`` never decreases with j, so inside
a pixel the next element is the binding later reader, and the last channel of a pixel is
bound by ``S(p+1)``, the lowest ``base`` of any later pixel. With ``Co`` output channels:

    dF = min( min_p [base(p) - p*Co*eo] + min_{1<=j<Co} [chan(j) - j*eo],
              min_{p<P-1} [S(p+1) - (p+1)*Co*eo] )

(pixels whose window lies wholly in the padding read nothing and drop out). For PAD with
equal element sizes, ``need(k) - (k+1)*e`` is minus the pad elements written so far, so dF is
minus the bytes of padding written before the last input element.

None means no element has a later reader: any placement is safe.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from tinyarena.kernels._conv_common import compute_padding_height_width
from tinyarena.model.types import TFLM_TYPE_SIZES, Model, Operator

WINDOW_KINDS = ("conv", "depthwise", "pool")
MARGIN_OPS = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D",
                        "PAD", "PADV2"})
"""Ops whose reference kernels have the traversal order derived above."""


@dataclass(frozen=True)
class WindowGeometry:
    """One reference window op on NHWC tensors.

    ``pad_top``/``pad_left`` are the leading paddings TFLM computes
    (``ComputePaddingHeightWidth``). ``groups`` applies to conv (input channels / filter input
    channels), ``depth_multiplier`` to depthwise. ``in_elem``/``out_elem`` are element sizes in
    bytes.
    """

    kind: str
    batches: int
    in_h: int
    in_w: int
    in_c: int
    out_h: int
    out_w: int
    out_c: int
    filter_h: int
    filter_w: int
    stride_h: int = 1
    stride_w: int = 1
    dilation_h: int = 1
    dilation_w: int = 1
    pad_top: int = 0
    pad_left: int = 0
    in_elem: int = 1
    out_elem: int = 1
    groups: int = 1
    depth_multiplier: int = 1


def _first_taps(out_size: int, stride: int, pad: int, dilation: int, taps: int,
                in_size: int) -> np.ndarray:
    """Per output row (or column): the first input row inside the image that its window
    reads, or -1 when every tap falls in the padding (the kernels skip those taps)."""
    origin = np.arange(out_size, dtype=np.int64) * stride - pad
    first_tap = np.where(origin < 0, (-origin + dilation - 1) // dilation, 0)
    first = origin + first_tap * dilation
    valid = (first_tap < taps) & (first < in_size)
    return np.where(valid, first, -1)


def _channel_offsets(g: WindowGeometry) -> np.ndarray:
    """chan(j) in bytes: where output channel j starts reading inside an input pixel."""
    j = np.arange(g.out_c, dtype=np.int64)
    if g.kind == "conv":
        per_group = max(g.out_c // max(g.groups, 1), 1)
        return (j // per_group) * (g.in_c // max(g.groups, 1)) * g.in_elem
    if g.kind == "depthwise":
        return (j // max(g.depth_multiplier, 1)) * g.in_elem
    return j * g.in_elem


def window_margin(g: WindowGeometry) -> int | None:
    """dF for CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D or MAX_POOL_2D (module docstring):
    the output may start at most dF bytes above the input's start (dF is usually negative:
    that many bytes below). None: unconstrained."""
    if g.kind not in WINDOW_KINDS:
        raise ValueError(f"unknown window kind {g.kind!r}")
    ys = _first_taps(g.out_h, g.stride_h, g.pad_top, g.dilation_h, g.filter_h, g.in_h)
    xs = _first_taps(g.out_w, g.stride_w, g.pad_left, g.dilation_w, g.filter_w, g.in_w)
    pixel = (np.arange(g.batches, dtype=np.int64)[:, None, None] * (g.in_h * g.in_w)
             + ys[None, :, None] * g.in_w + xs[None, None, :])
    reads = (ys[None, :, None] >= 0) & (xs[None, None, :] >= 0) & (g.batches > 0)
    base = np.where(reads, pixel * (g.in_c * g.in_elem), np.iinfo(np.int64).max).reshape(-1)
    n_pix = base.size
    if n_pix == 0 or g.out_c == 0:
        return None
    big = np.iinfo(np.int64).max
    written = np.arange(n_pix, dtype=np.int64) * (g.out_c * g.out_elem)
    candidates: list[int] = []
    if g.out_c >= 2:
        j = np.arange(1, g.out_c, dtype=np.int64)
        chan_term = int((_channel_offsets(g)[1:] - j * g.out_elem).min())
        live = base != big
        if live.any():
            candidates.append(int((base[live] - written[live]).min()) + chan_term)
    if n_pix >= 2:
        later = np.minimum.accumulate(base[::-1])[::-1][1:]  # S(p+1) for p = 0..P-2
        ok = later != big
        if ok.any():
            candidates.append(int((later[ok] - written[1:][ok]).min()))
    return min(candidates) if candidates else None


def pad_margin(in_shape: Sequence[int], before: Sequence[int], out_shape: Sequence[int],
               elem: int) -> int | None:
    """dF for PAD/PADV2 (``PadImpl``): minus the bytes of padding written before the last
    input element is copied. ``before[i]`` is the leading padding of dimension i."""
    if len(in_shape) != len(out_shape) or len(before) != len(in_shape):
        raise ValueError("PAD margin needs one leading padding per dimension")
    n_in = int(np.prod(in_shape, dtype=np.int64)) if len(in_shape) else 1
    if n_in == 0:
        return None
    last = tuple(int(s) - 1 + int(b) for s, b in zip(in_shape, before))
    k_last = int(np.ravel_multi_index(last, tuple(int(s) for s in out_shape))) if last else 0
    if k_last == 0:  # the only input element is copied first: nothing is read after a write
        return None
    return -(k_last - (n_in - 1)) * elem


def op_geometry(model: Model, op: Operator) -> WindowGeometry | None:
    """The window geometry TFLM's kernel uses for ``op`` of subgraph 0, or None when ``op`` is
    not a window op, or its options or shapes are not ones the margin is derived for."""
    if op.name not in ("CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D"):
        return None
    sg = model.subgraphs[0]
    if op.options_absent or len(op.inputs) < 1 or len(op.outputs) != 1 or op.inputs[0] < 0:
        return None
    x, y = sg.tensors[op.inputs[0]], sg.tensors[op.outputs[0]]
    ei, eo = TFLM_TYPE_SIZES.get(x.type), TFLM_TYPE_SIZES.get(y.type)
    if ei is None or eo is None or len(x.shape) != 4 or len(y.shape) != 4:
        return None
    o = op.options
    if o.stride_h <= 0 or o.stride_w <= 0:
        return None
    n, h, w, c = (int(v) for v in x.shape)
    _, oh, ow, oc = (int(v) for v in y.shape)
    if op.name == "AVERAGE_POOL_2D" or op.name == "MAX_POOL_2D":
        kh, kw, dh, dw = o.filter_height, o.filter_width, 1, 1
        kind, groups, mult = "pool", 1, 1
        if oc != c:
            return None
    else:
        if len(op.inputs) < 2 or op.inputs[1] < 0:
            return None
        f = sg.tensors[op.inputs[1]]
        if len(f.shape) != 4:
            return None
        kh, kw = int(f.shape[1]), int(f.shape[2])
        dh, dw = o.dilation_h_factor, o.dilation_w_factor
        if op.name == "CONV_2D":
            kind, mult = "conv", 1
            fid = int(f.shape[3])
            if fid <= 0 or c % fid or oc % (c // fid):
                return None
            groups = c // fid
        else:
            kind, groups, mult = "depthwise", 1, int(o.depth_multiplier)
            if mult <= 0 or c * mult != oc:
                return None
    if dh <= 0 or dw <= 0 or kh <= 0 or kw <= 0:
        return None
    pad, _, _ = compute_padding_height_width(o.stride_h, o.stride_w, dh, dw, h, w, kh, kw,
                                             o.padding)
    return WindowGeometry(kind, n, h, w, c, oh, ow, oc, kh, kw, o.stride_h, o.stride_w, dh, dw,
                          pad.height, pad.width, ei, eo, groups, mult)


def op_margin(model: Model, op: Operator, scheme: str | None = None) -> int | None:
    """dF in bytes for ``op`` of subgraph 0 reading input 0 and writing output 0, or None when
    rule (c) has no derivation for it. An op with no later reader gets the input's byte size
    (every overlapping start is safe). ``scheme`` None is the reference kernels' element order;
    a CMSIS-NN block scheme (``kernels/cmsis_nn/_overlap``) uses ``block_margin`` or, for PAD,
    ``pad_chunk_margin``."""
    sg = model.subgraphs[0]
    if op.name not in MARGIN_OPS or not op.inputs or op.inputs[0] < 0 or len(op.outputs) != 1:
        return None
    x = sg.tensors[op.inputs[0]]
    if x.tflm_nbytes is None:
        return None
    if op.name in ("PAD", "PADV2"):
        y = sg.tensors[op.outputs[0]]
        if len(op.inputs) < 2 or op.inputs[1] < 0 or x.type != y.type:
            return None
        pads = sg.tensors[op.inputs[1]].data
        if pads is None or np.asarray(pads).size != 2 * len(x.shape) or len(x.shape) > 5:
            return None
        before = np.asarray(pads).reshape(-1, 2)[:, 0]
        if (before < 0).any() or len(y.shape) != len(x.shape):
            return None
        if scheme == "pad-chunk":
            after = np.asarray(pads).reshape(-1, 2)[:, 1]
            if (after < 0).any():
                return None
            margin = pad_chunk_margin(x.shape, [int(b) for b in before],
                                      [int(a) for a in after], TFLM_TYPE_SIZES[x.type])
            if margin == _REFUSED:
                return None
        elif scheme is not None:
            return None
        else:
            margin = pad_margin(x.shape, [int(b) for b in before], y.shape,
                                TFLM_TYPE_SIZES[x.type])
    else:
        geom = op_geometry(model, op)
        if geom is None:
            return None
        if scheme is None:
            margin = window_margin(geom)
        elif scheme in BLOCK_SCHEMES:
            margin = block_margin(geom, scheme)
        else:
            return None
    return x.tflm_nbytes if margin is None else margin



BLOCK_SCHEMES = ("mve4", "row-mve4", "row", "pixel")
"""Block schemes of window ops (``kernels/cmsis_nn/_overlap``); "pad-chunk" is PAD's."""
_REFUSED = -(1 << 62)


def _blocks(scheme: str, n_rows: int, row: int) -> tuple[np.ndarray, np.ndarray]:
    """(first pixel, last pixel) of each block, in execution order, over ``n_rows`` output
    rows of ``row`` pixels (all batches flattened)."""
    total = n_rows * row
    if scheme == "pixel":
        p = np.arange(total, dtype=np.int64)
        return p, p
    if scheme == "row":
        r = np.arange(n_rows, dtype=np.int64) * row
        return r, r + row - 1
    if scheme == "mve4":
        full = total - total % 4
        starts = np.concatenate([np.arange(0, full, 4, dtype=np.int64),
                                 np.arange(full, total, dtype=np.int64)])
        ends = np.concatenate([np.arange(3, full, 4, dtype=np.int64),
                               np.arange(full, total, dtype=np.int64)])
        return starts, ends
    if scheme == "row-mve4":
        full = row - row % 4
        in_row_s = np.concatenate([np.arange(0, full, 4), np.arange(full, row)]).astype(np.int64)
        in_row_e = np.concatenate([np.arange(3, full, 4), np.arange(full, row)]).astype(np.int64)
        base = (np.arange(n_rows, dtype=np.int64) * row)[:, None]
        return (base + in_row_s[None, :]).reshape(-1), (base + in_row_e[None, :]).reshape(-1)
    raise ValueError(f"unknown block scheme {scheme!r}")


def block_margin(g: WindowGeometry, scheme: str) -> int | None:
    """dF for a kernel that, inside each block of output pixels (``scheme``), writes outputs
    while it still reads that block's input, and finishes one block before the next.

    A write during block k lands somewhere in block k's output bytes, and may come before any
    read of block k or a later block; so the plan is safe when every block's last output
    byte lies at or below the lowest input byte read by it or any later block:

        dF = min over blocks k of ( S(first(k)) - (last(k) + 1) * Co * eo )

    with ``S(p)`` the lowest input byte read by pixel p or a later pixel (``window_margin``'s
    ``base``, suffix minimum). Every ``d <= dF`` is safe. Coarser blocks only lower dF, so a
    scheme may safely lump blocks together, never split them. None: nothing is read.
    """
    if scheme not in BLOCK_SCHEMES:
        raise ValueError(f"unknown block scheme {scheme!r}")
    ys = _first_taps(g.out_h, g.stride_h, g.pad_top, g.dilation_h, g.filter_h, g.in_h)
    xs = _first_taps(g.out_w, g.stride_w, g.pad_left, g.dilation_w, g.filter_w, g.in_w)
    pixel = (np.arange(g.batches, dtype=np.int64)[:, None, None] * (g.in_h * g.in_w)
             + ys[None, :, None] * g.in_w + xs[None, None, :])
    reads = (ys[None, :, None] >= 0) & (xs[None, None, :] >= 0) & (g.batches > 0)
    big = np.iinfo(np.int64).max
    base = np.where(reads, pixel * (g.in_c * g.in_elem), big).reshape(-1)
    if base.size == 0 or g.out_c == 0:
        return None
    suffix = np.minimum.accumulate(base[::-1])[::-1]
    starts, ends = _blocks(scheme, g.batches * g.out_h, g.out_w)
    lowest = suffix[starts]
    live = lowest != big
    if not live.any():
        return None
    return int((lowest[live] - (ends[live] + 1) * (g.out_c * g.out_elem)).min())


def pad_chunk_margin(in_shape: Sequence[int], before: Sequence[int], after: Sequence[int],
                     elem: int) -> int | None:
    """dF for CMSIS-NN's ``arm_pad_s8``: the input (rank <= 4, as NHWC with leading 1s) is
    copied by ``arm_memcpy_s8`` runs in output order, one run per input row when only N, H and
    W are padded, else one per pixel; a memcpy's destination must end at or below its source,
    so ``d <= min over runs (src - dst_offset - length)``. None: nothing is copied;
    ``_REFUSED`` for a rank the kernel does not take whole."""
    rank = len(in_shape)
    if rank > 4 or len(before) != rank or len(after) != rank:
        return _REFUSED
    pad = 4 - rank
    shape = [1] * pad + [int(v) for v in in_shape]
    pre = [0] * pad + [int(v) for v in before]
    post = [0] * pad + [int(v) for v in after]
    n, h, w, c = shape
    if n * h * w * c == 0:
        return None
    oh, ow, oc = h + pre[1] + post[1], w + pre[2] + post[2], c + pre[3] + post[3]
    b = np.arange(n, dtype=np.int64)[:, None]
    y = np.arange(h, dtype=np.int64)[None, :]
    out_row = ((b + pre[0]) * oh + (y + pre[1])) * ow  # output pixel index of the row's start
    if oc == c:
        length = w * c
        src = (b * h + y) * w * c
        dst = (out_row + pre[2]) * oc
    else:
        length = c
        x = np.arange(w, dtype=np.int64)[None, None, :]
        src = ((b * h + y)[:, :, None] * w + x) * c
        dst = (out_row[:, :, None] + pre[2] + x) * oc + pre[3]
    return int((src - dst - length).min()) * elem


__all__ = ["BLOCK_SCHEMES", "MARGIN_OPS", "WINDOW_KINDS", "WindowGeometry", "block_margin",
           "op_geometry", "op_margin", "pad_chunk_margin", "pad_margin", "window_margin"]
