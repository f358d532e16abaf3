"""glibc's float32 ``tanhf`` (and the ``expm1f`` it uses), vectorised and bit-exact.

TFLM's float kernels call ``std::tanh(float)``, which on the wheel's Linux host is glibc's
``tanhf``: the fdlibm algorithm (Sun Microsystems' freely redistributable libm, as shipped in
glibc up to at least 2.36), which is not correctly rounded, so double-precision tanh rounded to
float32 differs from it in about one result in five by an ulp or two. This module ports that
algorithm to numpy float32 arithmetic, operation for operation, so float LSTM and SVDF (TANH)
results match the wheel exactly. It was checked against the host's libm on ~460k inputs
(normal, tiny, huge, signed zero, the branch boundaries); tests/kernels/test_libm.py repeats a
smaller check whenever libm can be loaded.

expm1f: argument reduction by k*ln2 (split into hi and lo parts), a degree-5 rational
correction polynomial in x*x/2, then reconstruction by exponent arithmetic on the bits.
tanhf: |x| >= 1 -> 1 - 2/(expm1f(2|x|) + 2); smaller -> -t/(t + 2) with t = expm1f(-2|x|);
|x| >= 22 -> +-1; |x| < 2**-55 -> x*(1+x).
"""

from __future__ import annotations

import numpy as np

F = np.float32



def _bits(x: np.ndarray) -> np.ndarray:
    """The IEEE bits of float32 values, as non-negative int64."""
    return x.view(np.uint32).astype(np.int64)


def _from_bits(i: np.ndarray) -> np.ndarray:
    """float32 values from (the low 32 bits of) int64 bit patterns."""
    return (np.asarray(i, np.int64) & 0xFFFFFFFF).astype(np.uint32).view(F)


LN2_HI = F(6.9313812256e-01)  # 0x3f317180
LN2_LO = F(9.0580006145e-06)  # 0x3717f7d1
INVLN2 = F(1.4426950216e+00)  # 0x3fb8aa3b
# fdlibm's scaled expm1 coefficients Q1..Q5
Q = (F(-3.3333335072e-02), F(1.5873016091e-03), F(-7.9365076090e-05), F(4.0082177293e-06),
     F(-2.0109921195e-07))


def expm1f(x: np.ndarray) -> np.ndarray:
    """glibc/fdlibm expm1f on float32 arrays (all branches evaluated, then selected)."""
    with np.errstate(all="ignore"):
        return _expm1f(np.asarray(x, F))


def _expm1f(x: np.ndarray) -> np.ndarray:
    hx = _bits(x)
    neg = (hx & 0x80000000) != 0
    hx = hx & 0x7FFFFFFF
    one = F(1)
    # argument reduction
    red = hx > 0x3EB17218  # |x| > ln2 / 2
    near = red & (hx < 0x3F851592)  # and |x| < 1.5 ln2: k = +-1
    kf = np.where(neg, INVLN2 * x + F(-0.5), INVLN2 * x + F(0.5)).astype(F)
    k_far = np.trunc(kf).astype(np.int64)
    t = k_far.astype(F)
    hi = np.where(near, np.where(neg, x + LN2_HI, x - LN2_HI), x - t * LN2_HI).astype(F)
    lo = np.where(near, np.where(neg, -LN2_LO, LN2_LO), t * LN2_LO).astype(F)
    k = np.where(near, np.where(neg, -1, 1), k_far)
    k = np.where(red, k, 0)
    xr = np.where(red, hi - lo, x).astype(F)
    c = np.where(red, (hi - xr) - lo, F(0)).astype(F)
    hfx = F(0.5) * xr
    hxs = xr * hfx
    r1 = one + hxs * (Q[0] + hxs * (Q[1] + hxs * (Q[2] + hxs * (Q[3] + hxs * Q[4]))))
    tt = F(3.0) - r1 * hfx
    e = hxs * ((r1 - tt) / (F(6.0) - xr * tt))
    res_k0 = xr - (xr * e - hxs)
    e2 = (xr * (e - c) - c)
    e2 = e2 - hxs
    res_km1 = F(0.5) * (xr - e2) - F(0.5)
    res_k1 = np.where(xr < F(-0.25), -F(2.0) * (e2 - (xr + F(0.5))), one + F(2.0) * (xr - e2))
    # general k
    y_big = one - (e2 - xr)
    y_big = _from_bits(_bits(y_big) + (k << 23)) - one
    kk = np.clip(k, 0, 22)
    t_small = _from_bits(0x3f800000 - (0x1000000 >> kk))
    y_small = t_small - (e2 - xr)
    y_small = _from_bits(_bits(y_small) + (k << 23))
    kk2 = np.clip(k, 0, 127)
    t_mid = _from_bits((0x7f - kk2) << 23)
    y_mid = (xr - (e2 + t_mid)) + one
    y_mid = _from_bits(_bits(y_mid) + (k << 23))
    gen = np.where((k <= -2) | (k > 56), y_big, np.where(k < 23, y_small, y_mid))
    res = np.where(k == 0, res_k0, np.where(k == -1, res_km1, np.where(k == 1, res_k1, gen)))
    tiny_in = hx < 0x33000000
    res = np.where(tiny_in, x, res)
    res = np.where((hx >= 0x4195b844) & neg, F(-1), res)
    return res.astype(F)


