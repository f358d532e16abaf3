"""CIRCULAR_BUFFER (custom op) against the live TFLM wheel, through the interpreter: the
shifted int8 buffer after each invoke, the stride (cycles_max from the flexbuffer options or
TFLM's default by slot count) that skips the rest of the graph on other invokes, and the
arena figures."""

from __future__ import annotations

import numpy as np
import pytest
from flatbuffers import flexbuffers

from tflm_oracle import tflm_allocations, tflm_invokes
from tinyarena.arena.allocator import allocate_model
from tinyarena.builder import ModelBuilder
from tinyarena.errors import KernelError
from tinyarena.interpreter import Interpreter
from tinyarena.model import read_model

pytestmark = pytest.mark.oracle


def build(slots: int, cycles: int | None, depth: tuple[int, int] = (1, 4),
          follow: bool = True, dtype: str = "int8") -> bytes:
    """Input -> CIRCULAR_BUFFER -> (ABS) -> output."""
    b = ModelBuilder()
    q = {"scale": 0.1, "zero_point": 0}
    x = b.add_input("x", (1, 1) + depth, dtype, **q)
    y = b.add_tensor("y", (1, slots) + depth, dtype, **q)
    options = flexbuffers.Dumps({"cycles_max": cycles}) if cycles is not None else None
    b.add_operator("CIRCULAR_BUFFER", [x], [y], custom_options=options)
    if follow:
        z = b.add_tensor("z", (1, slots) + depth, dtype, **q)
        b.add_operator("ABS", [y], [z])
        b.mark_output(z)
    else:
        b.mark_output(y)
    return b.build()


@pytest.mark.parametrize("slots,cycles,depth,follow", [
    (3, None, (1, 4), True), (5, None, (1, 4), True), (3, 1, (1, 4), True),
    (4, 3, (2, 3), True), (13, None, (1, 2), False), (3, 0, (1, 4), False),
    (6, -2, (1, 8), True),
])
def test_invokes_match_tflm(slots: int, cycles: int | None, depth: tuple[int, int],
                            follow: bool) -> None:
    model = build(slots, cycles, depth, follow)
    rng = np.random.default_rng(slots)
    steps = [[rng.integers(-128, 128, size=(1, 1) + depth).astype(np.int8)] for _ in range(7)]
    theirs = tflm_invokes(model, steps)
    ip = Interpreter(read_model(model))
    ip.allocate_tensors()
    for step, expected in zip(steps, theirs):
        ip.set_input(0, step[0])
        ip.invoke()
        assert np.array_equal(ip.get_output(0), expected[0]), (step, ip.get_output(0), expected)


def test_allocations_match_tflm() -> None:
    model = build(4, 2, (1, 16))
    ours = allocate_model(read_model(model))
    theirs = tflm_allocations(model)
    got = {k: (v.used, v.requested, v.count) for k, v in ours.categories.items()}
    assert (ours.head, ours.tail, ours.total) == (theirs.head, theirs.tail, theirs.total)
    assert got == theirs.categories


def test_float_is_refused() -> None:
    with pytest.raises(KernelError, match="int8 only"):
        allocate_model(read_model(build(3, 1, follow=False, dtype="float32")))


def test_reset_restarts_the_stride_like_tflm() -> None:
    """MicroInterpreter::Reset calls CircularBufferReset (cycles_until_run = cycles_max)."""
    from tinyarena.kernels.base import Registration

    if "reset" not in Registration.__dataclass_fields__:
        pytest.skip("Registration has no reset hook on this branch (ops-signal adds it)")
    from tflm_oracle import captured_stderr, make_interpreter

    model = build(3, 3)
    rng = np.random.default_rng(4)
    xs = [rng.integers(-128, 128, size=(1, 1, 1, 4)).astype(np.int8) for _ in range(6)]
    ip = Interpreter(read_model(model))
    ip.allocate_tensors()
    with captured_stderr():
        wheel = make_interpreter(model)
        for i, x in enumerate(xs):
            if i == 2:
                ip.reset()
                wheel.reset()
            ip.set_input(0, x)
            ip.invoke()
            wheel.set_input(x, 0)
            wheel.invoke()
            assert np.array_equal(ip.get_output(0), wheel.get_output(0))
