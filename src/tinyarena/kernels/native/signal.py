"""Compiled loops of TFLM's signal library (``kernels/signal``): kissfft's real FFT and its
inverse, the audio front end's per-channel ops, and the ring-buffer ops.

Why: the numpy paths of these ops run a handful of vectorised passes per call (kissfft's
stages, the digit-by-digit square root, the log table, a ring write per frame) and cost
0.1-2 ms per invoke of the audio front end, where the wheel's C takes 12 us for the whole
chain; they run once per 10 ms audio frame in a wake-word pipeline.

Each loop is the scalar C arithmetic the numpy path reproduces (``signal/_kiss_fft.py``,
``_common.sqrt64``, ``pcan.wide_dynamic_function``, ``filter_bank_log.log32``,
``_circular_buffer.Ring``...), written once per element. kissfft's macros
(``_kiss_fft_guts.h``) are numba overloads that pick the fixed-point form (int64 working
values truncated to the sample width, ``sround``, C_FIXDIV) or the float form (float32, C's
operand order, no contraction) from the working array's type, so the butterflies are written
once for the three builds. State kept between invokes (spectral subtraction's noise estimate,
the rings of Framer/Stacker/Delay, OverlapAdd's buffers) stays in the kernels' own
workspaces, so reset and the numpy path see the same state. None of these ops reads
``ctx.target``: their numpy paths are the same on every target, and so are these loops.

Where eval raises on values only known at invoke time (FilterBankSquareRoot's scale, PCAN's
table reach, a ring overflow), the loop returns 1 before writing anything and the step runs
eval (or raises) instead: ``checked_step``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels import native

Step = Callable[[], None]

import numba as _numba  # noqa: E402  (this module is imported only when enabled)
from numba import types as _types  # noqa: E402
from numba.extending import overload as _overload  # noqa: E402

U32 = np.uint64(0xFFFFFFFF)


def _helper(fn: Callable[..., Any]) -> Any:
    """A helper of the kernels below, compiled with their settings and left for LLVM to
    inline. Not numba's ``inline="always"``: inlining kissfft's macros at numba's IR level
    made a cold compile of the fixed-point FFT take 20 s (3 s now) for 20% less run time."""
    return _numba.njit(nogil=True, error_model="numpy", boundscheck=False)(fn)


# ----------------------------------------------------------------------------------------------
# kissfft's macros: fixed point on int64 working values (``bits`` = 16 or 32), or float32
# ----------------------------------------------------------------------------------------------


def _st(x: Any, bits: int) -> Any:  # pragma: no cover - typed by the overload below
    """Store into a kiss_fft_scalar."""


def _sround(x: Any, bits: int) -> Any:  # pragma: no cover
    """sround(SAMPPROD x): add half, shift right by the fraction bits, store."""


def _smul(a: Any, b: Any, bits: int) -> Any:  # pragma: no cover
    """S_MUL."""


def _cmul_r(ar: Any, ai: Any, br: Any, bi: Any, bits: int) -> Any:  # pragma: no cover
    """C_MUL's real part."""


def _cmul_i(ar: Any, ai: Any, br: Any, bi: Any, bits: int) -> Any:  # pragma: no cover
    """C_MUL's imaginary part."""


def _fixdiv(x: Any, div: int, bits: int) -> Any:  # pragma: no cover
    """C_FIXDIV on one component (a no-op in the float build)."""


def _half(x: Any) -> Any:  # pragma: no cover
    """HALF_OF: C int arithmetic shifted right once, or times 0.5f."""


@_helper
def _wrap32(x: Any) -> Any:
    return ((x + np.int64(0x80000000)) & np.int64(0xFFFFFFFF)) - np.int64(0x80000000)


@_helper
def _fixed_st(x: Any, bits: int) -> Any:
    """Two's-complement truncation to ``bits``: shifted up and arithmetically back down
    (branch-free: a conditional inside numba's inlined overloads trips its SSA checks)."""
    return (x << (64 - bits)) >> (64 - bits)


@_helper
def _fixed_prod(x: Any, bits: int) -> Any:
    """SAMPPROD: int32 for 16-bit samples, int64 (which wraps by itself) for 32-bit ones."""
    return (x << (64 - 2 * bits)) >> (64 - 2 * bits)


@_helper
def _fixed_sround(x: Any, bits: int) -> Any:
    frac = bits - 1
    return _fixed_st(_fixed_prod(x + (np.int64(1) << (frac - 1)), bits) >> frac, bits)


def _is_float(x: Any) -> bool:
    return isinstance(x, _types.Float)


# The overloads' parameters carry no annotations: numba requires the typing function and the
# implementation it returns to have identical signatures.


@_overload(_st)
def _st_impl(x, bits):
    if _is_float(x):
        return lambda x, bits: x
    return lambda x, bits: _fixed_st(x, bits)


@_overload(_sround)
def _sround_impl(x, bits):
    if _is_float(x):
        return lambda x, bits: x
    return lambda x, bits: _fixed_sround(x, bits)


@_overload(_smul)
def _smul_impl(a, b, bits):
    if _is_float(a):
        return lambda a, b, bits: a * b
    return lambda a, b, bits: _fixed_sround(_fixed_prod(a * b, bits), bits)


@_overload(_cmul_r)
def _cmul_r_impl(ar, ai, br, bi, bits):
    if _is_float(ar):
        return lambda ar, ai, br, bi, bits: ar * br - ai * bi
    return lambda ar, ai, br, bi, bits: _fixed_sround(_fixed_prod(ar * br - ai * bi, bits),
                                                      bits)


@_overload(_cmul_i)
def _cmul_i_impl(ar, ai, br, bi, bits):
    if _is_float(ar):
        return lambda ar, ai, br, bi, bits: ar * bi + ai * br
    return lambda ar, ai, br, bi, bits: _fixed_sround(_fixed_prod(ar * bi + ai * br, bits),
                                                      bits)


