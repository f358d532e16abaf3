"""Lookup tables of TFLM's int16 activations, built and read exactly as TFLM does.

Two kinds of table matter:

* The 513-entry int16 tables of SOFTMAX (int16 input): ``exp`` on [-10, 0] and ``1/(1+x)`` on
  [0, 1], built at prepare time by TFLM's ``LUTPopulate<int16_t>`` (common.h) in float32
  arithmetic and read by ``LUTLookup`` with 7-bit linear interpolation. The table values
  depend on every float32 rounding on the way, so the construction below keeps each
  operation in float32, rounds halves away from zero like ``std::round``, and evaluates
  ``exp`` as glibc's ``expf`` (the function the wheel calls), ported bit-exactly in ``_libm``.
* TFLM's fixed 256-entry ``sigmoid_table_uint16`` (sigmoid(i/24) in 0.16 format), used by the
  int16 LOGISTIC and TANH kernels. Its values are data, not derivable by one rounding rule
  (about 40 entries sit one above round(65536 * sigmoid(i/24))), so they are listed here.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

import numpy as np

from tinyarena.kernels._libm import expf
from tinyarena.kernels._quant import wrap_int16

LUT_INT16_SIZE = 513  # TFLM LUTSize<int16_t>(): 512 segments plus the end point

F32 = np.float32

# TFLM common.h sigmoid_table_uint16: sigmoid(i / 24) in unsigned 0.16 fixed point.
SIGMOID_TABLE_UINT16 = np.array([
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149,
    40794, 41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369,
    47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169,
    53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370,
    60565, 60753, 60935, 61110, 61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302,
    62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186, 63279, 63368, 63454, 63536,
    63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786,
    64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079,
    65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234, 65246, 65258,
    65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474,
    65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498,
    65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522,
    65523, 65523, 65524, 65524, 65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528,
    65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530, 65530, 65530, 65531, 65531,
    65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534,
    65534, 65534, 65534, 65535,
], dtype=np.int64)
SIGMOID_TABLE_UINT16.setflags(write=False)


def round_half_away_f32(x: np.ndarray) -> np.ndarray:
    """std::round on float32 values (TfLiteRound): halves go away from zero; stays float32.

    numpy's rint rounds halves to even, and adding 0.5 before flooring is wrong for the float
    just below 0.5, so the fractional part is compared exactly instead.
    """
    x = np.asarray(x, dtype=F32)
    a = np.abs(x)
    fl = np.floor(a)
    r = fl + (a - fl >= F32(0.5)).astype(F32)
    return np.copysign(r, x).astype(F32)


def exp_transform(x: np.ndarray) -> np.ndarray:
    """The softmax exp table's transform: std::exp on float."""
    return expf(x)


def one_over_one_plus_x_transform(x: np.ndarray) -> np.ndarray:
    """The softmax reciprocal table's transform: 1.0f / (1.0f + x) in float32."""
    x = np.asarray(x, dtype=F32)
    return (F32(1.0) / (F32(1.0) + x)).astype(F32)


def lut_populate_int16(input_scale: float, input_zero_point: int, output_scale: float,
                       output_zero_point: int,
                       transform: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """TFLM LUTPopulate<int16_t> (detail::LUTPopulateInt16<float>): a 513-entry int16 table.

    Each of the 512 segments stores its left sample corrected by half the error that linear
    interpolation would make at the segment's midpoint; entry 512 is the right end point.
    Every intermediate is float32 as in the C++ template instantiated with FloatT = float.
    """
    in_scale = F32(input_scale)
    out_scale = F32(output_scale)
    input_min = in_scale * F32(-32768 - input_zero_point)
    input_max = in_scale * F32(32767 - input_zero_point)
    output_min = out_scale * F32(-32768 - output_zero_point)
    output_max = out_scale * F32(32767 - output_zero_point)
    nb_steps = 512
    step = (input_max - input_min) / F32(nb_steps)
    half_step = step / F32(2)
    output_scaling_inv = F32(65536) / (output_max - output_min)

    i = np.arange(nb_steps, dtype=F32)
    x0 = (input_min + i * step).astype(F32)
    x_mid = (x0 + half_step).astype(F32)
    x1 = (input_min + (i + F32(1)) * step).astype(F32)
    val = transform(x0)
    val_midpoint = transform(x_mid)
    val_next = transform(x1)

    sample_val = round_half_away_f32(val * output_scaling_inv)
    midpoint_interp_val = round_half_away_f32(
        (val_next * output_scaling_inv + sample_val) / F32(2))
    midpoint_val = round_half_away_f32(val_midpoint * output_scaling_inv)
    midpoint_err = (midpoint_interp_val - midpoint_val).astype(F32)
    bias = round_half_away_f32(midpoint_err / F32(2))

    lut = np.empty(LUT_INT16_SIZE, dtype=np.int16)
    lut[:nb_steps] = np.clip(sample_val - bias, F32(-32768), F32(32767)).astype(np.int16)
    last = round_half_away_f32(transform(np.array([input_max], dtype=F32)) * output_scaling_inv)
    lut[nb_steps] = np.clip(last, F32(-32768), F32(32767)).astype(np.int16)[0]
    return lut


def lut_lookup_int16(value: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """TFLM LUTLookup(int16_t, const int16_t*): table read with 7-bit linear interpolation.

    ``value`` holds int16 values (any integer dtype); returns int64 holding the int16 result.
    """
    v = np.asarray(value, dtype=np.int64)
    table = np.asarray(lut, dtype=np.int64)
    index = 256 + (v >> 7)
    offset = v & 0x7F
    base = table[index]
    slope = wrap_int16(table[index + 1] - base)
    delta = (slope * offset + 64) >> 7
    return wrap_int16(base + delta)


@lru_cache(maxsize=1)
def softmax_int16_luts() -> tuple[np.ndarray, np.ndarray]:
    """The two tables TFLM's int16 SOFTMAX builds in prepare (softmax_common.cc).

    exp: inputs [-10, 0] mapped onto the whole int16 range (scale 10/65535, zero point
    32767), outputs in Q0.15 (scale 2/65535); 1/(1+x): inputs [0, 1] (scale 1/65535, zero
    point -32768), same output scale. Both are constant, so they are built once per process.
    """
    int16_range = 32767 - (-32768)
    exp_lut = lut_populate_int16(F32(10.0) / F32(int16_range), 32767,
                                 F32(2.0) / F32(int16_range), 0, exp_transform)
    recip_lut = lut_populate_int16(F32(1.0) / F32(int16_range), -32768,
                                   F32(2.0) / F32(int16_range), 0,
                                   one_over_one_plus_x_transform)
    exp_lut.setflags(write=False)
    recip_lut.setflags(write=False)
    return exp_lut, recip_lut


__all__ = [
    "LUT_INT16_SIZE",
    "SIGMOID_TABLE_UINT16",
    "expf",
    "lut_lookup_int16",
    "lut_populate_int16",
    "round_half_away_f32",
    "softmax_int16_luts",
]