def tanhf(x: np.ndarray) -> np.ndarray:
    """glibc/fdlibm tanhf on float32 arrays.

    tanhf calls expm1f on 2|x| when |x| >= 1 and on -2|x| below, so one expm1f evaluation on
    that combined argument serves both branches, and only the expm1f branches those two
    argument ranges reach are evaluated (see :func:`_expm1f_tanh`). Same results as
    :func:`tanhf_reference`, which evaluates the fdlibm code with the general expm1f; a test
    compares them over every float32 of the ranges that matter.
    """
    x = np.asarray(x, F)
    ix = x.view(np.int32) & 0x7FFFFFFF
    big = ix >= 0x3f800000  # |x| >= 1
    with np.errstate(all="ignore"):
        a = np.abs(x) * np.where(big, F(2), F(-2))
        t = _expm1f_tanh(a, big)
        d = t + F(2)
        z = np.where(big, F(1) - F(2) / d, -t / d)
        z = np.where(ix >= 0x41b00000, F(1), z)  # |x| >= 22
        z = np.copysign(z, x)
        z = np.where(ix < 0x24000000, x * (F(1) + x), z)  # |x| < 2**-55, and zeros
        z = np.where(ix > 0x7f800000, x, z)  # NaN
    return z.astype(F, copy=False)


def _expm1f_tanh(a: np.ndarray, big: np.ndarray) -> np.ndarray:
    """fdlibm expm1f for the arguments tanhf passes: ``a`` in [2, 44) where ``big`` (larger
    values give results tanhf discards), else in (-2, 0].

    There k = round(a / ln2) is 3..63 or 0..-3, so the k = 1, overflow and large-negative
    branches are never taken. The k = 0 and k = -1 reductions are the general one with k set
    (0 * ln2_hi and -1 * ln2_hi are exact), so all elements share one reduction and one
    polynomial; only the reconstruction differs by k.
    """
    ha = a.view(np.int32) & 0x7FFFFFFF
    kf = (INVLN2 * a + np.where(big, F(0.5), F(-0.5))).astype(F)
    k = np.trunc(kf).astype(np.int32)
    k = np.where(ha <= 0x3EB17218, 0, np.where(ha < 0x3F851592, np.where(big, 1, -1), k))
    k = k.astype(np.int32, copy=False)
    tf = k.astype(F)
    hi = a - tf * LN2_HI
    lo = tf * LN2_LO
    xr = hi - lo
    c = (hi - xr) - lo
    hfx = F(0.5) * xr
    hxs = xr * hfx
    r1 = F(1) + hxs * (Q[0] + hxs * (Q[1] + hxs * (Q[2] + hxs * (Q[3] + hxs * Q[4]))))
    tt = F(3.0) - r1 * hfx
    e = hxs * ((r1 - tt) / (F(6.0) - xr * tt))
    res_k0 = xr - (xr * e - hxs)
    e2 = (xr * (e - c) - c) - hxs
    res_km1 = F(0.5) * (xr - e2) - F(0.5)
    scale = k << 23
    y_big = ((F(1) - (e2 - xr)).view(np.int32) + scale).view(F) - F(1)
    kk = np.clip(k, 0, 22)
    t_small = (0x3f800000 - (0x1000000 >> kk)).astype(np.int32).view(F)
    y_small = ((t_small - (e2 - xr)).view(np.int32) + scale).view(F)
    t_mid = ((0x7f - np.clip(k, 0, 127)) << 23).astype(np.int32).view(F)
    y_mid = (((xr - (e2 + t_mid)) + F(1)).view(np.int32) + scale).view(F)
    gen = np.where((k <= -2) | (k > 56), y_big, np.where(k < 23, y_small, y_mid))
    res = np.where(k == 0, res_k0, np.where(k == -1, res_km1, gen))
    return np.where(ha < 0x33000000, a, res)


def tanhf_reference(x: np.ndarray) -> np.ndarray:
    """glibc/fdlibm tanhf on float32 arrays, written as fdlibm states it (two general expm1f
    evaluations, every branch computed then selected); slower, kept as the check of
    :func:`tanhf`."""
    x = np.asarray(x, F)
    jx = _bits(x)
    ix = jx & 0x7FFFFFFF
    ax = np.abs(x)
    with np.errstate(all="ignore"):
        t1 = expm1f(F(2) * ax)
        z1 = F(1) - F(2) / (t1 + F(2))
        t2 = expm1f(F(-2) * ax)
        z2 = -t2 / (t2 + F(2))
    z = np.where(ix >= 0x3f800000, z1, z2)
    z = np.where(ix < 0x24000000, x * (F(1) + x), np.where((jx & 0x80000000) != 0, -z, z))
    z = np.where(ix >= 0x41b00000, np.where((jx & 0x80000000) != 0, F(-1), F(1)), z)
    z = np.where(ix == 0, x, z)
    return z.astype(F)


__all__ = ["expm1f", "tanhf", "tanhf_reference"]
