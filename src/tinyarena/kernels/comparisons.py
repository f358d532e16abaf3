"""EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL: TFLM's comparisons.cc.

Allocation: no builtin struct; init allocates the comparison OpData (quantization parameters
for int8 inputs, 32 bytes); prepare takes temp tensors input1 and input2.

Types, as the Eval functions switch on input1's type: float32, int32 and int64 for all six;
bool for EQUAL and NOT_EQUAL; int8 for all six, each input brought to a common scale first
(ComparisonWithScaling: (x - zero point) << 8, times the input's own scale as a Q31
multiplier smaller than one); int16 for GREATER only (see ``_int16_scaled``). Other
combinations fail at invoke, as in TFLM (prepare accepts them, so the arena stays the same).
Broadcasting follows numpy's rules, as BroadcastBinaryOpSimple does. The output is bool.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._elementwise import broadcast_output_shape
from tinyarena.kernels._quant import (
    multiply_by_quantized_multiplier_smaller_than_one_exp,
    quantize_multiplier_smaller_than_one_exp,
    tensor_quant,
)
from tinyarena.kernels.base import EvalContext, InitContext, PrepareContext, Registration
from tinyarena.model.types import Operator, TensorType

INPUT1 = 0
INPUT2 = 1
OUTPUT = 0


def init(ctx: InitContext, op: Operator) -> None:
    """ComparisonsInit: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataComparison"))


# The ComparisonParams left shift of int8 inputs (ComparisonsPrepare's kLeftShift).
LEFT_SHIFT = 8

_F32, _I32, _I64 = TensorType.FLOAT32, TensorType.INT32, TensorType.INT64
_I8, _I16, _BOOL = TensorType.INT8, TensorType.INT16, TensorType.BOOL

# op name -> (numpy comparison, input types its Eval switch handles)
OPS: dict[str, tuple[np.ufunc, tuple[TensorType, ...]]] = {
    "EQUAL": (np.equal, (_BOOL, _F32, _I32, _I64, _I8)),
    "NOT_EQUAL": (np.not_equal, (_BOOL, _F32, _I32, _I64, _I8)),
    "GREATER": (np.greater, (_F32, _I32, _I64, _I8, _I16)),
    "GREATER_EQUAL": (np.greater_equal, (_F32, _I32, _I64, _I8)),
    "LESS": (np.less, (_F32, _I32, _I64, _I8)),
    "LESS_EQUAL": (np.less_equal, (_F32, _I32, _I64, _I8)),
}


@dataclass(frozen=True)
class OpData:
    """ComparisonParams (int8 only; zero otherwise, see ``_int16_scaled``) plus the shapes
    eval compares, and for int8 the workspace handles of each input's scaled-value table."""

    op: str
    type: TensorType
    shape1: tuple[int, ...]
    shape2: tuple[int, ...]
    shape_out: tuple[int, ...]
    left_shift: int = 0
    input1_offset: int = 0
    input1_multiplier: int = 0
    input1_shift: int = 0
    input2_offset: int = 0
    input2_multiplier: int = 0
    input2_shift: int = 0
    table1: int = -1
    table2: int = -1
    scaled1: int = -1  # int8: scratch for input1's scaled values (no allocation per invoke)
    scaled2: int = -1
    index: int = -1  # int8: scratch for the table indices (np.take would convert to intp)


def scaled_input(x: np.ndarray, offset: int, multiplier: int, shift: int,
                 left_shift: int) -> np.ndarray:
    """One input of ComparisonWithScaling: (offset + x) * 2**left_shift, then
    MultiplyByQuantizedMultiplierSmallerThanOneExp (int64 holding the int32 result)."""
    shifted = (x.astype(np.int64) + offset) * (1 << left_shift)
    return multiply_by_quantized_multiplier_smaller_than_one_exp(shifted, multiplier, shift)


