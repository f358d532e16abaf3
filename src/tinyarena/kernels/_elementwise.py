"""Arithmetic shared by the binary element-wise kernels ADD, SUB and MUL, bit-exact with TFLM.

TFLM's reference kernels broadcast with ``BroadcastBinaryOpSimple`` (numpy rules, up to 8 dims in
the reference loop, 6 in the kernels' names), so numpy broadcasting gives the same element
pairing. What needs care is the arithmetic per element:

* quantized ADD/SUB (int8 and int16 alike in TFLM's micro kernels): each input is offset,
  shifted left by 20 (int8) or 15 (int16), scaled by its own Q31 multiplier, summed, then
  scaled by the output multiplier (``AddFunc`` / ``BroadcastQuantSubSlow``). Because the
  per-input part depends on one input only, it is computed on each input's own (unbroadcast)
  shape and only the sum is broadcast.
* quantized MUL: (x1 - zp1) * (x2 - zp2) scaled by one multiplier (``MulElementwise``).
* float32: one IEEE float32 operation per element then a clamp, which numpy reproduces
  exactly (the result is rounded once either way).
* int32: wrapping arithmetic, clamped by the activation range (SUB, MUL) or not at all (ADD).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Iterator

import numpy as np
from numpy.typing import DTypeLike

from tinyarena.errors import KernelError
from tinyarena.kernels._ieee import c_float_env, c_min_max_inplace
from tinyarena.kernels._fixedpoint import (
    multiply_by_quantized_multiplier_inplace,
    srdhm_rdbp_inplace,
    wrap_int32_inplace,
)
from tinyarena.kernels._quant import (
    INT32_MAX,
    INT32_MIN,
    QuantParams,
    tensor_quant,
    calculate_activation_range_float,
    calculate_activation_range_int,
    calculate_activation_range_quantized,
    multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_smaller_than_one_exp,
    quantize_multiplier,
    quantize_multiplier_smaller_than_one_exp,
    wrap_int32,
)
from tinyarena.kernels._tflm_version import WHEEL, scale_arithmetic
from tinyarena.kernels import native
from tinyarena.kernels.base import EvalContext, InitContext, PrepareContext, Registration, Step
from tinyarena.model.types import NUMPY_DTYPES, Operator, Tensor, TensorType

# Largest rank TFLM's BroadcastBinaryOpSimple handles (kMaxRank in broadcast_loop.h).
MAX_BROADCAST_RANK = 8


def broadcast_output_shape(op_name: str, shape1: tuple[int, ...], shape2: tuple[int, ...],
                           output: tuple[int, ...]) -> None:
    """Check that the two input shapes broadcast to the output's shape as TFLM requires."""
    rank = max(len(shape1), len(shape2), len(output))
    if rank > MAX_BROADCAST_RANK:
        raise KernelError(f"{op_name}: rank {rank} exceeds TFLM's broadcast limit of "
                          f"{MAX_BROADCAST_RANK}; reshape the tensors to fewer dimensions")
    try:
        shape = np.broadcast_shapes(shape1, shape2)
    except ValueError:
        raise KernelError(f"{op_name}: input shapes {shape1} and {shape2} do not broadcast; "
                          "make every dimension equal or 1") from None
    if int(np.prod(shape)) != int(np.prod(output)):
        raise KernelError(f"{op_name}: inputs broadcast to {tuple(shape)} but the output has shape "
                          f"{output}; fix the output tensor's shape")


# ----------------------------------------------------------------------------------------------
# Quantized ADD / SUB (add_common.cc CalculateOpDataAdd, sub_common.cc CalculateOpDataSub)
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AddSubParams:
    """TFLM's ArithmeticParams for the general quantized add/sub path."""

    left_shift: int
    input1_offset: int
    input1_multiplier: int
    input1_shift: int
    input2_offset: int
    input2_multiplier: int
    input2_shift: int
    output_offset: int
    output_multiplier: int
    output_shift: int
    act_min: int
    act_max: int


