"""The fast tanhf (one specialised expm1f) against the fdlibm-as-written reference port and,
where libm loads, the host's tanhf: every float32 of whole binades around the branch points,
plus specials."""

from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np
import pytest

from tinyarena.kernels._libm import tanhf, tanhf_reference


def _binade(start_bits: int, count: int) -> np.ndarray:
    bits = np.arange(start_bits, start_bits + count, dtype=np.int64).astype(np.uint32)
    x = bits.view(np.float32)
    return np.concatenate([x, -x])


# Bit patterns where expm1f or tanhf switch branch: |x| = 2**-55, 2**-26 (expm1f's tiny
# argument), ln2/4 and 0.52 (k = 0 / -1 / -2 for -2|x|), 1 (the 2|x| side), k = 23 and 57 for
# 2|x| (|x| ~ 7.97 and 19.75), 22.
_POINTS = (0x24000000, 0x32800000, 0x3e317218, 0x3f051592, 0x3f800000, 0x40ff0000,
           0x419e0000, 0x41b00000)


@pytest.mark.parametrize("point", _POINTS, ids=hex)
def test_fast_equals_reference_on_every_float_near_branch_points(point: int) -> None:
    x = _binade(point - (1 << 17), 1 << 18)
    assert np.array_equal(tanhf(x).view(np.uint32), tanhf_reference(x).view(np.uint32))


def test_fast_equals_reference_on_a_dense_sample() -> None:
    rng = np.random.default_rng(11)
    bits = rng.integers(0x24000000, 0x41c00000, 1 << 20).astype(np.uint32)
    x = bits.view(np.float32)
    x = np.concatenate([x, -x])
    assert np.array_equal(tanhf(x).view(np.uint32), tanhf_reference(x).view(np.uint32))


def test_specials() -> None:
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 100.0], np.float32)
    got = tanhf(x)
    assert got[0] == 0 and not np.signbit(got[0]) and np.signbit(got[1])
    assert got[2] == 1 and got[3] == -1 and np.isnan(got[4])
    assert got[5] == x[5] and got[6] == x[6] and got[7] == 1


def test_fast_matches_host_libm_near_branch_points() -> None:
    path = ctypes.util.find_library("m")
    if path is None:
        pytest.skip("no libm to compare with")
    fn = ctypes.CDLL(path).tanhf
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
    x = np.concatenate([_binade(p - 256, 512) for p in _POINTS])
    want = np.array([fn(float(v)) for v in x], dtype=np.float32)
    assert np.array_equal(tanhf(x).view(np.uint32), want.view(np.uint32))
