"""Small helpers shared by the one-input kernels (activations, softmax, pooling, quantize, ...).

They read what TFLM's Prepare reads from a TfLiteTensor: the type and the per-tensor
quantization parameters (``params.scale`` / ``params.zero_point``, i.e. the first entries of
the quantization arrays, 0/0 when the tensor is not quantized).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels.base import EvalContext, PrepareContext
from tinyarena.model.types import Operator, Tensor, TensorType


def io_tensors(ctx: PrepareContext, op: Operator, name: str) -> tuple[Tensor, Tensor]:
    """The op's first input and first output; raises KernelError naming the op if absent."""
    if not op.inputs or not op.outputs:
        raise KernelError(f"{name} needs one input and one output tensor")
    inp = ctx.tensor(op.inputs[0])
    out = ctx.tensor(op.outputs[0])
    if inp is None or out is None:
        raise KernelError(f"{name} needs one input and one output tensor")
    return inp, out


def require_types(name: str, inp: Tensor, out: Tensor,
                  allowed: tuple[tuple[TensorType, TensorType], ...]) -> None:
    """TF_LITE_ENSURE on the (input type, output type) pair, with the supported list in the text."""
    if (inp.type, out.type) not in allowed:
        pairs = ", ".join(f"{a.name.lower()}->{b.name.lower()}" for a, b in allowed)
        raise KernelError(f"{name} does not support {inp.type.name.lower()} -> "
                          f"{out.type.name.lower()}; TFLM supports {pairs}")


def require_same_size(name: str, inp: Tensor, out: Tensor) -> None:
    if inp.element_count != out.element_count:
        raise KernelError(f"{name}: input shape {inp.shape} and output shape {out.shape} have "
                          "different element counts; fix the output tensor's shape")


def checked_unary_io(ctx: PrepareContext, op: Operator, name: str,
                     allowed: tuple[tuple[TensorType, TensorType], ...]) -> tuple[Tensor, Tensor]:
    """The checks every element-wise activation's Prepare starts with (after its temp tensors):
    one input and one output, a supported type pair, and equal element counts."""
    inp, out = io_tensors(ctx, op, name)
    require_types(name, inp, out, allowed)
    require_same_size(name, inp, out)
    return inp, out


def checked_log2(x: float) -> tuple[bool, int]:
    """TFLM CheckedLog2: (is x a power of two within 1e-3 in log2, rounded log2), in float32."""
    xf = np.float32(x)
    if not xf > 0:
        return False, 0
    x_log2 = np.float32(np.log(xf)) * (np.float32(1.0) / np.float32(np.log(np.float32(2.0))))
    rounded = np.float32(np.copysign(np.floor(abs(float(x_log2)) + 0.5), float(x_log2)))
    frac = np.float32(x_log2 - rounded)
    return bool(abs(float(frac)) < 1e-3), int(rounded)


def c_int32_from_double(x: float) -> int:
    """static_cast<int32_t>(double) as x86-64 runs it: truncation; INT32_MIN if out of range."""
    if not np.isfinite(x) or x >= 2.0**31 or x <= -(2.0**31) - 1.0:
        return -(1 << 31)
    return int(x)


# Elements per block in element-wise evals: the int64 temporaries of one block stay a few KiB,
# so an invoke allocates a small bounded amount whatever the tensor size (TFLM's Invoke
# allocates nothing; tinyarena's budget is "small temporaries").
CHUNK = 512


def map_chunks(fn: Callable[[np.ndarray], np.ndarray], x: np.ndarray, out: np.ndarray) -> None:
    """out.flat = fn(x.flat), computed block by block, each block written into ``out``."""
    src = x.reshape(-1)
    if not out.flags.c_contiguous:  # not an arena view; compute in one go
        out[...] = fn(src).reshape(out.shape)
        return
    dst = out.reshape(-1)
    for start in range(0, src.size, CHUNK):
        dst[start:start + CHUNK] = fn(src[start:start + CHUNK])


def map_row_chunks(fn: Callable[[np.ndarray], np.ndarray], rows: np.ndarray,
                   out_rows: np.ndarray) -> None:
    """As map_chunks for row-wise functions: whole rows per block, about CHUNK elements."""
    step = max(1, CHUNK // max(1, rows.shape[1]))
    for start in range(0, rows.shape[0], step):
        out_rows[start:start + step] = fn(rows[start:start + step])


def map_unary(ctx: EvalContext, op: Operator, fn: Callable[[np.ndarray], np.ndarray]) -> None:
    """An element-wise Eval: output = fn(first input), block by block (:func:`map_chunks`)."""
    map_chunks(fn, ctx.tensor_data(op.inputs[0]), ctx.tensor_data(op.outputs[0]))
