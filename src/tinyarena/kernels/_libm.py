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

expf (glibc >= 2.27, sysdeps/ieee754/flt-32/e_expf.c): see :func:`expf`.
"""

from __future__ import annotations

import math
import os
import platform
from functools import lru_cache
from typing import Callable

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
        z = np.where(ix > 0x7f800000, x + x, z)  # NaN: fdlibm returns one/x +- one, x quieted
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


# ----------------------------------------------------------------------------------------------
# expf
# ----------------------------------------------------------------------------------------------
#
# glibc's expf (2.27 and later; the same code as ARM's optimized-routines math/expf.c):
# x * 32/ln2 = k + r with k the nearest integer (through the 1.5 * 2**52 shift trick) and
# |r| <= 1/2, then exp(x) = 2**(k/32) * 2**(r/32) where 2**(k/32) is a table entry with k // 32
# added to its exponent field and 2**(r/32) ~ 1 + C2 r + C1 r**2 + C0 r**3, all in double, with
# one final rounding to float32. The double steps are accurate enough that the result is
# correctly rounded except for ~1 input in 4000, and in those the exact double arithmetic
# decides, including whether the compiler fused a multiply and an add: x86-64 glibc selects
# at load time a build with FMA instructions when the CPU has FMA and AVX2 (e_expf-fma.c, where
# GCC contracts every multiply-add of the C code into one fma), and a plain SSE2 build
# otherwise. Both are ported; numpy has no fma, so it is emulated exactly below.

_EXP2F_TABLE_BITS = 5
_N = 1 << _EXP2F_TABLE_BITS
_INVLN2_N = float.fromhex("0x1.71547652b82fep+0") * _N
_SHIFT = float.fromhex("0x1.8p+52")
# The exp2f polynomial's coefficients, scaled for r in units of 1/32: C0 r^3 + C1 r^2 + C2 r.
_C0 = float.fromhex("0x1.c6af84b912394p-5") / _N ** 3
_C1 = float.fromhex("0x1.ebfce50fac4f3p-3") / _N ** 2
_C2 = float.fromhex("0x1.62e42ff0c52d6p-1") / _N
# expf's special-case thresholds (float32 values).
_TOP12_88 = 0x42B  # the top 12 bits of 88.0f: |x| >= 88, or NaN/inf, leaves the fast path
_OFLOW = F(float.fromhex("0x1.62e42ep6"))  # above: log(2**128) < x, result +inf
_UFLOW = F(float.fromhex("-0x1.9fe368p6"))  # below: result rounds to 0 (log(2**-150))
_MAY_UFLOW = F(float.fromhex("-0x1.9d1d9ep6"))  # below (log(2**-149)): glibc returns the
# constant 0x1.4p-75f * 0x1.4p-75f, which is the smallest subnormal


def _exp2_table() -> np.ndarray:
    """The 32 entries of glibc's ``__exp2f_data.tab``: the bits of 2**(i/32) rounded to the
    nearest double, minus ``i << 47`` so that adding ``k << 47`` for k = 32 q + i leaves
    2**(i/32) with q added to its exponent.

    2**(i/32) is computed here with integers: five nested integer square roots of
    2**((52 + 8) * 32 + i) give floor(2**(52 + 8 + i/32)) exactly (nested floors of square
    roots are the floor of the 32nd root), and rounding off the 8 guard bits is never a tie
    (2**(i/32) is irrational for i != 0).
    """
    guard = 8
    out = []
    for i in range(_N):
        v = 1 << ((52 + guard) * _N + i)
        for _ in range(_EXP2F_TABLE_BITS):
            v = math.isqrt(v)  # floor of the 32nd root, exactly
        mant = (v + (1 << (guard - 1))) >> guard  # round to nearest (never a tie)
        bits = (0x3FF << 52) + mant - (1 << 52)
        out.append(bits - (i << (52 - _EXP2F_TABLE_BITS)))
    tab = np.array(out, dtype=np.int64)
    tab.setflags(write=False)
    return tab


_EXP2F_TAB = _exp2_table()


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Veltkamp's split of doubles into two halves of at most 26 significant bits each."""
    c = a * 134217729.0  # 2**27 + 1
    hi = c - (c - a)
    return hi, a - hi


