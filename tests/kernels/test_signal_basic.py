"""SignalWindow, SignalEnergy and SignalFftAutoScale against the live wheel."""

from __future__ import annotations

import numpy as np
import pytest

from signal_cases import assert_matches_tflm, flex
from tinyarena.builder import ModelBuilder

pytestmark = pytest.mark.oracle


def _window(shape: tuple[int, ...], n: int, shift: int, rng: np.random.Generator) -> bytes:
    b = ModelBuilder()
    x = b.add_input("x", shape, "int16")
    w = b.add_constant("w", rng.integers(-32768, 32768, n).astype(np.int16))
    y = b.add_tensor("y", shape, "int16")
    b.add_operator("SignalWindow", [x, w], [y], custom_options=flex(shift=shift))
    b.mark_output(y)
    return b.build()


@pytest.mark.parametrize("shape,n,shift", [((16,), 16, 12), ((3, 10), 10, 0), ((2, 2, 8), 4, 15),
                                           ((480,), 480, 31)])
def test_window_matches_tflm(shape: tuple[int, ...], n: int, shift: int) -> None:
    rng = np.random.default_rng(sum(shape) + shift)
    model = _window(shape, n, shift, rng)
    x = rng.integers(-32768, 32768, shape).astype(np.int16)
    x.reshape(-1)[:2] = (-32768, 32767)
    assert_matches_tflm(model, [[x]])


def _energy(n_complex: int, out: int, start: int, end: int) -> bytes:
    b = ModelBuilder()
    x = b.add_input("x", (2 * n_complex,), "int16")
    y = b.add_tensor("y", (out,), "uint32")
    b.add_operator("SignalEnergy", [x], [y], custom_options=flex(start_index=start,
                                                                  end_index=end))
    b.mark_output(y)
    return b.build()


@pytest.mark.parametrize("n,start,end", [(257, 0, 257), (9, 0, 9), (33, 0, 30)])
def test_energy_matches_tflm(n: int, start: int, end: int) -> None:
    rng = np.random.default_rng(n)
    model = _energy(n, n, start, end)
    x = rng.integers(-32768, 32768, 2 * n).astype(np.int16)
    x[:4] = (-32768, -32768, 32767, -32768)  # 2**31 wraps in int32 then reads as uint32
    got = assert_matches_tflm(model, [[x]])
    assert got[0][0][0] == 2**31


def test_energy_writes_only_its_bins() -> None:
    """Bins outside [start, end) keep the arena's bytes (zeros in a fresh arena)."""
    from signal_cases import run_interpreter
    from tflm_oracle import tflm_run

    model = _energy(20, 20, 5, 12)
    x = np.random.default_rng(3).integers(-32768, 32768, 40).astype(np.int16)
    got = run_interpreter(model, [[x]])[0][0]
    want = tflm_run(model, [x])[0]
    assert np.array_equal(got[5:12], want[5:12])
    spectrum = x.astype(np.int64).reshape(-1, 2)
    assert np.array_equal(got[5:12], (spectrum[5:12] ** 2).sum(axis=1))


def _auto_scale(n: int) -> bytes:
    b = ModelBuilder()
    x = b.add_input("x", (n,), "int16")
    y = b.add_tensor("y", (n,), "int16")
    s = b.add_tensor("s", (), "int32")
    b.add_operator("SignalFftAutoScale", [x], [y, s], custom_options=flex())
    b.mark_output(y)
    b.mark_output(s)
    return b.build()


def _auto_scale_inputs(rng: np.random.Generator) -> list[np.ndarray]:
    """Peaks at every bit length, zeros, and MaxAbs16's -32768 corner (its running maximum
    turns negative and then follows the samples)."""
    cases = [np.zeros(12, np.int16), np.array([-32768] + [5] * 11, np.int16),
             np.array([3, -32768, -7, -5, -6, 2, 1, 0, 0, 0, 0, 0], np.int16),
             np.array([3, -32768, -7, -5, -2, -1, 0, 0, 0, 0, 0, -32768], np.int16),
             np.array([100, -32768, -7, -5, -2, -1, -1, 1, 2, 9, 0, 0], np.int16)]
    for bits in range(0, 16):
        v = rng.integers(-(1 << bits), 1 << bits, 12).astype(np.int16)
        cases.append(v)
    return cases


def test_fft_auto_scale_matches_tflm() -> None:
    model = _auto_scale(12)
    steps = [[x] for x in _auto_scale_inputs(np.random.default_rng(4))]
    got = assert_matches_tflm(model, steps)
    assert len({int(g[1]) for g in got}) > 10  # many different shifts were exercised


def test_every_signal_op_of_the_wheel_has_a_kernel() -> None:
    """The custom-op names compiled into the wheel's runtime (PythonOpsResolver's AddXxx for
    the signal library) are exactly the Signal* keys of the kernel registry, all runnable."""
    import re
    from pathlib import Path

    import tflite_micro
    from tinyarena.kernels import MODULES, registration

    lib = next(Path(tflite_micro.__file__).parent.rglob("_runtime*.so"))
    names = {m.decode() for m in re.findall(rb"(?<=\x00)(Signal[A-Z][A-Za-z]+)(?=\x00)",
                                                lib.read_bytes())}
    ours = {name for name in MODULES if name.startswith("Signal")}
    assert names == ours
    assert all(registration(name).eval is not None for name in ours)


def _one_op(name: str, options: bytes | None, dtype: str = "int16") -> bytes:
    b = ModelBuilder()
    x = b.add_input("x", (16,), dtype)
    y = b.add_tensor("y", (18,), dtype)
    b.add_operator(name, [x], [y], custom_options=options)
    b.mark_output(y)
    return b.build()


@pytest.mark.parametrize("options,match", [
    (None, "needs its flexbuffer custom options"),
    (b"\x01\x02", "not a flexbuffer map"),
    (flex(T=9, fft_length=16), "is not int16"),
    (flex(T=7), "reads 'fft_length' from position 1"),
    (flex(T=7, fft_length="sixteen"), "as an integer"),
    (flex(T=7, fft_length=15), "must be even")])
def test_bad_custom_options_are_refused_with_the_reason(options: bytes | None,
                                                        match: str) -> None:
    from tinyarena.arena.allocator import allocate_model
    from tinyarena.errors import KernelError
    from tinyarena.model import read_model

    with pytest.raises(KernelError, match=match):
        allocate_model(read_model(_one_op("SignalRfft", options)))