def add_sub_params(in1: QuantParams, in2: QuantParams, out: QuantParams, dtype: np.dtype,
                   activation: str, target: Any = None, *, subtract: bool) -> AddSubParams:
    """CalculateOpDataAdd / CalculateOpDataSub for int8 and int16 outputs.

    ADD computes the doubled maximum input scale and the real multipliers in double in every
    TFLM version. SUB does too in the wheel's (8f6596d), but TFLM 90b983c2's sub_common.cc
    divides the float32 scales in float32 before widening: SUB follows the target's version
    (``_tflm_version``).
    """
    sa = scale_arithmetic(target) if subtract else WHEEL
    left_shift = 15 if np.dtype(dtype) == np.int16 else 20
    s1, s2, so = np.float32(in1.scale), np.float32(in2.scale), np.float32(out.scale)
    if so == 0 or max(s1, s2) == 0:
        raise KernelError("quantized ADD/SUB needs non-zero input and output scales; "
                          "quantize the tensors")
    twice_max = 2.0 * float(max(s1, s2))  # exact in float32 and double alike
    real1 = sa.quotient(float(s1), twice_max)
    real2 = sa.quotient(float(s2), twice_max)
    real_out = sa.quotient(twice_max, float(1 << left_shift) * float(so))  # exact product
    m1, sh1 = quantize_multiplier_smaller_than_one_exp(real1) if real1 < 1.0 else (0, 0)
    m2, sh2 = quantize_multiplier_smaller_than_one_exp(real2) if real2 < 1.0 else (0, 0)
    if real1 >= 1.0 or real2 >= 1.0:  # only for a zero scale on the other input; TFLM asserts
        raise KernelError("quantized ADD/SUB input scale ratio out of range; check the scales")
    mo, sho = quantize_multiplier_smaller_than_one_exp(real_out)
    act_min, act_max = calculate_activation_range_quantized(activation, out.scale,
                                                            out.zero_point, dtype)
    return AddSubParams(left_shift, -in1.zero_point, m1, sh1, -in2.zero_point, m2, sh2,
                        out.zero_point, mo, sho, act_min, act_max)


def _scaled_input(x: np.ndarray, offset: int, left_shift: int, multiplier: int,
                  shift: int) -> np.ndarray:
    """One input's contribution in AddFunc: ((x + offset) << left_shift) scaled (int64)."""
    shifted = (x.astype(np.int64) + offset) << left_shift
    return multiply_by_quantized_multiplier_smaller_than_one_exp(shifted, multiplier, shift)


def quantized_add_sub(x1: np.ndarray, x2: np.ndarray, p: AddSubParams, out: np.ndarray, *,
                      subtract: bool) -> None:
    """reference_integer_ops AddFunc / BroadcastQuantSubSlow, vectorised, written into ``out``."""
    a = _scaled_input(x1, p.input1_offset, p.left_shift, p.input1_multiplier, p.input1_shift)
    b = _scaled_input(x2, p.input2_offset, p.left_shift, p.input2_multiplier, p.input2_shift)
    raw = a - b if subtract else a + b
    raw = raw.reshape(np.broadcast_shapes(a.shape, b.shape))
    res = multiply_by_quantized_multiplier_smaller_than_one_exp(
        wrap_int32(raw), p.output_multiplier, p.output_shift)
    res += p.output_offset
    np.clip(res, p.act_min, p.act_max, out=res)
    out[...] = res.reshape(out.shape)


# ----------------------------------------------------------------------------------------------
# Quantized MUL (mul_common.cc CalculateOpDataMul, integer_ops/mul.h MulElementwise)
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MulParams:
    input1_offset: int
    input2_offset: int
    output_offset: int
    output_multiplier: int
    output_shift: int
    act_min: int
    act_max: int


def mul_params(in1: QuantParams, in2: QuantParams, out: QuantParams, dtype: np.dtype,
               activation: str, target: Any = None) -> MulParams:
    """CalculateOpDataMul: one multiplier in1_scale * in2_scale / out_scale, in double."""
    if out.scale == 0:
        raise KernelError("quantized MUL needs a non-zero output scale; quantize the output")
    real = float(np.float32(in1.scale)) * float(np.float32(in2.scale)) / float(
        np.float32(out.scale))
    m, s = quantize_multiplier(real)
    act_min, act_max = calculate_activation_range_quantized(activation, out.scale,
                                                            out.zero_point, dtype)
    if np.dtype(dtype) == np.int16 and (in1.zero_point or in2.zero_point or out.zero_point):
        raise KernelError("int16 MUL needs zero points of 0 on both inputs and the output")
    return MulParams(-in1.zero_point, -in2.zero_point, out.zero_point, m, s, act_min, act_max)


def quantized_mul(x1: np.ndarray, x2: np.ndarray, p: MulParams, out: np.ndarray) -> None:
    """MulElementwise / BroadcastMul6DSlow: ((x1 + o1) * (x2 + o2)) rescaled, offset, clamped."""
    a = x1.astype(np.int64) + p.input1_offset
    b = x2.astype(np.int64) + p.input2_offset
    prod = wrap_int32(a * b)
    res = multiply_by_quantized_multiplier(prod, p.output_multiplier, p.output_shift)
    res += p.output_offset
    np.clip(res, p.act_min, p.act_max, out=res)
    out[...] = res.reshape(out.shape)


# ----------------------------------------------------------------------------------------------
# float32 and int32
# ----------------------------------------------------------------------------------------------



