"""Small models built in code that tests in different folders share."""

from __future__ import annotations

import numpy as np

from tinyarena.builder import ModelBuilder


def hello_world_like(seed: int) -> bytes:
    """hello_world_float's shape: 1 -> FC(16) -> FC(16) -> FC(1), float, with (zero) biases.

    The facts sheet's section 8 works its arena out by hand (wheel: head 128, tail 1408); the
    weights are random (``seed``) because the layout does not depend on them.
    """
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    prev = b.add_input("x", (1, 1), "float32")
    width = 1
    for i, out in enumerate((16, 16, 1)):
        w = b.add_constant(f"w{i}", rng.standard_normal((out, width)).astype(np.float32))
        bias = b.add_constant(f"b{i}", np.zeros(out, np.float32))
        y = b.add_tensor(f"y{i}", (1, out), "float32")
        b.add_operator("FULLY_CONNECTED", [prev, w, bias], [y])
        prev, width = y, out
    b.mark_output(prev)
    return b.build()