@_overload(_fixdiv)
def _fixdiv_impl(x, div, bits):
    if _is_float(x):
        return lambda x, div, bits: x
    return lambda x, div, bits: _fixed_sround(
        _fixed_prod(x * (((np.int64(1) << (bits - 1)) - 1) // div), bits), bits)


def _sample_bits(samples: Any) -> Any:  # pragma: no cover
    """The build's sample width (16, 32; 0 for float) from the sample array's type: a
    compile-time constant in each specialisation, which the fixed-point macros' shifts fold
    (measured: 30% faster than reading it from the parameters)."""


@_overload(_sample_bits)
def _sample_bits_impl(samples):
    width = 0 if isinstance(samples.dtype, _types.Float) else samples.dtype.bitwidth
    return lambda samples: width


@_overload(_half)
def _half_impl(x):
    if _is_float(x):
        return lambda x: x * np.float32(0.5)
    return lambda x: _wrap32(x) >> 1


def _unscale(x: Any, length: int) -> Any:  # pragma: no cover
    """Irfft's float build divides by fft_length (kissfft's inverse is unscaled); the
    fixed-point builds scaled down at every stage already."""


@_overload(_unscale)
def _unscale_impl(x, length):
    if _is_float(x):
        return lambda x, length: x / np.float32(length)
    return lambda x, length: x


# ----------------------------------------------------------------------------------------------
# kiss_fft: digit-reversal gather, then the stages innermost first, in place
# ----------------------------------------------------------------------------------------------

# plan header (int64 ``p``): then the gather (n entries), then (radix, m, fstride) per stage;
# P_BITS records the sample width (the loops take it from the sample array's type)
P_N, P_BITS, P_STAGES, P_ROWS, P_IN_LEN, P_OUT_STEP, P_HEADER = 0, 1, 2, 3, 4, 5, 6
# twiddle rows of ``tw``
TW_R, TW_I, SUPER_R, SUPER_I = 0, 1, 2, 3


@_helper
def _bfly2(re: Any, im: Any, tw: Any, base: int, m: int, fstride: int, bits: int) -> None:
    for k in range(m):
        a = base + k
        b = a + m
        r0 = _fixdiv(re[a], 2, bits)
        i0 = _fixdiv(im[a], 2, bits)
        r1 = _fixdiv(re[b], 2, bits)
        i1 = _fixdiv(im[b], 2, bits)
        t = k * fstride
        tr = _cmul_r(r1, i1, tw[TW_R, t], tw[TW_I, t], bits)
        ti = _cmul_i(r1, i1, tw[TW_R, t], tw[TW_I, t], bits)
        re[a] = _st(r0 + tr, bits)
        re[b] = _st(r0 - tr, bits)
        im[a] = _st(i0 + ti, bits)
        im[b] = _st(i0 - ti, bits)


@_helper
def _bfly4(re: Any, im: Any, tw: Any, base: int, m: int, fstride: int, bits: int,
           inverse: int) -> None:
    for k in range(m):
        a0 = base + k
        a1 = a0 + m
        a2 = a1 + m
        a3 = a2 + m
        r0 = _fixdiv(re[a0], 4, bits)
        i0 = _fixdiv(im[a0], 4, bits)
        r1 = _fixdiv(re[a1], 4, bits)
        i1 = _fixdiv(im[a1], 4, bits)
        r2 = _fixdiv(re[a2], 4, bits)
        i2 = _fixdiv(im[a2], 4, bits)
        r3 = _fixdiv(re[a3], 4, bits)
        i3 = _fixdiv(im[a3], 4, bits)
        t1 = k * fstride
        t2 = 2 * t1
        t3 = 3 * t1
        s0r = _cmul_r(r1, i1, tw[TW_R, t1], tw[TW_I, t1], bits)
        s0i = _cmul_i(r1, i1, tw[TW_R, t1], tw[TW_I, t1], bits)
        s1r = _cmul_r(r2, i2, tw[TW_R, t2], tw[TW_I, t2], bits)
        s1i = _cmul_i(r2, i2, tw[TW_R, t2], tw[TW_I, t2], bits)
        s2r = _cmul_r(r3, i3, tw[TW_R, t3], tw[TW_I, t3], bits)
        s2i = _cmul_i(r3, i3, tw[TW_R, t3], tw[TW_I, t3], bits)
        s5r = _st(r0 - s1r, bits)
        s5i = _st(i0 - s1i, bits)
        r0 = _st(r0 + s1r, bits)
        i0 = _st(i0 + s1i, bits)
        s3r = _st(s0r + s2r, bits)
        s3i = _st(s0i + s2i, bits)
        s4r = _st(s0r - s2r, bits)
        s4i = _st(s0i - s2i, bits)
        re[a2] = _st(r0 - s3r, bits)
        im[a2] = _st(i0 - s3i, bits)
        re[a0] = _st(r0 + s3r, bits)
        im[a0] = _st(i0 + s3i, bits)
        if inverse:
            re[a1] = _st(s5r - s4i, bits)
            im[a1] = _st(s5i + s4r, bits)
            re[a3] = _st(s5r + s4i, bits)
            im[a3] = _st(s5i - s4r, bits)
        else:
            re[a1] = _st(s5r + s4i, bits)
            im[a1] = _st(s5i - s4r, bits)
            re[a3] = _st(s5r - s4i, bits)
            im[a3] = _st(s5i + s4r, bits)


@_helper
def _bfly3(re: Any, im: Any, tw: Any, base: int, m: int, fstride: int, bits: int) -> None:
    epi_i = tw[TW_I, fstride * m]
    for k in range(m):
        a0 = base + k
        a1 = a0 + m
        a2 = a1 + m
        r0 = _fixdiv(re[a0], 3, bits)
        i0 = _fixdiv(im[a0], 3, bits)
        r1 = _fixdiv(re[a1], 3, bits)
        i1 = _fixdiv(im[a1], 3, bits)
        r2 = _fixdiv(re[a2], 3, bits)
        i2 = _fixdiv(im[a2], 3, bits)
        t1 = k * fstride
        t2 = 2 * t1
        s1r = _cmul_r(r1, i1, tw[TW_R, t1], tw[TW_I, t1], bits)
        s1i = _cmul_i(r1, i1, tw[TW_R, t1], tw[TW_I, t1], bits)
        s2r = _cmul_r(r2, i2, tw[TW_R, t2], tw[TW_I, t2], bits)
        s2i = _cmul_i(r2, i2, tw[TW_R, t2], tw[TW_I, t2], bits)
        s3r = _st(s1r + s2r, bits)
        s3i = _st(s1i + s2i, bits)
        s0r = _st(s1r - s2r, bits)
        s0i = _st(s1i - s2i, bits)
        r1 = _st(r0 - _half(s3r), bits)
        i1 = _st(i0 - _half(s3i), bits)
        s0r = _smul(s0r, epi_i, bits)
        s0i = _smul(s0i, epi_i, bits)
        re[a0] = _st(r0 + s3r, bits)
        im[a0] = _st(i0 + s3i, bits)
        re[a2] = _st(r1 + s0i, bits)
        im[a2] = _st(i1 - s0r, bits)
        re[a1] = _st(r1 - s0i, bits)
        im[a1] = _st(i1 + s0r, bits)


@_helper
def _bfly5(re: Any, im: Any, tw: Any, base: int, m: int, fstride: int, bits: int) -> None:
    ya = fstride * m
    yar = tw[TW_R, ya]
    yai = tw[TW_I, ya]
    ybr = tw[TW_R, 2 * ya]
    ybi = tw[TW_I, 2 * ya]
    for k in range(m):
        a0 = base + k
        a1 = a0 + m
        a2 = a1 + m
        a3 = a2 + m
        a4 = a3 + m
        s0r = _fixdiv(re[a0], 5, bits)
        s0i = _fixdiv(im[a0], 5, bits)
        f1r = _fixdiv(re[a1], 5, bits)
        f1i = _fixdiv(im[a1], 5, bits)
        f2r = _fixdiv(re[a2], 5, bits)
        f2i = _fixdiv(im[a2], 5, bits)
        f3r = _fixdiv(re[a3], 5, bits)
        f3i = _fixdiv(im[a3], 5, bits)
        f4r = _fixdiv(re[a4], 5, bits)
        f4i = _fixdiv(im[a4], 5, bits)
        t1 = k * fstride
        s1r = _cmul_r(f1r, f1i, tw[TW_R, t1], tw[TW_I, t1], bits)
        s1i = _cmul_i(f1r, f1i, tw[TW_R, t1], tw[TW_I, t1], bits)
        s2r = _cmul_r(f2r, f2i, tw[TW_R, 2 * t1], tw[TW_I, 2 * t1], bits)
        s2i = _cmul_i(f2r, f2i, tw[TW_R, 2 * t1], tw[TW_I, 2 * t1], bits)
        s3r = _cmul_r(f3r, f3i, tw[TW_R, 3 * t1], tw[TW_I, 3 * t1], bits)
        s3i = _cmul_i(f3r, f3i, tw[TW_R, 3 * t1], tw[TW_I, 3 * t1], bits)
        s4r = _cmul_r(f4r, f4i, tw[TW_R, 4 * t1], tw[TW_I, 4 * t1], bits)
        s4i = _cmul_i(f4r, f4i, tw[TW_R, 4 * t1], tw[TW_I, 4 * t1], bits)
        s7r = _st(s1r + s4r, bits)
        s7i = _st(s1i + s4i, bits)
        s10r = _st(s1r - s4r, bits)
        s10i = _st(s1i - s4i, bits)
        s8r = _st(s2r + s3r, bits)
        s8i = _st(s2i + s3i, bits)
        s9r = _st(s2r - s3r, bits)
        s9i = _st(s2i - s3i, bits)
        re[a0] = _st(s0r + (s7r + s8r), bits)
        im[a0] = _st(s0i + (s7i + s8i), bits)
        s5r = _st(s0r + _smul(s7r, yar, bits) + _smul(s8r, ybr, bits), bits)
        s5i = _st(s0i + _smul(s7i, yar, bits) + _smul(s8i, ybr, bits), bits)
        s6r = _st(_smul(s10i, yai, bits) + _smul(s9i, ybi, bits), bits)
        s6i = _st(-_smul(s10r, yai, bits) - _smul(s9r, ybi, bits), bits)
        re[a1] = _st(s5r - s6r, bits)
        im[a1] = _st(s5i - s6i, bits)
        re[a4] = _st(s5r + s6r, bits)
        im[a4] = _st(s5i + s6i, bits)
        s11r = _st(s0r + _smul(s7r, ybr, bits) + _smul(s8r, yar, bits), bits)
        s11i = _st(s0i + _smul(s7i, ybr, bits) + _smul(s8i, yar, bits), bits)
        s12r = _st(-_smul(s10i, ybi, bits) + _smul(s9i, yai, bits), bits)
        s12i = _st(_smul(s10r, ybi, bits) - _smul(s9r, yai, bits), bits)
        re[a2] = _st(s11r + s12r, bits)
        im[a2] = _st(s11i + s12i, bits)
        re[a3] = _st(s11r - s12r, bits)
        im[a3] = _st(s11i - s12i, bits)


@_helper
def _kiss_fft(re: Any, im: Any, tw: Any, p: Any, inverse: int, samples: Any) -> None:
    """The stages over the gathered ``re``/``im`` (length n), in place; ``samples`` (the
    op's input) gives the build."""
    n = p[P_N]
    bits = _sample_bits(samples)
    at = P_HEADER + n
    for s in range(p[P_STAGES]):
        radix = p[at]
        m = p[at + 1]
        fstride = p[at + 2]
        at += 3
        for base in range(0, n, radix * m):
            if radix == 2:
                _bfly2(re, im, tw, base, m, fstride, bits)
            elif radix == 3:
                _bfly3(re, im, tw, base, m, fstride, bits)
            elif radix == 4:
                _bfly4(re, im, tw, base, m, fstride, bits, inverse)
            else:
                _bfly5(re, im, tw, base, m, fstride, bits)


@native.jit
def rfft(x: Any, out: Any, work: Any, p: Any, tw: Any, buf: Any) -> None:  # pragma: no cover
    """SignalRfft: each row zero-padded into the work area, kiss_fftr, bins interleaved at
    the row's output offset (later rows overwrite earlier ones where they overlap)."""
    n = p[P_N]
    bits = _sample_bits(x)
    in_len = p[P_IN_LEN]
    out_step = p[P_OUT_STEP]
    fft_length = 2 * n
    re = buf[0]
    im = buf[1]
    for row in range(p[P_ROWS]):
        xb = row * in_len
        for j in range(n):
            g = 2 * p[P_HEADER + j]
            re[j] = x[xb + g] if g < in_len else 0
            im[j] = x[xb + g + 1] if g + 1 < in_len else 0
        _kiss_fft(re, im, tw, p, 0, x)
        dr = _fixdiv(re[0], 2, bits)
        di = _fixdiv(im[0], 2, bits)
        ob = row * out_step
        out[ob] = _st(dr + di, bits)
        out[ob + 1] = 0
        out[ob + 2 * n] = _st(dr - di, bits)
        out[ob + 2 * n + 1] = 0
        for k in range(1, n // 2 + 1):
            ar = _fixdiv(re[k], 2, bits)
            ai = _fixdiv(im[k], 2, bits)
            br = _fixdiv(re[n - k], 2, bits)
            bi = _fixdiv(_st(-im[n - k], bits), 2, bits)
            f1r = _st(ar + br, bits)
            f1i = _st(ai + bi, bits)
            f2r = _st(ar - br, bits)
            f2i = _st(ai - bi, bits)
            twr = _cmul_r(f2r, f2i, tw[SUPER_R, k - 1], tw[SUPER_I, k - 1], bits)
            twi = _cmul_i(f2r, f2i, tw[SUPER_R, k - 1], tw[SUPER_I, k - 1], bits)
            out[ob + 2 * k] = _st(_half(f1r + twr), bits)
            out[ob + 2 * k + 1] = _st(_half(twi + f1i), bits)
            out[ob + 2 * (n - k)] = _st(_half(f1r - twr), bits)
            out[ob + 2 * (n - k) + 1] = _st(_half(twi - f1i), bits)
    rows = p[P_ROWS]
    if rows > 0:
        xb = (rows - 1) * in_len
        for j in range(fft_length):
            work[j] = x[xb + j] if j < in_len else 0


@native.jit
def irfft(x: Any, out: Any, p: Any, tw: Any, buf: Any) -> None:  # pragma: no cover
    """SignalIrfft: each row of bins through kiss_fftri (the bins paired into nfft complex
    values, then kiss_fft), samples at the row's output offset."""
    n = p[P_N]
    bits = _sample_bits(x)
    in_step = p[P_IN_LEN]  # int values per input row (2 per complex)
    out_step = p[P_OUT_STEP]
    fr = buf[2]
    fi = buf[3]
    re = buf[0]
    im = buf[1]
    for row in range(p[P_ROWS]):
        xb = row * in_step
        for k in range(n + 1):  # the bins in the working type (int64 or float32)
            re[k] = x[xb + 2 * k]
            im[k] = x[xb + 2 * k + 1]
        fr[0] = _fixdiv(_st(re[0] + re[n], bits), 2, bits)
        fi[0] = _fixdiv(_st(re[0] - re[n], bits), 2, bits)
        for k in range(1, n // 2 + 1):
            ar = _fixdiv(re[k], 2, bits)
            ai = _fixdiv(im[k], 2, bits)
            br = _fixdiv(re[n - k], 2, bits)
            bi = _fixdiv(_st(-im[n - k], bits), 2, bits)
            er = _st(ar + br, bits)
            ei = _st(ai + bi, bits)
            dr = _st(ar - br, bits)
            di = _st(ai - bi, bits)
            okr = _cmul_r(dr, di, tw[SUPER_R, k - 1], tw[SUPER_I, k - 1], bits)
            oki = _cmul_i(dr, di, tw[SUPER_R, k - 1], tw[SUPER_I, k - 1], bits)
            fr[k] = _st(er + okr, bits)
            fi[k] = _st(ei + oki, bits)
            fr[n - k] = _st(er - okr, bits)
            fi[n - k] = _st(-_st(ei - oki, bits), bits)
        for j in range(n):
            g = p[P_HEADER + j]
            re[j] = fr[g]
            im[j] = fi[g]
        _kiss_fft(re, im, tw, p, 1, x)
        ob = row * out_step
        for j in range(n):
            out[ob + 2 * j] = _unscale(re[j], 2 * n)
            out[ob + 2 * j + 1] = _unscale(im[j], 2 * n)


def kiss_plan_arrays(plan: Any, header: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """A ``_kiss_fft.Plan`` as the int64 parameter array (header, gather, stages) and the
    (4, n) twiddle array (twiddles, super twiddles; int64 or float32)."""
    n = plan.nfft
    p = np.zeros(P_HEADER + n + 3 * len(plan.stages), np.int64)
    p[P_N] = n
    p[P_BITS] = {"int16": 16, "int32": 32}.get(plan.kind, 0)
    p[P_STAGES] = len(plan.stages)
    for key, value in header.items():
        p[key] = value
    p[P_HEADER:P_HEADER + n] = plan.gather
    p[P_HEADER + n:] = np.array(plan.stages, np.int64).reshape(-1)
    dtype = np.float32 if plan.kind == "float32" else np.int64
    tw = np.zeros((4, max(n, 1)), dtype)
    tw[TW_R, :n] = plan.tw_r
    tw[TW_I, :n] = plan.tw_i
    tw[SUPER_R, :n // 2] = plan.super_r
    tw[SUPER_I, :n // 2] = plan.super_i
    return p, tw


def bind_rfft(plan: Any, x: np.ndarray, out: np.ndarray, work: np.ndarray, rows: int,
              input_length: int, output_length: int) -> Step | None:
    """Rfft's rows through the compiled kiss_fftr; None when a view is not the flat,
    contiguous array of the type the plan expects, or too short for the rows."""
    n = plan.nfft
    dtype = {"int16": np.int16, "int32": np.int32, "float32": np.float32}[plan.kind]
    x, out = x.reshape(-1), out.reshape(-1)
    if any(a.dtype != dtype or not a.flags.c_contiguous for a in (x, out, work)) or \
            not out.flags.writeable or rows <= 0 or input_length > 2 * n:
        return None
    if x.size < rows * input_length or work.size < 2 * n or \
            out.size < (rows - 1) * 2 * output_length + 2 * (n + 1) or \
            not _separate((x,), (out, work)):
        return None
    p, tw = kiss_plan_arrays(plan, {P_ROWS: rows, P_IN_LEN: input_length,
                                    P_OUT_STEP: 2 * output_length})
    buf = np.zeros((2, max(n, 1)), tw.dtype)
    return native.native_step(rfft, x, out, work, p, tw, buf)



# ----------------------------------------------------------------------------------------------
# the audio front end's per-channel ops
# ----------------------------------------------------------------------------------------------


@_helper
def _bit_length(v: Any) -> Any:
    """The bit length of a uint64 (MostSignificantBit for a non-zero value)."""
    n = 0
    step = 32
    while step > 0:
        if (v >> np.uint64(step)) != np.uint64(0):
            n += step
            v = v >> np.uint64(step)
        step >>= 1
    if v != np.uint64(0):
        n += 1
    return n


@_helper
def _bitwise_sqrt(num: Any, top: int, high: int, cap: Any) -> Any:
    """square_root_{32,64}.cc's digit-by-digit loop, rounded up unless the root is ``cap``."""
    if num == np.uint64(0):
        return np.uint64(0)
    shift = high - top
    bit = np.uint64(1) << np.uint64(shift)
    res = np.uint64(0)
    rem = num
    for _ in range(shift // 2 + 1):
        if rem >= res + bit:
            rem = rem - (res + bit)
            res = (res >> np.uint64(1)) + bit
        else:
            res = res >> np.uint64(1)
        bit = bit >> np.uint64(2)
    if rem > res and res != cap:
        res = res + np.uint64(1)
    return res


@_helper
def _sqrt64(num: Any) -> Any:
    """Sqrt64: Sqrt32 when the upper word is clear."""
    if (num >> np.uint64(32)) == np.uint64(0):
        return _bitwise_sqrt(num, (32 - _bit_length(num)) | 1, 31, np.uint64(0xFFFF))
    return _bitwise_sqrt(num, (64 - _bit_length(num)) | 1, 63, np.uint64(0xFFFFFFFF))


@native.jit
def filter_bank_square_root(x: Any, scale_bits: Any, out: Any) -> int:  # pragma: no cover
    """1 (nothing written) when scale_bits is outside 0..31: eval then raises its error."""
    shift = np.int64(scale_bits[0])
    if shift < 0 or shift > 31:
        return 1
    for i in range(x.shape[0]):
        out[i] = np.uint32(_sqrt64(x[i]) >> np.uint64(shift))
    return 0


@native.jit
def pcan(x: Any, noise: Any, lut: Any, out: Any, snr_shift: int) -> int:  # pragma: no cover
    """ApplyPcanAutoGainControlFixed; 1 (nothing written) when a noise estimate would read
    past the gain table (eval then raises)."""
    n = out.shape[0]
    entries = lut.shape[0]
    for i in range(n):
        v = np.int64(noise[i])
        top = v if v <= 2 else 4 * _bit_length(np.uint64(v)) - 4
        if top >= entries:
            return 1
    shift = np.uint64(snr_shift)
    for i in range(n):
        v = np.int64(noise[i])
        if v <= 2:
            gain = np.int64(lut[v])
        else:  # WideDynamicFunction
            interval = _bit_length(np.uint64(v))
            base = 4 * interval - 6
            if interval < 11:
                shifted = (v << (11 - interval)) & np.int64(0xFFFFFFFF)
            else:
                shifted = v >> (interval - 11)
            frac = shifted & np.int64(0x3FF)
            result = (np.int64(lut[base + 2]) * frac) >> 5
            result = _wrap32(result + _wrap32(np.int64(lut[base + 1]) << 5))
            result = _wrap32(result * frac)
            result = _wrap32(result + np.int64(1 << 14)) >> 15
            result = result + np.int64(lut[base])
            gain = ((result + 32768) & np.int64(0xFFFF)) - 32768
        snr = ((np.uint64(x[i]) * np.uint64(gain & np.int64(0xFFFFFFFF))) >> shift) & U32
        if snr < np.uint64(2 << 12):  # PcanShrink
            out[i] = np.uint32((snr * snr) >> np.uint64(20))
        else:
            out[i] = np.uint32(((snr >> np.uint64(6)) - np.uint64(64)) & U32)
    return 0


@native.jit
def filter_bank_log(x: Any, out: Any, lut: Any, p: Any) -> None:  # pragma: no cover
    """Log32 of each channel shifted left by the correction bits, scaled, capped at 32767;
    p = (correction_bits, output_scale)."""
    bits = p[0]
    scale = np.uint64(p[1])
    for i in range(x.shape[0]):
        scaled = (np.int64(x[i]) << bits) & np.int64(0xFFFFFFFF)
        if scaled <= 1:
            out[i] = 0
            continue
        integer = _bit_length(np.uint64(scaled)) - 1
        frac = scaled - (np.int64(1) << integer)
        if integer < 16:
            frac = frac << (16 - integer)
        else:
            frac = frac >> (integer - 16)
        seg = frac >> 9
        c0 = lut[seg]
        rel = ((lut[seg + 1] - c0) * (frac - 512 * seg)) >> 16
        fraction = (frac + c0 + rel) & np.int64(0xFFFFFFFF)
        log2 = ((np.int64(integer) << 16) + fraction) & np.int64(0xFFFFFFFF)
        loge = np.uint64(((log2 * 45426 + 32768) >> 16) & np.int64(0xFFFFFFFF))
        result = ((scale * loge + np.uint64(32768)) & U32) >> np.uint64(16)
        out[i] = np.int16(min(np.int64(result), 32767))


@native.jit
def energy(x: Any, out: Any, start: int, end: int) -> None:  # pragma: no cover
    """SpectrumToEnergy over bins start..end (int32 sum, stored as uint32)."""
    for i in range(start, end):
        re = np.int64(x[2 * i])
        im = np.int64(x[2 * i + 1])
        out[i] = np.uint32((re * re + im * im) & np.int64(0xFFFFFFFF))


@native.jit
def filter_bank(x: Any, weights: Any, bands: Any, out: Any) -> None:  # pragma: no cover
    """FilterbankAccumulateChannels: ``bands`` holds (spectrum start, weight start, width)
    per channel 0..n; ``weights`` the (weights, unweights) sign-extended to uint64."""
    carry = np.uint64(0)
    for c in range(bands.shape[0]):
        fs = bands[c, 0]
        ws = bands[c, 1]
        w_sum = np.uint64(0)
        u_sum = np.uint64(0)
        for j in range(bands[c, 2]):
            e = np.uint64(x[fs + j])
            w_sum += weights[0, ws + j] * e
            u_sum += weights[1, ws + j] * e
        if 1 <= c <= out.shape[0]:
            out[c - 1] = w_sum + carry
        carry = u_sum


# spectral subtraction's parameters (int64 ``p``, uint32 fields)
SS_CHANNELS, SS_SMOOTHING, SS_ONE_MINUS, SS_ALT_SMOOTHING, SS_ALT_ONE_MINUS = 0, 1, 2, 3, 4
SS_SMOOTHING_BITS, SS_BITS, SS_MIN_REMAINING, SS_CLAMPING, SS_SIZE = 5, 6, 7, 8, 9


@native.jit
def spectral_subtraction(x: Any, out: Any, out_noise: Any, state: Any,
                         p: Any) -> None:  # pragma: no cover
    """FilterbankSpectralSubtraction: the noise estimate ``state`` low-pass filtered across
    invokes, the signal reduced by it (floored at min_signal_remaining of itself)."""
    sb = np.uint64(p[SS_SMOOTHING_BITS])
    bits = np.uint64(p[SS_BITS])
    remaining = np.uint64(p[SS_MIN_REMAINING])
    for i in range(p[SS_CHANNELS]):
        if i & 1:
            smoothing = np.uint64(p[SS_ALT_SMOOTHING])
            one_minus = np.uint64(p[SS_ALT_ONE_MINUS])
        else:
            smoothing = np.uint64(p[SS_SMOOTHING])
            one_minus = np.uint64(p[SS_ONE_MINUS])
        xi = np.uint64(x[i])
        signal = (xi << sb) & U32
        noise = ((signal * smoothing + np.uint64(state[i]) * one_minus) >> bits) & U32
        estimate = min(noise, signal)
        if p[SS_CLAMPING]:
            noise = estimate
        floor = ((xi * remaining) >> bits) & U32
        subtracted = (signal - estimate) >> sb
        state[i] = np.uint32(noise)
        out[i] = np.uint32(max(subtracted, floor))
    for i in range(out_noise.shape[0]):
        out_noise[i] = state[i]


@native.jit
def window(x: Any, weights: Any, out: Any, shift: int) -> None:  # pragma: no cover
    """ApplyWindow over each run of len(weights) samples: (x * w) >> shift, saturated."""
    size = weights.shape[0]
    for base in range(0, x.shape[0], size):
        for j in range(size):
            v = (np.int64(x[base + j]) * np.int64(weights[j])) >> shift
            out[base + j] = np.int16(min(max(v, -32768), 32767))


@native.jit
def fft_auto_scale(x: Any, out: Any, scale_bits: Any) -> None:  # pragma: no cover
    """MaxAbs16's running int16 value (negating -32768 stores -32768), the headroom shift
    15 - msb(max) (msb 32 for 0 or a negative max), every sample shifted by it."""
    n = out.shape[0]
    peak = 0
    for i in range(n):
        v = np.int64(x[i])
        if v > peak:
            peak = v
        elif -v > peak:
            peak = ((-v + 32768) & 0xFFFF) - 32768
    msb = 32 if peak <= 0 else _bit_length(np.uint64(peak))
    shift = max(15 - msb, 0)
    for i in range(n):
        out[i] = np.int16((((np.int64(x[i]) << shift) + 32768) & 0xFFFF) - 32768)
    scale_bits[0] = shift


# ----------------------------------------------------------------------------------------------
# circular buffers (signal/src/circular_buffer.cc as ``signal._circular_buffer`` keeps them:
# an int16 row of 2 * capacity, a state row [read, write, nonempty, started])
# ----------------------------------------------------------------------------------------------


@_helper
def _ring_reset(buf: Any, st: Any) -> None:
    for j in range(buf.shape[0]):
        buf[j] = 0
    st[0] = 0
    st[1] = 0
    st[2] = 0
    st[3] = 1


@_helper
def _ring_available(st: Any, cap: int) -> int:
    diff = st[1] - st[0]
    if diff > 0:
        return diff
    if diff < 0:
        return cap + diff
    return cap if st[2] else 0


@_helper
def _ring_store(buf: Any, st: Any, cap: int, src: Any, s0: int, n: int) -> int:
    """CircularBufferWrite of src[s0:s0 + n] (src must not be ``buf``); 1 on overflow,
    nothing written."""
    if n == 0:
        return 0
    if n > cap - _ring_available(st, cap):
        return 1
    write = st[1]
    end = write + n
    for j in range(n):
        buf[write + j] = src[s0 + j]
    if end < cap:
        for j in range(n):
            buf[cap + write + j] = src[s0 + j]
        write = end
    else:
        n1 = cap - write
        for j in range(n1):
            buf[cap + write + j] = src[s0 + j]
        for j in range(end - cap):
            buf[j] = src[s0 + n1 + j]
        write = end - cap
    st[1] = write
    st[2] = 1
    return 0


@_helper
def _ring_store_zeros(buf: Any, st: Any, cap: int, tmp: Any, n: int) -> int:
    for j in range(n):
        tmp[j] = 0
    return _ring_store(buf, st, cap, tmp, 0, n)


@_helper
def _ring_store_own(buf: Any, st: Any, cap: int, tmp: Any, s0: int, n: int) -> int:
    """A write of the ring's own values (copied first, as the numpy Ring copies them)."""
    for j in range(n):
        tmp[j] = buf[s0 + j]
    return _ring_store(buf, st, cap, tmp, 0, n)


@_helper
def _ring_get(buf: Any, st: Any, cap: int, out: Any, o: int, n: int) -> None:
    read = st[0]
    for j in range(n):
        k = read + j
        out[o + j] = buf[k] if k < cap else buf[k - cap]


@_helper
def _ring_discard(st: Any, cap: int, n: int) -> None:
    read = st[0] + n
    if read >= cap:
        read -= cap
    st[0] = read
    if read == st[1]:
        st[2] = 0


@native.jit
def framer(x: Any, y: Any, valid: Any, bufs: Any, states: Any, tmp: Any,
           p: Any) -> int:  # pragma: no cover
    """SignalFramer: per outer row, each step of samples into its ring, a frame out whenever
    the ring holds one; p = (outer, n_frames, step, size, capacity, prefill)."""
    outer, n_frames, step, size, cap, prefill = p[0], p[1], p[2], p[3], p[4], p[5]
    ok = True
    for i in range(outer):
        buf = bufs[i]
        st = states[i]
        if not st[3]:  # FramerResetState
            _ring_reset(buf, st)
            if prefill and _ring_store_zeros(buf, st, cap, tmp, size - step):
                return 1
        for f in range(n_frames):
            at = i * n_frames + f
            if _ring_store(buf, st, cap, x, at * step, step):
                return 1
            if _ring_available(st, cap) >= size:
                _ring_get(buf, st, cap, y, at * size, size)
                _ring_discard(st, cap, step)
            else:
                ok = False
    valid[0] = ok
    return 0


@native.jit
def stacker(x: Any, y: Any, valid: Any, buf: Any, st: Any, tmp: Any,
            p: Any) -> int:  # pragma: no cover
    """SignalStacker; p = (channels, left_context, stack size, step); ``st`` holds the ring's
    four fields and has_first_frame."""
    channels, left, size, step = p[0], p[1], p[2], p[3]
    if not st[3]:
        _ring_reset(buf, st)
        st[4] = 0
    if _ring_store(buf, st, size, x, 0, channels):
        return 1
    if not st[4]:  # CircularBufferExtend: the first frame left_context more times
        write = st[1]
        start = write + size - channels if channels > write else write - channels
        for _ in range(left):
            if start + channels <= size:
                if _ring_store_own(buf, st, size, tmp, start, channels):
                    return 1
            else:
                n1 = size - start
                if _ring_store_own(buf, st, size, tmp, start, n1) or \
                        _ring_store_own(buf, st, size, tmp, 0, channels - n1):
                    return 1
        st[4] = 1
    ok = _ring_available(st, size) >= size
    if ok:
        _ring_get(buf, st, size, y, 0, size)
        _ring_discard(st, size, channels * step)
    valid[0] = ok
    return 0


@native.jit
def delay(x: Any, y: Any, bufs: Any, states: Any, tmp: Any, p: Any) -> int:  # pragma: no cover
    """SignalDelay; p = (outer, frame, delay, capacity)."""
    outer, frame, length, cap = p[0], p[1], p[2], p[3]
    for i in range(outer):
        buf = bufs[i]
        st = states[i]
        if not st[3]:
            _ring_reset(buf, st)
            if _ring_store_zeros(buf, st, cap, tmp, length):
                return 1
        if _ring_store(buf, st, cap, x, i * frame, frame):
            return 1
        _ring_get(buf, st, cap, y, i * frame, frame)
        _ring_discard(st, cap, frame)
    return 0


def _accumulate(b: Any, v: Any) -> Any:  # pragma: no cover
    """OverlapAdd's sum: int16 saturating, float32 plain (buffer + frame, numpy's order)."""


@_overload(_accumulate)
def _accumulate_impl(b, v):
    if _is_float(b):
        return lambda b, v: b + v
    return lambda b, v: min(max(np.int64(v) + np.int64(b), -32768), 32767)


@native.jit
def overlap_add(x: Any, y: Any, buffers: Any, p: Any) -> None:  # pragma: no cover
    """SignalOverlapAdd; p = (outer, n_frames, frame_size, frame_step)."""
    outer, n_frames, size, step = p[0], p[1], p[2], p[3]
    for i in range(outer):
        buf = buffers[i]
        for f in range(n_frames):
            at = i * n_frames + f
            for j in range(size):
                buf[j] = _accumulate(buf[j], x[at * size + j])
            for j in range(step):
                y[at * step + j] = buf[j]
            for j in range(size - step):
                buf[j] = buf[j + step]
            for j in range(size - step, size):
                buf[j] = 0


# ----------------------------------------------------------------------------------------------
# binds: shapes, types and aliasing checked here (the loops check nothing)
# ----------------------------------------------------------------------------------------------


def bind_irfft(plan: Any, x: np.ndarray, out: np.ndarray, rows: int, input_length: int,
               output_length: int) -> Step | None:
    """Irfft's rows through the compiled kiss_fftri; None when a view does not fit."""
    n = plan.nfft
    dtype = {"int16": np.int16, "int32": np.int32, "float32": np.float32}[plan.kind]
    xs, ys = _flat(x, dtype), _flat(out, dtype)
    if xs is None or ys is None or rows <= 0 or input_length < n + 1 or \
            xs.size < 2 * rows * input_length or \
            ys.size < (rows - 1) * output_length + 2 * n or not _separate((xs,), (ys,)):
        return None
    p, tw = kiss_plan_arrays(plan, {P_ROWS: rows, P_IN_LEN: 2 * input_length,
                                    P_OUT_STEP: output_length})
    buf = np.zeros((4, n + 1), tw.dtype)
    return native.native_step(irfft, xs, ys, p, tw, buf)


def _flat(a: np.ndarray, dtype: Any) -> np.ndarray | None:
    """A contiguous 1-D view of ``a`` when it has ``dtype``, else None."""
    if a.dtype != dtype or not a.flags.c_contiguous:
        return None
    return a.reshape(-1)


def _separate(inputs: tuple[np.ndarray, ...], outputs: tuple[np.ndarray, ...]) -> bool:
    """No output may share memory with an input or another output: the loops write while
    they read, where the numpy paths read everything first."""
    arrays = inputs + outputs
    for i, out in enumerate(outputs):
        k = len(inputs) + i
        if not out.flags.writeable or any(np.may_share_memory(out, a)
                                          for j, a in enumerate(arrays) if j != k):
            return False
    return True


def checked_step(fn: Callable[..., int], args: tuple[Any, ...], fallback: Step) -> Step:
    """A compiled step whose loop returns 1 (having written nothing) where eval raises an
    error that depends on the values (a scale read at invoke time): eval then runs and
    raises it, with its own message."""
    def step() -> None:
        if fn(*args):
            fallback()
    return native.quiet(step)


def _overflow() -> None:
    raise KernelError("circular buffer overflows (TFLM asserts): the op's sizes and steps do "
                      "not fit together")


def _rings_fit(bufs: np.ndarray, states: np.ndarray, outer: int, cap: int) -> bool:
    return bufs.dtype == np.int16 and states.dtype == np.int64 and \
        bufs.shape == (outer, 2 * cap) and states.ndim == 2 and states.shape[0] == outer and \
        states.shape[1] >= 4 and bufs.flags.c_contiguous and states.flags.c_contiguous


def bind_framer(x: np.ndarray, y: np.ndarray, valid: np.ndarray, bufs: np.ndarray,
                states: np.ndarray, outer: int, n_frames: int, step: int, size: int, cap: int,
                prefill: bool) -> Step | None:
    xs, ys, vs = _flat(x, np.int16), _flat(y, np.int16), _flat(valid, np.bool_)
    if xs is None or ys is None or vs is None or vs.size != 1 or \
            not _rings_fit(bufs, states, outer, cap) or xs.size < outer * n_frames * step or \
            ys.size < outer * n_frames * size or size > cap or step > cap or \
            not _separate((xs,), (ys, vs)):
        return None
    p = np.array([outer, n_frames, step, size, cap, int(prefill)], np.int64)
    tmp = np.zeros(cap, np.int16)
    return checked_step(framer, (xs, ys, vs, bufs, states, tmp, p), _overflow)


def bind_stacker(x: np.ndarray, y: np.ndarray, valid: np.ndarray, buf: np.ndarray,
                 state: np.ndarray, channels: int, left: int, size: int, step: int
                 ) -> Step | None:
    xs, ys, vs = _flat(x, np.int16), _flat(y, np.int16), _flat(valid, np.bool_)
    if xs is None or ys is None or vs is None or vs.size != 1 or buf.dtype != np.int16 or \
            buf.shape != (2 * size,) or state.dtype != np.int64 or state.shape != (5,) or \
            xs.size < channels or ys.size < size or channels > size or \
            channels * step > size or not _separate((xs,), (ys, vs)):
        return None
    p = np.array([channels, left, size, step], np.int64)
    tmp = np.zeros(size, np.int16)
    return checked_step(stacker, (xs, ys, vs, buf, state, tmp, p), _overflow)


def bind_delay(x: np.ndarray, y: np.ndarray, bufs: np.ndarray, states: np.ndarray, outer: int,
               frame: int, length: int, cap: int) -> Step | None:
    xs, ys = _flat(x, np.int16), _flat(y, np.int16)
    if xs is None or ys is None or not _rings_fit(bufs, states, outer, cap) or \
            xs.size < outer * frame or ys.size < outer * frame or frame > cap or \
            length > cap or not _separate((xs,), (ys,)):
        return None
    p = np.array([outer, frame, length, cap], np.int64)
    tmp = np.zeros(cap, np.int16)
    return checked_step(delay, (xs, ys, bufs, states, tmp, p), _overflow)


def bind_overlap_add(x: np.ndarray, y: np.ndarray, buffers: np.ndarray, outer: int,
                     n_frames: int, size: int, step: int) -> Step | None:
    dtype = buffers.dtype
    xs, ys = _flat(x, dtype), _flat(y, dtype)
    if xs is None or ys is None or dtype not in (np.int16, np.float32) or \
            buffers.shape != (outer, size) or not buffers.flags.c_contiguous or \
            not 1 <= step <= size or xs.size < outer * n_frames * size or \
            ys.size < outer * n_frames * step or not _separate((xs,), (ys,)):
        return None
    p = np.array([outer, n_frames, size, step], np.int64)
    return native.native_step(overlap_add, xs, ys, buffers, p)


def bind_square_root(x: np.ndarray, scale_bits: np.ndarray, out: np.ndarray,
                     fallback: Step) -> Step | None:
    xs, bits, ys = _flat(x, np.uint64), _flat(scale_bits, np.int32), _flat(out, np.uint32)
    if xs is None or bits is None or ys is None or bits.size < 1 or ys.size < xs.size or \
            not _separate((xs, bits), (ys,)):
        return None
    return checked_step(filter_bank_square_root, (xs, bits, ys[:xs.size]), fallback)


def bind_pcan(x: np.ndarray, noise: np.ndarray, lut: np.ndarray, out: np.ndarray,
              channels: int, snr_shift: int, fallback: Step) -> Step | None:
    xs, ns, ls = _flat(x, np.uint32), _flat(noise, np.uint32), _flat(lut, np.int16)
    ys = _flat(out, np.uint32)
    if xs is None or ns is None or ls is None or ys is None or ys.size != channels or \
            xs.size < channels or ns.size < channels or not 0 <= snr_shift < 64 or \
            not _separate((xs, ns, ls), (ys,)):
        return None
    return checked_step(pcan, (xs, ns, ls, ys, snr_shift), fallback)


def bind_filter_bank_log(x: np.ndarray, out: np.ndarray, lut: np.ndarray, correction_bits: int,
                         output_scale: int) -> Step | None:
    xs, ys = _flat(x, np.uint32), _flat(out, np.int16)
    if xs is None or ys is None or ys.size < xs.size or lut.dtype != np.int64 or \
            lut.shape != (130,) or not 0 <= correction_bits < 32 or \
            not 0 <= output_scale <= 0xFFFFFFFF or not _separate((xs,), (ys,)):
        return None
    p = np.array([correction_bits, output_scale], np.int64)
    return native.native_step(filter_bank_log, xs, ys[:xs.size], np.ascontiguousarray(lut), p)


def bind_energy(x: np.ndarray, out: np.ndarray, start: int, end: int) -> Step | None:
    xs, ys = _flat(x, np.int16), _flat(out, np.uint32)
    if xs is None or ys is None or not 0 <= start < end or 2 * end > xs.size or \
            end > ys.size or not _separate((xs,), (ys,)):
        return None
    return native.native_step(energy, xs, ys, start, end)


def bind_filter_bank(x: np.ndarray, weights: np.ndarray, unweights: np.ndarray,
                     freq_starts: np.ndarray, weight_starts: np.ndarray, widths: np.ndarray,
                     out: np.ndarray, channels: int) -> Step | None:
    """The band tensors must be constants (checked by the caller): their reach is checked
    here once, as eval checks it at every invoke."""
    xs, ys = _flat(x, np.uint32), _flat(out, np.uint64)
    if xs is None or ys is None or ys.size > channels or not _separate((xs,), (ys,)):
        return None
    n = channels + 1
    bands = np.stack([freq_starts[:n].astype(np.int64), weight_starts[:n].astype(np.int64),
                      np.maximum(widths[:n].astype(np.int64), 0)], axis=1)
    if bands.shape != (n, 3):
        return None
    for fs, ws, width in bands:
        if width and (fs < 0 or ws < 0 or fs + width > xs.size or
                      ws + width > min(weights.size, unweights.size)):
            return None  # eval raises its error at invoke
    size = int(max(weights.size, unweights.size, 1))
    table = np.zeros((2, size), np.uint64)
    table[0, :weights.size] = weights.reshape(-1).astype(np.int64).astype(np.uint64)
    table[1, :unweights.size] = unweights.reshape(-1).astype(np.int64).astype(np.uint64)
    return native.native_step(filter_bank, xs, table, np.ascontiguousarray(bands), ys)


def bind_spectral_subtraction(x: np.ndarray, out: np.ndarray, out_noise: np.ndarray,
                              state: np.ndarray, params: np.ndarray) -> Step | None:
    xs, ys = _flat(x, np.uint32), _flat(out, np.uint32)
    ns, st = _flat(out_noise, np.uint32), _flat(state, np.uint32)
    n = int(params[SS_CHANNELS])
    if xs is None or ys is None or ns is None or st is None or params.shape != (SS_SIZE,) or \
            min(xs.size, ys.size) < n or st.size != n or ns.size > n or \
            not 0 <= params[SS_SMOOTHING_BITS] < 32 or not 0 <= params[SS_BITS] < 64 or \
            not _separate((xs,), (ys, ns, st)):
        return None
    return native.native_step(spectral_subtraction, xs, ys, ns, st,
                              params.astype(np.int64))


def bind_window(x: np.ndarray, weights: np.ndarray, out: np.ndarray, shift: int
                ) -> Step | None:
    xs, ws, ys = _flat(x, np.int16), _flat(weights, np.int16), _flat(out, np.int16)
    if xs is None or ws is None or ys is None or ws.size == 0 or xs.size % ws.size or \
            ys.size < xs.size or not 0 <= shift < 32 or not _separate((xs, ws), (ys,)):
        return None
    return native.native_step(window, xs, ws, ys[:xs.size], shift)


def bind_fft_auto_scale(x: np.ndarray, out: np.ndarray, scale_bits: np.ndarray
                        ) -> Step | None:
    xs, ys, bits = _flat(x, np.int16), _flat(out, np.int16), _flat(scale_bits, np.int32)
    if xs is None or ys is None or bits is None or bits.size != 1 or ys.size > xs.size or \
            not _separate((xs,), (ys, bits)):
        return None
    return native.native_step(fft_auto_scale, xs, ys, bits)


__all__ = ["bind_delay", "bind_energy", "bind_fft_auto_scale", "bind_filter_bank",
           "bind_filter_bank_log", "bind_framer", "bind_irfft", "bind_overlap_add", "bind_pcan",
           "bind_rfft", "bind_spectral_subtraction", "bind_square_root", "bind_stacker",
           "bind_window", "checked_step", "kiss_plan_arrays"]
