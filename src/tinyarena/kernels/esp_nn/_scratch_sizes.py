"""``esp_nn_get_*_scratch_size``: the scratch bytes each esp-nn release asks for, per chip.

``esp_nn.h`` maps ``esp_nn_get_conv_scratch_size`` (and the depthwise and softmax ones) to the
chip's function: ``*_esp32s3`` on the ESP32-S3, ``*_esp32p4`` on the ESP32-P4 (esp-nn 1.2.3
added its own depthwise and softmax ones) and ``*_opt`` on every other chip. Ported from the C
of each release (espressif/esp-nn tags v1.1.2, v1.2.0 and master d45b843c, which is 1.2.3):

- conv, S3 and P4, 1.1.2 and 1.2.0 (``_conv_v1``): the 1x1 path (1x1 filter, no padding,
  stride 1) asks for the input re-laid to 8 channels when in_ch % 8, the filter so laid out
  and a transpose buffer; every other shape for the padded input, the filter with channels
  rounded to 16 and 4 bytes per output channel; 32 bytes of alignment margin.
- conv, S3, 1.2.3 (``_conv_s3_v123``): margin 64; a new im2col path (filter row under 16
  bytes, window at least 16); the general path adds a worst-case filter-row alignment copy
  and a buffer for the right/bottom border the output shape implies even without padding.
  This is the one that doubles the first convolution's scratch of the wake-word models.
- conv, P4, 1.2.3 (``_conv_p4_v123``): a 1x1 channel-padding path for in_ch < 16; direct,
  im2col, tiled (L1 budget 32 KiB) and monolithic padded paths.
- depthwise, S3 (``_dw_s3_v1``, ``_dw_s3_v123``): 3x3 ch_mult-1 paths (padded copy or not),
  the int16 copy paths, whose alignment margin grew from 16 to 32 bytes in 1.2.0; 1.2.3 adds
  tiling above 40/48 KiB, a channel-padded path for 12+ channels, and a padded mult-1 path.
- depthwise on P4 and generic, conv on generic: 0 (nothing requested).
- softmax: ``width * 4`` in every release and dispatch (``width`` is the caller's dims[1]).

The C functions read the dims and params into ``uint16_t`` locals (so values above 65535
wrap, as here) and compute in ``int`` (32-bit; sums are wrapped to it on return).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Mapping

L1D_BUDGET = 32768  # esp_nn_conv_esp32p4.c (1.2.3): the tile budget of the padded paths


@dataclass(frozen=True)
class Dims:
    """esp-nn's data_dims_t as the kernels fill it (width, height, channels)."""

    width: int
    height: int
    channels: int


@dataclass(frozen=True)
class ConvScratchParams:
    """The conv_params_t / dw_conv_params_t fields the size functions read: stride and
    TFLM's computed padding (width, height), and the depthwise channel multiplier."""

    stride_width: int
    stride_height: int
    pad_width: int
    pad_height: int
    ch_mult: int = 1


ScratchSize = Callable[[Dims, Dims, Dims, ConvScratchParams], int]
ScratchSizeTable = Mapping[tuple[str, str], ScratchSize]  # (dispatch, version) -> function


def _u16(value: int) -> int:
    """A C ``const uint16_t`` local initialised from an int."""
    return value & 0xFFFF


def _i32(value: int) -> int:
    """A C ``int`` result (two's complement wrap)."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _up(value: int, multiple: int) -> int:
    """``(value + multiple - 1) & ~(multiple - 1)`` for a power-of-two multiple."""
    return (value + multiple - 1) & ~(multiple - 1)


def _div(a: int, b: int) -> int:
    """C integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


@dataclass(frozen=True)
class _ConvLocals:
    """The uint16 locals every conv size function starts from."""

    in_wd: int
    in_ht: int
    in_ch: int
    f_wd: int
    f_ht: int
    out_ch: int
    pad_wd: int
    pad_ht: int
    stride_wd: int
    stride_ht: int

    @property
    def pointwise(self) -> bool:
        """The 1x1 path: 1x1 filter, no padding, stride 1."""
        return (self.f_wd == 1 and self.f_ht == 1 and self.pad_wd == 0 and self.pad_ht == 0
                and self.stride_wd == 1 and self.stride_ht == 1)


def _conv_locals(inp: Dims, flt: Dims, out: Dims, p: ConvScratchParams) -> _ConvLocals:
    return _ConvLocals(_u16(inp.width), _u16(inp.height), _u16(inp.channels), _u16(flt.width),
                       _u16(flt.height), _u16(out.channels), _u16(p.pad_width),
                       _u16(p.pad_height), _u16(p.stride_width), _u16(p.stride_height))


