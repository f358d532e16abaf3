"""The vectorised glibc expf port against the host's libm expf (through ctypes), bit for bit.

Inputs: every float32 of the branch regions (around 0, the overflow threshold, the subnormal
results and both underflow thresholds), ~1.5M random values over the whole finite range, and
the specials; about 4.5M values in all. A one-off script checked every float32 in
[-104, 89] (2.24e9 values) the same way; see the module docstring of _libm.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from fractions import Fraction

import numpy as np
import pytest

from tinyarena.kernels._libm import _EXP2F_TAB, _fma, expf, host_expf_uses_fma

F = np.float32


def _glibc_version() -> tuple[int, int] | None:
    try:
        fn = ctypes.CDLL(None).gnu_get_libc_version
    except (OSError, AttributeError):
        return None
    fn.restype = ctypes.c_char_p
    major, minor = fn().decode().split(".")[:2]
    return int(major), int(minor)


def _libm(name: str, restype, argtypes):
    path = ctypes.util.find_library("m")
    if path is None:
        pytest.skip("no libm to compare with")
    fn = getattr(ctypes.CDLL(path), name)
    fn.restype, fn.argtypes = restype, argtypes
    return fn


def _host_expf():
    version = _glibc_version()
    if version is None:
        pytest.skip("not glibc: the port reproduces glibc's expf, nothing else to compare with")
    if version < (2, 27):
        pytest.skip(f"glibc {version[0]}.{version[1]} predates the table-driven expf (2.27) "
                    "that the port reproduces (and that the wheel's hosts use)")
    return _libm("expf", ctypes.c_float, [ctypes.c_float])


def _every_float(lo: float, hi: float) -> np.ndarray:
    """Every float32 in [lo, hi] (same sign)."""
    a, b = (int(np.array(v, F).view(np.uint32)) for v in (lo, hi))
    bits = np.arange(min(a, b), max(a, b) + 1, dtype=np.int64).astype(np.uint32)
    return bits.view(F)


def _samples() -> np.ndarray:
    rng = np.random.default_rng(7)
    regions = [
        _every_float(1.0, 1.0625),  # 0.5M around k = 46: a whole stretch of one binade
        _every_float(-0.25, -0.2421875),  # negative, r near -1/2 at k boundaries
        _every_float(88.0, 89.0),  # the special-path entry (|x| >= 88) and overflow threshold
        _every_float(-88.0, -89.0),  # subnormal results start near -87.34
        _every_float(-103.0, -104.5),  # both underflow thresholds (-103.28, -103.97)
        _every_float(2.0 ** -20, 2.0 ** -20 * 1.125),  # small: k = 0, r ~ x * 32/ln2
    ]
    tiny_bits = rng.integers(0, 0x35800000, 100_000, dtype=np.int64).astype(np.uint32)
    finite_bits = rng.integers(0, 0x7F800000, 200_000, dtype=np.int64).astype(np.uint32)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 3.4028235e38,
                         -3.4028235e38, 1e-45, -1e-45, 1.1754944e-38, 88.0, -88.0,
                         88.72283, 88.72284, -103.27893, -103.27892, -103.97208, -103.97209],
                        F)
    return np.concatenate(regions + [
        rng.uniform(-104.0, 89.0, 1_000_000).astype(F),
        rng.normal(0.0, 4.0, 300_000).astype(F),
        tiny_bits.view(F), -tiny_bits.view(F), finite_bits.view(F), -finite_bits.view(F),
        specials]).astype(F)


def _same_bits(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    both_nan = np.isnan(got) & np.isnan(want)
    return (got.view(np.uint32) == want.view(np.uint32)) | both_nan


def test_expf_matches_host_libm_bit_for_bit() -> None:
    ref = _host_expf()
    x = _samples()
    want = np.fromiter(map(ref, x.tolist()), dtype=F, count=x.size)
    got = expf(x)
    ok = _same_bits(got, want)
    assert ok.all(), (f"{int((~ok).sum())} of {x.size} differ (fma build: "
                      f"{host_expf_uses_fma()})", x[~ok][:8], got[~ok][:8], want[~ok][:8])
    # The samples can tell expf from exp rounded once (so this test could fail):
    with np.errstate(all="ignore"):
        once = np.exp(x.astype(np.float64)).astype(F)
    assert (~_same_bits(once, want)).sum() > 100


def test_expf_keeps_shape_and_dtype() -> None:
    x = np.linspace(-12, 12, 6 * 7 * 5, dtype=F).reshape(6, 7, 5)
    got = expf(x)
    assert got.shape == x.shape and got.dtype == F
    assert np.array_equal(got.reshape(-1), expf(x.reshape(-1)))
    assert expf(np.array(0.0, F)).shape == ()


def test_fma_emulation_matches_host_fma() -> None:
    fma = _libm("fma", ctypes.c_double, [ctypes.c_double] * 3)
    rng = np.random.default_rng(8)
    n = 100_000
    a = rng.uniform(-1, 1, n) * 2.0 ** rng.integers(-30, 30, n)
    b = rng.uniform(-1, 1, n) * 2.0 ** rng.integers(-30, 30, n)
    # half the addends nearly cancel the product (where a separate rounding shows most)
    near = -(a * b) * (1 + rng.integers(-4, 5, n) * 2.0 ** -52)
    c = np.where(rng.random(n) < 0.5, near, rng.uniform(-1, 1, n) * 2.0 ** rng.integers(-80, 30, n))
    want = np.array([fma(*t) for t in zip(a.tolist(), b.tolist(), c.tolist())])
    assert np.array_equal(_fma(a, b, c).view(np.int64), want.view(np.int64))


def test_exp2_table_is_two_to_the_i_over_32_correctly_rounded() -> None:
    """Each entry, its exponent restored, is the double nearest 2**(i/32): the true value lies
    within half an ulp of it (checked by raising the interval's ends to the 32nd power)."""
    for i, t in enumerate(_EXP2F_TAB.tolist()):
        bits = t + (i << 47)
        v = Fraction(np.array(bits, np.int64).view(np.float64).item())
        half_ulp = Fraction(1, 2 ** 53)  # all entries are in [1, 2)
        assert (v - half_ulp) ** 32 < 2 ** i < (v + half_ulp) ** 32
