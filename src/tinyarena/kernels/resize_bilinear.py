"""RESIZE_BILINEAR: TFLM's resize_bilinear.cc with reference_ops::ResizeBilinear (float32, in
float32 arithmetic in the reference's operation order) and ResizeBilinearInteger (int8, in
1/1024 fixed point, rounding half away from zero).

Allocation: the parser allocates ``TfLiteResizeBilinearParams`` (two bools); no init; prepare
takes temp tensors input, size, output and needs a constant size; align_corners together with
half_pixel_centers is refused.
"""

from __future__ import annotations

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels import native
from tinyarena.kernels.base import (
    EvalContext,
    PrepareContext,
    Registration,
    Step,
    required_tensor,
)
from tinyarena.model.options import ResizeBilinearOptions
from tinyarena.model.types import Operator, TensorType

F32 = np.float32


def _options(op: Operator) -> ResizeBilinearOptions:
    return op.options if isinstance(op.options, ResizeBilinearOptions) \
        else ResizeBilinearOptions()


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """ResizeBilinearPrepare."""
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        raise KernelError("RESIZE_BILINEAR takes two inputs (input, size) and one output")
    for index in (op.inputs[0], op.inputs[1], op.outputs[0]):
        ctx.allocate_temp_tensor(index)
    inp = required_tensor(ctx, op.inputs[0], op.name, "input")
    size = required_tensor(ctx, op.inputs[1], op.name, "size")
    if len(inp.shape) != 4:
        raise KernelError(f"RESIZE_BILINEAR needs a 4-D input, not {inp.shape}")
    if len(size.shape) != 1 or size.type != TensorType.INT32:
        raise KernelError("RESIZE_BILINEAR: size must be an int32 vector")
    if size.data is None:
        raise KernelError("RESIZE_BILINEAR: non-constant size tensor is not supported by TFLM; "
                          "make it a constant")
    options = _options(op)
    if options.half_pixel_centers and options.align_corners:
        raise KernelError("If half_pixel_centers is True, align_corners must be False.")


