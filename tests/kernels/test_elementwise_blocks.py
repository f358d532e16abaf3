"""ADD/SUB/MUL's allocation-free invoke path: broadcast blocks, lookup tables, in-place fixed point.

The invoke path (``plan_binary`` + ``run_binary``) must give the same bits as the element-wise
reference functions (``quantized_add_sub``, ``quantized_mul``, ``float_binary``,
``int32_binary``), which tests/kernels/test_add.py etc. hold against the wheel; here tiny chunk
sizes force many blocks on small shapes. Large shapes (several blocks at the real chunk size)
are compared against the live wheel directly, and tracemalloc shows the invoke path allocates
only a bounded amount whatever the tensor size.
"""

from __future__ import annotations

import tracemalloc
import zlib
from dataclasses import dataclass, field

import numpy as np
import pytest

from binary_op_cases import Case, build, random_input, random_quant, random_shapes
from kernel_runner import run_kernels
from tflm_oracle import tflm_run
from tinyarena.kernels import _elementwise as ew
from tinyarena.kernels import _fixedpoint as fp
from tinyarena.kernels._quant import (
    QuantParams,
    rounding_divide_by_pot,
    saturating_rounding_doubling_high_mul,
    wrap_int32,
)
from tinyarena.kernels.base import initial_array
from tinyarena.model.types import Tensor, TensorType


@dataclass
class _Ctx:
    workspaces: list[np.ndarray] = field(default_factory=list)

    def request_workspace(self, shape: tuple[int, ...], dtype: object, *,
                          persistent: bool = True, initial: object = None) -> int:
        if initial is not None:  # constants such as the int8 tables, made now
            self.workspaces.append(initial_array(shape, dtype, initial))
            return len(self.workspaces) - 1
        array = np.zeros(shape, dtype=dtype)
        if not persistent:  # scratch starts undefined: garbage catches a read before a write
            array.reshape(-1).view(np.uint8)[...] = 0xA5
        self.workspaces.append(array)
        return len(self.workspaces) - 1


def _table(ctx: _Ctx, run: ew.BinaryRun) -> np.ndarray | None:
    return ctx.workspaces[run.table_workspace] if run.table_workspace >= 0 else None


def _tensor(shape: tuple[int, ...]) -> Tensor:
    return Tensor(index=0, name="t", type=TensorType.INT8, shape=shape, shape_signature=shape,
                  buffer=0, data=None, is_variable=False, quantization=None)


def _run(ufunc: np.ufunc, x1: np.ndarray, x2: np.ndarray, dtype: str, chunk: int,
         **kw: object) -> np.ndarray:
    ctx = _Ctx()
    run = ew.plan_binary(ctx, "T", ufunc, _tensor(x1.shape), _tensor(x2.shape), np.dtype(dtype),
                         chunk=chunk, **kw)
    out = np.full(np.broadcast_shapes(x1.shape, x2.shape), 99, dtype=dtype)
    ws = ctx.workspaces[run.workspace] if run.workspace >= 0 else None
    ew.run_binary(run, x1, x2, out, ws, _table(ctx, run))
    return out


def test_plan_covers_every_output_element_once() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        s1, s2 = random_shapes(rng)
        chunk = int(rng.integers(1, 20))
        plan = ew.broadcast_plan(s1, s2, chunk)
        seen = np.zeros(plan.shape_out, dtype=np.int64)
        for oi, _, _, shape, n in plan.blocks:
            assert n <= chunk and seen[oi].shape == shape and seen[oi].size == n
            seen[oi] += 1
        assert np.all(seen == 1)
        assert int(np.prod(plan.shape_out)) == int(np.prod(np.broadcast_shapes(s1, s2)))


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
@pytest.mark.parametrize("dtype", ["int8", "int16", "float32", "int32"])
def test_blocks_match_reference_functions(op: str, dtype: str) -> None:
    """Many small chunks give the same bits as the unchunked reference arithmetic."""
    ufunc = {"ADD": np.add, "SUB": np.subtract, "MUL": np.multiply}[op]
    # str hashes change per process (PYTHONHASHSEED): derive a reproducible seed instead.
    rng = np.random.default_rng(zlib.crc32(f"{op}/{dtype}".encode()))
    for _ in range(25):
        s1, s2 = random_shapes(rng)
        x1, x2 = random_input(s1, dtype, rng), random_input(s2, dtype, rng)
        want = np.zeros(np.broadcast_shapes(s1, s2), dtype=dtype)
        chunk = int(rng.integers(1, 40))
        if dtype == "float32":
            lo, hi = (-1.0, 1.0) if rng.random() < 0.5 else (-3.4e38, 3.4e38)
            ew.float_binary(ufunc, x1, x2, lo, hi, want)
            got = _run(ufunc, x1, x2, dtype, chunk, float_range=(lo, hi))
        elif dtype == "int32":
            lo32, hi32 = (0, 6) if rng.random() < 0.5 else (-2**31, 2**31 - 1)
            ew.int32_binary(ufunc, x1, x2, lo32, hi32, want)
            got = _run(ufunc, x1, x2, dtype, chunk, int_range=(lo32, hi32))
        else:
            q = [QuantParams(s, z) for s, z in random_quant(op, rng, dtype)]
            act = ("NONE", "RELU", "RELU6")[int(rng.integers(0, 3))]
            if op == "MUL":
                params = ew.mul_params(q[0], q[1], q[2], np.dtype(dtype), act)
                ew.quantized_mul(x1, x2, params, want)
            else:
                params = ew.add_sub_params(q[0], q[1], q[2], np.dtype(dtype), act,
                                           subtract=op == "SUB")
                ew.quantized_add_sub(x1, x2, params, want, subtract=op == "SUB")
            got = _run(ufunc, x1, x2, dtype, chunk, params=params)
        assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), (op, dtype, s1, s2)


