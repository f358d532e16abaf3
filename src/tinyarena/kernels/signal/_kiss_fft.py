"""kissfft v130 as TFLM builds it (third_party/kissfft with TFLM's patch), vectorised.

TFLM's Rfft/Irfft call ``kiss_fftr``/``kiss_fftri`` compiled three times: ``FIXED_POINT=16``
(int16 samples, int32 products, Q15 twiddles), ``FIXED_POINT=32`` (int32 samples, int64
products, Q31 twiddles) and float. This module ports that code operation for operation: every
store into a ``kiss_fft_scalar`` truncates to the sample width, products round with
``sround`` (add half, arithmetic shift), every radix stage first divides by its radix
(``C_FIXDIV``) in fixed point, and float arithmetic is float32 in C's evaluation order.

The recursive ``kf_work`` becomes: a digit-reversal gather (its ``m == 1`` leaves), then the
stages from the innermost to the outermost, each applied to all blocks and all frames at once
(a stage's butterflies are independent of each other). TFLM's patch makes KISS_FFT_MALLOC
return NULL, so the generic-radix butterfly (a factor other than 2, 3, 4, 5) writes through a
null pointer in the wheel: such lengths are refused here.

Float results equal the wheel's bit for bit, infinities included; a NaN comes out where the
wheel's does, but its sign may differ: when two NaNs meet, x86 keeps the first operand's, and
the compiled code's order of a commutative + or * is the compiler's (one sum below is written
in the order the wheel evidently uses).

Memory (``kiss_fftr_alloc``): ``sizeof(kiss_fftr_state) + sizeof(kiss_fft_state) +
(n - 1) * sizeof(cpx) + (3n/2) * sizeof(cpx)`` with n = nfft / 2 complex points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Union

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels.base import Target

Arr = np.ndarray

_PI_TWIDDLE = 3.141592653589793238462643383279502884197169399375105820974944
_PI_SUPER = 3.14159265358979323846264338327


def needed_memory(target: Target, kind: str, fft_length: int) -> int:
    """kiss_fftr_alloc's ``*lenmem`` for a real FFT of ``fft_length`` (TFLM's GetNeededMemory)."""
    ns = {"int16": "kiss_fft_fixed16", "int32": "kiss_fft_fixed32", "float32": "kiss_fft_float"}
    sizeof = target.sizeof
    n = fft_length >> 1
    cpx = sizeof(f"{ns[kind]}::kiss_fft_cpx")
    sub = sizeof(f"{ns[kind]}::kiss_fft_state") + cpx * (n - 1)
    return int(sizeof("kiss_fftr_state") + sub + cpx * (n * 3 // 2))


def factors(n: int) -> tuple[tuple[int, int], ...]:
    """kf_factor: powers of 4, then 2, then odd primes; (radix, remaining length) pairs."""
    out = []
    p = 4
    floor_sqrt = math.floor(math.sqrt(float(n)))
    while True:
        while n % p:
            p = 2 if p == 4 else 3 if p == 2 else p + 2
            if p > floor_sqrt:
                p = n
        n //= p
        out.append((p, n))
        if n <= 1:
            return tuple(out)


def supported(fft_length: int) -> str | None:
    """Why the wheel cannot run this length (None when it can)."""
    if fft_length < 2 or fft_length & 1:
        return f"fft_length {fft_length} is not an even number >= 2 (kiss_fftr_alloc fails)"
    bad = [p for p, _ in factors(fft_length >> 1) if p not in (2, 3, 4, 5)]
    if bad:
        return (f"fft_length {fft_length} needs kissfft's generic radix-{bad[0]} butterfly, "
                f"which dereferences a null scratch pointer in TFLM's build (only lengths "
                f"2 * 2**a * 3**b * 5**c work)")
    return None


@dataclass(frozen=True)
class Plan:
    """One kiss_fftr state: twiddles and super twiddles as (real, imag) arrays."""

    kind: str
    nfft: int  # complex points (fft_length / 2)
    inverse: bool
    stages: tuple[tuple[int, int, int], ...]  # (radix, m, fstride), innermost first
    gather: np.ndarray  # input index of each position after the leaves
    tw_r: np.ndarray
    tw_i: np.ndarray
    super_r: np.ndarray
    super_i: np.ndarray

    TABLES = ("gather", "tw_r", "tw_i", "super_r", "super_i")

    def shell(self, workspace: Callable[[np.ndarray], int]) -> PlanShell:
        """The plan without its arrays, which go to ``workspace`` (a kernel's
        ``request_workspace(..., initial=...)``): kernel op data keeps only handles."""
        handles = tuple(workspace(getattr(self, name)) for name in self.TABLES)
        return PlanShell(self.kind, self.nfft, self.inverse, self.stages, handles)


@dataclass(frozen=True)
class PlanShell:
    """A Plan's scalars plus workspace handles of its tables (gather, twiddles)."""

    kind: str
    nfft: int
    inverse: bool
    stages: tuple[tuple[int, int, int], ...]
    tables: tuple[int, ...]

    def plan(self, workspace: Callable[[int], np.ndarray]) -> Plan:
        arrays = [workspace(h) for h in self.tables]
        return Plan(self.kind, self.nfft, self.inverse, self.stages, *arrays)