def _pointwise_v1(c: _ConvLocals, align: int) -> int:
    """The 1x1 path of every S3 release and of the P4 for in_ch >= 16."""
    new_channels = _up(c.in_ch, 8)
    transpose = 0 if c.in_wd * c.in_ht < 8 else 2 * (8 * new_channels)
    input_scratch = c.in_wd * c.in_ht * new_channels if c.in_ch % 8 else 0
    return input_scratch + new_channels * c.out_ch + transpose + align


def _conv_v1(inp: Dims, flt: Dims, out: Dims, p: ConvScratchParams) -> int:
    """esp_nn_get_conv_scratch_size_esp32s3 / _esp32p4 of esp-nn 1.1.2 and 1.2.0."""
    c = _conv_locals(inp, flt, out, p)
    if c.pointwise:
        return _i32(_pointwise_v1(c, 32))
    new_channels = _up(c.in_ch, 16)
    input_scratch = 0 if c.pad_wd == 0 and c.pad_ht == 0 else \
        (c.in_wd + 2 * c.pad_wd) * (c.in_ht + 2 * c.pad_ht) * c.in_ch
    filter_scratch = c.f_wd * c.f_ht * new_channels * c.out_ch
    return _i32(input_scratch + filter_scratch + 32 + c.out_ch * 4)


def _conv_s3_v123(inp: Dims, flt: Dims, out: Dims, p: ConvScratchParams) -> int:
    """esp_nn_get_conv_scratch_size_esp32s3 of esp-nn 1.2.3."""
    c = _conv_locals(inp, flt, out, p)
    align = 64  # alignment (16) + the assembly's pre/post access margin (48)
    if c.pointwise:
        return _i32(_pointwise_v1(c, align))
    filter_row_size = c.f_wd * c.in_ch
    window_len = c.f_wd * c.f_ht * c.in_ch
    if filter_row_size < 16 and window_len >= 16:  # im2col path
        window_aligned = _up(window_len, 16)
        return _i32(c.out_ch * 4 + 16 + c.out_ch * window_aligned + 16 + window_aligned
                    + align)
    new_channels = _up(c.in_ch, 16)
    input_scratch = 0 if c.pad_wd == 0 and c.pad_ht == 0 else \
        (c.in_wd + 2 * c.pad_wd) * (c.in_ht + 2 * c.pad_ht) * c.in_ch
    filter_scratch = c.f_wd * c.f_ht * new_channels * c.out_ch
    filter_alignment = _div(filter_row_size + 15, 16) * 16 * c.f_ht * c.out_ch
    # output_dims->width/height are read as int here, not through a uint16 local
    pad_right = max(0, (out.width * c.stride_wd + c.f_wd - 1) - c.in_wd)
    pad_bottom = max(0, (out.height * c.stride_ht + c.f_ht - 1) - c.in_ht)
    boundary = (c.in_wd + pad_right) * (c.in_ht + pad_bottom) * c.in_ch \
        if pad_right > 0 or pad_bottom > 0 else 0
    return _i32(input_scratch + filter_scratch + filter_alignment + boundary + align
                + c.out_ch * 4)