def _float_coords(out_size: int, in_size: int, align: bool, half: bool
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ComputeInterpolationValues: (scaled value, lower, upper) per output coordinate."""
    scale = F32(in_size) / F32(out_size)
    if align and out_size > 1:
        scale = F32(in_size - 1) / F32(out_size - 1)
    value = np.arange(out_size, dtype=F32)
    scaled = (value + F32(0.5)) * scale - F32(0.5) if half else value * scale
    lower = np.maximum(np.floor(scaled).astype(np.int64), 0)
    upper = np.minimum(np.ceil(scaled).astype(np.int64), in_size - 1)
    return scaled.astype(F32), lower, upper


def _c_div(a: np.ndarray, b: int) -> np.ndarray:
    """C's integer division (truncation toward zero) by a positive ``b``."""
    return np.sign(a) * (np.abs(a) // b)


def _int_coords(out_size: int, in_size: int, align: bool, half: bool
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ComputeInterpolationValuesInteger in 1/1024 units."""
    scale = ((1 << 10) * in_size + out_size // 2) // out_size
    if align and out_size > 1:
        scale = ((1 << 10) * (in_size - 1) + (out_size - 1) // 2) // (out_size - 1)
    value = np.arange(out_size, dtype=np.int64)
    scaled = value * scale + scale // 2 - (1 << 9) if half else value * scale
    lower = np.maximum(_c_div(scaled, 1 << 10), 0)
    upper = np.minimum(_c_div(scaled + (1 << 10) - 1, 1 << 10), in_size - 1)
    return scaled, lower, upper


def eval_(ctx: EvalContext, op: Operator, data: None) -> None:
    out_t = ctx.tensor(op.outputs[0])
    if out_t is None or out_t.type not in (TensorType.FLOAT32, TensorType.INT8):
        kind = "missing" if out_t is None else out_t.type.name
        raise KernelError(f"RESIZE_BILINEAR supports float32 and int8, not {kind}")
    options = _options(op)
    source = ctx.tensor_data(op.inputs[0])
    height, width = (int(v) for v in ctx.tensor_data(op.inputs[1]).reshape(-1)[:2])
    out = ctx.tensor_data(op.outputs[0])
    if out.shape != (source.shape[0], height, width, source.shape[3]):
        raise KernelError(f"RESIZE_BILINEAR: output shape {out.shape} does not match the size "
                          f"tensor ({height}, {width})")
    if out.size == 0:
        return
    align, half = options.align_corners, options.half_pixel_centers
    # One output row at a time: temporaries are row-sized, whatever the image size.
    if out_t.type == TensorType.FLOAT32:
        in_y, y0, y1 = _float_coords(height, source.shape[1], align, half)
        in_x, x0, x1 = _float_coords(width, source.shape[2], align, half)
        one = F32(1)
        dx = (in_x - x0.astype(F32))[None, :, None]
        odx = one - dx
        with np.errstate(all="ignore"):  # inf * 0 is NaN in TFLM too, silently
            for y in range(height):
                dy = F32(in_y[y] - F32(y0[y]))
                ody = one - dy
                top, bottom = source[:, y0[y]], source[:, y1[y]]
                out[:, y] = (top[:, x0] * ody * odx + bottom[:, x0] * dy * odx
                             + top[:, x1] * ody * dx + bottom[:, x1] * dy * dx + F32(0))
        return
    in_y, y0, y1 = _int_coords(height, source.shape[1], align, half)
    in_x, x0, x1 = _int_coords(width, source.shape[2], align, half)
    fx = (in_x - (1 << 10) * x0)[None, :, None]
    gx = (1 << 10) - fx
    for y in range(height):
        fy = int(in_y[y] - (1 << 10) * y0[y])
        gy = (1 << 10) - fy
        top = source[:, y0[y]].astype(np.int64)
        bottom = source[:, y1[y]].astype(np.int64)
        total = (top[:, x0] * gy * gx + bottom[:, x0] * fy * gx
                 + top[:, x1] * gy * fx + bottom[:, x1] * fy * fx)
        rounded = _c_div(total + np.where(total > 0, 1 << 19, -(1 << 19)), 1 << 20)
        out[:, y] = rounded.astype(np.int8)


def bind(ctx: EvalContext, op: Operator, data: None) -> Step | None:
    """With compiled kernels on: ``native.resize``'s int8 / float32 loops over the coordinates
    computed here as eval computes them; None (eval runs, and raises) for anything else."""
    out_t = ctx.tensor(op.outputs[0])
    if not native.enabled(ctx) or out_t is None or \
            out_t.type not in (TensorType.FLOAT32, TensorType.INT8):
        return None
    from tinyarena.kernels.native.resize import bind_bilinear_float, bind_bilinear_int

    options = _options(op)
    source = ctx.tensor_data(op.inputs[0])
    size = ctx.tensor_data(op.inputs[1]).reshape(-1)
    out = ctx.tensor_data(op.outputs[0])
    if size.size < 2 or source.ndim != 4 or \
            out.shape != (source.shape[0], int(size[0]), int(size[1]), source.shape[3]):
        return None
    height, width = out.shape[1], out.shape[2]
    align, half = options.align_corners, options.half_pixel_centers
    if out_t.type == TensorType.FLOAT32:
        return bind_bilinear_float(source, out,
                                   _float_coords(height, source.shape[1], align, half),
                                   _float_coords(width, source.shape[2], align, half))
    return bind_bilinear_int(source, out, _int_coords(height, source.shape[1], align, half),
                             _int_coords(width, source.shape[2], align, half))


REGISTRATION = Registration("RESIZE_BILINEAR", init=None, prepare=prepare, eval=eval_,
                            bind=bind, builtin_data="TfLiteResizeBilinearParams")
