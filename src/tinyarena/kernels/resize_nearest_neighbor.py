"""RESIZE_NEAREST_NEIGHBOR: TFLM's resize_nearest_neighbor.cc with
reference_ops::ResizeNearestNeighbor.

Allocation: the parser allocates ``TfLiteResizeNearestNeighborParams`` (two bools); no init;
prepare takes temp tensors input, size, output and needs a constant size. Eval reads the
output height and width from the size tensor and copies whole pixels (depth values).
"""

from __future__ import annotations

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._lut import round_half_away_f32
from tinyarena.kernels import native
from tinyarena.kernels.base import (
    EvalContext,
    PrepareContext,
    Registration,
    Step,
    required_tensor,
)
from tinyarena.model.options import ResizeNearestNeighborOptions
from tinyarena.model.types import Operator, TensorType

INPUT = 0
SIZE = 1
OUTPUT = 0
_SUPPORTED = (TensorType.FLOAT32, TensorType.INT8, TensorType.INT16)


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """ResizeNearestNeighborPrepare: checks and three temp tensors."""
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        raise KernelError("RESIZE_NEAREST_NEIGHBOR takes two inputs (input, size) and one output")
    for index in (op.inputs[INPUT], op.inputs[SIZE], op.outputs[OUTPUT]):
        ctx.allocate_temp_tensor(index)
    inp = required_tensor(ctx, op.inputs[INPUT], op.name, "input")
    size = required_tensor(ctx, op.inputs[SIZE], op.name, "size")
    if len(inp.shape) != 4:
        raise KernelError(f"RESIZE_NEAREST_NEIGHBOR needs a 4-D input, not {inp.shape}")
    if len(size.shape) != 1 or size.type != TensorType.INT32 or size.shape[0] != 2:
        raise KernelError("RESIZE_NEAREST_NEIGHBOR: size must be an int32 vector of 2 values")
    if size.data is None:
        raise KernelError("RESIZE_NEAREST_NEIGHBOR: non-constant size tensor is not supported "
                          "by TFLM; make it a constant")


def nearest_indices(out_size: int, in_size: int, align_corners: bool,
                    half_pixel_centers: bool) -> np.ndarray:
    """GetNearestNeighbor for every output coordinate, in float32 as TFLM computes it."""
    if align_corners and out_size > 1:
        scale = np.float32(in_size - 1) / np.float32(out_size - 1)
    else:
        scale = np.float32(in_size) / np.float32(out_size)
    offset = np.float32(0.5 if half_pixel_centers else 0.0)
    scaled = (np.arange(out_size, dtype=np.float32) + offset) * np.float32(scale)
    if align_corners:  # TfLiteRound: half away from zero
        picked = round_half_away_f32(scaled)
    else:
        picked = np.floor(scaled)
    index = np.minimum(picked.astype(np.int64), in_size - 1)
    if half_pixel_centers:
        index = np.maximum(index, 0)
    return index


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    out_t = ctx.tensor(op.outputs[OUTPUT])
    if out_t is None or out_t.type not in _SUPPORTED:
        kind = "missing" if out_t is None else out_t.type.name
        raise KernelError(f"RESIZE_NEAREST_NEIGHBOR supports float32, int8 and int16, not {kind}")
    options = op.options if isinstance(op.options, ResizeNearestNeighborOptions) \
        else ResizeNearestNeighborOptions()
    source = ctx.tensor_data(op.inputs[INPUT])
    height, width = (int(v) for v in ctx.tensor_data(op.inputs[SIZE]).reshape(-1)[:2])
    out = ctx.tensor_data(op.outputs[OUTPUT])
    if out.shape != (source.shape[0], height, width, source.shape[3]):
        raise KernelError(f"RESIZE_NEAREST_NEIGHBOR: output shape {out.shape} does not match "
                          f"the size tensor ({height}, {width})")
    rows = nearest_indices(height, source.shape[1], options.align_corners,
                           options.half_pixel_centers)
    cols = nearest_indices(width, source.shape[2], options.align_corners,
                           options.half_pixel_centers)
    for y, row in enumerate(rows.tolist()):  # one take per output row: no temporaries
        np.take(source[:, row], cols, axis=1, out=out[:, y], mode="clip")


def bind(ctx: EvalContext, op: Operator, data: None) -> Step | None:
    """With compiled kernels on: ``native.resize.nearest`` copying the pixels eval's indices
    pick; None (eval runs, and raises) for an unsupported type or a mismatched shape."""
    out_t = ctx.tensor(op.outputs[OUTPUT])
    if not native.enabled(ctx) or out_t is None or out_t.type not in _SUPPORTED:
        return None
    from tinyarena.kernels.native.resize import bind_nearest

    options = op.options if isinstance(op.options, ResizeNearestNeighborOptions) \
        else ResizeNearestNeighborOptions()
    source = ctx.tensor_data(op.inputs[INPUT])
    size = ctx.tensor_data(op.inputs[SIZE]).reshape(-1)
    out = ctx.tensor_data(op.outputs[OUTPUT])
    if size.size < 2 or source.ndim != 4 or \
            out.shape != (source.shape[0], int(size[0]), int(size[1]), source.shape[3]):
        return None
    align, half = options.align_corners, options.half_pixel_centers
    return bind_nearest(source, out, nearest_indices(out.shape[1], source.shape[1], align, half),
                        nearest_indices(out.shape[2], source.shape[2], align, half))


REGISTRATION = Registration("RESIZE_NEAREST_NEIGHBOR", init=None, prepare=prepare, eval=eval_,
                            bind=bind, builtin_data="TfLiteResizeNearestNeighborParams")
