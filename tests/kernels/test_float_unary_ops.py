"""NEG, FLOOR, CEIL, ROUND and EXP against the live TFLM wheel: float32 bit patterns (NaN,
infinities, signed zeros, halves, denormals, huge values) with numpy warnings as errors, the
arena figures, and the refusal of other types."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from kernel_runner import run_kernels
from tflm_oracle import tflm_allocations, tflm_probe, tflm_run
from tinyarena.arena.allocator import allocate_model
from tinyarena.builder import ModelBuilder
from tinyarena.errors import KernelError
from tinyarena.interpreter import Interpreter
from tinyarena.model import read_model

pytestmark = pytest.mark.oracle

OPS = ("NEG", "FLOOR", "CEIL", "ROUND", "EXP")

SPECIAL = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5,
                    -2.5, 0.4, -0.4, 0.49999997, -0.49999997, 1e-45, -1e-45, 1e-38, 88.72, 88.73,
                    -103.9, -104.0, 3e38, -3e38, 2.0**31, -(2.0**31), 2.0**31 + 256, 8388607.5,
                    -8388607.5, 4194303.5, 16777215.0, 1e10], np.float32)


def build(op: str, shape: tuple[int, ...], dtype: str = "float32") -> bytes:
    b = ModelBuilder()
    q = {"scale": 0.1, "zero_point": 0} if dtype in ("int8", "int16") else {}
    x = b.add_input("x", shape, dtype, **q)
    y = b.add_tensor("y", shape, dtype, **q)
    b.add_operator(op, [x], [y])
    b.mark_output(y)
    return b.build()


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a.view(np.uint32),
                                                                       b.view(np.uint32))


@pytest.mark.parametrize("op", OPS)
def test_float_outputs_are_bit_identical_to_tflm(op: str) -> None:
    rng = np.random.default_rng(len(op))
    values = np.concatenate([
        SPECIAL,
        rng.normal(0, 3, 300).astype(np.float32),
        (rng.integers(-40, 40, 200) * 0.25).astype(np.float32),  # exact halves and quarters
        rng.uniform(-110, 95, 300).astype(np.float32),
        (rng.integers(0, 2**32, 400, dtype=np.uint64).astype(np.uint32)).view(np.float32),
    ])
    model = build(op, (values.size,))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = run_kernels(model, [values])[0]
    theirs = tflm_run(model, [values])[0]
    bad = ~(ours.view(np.uint32) == theirs.view(np.uint32))
    assert not bad.any(), (values[bad][:8], ours[bad][:8], theirs[bad][:8])


@pytest.mark.parametrize("op", OPS)
def test_interpreter_and_arena_match_tflm(op: str) -> None:
    model = build(op, (2, 3, 5))
    x = np.linspace(-4, 4, 30, dtype=np.float32).reshape(2, 3, 5)
    ip = Interpreter(read_model(model))
    ip.allocate_tensors()
    ip.set_input(0, x)
    ip.invoke()
    assert same_bits(ip.get_output(0), tflm_run(model, [x])[0])
    ours, theirs = allocate_model(read_model(model)), tflm_allocations(model)
    got = {k: (v.used, v.requested, v.count) for k, v in ours.categories.items()}
    assert (ours.head, ours.tail, ours.total) == (theirs.head, theirs.tail, theirs.total)
    assert got == theirs.categories


@pytest.mark.parametrize("op", OPS)
def test_int8_is_refused_like_tflm(op: str) -> None:
    model = build(op, (4,), "int8")
    assert tflm_probe(model, [[np.zeros(4, np.int8)]]).refused
    with pytest.raises(KernelError, match="float32"):
        run_kernels(model, [np.zeros(4, np.int8)])


@pytest.mark.parametrize("op", ("NEG", "FLOOR"))
def test_eval_only_ops_still_size_with_other_types(op: str) -> None:
    """NEG and FLOOR have no Prepare: TFLM allocates an int8 model and fails only at invoke,
    so sizing gives TFLM's arena whatever the type."""
    model = build(op, (4,), "int8")
    ours, theirs = allocate_model(read_model(model)), tflm_allocations_no_invoke(model)
    assert (ours.head, ours.tail, ours.total) == theirs


def tflm_allocations_no_invoke(model: bytes) -> tuple[int, int, int]:
    from tflm_oracle import captured_stderr, make_interpreter, parse_allocations

    with captured_stderr() as err:
        ip = make_interpreter(model)
        ip.print_allocations()
    a = parse_allocations(err[0])
    return a.head, a.tail, a.total