def float_binary(ufunc: np.ufunc, x1: np.ndarray, x2: np.ndarray, act_min: float,
                 act_max: float, out: np.ndarray) -> None:
    """One float32 operation per element, then ActivationFunctionWithMinMax (max, then min)."""
    res = ufunc(x1, x2, dtype=np.float32)
    c_min_max_inplace(res, np.float32(act_min), np.float32(act_max))
    out[...] = res.reshape(out.shape)


def int32_binary(ufunc: np.ufunc, x1: np.ndarray, x2: np.ndarray, act_min: int, act_max: int,
                 out: np.ndarray) -> None:
    """Wrapping int32 arithmetic (computed in int64, wrapped), then the activation clamp."""
    res = wrap_int32(ufunc(x1.astype(np.int64), x2.astype(np.int64)))
    np.clip(res, act_min, act_max, out=res)
    out[...] = res.reshape(out.shape)


# ----------------------------------------------------------------------------------------------
# Invoke-time execution without allocation: broadcast plans, chunked blocks, lookup tables
# ----------------------------------------------------------------------------------------------

# Elements per block of the chunked integer paths: bounds the workspace (3 int64 rows of this
# length per op) while keeping numpy's per-call overhead small against the per-element work.
CHUNK = 8192

Index = tuple[int | slice, ...]
Block = tuple[Index, Index, Index, tuple[int, ...], int]


@dataclass(frozen=True)
class BroadcastPlan:
    """The broadcast of one binary op, computed once at prepare.

    Adjacent dimensions with the same broadcast pattern are merged (a plain same-shape op
    becomes 1-D), so ``shape1``/``shape2``/``shape_out`` are the collapsed views of the inputs
    and the output (size 1 where an input is broadcast). ``blocks`` cut the output into pieces
    of at most ``chunk`` elements: (output index, input1 index, input2 index, block shape, block
    size), so that integer paths can work through a fixed workspace of ``chunk`` elements.
    """

    shape1: tuple[int, ...]
    shape2: tuple[int, ...]
    shape_out: tuple[int, ...]
    blocks: tuple[Block, ...]
    chunk: int