def _two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dekker's exact product: p + e == a * b exactly, p = fl(a * b) (no overflow here)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Knuth's exact sum: s + e == a + b exactly, s = fl(a + b)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def _add_round_odd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b rounded to odd: exact sums are kept, inexact ones go to whichever neighbour has
    an odd last significand bit (the rounding that makes a later round-to-nearest of a sum
    free of double rounding)."""
    s, e = _two_sum(a, b)
    even = (s.view(np.int64) & 1) == 0
    step = np.nextafter(s, np.where(e > 0, np.inf, -np.inf))
    return np.where((e != 0) & even, step, s)


def _fma_prod(p: np.ndarray, pe: np.ndarray, c: np.ndarray | float) -> np.ndarray:
    """fma(a, b, c) given the exact product a * b = p + pe: correctly rounded a * b + c.

    Boldo and Melquiond's emulation (IEEE Trans. Computers 57(4), 2008): th + tl = c + p
    exactly, v = tl + pe rounded to odd, result = fl(th + v).
    """
    th, tl = _two_sum(np.asarray(c, np.float64), p)
    return th + _add_round_odd(tl, pe)


def _fma(a: np.ndarray | float, b: np.ndarray | float, c: np.ndarray | float) -> np.ndarray:
    """Correctly rounded a * b + c on doubles (C's fma), for operands whose product neither
    overflows nor underflows."""
    p, pe = _two_prod(np.asarray(a, np.float64), np.asarray(b, np.float64))
    return _fma_prod(p, pe, c)


@lru_cache(maxsize=1)
def host_expf_uses_fma() -> bool:
    """Whether the host's glibc expf is its FMA build: on x86-64 glibc picks it when the CPU
    has both FMA and AVX2 (sysdeps/x86_64/fpu/multiarch/ifunc-fma.h); other 64-bit targets
    (aarch64) contract multiply-adds into fma unconditionally."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return True
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return "fma" in flags and "avx2" in flags
    except OSError:
        pass
    return os.name != "nt"  # unknown: modern x86-64 CPUs all have FMA and AVX2


def expf(x: np.ndarray, fused: bool | None = None) -> np.ndarray:
    """glibc's ``expf`` on float32 arrays, bit for bit (std::exp(float) in TFLM's float
    kernels on a Linux host, i.e. what the wheel computes).

    ``fused`` selects the FMA build (True) or the SSE2 build (False) of glibc's x86-64 libm;
    None follows the host (:func:`host_expf_uses_fma`). Checked against the host's libm (the
    FMA build) on every float32 bit pattern (all 2**32: 0 differences; the unfused port
    differs from it on 2 inputs of [-104, 89], and exp in double rounded once on 170648);
    tests/kernels/test_libm_expf.py repeats that on ~4.5M inputs covering every branch.
    """
    x = np.asarray(x, F)
    if fused is None:
        fused = host_expf_uses_fma()
    with np.errstate(all="ignore"):
        y = _expf_core(x, fused).astype(F)
        abstop = (x.view(np.uint32) >> 20) & 0x7FF
        special = abstop >= _TOP12_88
        if np.any(special):
            y = np.where(x < _MAY_UFLOW, F(float.fromhex("0x1p-149")), y)
            y = np.where(x < _UFLOW, F(0), y)
            y = np.where(x > _OFLOW, F(np.inf), y)
            y = np.where(abstop >= 0x7F8, x + x, y)  # NaN stays NaN, +inf -> +inf
            y = np.where(x == F(-np.inf), F(0), y)
    return y


_INVLN2_N_HI, _INVLN2_N_LO = (float(v[0]) for v in _split(np.array([_INVLN2_N])))
_NEAR_HALF_ULPS = 64  # see _expf_core


def _expf_core(x: np.ndarray, fused: bool) -> np.ndarray:
    """glibc expf's fast path (|x| < 88 and finite; other inputs give garbage the caller
    replaces), in double, before the final rounding to float32."""
    shape = x.shape
    xd = x.reshape(-1).astype(np.float64)
    xd = np.where(np.isfinite(xd), np.clip(xd, -200.0, 200.0), 0.0)
    z = _INVLN2_N * xd
    if fused:
        # kd = fma(InvLn2N, xd, SHIFT) - SHIFT and r = fma(InvLn2N, xd, -kd): x * 32/ln2 is
        # formed exactly, as z + ze (Dekker's product; xd has only 24 significant bits, so
        # splitting the constant suffices), and rounded to the integer k and to r directly.
        # Rounding z instead of z + ze to an integer differs only when z is a half-integer
        # (rounding is monotonic and half-integers are doubles): then ze's sign decides.
        # z - kd is exact (|z - kd| <= 1/2 + ulp(z), a multiple of ulp(z)), so r is one add.
        ze = (xd * _INVLN2_N_HI - z) + xd * _INVLN2_N_LO
        kd_shifted = z + _SHIFT
        kd = kd_shifted - _SHIFT
        d = z - kd
        adj = ((d == 0.5) & (ze > 0)).astype(np.int64) - ((d == -0.5) & (ze < 0))
        ki = kd_shifted.view(np.int64) + adj  # k in the low bits (ulp 1 there)
        kd = kd + adj
        r = (z - kd) + ze
    else:
        kd_shifted = z + _SHIFT
        ki = kd_shifted.view(np.int64)  # low bits: k (two's complement, as the C uint64_t)
        kd = kd_shifted - _SHIFT
        r = z - kd
    t = _EXP2F_TAB[ki & (_N - 1)] + (ki << (52 - _EXP2F_TABLE_BITS))
    s = t.view(np.float64)
    r2 = r * r
    # The polynomial without fusing; the fused one differs from it by a few ulps of y at most.
    y = (_C0 * r + _C1) * r2 + (_C2 * r + 1.0)
    q = y * s
    if fused:
        # Only where q lies within _NEAR_HALF_ULPS double ulps of a float32 rounding midpoint
        # (about 1 element in 30000), or in float32's subnormal range (x < -87.3), can that
        # difference change the float32 result; recompute those with exact fmas.
        low = q.view(np.int64) & ((1 << 29) - 1)
        near = (np.abs(low - (1 << 28)) <= _NEAR_HALF_ULPS) | (q < 2.0 ** -125)
        idx = np.flatnonzero(near)
        if idx.size:
            rn = r[idx]
            yn = _fma(_fma(_C0, rn, _C1), r2[idx], _fma(_C2, rn, 1.0))
            q[idx] = yn * s[idx]
    return q.reshape(shape)


# -- newlib's fdlibm expf (soft-float Cortex-M builds) --------------------------------------
#
# newlib compiles its old, fdlibm-derived float math (ef_exp.c, ``__OBSOLETE_MATH``) when the
# target has no single-precision FPU (Cortex-M0/M0+/M3 with -mfloat-abi=soft), instead of the
# double-based expf above. Every operation below is one float32 operation of that C code.

def _f(bits: int) -> np.float32:
    return np.array([bits], np.uint32).view(F)[0]


_FD_LN2_HI, _FD_LN2_LO = _f(0x3F317180), _f(0x3717F7D1)
_FD_INVLN2 = _f(0x3FB8AA3B)
_FD_P = (_f(0x3E2AAAAB), _f(0xBB360B61), _f(0x388AB355), _f(0xB5DDEA0E), _f(0x3331BB4C))
_FD_TWOM100 = _f(0x0D800000)


def expf_fdlibm(x: np.ndarray, fused: bool = False) -> np.ndarray:
    """newlib's ``__ieee754_expf`` (fdlibm's ef_exp.c) on float32 arrays: reduce by k*ln2 (k
    from 1 or -1 within 1.5*ln2, else invln2*x + 1/2 truncated), a degree-5 polynomial, then
    add k to the exponent bits (via 2**-100 for k < -125).

    ``fused``: the same C code as newlib's single-precision-FPU multilibs compile it
    (``thumb/v7e-m+fp``, ``v8-m.main+fp``: Cortex-M4/M33 with FPv4-SP/FPv5-SP): GCC contracts
    ``invln2*x + 1/2``, ``x - t*ln2_hi``, the polynomial's Horner steps and ``r - t*P`` into
    VFMA/VFMS (read from the disassembly of arm-none-eabi-gcc 12.2.1's newlib 3.3.0)."""
    x = np.asarray(x, F)
    one, two = F(1), F(2)

    def mad(a: np.ndarray | np.float32, b: np.ndarray | np.float32,
            c: np.ndarray | np.float32) -> np.ndarray:
        if fused:
            from tinyarena.kernels._fma import fma32

            return fma32(np.asarray(a, F), np.asarray(b, F), np.asarray(c, F))
        return np.asarray(np.asarray(a, F) * np.asarray(b, F) + np.asarray(c, F), F)

    with np.errstate(all="ignore"):
        sx = x.view(np.int32).astype(np.int64)
        hx = sx & 0x7FFFFFFF
        neg = sx < 0
        near = (hx > 0x3EB17218) & (hx < 0x3F851592)
        far = hx >= 0x3F851592
        k_far = np.trunc(mad(_FD_INVLN2, x, np.where(neg, F(-0.5), F(0.5)))).astype(np.int64)
        k = np.where(near, np.where(neg, -1, 1), np.where(far, k_far, 0))
        t = k.astype(F)
        hi = np.where(near, x - np.where(neg, -_FD_LN2_HI, _FD_LN2_HI),
                      np.where(far, mad(-t, _FD_LN2_HI, x), x))
        lo = np.where(near, np.where(neg, -_FD_LN2_LO, _FD_LN2_LO),
                      np.where(far, t * _FD_LN2_LO, F(0)))
        r = np.where(near | far, hi - lo, x)
        tt = r * r
        p1, p2, p3, p4, p5 = _FD_P
        c = mad(-tt, mad(mad(mad(mad(tt, p5, p4), tt, p3), tt, p2), tt, p1), r)
        y0 = one - ((r * c) / (c - two) - r)
        y = one - ((lo - (r * c) / (two - c)) - hi)
        ybits = y.view(np.uint32).astype(np.int64)
        scaled = np.where(k >= -125, ybits + (k << 23), ybits + ((k + 100) << 23))
        yk = (scaled & 0xFFFFFFFF).astype(np.uint32).view(F)
        yk = np.where(k >= -125, yk, yk * _FD_TWOM100)
        out = np.where(k == 0, y0, yk)
        out = np.where(hx < 0x31800000, one + x, out)
        out = np.where(sx > 0x42B17217, F(np.inf), out)
        out = np.where(neg & (hx > 0x42CFF1B5), F(0), out)
        out = np.where(hx == 0x7F800000, np.where(neg, F(0), x), out)
        out = np.where(hx > 0x7F800000, x + x, out)
    return out.astype(F)


LIBMS = ("glibc", "newlib", "newlib-fdlibm", "newlib-fdlibm-fma")
"""The C libraries whose ``expf`` tinyarena reproduces (``TargetProfile.libm``)."""


def expf_for(libm: str) -> Callable[[np.ndarray], np.ndarray]:
    """std::exp(float) of a build's C library: glibc (the wheel's host: its FMA or SSE2 build,
    as the host CPU picks), newlib with a double-precision FPU (the same double-based
    algorithm as glibc's, unfused), newlib's fdlibm code (no FPU) or that code as the
    single-precision-FPU multilibs compile it, with fused multiply-adds ("newlib-fdlibm-fma").
    Compiled kernels port the first three only (``native.libm.expf_mode_for``); the fused
    fdlibm runs in numpy."""
    if libm == "newlib-fdlibm":
        return expf_fdlibm
    if libm == "newlib-fdlibm-fma":
        return _expf_fdlibm_fused
    if libm == "newlib":
        return _expf_unfused
    return expf


def _expf_fdlibm_fused(x: np.ndarray) -> np.ndarray:
    return expf_fdlibm(x, fused=True)


def _expf_unfused(x: np.ndarray) -> np.ndarray:
    return expf(x, fused=False)


__all__ = ["LIBMS", "expf", "expf_fdlibm", "expf_for", "expm1f", "host_expf_uses_fma", "tanhf",
           "tanhf_reference"]