def _conv_p4_v123(inp: Dims, flt: Dims, out: Dims, p: ConvScratchParams) -> int:
    """esp_nn_get_conv_scratch_size_esp32p4 of esp-nn 1.2.3."""
    c = _conv_locals(inp, flt, out, p)
    align = 32
    if c.pointwise:
        if c.in_ch < 16:  # channel-padding path: filter sums, padded filter, padded input
            return _i32(c.out_ch * 4 + 16 * c.out_ch + 32 + align)
        return _i32(_pointwise_v1(c, align))
    new_channels = _up(c.in_ch, 16)
    offset_acc = c.out_ch * 4
    no_pad = c.pad_wd == 0 and c.pad_ht == 0
    if no_pad and c.f_wd * c.in_ch >= 16:  # direct path: no input copy
        return _i32(c.f_wd * c.f_ht * new_channels * c.out_ch + align + offset_acc)
    if c.f_wd * c.f_ht * c.in_ch >= 16:  # im2col path: one window
        return _i32(offset_acc + c.f_wd * c.f_ht * c.in_ch + align)
    if no_pad:  # a window under 16 elements: tiled path
        eff_ch = _up(_div(16 + c.f_wd - 1, c.f_wd), 16)
        return _i32(offset_acc + c.f_wd * c.f_ht * eff_ch * c.out_ch
                    + c.in_wd * c.in_ht * eff_ch + align)
    padded_wd = c.in_wd + 2 * c.pad_wd
    full_input = padded_wd * (c.in_ht + 2 * c.pad_ht) * c.in_ch
    if _i32(full_input + offset_acc) > L1D_BUDGET:  # tiled padded path
        eff_ch = c.in_ch
        filt_aligned = 0
        if c.f_wd * c.in_ch < 16:
            eff_ch = _up(_div(16 + c.f_wd - 1, c.f_wd), 16)
            filt_aligned = c.f_wd * c.f_ht * eff_ch * c.out_ch
        row_bytes = padded_wd * eff_ch
        budget = L1D_BUDGET - offset_acc - filt_aligned
        tile = 1
        if budget > 0 and c.f_ht * row_bytes <= budget:
            tile = _div(budget - c.f_ht * row_bytes, c.stride_ht * row_bytes) + 1
            tile = min(tile, out.height)
        rows = (tile - 1) * c.stride_ht + c.f_ht + 2 * c.pad_ht
        return _i32(rows * row_bytes + filt_aligned + align + offset_acc)
    return _i32(full_input + c.f_wd * c.f_ht * new_channels * c.out_ch + align + offset_acc)


@dataclass(frozen=True)
class _DwLocals:
    in_wd: int
    in_ht: int
    channels: int
    f_wd: int
    f_ht: int
    ch_mult: int
    out_wd: int
    out_ht: int
    pad_wd: int
    pad_ht: int
    stride_wd: int
    stride_ht: int


def _dw_locals(inp: Dims, flt: Dims, out: Dims, p: ConvScratchParams) -> _DwLocals:
    return _DwLocals(*(_u16(v) for v in (
        inp.width, inp.height, inp.channels, flt.width, flt.height, p.ch_mult, out.width,
        out.height, p.pad_width, p.pad_height, p.stride_width, p.stride_height)))


def _dw_3x3_pads(d: _DwLocals) -> tuple[int, int]:
    """The 3x3 mult-1 path's extra padding: twice the padding, or the border the output shape
    implies when there is none (may be negative, as in C)."""
    if d.pad_wd or d.pad_ht:
        return d.pad_wd * 2, d.pad_ht * 2
    return ((d.out_wd * d.stride_wd + d.f_wd - 1) - d.in_wd,
            (d.out_ht * d.stride_ht + d.f_ht - 1) - d.in_ht)


def _dw_s3_v1(s16_margin: int) -> ScratchSize:
    """esp_nn_get_depthwise_conv_scratch_size_esp32s3 of 1.1.2 (margin 16) and 1.2.0 (32)."""

    def size(inp: Dims, flt: Dims, out: Dims, p: ConvScratchParams) -> int:
        d = _dw_locals(inp, flt, out, p)
        filter_size = d.f_wd * d.f_ht * d.channels * d.ch_mult
        s16 = 2 * (filter_size + d.in_wd * d.in_ht * d.channels) + s16_margin
        if d.ch_mult == 1 and d.channels % 8 == 0 and d.f_wd == 3 and d.f_ht == 3:
            if d.channels % 16 == 0:
                pad_w, pad_h = _dw_3x3_pads(d)
                if pad_w or pad_h:
                    return _i32(filter_size + (d.in_wd + pad_w) * (d.in_ht + pad_h)
                                * d.channels + 16)
                return _i32(filter_size + 16)
            return _i32(s16)
        if d.ch_mult % 4 == 0:
            return _i32(s16)
        return 32

    return size


