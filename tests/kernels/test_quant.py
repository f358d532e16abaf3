"""Tests for kernels/_quant.py: TFLM's fixed-point requantisation arithmetic.

The vectorised functions are checked against hand-worked values and against a plain scalar
transcription of the C semantics written here with Python integers (C truncating division,
arithmetic shifts, int32 wrap), which shares no code with the module under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tinyarena.errors import KernelError
from tinyarena.kernels import _quant as q

I32_MIN = -(2**31)
I32_MAX = 2**31 - 1


# --- scalar references (C semantics with Python ints) -------------------------------------------


def _c_div(a: int, b: int) -> int:
    """C integer division: truncates toward zero."""
    quot = abs(a) // abs(b)
    return quot if (a >= 0) == (b >= 0) else -quot


def _wrap32(v: int) -> int:
    return ((v + 2**31) % 2**32) - 2**31


def _srdhm(a: int, b: int) -> int:
    if a == b == I32_MIN:
        return I32_MAX
    ab = a * b
    nudge = 2**30 if ab >= 0 else 1 - 2**30
    return _c_div(ab + nudge, 2**31)


def _rdbpot(x: int, e: int) -> int:
    mask = (1 << e) - 1
    rem = x & mask
    thr = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> e) + (1 if rem > thr else 0)


def _mbqm(x: int, m: int, shift: int) -> int:
    left = shift if shift > 0 else 0
    right = 0 if shift > 0 else -shift
    return _rdbpot(_srdhm(_wrap32(x * (1 << left)), m), right)


def _mbqm64(x: int, m: int, shift: int) -> int:
    reduced = (m + (1 << 15)) >> 16 if m < 0x7FFF0000 else 0x7FFF
    total = 15 - shift
    return _wrap32((x * reduced + (1 << (total - 1))) >> total)


# --- QuantizeMultiplier -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "real, expected",
    [
        (0.0, (0, 0)),
        (0.5, (2**30, 0)),  # frexp(0.5) = (0.5, 0) -> 0.5 * 2**31
        (1.0, (2**30, 1)),
        (0.25, (2**30, -1)),
        (3.0, (3 * 2**29, 2)),  # 3 = 0.75 * 2**2
        (-0.5, (-(2**30), 0)),
        (2.0**-40, (0, 0)),  # shift < -31 flushes to zero
    ],
)
def test_quantize_multiplier_hand_values(real: float, expected: tuple[int, int]) -> None:
    assert q.quantize_multiplier(real) == expected


def test_quantize_multiplier_rounds_up_to_power_of_two() -> None:
    # Just below 1.0: the significand rounds to 2**31, TFLM halves it and bumps the shift.
    just_below = 1.0 - 2.0**-40
    assert q.quantize_multiplier(just_below) == (2**30, 1)


def test_quantize_multiplier_half_rounds_away_from_zero() -> None:
    # 0.5 + 2**-32 -> significand (0.5 + 2**-32) * 2**31 = 2**30 + 0.5: ties go away from zero
    assert q.quantize_multiplier(0.5 + 2.0**-32) == (2**30 + 1, 0)
    assert q.quantize_multiplier(-(0.5 + 2.0**-32)) == (-(2**30) - 1, 0)


def test_quantize_multiplier_reconstructs_the_real_value() -> None:
    rng = np.random.default_rng(1)
    for real in rng.uniform(1e-6, 4.0, size=200):
        m, s = q.quantize_multiplier(float(real))
        assert 2**30 <= m < 2**31
        assert abs(m * 2.0 ** (s - 31) - real) <= real * 2.0**-30


def test_quantize_multiplier_array_matches_scalar() -> None:
    rng = np.random.default_rng(2)
    reals = np.concatenate([
        rng.uniform(0.0, 3.0, 300), 10.0 ** rng.uniform(-12, 2, 300),
        [0.0, 1.0 - 2.0**-40, 0.5 + 2.0**-32, 2.0**-40, 2.0**-31, 1.0],
    ])
    ms, ss = q.quantize_multiplier_array(reals)
    assert ms.dtype == np.int32 and ss.dtype == np.int32
    for real, m, s in zip(reals, ms, ss):
        assert (int(m), int(s)) == q.quantize_multiplier(float(real))


def test_quantize_multiplier_rejects_non_finite() -> None:
    with pytest.raises(KernelError, match="not finite"):
        q.quantize_multiplier(math.inf)


def test_smaller_than_one_and_greater_than_one_checks() -> None:
    assert q.quantize_multiplier_smaller_than_one_exp(0.25) == (2**30, -1)
    assert q.quantize_multiplier_greater_than_one(3.0) == (3 * 2**29, 2)
    with pytest.raises(KernelError):
        q.quantize_multiplier_smaller_than_one_exp(1.5)
    with pytest.raises(KernelError):
        q.quantize_multiplier_greater_than_one(0.5)


# --- fixed-point primitives ---------------------------------------------------------------------


def test_srdhm_hand_values() -> None:
    # 2**30 is 0.5 in Q31: x * 0.5 rounded. Positive ties go up (1.5 -> 2); the negative nudge
    # 1 - 2**30 plus truncating division sends negative ties up too (-1.5 -> -1).
    got = q.saturating_rounding_doubling_high_mul(np.array([4, 3, -3, -4, I32_MIN]),
                                                  np.array([2**30] * 4 + [I32_MIN]))
    assert got.tolist() == [2, 2, -1, -2, I32_MAX]


def test_rounding_divide_by_pot_hand_values() -> None:
    x = np.array([5, 6, 7, -5, -6, -7, 0, 1, -1])
    # /4: 1.25->1, 1.5->2, 1.75->2, -1.25->-1, -1.5->-2, -1.75->-2
    assert q.rounding_divide_by_pot(x, 2).tolist() == [1, 2, 2, -1, -2, -2, 0, 0, 0]
    assert q.rounding_divide_by_pot(x, 0).tolist() == x.tolist()


def _random_cases(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.concatenate([
        rng.integers(I32_MIN, I32_MAX, n, endpoint=True),
        rng.integers(-3000, 3000, n),
        np.array([0, 1, -1, I32_MIN, I32_MAX, 2**30, -(2**30)]),
    ])
    m = rng.integers(2**30, 2**31 - 1, x.size, endpoint=True)
    s = rng.integers(-31, 8, x.size)
    return x, m, s


def test_multiply_by_quantized_multiplier_matches_c_semantics() -> None:
    rng = np.random.default_rng(3)
    x, m, s = _random_cases(rng, 3000)
    got = q.multiply_by_quantized_multiplier(x, m, s)
    assert got.dtype == np.int64
    expected = [_mbqm(int(a), int(b), int(c)) for a, b, c in zip(x, m, s)]
    assert got.tolist() == expected


def test_multiply_by_quantized_multiplier_per_channel_broadcast() -> None:
    rng = np.random.default_rng(4)
    acc = rng.integers(-(2**20), 2**20, (5, 7, 6))
    m = rng.integers(2**30, 2**31 - 1, 6)
    s = rng.integers(-12, 3, 6)
    got = q.multiply_by_quantized_multiplier(acc, m, s)
    expected = np.array([[[_mbqm(int(v), int(m[c]), int(s[c])) for c, v in enumerate(row)]
                          for row in plane] for plane in acc])
    assert np.array_equal(got, expected)


def test_multiply_by_quantized_multiplier_scalar_inputs() -> None:
    # 1000 * 0.75 * 2**-3 = 93.75 -> 94
    m, s = q.quantize_multiplier(0.75 / 8)
    assert int(q.multiply_by_quantized_multiplier(1000, m, s)) == 94
    assert int(q.multiply_by_quantized_multiplier(-1000, m, s)) == -94


def test_multiply_by_quantized_multiplier_int64_matches_c_semantics() -> None:
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.integers(-(2**47), 2**47, 2000), rng.integers(-5000, 5000, 500)])
    m = np.concatenate([rng.integers(2**30, 2**31 - 1, x.size - 3, endpoint=True),
                        np.array([0x7FFF0000, 0x7FFEFFFF, 2**31 - 1])])
    s = rng.integers(-31, 8, x.size)
    got = q.multiply_by_quantized_multiplier_int64(x, m, s)
    expected = [_mbqm64(int(a), int(b), int(c)) for a, b, c in zip(x, m, s)]
    assert got.tolist() == expected


def test_int64_variant_hand_value() -> None:
    # multiplier 0.5 (2**30, shift 0): reduced = 2**14; (100 * 2**14 + 2**14) >> 15 = 50
    assert int(q.multiply_by_quantized_multiplier_int64(100, 2**30, 0)) == 50
    assert int(q.multiply_by_quantized_multiplier_int64(-101, 2**30, 0)) == -50  # -50.5 -> -50


def test_smaller_than_one_exp_and_greater_than_one_variants() -> None:
    rng = np.random.default_rng(6)
    x = rng.integers(-(2**24), 2**24, 500)
    m = rng.integers(2**30, 2**31 - 1, 500)
    right = rng.integers(-20, 1, 500)
    got = q.multiply_by_quantized_multiplier_smaller_than_one_exp(x, m, right)
    assert got.tolist() == [_rdbpot(_srdhm(int(a), int(b)), -int(c))
                            for a, b, c in zip(x, m, right)]
    left = rng.integers(0, 8, 500)
    got = q.multiply_by_quantized_multiplier_greater_than_one(x, m, left)
    assert got.tolist() == [_srdhm(_wrap32(int(a) << int(c)), int(b))
                            for a, b, c in zip(x, m, left)]


def test_wrap_int32() -> None:
    assert q.wrap_int32(np.array([2**31, -(2**31) - 1, 5])).tolist() == [I32_MIN, I32_MAX, 5]


# --- activation ranges --------------------------------------------------------------------------


def test_activation_range_quantized_hand_values() -> None:
    # int8, scale 0.05, zp -10: 0 -> -10, 6 -> 120 - 10 = 110, -1 -> -30, 1 -> 10
    assert q.calculate_activation_range_quantized("NONE", 0.05, -10, "int8") == (-128, 127)
    assert q.calculate_activation_range_quantized("RELU", 0.05, -10, "int8") == (-10, 127)
    assert q.calculate_activation_range_quantized("RELU6", 0.05, -10, "int8") == (-10, 110)
    assert q.calculate_activation_range_quantized("RELU_N1_TO_1", 0.05, -10, np.int8) == (-30, 10)
    # RELU6 beyond the type range is clamped to it
    assert q.calculate_activation_range_quantized("RELU6", 0.01, 0, "int8") == (0, 127)
    assert q.calculate_activation_range_quantized("RELU", 0.01, 0, "int16") == (0, 32767)
    assert q.calculate_activation_range_quantized("TANH", 0.01, 0, "int16") == (-32768, 32767)


def test_activation_range_quantized_rounds_half_away() -> None:
    # 6 / 4 = 1.5 -> 2 (roundf), not banker's 2; 1 / 0.4 = 2.5 -> 3 (banker's would give 2)
    assert q.calculate_activation_range_quantized("RELU6", 4.0, 0, "int8") == (0, 2)
    assert q.calculate_activation_range_quantized("RELU_N1_TO_1", 0.4, 0, "int8") == (-3, 3)


def test_activation_range_float() -> None:
    f32 = np.finfo(np.float32)
    assert q.calculate_activation_range_float("NONE") == (float(f32.min), float(f32.max))
    assert q.calculate_activation_range_float("RELU") == (0.0, float(f32.max))
    assert q.calculate_activation_range_float("RELU6") == (0.0, 6.0)
    assert q.calculate_activation_range_float("RELU_N1_TO_1") == (-1.0, 1.0)


def test_activation_range_int() -> None:
    assert q.calculate_activation_range_int("NONE", np.int32) == (I32_MIN, I32_MAX)
    assert q.calculate_activation_range_int("RELU6", np.int32) == (0, 6)


def test_unknown_activation_raises() -> None:
    with pytest.raises(KernelError, match="fused_activation_function"):
        q.calculate_activation_range_float("SWISH")
    with pytest.raises(KernelError, match="quantized type"):
        q.calculate_activation_range_quantized("RELU", 0.1, 0, "float32")


# --- per-channel parameters and requantize ------------------------------------------------------


def test_per_channel_multipliers_use_double_of_float32_scales() -> None:
    in_s, out_s = 0.1, 0.3
    fs = np.array([0.02, 0.5, 1e-3], dtype=np.float32)
    m, s = q.per_channel_multipliers(in_s, fs, out_s, 3)
    for i in range(3):
        eff = (float(np.float32(in_s)) * float(fs[i])) / float(np.float32(out_s))
        assert (int(m[i]), int(s[i])) == q.quantize_multiplier(eff)
    m1, s1 = q.per_channel_multipliers(in_s, np.array([0.02], np.float32), out_s, 4)
    assert m1.shape == (4,) and len(set(m1.tolist())) == 1
    with pytest.raises(KernelError, match="per-channel scales"):
        q.per_channel_multipliers(in_s, fs, out_s, 5)


def test_requantize_writes_clamped_output() -> None:
    acc = np.array([[1000, -1000, 10**6]], dtype=np.int32)
    m, s = q.quantize_multiplier(0.75 / 8)
    out = np.empty((1, 3), dtype=np.int8)
    q.requantize(acc, m, s, 3, -128, 100, out=out)
    assert out.tolist() == [[97, -91, 100]]
    out16 = np.empty((1, 3), dtype=np.int16)
    q.requantize_int64(acc.astype(np.int64), 2**30, 0, 0, -32768, 32767, out=out16)
    assert out16.tolist() == [[500, -500, 32767]]


def test_requantize_inplace_matches_reference_path() -> None:
    rng = np.random.default_rng(7)
    c = 9
    acc = np.concatenate([rng.integers(-(2**31), 2**31 - 1, (300, c)),
                          rng.integers(-5000, 5000, (300, c)),
                          np.full((1, c), I32_MIN), np.full((1, c), I32_MAX), np.zeros((1, c))])
    m = rng.integers(2**30, 2**31 - 1, c)
    m[0] = 0
    s = np.array([-31, -20, -8, -1, 0, 1, 3, 7, -5])
    rq = q.ChannelRequant.make(m, s, -7, -128, 127)
    work = acc.astype(np.int64).copy()
    out = np.empty(acc.shape, np.int8)
    q.requantize_inplace(work, rq, out, np.empty_like(work))
    expected = np.clip(q.multiply_by_quantized_multiplier(acc, m, s) - 7, -128, 127)
    assert np.array_equal(out, expected)


def test_requantize_int64_inplace_matches_reference_path() -> None:
    rng = np.random.default_rng(8)
    c = 6
    acc = rng.integers(-(2**40), 2**40, (400, c))
    m = rng.integers(2**30, 2**31 - 1, c)
    m[1] = 0x7FFF0001
    s = np.array([-20, -10, -1, 0, 2, 7])
    rq = q.ChannelRequant.make(m, s, 0, -32768, 32767)
    out = np.empty(acc.shape, np.int16)
    q.requantize_int64_inplace(acc.copy(), rq, out)
    expected = np.clip(q.multiply_by_quantized_multiplier_int64(acc, m, s), -32768, 32767)
    assert np.array_equal(out, expected)


@pytest.mark.parametrize("shifts", [[-31, -20, -8, -1, 0, -5, -13], [-9], [-1, -2, -30, -31]])
def test_requantize_inplace_single_shift_form_matches_scalar_c(shifts: list[int]) -> None:
    """No left shift: the fused one-shift form against the scalar C transcription, including
    r = 0 channels, r = 31, int32 extremes and values on rounding boundaries."""
    rng = np.random.default_rng(9 + len(shifts))
    c = len(shifts)
    s = np.array(shifts)
    m = rng.integers(2**30, 2**31 - 1, c)
    m[0] = 2**31 - 1
    m[-1] = 2**30  # with x = -1: x*M + 2**30 == 0, the corner of the n = [x < 0] shortcut
    ties = (rng.integers(-(2**20), 2**20, (200, 1)) * 2 + 1) << np.maximum(-s - 1, 0)
    acc = np.concatenate([rng.integers(-(2**31), 2**31 - 1, (300, c)),
                          rng.integers(-70000, 70000, (300, c)), np.clip(ties, I32_MIN, I32_MAX),
                          np.full((1, c), I32_MIN), np.full((1, c), I32_MAX), np.zeros((1, c)),
                          np.full((1, c), -1)])
    rq = q.ChannelRequant.make(m, s, 5, -32768, 32767)
    assert rq.fused
    expected = np.array([[min(32767, max(-32768, _mbqm(int(v), int(m[j]), int(s[j])) + 5))
                          for j, v in enumerate(row)] for row in acc])
    out = np.empty(acc.shape, np.int16)
    work = acc.astype(np.int64)
    q.requantize_inplace(work, rq, out, np.empty_like(work))
    assert np.array_equal(out, expected)
    out32 = np.empty(acc.shape, np.int16)  # int32 accumulators widened by the multiply
    acc32 = acc.astype(np.int32)
    q.requantize_inplace(acc32, rq, out32, np.empty(acc.shape, np.int64),
                         work=np.empty(acc.shape, np.int64))
    assert np.array_equal(out32, expected)


def test_srdhm_and_rdbp_match_scalar_c_on_signed_operands() -> None:
    """Both operands of SRDHM signed (the fixed-point softmax/logistic use negative
    multipliers), and RDBP with scalar exponents (its fast path) against the C transcription."""
    rng = np.random.default_rng(21)
    edges = np.array([0, 1, -1, I32_MIN, I32_MAX, 2**30, -(2**30), I32_MIN + 1])
    a = np.concatenate([rng.integers(I32_MIN, I32_MAX, 2000, endpoint=True), edges, edges])
    b = np.concatenate([rng.integers(I32_MIN, I32_MAX, 2000, endpoint=True), edges,
                        edges[::-1]])
    got = q.saturating_rounding_doubling_high_mul(a, b)
    assert got.tolist() == [_srdhm(int(x), int(y)) for x, y in zip(a, b)]
    for e in (0, 1, 2, 7, 20, 31):
        assert q.rounding_divide_by_pot(a, e).tolist() == [_rdbpot(int(x), e) for x in a]
        assert int(q.rounding_divide_by_pot(int(a[3]), e)) == _rdbpot(int(a[3]), e)


@pytest.mark.parametrize("shift", [-31, -20, -9, -1, 0, 1, 4])
@pytest.mark.parametrize("offset", [0, -128, 7, 300])
def test_one_channel_requant_matches_scalar_c(shift: int, offset: int) -> None:
    """``make`` with one multiplier and shift (its Python-integer path) gives the outputs of
    the scalar C transcription, and the same arrays and flags as the per-channel path."""
    rng = np.random.default_rng(abs(1000 + shift * 7 + offset))
    for m in (0, 2**30, 2**31 - 1, int(rng.integers(2**30, 2**31 - 1))):
        acc = np.concatenate([rng.integers(-(2**31), 2**31 - 1, 400),
                              rng.integers(-70000, 70000, 400),
                              [I32_MIN, I32_MAX, 0, -1, 1]]).reshape(-1, 1)
        rq = q.ChannelRequant.make(m, shift, offset, -32768, 32767)
        wide = q.ChannelRequant.make([m, m], [shift, shift], offset, -32768, 32767)
        for name in ("multiplier", "left", "right", "half", "rounds", "fused_add",
                     "fused_shift"):
            assert np.array_equal(getattr(rq, name), getattr(wide, name)[:1]), name
        for name in ("any_left", "any_right", "fused", "fused_all_fix", "offset_in_fused_add"):
            assert getattr(rq, name) == getattr(wide, name), name
        expected = np.array([[min(32767, max(-32768, _mbqm(int(v), m, shift) + offset))]
                             for v in acc[:, 0]])
        out = np.empty(acc.shape, np.int16)
        work = acc.astype(np.int64)
        q.requantize_inplace(work, rq, out, np.empty_like(work))
        assert np.array_equal(out, expected), (m, shift, offset)


def test_one_channel_requant_refuses_like_the_array_path() -> None:
    for m, s in ((-1, -3), (2**30, -63)):
        with pytest.raises(KernelError):
            q.ChannelRequant.make(m, s, 0, -128, 127)
        with pytest.raises(KernelError):
            q.ChannelRequant.make([m, m], [s, s], 0, -128, 127)
