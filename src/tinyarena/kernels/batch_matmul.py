"""BATCH_MATMUL: TFLM's batch_matmul.cc, batch_matmul_common.cc and reference/batch_matmul.h.

out[..., i, j] = sum_k lhs'[..., i, k] * rhs'[..., k, j], where lhs' and rhs' are the inputs
with their last two dimensions swapped when adj_x / adj_y is set; batch dimensions (ranks 2 to
5) broadcast as numpy's. Types: float32, int8, int16 (all three tensors of one type).

* float32: each sum starts at 0 and adds the float32 products in k order (one rounding per
  product and per addition, as the wheel's x86-64 build runs it; on a target with ``float_fma``
  each step is one fused multiply-add, as GCC contracts the loop for a hard-float FPU).
* int8 / int16: sum of (lhs - zp_lhs) * (rhs - zp_rhs) in int32 / int64, scaled by
  QuantizeMultiplier(double(float(s_lhs * s_rhs)) / s_out) (the int16 path through the 64-bit
  MultiplyByQuantizedMultiplier), plus the output zero point, clamped to the type. int16
  needs zero points of 0.

Allocation (BatchMatMulInit, BatchMatMulPrepare), in order: OpDataBatchMatmul in init; temp
tensors lhs, rhs, output; for int8/int16 the QuantizationOpDataBatchMatmul (seven int32); with
adj_x, a transposed copy of lhs as a TfLiteEvalTensor, its dims array and its data; without
adj_y, the same for rhs; then CreateWritableTensorDimsWithCopy for the output's dims. All
persistent. The parser allocates TfLiteBatchMatMulParams.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._fma import fma32
from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels._quant import (
    multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_int64,
    qrange,
    quantize_multiplier,
    tensor_quant,
    wrap_int32,
)
from tinyarena.kernels.base import EvalContext, InitContext, PrepareContext, Registration
from tinyarena.model.options import BatchMatMulOptions
from tinyarena.model.types import NUMPY_DTYPES, Operator, Tensor, TensorType

LHS = 0
RHS = 1
OUTPUT = 0
MIN_RANK, MAX_RANK = 2, 5
_TYPES = (TensorType.FLOAT32, TensorType.INT8, TensorType.INT16)


@dataclass(frozen=True)
class QuantParams:
    """QuantizationOpDataBatchMatmul."""

    multiplier: int
    shift: int
    lhs_zero_point: int
    rhs_zero_point: int
    output_zero_point: int


@dataclass(frozen=True)
class OpData:
    type: TensorType
    adj_x: bool
    adj_y: bool
    lhs_shape: tuple[int, ...]
    rhs_shape: tuple[int, ...]
    out_shape: tuple[int, ...]  # the broadcast result shape (what ReshapeOutputTensor sets)
    quant: QuantParams | None
    product: int = -1  # float32: scratch workspace for one step's products, output-shaped
    fused: bool = False  # float sums as fused multiply-adds (the target's ``float_fma``)


def _allocate_transposed(ctx: PrepareContext, t: Tensor) -> None:
    """AllocInitTransposeTensorFromTfLiteTensor: the eval tensor, its dims, its data."""
    ctx.allocate_persistent(ctx.target.sizeof("TfLiteEvalTensor"))
    ctx.allocate_persistent(4 + 4 * len(t.shape))
    ctx.allocate_persistent(t.element_count * np.dtype(NUMPY_DTYPES[t.type]).itemsize)


def init(ctx: InitContext, op: Operator) -> None:
    """BatchMatMulInit: the OpDataBatchMatmul."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataBatchMatmul"))


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """BatchMatMulPrepare."""
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        raise KernelError(f"BATCH_MATMUL takes two inputs and one output; got "
                          f"{len(op.inputs)} and {len(op.outputs)}")
    for index in (op.inputs[LHS], op.inputs[RHS], op.outputs[OUTPUT]):
        ctx.allocate_temp_tensor(index)
    lhs, rhs = ctx.tensor(op.inputs[LHS]), ctx.tensor(op.inputs[RHS])
    out = ctx.tensor(op.outputs[OUTPUT])
    if lhs is None or rhs is None or out is None:
        raise KernelError("BATCH_MATMUL needs two input tensors and one output tensor")
    if lhs.type not in _TYPES or lhs.type != rhs.type or lhs.type != out.type:
        raise KernelError(f"BATCH_MATMUL supports float32, int8 and int16 (one type for all "
                          f"three tensors) in TFLM; got {lhs.type.name.lower()}, "
                          f"{rhs.type.name.lower()} -> {out.type.name.lower()}")
    for t in (lhs, rhs):
        if not MIN_RANK <= len(t.shape) <= MAX_RANK:
            raise KernelError(f"BATCH_MATMUL inputs need rank 2 to 5; {t.name!r} has shape "
                              f"{t.shape}")
    options = op.options if isinstance(op.options, BatchMatMulOptions) else BatchMatMulOptions()
    adj_x, adj_y = bool(options.adj_x), bool(options.adj_y)
    quantized = lhs.type != TensorType.FLOAT32
    if quantized:
        ctx.allocate_persistent(ctx.target.sizeof("QuantizationOpDataBatchMatmul"))
    if adj_x:
        _allocate_transposed(ctx, lhs)
    if not adj_y:
        _allocate_transposed(ctx, rhs)
    quant = None
    if quantized:
        (s_l, zp_l), (s_r, zp_r), (s_o, zp_o) = (tensor_quant(t) for t in (lhs, rhs, out))
        product = float(np.float32(np.float32(s_l) * np.float32(s_r)))
        multiplier, shift = quantize_multiplier(product / float(np.float32(s_o)))
        if lhs.type == TensorType.INT16 and (zp_l, zp_r, zp_o) != (0, 0, 0):
            raise KernelError("int16 BATCH_MATMUL needs zero points of 0 on every tensor")
        quant = QuantParams(multiplier, shift, zp_l, zp_r, zp_o)
    rank = max(len(lhs.shape), len(rhs.shape))
    ext_l = (1,) * (rank - len(lhs.shape)) + tuple(int(d) for d in lhs.shape)
    ext_r = (1,) * (rank - len(rhs.shape)) + tuple(int(d) for d in rhs.shape)
    batch = []
    for dl, dr in zip(ext_l[:-2], ext_r[:-2]):
        if dl != dr and dl != 1 and dr != 1:
            raise KernelError(f"BATCH_MATMUL: batch dimensions of {lhs.shape} and {rhs.shape} "
                              "do not broadcast")
        batch.append(dr if dl == 1 else dl)
    depth_l = ext_l[-2] if adj_x else ext_l[-1]
    depth_r = ext_r[-1] if adj_y else ext_r[-2]
    if depth_l != depth_r:
        raise KernelError(f"BATCH_MATMUL: the inner dimensions differ ({depth_l} and "
                          f"{depth_r}) for shapes {lhs.shape}, {rhs.shape} with adj_x="
                          f"{adj_x}, adj_y={adj_y}")
    if rank > len(out.shape):
        raise KernelError(f"BATCH_MATMUL: output rank {len(out.shape)} is below the inputs' "
                          f"{rank}")
    ctx.allocate_persistent(4 + 4 * len(out.shape))  # CreateWritableTensorDimsWithCopy
    rows = ext_l[-1] if adj_x else ext_l[-2]
    cols = ext_r[-2] if adj_y else ext_r[-1]
    out_shape = tuple(batch) + (rows, cols)
    if int(np.prod(out_shape)) != out.element_count:
        raise KernelError(f"BATCH_MATMUL: the result has shape {out_shape} but the output "
                          f"tensor {out.shape}; fix the output's shape")
    product = -1 if quantized else ctx.request_workspace(out_shape, np.float32,
                                                         persistent=False)
    fused = not quantized and bool(getattr(ctx.target, "float_fma", False))
    return OpData(lhs.type, adj_x, adj_y, ext_l, ext_r, out_shape, quant, product, fused)


