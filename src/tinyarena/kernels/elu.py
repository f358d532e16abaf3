"""ELU: TFLM's elu.cc and reference/elu.h.

Types: float32 and int8 (checked when the op runs).

* float32: ``x < 0 ? expm1f(x) : x`` (TfLiteExpm1, glibc's expm1f, ported bit for bit in
  ``_libm``); NaN and -0.0 pass unchanged.
* int8 (PopulateLookupTable at prepare): for each of the 256 inputs, dequantize in float32
  (scale * (q - zero point)), apply ``x < 0 ? expf(x) - 1 : x``, multiply by 1 / output scale,
  roundf, add the output zero point in float32, truncate to int32 and clamp.

Allocation: init allocates the kernel's OpData (the 256-byte int8 table) for every type;
prepare takes input and output as temp tensors; no builtin options.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels._libm import expf_for, expm1f
from tinyarena.kernels._quant import tensor_quant
from tinyarena.kernels._unary import map_chunks
from tinyarena.kernels.base import EvalContext, InitContext, PrepareContext, Registration
from tinyarena.model.types import Operator, TensorType

INPUT = 0
OUTPUT = 0


@dataclass(frozen=True)
class OpData:
    type: TensorType
    table: int = -1  # int8: workspace handle of the table indexed by uint8(x)


def elu_float(x: np.ndarray) -> np.ndarray:
    """reference_ops::Elu."""
    return np.where(x < 0, expm1f(x), x).astype(np.float32)


def int8_table(s_in: float, zp_in: int, s_out: float, zp_out: int,
               libm: str = "glibc") -> np.ndarray:
    """PopulateLookupTable<int8_t> with ELU's transform, indexed by uint8(q); ``libm``: the
    build's C library, whose expf the transform calls (``_libm.expf_for``)."""
    f32 = np.float32
    q = np.arange(-128, 128, dtype=np.int64)
    with np.errstate(all="ignore"):
        dequantized = f32(s_in) * (q - zp_in).astype(f32)
        transformed = np.where(dequantized < 0, expf_for(libm)(dequantized) - f32(1.0),
                               dequantized)
        inverse_scale = f32(1.0) / f32(s_out)
        scaled = (transformed * inverse_scale).astype(f32)
        s64 = scaled.astype(np.float64)  # roundf, exact in double for float32 values
        rescaled = np.trunc(s64 + np.copysign(0.5, s64)).astype(f32)
        shifted = (rescaled + f32(zp_out)).astype(f32)
    # static_cast<int32_t>(float): truncation; x86 gives INT32_MIN for NaN or out of range
    wide = shifted.astype(np.float64)
    in_range = np.isfinite(wide) & (wide > -2.0**31 - 1) & (wide < 2.0**31)
    quantized = np.where(in_range, np.trunc(np.where(in_range, wide, 0.0)), -2.0**31)
    table = np.clip(quantized, -128, 127).astype(np.int8)
    return table[(np.arange(256) + 128) % 256]  # row for uint8(q) = q & 0xFF


def init(ctx: InitContext, op: Operator) -> None:
    """EluInit: the OpData (int8 lookup table), whatever the type."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataElu"))


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """EluPrepare (CalculateOpData): temps input, output; the int8 table."""
    if len(op.inputs) != 1 or len(op.outputs) != 1:
        raise KernelError(f"ELU takes one input and one output; got {len(op.inputs)} and "
                          f"{len(op.outputs)}")
    ctx.allocate_temp_tensor(op.inputs[INPUT])
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    inp, out = ctx.tensor(op.inputs[INPUT]), ctx.tensor(op.outputs[OUTPUT])
    if inp is None or out is None:
        raise KernelError("ELU needs an input and an output tensor")
    if inp.type != out.type:
        raise KernelError(f"ELU: input type {inp.type.name.lower()} differs from output type "
                          f"{out.type.name.lower()}; TFLM requires them equal")
    if inp.type != TensorType.INT8:
        return OpData(inp.type)
    (s_in, zp_in), (s_out, zp_out) = tensor_quant(inp), tensor_quant(out)
    table = int8_table(s_in, zp_in, s_out, zp_out, str(getattr(ctx.target, "libm", "glibc")))
    return OpData(inp.type, ctx.request_workspace(table.shape, np.int8, initial=table))


@c_float_env
def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """EluEval."""
    x, out = ctx.tensor_data(op.inputs[INPUT]), ctx.tensor_data(op.outputs[OUTPUT])
    if data.type == TensorType.FLOAT32:
        map_chunks(elu_float, x, out)
    elif data.type == TensorType.INT8:
        table = ctx.workspace(data.table)
        map_chunks(lambda v: table[v.view(np.uint8)], x, out)
    else:
        raise KernelError(f"ELU supports float32 and int8 in TFLM, not {data.type.name.lower()}")


REGISTRATION = Registration("ELU", init=init, prepare=prepare, eval=eval_, builtin_data=None)
