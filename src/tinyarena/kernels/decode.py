"""TFLM_DECODE: TFLM's decode.cc (the custom op that expands compressed constant tensors:
``decode_state_lut.cc``, ``decode_state_prune.cc``, ``decode_state_huffman.cc``).

Inputs come in pairs (encoded data, ancillary data), one pair per output; both are constants.
The ancillary tensor starts with a 16-byte header (byte 0: decode type, 0 LUT / 1 Huffman /
2 prune; byte 1: header version 1; byte 4: the decoder's own version 1), then its tables.

Allocation: no builtin struct, no init; prepare allocates persistently an array of
``num_outputs`` pointers (DecodeState*), then for each pair takes temp tensors input, ancillary,
output and allocates the decoder object (a C++ class: vtable pointer, context and profiler
pointers, then its fields: ``DecodeStateLut``, ``DecodeStatePrune`` or ``DecodeStateHuffman``
per target); the prune decoder also copies per-channel int8 zero points into a persistent
buffer when there are several channels and one is not zero.

The decoded values depend only on constants, so prepare decodes once into a read-only
workspace and eval copies it into the output (TFLM decodes at every invoke; the bytes are the
same).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels.base import EvalContext, PrepareContext, Registration, required_tensor
from tinyarena.model.types import NUMPY_DTYPES, Operator, Tensor, TensorType

HEADER_BYTES = 16  # DecodeState::kDcmSizeInBytes
HUFFMAN_NOT_PORTED = -2  # workspace handle marking an output whose decoder is not ported
LUT, HUFFMAN, PRUNE = 0, 1, 2
_STATE_STRUCT = {LUT: "DecodeStateLut", HUFFMAN: "DecodeStateHuffman",
                 PRUNE: "DecodeStatePrune"}
_VALUE_TYPES = (TensorType.BOOL, TensorType.FLOAT32, TensorType.INT8, TensorType.INT16,
                TensorType.INT32, TensorType.INT64)


@dataclass(frozen=True)
class DecodeData:
    """Workspace handle of each output's decoded values (-1: nothing to copy)."""

    workspaces: tuple[int, ...]


def _channels(out: Tensor) -> tuple[int, bool, np.ndarray]:
    """(channels, alternate axis, zero points) as the decoders' Setup reads the output's
    affine quantization: channels on axis 0, or on the last axis when there are several."""
    q = out.quantization
    if q is None or len(q.scale) == 0:
        return 1, False, np.zeros(1, np.int64)
    channels = len(q.scale)
    zero_points = np.asarray(q.zero_point, np.int64)
    if len(zero_points) == 0:
        zero_points = np.zeros(1, np.int64)
    if q.quantized_dimension == len(out.shape) - 1 and channels > 1:
        return channels, True, zero_points
    if q.quantized_dimension != 0:
        raise KernelError(f"TFLM_DECODE: unsupported quantization axis {q.quantized_dimension}")
    return channels, False, zero_points


def _channel_of(count: int, channels: int, alternate: bool) -> np.ndarray:
    positions = np.arange(count, dtype=np.int64)
    if alternate:
        return positions % channels
    return positions // max(count // channels, 1)


def _storage_dtype(out: Tensor) -> np.dtype:
    return np.dtype(np.int8) if out.type == TensorType.BOOL else np.dtype(NUMPY_DTYPES[out.type])


def _bits(data: np.ndarray) -> np.ndarray:
    """The encoded bytes as a most-significant-bit-first bit string."""
    return np.unpackbits(np.ascontiguousarray(data).reshape(-1).view(np.uint8))


