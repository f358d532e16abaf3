"""MEAN and SUM arithmetic: TFLM's reduce_common.cc with reference/reduce.h.

float32: each output is the sum of its inputs taken in the input's row-major order, in
float32 (TFLM's Reduce loop walks the input once and adds into the output), then for MEAN
divided by the float element count. The 4-D "mean over height and width with keep_dims"
special case (reference_ops::Mean 4-D) sums in the same order, so it gives the same bits.
int8/int16: an int32 sum of the raw values, minus zero_point * count, rescaled by
MultiplyByQuantizedMultiplier; for MEAN the multiplier absorbs 1/count
(QuantizedMeanOrSum: multiplier << floor(log2(count)) / count, with the shift clamped).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._fixedpoint import (
    multiply_by_quantized_multiplier_inplace,
    wrap_int32_inplace,
)
from tinyarena.kernels._quant import quantize_multiplier, tensor_quant
from tinyarena.model.types import NUMPY_DTYPES, Tensor, TensorType

_F32, _I8, _I16 = TensorType.FLOAT32, TensorType.INT8, TensorType.INT16


@dataclass(frozen=True)
class ReduceOpData:
    """OpDataReduce: multiplier/shift (quantized) and the zero points.

    ``workspace`` is the handle of the flat buffer made at prepare (see ``workspace_layout``;
    -1 when there is none): eval copies the input into it as (reduced elements, outputs),
    accumulates in place and rescales in place, so an invoke allocates nothing of the input's
    size.
    """

    op: str  # "MEAN" or "SUM"
    type: TensorType
    multiplier: int = 0
    shift: int = 0
    input_zero_point: int = 0
    output_zero_point: int = 0
    workspace: int = -1


def workspace_layout(data: ReduceOpData, in_shape: tuple[int, ...],
                     axis_values: np.ndarray | None) -> tuple[tuple[int], np.dtype]:
    """Length and dtype of the flat eval workspace.

    It holds the input as (reduced elements, outputs) plus one spare row of outputs (the
    quantized rescale's temporary). With a constant axis that is (k + 1) * outputs; with an
    axis read at eval it is sized for the worst case, input elements + outputs <= 2 * input.
    """
    rank = len(in_shape)
    total = int(np.prod(in_shape, dtype=np.int64))
    if axis_values is None:
        size = 2 * max(total, 1)
    else:
        axes = resolve_axes(axis_values, rank, data.op) if rank else ()
        n_out = int(np.prod([in_shape[i] for i in range(rank) if i not in axes],
                            dtype=np.int64))
        size = total + max(n_out, 1)
    dtype = np.dtype(np.float32) if data.type == _F32 else np.dtype(np.int64)
    return (size,), dtype


def reduce_op_data(op_name: str, inp: Tensor, out: Tensor, axis: Tensor) -> ReduceOpData:
    """PrepareMeanOrSumHelper: the input/output scale ratio for quantized types."""
    if axis.type != TensorType.INT32:
        raise KernelError(f"{op_name} needs an int32 axis tensor, got {axis.type.name.lower()}")
    if inp.type not in (_F32, _I8, _I16) or out.type != inp.type:
        raise KernelError(f"{op_name} supports float32, int8 and int16 with equal input and "
                          f"output types, got {inp.type.name.lower()} -> {out.type.name.lower()}")
    if inp.type == _F32:
        return ReduceOpData(op_name, inp.type)
    iq, oq = tensor_quant(inp), tensor_quant(out)
    multiplier, shift = quantize_multiplier(float(iq.scale) / float(oq.scale))
    return ReduceOpData(op_name, inp.type, multiplier, shift, iq.zero_point, oq.zero_point)


def resolve_axes(axis_values: np.ndarray, rank: int, op_name: str) -> tuple[int, ...]:
    """reference_ops::ResolveAxis: negative axes wrap, duplicates drop; sorted for numpy."""
    resolved: list[int] = []
    for a in np.asarray(axis_values).reshape(-1).tolist():
        current = a + rank if a < 0 else a
        if not 0 <= current < rank:
            raise KernelError(f"{op_name}: axis {a} is out of range for a rank-{rank} input")
        if current not in resolved:
            resolved.append(current)
    return tuple(sorted(resolved))


def _columns(x: np.ndarray, axes: tuple[int, ...],
             work: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The input as (reduced elements, outputs): reduced axes first, kept axes last, each
    group in input order, copied (and widened) into ``work`` when given; plus a spare row."""
    kept = tuple(i for i in range(x.ndim) if i not in axes)
    shape = x.shape
    k = 1
    for i in axes:
        k *= shape[i]
    n_out = 1
    for i in kept:
        n_out *= shape[i]
    moved = np.transpose(x, axes + kept)
    if work is None:
        work = np.empty(k * n_out + n_out, np.float32 if x.dtype == np.float32 else np.int64)
    cols = work[:k * n_out]
    np.copyto(cols.reshape(moved.shape), moved)
    return cols.reshape(k, n_out), work[k * n_out:k * n_out + n_out]


def reduce(x: np.ndarray, axis_values: np.ndarray, data: ReduceOpData, out: np.ndarray,
           work: np.ndarray | None = None) -> None:
    """EvalMeanHelper / EvalSumHelper, written into ``out`` (outputs in row-major order).

    ``work`` is the prepare-time flat workspace (see ``workspace_layout``); without it the same
    buffer is allocated here. With it, nothing of the input's size is allocated: the sums
    accumulate in place and the quantized rescale runs in place on the last row.
    """
    axes = resolve_axes(axis_values, x.ndim, data.op) if x.ndim else ()
    if x.ndim:
        cols, spare = _columns(x, axes, work)
    else:
        cols = x.reshape(1, 1).astype(np.float32 if data.type == _F32 else np.int64)
        spare = np.empty(1, cols.dtype)
    count = cols.shape[0]
    if count == 0:
        out[...] = 0
        return
    np.add.accumulate(cols, axis=0, out=cols)  # in place, sequential per output, as TFLM adds
    total = cols[-1]
    if data.type == _F32:
        # TFLM's sums start from 0.0f, numpy's from the first element: an all -0.0 column
        # sums to +0.0 there (adding +0.0 at the end changes nothing else)
        total += np.float32(0)
        if data.op == "MEAN":
            np.divide(total.reshape(out.shape), np.float32(count), out=out)
        else:
            out[...] = total.reshape(out.shape)
        return
    _requantize_sums_inplace(total, count, data, spare)
    np.copyto(out.reshape(-1), total, casting="unsafe")


def mean_multiplier(count: int, data: ReduceOpData) -> tuple[int, int]:
    """QuantizedMeanOrSum: the multiplier and shift with 1/count folded in (MEAN only)."""
    multiplier, shift = data.multiplier, data.shift
    if data.op == "MEAN":
        extra = min(count.bit_length() - 1, 32, 31 + shift)
        multiplier = int((multiplier << extra) // count) if extra >= 0 else \
            int((multiplier >> -extra) // count)
        shift -= extra
    return multiplier, shift


def _requantize_sums_inplace(temp_sum: np.ndarray, count: int, data: ReduceOpData,
                             tmp: np.ndarray) -> None:
    """QuantizedMeanOrSum after the summation, in place on the int64 sums: zero-point
    correction (wrapped as int32), rescaling, output offset and clamp to the type's range."""
    info = np.iinfo(NUMPY_DTYPES[data.type])
    temp_sum -= data.input_zero_point * count
    wrap_int32_inplace(temp_sum)
    multiplier, shift = mean_multiplier(count, data)
    multiply_by_quantized_multiplier_inplace(temp_sum, multiplier, shift, tmp)
    temp_sum += data.output_zero_point
    np.maximum(temp_sum, int(info.min), out=temp_sum)
    np.minimum(temp_sum, int(info.max), out=temp_sum)


__all__ = ["ReduceOpData", "mean_multiplier", "reduce", "reduce_op_data", "resolve_axes",
           "workspace_layout"]
