"""CMSIS-NN's scratch-buffer size functions, per ISA class, as GCC compiles them.

Ports of ``Source/*/arm_*_get_buffer_sizes_*.c`` (ARM-software/CMSIS-NN 4ab83cc3). The ISA class
is the target's ``cmsis_nn_isa``: "plain" (no ``ARM_MATH_DSP``: Cortex-M0/M0+/M3), "dsp"
(``ARM_MATH_DSP``: M4/M7/M33), "mve" (``ARM_MATH_MVEI``: M55/M85). Two choices CMSIS-NN makes on
the compiler are fixed to GCC's (the device builds use arm-none-eabi-gcc): the DSP 1x1 fast
convolution needs no buffer (Arm Compiler 6 would ask 4 * C_in), and MVE converts a depthwise
convolution with one input channel to a convolution for any output depth above 1 (Arm Compiler
6: above 8).
"""

from __future__ import annotations

from dataclasses import dataclass

from tinyarena.errors import UnsupportedOpError

CH_IN_BLOCK_MVE = 124
CONVERT_DW_CONV_ONE_IN_CH_ABOVE = 1  # GCC's CONVERT_DW_CONV_WITH_ONE_INPUT_CH_..._THRESHOLD
REVERSE_TCOL_EFFICIENT_THRESHOLD = 16
ISA_CLASSES = ("plain", "dsp", "mve")


@dataclass(frozen=True)
class Dims:
    """cmsis_nn_dims: n (batch or output channels), h, w, c."""

    n: int
    h: int
    w: int
    c: int


@dataclass(frozen=True)
class ConvParams:
    """The fields of cmsis_nn_conv_params / cmsis_nn_dw_conv_params the sizes read."""

    stride_h: int = 1
    stride_w: int = 1
    pad_h: int = 0
    pad_w: int = 0
    dilation_h: int = 1
    dilation_w: int = 1


def check_isa(isa: str | None) -> str:
    if isa not in ISA_CLASSES:
        raise UnsupportedOpError(f"CMSIS-NN kernels need a Cortex-M target with an ISA class "
                                 f"({', '.join(ISA_CLASSES)}), got {isa!r}; use a cortex-m* "
                                 f"target")
    return isa


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _is_1x1(p: ConvParams, inp: Dims, flt: Dims) -> bool:
    """arm_nn_is_convolve_1x1."""
    return (p.pad_w == 0 and p.pad_h == 0 and flt.w == 1 and flt.h == 1 and p.dilation_w == 1
            and p.dilation_h == 1 and inp.c == flt.c)


def _is_1_x_n(p: ConvParams, inp: Dims, flt: Dims) -> bool:
    """arm_nn_is_convolve_1_x_n."""
    return (inp.h == 1 and p.dilation_w == 1 and flt.h == 1 and (p.stride_w * inp.c) % 4 == 0
            and inp.c == flt.c)


def convolve_s8(isa: str, inp: Dims, flt: Dims) -> int:
    """arm_convolve_s8_get_buffer_size: im2col columns (two int16 copies / four MVE lanes)."""
    k = inp.c * flt.w * flt.h
    if isa == "mve":
        return 4 * _ceil_div(k, 16) * 16
    return 2 * (k + (-k) % 4) * 2