def broadcast_plan(shape1: tuple[int, ...], shape2: tuple[int, ...],
                   chunk: int = CHUNK) -> BroadcastPlan:
    """Collapse the broadcast of ``shape1`` with ``shape2`` and cut it into bounded blocks.

    The block order follows the output's flat (C) order, as TFLM's BroadcastBinaryOpSimple
    walks it; each block is a slab along one axis with every later axis whole.
    """
    full = tuple(int(d) for d in np.broadcast_shapes(shape1, shape2))
    rank = len(full)
    p1 = (1,) * (rank - len(shape1)) + tuple(int(d) for d in shape1)
    p2 = (1,) * (rank - len(shape2)) + tuple(int(d) for d in shape2)
    dims: list[list[int | bool]] = []  # [size, input1 full, input2 full]
    for d, a, b in zip(full, p1, p2):
        if d == 1:
            continue
        f1, f2 = a == d, b == d
        if dims and dims[-1][1] == f1 and dims[-1][2] == f2:
            dims[-1][0] = int(dims[-1][0]) * d
        else:
            dims.append([d, f1, f2])
    if not dims:
        dims = [[1, True, True]]
    sizes = tuple(int(d[0]) for d in dims)
    full1 = tuple(bool(d[1]) for d in dims)
    full2 = tuple(bool(d[2]) for d in dims)
    shape_c1 = tuple(s if f else 1 for s, f in zip(sizes, full1))
    shape_c2 = tuple(s if f else 1 for s, f in zip(sizes, full2))
    inner = [int(np.prod(sizes[k + 1:], dtype=np.int64)) for k in range(len(sizes))]
    axis = next(k for k in range(len(sizes)) if inner[k] <= chunk)
    step = max(1, min(sizes[axis], chunk // inner[axis]))
    blocks: list[Block] = []
    for prefix in np.ndindex(*sizes[:axis]):
        prefix = tuple(int(i) for i in prefix)
        i1 = tuple(i if f else 0 for i, f in zip(prefix, full1))
        i2 = tuple(i if f else 0 for i, f in zip(prefix, full2))
        for start in range(0, sizes[axis], step):
            stop = min(start + step, sizes[axis])
            sl = slice(start, stop)
            shape = (stop - start,) + sizes[axis + 1:]
            blocks.append((prefix + (sl,), i1 + (sl if full1[axis] else slice(0, 1),),
                           i2 + (sl if full2[axis] else slice(0, 1),), shape,
                           (stop - start) * inner[axis]))
    used = max(b[4] for b in blocks)
    return BroadcastPlan(shape_c1, shape_c2, sizes, tuple(blocks), used)


def _uint8_pairs() -> tuple[np.ndarray, np.ndarray]:
    """Every (x1, x2) int8 pair, ordered so that row/column = the values' uint8 bit patterns."""
    values = np.arange(256, dtype=np.uint8).view(np.int8)
    return values.reshape(256, 1), values.reshape(1, 256)


def add_sub_table(p: AddSubParams, *, subtract: bool) -> np.ndarray:
    """The int8 ADD/SUB result for all 65536 input pairs, indexed by (uint8(x1) << 8) | uint8(x2).

    Built with :func:`quantized_add_sub` (AddFunc, element by element), so a lookup gives the
    same bits as the arithmetic; an invoke then needs four passes per element and no temporaries.
    """
    a, b = _uint8_pairs()
    table = np.empty((256, 256), dtype=np.int8)
    quantized_add_sub(a, b, p, table, subtract=subtract)
    return table.reshape(-1)


def mul_table(p: MulParams) -> np.ndarray:
    """The int8 MUL result for all 65536 input pairs (see :func:`add_sub_table`)."""
    a, b = _uint8_pairs()
    table = np.empty((256, 256), dtype=np.int8)
    quantized_mul(a, b, p, table)
    return table.reshape(-1)


@dataclass(frozen=True)
class BinaryRun:
    """Everything an invoke of ADD/SUB/MUL needs, fixed at prepare.

    ``kind``: "float" and "int32" write the ufunc straight into the output view (block by block
    when an input is broadcast along an inner axis: numpy would otherwise buffer up to 8192
    elements per call, so the broadcast input is first expanded into the ``workspace``);
    "table" (int8) looks each pair up in ``table``; "addsub16"/"mul16" (int16) run the
    fixed-point arithmetic block by block in the ``workspace`` (int64, 3 x ``plan.chunk``).
    """

    kind: str
    ufunc: np.ufunc
    plan: BroadcastPlan
    lo: np.generic | None = None
    hi: np.generic | None = None
    clamp: bool = False
    table: np.ndarray | None = None
    params: AddSubParams | MulParams | None = None
    wrap: bool = False
    workspace: int = -1
    # int8: the table as a workspace made by the interpreter (sizing never builds it); eval
    # passes it to run_binary, which then ignores ``table``
    table_workspace: int = -1
    # float ADD/MUL: where both inputs are NaN, input2's comes out (see second_nan_wins)
    second_nan: bool = False


def second_nan_wins(op_name: str, shape1: tuple[int, ...], shape2: tuple[int, ...]) -> bool:
    """Whether the wheel's float ADD/MUL returns input2's NaN (quieted) where both inputs are
    NaN. Both operations are commutative bit for bit except for that choice, which x86 makes
    by operand order and GCC's code for TFLM's loops fixes per loop. Measured on the wheel
    (x86-64), uniform over sizes 1-360 and ranks 1-4 (tests/kernels/test_float_specials.py):
    without broadcasting ADD keeps input1's NaN and MUL input2's; with broadcasting, input1's
    when input2 is broadcast along a non-trivial innermost axis, else input2's. SUB, DIV and
    SQUARED_DIFFERENCE (not commutative) keep input1's. numpy's own choice for ADD/MUL
    varies with its SIMD loop (a long array plus a one-element one gives the second's), so
    ``run_binary`` sets those positions explicitly (:func:`_settle_nan_pairs`)."""
    if op_name not in ("ADD", "MUL"):
        return False
    if tuple(shape1) == tuple(shape2):
        return op_name == "MUL"
    full = np.broadcast_shapes(tuple(shape1), tuple(shape2))
    inner = int(full[-1]) if full else 1
    inner2 = int(shape2[-1]) if len(shape2) else 1
    return not (inner > 1 and inner2 == 1)


def _value_bounds(dtype: np.dtype, offset: int) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min) + offset, int(info.max) + offset


def plan_binary(ctx: PrepareContext, op_name: str, ufunc: np.ufunc, in1: Tensor, in2: Tensor,
                out_type: DTypeLike, *, float_range: tuple[float, float] | None = None,
                int_range: tuple[int, int] | None = None,
                params: AddSubParams | MulParams | None = None,
                chunk: int = CHUNK) -> BinaryRun:
    """Prepare-time half of ADD/SUB/MUL: the broadcast plan, tables and workspace request."""
    dtype = np.dtype(out_type)
    plan = broadcast_plan(in1.shape, in2.shape, chunk)
    if dtype == np.float32 or dtype == np.int32:
        # One collapsed axis: each input is whole or a single value, and numpy runs the ufunc
        # over the views without buffering; otherwise blocks go through a workspace.
        # scratch: every block copies its expanded inputs in before the ufunc reads them
        ws = -1 if len(plan.shape_out) == 1 else ctx.request_workspace((2, plan.chunk), dtype,
                                                                       persistent=False)
        if dtype == np.float32:
            if float_range is None:
                raise KernelError(f"{op_name}: the float32 path needs its activation range")
            lo, hi = np.float32(float_range[0]), np.float32(float_range[1])
            return BinaryRun("float", ufunc, plan, lo, hi, True, workspace=ws)
        lo32, hi32 = int_range if int_range is not None else (INT32_MIN, INT32_MAX)
        return BinaryRun("int32", ufunc, plan, np.int32(lo32), np.int32(hi32),
                         (lo32, hi32) != (INT32_MIN, INT32_MAX), workspace=ws)
    subtract = ufunc is np.subtract
    if dtype == np.int8:
        make: Callable[[], np.ndarray]
        if isinstance(params, MulParams):
            make = partial(mul_table, params)
        elif isinstance(params, AddSubParams):
            make = partial(add_sub_table, params, subtract=subtract)
        else:
            raise KernelError(f"{op_name}: the int8 path needs its quantization parameters")
        handle = ctx.request_workspace((2, plan.chunk), np.intp,
                                       persistent=False)  # each block writes, then reads
        table_ws = int(ctx.request_workspace((1 << 16,), np.int8, initial=make))
        return BinaryRun("table", ufunc, plan, params=params, workspace=handle,
                         table_workspace=table_ws)
    if dtype != np.int16:
        raise KernelError(f"{op_name}: no quantized path for {dtype.name}")
    if isinstance(params, MulParams):
        lo1, hi1 = _value_bounds(dtype, params.input1_offset)
        lo2, hi2 = _value_bounds(dtype, params.input2_offset)
        corners = [lo1 * lo2, lo1 * hi2, hi1 * lo2, hi1 * hi2]
        wrap = min(corners) < INT32_MIN or max(corners) > INT32_MAX
        kind = "mul16"
    elif isinstance(params, AddSubParams):
        wrap = True  # the scaled inputs may sum past int32 at the extremes of int16
        kind = "addsub16"
    else:
        raise KernelError(f"{op_name}: the int16 path needs its quantization parameters")
    handle = ctx.request_workspace((3, plan.chunk), np.int64,
                                   persistent=False)  # each block writes, then reads
    return BinaryRun(kind, ufunc, plan, params=params, wrap=wrap, workspace=handle)


def run_binary(run: BinaryRun, x1: np.ndarray, x2: np.ndarray, out: np.ndarray,
               workspace: np.ndarray | None, table: np.ndarray | None = None) -> None:
    """Invoke-time half of ADD/SUB/MUL: results written into ``out``, nothing allocated.

    float32 and int32 are one ufunc into the output view (numpy's int32 arithmetic wraps as
    TFLM's does) plus the activation clamp; int8 and int16 go block by block through the
    workspace made at allocation.
    """
    plan = run.plan
    a = x1.reshape(plan.shape1)
    b = x2.reshape(plan.shape2)
    o = out.reshape(plan.shape_out)
    kind = run.kind
    if kind == "float" or kind == "int32":
        if workspace is None:
            run.ufunc(a, b, out=o)
        else:
            _run_expanded(run.ufunc, a, b, o, plan.blocks, workspace)
        if kind == "float" and (run.ufunc is np.add or run.ufunc is np.multiply):
            _settle_nan_pairs(a, b, o, run.second_nan, plan.blocks)
        if run.clamp:
            if run.lo is None or run.hi is None:
                raise KernelError("internal error: a clamped binary run has no bounds")
            c_min_max_inplace(o, run.lo, run.hi)
        return
    if workspace is None:
        raise KernelError(f"internal error: the {kind} path of a binary op needs its workspace")
    if kind == "table":
        table = run.table if table is None else table
        if table is None:
            raise KernelError("internal error: the int8 binary run has no table")
        _run_table(table, a.view(np.uint8), b.view(np.uint8), o, plan.blocks, workspace)
    elif kind == "addsub16":
        _run_addsub16(run, a, b, o, workspace)
    else:
        _run_mul16(run, a, b, o, workspace)


def _settle_nan_pairs(a: np.ndarray, b: np.ndarray, o: np.ndarray, second: bool,
                      blocks: tuple[Block, ...]) -> None:
    """Where both operands of a float ADD/MUL are NaN, the wheel's NaN (see
    :func:`second_nan_wins`): ``b``'s if ``second`` else ``a``'s, quieted. Only an output
    holding a NaN (or infinities of both signs, which the check cannot tell from one) is
    looked at element by element, block by block (temporaries of a block's size)."""
    if not np.isnan(np.add.reduce(o, axis=None)):
        return
    for oi, i1, i2, shape, _ in blocks:
        u, v = a[i1], b[i2]
        both = np.isnan(u) & np.isnan(v)
        if not both.any():
            continue
        source = np.broadcast_to(v if second else u, shape)
        quieted = (source.view(np.uint32) | np.uint32(0x400000)).view(np.float32)
        np.copyto(o[oi], quieted, where=both)


def _run_expanded(ufunc: np.ufunc, a: np.ndarray, b: np.ndarray, o: np.ndarray,
                  blocks: tuple[Block, ...], ws: np.ndarray) -> None:
    """float32/int32 with an inner broadcast: expand broadcast inputs per block, then the ufunc."""
    for oi, i1, i2, shape, n in blocks:
        u = a[i1]
        if u.shape != shape:
            t = ws[0, :n].reshape(shape)
            np.copyto(t, u)
            u = t
        v = b[i2]
        if v.shape != shape:
            t = ws[1, :n].reshape(shape)
            np.copyto(t, v)
            v = t
        ufunc(u, v, out=o[oi])


def _run_table(table: np.ndarray, a: np.ndarray, b: np.ndarray, o: np.ndarray,
               blocks: tuple[Block, ...], ws: np.ndarray) -> None:
    """int8: out = table[(uint8(x1) << 8) | uint8(x2)], block by block."""
    take = np.take
    for oi, i1, i2, shape, n in blocks:
        idx = ws[0, :n].reshape(shape)
        low = ws[1, :n].reshape(shape)
        np.copyto(idx, a[i1])
        np.left_shift(idx, 8, out=idx)
        np.copyto(low, b[i2])
        idx += low
        take(table, idx, out=o[oi], mode="wrap")


def _int64_blocks(run: BinaryRun,
                  ws: np.ndarray) -> Iterator[tuple[Block, np.ndarray, np.ndarray, np.ndarray]]:
    """The int16 paths' blocks, each with the workspace's three int64 rows shaped like it."""
    for block in run.plan.blocks:
        shape, n = block[3], block[4]
        yield block, ws[0, :n].reshape(shape), ws[1, :n].reshape(shape), ws[2, :n].reshape(shape)


def _run_addsub16(run: BinaryRun, a: np.ndarray, b: np.ndarray, o: np.ndarray,
                  ws: np.ndarray) -> None:
    """int16 AddFunc / BroadcastQuantSubSlow on int64 blocks of the workspace."""
    p = run.params
    if not isinstance(p, AddSubParams):
        raise KernelError("internal error: the int16 ADD/SUB run lacks its AddSubParams")
    for (oi, i1, i2, _, _), s1, s2, tmp in _int64_blocks(run, ws):
        for dst, src, off, m, sh in ((s1, a[i1], p.input1_offset, p.input1_multiplier,
                                      p.input1_shift),
                                     (s2, b[i2], p.input2_offset, p.input2_multiplier,
                                      p.input2_shift)):
            np.copyto(dst, src)
            dst += off
            np.left_shift(dst, p.left_shift, out=dst)
            srdhm_rdbp_inplace(dst, m, -sh, tmp)
        run.ufunc(s1, s2, out=s1)
        _finish(run, s1, tmp, o[oi])


def _run_mul16(run: BinaryRun, a: np.ndarray, b: np.ndarray, o: np.ndarray,
               ws: np.ndarray) -> None:
    """int16 MulElementwise on int64 blocks of the workspace."""
    p = run.params
    if not isinstance(p, MulParams):
        raise KernelError("internal error: the int16 MUL run lacks its MulParams")
    for (oi, i1, i2, _, _), s1, s2, tmp in _int64_blocks(run, ws):
        np.copyto(s1, a[i1])
        s1 += p.input1_offset
        np.copyto(s2, b[i2])
        s2 += p.input2_offset
        s1 *= s2
        _finish(run, s1, tmp, o[oi])


def _finish(run: BinaryRun, acc: np.ndarray, tmp: np.ndarray, out: np.ndarray) -> None:
    """The int16 paths' common end: wrap to int32 when the plan says the raw result can leave
    it, MultiplyByQuantizedMultiplier (left shift wrapped as int32), offset, clamp, store."""
    p = run.params
    if p is None:
        raise KernelError("internal error: the int16 binary run lacks its parameters")
    if run.wrap:
        wrap_int32_inplace(acc)
    multiply_by_quantized_multiplier_inplace(acc, p.output_multiplier, p.output_shift, tmp)
    acc += p.output_offset
    np.maximum(acc, p.act_min, out=acc)
    np.minimum(acc, p.act_max, out=acc)
    np.copyto(out, acc, casting="unsafe")


# ----------------------------------------------------------------------------------------------
# The ADD / SUB / MUL kernel skeleton (Init, Prepare -> CalculateOpData*, Eval)
# ----------------------------------------------------------------------------------------------

_BINARY_TYPES = (TensorType.FLOAT32, TensorType.INT32, TensorType.INT8, TensorType.INT16)

QuantizedParamsFn = Callable[[QuantParams, QuantParams, QuantParams, np.dtype, str, Any],
                             AddSubParams | MulParams]


@dataclass(frozen=True)
class BinaryOp:
    """What tells ADD, SUB and MUL apart in TFLM's micro kernels; the rest is one skeleton.

    ``op_data``: the struct Init allocates (OpDataAdd, ...); ``builtin_data``: the parser's
    params struct; ``options``: the options class carrying the fused activation;
    ``quantized``: the CalculateOpData* arithmetic for int8/int16; ``int32_activation``: whether
    the int32 path clamps to the fused activation range (EvalAdd does not);
    ``check_int32``: the op's own TF_LITE_ENSUREs on int32 tensors, if any.
    """

    name: str
    ufunc: np.ufunc
    op_data: str
    builtin_data: str
    options: type[Any]
    quantized: QuantizedParamsFn
    int32_activation: bool = True
    check_int32: Callable[[Tensor, Tensor, Tensor], None] | None = None


@dataclass(frozen=True)
class BinaryOpData:
    """What CalculateOpDataAdd/Sub/Mul compute, plus the invoke-time plan."""

    out_type: TensorType
    quant: AddSubParams | MulParams | None = None
    run: BinaryRun | None = None  # the invoke-time plan (broadcast blocks, tables, workspace)


def binary_registration(spec: BinaryOp) -> Registration:
    """The Registration of one binary element-wise op, built from its :class:`BinaryOp`."""

    def init(ctx: InitContext, op: Operator) -> None:
        ctx.allocate_persistent(ctx.target.sizeof(spec.op_data))

    def prepare(ctx: PrepareContext, op: Operator) -> BinaryOpData:
        return _prepare_binary(spec, ctx, op)

    return Registration(spec.name, init=init, prepare=prepare, eval=_eval_binary,
                        bind=_bind_binary, builtin_data=spec.builtin_data)


def _prepare_binary(spec: BinaryOp, ctx: PrepareContext, op: Operator) -> BinaryOpData:
    """Prepare: temp tensors input1, input2, output, then CalculateOpData{Add,Sub,Mul}."""
    name = spec.name
    for index in (op.inputs[0], op.inputs[1], op.outputs[0]):
        ctx.allocate_temp_tensor(index)
    in1, in2 = ctx.tensor(op.inputs[0]), ctx.tensor(op.inputs[1])
    out = ctx.tensor(op.outputs[0])
    if in1 is None or in2 is None or out is None:
        raise KernelError(f"{name} needs two inputs and one output")
    if out.type not in _BINARY_TYPES or in1.type != out.type or in2.type != out.type:
        raise KernelError(f"{name} supports float32, int32, int8 and int16 with matching types; "
                          f"got {in1.type.name}, {in2.type.name} -> {out.type.name}")
    broadcast_output_shape(name, in1.shape, in2.shape, out.shape)
    options = op.options if isinstance(op.options, spec.options) else spec.options()
    act = options.fused_activation_function
    ufunc = spec.ufunc
    if out.type == TensorType.FLOAT32:
        lo, hi = calculate_activation_range_float(act)
        run = plan_binary(ctx, name, ufunc, in1, in2, np.float32, float_range=(lo, hi))
        run = dataclasses.replace(run, second_nan=second_nan_wins(name, tuple(in1.shape),
                                                                  tuple(in2.shape)))
        return BinaryOpData(out.type, run=run)
    if out.type == TensorType.INT32:
        if spec.check_int32 is not None:
            spec.check_int32(in1, in2, out)
        if not spec.int32_activation:
            return BinaryOpData(out.type, run=plan_binary(ctx, name, ufunc, in1, in2, np.int32))
        ilo, ihi = calculate_activation_range_int(act, np.int32)
        run = plan_binary(ctx, name, ufunc, in1, in2, np.int32, int_range=(ilo, ihi))
        return BinaryOpData(out.type, run=run)
    dtype = NUMPY_DTYPES[out.type]
    quant = spec.quantized(tensor_quant(in1), tensor_quant(in2), tensor_quant(out), dtype, act,
                           ctx.target)
    run = plan_binary(ctx, name, ufunc, in1, in2, dtype, params=quant)
    return BinaryOpData(out.type, quant=quant, run=run)


@c_float_env
def _eval_binary(ctx: EvalContext, op: Operator, data: BinaryOpData) -> None:
    """Eval: the prepared plan run over input1, input2 into the output (see run_binary)."""
    run = data.run
    if run is None:
        raise KernelError(f"internal error: {op.name} was evaluated before its prepare made a "
                          "plan")
    run_binary(run, ctx.tensor_data(op.inputs[0]), ctx.tensor_data(op.inputs[1]),
               ctx.tensor_data(op.outputs[0]),
               ctx.workspace(run.workspace) if run.workspace >= 0 else None,
               ctx.workspace(run.table_workspace) if run.table_workspace >= 0 else None)


def _bind_binary(ctx: EvalContext, op: Operator, data: BinaryOpData) -> Step | None:
    """int8 with compiled kernels on: the table lookups of ``native.binary``; int16 and
    int32: its fixed-point and wrapping loops; float32: the loop of ``native.float_binary``;
    else eval."""
    run = data.run
    if run is not None and run.kind in ("addsub16", "mul16", "int32") and native.enabled(ctx):
        return _bind_integer(ctx, op, run)
    if run is not None and run.kind == "float" and run.lo is not None and \
            run.hi is not None and native.enabled(ctx):
        from tinyarena.kernels.native.float_binary import bind_float_binary

        return bind_float_binary(op.name, ctx.tensor_data(op.inputs[0]),
                                 ctx.tensor_data(op.inputs[1]), ctx.tensor_data(op.outputs[0]),
                                 run.plan.shape1, run.plan.shape2, run.plan.shape_out,
                                 float(run.lo), float(run.hi), second_nan=run.second_nan)
    if run is None or run.kind != "table" or run.table_workspace < 0 or \
            not native.enabled(ctx):
        return None
    from tinyarena.kernels.native.binary import bind_table_binary

    plan = run.plan
    return bind_table_binary(ctx.workspace(run.table_workspace), ctx.tensor_data(op.inputs[0]),
                             ctx.tensor_data(op.inputs[1]), ctx.tensor_data(op.outputs[0]),
                             plan.shape1, plan.shape2, plan.shape_out)


def _bind_integer(ctx: EvalContext, op: Operator, run: BinaryRun) -> Step | None:
    """int16 and int32 ADD/SUB/MUL compiled (``native.binary``), or None (numpy)."""
    from tinyarena.kernels.native import binary

    plan = run.plan
    if run.kind == "int32":
        if run.ufunc is np.add:
            mode = binary.MODE_ADD32
        elif run.ufunc is np.subtract:
            mode = binary.MODE_SUB32
        elif run.ufunc is np.multiply:
            mode = binary.MODE_MUL32
        else:
            return None
        lo = int(run.lo) if run.clamp and run.lo is not None else INT32_MIN
        hi = int(run.hi) if run.clamp and run.hi is not None else INT32_MAX
        return binary.bind_int32(mode, lo, hi, ctx.tensor_data(op.inputs[0]),
                                 ctx.tensor_data(op.inputs[1]), ctx.tensor_data(op.outputs[0]),
                                 plan.shape1, plan.shape2, plan.shape_out)
    if run.kind == "mul16":
        mode = binary.MODE_MUL
    else:
        mode = binary.MODE_SUB if run.ufunc is np.subtract else binary.MODE_ADD
    bind_quantized16 = binary.bind_quantized16
    return bind_quantized16(mode, run.params, ctx.tensor_data(op.inputs[0]),
                            ctx.tensor_data(op.inputs[1]), ctx.tensor_data(op.outputs[0]),
                            plan.shape1, plan.shape2, plan.shape_out)


# ----------------------------------------------------------------------------------------------
# Data movement for the view-like kernels (RESHAPE, SQUEEZE, EXPAND_DIMS)
# ----------------------------------------------------------------------------------------------


def copy_if_distinct(src: np.ndarray, dst: np.ndarray) -> None:
    """Copy ``src``'s elements into ``dst`` in flat order unless both are the same memory.

    TFLM's reshape skips the memcpy when input and output share a data pointer (an in-place
    plan); copying a buffer onto itself would be harmless but wasted work.
    """
    if src.size != dst.size:
        raise KernelError(f"cannot copy {src.size} elements into a tensor of {dst.size}; "
                          "the input and output element counts must match")
    if src.ctypes.data == dst.ctypes.data and src.nbytes == dst.nbytes:
        return
    dst.reshape(-1)[...] = src.reshape(-1)


__all__ = [
    "AddSubParams",
    "BinaryOp",
    "BinaryOpData",
    "binary_registration",
    "BinaryRun",
    "BroadcastPlan",
    "CHUNK",
    "add_sub_table",
    "broadcast_plan",
    "mul_table",
    "plan_binary",
    "run_binary",
    "copy_if_distinct",
    "MAX_BROADCAST_RANK",
    "MulParams",
    "add_sub_params",
    "broadcast_output_shape",
    "second_nan_wins",
    "float_binary",
    "int32_binary",
    "mul_params",
    "quantized_add_sub",
    "quantized_mul",
    "tensor_quant",
]
