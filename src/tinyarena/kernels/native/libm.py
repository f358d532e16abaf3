"""Scalar compiled ports of ``kernels._libm``: glibc's expf (SSE2 and FMA builds), newlib's
fdlibm expf, glibc's tanhf, and the float32 fma of ``kernels._fma``.

Why not call the C library: the float kernels must give the bits of the *target's* libm (the
wheel's glibc, or newlib on Cortex-M), whatever libm the host running tinyarena has. These are
the numpy ports' algorithms operation for operation, on one element, with the same constants
(read from ``_libm``); numba keeps float32 arithmetic in float32 and contracts no multiply-add
(no ``fastmath``), so each operation rounds as the numpy one does. The numpy ports stay the
reference: tests compare the two over the float32 ranges that matter.

``expf_mode`` numbers the three expf variants for compiled callers (:func:`expf_mode_for`).

Editing this module: numba's disk cache checks only the caller's own source file, so kernels
in ``lstm``/``svdf``/``softmax`` keep an inlined copy of the old code until their own files
change (or ``kernels/native/__pycache__/*.nb[ic]`` is deleted).
"""

from __future__ import annotations

import numpy as np

from tinyarena.kernels import _libm as ref
from tinyarena.kernels.native import jit

_F = np.float32
_ONE, _TWO, _HALF = _F(1), _F(2), _F(0.5)
_LN2_HI, _LN2_LO, _INVLN2 = ref.LN2_HI, ref.LN2_LO, ref.INVLN2
_Q0, _Q1, _Q2, _Q3, _Q4 = ref.Q
_TAB = ref._EXP2F_TAB
_INVLN2_N = ref._INVLN2_N
_INVLN2_N_HI, _INVLN2_N_LO = ref._INVLN2_N_HI, ref._INVLN2_N_LO
_SHIFT = ref._SHIFT
_C0, _C1, _C2 = ref._C0, ref._C1, ref._C2
_TOP12_88 = ref._TOP12_88
_OFLOW, _UFLOW, _MAY_UFLOW = ref._OFLOW, ref._UFLOW, ref._MAY_UFLOW
_TINY = _F(float.fromhex("0x1p-149"))
_NEAR = ref._NEAR_HALF_ULPS
_FD_LN2_HI, _FD_LN2_LO, _FD_INVLN2 = ref._FD_LN2_HI, ref._FD_LN2_LO, ref._FD_INVLN2
_P1, _P2, _P3, _P4, _P5 = ref._FD_P
_FD_TWOM100 = ref._FD_TWOM100
_INF32 = _F(np.inf)

EXPF_GLIBC, EXPF_GLIBC_FMA, EXPF_FDLIBM = 0, 1, 2


def expf_mode_for(libm: str) -> int | None:
    """The compiled expf reproducing ``_libm.expf_for(libm)`` (None: a libm not ported)."""
    if libm == "newlib-fdlibm":
        return EXPF_FDLIBM
    if libm == "newlib":
        return EXPF_GLIBC
    if libm == "glibc":
        return EXPF_GLIBC_FMA if ref.host_expf_uses_fma() else EXPF_GLIBC
    return None


@jit
def _f32_from_bits(bits):
    return np.int32(bits).view(np.float32)


@jit
def _bits_f32(x):
    return np.int64(np.float32(x).view(np.int32))


@jit
def _next64(s, up):
    """nextafter(s, +-inf) of a finite double by its bits (no C library call)."""
    bits = np.float64(s).view(np.int64)
    if s == 0:
        tiny = np.int64(1).view(np.float64)  # the smallest subnormal
        return tiny if up else -tiny
    if (s > 0) == up:
        return np.int64(bits + 1).view(np.float64)
    return np.int64(bits - 1).view(np.float64)


@jit
def _quiet32(a):
    return _f32_from_bits(_bits_f32(a) | 0x400000)


@jit
def add32(a, b):
    """float32 ``a + b`` with x86's NaN rule: a NaN ``a`` wins over a NaN ``b`` (quieted).

    numpy's loops compute ``in1 + in2`` and so keep the first operand's NaN (its sign is
    observable); LLVM may commute a compiled ``a + b``, so the NaN case is made explicit."""
    s = a + b
    if s != s:
        if a != a:
            return _quiet32(a)
        if b != b:
            return _quiet32(b)
    return s


@jit
def mul32(a, b):
    """float32 ``a * b`` with x86's NaN rule (see :func:`add32`)."""
    s = a * b
    if s != s:
        if a != a:
            return _quiet32(a)
        if b != b:
            return _quiet32(b)
    return s


