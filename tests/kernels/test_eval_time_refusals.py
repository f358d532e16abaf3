"""Types that TFLM's Prepare accepts but its Eval refuses: the wheel allocates the arena and
fails at invoke. tinyarena must size such a model exactly (sizing never needs eval) and
refuse to run it with a KernelError, for the math operators whose type check is in Eval."""

from __future__ import annotations

import numpy as np
import pytest

from kernel_runner import run_kernels
from tflm_oracle import tflm_probe
from tinyarena.arena.allocator import allocate_model
from tinyarena.builder import ModelBuilder
from tinyarena.errors import KernelError
from tinyarena.model import read_model

pytestmark = pytest.mark.oracle

CASES = [("DIV", 2, "int16"), ("ELU", 1, "int16"), ("PRELU", 2, "int32"),
         ("SQUARED_DIFFERENCE", 2, "int64"), ("LOG_SOFTMAX", 1, "int16"),
         ("FLOOR_DIV", 2, "int32"), ("FLOOR_MOD", 2, "int8"), ("NEG", 1, "int32"),
         ("FLOOR", 1, "int16")]


def build(op: str, n_in: int, dtype: str) -> bytes:
    b = ModelBuilder()
    q = {"scale": 0.1, "zero_point": 0} if dtype in ("int8", "int16") else {}
    xs = [b.add_input(f"x{i}", (3, 4), dtype, **q) for i in range(n_in)]
    y = b.add_tensor("y", (3, 4), dtype, **q)
    b.add_operator(op, xs, [y])
    b.mark_output(y)
    return b.build()


@pytest.mark.parametrize("op,n_in,dtype", CASES)
def test_sized_like_tflm_and_refused_at_run(op: str, n_in: int, dtype: str) -> None:
    model = build(op, n_in, dtype)
    inputs = [np.ones((3, 4), dtype)] * n_in
    wheel = tflm_probe(model, [inputs], report=True)
    assert wheel.stage in ("invoke", "crash"), wheel.log  # allocation succeeds
    theirs = wheel.allocations()
    ours = allocate_model(read_model(model))
    assert (ours.head, ours.tail, ours.total) == (theirs.head, theirs.tail, theirs.total)
    with pytest.raises(KernelError):
        run_kernels(model, inputs)
