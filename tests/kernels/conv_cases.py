"""Random single-op models for the convolution-family kernel tests, run in the wheel and here.

Each case builds a one-operator model with the builder, feeds the same random inputs to the
live TFLM wheel (``tflm_run``) and to tinyarena's kernels (``run_kernels``), and compares:
quantized outputs with ``np.array_equal``, float32 outputs by their distance in float32 ulps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from kernel_runner import run_kernels
from tflm_oracle import tflm_run
from tinyarena.builder import ModelBuilder

ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")


def ulp_distance(a: np.ndarray, b: np.ndarray) -> int:
    """Largest distance between two float32 arrays counted in representable float32 steps."""
    ia = np.asarray(a, np.float32).view(np.int32).astype(np.int64)
    ib = np.asarray(b, np.float32).view(np.int32).astype(np.int64)
    # map the sign-magnitude float ordering onto a monotonic integer line
    ia = np.where(ia < 0, -(ia & 0x7FFFFFFF), ia)
    ib = np.where(ib < 0, -(ib & 0x7FFFFFFF), ib)
    return int(np.max(np.abs(ia - ib), initial=0))


@dataclass
class QSpec:
    """Random quantization for one activation type."""

    dtype: str
    in_scale: float
    in_zp: int
    out_scale: float
    out_zp: int


def random_qspec(dtype: str, rng: np.random.Generator) -> QSpec:
    if dtype == "int8":
        return QSpec(dtype, float(rng.uniform(0.01, 0.1)), int(rng.integers(-20, 20)),
                     float(rng.uniform(0.05, 0.5)), int(rng.integers(-20, 20)))
    if dtype == "int16":  # 16x8: symmetric activations
        return QSpec(dtype, float(rng.uniform(1e-4, 1e-3)), 0, float(rng.uniform(1e-3, 1e-2)), 0)
    return QSpec(dtype, 0.0, 0, 0.0, 0)


def random_input(shape: Sequence[int], dtype: str, rng: np.random.Generator) -> np.ndarray:
    if dtype == "float32":
        return rng.uniform(-2.0, 2.0, shape).astype(np.float32)
    info = np.iinfo(np.dtype(dtype))
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


def random_weights(shape: Sequence[int], dtype: str, rng: np.random.Generator) -> np.ndarray:
    if dtype == "float32":
        return rng.uniform(-1.0, 1.0, shape).astype(np.float32)
    return rng.integers(-127, 128, shape).astype(np.int8)


@dataclass
class Built:
    model: bytes
    inputs: list[np.ndarray] = field(default_factory=list)


def add_activation(b: ModelBuilder, name: str, shape: Sequence[int], q: QSpec,
                   output: bool, is_input: bool = False) -> int:
    kwargs: dict[str, Any] = {}
    if q.dtype != "float32":
        kwargs = ({"scale": q.out_scale, "zero_point": q.out_zp} if output
                  else {"scale": q.in_scale, "zero_point": q.in_zp})
    if is_input:
        return b.add_input(name, tuple(shape), q.dtype, **kwargs)
    return b.add_tensor(name, tuple(shape), q.dtype, **kwargs)


def add_filter_and_bias(b: ModelBuilder, q: QSpec, wshape: Sequence[int], channels: int,
                        qdim: int, per_channel: bool, with_bias: bool, bias_dtype: str,
                        rng: np.random.Generator) -> tuple[int, int | None]:
    """Filter (int8 for quantized kinds) and optional bias whose scale is in*filter scale."""
    wdtype = "float32" if q.dtype == "float32" else "int8"
    w = random_weights(wshape, wdtype, rng)
    if q.dtype == "float32":
        wt = b.add_constant("w", w)
        bt = b.add_constant("b", rng.uniform(-1, 1, channels).astype(np.float32)) \
            if with_bias else None
        return wt, bt
    n = channels if per_channel else 1
    wscale = rng.uniform(0.002, 0.02, n).astype(np.float32)
    wt = b.add_constant("w", w, scale=wscale, zero_point=np.zeros(n, np.int64),
                        quantized_dimension=qdim)
    if not with_bias:
        return wt, None
    limit = 3000 if q.dtype == "int8" else 200000
    bias = rng.integers(-limit, limit, channels).astype(bias_dtype)
    bscale = (np.float32(q.in_scale) * wscale).astype(np.float32)
    bt = b.add_constant("b", bias, scale=bscale, zero_point=np.zeros(n, np.int64))
    return wt, bt


def compare(model: bytes, inputs: Sequence[np.ndarray], dtype: str, max_ulps: int = 0) -> int:
    """Run both; assert equality (quantized) or an ulp bound (float32). Returns the ulps seen."""
    expected = tflm_run(model, inputs)
    got = run_kernels(model, inputs)
    assert len(expected) == len(got)
    worst = 0
    for e, g in zip(expected, got):
        assert e.shape == g.shape and e.dtype == g.dtype, (e.shape, g.shape, e.dtype, g.dtype)
        if dtype == "float32":
            d = ulp_distance(e, g)
            worst = max(worst, d)
            assert d <= max_ulps, f"float32 outputs differ by {d} ulps (bound {max_ulps})"
        else:
            if not np.array_equal(e, g):
                diff = np.abs(e.astype(np.int64) - g.astype(np.int64))
                raise AssertionError(f"quantized outputs differ at {int((diff > 0).sum())} of "
                                     f"{diff.size} places (max {int(diff.max())})")
    return worst


def compare_each(model: bytes, inputs: Sequence[np.ndarray], dtype: str, desc: str,
                 max_ulps: int = 0) -> None:
    """:func:`compare` on each input alone; a failure names the case (``desc``) it came from."""
    for x in inputs:
        try:
            compare(model, [x], dtype, max_ulps=max_ulps)
        except AssertionError as exc:
            raise AssertionError(f"{desc}: {exc}") from None
