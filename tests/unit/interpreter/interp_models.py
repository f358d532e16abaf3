"""Small models built with tinyarena.builder for the interpreter tests."""

from __future__ import annotations

import numpy as np

from tinyarena.builder import ModelBuilder


def float_chain(n: int = 4, size: int = 32) -> bytes:
    """x -> ADD(x, c0) -> ADD(., c1) ... -> y: n float32 ADDs with constant addends.

    Intermediates are each consumed once, so the greedy plan reuses their memory and all but
    the last few are overwritten by the end of an invoke.
    """
    b = ModelBuilder()
    cur = b.add_input("x", (1, size), "float32")
    for i in range(n):
        c = b.add_constant(f"c{i}", np.full((1, size), i + 1, np.float32))
        out = b.add_tensor(f"t{i}", (1, size), "float32")
        b.add_operator("ADD", [cur, c], [out])
        cur = out
    b.mark_output(cur)
    return b.build()


def int8_add_with_variable() -> bytes:
    """y = x + state (int8, quantized), where state is a variable tensor (tail buffer)."""
    b = ModelBuilder()
    x = b.add_input("x", (1, 8), "int8", scale=0.5, zero_point=3)
    state = b.add_tensor("state", (1, 8), "int8", scale=0.5, zero_point=-7, is_variable=True)
    y = b.add_tensor("y", (1, 8), "int8", scale=1.0, zero_point=1)
    b.add_operator("ADD", [x, state], [y])
    b.mark_output(y)
    return b.build()


def two_input_add() -> bytes:
    """a + b -> out (float32, two graph inputs), then out * a -> y."""
    b = ModelBuilder()
    a = b.add_input("a", (2, 3), "float32")
    c = b.add_input("b", (2, 3), "float32")
    s = b.add_tensor("sum", (2, 3), "float32")
    y = b.add_tensor("y", (2, 3), "float32")
    b.add_operator("ADD", [a, c], [s])
    b.add_operator("MUL", [s, a], [y])
    b.mark_output(y)
    return b.build()