@c_float_env
def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """BatchMatMulEval."""
    lhs = ctx.tensor_data(op.inputs[LHS]).reshape(data.lhs_shape)
    rhs = ctx.tensor_data(op.inputs[RHS]).reshape(data.rhs_shape)
    out = ctx.tensor_data(op.outputs[OUTPUT]).reshape(data.out_shape)
    if data.adj_x:
        lhs = np.swapaxes(lhs, -1, -2)
    if data.adj_y:
        rhs = np.swapaxes(rhs, -1, -2)
    if data.type == TensorType.FLOAT32:
        product = ctx.workspace(data.product)
        out[...] = 0.0  # the output is the accumulator (it never shares the inputs' memory)
        depth = int(np.shape(lhs)[-1])
        for k in range(depth):  # the reference's k order, one rounding per step
            if data.fused:  # total += a * b contracted into one fmaf (a build with float_fma)
                out[...] = fma32(lhs[..., :, k:k + 1], rhs[..., k:k + 1, :], out)
                continue
            np.multiply(lhs[..., :, k:k + 1], rhs[..., k:k + 1, :], out=product)
            out += product
        return
    q = data.quant
    if q is None:
        raise KernelError("internal error: a quantized BATCH_MATMUL was prepared without its "
                          "quantization parameters")
    acc = np.matmul(lhs.astype(np.int64) - q.lhs_zero_point,
                    rhs.astype(np.int64) - q.rhs_zero_point)
    if data.type == TensorType.INT8:
        scaled = multiply_by_quantized_multiplier(wrap_int32(acc), q.multiplier, q.shift)
    else:
        scaled = multiply_by_quantized_multiplier_int64(acc, q.multiplier, q.shift)
    lo, hi = qrange(NUMPY_DTYPES[data.type])
    out[...] = np.clip(wrap_int32(scaled + q.output_zero_point), lo, hi)


REGISTRATION = Registration("BATCH_MATMUL", init=init, prepare=prepare, eval=eval_,
                            builtin_data="TfLiteBatchMatMulParams")