def _c_div(a: int, b: int) -> int:
    """C's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _convolve_1_x_n_s8_mve(p: ConvParams, inp: Dims, flt: Dims, out: Dims) -> int:
    total_pad = (out.w - 1) * p.stride_w + flt.w - inp.w
    asym_pad = total_pad - 2 * _c_div(total_pad, 2)  # C's %: keeps the sign
    right = max(1, _c_div(p.pad_w + asym_pad + p.stride_w - 1, p.stride_w)) \
        if p.pad_w + asym_pad != 0 else 0
    left = max(1, _c_div(p.pad_w + p.stride_w - 1, p.stride_w)) if p.pad_w != 0 else 0
    no_pad = max(out.w - (right + left), 0)
    if right + no_pad + left != out.w:
        return convolve_s8("mve", inp, flt)
    pad_left = p.pad_w * inp.c
    pad_right = right * inp.c if asym_pad else pad_left
    elem_left = flt.w * inp.c
    elem_right = elem_left - inp.c
    return max(elem_left + pad_left, elem_right + pad_right)


def convolve_wrapper_s8(isa: str, p: ConvParams, inp: Dims, flt: Dims, out: Dims) -> int:
    """arm_convolve_wrapper_s8_get_buffer_size."""
    if _is_1x1(p, inp, flt):
        return 0  # the 1x1 paths need no buffer with GCC (fast: Arm Compiler 6 DSP only)
    if _is_1_x_n(p, inp, flt) and isa == "mve":
        return _convolve_1_x_n_s8_mve(p, inp, flt, out)
    return convolve_s8(isa, inp, flt)


def convolve_wrapper_s16(isa: str, inp: Dims, flt: Dims) -> int:
    """arm_convolve_wrapper_s16_get_buffer_size."""
    k = inp.c * flt.w * flt.h
    if isa == "mve":
        return 4 * _ceil_div(k, 8) * 8 * 2
    return 2 * k * 2


def _depthwise_opt_s8(isa: str, inp: Dims, flt: Dims) -> int:
    if isa == "mve":
        return 4 * CH_IN_BLOCK_MVE * flt.w * flt.h
    if isa == "dsp":
        return inp.c * flt.w * flt.h * 2
    return 0


def depthwise_wrapper_s8(isa: str, p: ConvParams, inp: Dims, flt: Dims, out: Dims) -> int:
    """arm_depthwise_conv_wrapper_s8_get_buffer_size (``flt.c`` is the output depth)."""
    if isa == "mve" and inp.c == 1 and out.c > CONVERT_DW_CONV_ONE_IN_CH_ABOVE:
        as_conv = Dims(flt.c, flt.h, flt.w, flt.n)
        return convolve_wrapper_s8("mve", p, inp, as_conv, out) + flt.c * flt.h * flt.w * flt.n
    if inp.c == out.c and inp.n == 1 and p.dilation_w == 1 and p.dilation_h == 1:
        if isa != "mve" and flt.w == 3 and flt.h == 3 and p.pad_h <= 1 and p.pad_w <= 1:
            return 0
        return _depthwise_opt_s8(isa, inp, flt)
    return 0


def depthwise_wrapper_s4(isa: str, p: ConvParams, inp: Dims, flt: Dims, out: Dims) -> int:
    """arm_depthwise_conv_wrapper_s4_get_buffer_size: the optimised path's buffer whenever it
    applies, even without the DSP extension."""
    if inp.c == out.c and inp.n == 1 and p.dilation_w == 1 and p.dilation_h == 1:
        return _depthwise_opt_s8("mve" if isa == "mve" else "dsp", inp, flt)
    return 0


def fully_connected_s8(isa: str, output_depth: int) -> int:
    """arm_fully_connected_s8_get_buffer_size: MVE keeps one int32 kernel sum per output."""
    return 4 * output_depth if isa == "mve" else 0


def avgpool(isa: str, channels: int) -> int:
    """arm_avgpool_s8/s16_get_buffer_size: one int32 accumulator per channel on DSP."""
    return 4 * channels if isa == "dsp" else 0


def svdf_s8(isa: str, num_filters: int) -> int:
    """arm_svdf_s8_get_buffer_size: MVE keeps one int32 kernel sum per filter."""
    return 4 * num_filters if isa == "mve" else 0


def _reverse_conv(stride_h: int, stride_w: int, inp: Dims) -> bool:
    return stride_w <= 2 and stride_h <= 2 and inp.c > REVERSE_TCOL_EFFICIENT_THRESHOLD


def transpose_conv_s8(isa: str, stride_h: int, stride_w: int, inp: Dims, flt: Dims,
                      out: Dims) -> int:
    """arm_transpose_conv_s8_get_buffer_size."""
    if _reverse_conv(stride_h, stride_w, inp):
        reverse_in = Dims(inp.n, inp.h * stride_h, inp.w * stride_w, inp.c)
        return convolve_s8(isa, reverse_in, flt)
    buf_x = ((inp.w - 1) * stride_w + max(flt.w, stride_h)) * out.c
    buf_y = max(flt.h, stride_h)
    return buf_x * buf_y * 4


def transpose_conv_reverse_s8(stride_h: int, stride_w: int, inp: Dims, flt: Dims) -> int:
    """arm_transpose_conv_s8_get_reverse_conv_buffer_size."""
    if _reverse_conv(stride_h, stride_w, inp):
        return inp.c * flt.w * flt.h * flt.n
    return 0