@jit
def _first_nan64(a, b, s):
    """The NaN x86 returns for ``a op b`` (``s``): ``a``'s, else ``b``'s (quieted), else
    ``s`` (the default NaN of an invalid operation)."""
    if a != a:
        return np.int64(np.float64(a).view(np.int64) | (1 << 51)).view(np.float64)
    if b != b:
        return np.int64(np.float64(b).view(np.int64) | (1 << 51)).view(np.float64)
    return s


@jit
def fma32(a, b, c):
    """``_fma.fma32`` on one element: the float64 sum rounded to odd, then to float32 (NaNs:
    the product's before ``c``'s, as numpy's ``p + c``)."""
    a64, b64, c64 = np.float64(a), np.float64(b), np.float64(c)
    p = a64 * b64
    if p != p:
        p = _first_nan64(a64, b64, p)
    s = p + c64
    if s != s:
        return np.float32(_first_nan64(p, c64, s))
    bb = s - p
    err = (p - (s - bb)) + (c64 - bb)
    if err != 0 and np.isfinite(s) and (np.float64(s).view(np.int64) & 1) == 0:
        s = _next64(s, err > 0)
    return np.float32(s)


@jit
def _two_prod(a, b):
    p = a * b
    ca = a * 134217729.0
    ah = ca - (ca - a)
    al = a - ah
    cb = b * 134217729.0
    bh = cb - (cb - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


@jit
def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@jit
def _fma64(a, b, c):
    """``_libm._fma``: Dekker's product, then Boldo and Melquiond's round-to-odd sum."""
    p, pe = _two_prod(a, b)
    th, tl = _two_sum(c, p)
    s, e = _two_sum(tl, pe)
    if e != 0 and (np.float64(s).view(np.int64) & 1) == 0:
        s = _next64(s, e > 0)
    return th + s


@jit
def _expf_core(x, fused):
    xd = np.float64(x)
    if not np.isfinite(xd):
        xd = 0.0
    elif xd > 200.0:
        xd = 200.0
    elif xd < -200.0:
        xd = -200.0
    z = _INVLN2_N * xd
    kd_shifted = z + _SHIFT
    kd = kd_shifted - _SHIFT
    ki = np.float64(kd_shifted).view(np.int64)
    if fused:
        ze = (xd * _INVLN2_N_HI - z) + xd * _INVLN2_N_LO
        d = z - kd
        adj = 0
        if d == 0.5 and ze > 0:
            adj = 1
        elif d == -0.5 and ze < 0:
            adj = -1
        ki = ki + adj
        kd = kd + adj
        r = (z - kd) + ze
    else:
        r = z - kd
    t = _TAB[ki & 31] + (ki << 47)
    s = np.int64(t).view(np.float64)
    r2 = r * r
    y = (_C0 * r + _C1) * r2 + (_C2 * r + 1.0)
    q = y * s
    if fused:
        low = np.float64(q).view(np.int64) & ((1 << 29) - 1)
        if abs(low - (1 << 28)) <= _NEAR or q < 2.0 ** -125:
            q = _fma64(_fma64(_C0, r, _C1), r2, _fma64(_C2, r, 1.0)) * s
    return q


@jit
def expf_glibc(x, fused):
    """``_libm.expf`` on one float32 (``fused``: the FMA build)."""
    y = np.float32(_expf_core(x, fused))
    abstop = (np.int64(np.float32(x).view(np.uint32)) >> 20) & 0x7FF
    if abstop >= _TOP12_88:
        if x < _MAY_UFLOW:
            y = _TINY
        if x < _UFLOW:
            y = np.float32(0)
        if x > _OFLOW:
            y = _INF32
        if abstop >= 0x7F8:
            y = x + x
        if x == -_INF32:
            y = np.float32(0)
    return y


@jit
def expf_fdlibm(x):
    """``_libm.expf_fdlibm`` (newlib's ef_exp.c) on one float32."""
    sx = _bits_f32(x)
    hx = sx & 0x7FFFFFFF
    neg = sx < 0
    if hx > 0x7F800000:
        return x + x
    if hx == 0x7F800000:
        return np.float32(0) if neg else x
    if neg and hx > 0x42CFF1B5:
        return np.float32(0)
    if sx > 0x42B17217:
        return _INF32
    if hx < 0x31800000:
        return _ONE + x
    k = 0
    hi = x
    lo = np.float32(0)
    if hx > 0x3EB17218:
        if hx < 0x3F851592:
            k = -1 if neg else 1
            hi = x - (-_FD_LN2_HI if neg else _FD_LN2_HI)
            lo = -_FD_LN2_LO if neg else _FD_LN2_LO
        else:
            k = int(np.trunc(_FD_INVLN2 * x + (np.float32(-0.5) if neg else _HALF)))
            t = np.float32(k)
            hi = x - t * _FD_LN2_HI
            lo = t * _FD_LN2_LO
        r = hi - lo
    else:
        r = x
    tt = r * r
    c = r - tt * (_P1 + tt * (_P2 + tt * (_P3 + tt * (_P4 + tt * _P5))))
    if k == 0:
        return _ONE - ((r * c) / (c - _TWO) - r)
    y = _ONE - ((lo - (r * c) / (_TWO - c)) - hi)
    ybits = _bits_f32(y) & 0xFFFFFFFF
    if k >= -125:
        return _f32_from_bits((ybits + (k << 23)) & 0xFFFFFFFF)
    return _f32_from_bits((ybits + ((k + 100) << 23)) & 0xFFFFFFFF) * _FD_TWOM100


@jit
def expf(x, mode):
    """std::exp(float) of the build's C library, ``mode`` from :func:`expf_mode_for`."""
    if mode == EXPF_FDLIBM:
        return expf_fdlibm(x)
    return expf_glibc(x, mode == EXPF_GLIBC_FMA)


@jit
def logistic(v, mode):
    """reference_ops::Logistic<float> as ``_lstm_math.float_sigmoid`` (TFLM's cut-offs)."""
    if v > np.float32(16.619047164916992188):
        return _ONE
    if v < np.float32(-9):
        return expf(v, mode)
    return _ONE / (_ONE + expf(-v, mode))


@jit
def _expm1f_tanh(a, big):
    """``_libm._expm1f_tanh`` on one element."""
    ha = _bits_f32(a) & 0x7FFFFFFF
    if ha < 0x33000000:
        return a
    if ha <= 0x3EB17218:
        k = 0
    elif ha < 0x3F851592:
        k = 1 if big else -1
    else:
        kf = _INVLN2 * a + (_HALF if big else np.float32(-0.5))
        k = int(np.trunc(kf))
    tf = np.float32(k)
    hi = a - tf * _LN2_HI
    lo = tf * _LN2_LO
    xr = hi - lo
    c = (hi - xr) - lo
    hfx = _HALF * xr
    hxs = xr * hfx
    r1 = _ONE + hxs * (_Q0 + hxs * (_Q1 + hxs * (_Q2 + hxs * (_Q3 + hxs * _Q4))))
    tt = np.float32(3.0) - r1 * hfx
    e = hxs * ((r1 - tt) / (np.float32(6.0) - xr * tt))
    if k == 0:
        return xr - (xr * e - hxs)
    e2 = (xr * (e - c) - c) - hxs
    if k == -1:
        return _HALF * (xr - e2) - _HALF
    scale = k << 23
    if k <= -2 or k > 56:
        y = _ONE - (e2 - xr)
        return _f32_from_bits(_bits_f32(y) + scale) - _ONE
    if k < 23:
        t_small = _f32_from_bits(0x3f800000 - (0x1000000 >> k))
        return _f32_from_bits(_bits_f32(t_small - (e2 - xr)) + scale)
    t_mid = _f32_from_bits((0x7f - k) << 23)
    return _f32_from_bits(_bits_f32((xr - (e2 + t_mid)) + _ONE) + scale)


@jit
def tanhf(x):
    """``_libm.tanhf`` (glibc/fdlibm) on one float32."""
    bits = _bits_f32(x)
    ix = bits & 0x7FFFFFFF
    if ix > 0x7f800000:
        return x + x  # fdlibm's one/x +- one: the NaN, quieted
    if ix < 0x24000000:
        return x * (_ONE + x)
    if ix >= 0x41b00000:
        z = _ONE
    else:
        big = ix >= 0x3f800000
        a = abs(x) * (_TWO if big else np.float32(-2))
        t = _expm1f_tanh(a, big)
        d = t + _TWO
        z = _ONE - _TWO / d if big else -t / d
    return _f32_from_bits((_bits_f32(z) & 0x7FFFFFFF) | (bits & -0x80000000))


@jit
def expf_array(x, out, mode):
    """For tests: :func:`expf` over a 1-D array."""
    for i in range(x.shape[0]):
        out[i] = expf(x[i], mode)


@jit
def tanhf_array(x, out):
    """For tests: :func:`tanhf` over a 1-D array."""
    for i in range(x.shape[0]):
        out[i] = tanhf(x[i])


@jit
def fma32_array(a, b, c, out):
    """For tests: :func:`fma32` elementwise over 1-D arrays."""
    for i in range(a.shape[0]):
        out[i] = fma32(a[i], b[i], c[i])


__all__ = ["EXPF_FDLIBM", "EXPF_GLIBC", "EXPF_GLIBC_FMA", "add32", "expf", "expf_array",
           "expf_fdlibm", "expf_glibc", "expf_mode_for", "fma32", "fma32_array", "logistic",
           "mul32", "tanhf", "tanhf_array"]