def _cexp(phases: list[float], kind: str) -> tuple[np.ndarray, np.ndarray]:
    """kf_cexp with the C library's double cos/sin (math.cos is the same libm call)."""
    cos = [math.cos(p) for p in phases]
    sin = [math.sin(p) for p in phases]
    if kind == "float32":
        return np.array(cos, np.float64).astype(np.float32), \
            np.array(sin, np.float64).astype(np.float32)
    samp_max = 32767.0 if kind == "int16" else 2147483647.0
    return (np.array([math.floor(0.5 + samp_max * c) for c in cos], np.int64),
            np.array([math.floor(0.5 + samp_max * s) for s in sin], np.int64))


def make_plan(kind: str, fft_length: int, inverse: bool) -> Plan:
    reason = supported(fft_length)
    if reason is not None:
        raise KernelError(reason)
    n = fft_length >> 1
    facs = factors(n)
    phases = []
    for i in range(n):
        phase = -2 * _PI_TWIDDLE * i / n
        phases.append(-phase if inverse else phase)
    tw_r, tw_i = _cexp(phases, kind)
    supers = []
    for i in range(n // 2):
        phase = -_PI_SUPER * (float(i + 1) / n + 0.5)
        supers.append(-phase if inverse else phase)
    super_r, super_i = _cexp(supers, kind)
    stages = []
    fstride = 1
    for p, m in facs:
        stages.append((p, m, fstride))
        fstride *= p
    return Plan(kind, n, inverse, tuple(reversed(stages)), _gather(facs, 1), tw_r, tw_i,
                super_r, super_i)


def _gather(facs: tuple[tuple[int, int], ...], fstride: int) -> np.ndarray:
    """kf_work's decimation: output position -> input index (in units of one complex)."""
    p, m = facs[0]
    if m == 1:
        return np.arange(p, dtype=np.int64) * fstride
    sub = _gather(facs[1:], fstride * p)
    return (np.arange(p, dtype=np.int64)[:, None] * fstride + sub[None, :]).reshape(-1)


class _Fixed:
    """The fixed-point macros of _kiss_fft_guts.h for one sample width, on int64 arrays."""

    def __init__(self, bits: int) -> None:
        self.bits = bits
        self.frac = bits - 1
        self.samp_max = (1 << (bits - 1)) - 1
        self.prod_bits = 32 if bits == 16 else 64

    def st(self, x: np.ndarray) -> np.ndarray:
        """Store into a kiss_fft_scalar (two's-complement truncation)."""
        half = 1 << (self.bits - 1)
        return ((x + half) & ((1 << self.bits) - 1)) - half

    def prod(self, x: np.ndarray) -> np.ndarray:
        """SAMPPROD arithmetic: int32 for 16-bit samples (int64 wraps by itself)."""
        if self.prod_bits == 32:
            return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)
        return x

    def sround(self, x: np.ndarray) -> np.ndarray:
        return self.st(self.prod(x + (1 << (self.frac - 1))) >> self.frac)

    def s_mul(self, a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
        return self.sround(self.prod(a * b))

    def c_mul(self, ar: Arr, ai: Arr, br: Arr, bi: Arr) -> tuple[Arr, Arr]:
        return (self.sround(self.prod(ar * br - ai * bi)),
                self.sround(self.prod(ar * bi + ai * br)))

    def fixdiv(self, r: Arr, i: Arr, div: int) -> tuple[Arr, Arr]:
        k = self.samp_max // div
        return self.sround(self.prod(r * k)), self.sround(self.prod(i * k))

    def int_op(self, x: np.ndarray) -> np.ndarray:
        """C int arithmetic on scalars (int32): exact for int16 samples, wraps for int32."""
        return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)

    def half(self, x: np.ndarray) -> np.ndarray:
        return self.int_op(x) >> 1


