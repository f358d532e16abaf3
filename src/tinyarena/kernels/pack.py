"""PACK: TFLM's pack.cc. Stacks ``values_count`` inputs along a new axis.

Allocation: the parser allocates ``TfLitePackParams``; TFLM registers neither init nor prepare,
so nothing else is allocated (no temp tensors, no checks before eval).
"""

from __future__ import annotations

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._bound import MAX_RUNS, copy_pieces
from tinyarena.kernels.base import EvalContext, Registration, Step
from tinyarena.model.options import PackOptions
from tinyarena.model.types import Operator, TensorType

_SUPPORTED = (TensorType.FLOAT32, TensorType.INT8, TensorType.INT16, TensorType.INT32,
              TensorType.INT64)


def _slots(ctx: EvalContext, op: Operator
           ) -> tuple[np.ndarray, list[np.ndarray], int, int]:
    """(output, the inputs it stacks, outer blocks, elements per slot), or the KernelError
    PackEval's checks raise."""
    options = op.options if isinstance(op.options, PackOptions) else PackOptions()
    out_t = ctx.tensor(op.outputs[0])
    if out_t is None or out_t.type not in _SUPPORTED:
        kind = "missing" if out_t is None else out_t.type.name
        raise KernelError(f"PACK supports float32, int8, int16, int32 and int64, not {kind}")
    out = ctx.tensor_data(op.outputs[0])
    count = int(options.values_count)
    if count > len(op.inputs) or count < 1:
        raise KernelError(f"PACK: values_count {count} does not match its {len(op.inputs)} "
                          f"inputs")
    rank = out.ndim
    axis = options.axis + rank if options.axis < 0 else options.axis
    if not 0 <= axis < rank:
        raise KernelError(f"PACK: axis {options.axis} is out of range for a rank-{rank} output")
    outer = int(np.prod(out.shape[:axis], dtype=np.int64))
    copy = int(np.prod(out.shape[axis + 1:], dtype=np.int64))
    if out.size != outer * count * copy:
        raise KernelError(f"PACK: output shape {out.shape} does not hold {count} inputs stacked "
                          f"on axis {axis}")
    parts = [ctx.tensor_data(op.inputs[i]) for i in range(count)]
    for i, part in enumerate(parts):
        if part.size != outer * copy:
            raise KernelError(f"PACK: input {i} has {part.size} elements, expected "
                              f"{outer * copy}")
    return out, parts, outer, copy


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    """PackEval -> PackImpl: input i fills slot i of every outer block of the output."""
    out, parts, outer, copy = _slots(ctx, op)
    slots = out.reshape(outer, len(parts), copy)
    for i, part in enumerate(parts):
        np.copyto(slots[:, i, :], part.reshape(outer, copy))


def bind(ctx: EvalContext, op: Operator, data: None) -> Step | None:
    """eval's slots as byte pieces fixed at bind: one quiet step; anything eval would refuse,
    many small pieces, or inputs sharing the output's memory run eval."""
    try:
        out, parts, outer, copy = _slots(ctx, op)
    except KernelError:
        return None  # eval raises it at invoke, as TFLM's Eval does
    count = len(parts)
    if outer * count > 4 * MAX_RUNS or any(
            p.dtype != out.dtype or not p.flags.c_contiguous or np.may_share_memory(p, out)
            for p in parts) or not out.flags.c_contiguous:
        return None
    size = copy * out.dtype.itemsize
    return copy_pieces([(out, (o * count + i) * size, part, o * size, size)
                        for o in range(outer) for i, part in enumerate(parts)])


REGISTRATION = Registration("PACK", init=None, prepare=None, eval=eval_, bind=bind,
                            builtin_data="TfLitePackParams")
