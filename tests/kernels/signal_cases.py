"""Builds one-op (or chained) models of TFLM's signal-library custom ops and compares them
with the wheel: allocation report, and outputs of several invokes in a row (the ops keep
state between invokes) through tinyarena's Interpreter on its emulated arena."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from model_families import flex  # noqa: F401  (re-exported: the signal tests build options with it)
from tflm_oracle import tflm_allocations, tflm_invokes
from tinyarena.arena.allocator import allocate_model
from tinyarena.builder import ModelBuilder
from tinyarena.interpreter import Interpreter
from tinyarena.model import read_model


def assert_allocations_match(model: bytes, inputs: Sequence[np.ndarray] | None = None) -> None:
    ours = allocate_model(read_model(model))
    theirs = tflm_allocations(model, inputs=inputs)
    got = {k: (v.used, v.requested, v.count) for k, v in ours.categories.items()}
    assert (ours.total, ours.head, ours.tail) == (theirs.total, theirs.head, theirs.tail), \
        theirs.text
    assert got == theirs.categories, theirs.text


def run_interpreter(model: bytes, steps: Sequence[Sequence[np.ndarray]]
                    ) -> list[list[np.ndarray]]:
    ip = Interpreter(model)
    ip.allocate_tensors()
    results = []
    for inputs in steps:
        for i, x in enumerate(inputs):
            ip.set_input(i, x)
        ip.invoke()
        results.append([ip.get_output(i) for i in range(ip.outputs_size())])
    return results


def assert_matches_tflm(model: bytes, steps: Sequence[Sequence[np.ndarray]],
                        check_allocations: bool = True) -> list[list[np.ndarray]]:
    """Allocation report and every output of every invoke identical to the wheel's."""
    if check_allocations:
        assert_allocations_match(model, steps[0])
    want = tflm_invokes(model, steps)
    got = run_interpreter(model, steps)
    for step, (g, w) in enumerate(zip(got, want)):
        assert len(g) == len(w)
        for k, (a, b) in enumerate(zip(g, w)):
            assert a.dtype == b.dtype and a.shape == b.shape, (step, k, a.shape, b.shape)
            assert np.array_equal(a, b), (step, k, a, b)
    return got


def assert_reset_matches_tflm(model: bytes, before: Sequence[Sequence[np.ndarray]],
                              after: Sequence[Sequence[np.ndarray]]) -> None:
    """Invokes, MicroInterpreter::Reset (kernels' reset included), more invokes: identical."""
    from tflm_oracle import _feed, _outputs, captured_stderr, make_interpreter

    want = []
    with captured_stderr():
        wheel = make_interpreter(model)
        for k, inputs in enumerate(list(before) + list(after)):
            if k == len(before):
                wheel.reset()
            _feed(wheel, inputs)
            wheel.invoke()
            want.append(_outputs(wheel))
    ip = Interpreter(model)
    ip.allocate_tensors()
    got = []
    for k, inputs in enumerate(list(before) + list(after)):
        if k == len(before):
            ip.reset()
        for i, x in enumerate(inputs):
            ip.set_input(i, x)
        ip.invoke()
        got.append([ip.get_output(i) for i in range(ip.outputs_size())])
    for g, w in zip(got, want):
        for a, b in zip(g, w):
            assert np.array_equal(a, b), (a, b)


# The ``T`` custom option of SignalRfft / SignalIrfft: TFLM's TfLiteType of the samples.
FFT_T = {"int16": 7, "int32": 2, "float32": 0}


def rfft_model(dtype: str, rows: int, in_len: int, fft_length: int,
               out_len: int | None = None) -> bytes:
    """One SignalRfft over ``rows`` frames of ``in_len`` samples (zero-padded or cut to
    ``fft_length``), ``out_len`` complex bins out (default: fft_length / 2 + 1)."""
    b = ModelBuilder()
    bins = out_len or fft_length // 2 + 1
    x = b.add_input("x", (rows, in_len), dtype)
    y = b.add_tensor("y", (rows, 2 * bins), dtype)
    b.add_operator("SignalRfft", [x], [y], custom_options=flex(T=FFT_T[dtype],
                                                                fft_length=fft_length))
    b.mark_output(y)
    return b.build()


def fft_samples(dtype: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Random samples of ``dtype``; integer ones start with the type's extremes, which
    overflow kissfft's integer sums."""
    if dtype == "float32":
        return rng.normal(0, 1000, shape).astype(np.float32)
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)
    x.reshape(-1)[:2] = (info.min, info.max)
    return x