class _Float:
    """The float build: the same macros, float32 in C's order, no C_FIXDIV."""

    def st(self, x: np.ndarray) -> np.ndarray:
        return x

    def s_mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return a * b

    def c_mul(self, ar: Arr, ai: Arr, br: Arr, bi: Arr) -> tuple[Arr, Arr]:
        return ar * br - ai * bi, ar * bi + ai * br

    def fixdiv(self, r: Arr, i: Arr, div: int) -> tuple[Arr, Arr]:
        return r, i

    def half(self, x: np.ndarray) -> np.ndarray:
        return x * np.float32(0.5)


_Math = Union["_Fixed", "_Float"]
_Pair = tuple[list[Arr], list[Arr]]


def _math(kind: str) -> _Fixed | _Float:
    return _Float() if kind == "float32" else _Fixed(16 if kind == "int16" else 32)


def kiss_fft(plan: Plan, re: np.ndarray, im: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """kiss_fft on frames (rows) of ``plan.nfft`` complex values; int64 or float32 arrays."""
    M = _math(plan.kind)
    re = re[:, plan.gather]
    im = im[:, plan.gather]
    frames = re.shape[0]
    n = plan.nfft
    for p, m, fstride in plan.stages:
        shape = (frames, n // (p * m), p, m)
        R = [re.reshape(shape)[:, :, q, :] for q in range(p)]
        I = [im.reshape(shape)[:, :, q, :] for q in range(p)]
        k = np.arange(m)
        tw = [(plan.tw_r[q * k * fstride], plan.tw_i[q * k * fstride]) for q in range(p)]
        if p == 2:
            R, I = _bfly2(M, R, I, tw)
        elif p == 3:
            R, I = _bfly3(M, R, I, tw, plan, fstride * m)
        elif p == 4:
            R, I = _bfly4(M, R, I, tw, plan.inverse)
        else:
            R, I = _bfly5(M, R, I, tw, plan, fstride * m)
        re = np.stack(R, axis=2).reshape(frames, n)
        im = np.stack(I, axis=2).reshape(frames, n)
    return re, im


def _bfly2(M: _Math, R: list[Arr], I: list[Arr], tw: list[tuple[Arr, Arr]]) -> _Pair:
    r0, i0 = M.fixdiv(R[0], I[0], 2)
    r1, i1 = M.fixdiv(R[1], I[1], 2)
    tr, ti = M.c_mul(r1, i1, *tw[1])
    return [M.st(r0 + tr), M.st(r0 - tr)], [M.st(i0 + ti), M.st(i0 - ti)]


def _bfly4(M: _Math, R: list[Arr], I: list[Arr], tw: list[tuple[Arr, Arr]],
           inverse: bool) -> _Pair:
    r0, i0 = M.fixdiv(R[0], I[0], 4)
    r1, i1 = M.fixdiv(R[1], I[1], 4)
    r2, i2 = M.fixdiv(R[2], I[2], 4)
    r3, i3 = M.fixdiv(R[3], I[3], 4)
    s0r, s0i = M.c_mul(r1, i1, *tw[1])
    s1r, s1i = M.c_mul(r2, i2, *tw[2])
    s2r, s2i = M.c_mul(r3, i3, *tw[3])
    s5r, s5i = M.st(r0 - s1r), M.st(i0 - s1i)
    r0, i0 = M.st(r0 + s1r), M.st(i0 + s1i)
    s3r, s3i = M.st(s0r + s2r), M.st(s0i + s2i)
    s4r, s4i = M.st(s0r - s2r), M.st(s0i - s2i)
    r2, i2 = M.st(r0 - s3r), M.st(i0 - s3i)
    r0, i0 = M.st(r0 + s3r), M.st(i0 + s3i)
    if inverse:
        r1, i1 = M.st(s5r - s4i), M.st(s5i + s4r)
        r3, i3 = M.st(s5r + s4i), M.st(s5i - s4r)
    else:
        r1, i1 = M.st(s5r + s4i), M.st(s5i - s4r)
        r3, i3 = M.st(s5r - s4i), M.st(s5i + s4r)
    return [r0, r1, r2, r3], [i0, i1, i2, i3]


def _bfly3(M: _Math, R: list[Arr], I: list[Arr], tw: list[tuple[Arr, Arr]], plan: Plan,
           epi_index: int) -> _Pair:
    epi_i = plan.tw_i[epi_index]
    r0, i0 = M.fixdiv(R[0], I[0], 3)
    r1, i1 = M.fixdiv(R[1], I[1], 3)
    r2, i2 = M.fixdiv(R[2], I[2], 3)
    s1r, s1i = M.c_mul(r1, i1, *tw[1])
    s2r, s2i = M.c_mul(r2, i2, *tw[2])
    s3r, s3i = M.st(s1r + s2r), M.st(s1i + s2i)
    s0r, s0i = M.st(s1r - s2r), M.st(s1i - s2i)
    r1, i1 = M.st(r0 - M.half(s3r)), M.st(i0 - M.half(s3i))
    s0r, s0i = M.s_mul(s0r, epi_i), M.s_mul(s0i, epi_i)  # C_MULBYSCALAR
    r0, i0 = M.st(r0 + s3r), M.st(i0 + s3i)
    r2, i2 = M.st(r1 + s0i), M.st(i1 - s0r)
    r1, i1 = M.st(r1 - s0i), M.st(i1 + s0r)
    return [r0, r1, r2], [i0, i1, i2]


def _bfly5(M: _Math, R: list[Arr], I: list[Arr], tw: list[tuple[Arr, Arr]], plan: Plan,
           ya_index: int) -> _Pair:
    yar, yai = plan.tw_r[ya_index], plan.tw_i[ya_index]
    ybr, ybi = plan.tw_r[2 * ya_index], plan.tw_i[2 * ya_index]
    F = [M.fixdiv(R[q], I[q], 5) for q in range(5)]
    s0r, s0i = F[0]
    s1r, s1i = M.c_mul(*F[1], *tw[1])
    s2r, s2i = M.c_mul(*F[2], *tw[2])
    s3r, s3i = M.c_mul(*F[3], *tw[3])
    s4r, s4i = M.c_mul(*F[4], *tw[4])
    s7r, s7i = M.st(s1r + s4r), M.st(s1i + s4i)
    s10r, s10i = M.st(s1r - s4r), M.st(s1i - s4i)
    s8r, s8i = M.st(s2r + s3r), M.st(s2i + s3i)
    s9r, s9i = M.st(s2r - s3r), M.st(s2i - s3i)
    r0, i0 = M.st(s0r + (s7r + s8r)), M.st(s0i + (s7i + s8i))
    s5r = M.st(s0r + M.s_mul(s7r, yar) + M.s_mul(s8r, ybr))
    s5i = M.st(s0i + M.s_mul(s7i, yar) + M.s_mul(s8i, ybr))
    s6r = M.st(M.s_mul(s10i, yai) + M.s_mul(s9i, ybi))
    s6i = M.st(-M.s_mul(s10r, yai) - M.s_mul(s9r, ybi))
    r1, i1 = M.st(s5r - s6r), M.st(s5i - s6i)
    r4, i4 = M.st(s5r + s6r), M.st(s5i + s6i)
    s11r = M.st(s0r + M.s_mul(s7r, ybr) + M.s_mul(s8r, yar))
    s11i = M.st(s0i + M.s_mul(s7i, ybr) + M.s_mul(s8i, yar))
    s12r = M.st(-M.s_mul(s10i, ybi) + M.s_mul(s9i, yai))
    s12i = M.st(M.s_mul(s10r, ybi) - M.s_mul(s9r, yai))
    r2, i2 = M.st(s11r + s12r), M.st(s11i + s12i)
    r3, i3 = M.st(s11r - s12r), M.st(s11i - s12i)
    return [r0, r1, r2, r3, r4], [i0, i1, i2, i3, i4]


def _working(kind: str, x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32) if kind == "float32" else x.astype(np.int64)


def kiss_fftr(plan: Plan, frames: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """kiss_fftr: rows of ``2 * nfft`` real samples -> (real, imag) rows of nfft + 1 bins."""
    M = _math(plan.kind)
    n = plan.nfft
    x = _working(plan.kind, frames)
    tr, ti = kiss_fft(plan, x[:, 0::2], x[:, 1::2])
    out_r = np.zeros((x.shape[0], n + 1), x.dtype)
    out_i = np.zeros((x.shape[0], n + 1), x.dtype)
    dr, di = M.fixdiv(tr[:, 0], ti[:, 0], 2)
    out_r[:, 0] = M.st(dr + di)
    out_r[:, n] = M.st(dr - di)
    k = np.arange(1, n // 2 + 1)
    if k.size:
        pr, pi = M.fixdiv(tr[:, k], ti[:, k], 2)
        nr, ni = M.fixdiv(tr[:, n - k], M.st(-ti[:, n - k]), 2)
        f1r, f1i = M.st(pr + nr), M.st(pi + ni)
        f2r, f2i = M.st(pr - nr), M.st(pi - ni)
        twr, twi = M.c_mul(f2r, f2i, plan.super_r[k - 1], plan.super_i[k - 1])
        out_r[:, k] = M.st(M.half(f1r + twr))
        out_i[:, k] = M.st(M.half(twi + f1i))  # operand order: a NaN keeps the wheel's sign
        out_r[:, n - k] = M.st(M.half(f1r - twr))  # k == n - k: this store wins, as in C
        out_i[:, n - k] = M.st(M.half(twi - f1i))
    return out_r, out_i


def kiss_fftri(plan: Plan, re: np.ndarray, im: np.ndarray) -> np.ndarray:
    """kiss_fftri: (real, imag) rows of nfft + 1 bins -> rows of 2 * nfft real samples."""
    M = _math(plan.kind)
    n = plan.nfft
    fr, fi = _working(plan.kind, re), _working(plan.kind, im)
    tr = np.zeros((fr.shape[0], n), fr.dtype)
    ti = np.zeros((fr.shape[0], n), fr.dtype)
    tr[:, 0], ti[:, 0] = M.fixdiv(M.st(fr[:, 0] + fr[:, n]), M.st(fr[:, 0] - fr[:, n]), 2)
    k = np.arange(1, n // 2 + 1)
    if k.size:
        kr, ki = M.fixdiv(fr[:, k], fi[:, k], 2)
        cr, ci = M.fixdiv(fr[:, n - k], M.st(-fi[:, n - k]), 2)
        er, ei = M.st(kr + cr), M.st(ki + ci)
        dr, di = M.st(kr - cr), M.st(ki - ci)
        okr, oki = M.c_mul(dr, di, plan.super_r[k - 1], plan.super_i[k - 1])
        tr[:, k], ti[:, k] = M.st(er + okr), M.st(ei + oki)
        tr[:, n - k], ti[:, n - k] = M.st(er - okr), M.st(-M.st(ei - oki))
    out_r, out_i = kiss_fft(plan, tr, ti)
    out = np.empty((fr.shape[0], 2 * n), fr.dtype)
    out[:, 0::2], out[:, 1::2] = out_r, out_i
    return out
