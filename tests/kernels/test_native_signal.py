"""Compiled signal-library kernels (``kernels.native.signal``) bit for bit against the numpy
kernels (which tests/kernels/test_signal_*.py check against the wheel): Rfft in its three
builds over every kissfft radix, zero padding and several rows; the audio front end's ops on
seeded random one-op models and the front-end chain, over several invokes (spectral
subtraction keeps its noise estimate between them), on the host and Cortex-M targets."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from native_compare import compiled_ops, native_matches_numpy  # noqa: E402
from signal_cases import flex  # noqa: E402
from tinyarena.builder import ModelBuilder  # noqa: E402
from tinyarena.interpreter import Interpreter  # noqa: E402

T = {"int16": 7, "int32": 2, "float32": 0}
TARGETS = ("host-x64", "cortex-m4", "cortex-m0")


def _rfft(dtype: str, rows: int, in_len: int, fft_length: int, out_len: int | None = None
          ) -> bytes:
    b = ModelBuilder()
    bins = out_len or fft_length // 2 + 1
    x = b.add_input("x", (rows, in_len), dtype)
    y = b.add_tensor("y", (rows, 2 * bins), dtype)
    b.add_operator("SignalRfft", [x], [y], custom_options=flex(T=T[dtype],
                                                                fft_length=fft_length))
    b.mark_output(y)
    return b.build()


def _samples(dtype: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    if dtype == "float32":
        return rng.normal(0, 1000, shape).astype(np.float32)
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)
    x.reshape(-1)[:2] = (info.min, info.max)  # the extremes overflow kissfft's int sums
    return x


# radix 4 and 2 (8, 16, 64, 512), 3 (6, 24, 48), 5 (10, 40, 100), 3 and 5 (30, 60, 480)
RFFT_CASES = [(4, 3), (6, 6), (8, 8), (10, 7), (16, 16), (24, 20), (30, 30), (40, 33),
              (48, 48), (60, 48), (64, 1), (100, 100), (480, 400), (512, 480)]


@pytest.mark.parametrize("dtype", ["int16", "int32", "float32"])
def test_native_rfft_matches_numpy(dtype: str) -> None:
    rng = np.random.default_rng(70 + T[dtype])
    for fft_length, in_len in RFFT_CASES:
        rows = 1 + fft_length % 3
        model = _rfft(dtype, rows, in_len, fft_length)
        feeds = [[_samples(dtype, (rows, in_len), rng)] for _ in range(2)]
        if dtype != "float32":  # full-scale constant rows: every sum saturates the same way
            info = np.iinfo(dtype)
            feeds.append([np.full((rows, in_len), info.min, dtype)])
            feeds.append([np.full((rows, in_len), info.max, dtype)])
        native_matches_numpy(model, "SignalRfft", inputs=feeds)
    # wider output rows: each row at its own offset, the tail of a row left as it was
    model = _rfft(dtype, 3, 16, 16, out_len=12)
    native_matches_numpy(model, "SignalRfft", inputs=[[_samples(dtype, (3, 16), rng)]])


def test_native_rfft_on_cortex_m_targets() -> None:
    rng = np.random.default_rng(74)
    for dtype in ("int16", "float32"):
        model = _rfft(dtype, 2, 60, 60)
        for target in TARGETS[1:]:
            native_matches_numpy(model, "SignalRfft", target,
                                 inputs=[[_samples(dtype, (2, 60), rng)]])


def _float_bits_match(a: np.ndarray, b: np.ndarray) -> None:
    """Same NaN positions and the same bits elsewhere (a NaN's sign is the compiler's)."""
    nan = np.isnan(a)
    assert np.array_equal(nan, np.isnan(b))
    assert np.array_equal(a.view(np.uint32)[~nan], b.view(np.uint32)[~nan])


def test_native_float_rfft_specials() -> None:
    """Infinities, NaN and overflowing sums through the float build."""
    rng = np.random.default_rng(75)
    x = rng.normal(0, 1, (2, 30)).astype(np.float32)
    x[0, :4] = [np.inf, -np.inf, np.nan, 3e38]
    x[1, :3] = [3e38, 3e38, -np.inf]
    model = _rfft("float32", 2, 30, 30)
    got = []
    for native_on in (True, False):
        ip = Interpreter(model, native=native_on)
        ip.allocate_tensors()
        if native_on:
            assert compiled_ops(ip)["SignalRfft"]
        ip.set_input(0, x)
        ip.invoke()
        got.append(np.array(ip.get_output(0)))
    _float_bits_match(*got)


def test_native_rfft_declines_lengths_the_wheel_cannot_run() -> None:
    """fft_length 14 needs kissfft's generic radix: no compiled step, eval refuses to run."""
    ip = Interpreter(_rfft("int16", 1, 14, 14), native=True)
    ip.allocate_tensors()
    assert not compiled_ops(ip)["SignalRfft"]
