"""TFLM_DECODE: TFLM's decode.cc (the custom op that expands compressed constant tensors:
``decode_state_lut.cc``, ``decode_state_prune.cc``, ``decode_state_huffman.cc``).

Inputs come in pairs (encoded data, ancillary data), one pair per output; both are constants.
The ancillary tensor starts with a 16-byte header (byte 0: decode type, 0 LUT / 1 Huffman /
2 prune; byte 1: header version 1; byte 4: the decoder's own version 1), then its tables.

Allocation: no builtin struct, no init; prepare allocates persistently an array of
``num_outputs`` pointers (DecodeState*), then for each pair takes temp tensors input, ancillary,
output and allocates the decoder object (a C++ class: vtable pointer, context and profiler
pointers, then its fields: ``DecodeStateLut``, ``DecodeStatePrune`` or ``DecodeStateHuffman``
per target); then it places the output in the interpreter's alternate decompression memory
when there is one and the output fits (SetOutputTensorData; offsets restart at 0 in every
DECODE's Prepare, so the outputs of different DECODE operators share that memory); the prune
decoder also copies per-channel int8 zero points into a persistent buffer when there are
several channels and one is not zero.

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
LUT, HUFFMAN, PRUNE = 0, 1, 2
_STATE_STRUCT = {LUT: "DecodeStateLut", HUFFMAN: "DecodeStateHuffman",
                 PRUNE: "DecodeStatePrune"}
_VALUE_TYPES = (TensorType.BOOL, TensorType.FLOAT32, TensorType.INT8, TensorType.INT16,
                TensorType.INT32, TensorType.INT64)


@dataclass(frozen=True)
class DecodeData:
    """Workspace handle of each output's decoded values (-1: nothing to copy), and why an
    output could not be decoded (raised at eval: TFLM's Prepare never decodes, so a bad
    stream must not stop the arena from being sized)."""

    workspaces: tuple[int, ...]
    errors: tuple[str, ...]


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


@dataclass(frozen=True)
class HuffmanEntry:
    """The bit fields of one Huffman table entry (16- or 32-bit tables)."""

    found_mask: int  # set: the entry is a symbol
    count_mask: int  # symbol: bits of the last lookup it uses; link: bits to read next - 1
    count_shift: int
    value_mask: int  # symbol value, or the offset of the next table
    dtype: np.dtype


_HUFFMAN_FIELDS = {
    False: HuffmanEntry(0x8000, 0x7800, 11, 0x07FF, np.dtype("<u2")),
    True: HuffmanEntry(0x80000000, 0x78000000, 27, 0x07FFFFFF, np.dtype("<u4")),
}
_MAX_TABLE_LEVELS = 32  # more lookups than bits in a word: a malformed (cyclic) table


def _bit_windows(bits: np.ndarray) -> np.ndarray:
    """For every bit position p, the 32 bits starting at p as one integer (MSB = bit p)."""
    padded = np.concatenate([bits.astype(np.uint64), np.zeros(64, np.uint64)])
    n = bits.size + 32
    windows = np.zeros(n, np.uint64)
    for j in range(32):
        windows |= padded[j:j + n] << np.uint64(31 - j)
    return windows


def _huffman_steps(bits: np.ndarray, table: np.ndarray, initial_bits: int,
                   fields: HuffmanEntry) -> tuple[np.ndarray, np.ndarray]:
    """The symbol decoded from every start position, and where the next symbol starts
    (DecompressToBufferWith16/32BitTable, for all positions at once)."""
    found_mask, count_mask = fields.found_mask, fields.count_mask
    count_shift, value_mask = fields.count_shift, fields.value_mask
    windows = _bit_windows(bits)
    starts = np.arange(bits.size + 1, dtype=np.int64)
    limit = windows.size - 1

    def take(pos: np.ndarray, k: np.ndarray) -> np.ndarray:
        w = windows[np.minimum(pos, limit)]
        return (w >> (np.uint64(32) - k.astype(np.uint64))).astype(np.int64)

    used = np.full(starts.size, initial_bits, np.int64)
    offset = take(starts, used)
    pos = starts + used
    bad = offset >= table.size
    value = table[np.where(bad, 0, offset)].astype(np.int64)
    for _ in range(_MAX_TABLE_LEVELS):
        walking = ((value & found_mask) == 0) & ~bad
        if not walking.any():
            break
        k = ((value[walking] & count_mask) >> count_shift) + 1
        index = take(pos[walking], k)
        pos[walking] += k
        used[walking] = k
        offset[walking] += (value[walking] & value_mask) + index
        now_bad = offset >= table.size
        bad |= now_bad
        value[walking] = table[np.where(now_bad[walking], 0, offset[walking])]
    bad |= (value & found_mask) == 0
    residual = (value & count_mask) >> count_shift
    following = pos - np.where(used > residual, used - residual, 0)
    following = np.clip(following, 0, bits.size)  # the end absorbs
    return np.where(bad, -1, value), np.where(bad, bits.size, following)


def decode_huffman(encoded: np.ndarray, ancillary: np.ndarray, out: Tensor) -> np.ndarray:
    """DecodeStateHuffman: table-driven prefix codes over a big-endian 32-bit word stream
    (which is the bytes in memory order, most significant bit first); int8 or int16."""
    if out.type not in (TensorType.INT8, TensorType.INT16):
        raise KernelError(f"TFLM_DECODE: unsupported tensor type {out.type.name}")
    if ancillary[4] != 1:
        raise KernelError(f"TFLM_DECODE: unsupported Huffman version {ancillary[4]}")
    table32 = bool(ancillary[5] & 0x01)
    initial_bits = ((int(ancillary[5]) & 0xF0) >> 4) + 1
    fields = _HUFFMAN_FIELDS[table32]
    raw = ancillary[HEADER_BYTES:]
    size = fields.dtype.itemsize
    table = raw[:raw.size // size * size].view(fields.dtype)
    count = out.element_count
    data = np.ascontiguousarray(encoded).reshape(-1).view(np.uint8)
    words = np.concatenate([data, np.zeros(-data.size % 4, np.uint8)])  # whole uint32 reads
    symbols, following = _huffman_steps(_bits(words), table, initial_bits, fields)
    # Position of symbol i = following applied i times to 0: doubling (jump tables) instead of
    # a loop per symbol.
    position = np.zeros(count, np.int64)
    jump = following
    step = np.arange(count, dtype=np.int64)
    bit = 0
    while (1 << bit) < max(count, 1):
        chosen = ((step >> bit) & 1).astype(bool)
        position[chosen] = jump[position[chosen]]
        jump = jump[jump]
        bit += 1
    picked = symbols[position]
    if np.any(picked < 0):
        raise KernelError("TFLM_DECODE: the Huffman stream does not decode with its table")
    dtype = _storage_dtype(out)
    return (picked & ((1 << (8 * dtype.itemsize)) - 1)).astype(np.uint64).astype(
        dtype.str.replace("i", "u")).view(dtype).reshape(out.shape)


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
    ctx.reset_decompression_memory()
    handles = []
    errors = []
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
        ctx.decompress_into_alternate_memory(op.outputs[k])  # SetOutputTensorData
        if out.type not in _VALUE_TYPES:
            raise KernelError(f"TFLM_DECODE: unsupported tensor type {out.type.name}")
        if kind == PRUNE:
            channels, _, zero_points = _channels(out)
            if channels > 1 and np.any(zero_points[:channels] != 0) \
                    and out.type == TensorType.INT8:
                ctx.allocate_persistent(channels)  # zero_points_ copy
        if kind == HUFFMAN:
            table32 = bool(ancillary[5] & 0x01)
            if not table32 and out.type != TensorType.INT8:
                raise KernelError("TFLM_DECODE: a 16-bit Huffman table decodes int8 only")
        decoder = {LUT: decode_lut, PRUNE: decode_prune, HUFFMAN: decode_huffman}[kind]
        try:
            values = decoder(encoded.data, ancillary, out)
        except KernelError as exc:
            handles.append(-1)
            errors.append(str(exc))
            continue
        dtype = _storage_dtype(out)
        flat = np.ascontiguousarray(values.reshape(-1).view(dtype))
        handles.append(ctx.request_workspace(flat.shape, dtype, initial=flat)
                       if flat.size else -1)
        errors.append("")
    return DecodeData(tuple(handles), tuple(errors))


def eval_(ctx: EvalContext, op: Operator, data: DecodeData) -> None:
    for k, (handle, error) in enumerate(zip(data.workspaces, data.errors)):
        if error:
            raise KernelError(f"{error} (output {k}); the arena is sized all the same")
        if handle < 0:
            continue
        out = ctx.tensor_data(op.outputs[k])
        values = ctx.workspace(handle)
        out.reshape(-1).view(values.dtype)[...] = values


REGISTRATION = Registration("TFLM_DECODE", init=None, prepare=prepare, eval=eval_,
                            builtin_data=None)
