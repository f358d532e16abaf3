"""Shared helpers for one-input kernel tests (activations, softmax, pooling, quantize, reduce).

``single_op_model`` builds a one-operator model with ``ModelBuilder``; ``compare`` runs the same
inputs through the live TFLM wheel and through tinyarena's kernels and checks the outputs:
identical for integer outputs, within a stated ulp bound for float32.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from kernel_runner import run_kernels
from tflm_oracle import tflm_run
from tinyarena.builder import ModelBuilder

QRANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767),
          "int32": (-(1 << 31), (1 << 31) - 1)}


def single_op_model(op: str, in_shape: Sequence[int], in_dtype: str,
                    in_q: tuple[float, int] | None, out_shape: Sequence[int], out_dtype: str,
                    out_q: tuple[float, int] | None, extra_inputs: Sequence[Any] = (),
                    **options: Any) -> bytes:
    """One op: graph input x -> op(x, *constant extra inputs) -> graph output y."""
    b = ModelBuilder()
    qi = {} if in_q is None else {"scale": in_q[0], "zero_point": in_q[1]}
    qo = {} if out_q is None else {"scale": out_q[0], "zero_point": out_q[1]}
    x = b.add_input("x", tuple(in_shape), in_dtype, **qi)
    inputs = [x]
    for i, data in enumerate(extra_inputs):
        inputs.append(b.add_constant(f"c{i}", np.asarray(data)))
    y = b.add_tensor("y", tuple(out_shape), out_dtype, **qo)
    b.add_operator(op, inputs, [y], **options)
    b.mark_output(y)
    return b.build()


def random_input(rng: np.random.Generator, shape: Sequence[int], dtype: str,
                 float_range: float = 8.0) -> np.ndarray:
    if dtype == "float32":
        return (rng.standard_normal(tuple(shape)) * float_range / 3).astype(np.float32)
    lo, hi = QRANGE[dtype]
    return rng.integers(lo, hi, size=tuple(shape), endpoint=True).astype(dtype)


def ulp_diff(a: np.ndarray, b: np.ndarray) -> int:
    """Largest distance in float32 units in the last place (0 when identical, incl. inf/nan)."""
    a32 = np.asarray(a, np.float32).reshape(-1)
    b32 = np.asarray(b, np.float32).reshape(-1)
    both_nan = np.isnan(a32) & np.isnan(b32)
    ia = a32.view(np.int32).astype(np.int64)
    ib = b32.view(np.int32).astype(np.int64)
    ia = np.where(ia < 0, -(ia & 0x7FFFFFFF), ia)  # monotone integer line through +-0
    ib = np.where(ib < 0, -(ib & 0x7FFFFFFF), ib)
    d = np.where(both_nan, 0, np.abs(ia - ib))
    return int(d.max()) if d.size else 0


def compare(model: bytes, inputs: Sequence[np.ndarray], max_ulp: int = 0) -> tuple[Any, Any]:
    """Run both; assert equality (integers) or an ulp bound (float32). Returns (ours, tflm)."""
    ours = run_kernels(model, inputs)
    theirs = tflm_run(model, inputs)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert o.dtype == t.dtype, (o.dtype, t.dtype)
        assert o.shape == t.shape, (o.shape, t.shape)
        if o.dtype == np.float32:
            assert ulp_diff(o, t) <= max_ulp, (ulp_diff(o, t), o, t)
        else:
            if not np.array_equal(o, t):
                bad = np.nonzero(o != t)
                raise AssertionError(f"{int(np.count_nonzero(o != t))} of {o.size} differ; first "
                                     f"at {bad}: ours {o[bad][:8]} tflm {t[bad][:8]} "
                                     f"inputs {[np.asarray(i)[bad][:8] for i in inputs[:1]]}")
    return ours, theirs


def compare_allocations(model: bytes) -> None:
    """tinyarena's emulated arena (head, tail) equals what the wheel's recording allocator says."""
    from tflm_oracle import tflm_allocations
    from tinyarena.arena.allocator import allocate_model
    from tinyarena.model import read_model

    ours = allocate_model(read_model(model))
    theirs = tflm_allocations(model)
    assert (ours.head, ours.tail) == (theirs.head, theirs.tail), theirs.text
