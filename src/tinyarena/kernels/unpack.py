"""UNPACK: TFLM's unpack.cc. Splits the input along one axis into ``num`` outputs.

Allocation: the parser allocates ``TfLiteUnpackParams``; TFLM registers neither init nor
prepare, so nothing else is allocated.
"""

from __future__ import annotations

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._bound import MAX_RUNS, copy_pieces
from tinyarena.kernels.base import EvalContext, Registration, Step
from tinyarena.model.options import UnpackOptions
from tinyarena.model.types import Operator, TensorType

_SUPPORTED = (TensorType.FLOAT32, TensorType.INT32, TensorType.INT16, TensorType.INT8)


def _slots(ctx: EvalContext, op: Operator
           ) -> tuple[np.ndarray, list[np.ndarray], int, int]:
    """(input, the outputs it is split into, outer blocks, elements per slot), or the
    KernelError UnpackEval's checks raise."""
    options = op.options if isinstance(op.options, UnpackOptions) else UnpackOptions()
    in_t = ctx.tensor(op.inputs[0])
    if in_t is None or in_t.type not in _SUPPORTED:
        kind = "missing" if in_t is None else in_t.type.name
        raise KernelError(f"UNPACK supports float32, int32, int16 and int8, not {kind}")
    source = ctx.tensor_data(op.inputs[0])
    count = int(options.num)
    if count > len(op.outputs) or count < 1:
        raise KernelError(f"UNPACK: num {count} does not match its {len(op.outputs)} outputs")
    rank = source.ndim
    axis = options.axis + rank if options.axis < 0 else options.axis
    if not 0 <= axis < rank:
        raise KernelError(f"UNPACK: axis {options.axis} is out of range for a rank-{rank} input")
    outer = int(np.prod(source.shape[:axis], dtype=np.int64))
    copy = int(np.prod(source.shape[axis + 1:], dtype=np.int64))
    if outer * count * copy > source.size:
        raise KernelError(f"UNPACK: num {count} exceeds the input's axis {axis}")
    outputs = [ctx.tensor_data(op.outputs[i]) for i in range(count)]
    for i, out in enumerate(outputs):
        if out.size != outer * copy:
            raise KernelError(f"UNPACK: output {i} has {out.size} elements, expected "
                              f"{outer * copy}")
    return source, outputs, outer, copy


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    """UnpackEval -> UnpackImpl: output i takes slot i of every outer block of the input."""
    source, outputs, outer, copy = _slots(ctx, op)
    count = len(outputs)
    # UnpackImpl strides by ``num`` (not the axis length), so read exactly as it does.
    blocks = source.reshape(-1)[:outer * count * copy].reshape(outer, count, copy)
    for i, out in enumerate(outputs):
        np.copyto(out.reshape(outer, copy), blocks[:, i, :])


def bind(ctx: EvalContext, op: Operator, data: None) -> Step | None:
    """eval's slots as byte pieces fixed at bind: one quiet step; anything eval would refuse,
    many small pieces, or outputs sharing the input's memory run eval."""
    try:
        source, outputs, outer, copy = _slots(ctx, op)
    except KernelError:
        return None  # eval raises it at invoke, as TFLM's Eval does
    count = len(outputs)
    if outer * count > 4 * MAX_RUNS or any(
            o.dtype != source.dtype or not o.flags.c_contiguous or np.may_share_memory(o, source)
            for o in outputs) or not source.flags.c_contiguous:
        return None
    size = copy * source.dtype.itemsize
    return copy_pieces([(out, o * size, source, (o * count + i) * size, size)
                        for o in range(outer) for i, out in enumerate(outputs)])


REGISTRATION = Registration("UNPACK", init=None, prepare=None, eval=eval_, bind=bind,
                            builtin_data="TfLiteUnpackParams")
