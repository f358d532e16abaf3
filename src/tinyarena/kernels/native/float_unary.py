"""Compiled float32 element-wise activations: LOGISTIC, TANH, HARD_SWISH, RELU, RELU6 and
LEAKY_RELU, one loop each over flat views.

Each loop is the numpy path's arithmetic on one element, in the same float32 operations and
the same order, so the bits agree, NaN payloads and signed zeros included:

* LOGISTIC: ``logistic.logistic_float``, TFLM's cut-offs around 1/(1 + expf(-x)) with the
  target's expf (``libm.logistic``, the scalar port of ``_libm``; a libm it does not port
  declines).
* TANH: ``_libm.tanhf`` (glibc and newlib share fdlibm's tanhf) as ``libm.tanhf``.
* HARD_SWISH: ``x * min(6, max(0, x + 3)) / 6`` with numpy's maximum/minimum (a NaN operand
  wins).
* RELU ``v < 0 ? 0 : v``, RELU6 ``v > 6 ? 6 : (v < 0 ? 0 : v)``, LEAKY_RELU ``v > 0 ? v : v *
  alpha``: NaN and -0.0 pass as TFLM's comparisons let them.

Products go through ``_fops.fmul`` where both operands may be NaN (x86's
first-operand NaN rule, which numpy's loops keep and a compiler may commute away).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyarena.kernels import native
from tinyarena.kernels.native._fops import fmul
from tinyarena.kernels.native.libm import expf_mode_for, logistic, tanhf

_ZERO, _THREE, _SIX = np.float32(0), np.float32(3), np.float32(6)


@native.jit
def logistic_loop(x: Any, out: Any, p: Any) -> None:  # pragma: no cover - compiled
    mode = p[0]
    for i in range(x.shape[0]):
        out[i] = logistic(x[i], mode)


@native.jit
def tanh_loop(x: Any, out: Any) -> None:  # pragma: no cover - compiled
    for i in range(x.shape[0]):
        out[i] = tanhf(x[i])


@native.jit
def hard_swish_loop(x: Any, out: Any) -> None:  # pragma: no cover - compiled
    for i in range(x.shape[0]):
        v = x[i]
        t = v + _THREE  # one NaN operand at most: its (quieted) NaN, whatever the order
        # np.maximum(0, t) and np.minimum(6, .): the NaN operand wins, else the larger
        # (smaller); t is never -0.0 (x + 3 rounds to +0.0), so ties are plain
        if t == t:
            if t < _ZERO:
                t = _ZERO
            if t > _SIX:
                t = _SIX
        out[i] = fmul(v, t) / _SIX


@native.jit
def relu_loop(x: Any, out: Any) -> None:  # pragma: no cover - compiled
    for i in range(x.shape[0]):
        v = x[i]
        out[i] = _ZERO if v < _ZERO else v


@native.jit
def relu6_loop(x: Any, out: Any) -> None:  # pragma: no cover - compiled
    for i in range(x.shape[0]):
        v = x[i]
        out[i] = _SIX if v > _SIX else (_ZERO if v < _ZERO else v)


@native.jit
def leaky_relu_loop(x: Any, out: Any, alpha: Any) -> None:  # pragma: no cover - compiled
    a = alpha[0]
    for i in range(x.shape[0]):
        v = x[i]
        out[i] = v if v > _ZERO else fmul(v, a)


def _flat_pair(x: np.ndarray, out: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Flat float32 views of the op's input and output, or None (numpy runs) when they are
    not contiguous float32 arrays of one size."""
    if x.dtype != np.float32 or out.dtype != np.float32 or x.size != out.size or \
            not (x.flags.c_contiguous and out.flags.c_contiguous):
        return None
    return x.reshape(-1), out.reshape(-1)


def bind_unary(kind: str, x: np.ndarray, out: np.ndarray, libm: str = "glibc",
               alpha: float = 0.0) -> Callable[[], None] | None:
    """The compiled loop of float32 ``kind`` (LOGISTIC, TANH, HARD_SWISH, RELU, RELU6,
    LEAKY_RELU) over these arena views, or None (numpy runs): views that do not fit, or a
    LOGISTIC whose target libm has no compiled expf."""
    pair = _flat_pair(x, out)
    if pair is None:
        return None
    src, dst = pair
    if kind == "LOGISTIC":
        mode = expf_mode_for(libm)
        if mode is None:
            return None
        return native.native_step(logistic_loop, src, dst, np.array([mode], dtype=np.int64))
    if kind == "LEAKY_RELU":
        return native.native_step(leaky_relu_loop, src, dst,
                                  np.array([alpha], dtype=np.float32))
    loops = {"TANH": tanh_loop, "HARD_SWISH": hard_swish_loop, "RELU": relu_loop,
             "RELU6": relu6_loop}
    loop = loops.get(kind)
    return None if loop is None else native.native_step(loop, src, dst)


__all__ = ["bind_unary", "hard_swish_loop", "leaky_relu_loop", "logistic_loop", "relu6_loop",
           "relu_loop", "tanh_loop"]