def test_in_place_fixed_point_matches_gemmlowp_forms() -> None:
    """The floor-shift forms of SRDHM and RoundingDivideByPOT used in place, on edge values."""
    rng = np.random.default_rng(5)
    edges = np.array([0, 1, -1, 2**31 - 1, -2**31, 2**30, -2**30, 12345, -12345], np.int64)
    x = np.concatenate([edges, rng.integers(-2**31, 2**31, size=20000)])
    for m in (0, 1, 2**30, 2**31 - 1, 1518500250, int(rng.integers(1, 2**31))):
        for right in (0, 1, 2, 7, 20, 31):
            want = rounding_divide_by_pot(saturating_rounding_doubling_high_mul(x, m), right)
            got = x.copy()
            fp.srdhm_rdbp_inplace(got, m, right, np.empty_like(got))
            assert np.array_equal(got, want), (m, right)
    y = rng.integers(-2**40, 2**40, size=1000)
    got = y.copy()
    fp.wrap_int32_inplace(got)
    assert np.array_equal(got, wrap_int32(y))


_LARGE = [
    ("ADD", "int8", (1, 40, 40, 16), (1, 40, 40, 16)),
    ("ADD", "int8", (2, 30, 50, 7), (30, 1, 7)),
    ("SUB", "int8", (3, 100, 64), (3, 1, 64)),
    ("MUL", "int8", (5, 3000), (5, 1)),
    ("ADD", "int16", (1, 60, 60, 4), (4,)),
    ("SUB", "int16", (9000,), (9000,)),
    ("MUL", "int16", (2, 100, 90), (100, 1)),
    ("ADD", "float32", (3, 80, 50), (1, 50)),
    ("MUL", "int32", (20, 1000), (1000,)),
]


@pytest.mark.oracle
@pytest.mark.parametrize("op,dtype,s1,s2", _LARGE)
def test_large_broadcasts_match_tflm(op: str, dtype: str, s1: tuple[int, ...],
                                     s2: tuple[int, ...]) -> None:
    """Shapes of many real-size blocks, against the live wheel."""
    rng = np.random.default_rng(len(s1) * 1000 + sum(s1))
    quant = random_quant(op, rng, dtype) if dtype in ("int8", "int16") else ()
    case = Case(op, dtype, s1, s2, "RELU6" if dtype != "int32" else "NONE", quant)
    model = build(case)
    inputs = [random_input(s1, dtype, rng), random_input(s2, dtype, rng)]
    (want,) = tflm_run(model, inputs)
    (got,) = run_kernels(model, inputs)
    assert got.shape == want.shape and np.array_equal(got, want)


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32", "int32"])
def test_invoke_path_allocation_is_bounded(dtype: str) -> None:
    """A 1M-element broadcast ADD allocates a few KB at most (views and block bookkeeping)."""
    rng = np.random.default_rng(1)
    s1, s2 = (4, 500, 500), (500, 1)
    x1, x2 = random_input(s1, dtype, rng), random_input(s2, dtype, rng)
    ctx = _Ctx()
    kw: dict[str, object] = {}
    if dtype in ("int8", "int16"):
        q = [QuantParams(s, z) for s, z in random_quant("ADD", rng, dtype)]
        kw["params"] = ew.add_sub_params(q[0], q[1], q[2], np.dtype(dtype), "NONE",
                                         subtract=False)
    elif dtype == "float32":
        kw["float_range"] = (-1.0, 1.0)
    run = ew.plan_binary(ctx, "ADD", np.add, _tensor(s1), _tensor(s2), np.dtype(dtype), **kw)
    out = np.zeros(s1, dtype=dtype)
    ws = ctx.workspaces[run.workspace] if run.workspace >= 0 else None
    table = _table(ctx, run)
    ew.run_binary(run, x1, x2, out, ws, table)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        ew.run_binary(run, x1, x2, out, ws, table)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024, peak
