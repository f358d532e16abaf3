"""Compiled int16 LOGISTIC and TANH: the numpy path's table-and-lerp arithmetic per element.

``kernels._sigmoid_tanh.logistic_int16`` / ``tanh_int16`` (TFLM's reference_integer_ops
Logistic / Tanh for int16) rescale the input by one multiplier and shift, look the magnitude
up in the 256-entry ``sigmoid_table_uint16`` with a linear interpolation on its low 9
(logistic) or 8 (tanh) bits, and mirror negative inputs. Every step is integer arithmetic in
int64 there; the loop below does the same steps in the same int64 arithmetic, so it is exact
on every target (no float, no target-dependent shift).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyarena.kernels import native
from tinyarena.kernels._lut import SIGMOID_TABLE_UINT16

MODE_LOGISTIC, MODE_TANH = 0, 1
P_MODE, P_MULTIPLIER, P_SHIFT, P_ROUNDING = 0, 1, 2, 3


@native.jit
def sigmoid_tanh16(table: Any, x: Any, out: Any, p: Any) -> None:  # pragma: no cover
    mode = p[P_MODE]
    multiplier = p[P_MULTIPLIER]
    shift = p[P_SHIFT]
    rounding = p[P_ROUNDING]
    frac = 9 if mode == MODE_LOGISTIC else 8
    mask = (np.int64(1) << frac) - 1
    for i in range(x.shape[0]):
        v = (np.int64(x[i]) * multiplier + rounding) >> shift
        a = -v if v < 0 else v
        uh = a >> frac
        idx = uh if uh < 254 else np.int64(254)
        ua = table[idx]
        ub = table[idx + 1]
        interp = (ua << frac) + (a & mask) * (ub - ua)
        if mode == MODE_LOGISTIC:
            r = (np.int64(0x7FFF) << 10) if uh >= 255 else interp
            if v >= 0:
                r = r + (1 << 9)
            else:
                r = (np.int64(1) << 25) - r + (1 << 9) - 1
            r = (r & np.int64(0xFFFFFFFF)) >> 10
        else:
            r = (np.int64(0xFFFF) << 8) if uh >= 255 else interp
            if v >= 0:
                r = r - (1 << 23) + (1 << 7)
            else:
                r = -r + (1 << 23) + (1 << 7) - 1
            r = r >> 8
        out[i] = ((r + 32768) & 0xFFFF) - 32768


def bind_sigmoid_tanh16(mode: int, input_multiplier: int, input_left_shift: int,
                        x: np.ndarray, out: np.ndarray) -> Callable[[], None] | None:
    """The compiled loop over flat int16 views, or None (numpy runs) when they do not fit.

    ``input_multiplier`` 0 is the power-of-two case (``3 << shift``, no shift), as in
    ``_sigmoid_tanh._rescale_int16``."""
    if x.dtype != np.int16 or out.dtype != np.int16 or x.size != out.size or \
            not (x.flags.c_contiguous and out.flags.c_contiguous):
        return None
    multiplier, shift = int(input_multiplier), int(input_left_shift)
    if multiplier == 0:
        multiplier, shift = 3 << shift, 0
    if not (0 <= shift < 63 and 0 <= multiplier < (1 << 40)):
        return None
    rounding = (1 << (shift - 1)) if shift > 0 else 0
    p = np.array([mode, multiplier, shift, rounding], dtype=np.int64)
    table = np.ascontiguousarray(SIGMOID_TABLE_UINT16, dtype=np.int64)
    return native.native_step(sigmoid_tanh16, table, x.reshape(-1), out.reshape(-1), p)


__all__ = ["MODE_LOGISTIC", "MODE_TANH", "bind_sigmoid_tanh16", "sigmoid_tanh16"]
