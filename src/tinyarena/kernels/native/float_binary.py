"""Compiled float32 ADD / SUB / MUL / DIV (one IEEE operation per element, then the fused
activation's clamp), MAXIMUM / MINIMUM (``a > b ? a : b``: a NaN in ``b`` wins, bits copied)
and SQUARED_DIFFERENCE (``d = a - b; d * d``) over the collapsed broadcast.

The numpy path (``kernels._elementwise.run_binary``) runs the ufunc over the collapsed
views (``BroadcastPlan``: adjacent axes with one broadcast pattern merged) and clamps with
``c_min_max_inplace`` (``v < lo ? lo : v``, then ``hi < v ? hi : v``: NaN passes, -0.0 stays
against a bound of 0). This loop walks the same collapsed shape (up to four axes, a stride of
0 on a broadcast axis) in the output's flat order. Each operation rounds once either way; the
only freedom a compiler has is which NaN an operation with two NaN operands returns, so that
case is made explicit: the first operand's NaN (quieted), x86's rule for SUB/DIV, and for
the commutative ADD/MUL the operand the wheel's loop for this layout returns
(``_elementwise.second_nan_wins``; the numpy path settles those positions the same way).

int32 SQUARED_DIFFERENCE (its difference and square wrapped to int32, as the numpy path wraps)
is ``native.binary``'s int32 loop, like the other integer binary ops.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tinyarena.kernels import native
from tinyarena.kernels.native._fops import clamp, fdiv, first_nan, fsub
from tinyarena.kernels.native.binary import MODE_SQUARED_DIFFERENCE32, bind_int32, checked_dims

OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAXIMUM, OP_MINIMUM, OP_SQUARED_DIFFERENCE = range(7)
OPS = {"ADD": OP_ADD, "SUB": OP_SUB, "MUL": OP_MUL, "DIV": OP_DIV, "MAXIMUM": OP_MAXIMUM,
       "MINIMUM": OP_MINIMUM, "SQUARED_DIFFERENCE": OP_SQUARED_DIFFERENCE}


@native.jit_inline
def _apply(op: Any, a: Any, b: Any, lo: Any, hi: Any, second: Any
           ) -> Any:  # pragma: no cover - compiled
    if op == OP_ADD or op == OP_MUL:  # commutative: the NaN of a NaN pair as the op's rule
        s = a + b if op == OP_ADD else a * b
        if s != s:
            s = first_nan(b, a, s) if second else first_nan(a, b, s)
    elif op == OP_SUB:
        s = fsub(a, b)
    elif op == OP_DIV:
        s = fdiv(a, b)
    elif op == OP_MAXIMUM:
        return a if a > b else b
    elif op == OP_MINIMUM:
        return a if a < b else b
    else:
        d = fsub(a, b)
        return d * d  # one NaN operand at most, twice
    return clamp(s, lo, hi)


@native.jit
def float_binary(a: Any, b: Any, out: Any, d: Any, bounds: Any) -> None:  # pragma: no cover
    # d: 4 sizes, 4 strides of a, 4 strides of b (collapsed, left-padded with size 1), op,
    # whether b's NaN comes out of a NaN pair (ADD/MUL)
    n0, n1, n2, n3 = d[0], d[1], d[2], d[3]
    a0, a1, a2, a3 = d[4], d[5], d[6], d[7]
    b0, b1, b2, b3 = d[8], d[9], d[10], d[11]
    op = d[12]
    second = d[13] != 0
    lo = bounds[0]
    hi = bounds[1]
    o = 0
    for i0 in range(n0):
        for i1 in range(n1):
            for i2 in range(n2):
                ia = i0 * a0 + i1 * a1 + i2 * a2
                ib = i0 * b0 + i1 * b1 + i2 * b2
                if a3 == 1 and b3 == 1:  # both whole along the innermost axis
                    for i3 in range(n3):
                        out[o + i3] = _apply(op, a[ia + i3], b[ib + i3], lo, hi, second)
                elif a3 == 0 and b3 == 1:
                    va = a[ia]
                    for i3 in range(n3):
                        out[o + i3] = _apply(op, va, b[ib + i3], lo, hi, second)
                elif a3 == 1 and b3 == 0:
                    vb = b[ib]
                    for i3 in range(n3):
                        out[o + i3] = _apply(op, a[ia + i3], vb, lo, hi, second)
                else:
                    for i3 in range(n3):
                        out[o + i3] = _apply(op, a[ia + i3 * a3], b[ib + i3 * b3], lo, hi, second)
                o += n3


def _overlaps_badly(out: np.ndarray, x: np.ndarray) -> bool:
    """``out`` shares memory with ``x`` other than as the very same elements (an in-place
    plan): the loop could then read an element it has already overwritten."""
    if not np.may_share_memory(out, x):
        return False
    return not (out.ctypes.data == x.ctypes.data and out.size == x.size)


def _dims(x1: np.ndarray, x2: np.ndarray, out: np.ndarray, shape1: Sequence[int],
          shape2: Sequence[int], shape_out: Sequence[int]) -> np.ndarray | None:
    """``binary.checked_dims`` for the output's dtype, and None for an output overlapping an
    input other than element for element."""
    dims = checked_dims(x1, x2, out, (out.dtype,), shape1, shape2, shape_out)
    if dims is None or _overlaps_badly(out, x1) or _overlaps_badly(out, x2):
        return None
    return dims


def bind_float_binary(op_name: str, x1: np.ndarray, x2: np.ndarray, out: np.ndarray,
                      shape1: Sequence[int], shape2: Sequence[int], shape_out: Sequence[int],
                      lo: float, hi: float, second_nan: bool = False
                      ) -> Callable[[], None] | None:
    """The compiled loop of ``op_name`` (a key of ``OPS``) over these views and the
    collapsed broadcast shapes (``_elementwise.broadcast_plan``), clamped to [lo, hi]; None
    (numpy runs): another op, more than four collapsed axes, arrays that do not match the
    shapes, or an output overlapping an input other than element for element."""
    op = OPS.get(op_name)
    if op is None:
        return None
    dtype = out.dtype
    if x1.dtype != dtype or x2.dtype != dtype:
        return None
    if dtype != np.float32 and not (dtype == np.int32 and op == OP_SQUARED_DIFFERENCE):
        return None  # the other integer ops are ``native.binary``'s
    shape = _dims(x1, x2, out, shape1, shape2, shape_out)
    if shape is None:
        return None
    if dtype != np.float32:  # int32 SQUARED_DIFFERENCE: no activation, the whole int32 range
        return bind_int32(MODE_SQUARED_DIFFERENCE32, -(1 << 31), (1 << 31) - 1, x1, x2, out,
                          shape1, shape2, shape_out)
    dims = np.concatenate([shape, np.array([op, int(second_nan)], dtype=np.int64)])
    bounds = np.array([lo, hi], dtype=np.float32)
    return native.native_step(float_binary, x1.reshape(-1), x2.reshape(-1), out.reshape(-1),
                              dims, bounds)


__all__ = ["OPS", "bind_float_binary", "float_binary"]