def _int8_scale(name: str, which: str, scale: float) -> tuple[int, int]:
    """QuantizeMultiplierSmallerThanOneExp(scale): TFLM aborts unless 0 < scale < 1."""
    if not 0.0 < scale < 1.0:
        raise KernelError(f"int8 {name}: {which} scale {scale} must lie in (0, 1) (TFLM uses "
                          "the scale itself as a multiplier smaller than one); requantize it")
    return quantize_multiplier_smaller_than_one_exp(scale)


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """ComparisonsPrepare: temp tensors input1 and input2; for int8, ComparisonParams."""
    name = op.name
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        raise KernelError(f"{name} takes two inputs and one output")
    ctx.allocate_temp_tensor(op.inputs[INPUT1])
    ctx.allocate_temp_tensor(op.inputs[INPUT2])
    in1, in2 = ctx.tensor(op.inputs[INPUT1]), ctx.tensor(op.inputs[INPUT2])
    out = ctx.tensor(op.outputs[OUTPUT])
    if in1 is None or in2 is None or out is None:
        raise KernelError(f"{name} needs two inputs and one output tensor")
    if in1.type != in2.type:
        raise KernelError(f"{name}: inputs are {in1.type.name.lower()} and "
                          f"{in2.type.name.lower()}; TFLM reads both as input1's type")
    if out.type != _BOOL:
        raise KernelError(f"{name} writes bool; the output tensor is {out.type.name.lower()}")
    broadcast_output_shape(name, in1.shape, in2.shape, out.shape)
    shape_out = tuple(int(d) for d in np.broadcast_shapes(in1.shape, in2.shape))
    data = OpData(name, in1.type, in1.shape, in2.shape, shape_out)
    if in1.type != _I8:
        return data
    q1, q2 = tensor_quant(in1), tensor_quant(in2)
    m1, s1 = _int8_scale(name, "input1", q1.scale)
    m2, s2 = _int8_scale(name, "input2", q2.scale)
    values = np.arange(256, dtype=np.uint8).view(np.int8)  # indexed by the uint8 bit pattern
    t1 = scaled_input(values, -q1.zero_point, m1, s1, LEFT_SHIFT).astype(np.int32)
    t2 = scaled_input(values, -q2.zero_point, m2, s2, LEFT_SHIFT).astype(np.int32)
    h1 = ctx.request_workspace(t1.shape, np.int32, initial=t1)
    h2 = ctx.request_workspace(t2.shape, np.int32, initial=t2)
    w1 = ctx.request_workspace(in1.shape, np.int32, persistent=False)
    w2 = ctx.request_workspace(in2.shape, np.int32, persistent=False)
    index = ctx.request_workspace((max(in1.element_count, in2.element_count),), np.intp,
                                  persistent=False)
    return OpData(name, in1.type, in1.shape, in2.shape, shape_out, LEFT_SHIFT,
                  -q1.zero_point, m1, s1, -q2.zero_point, m2, s2, h1, h2, w1, w2, index)


def _int16_scaled(x1: np.ndarray, x2: np.ndarray,
                  data: OpData) -> tuple[np.ndarray, np.ndarray]:
    """GREATER on int16 runs ComparisonWithScaling with the ComparisonParams that
    ComparisonsPrepare fills for int8 only. The OpData is then as allocated; the wheel's is
    zero (checked by the tests: every result is False), so every scaled value is 0."""
    return (scaled_input(x1, data.input1_offset, data.input1_multiplier, data.input1_shift,
                         data.left_shift),
            scaled_input(x2, data.input2_offset, data.input2_multiplier, data.input2_shift,
                         data.left_shift))


def _lookup(ctx: EvalContext, table: int, x: np.ndarray, index: int, out: int) -> np.ndarray:
    """table[x] for int8 ``x`` (indexed by its uint8 bit pattern) without allocating: the
    indices go through an intp workspace (np.take would convert them into a new array), and
    mode="clip" stops numpy buffering ``out`` (uint8 indices never clip)."""
    idx = ctx.workspace(index)[:x.size].reshape(x.shape)
    np.copyto(idx, x.view(np.uint8))
    return np.take(ctx.workspace(table), idx, mode="clip",
                   out=ctx.workspace(out).reshape(x.shape))


def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """EqualEval, NotEqualEval, GreaterEval, ...: one comparison per (broadcast) pair."""
    ufunc, types = OPS[data.op]
    if data.type not in types:
        raise KernelError(f"{data.op} does not support {data.type.name.lower()} inputs in "
                          f"TFLM (invoke fails); supported: "
                          f"{', '.join(t.name.lower() for t in types)}")
    x1 = ctx.tensor_data(op.inputs[INPUT1]).reshape(data.shape1)
    x2 = ctx.tensor_data(op.inputs[INPUT2]).reshape(data.shape2)
    out = ctx.tensor_data(op.outputs[OUTPUT]).reshape(data.shape_out)
    if data.type == _I8:
        x1 = _lookup(ctx, data.table1, x1, data.index, data.scaled1)
        x2 = _lookup(ctx, data.table2, x2, data.index, data.scaled2)
    elif data.type == _I16:
        x1, x2 = _int16_scaled(x1, x2, data)
    ufunc(x1, x2, out=out)


REGISTRATIONS = {
    name: Registration(name, init=init, prepare=prepare, eval=eval_, builtin_data=None)
    for name in OPS
}
