"""STRIDED_SLICE against the live TFLM wheel: random begin/end/strides (negative included) and
begin, end and shrink-axis masks on 1-D to 4-D inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stateful_runner import assert_same_as_tflm
from tinyarena.builder import ModelBuilder

pytestmark = pytest.mark.oracle


def _axis_len(begin: int, end: int, stride: int, size: int, bm: bool, em: bool,
              shrink: bool) -> int:
    """Python slicing semantics, which TFLM's output-size check agrees with."""
    if shrink:
        return 1
    s = slice(None if bm else begin, None if em else end, stride)
    return len(range(*s.indices(size)))


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16", "int32"])
def test_strided_slice_matches_tflm(dtype: str) -> None:
    rng = np.random.default_rng(71)
    done = 0
    while done < 10:
        rank = int(rng.integers(1, 5))
        shape = tuple(int(d) for d in rng.integers(1, 6, size=rank))
        begin = [int(rng.integers(-s, s)) for s in shape]
        end = [int(rng.integers(-s, s + 1)) for s in shape]
        strides = [int(rng.choice([-2, -1, 1, 2, 3])) for _ in shape]
        bm, em = int(rng.integers(0, 1 << rank)), int(rng.integers(0, 1 << rank))
        sm = int(rng.integers(0, 1 << rank)) if rng.random() < 0.4 else 0
        for i in range(rank):  # shrink only with a positive stride and in-range begin
            if sm >> i & 1:
                strides[i] = 1
                bm &= ~(1 << i)
        lens = [_axis_len(begin[i], end[i], strides[i], shape[i], bool(bm >> i & 1),
                          bool(em >> i & 1), bool(sm >> i & 1)) for i in range(rank)]
        out_shape = tuple(n for i, n in enumerate(lens) if not sm >> i & 1)
        if math.prod(out_shape) == 0 or not out_shape:
            continue
        b = ModelBuilder()
        x = b.add_input("x", shape, dtype)
        ins = [x, b.add_constant("begin", np.array(begin, np.int32)),
               b.add_constant("end", np.array(end, np.int32)),
               b.add_constant("strides", np.array(strides, np.int32))]
        y = b.add_tensor("y", out_shape, dtype)
        b.add_operator("STRIDED_SLICE", ins, [y], begin_mask=bm, end_mask=em,
                       shrink_axis_mask=sm)
        b.mark_output(y)
        data = (rng.normal(size=shape).astype(np.float32) if dtype == "float32"
                else rng.integers(-100, 100, size=shape).astype(dtype))
        assert_same_as_tflm(b.build(), [data])
        done += 1