def decode_lut(encoded: np.ndarray, ancillary: np.ndarray, out: Tensor) -> np.ndarray:
    """DecodeStateLut: ``width``-bit table indices, MSB first, into per-channel value tables
    of ``stride`` entries."""
    if ancillary[4] != 1:
        raise KernelError(f"TFLM_DECODE: unsupported LUT version {ancillary[4]}")
    width = int(ancillary[5]) & 0x07
    stride = int(ancillary[6])
    if not 1 <= width <= 7:
        raise KernelError(f"TFLM_DECODE: LUT index width {width} is not 1..7")
    count = out.element_count
    channels, alternate, _ = _channels(out)
    bits = _bits(encoded)
    if bits.size < count * width:
        raise KernelError("TFLM_DECODE: the encoded tensor holds fewer indices than the output")
    weights = (1 << np.arange(width - 1, -1, -1)).astype(np.int64)
    indices = bits[:count * width].reshape(count, width).astype(np.int64) @ weights
    dtype = _storage_dtype(out)
    table = ancillary[HEADER_BYTES:]
    table = table[:table.size // dtype.itemsize * dtype.itemsize].view(dtype)
    where = _channel_of(count, channels, alternate) * stride + indices
    if where.size and where.max() >= table.size:
        raise KernelError("TFLM_DECODE: a LUT index points past the value table")
    return table[where].reshape(out.shape)


def decode_prune(encoded: np.ndarray, ancillary: np.ndarray, out: Tensor) -> np.ndarray:
    """DecodeStatePrune: one bit per element, MSB first; a set bit takes the next stored
    value, a clear one the zero point (per channel for int8 with several non-zero ones)."""
    if ancillary[4] != 1:
        raise KernelError(f"TFLM_DECODE: unsupported prune version {ancillary[4]}")
    count = out.element_count
    channels, alternate, zero_points = _channels(out)
    per_channel = channels > 1 and bool(np.any(zero_points[:channels] != 0))
    if per_channel and out.type != TensorType.INT8:
        raise KernelError("All zero-points must be zero")
    # float32 is decoded as its int32 bits, bool as int8 (DecodeStatePrune::Decode).
    dtype = {TensorType.FLOAT32: np.dtype(np.int32)}.get(out.type, _storage_dtype(out))
    kept = _bits(encoded)[:count].astype(bool)
    if kept.size < count:
        raise KernelError("TFLM_DECODE: the prune mask is shorter than the output")
    values = ancillary[HEADER_BYTES:]
    values = values[:values.size // dtype.itemsize * dtype.itemsize].view(dtype)
    n_kept = int(kept.sum())
    if n_kept > values.size:
        raise KernelError("TFLM_DECODE: the prune mask keeps more values than are stored")
    if per_channel:
        fill = zero_points[_channel_of(count, channels, alternate)].astype(np.int8)
    else:
        fill = np.full(count, np.int8(zero_points[0]), dtype=np.int8)
    result = fill.astype(dtype)
    result[kept] = values[:n_kept]
    return result.view(_storage_dtype(out)).reshape(out.shape)


def _state_struct(kind: int) -> str:
    struct = _STATE_STRUCT.get(kind)
    if struct is None:
        raise KernelError(f"TFLM_DECODE: unsupported decode type {kind}")
    return struct


def prepare(ctx: PrepareContext, op: Operator) -> DecodeData:
    """Prepare: the DecodeState* array, then per output its temps, decoder and Setup."""
    n_out, n_in = len(op.outputs), len(op.inputs)
    if n_out == 0 or n_in != 2 * n_out:
        raise KernelError("TFLM_DECODE takes two inputs (encoded, ancillary) per output")
    ctx.allocate_persistent(n_out * ctx.target.sizeof("void*"))
    handles = []
    for k in range(n_out):
        ctx.allocate_temp_tensor(op.inputs[2 * k])
        ctx.allocate_temp_tensor(op.inputs[2 * k + 1])
        ctx.allocate_temp_tensor(op.outputs[k])
        encoded = required_tensor(ctx, op.inputs[2 * k], op.name, "encoded")
        ancillary_t = required_tensor(ctx, op.inputs[2 * k + 1], op.name, "ancillary")
        out = required_tensor(ctx, op.outputs[k], op.name, "output")
        if encoded.data is None or ancillary_t.data is None:
            raise KernelError("TFLM_DECODE: encoded and ancillary tensors must be constants")
        ancillary = np.ascontiguousarray(ancillary_t.data).reshape(-1).view(np.uint8)
        if ancillary.size < HEADER_BYTES or ancillary[1] != 1:
            raise KernelError("TFLM_DECODE: the ancillary tensor lacks a version-1 header")
        kind = int(ancillary[0])
        ctx.allocate_persistent(ctx.target.sizeof(_state_struct(kind)))
        if out.type not in _VALUE_TYPES:
            raise KernelError(f"TFLM_DECODE: unsupported tensor type {out.type.name}")
        if kind == LUT:
            values = decode_lut(encoded.data, ancillary, out)
        elif kind == PRUNE:
            channels, _, zero_points = _channels(out)
            if channels > 1 and np.any(zero_points[:channels] != 0) \
                    and out.type == TensorType.INT8:
                ctx.allocate_persistent(channels)  # zero_points_ copy
            values = decode_prune(encoded.data, ancillary, out)
        else:
            table32 = bool(ancillary[5] & 0x01)
            if not table32 and out.type != TensorType.INT8:
                raise KernelError("TFLM_DECODE: a 16-bit Huffman table decodes int8 only")
            if out.type not in (TensorType.INT8, TensorType.INT16):
                raise KernelError(f"TFLM_DECODE: Huffman decoding of {out.type.name} is not "
                                  f"supported by TFLM")
            handles.append(HUFFMAN_NOT_PORTED)
            continue
        dtype = _storage_dtype(out)
        flat = np.ascontiguousarray(values.reshape(-1).view(dtype))
        handles.append(ctx.request_workspace(flat.shape, dtype, initial=flat)
                       if flat.size else -1)
    return DecodeData(tuple(handles))


def eval_(ctx: EvalContext, op: Operator, data: DecodeData) -> None:
    for k, handle in enumerate(data.workspaces):
        if handle == HUFFMAN_NOT_PORTED:
            raise KernelError("TFLM_DECODE: Huffman-coded tensors are sized exactly but not "
                              "decoded by tinyarena yet, so this model cannot run here; "
                              "`tinyarena size`, `plan` and `optimize` still work")
        if handle < 0:
            continue
        out = ctx.tensor_data(op.outputs[k])
        values = ctx.workspace(handle)
        out.reshape(-1).view(values.dtype)[...] = values


REGISTRATION = Registration("TFLM_DECODE", init=None, prepare=prepare, eval=eval_,
                            builtin_data=None)
