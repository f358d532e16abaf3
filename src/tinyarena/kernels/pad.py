"""PAD and PADV2: TFLM's pad.cc / pad_common.cc.

Allocation: no builtin struct; init allocates ``OpDataPad`` (PadParams plus the output zero
point); prepare takes temp tensors input, paddings, constant values (PADV2 only) and output.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels import native
from tinyarena.kernels._quant import tensor_quant
from tinyarena.kernels.base import (
    EvalContext,
    InitContext,
    PrepareContext,
    Registration,
    Step,
    required_tensor,
)
from tinyarena.model.types import NUMPY_DTYPES, Operator, TensorType

INPUT = 0
PADDINGS = 1
CONSTANT_VALUES = 2
OUTPUT = 0


def init(ctx: InitContext, op: Operator) -> None:
    """PadInit: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataPad"))


MAX_DIMS = 5  # reference_ops::PadKernelMaxDimensionCount()
_SUPPORTED = (TensorType.FLOAT32, TensorType.INT8, TensorType.INT16, TensorType.INT32)


@dataclass(frozen=True)
class OpData:
    """PadParams (left/right padding per axis) and the value used when PADV2 gives none.

    The image-style and generic resizing categories of TFLM produce the same output, so only
    the paddings are kept.
    """

    paddings: tuple[tuple[int, int], ...]
    default_value: float | int
    staging: int  # workspace holding a copy of the input (see eval_)


def _paddings_as_int32(ttype: TensorType, data: np.ndarray, count: int) -> np.ndarray:
    """The paddings as PadPrepare reads them: GetTensorData<int32_t> whatever the tensor's type,
    so an int64 tensor's bytes are taken as int32 words (low word, high word, ...)."""
    if ttype == TensorType.INT32:
        return data.reshape(-1)
    if ttype == TensorType.INT64:
        return np.ascontiguousarray(data, dtype="<i8").reshape(-1).view("<i4")[:count]
    raise KernelError(f"PAD: paddings of type {ttype.name} are not supported; use int32")


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """PadPrepare: temp tensors input, paddings, constant values (PADV2), output; checks."""
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.inputs[PADDINGS])
    if len(op.inputs) == 3:
        ctx.allocate_temp_tensor(op.inputs[CONSTANT_VALUES])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    if len(op.inputs) not in (2, 3) or len(op.outputs) != 1:
        raise KernelError("PAD takes two or three inputs and one output")
    inp = required_tensor(ctx, op.inputs[INPUT], "PAD", "input")
    pads = required_tensor(ctx, op.inputs[PADDINGS], "PAD", "paddings")
    const = ctx.tensor(op.inputs[CONSTANT_VALUES]) if len(op.inputs) == 3 else None
    out = required_tensor(ctx, op.outputs[OUTPUT], "PAD", "output")
    if inp.type != out.type:
        raise KernelError("PAD: input and output types differ")
    if len(inp.shape) > MAX_DIMS:
        raise KernelError(f"PAD supports at most {MAX_DIMS} dimensions")
    if const is not None and (const.type != inp.type or const.element_count != 1):
        raise KernelError("PADV2: the constant value must be a scalar of the input's type")
    if pads.element_count != 2 * len(out.shape):
        raise KernelError("PAD: paddings must hold a (before, after) pair per output dimension")
    if pads.data is None:
        raise KernelError("PAD: non-constant paddings tensor is not supported; make it a constant")
    p = _paddings_as_int32(pads.type, np.asarray(pads.data), pads.element_count).reshape(-1, 2)
    pairs = tuple((int(a), int(b)) for a, b in p)
    for i, (before, after) in enumerate(pairs):
        if out.shape[i] != inp.shape[i] + before + after:
            raise KernelError(f"PAD: output dimension {i} is {out.shape[i]}, expected "
                              f"{inp.shape[i] + before + after}")
    default: float | int = 0
    if inp.type == TensorType.INT8:
        qo = tensor_quant(out)
        if const is None:
            if not -128 <= qo.zero_point <= 127:
                raise KernelError("int8 PAD: the output zero point must fit int8")
            default = qo.zero_point
        elif tensor_quant(const) != qo:
            raise KernelError("int8 PADV2: the pad value must be quantized like the output")
    # scratch: eval copies the whole input in before reading it
    staging = ctx.request_workspace(inp.shape, NUMPY_DTYPES[inp.type], persistent=False)
    return OpData(pairs, default, staging)


def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """PadEval -> reference_ops::Pad / PadImageStyle: fill with the pad value, copy the middle.

    The input is staged in a workspace first: under an optimizer plan the output may start
    inside the input's bytes (TFLM's loop writes each output element after reading what it
    needs), and filling the output first would destroy input not yet copied.
    """
    t = ctx.tensor(op.inputs[INPUT])
    if t is not None and t.type not in _SUPPORTED:
        raise KernelError(f"PAD does not support type {t.type.name}")
    x = ctx.tensor_data(op.inputs[INPUT])
    out = ctx.tensor_data(op.outputs[OUTPUT])
    if len(op.inputs) == 3:
        value = ctx.tensor_data(op.inputs[CONSTANT_VALUES]).reshape(-1)[0]
    else:
        value = data.default_value
    staged = ctx.workspace(data.staging)
    np.copyto(staged, x)
    out[...] = value
    inner = tuple(slice(b, b + n) for (b, _), n in zip(data.paddings, x.shape))
    out[inner] = staged


def bind(ctx: EvalContext, op: Operator, data: OpData) -> Step | None:
    """Supported types with compiled kernels on: ``native.pad``'s pass; else eval."""
    t = ctx.tensor(op.inputs[INPUT])
    if t is None or t.type not in _SUPPORTED or not native.enabled(ctx):
        return None
    out = ctx.tensor_data(op.outputs[OUTPUT])
    if len(op.inputs) == 3:
        value = ctx.tensor_data(op.inputs[CONSTANT_VALUES])
    else:
        value = np.array([data.default_value], dtype=out.dtype)
    from tinyarena.kernels.native.pad import bind_pad

    return bind_pad(ctx.tensor_data(op.inputs[INPUT]), value, out, data.paddings)


REGISTRATIONS = {
    "PAD": Registration("PAD", init=init, prepare=prepare, eval=eval_, bind=bind,
                        builtin_data=None),
    "PADV2": Registration("PADV2", init=init, prepare=prepare, eval=eval_, bind=bind,
                          builtin_data=None),
}
