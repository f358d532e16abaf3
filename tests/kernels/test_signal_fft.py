"""SignalRfft (and SignalIrfft when present) against the live wheel: int16, int32, float32,
every radix kissfft has (2, 3, 4, 5), several rows, zero padding, and the arena numbers
(params + kissfft state in the tail, the work area as a scratch buffer)."""

from __future__ import annotations

import numpy as np
import pytest

from signal_cases import FFT_T, assert_matches_tflm, fft_samples, flex, rfft_model
from tinyarena.arena.allocator import allocate_model
from tinyarena.errors import KernelError
from tinyarena.interpreter import Interpreter
from tinyarena.model import read_model

pytestmark = pytest.mark.oracle


# lengths: 2**k (radix 4 and 2), 3 * 2**k, 5 * 2**k, 15 (3 and 5), the audio front end's 512
CASES = [(4, 3), (6, 6), (8, 8), (10, 7), (16, 16), (24, 20), (30, 30), (40, 33), (48, 48),
         (60, 48), (64, 1), (100, 100), (128, 100), (250, 250), (256, 256), (480, 400),
         (512, 480)]


@pytest.mark.parametrize("dtype", ["int16", "int32", "float32"])
def test_rfft_matches_tflm(dtype: str) -> None:
    rng = np.random.default_rng(FFT_T[dtype])
    for fft_length, in_len in CASES:
        model = rfft_model(dtype, 2, in_len, fft_length)
        assert_matches_tflm(model, [[fft_samples(dtype, (2, in_len), rng)]])


def test_rfft_wider_output_rows_keep_their_tail() -> None:
    """output_length > fft_length/2 + 1: each row starts at its own offset, the rest of the
    row is left as it was."""
    rng = np.random.default_rng(8)
    model = rfft_model("int16", 3, 16, 16, out_len=12)
    assert_matches_tflm(model, [[fft_samples("int16", (3, 16), rng)]])


@pytest.mark.parametrize("target", ["arm32", "arm32-short-enums"])
def test_rfft_tail_on_32_bit_targets(target: str) -> None:
    """Facts 5.2: params 32 bytes; kissfft state 3*4 + (264 + c) + c*(n-1) + c*(3n/2)."""
    model = read_model(rfft_model("int16", 1, 512, 512))
    host = allocate_model(model)
    arm = allocate_model(model, target=target)
    n, c = 256, 4
    state_arm = 12 + 268 + c * (n - 1) + c * (3 * n // 2)
    state_x64 = 24 + 268 + c * (n - 1) + c * (3 * n // 2)
    buffers = host.categories["Persistent buffer data"]
    arm_buffers = arm.categories["Persistent buffer data"]
    # OpData and state; the IO pointer arrays are 8-byte entries on x64, 4 on arm32
    assert buffers.requested - arm_buffers.requested == (48 - 32) + (state_x64 - state_arm) + 8
    assert arm_buffers.requested == 32 + state_arm + 2 * 4
    assert arm_buffers.count == 4


@pytest.mark.parametrize("fft_length", [2, 14, 22])
def test_rfft_lengths_the_wheel_cannot_run(fft_length: int) -> None:
    """kissfft's generic radix needs KISS_FFT_MALLOC, which TFLM patches to NULL: the wheel
    segfaults on these lengths. They still size; running them is refused."""
    model = rfft_model("int16", 1, fft_length, fft_length)
    assert allocate_model(read_model(model)).total > 0
    ip = Interpreter(model)
    ip.allocate_tensors()
    with pytest.raises(KernelError, match="cannot run"):
        ip.invoke()


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint32)


def test_float_fft_specials_match_tflm_without_warnings() -> None:
    """NaN, infinities and overflowing sums: every non-NaN output has the wheel's bits, NaNs
    sit where the wheel's are, and no numpy warning is raised (warnings are errors here).
    A NaN's sign may differ: when two NaNs meet, x86 keeps the first operand's, and which
    operand of a commutative + or * comes first is the compiler's choice."""
    import warnings

    from signal_cases import run_interpreter
    from test_signal_stateful import _irfft, _overlap_add
    from tflm_oracle import tflm_invokes

    rng = np.random.default_rng(12)
    x = rng.normal(0, 1, (2, 30)).astype(np.float32)
    x[0, :4] = [np.inf, -np.inf, np.nan, 3e38]
    x[1, :3] = [3e38, 3e38, -np.inf]
    freq = rng.normal(0, 1, (2, 2 * 16)).astype(np.float32)
    freq[0, :3] = [np.inf, np.inf, np.nan]
    frames = rng.normal(0, 1, (1, 8)).astype(np.float32)
    frames[0, :2] = [np.inf, -np.inf]
    cases = [(rfft_model("float32", 2, 30, 30), [[x]]), (_irfft("float32", 2, 30, 30), [[freq]]),
             (_overlap_add("float32", (), 1, 8, 3), [[frames], [frames * -1]])]
    for model, steps in cases:
        want = tflm_invokes(model, steps)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = run_interpreter(model, steps)
        for g, w in zip(got, want):
            nan = np.isnan(g[0])
            assert np.array_equal(nan, np.isnan(w[0]))
            assert np.array_equal(_bits(g[0])[~nan], _bits(w[0])[~nan])
