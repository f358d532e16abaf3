"""Shared plumbing of the smaller two-input kernels (DIV, SQUARED_DIFFERENCE, FLOOR_DIV,
FLOOR_MOD, LOGICAL_AND/OR): tensor lookup, TFLM's temp-tensor order, broadcast views, and
the int8 pair tables.

TFLM's reference loops (BroadcastBinaryOpSimple, BroadcastBinaryFunction4DSlow) pair elements
by numpy's broadcasting rules, so each kernel computes on numpy-broadcast views and writes the
whole output once (the inputs are read in full before the output is written, so an output that
aliases an input is safe).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels import native
from tinyarena.kernels._elementwise import broadcast_output_shape, broadcast_plan
from tinyarena.kernels.base import EvalContext, PrepareContext
from tinyarena.model.types import Operator, Tensor

INPUT1 = 0
INPUT2 = 1
OUTPUT = 0


@dataclass(frozen=True)
class BinaryShapes:
    """The two input shapes and the broadcast output shape (checked against the output)."""

    shape1: tuple[int, ...]
    shape2: tuple[int, ...]
    shape_out: tuple[int, ...]

    @property
    def same(self) -> bool:
        return self.shape1 == self.shape2


def binary_tensors(ctx: PrepareContext | EvalContext,
                   op: Operator) -> tuple[Tensor, Tensor, Tensor]:
    """Input1, input2 and output; KernelError naming the op when one is missing."""
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        raise KernelError(f"{op.name} takes two inputs and one output; got {len(op.inputs)} "
                          f"and {len(op.outputs)}")
    in1, in2 = ctx.tensor(op.inputs[INPUT1]), ctx.tensor(op.inputs[INPUT2])
    out = ctx.tensor(op.outputs[OUTPUT])
    if in1 is None or in2 is None or out is None:
        raise KernelError(f"{op.name} needs two input tensors and one output tensor")
    return in1, in2, out


def allocate_binary_temps(ctx: PrepareContext, op: Operator) -> None:
    """AllocateTempInputTensor(0), (1), AllocateTempOutputTensor(0), TFLM's usual order."""
    ctx.allocate_temp_tensor(op.inputs[INPUT1])
    ctx.allocate_temp_tensor(op.inputs[INPUT2])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])


def binary_shapes(op: Operator, in1: Tensor, in2: Tensor, out: Tensor) -> BinaryShapes:
    broadcast_output_shape(op.name, tuple(in1.shape), tuple(in2.shape), tuple(out.shape))
    shape_out = tuple(int(d) for d in np.broadcast_shapes(tuple(in1.shape), tuple(in2.shape)))
    return BinaryShapes(tuple(in1.shape), tuple(in2.shape), shape_out)


def same_types(op: Operator, *tensors: Tensor) -> None:
    """TF_LITE_ENSURE_TYPES_EQ across the op's tensors."""
    if len({t.type for t in tensors}) != 1:
        names = ", ".join(t.type.name.lower() for t in tensors)
        raise KernelError(f"{op.name}: tensor types {names} differ; TFLM requires one type")


def binary_views(ctx: EvalContext, op: Operator,
                 shapes: BinaryShapes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x1, x2, out) as arrays of their own shapes; out has the broadcast shape."""
    x1 = ctx.tensor_data(op.inputs[INPUT1]).reshape(shapes.shape1)
    x2 = ctx.tensor_data(op.inputs[INPUT2]).reshape(shapes.shape2)
    out = ctx.tensor_data(op.outputs[OUTPUT]).reshape(shapes.shape_out)
    return x1, x2, out


def int8_pairs() -> tuple[np.ndarray, np.ndarray]:
    """Every (x1, x2) int8 pair as a broadcastable (256, 1) and (1, 256) pair, rows and
    columns indexed by the values' uint8 bit patterns (for 65536-entry lookup tables)."""
    values = np.arange(256, dtype=np.uint8).view(np.int8)
    return values.reshape(256, 1), values.reshape(1, 256)


def activation_min_max(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """ActivationFunctionWithMinMax on float32 as C++ computes it: std::max(x, lo) is
    ``x < lo ? lo : x`` and std::min(.., hi) is ``hi < x ? hi : x``, so NaN passes and -0.0
    stays -0.0 under a RELU (np.maximum would give +0.0)."""
    lo32, hi32 = np.float32(lo), np.float32(hi)
    y = np.where(x < lo32, lo32, x)
    return np.where(hi32 < y, hi32, y).astype(np.float32)


BLOCK = 4096  # elements per block of a blocked binary eval


def bind_float_binary(ctx: EvalContext, op: Operator, shapes: BinaryShapes,
                      lo: float = -np.inf, hi: float = np.inf) -> Callable[[], None] | None:
    """bind of a float32 DIV, MAXIMUM, MINIMUM or SQUARED_DIFFERENCE (or an int32
    SQUARED_DIFFERENCE) with compiled kernels on: ``native.float_binary``'s loop over the
    collapsed broadcast (clamped to [lo, hi]); None (eval runs) without them or when it
    declines."""
    if not native.enabled(ctx):
        return None
    from tinyarena.kernels.native.float_binary import bind_float_binary as bind

    plan = broadcast_plan(shapes.shape1, shapes.shape2)
    return bind(op.name, ctx.tensor_data(op.inputs[INPUT1]), ctx.tensor_data(op.inputs[INPUT2]),
                ctx.tensor_data(op.outputs[OUTPUT]), plan.shape1, plan.shape2,
                plan.shape_out, lo, hi)


def map_binary_blocks(fn: Callable[[np.ndarray, np.ndarray], np.ndarray], x1: np.ndarray,
                      x2: np.ndarray, out: np.ndarray) -> None:
    """out = fn(x1, x2) with numpy broadcasting, computed BLOCK elements at a time in the
    output's order, so an invoke's temporaries stay a few blocks whatever the tensor size
    (the element pairing is the reference loops' broadcasting either way)."""
    if out.size <= BLOCK:
        out[...] = fn(*np.broadcast_arrays(x1, x2))
        return
    it = np.nditer([x1, x2, out], flags=["external_loop", "buffered", "zerosize_ok"],
                   op_flags=[["readonly"], ["readonly"], ["writeonly"]], buffersize=BLOCK,
                   order="C")
    with it:
        for a, b, o in it:
            o[...] = fn(a, b)