def _dw_s3_v123(inp: Dims, flt: Dims, out: Dims, p: ConvScratchParams) -> int:
    """esp_nn_get_depthwise_conv_scratch_size_esp32s3 of esp-nn 1.2.3."""
    d = _dw_locals(inp, flt, out, p)
    filter_size = d.f_wd * d.f_ht * d.channels * d.ch_mult
    input_size = d.in_wd * d.in_ht * d.channels
    if d.ch_mult == 1 and d.channels % 8 == 0:
        if d.f_wd == 3 and d.f_ht == 3:
            if d.channels % 16 == 0:
                pad_w, pad_h = _dw_3x3_pads(d)
                if not (pad_w or pad_h):
                    return _i32(filter_size + 16)
                full_input = _i32((d.in_wd + pad_w) * (d.in_ht + pad_h) * d.channels)
                if full_input <= 40 * 1024:
                    return _i32(filter_size + full_input + 16)
                strip = (d.in_wd + pad_w) * d.f_ht * d.channels  # tiled: filter_ht rows
                return _i32(filter_size + strip + 16)
            if d.channels >= 12:  # pad channels to 16, s8 path, then compact
                new_ch = _up(d.channels, 16)
                total_pad_wd = d.pad_wd * 2 + max(0, (d.out_wd * d.stride_wd + 2) - d.in_wd)
                total_pad_ht = d.pad_ht * 2 + max(0, (d.out_ht * d.stride_ht + 2) - d.in_ht)
                new_input = (d.in_wd + total_pad_wd) * (d.in_ht + total_pad_ht) * new_ch
                return _i32(9 * new_ch + new_input + d.out_wd * d.out_ht * new_ch + 64)
            return _i32(2 * (filter_size + input_size) + 32)  # 8 channels: the s16 path
        total_s16 = _i32(2 * (filter_size + input_size))
        if total_s16 <= 48 * 1024:
            return _i32(total_s16 + 32)
        tile_s16 = 2 * d.in_wd * d.f_ht * d.channels  # tiled: filter_ht rows of input
        return _i32(2 * filter_size + tile_s16 + 32)
    if d.ch_mult == 1 and d.channels > 3:  # pad channels to 8, 16-aligned sections (size_t)
        padded = _up(d.channels, 8)
        filter_bytes = d.f_wd * d.f_ht * padded * 2
        input_start = _up(filter_bytes, 16)
        out_start = _up(input_start + d.in_wd * d.in_ht * padded * 2, 16)
        bias_start = _up(out_start + d.out_wd * d.out_ht * padded, 16)
        return _i32((bias_start + 3 * padded * 4 + 16) & 0xFFFFFFFF)
    if d.ch_mult % 4 == 0:
        return _i32(2 * (filter_size + input_size) + 32)
    return 32


def _nothing(inp: Dims, flt: Dims, out: Dims, p: ConvScratchParams) -> int:
    """The ``*_opt`` functions (and the P4's depthwise): no scratch."""
    return 0


# (dispatch, esp-nn version) -> the size function esp_nn.h maps the call to.
CONV: ScratchSizeTable = MappingProxyType({
    ("esp32s3", "1.1.2"): _conv_v1, ("esp32s3", "1.2.0"): _conv_v1,
    ("esp32s3", "1.2.3"): _conv_s3_v123,
    ("esp32p4", "1.1.2"): _conv_v1, ("esp32p4", "1.2.0"): _conv_v1,
    ("esp32p4", "1.2.3"): _conv_p4_v123,
    ("generic", "1.1.2"): _nothing, ("generic", "1.2.0"): _nothing,
    ("generic", "1.2.3"): _nothing,
})
DEPTHWISE_CONV: ScratchSizeTable = MappingProxyType({
    ("esp32s3", "1.1.2"): _dw_s3_v1(16), ("esp32s3", "1.2.0"): _dw_s3_v1(32),
    ("esp32s3", "1.2.3"): _dw_s3_v123,
    ("esp32p4", "1.1.2"): _nothing, ("esp32p4", "1.2.0"): _nothing,
    ("esp32p4", "1.2.3"): _nothing,
    ("generic", "1.1.2"): _nothing, ("generic", "1.2.0"): _nothing,
    ("generic", "1.2.3"): _nothing,
})


def softmax(width: int) -> int:
    """esp_nn_get_softmax_scratch_size_{opt,esp32s3,esp32p4}: 4 bytes per ``width``, the
    same in every release (height is unused)."""
    return _i32(width * 4)


def lookup(table: ScratchSizeTable, dispatch: str | None,
           version: str | None) -> ScratchSize:
    """The size function of ``table`` for this build; a KernelError names a build tinyarena
    has no formulas for (the target profile validates both, so this is a guard)."""
    from tinyarena.errors import KernelError

    fn = table.get((str(dispatch), str(version)))
    if fn is None:
        raise KernelError(f"no esp-nn scratch formulas for dispatch {dispatch!r}, esp-nn "
                          f"{version!r}; use an esp32* target with a known --esp-nn version")
    return fn


__all__ = ["CONV", "DEPTHWISE_CONV", "ConvScratchParams", "Dims", "L1D_BUDGET", "ScratchSize",
           "ScratchSizeTable", "lookup", "softmax"]
