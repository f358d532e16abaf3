"""Serialising the builder's plain description of a model into .tflite flatbuffer bytes.

The builder collects frozen specs (tensors, operators, buffers, ...) and this module writes them
with ``flatbuffers.Builder`` the way the TFLite converter lays a model out: file identifier
"TFL3", schema version 3, buffer 0 the empty sentinel, buffer data aligned to 16 bytes (TFLM and
LiteRT read constants in place, so misaligned data would be read misaligned), both the
deprecated and the current builtin code written for every operator code.

Field numbers ("slots") below are the positions of the fields in the schema's tables
(tensorflow/compiler/mlir/lite/schema/schema.fbs); deprecated fields keep their slot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import flatbuffers
import numpy as np

from tinyarena.errors import BuildError

BUFFER_ALIGNMENT = 16
SCHEMA_VERSION = 3
FILE_IDENTIFIER = b"TFL3"


@dataclass(frozen=True)
class OptionField:
    """One field of an encoded options table: slot number, flatbuffer kind and value.

    ``kind`` is a scalar type as ``model._schema`` names them (``bool, int8, uint8, int16,
    uint16, int32, uint32, int64, uint64, float32, float64``), ``string``, or ``[kind]`` for a
    vector of scalars.
    """

    slot: int
    kind: str
    value: object
    default: object = None


@dataclass(frozen=True)
class OptionsTable:
    """An encoded builtin options table and the union type code that selects it."""

    union_type: int
    fields: tuple[OptionField, ...]
    union_slot: int = 3  # Operator.builtin_options_type; 11 (+ table at 12) for BuiltinOptions2


@dataclass(frozen=True)
class QuantSpec:
    scale: np.ndarray
    zero_point: np.ndarray
    quantized_dimension: int = 0
    min: np.ndarray | None = None
    max: np.ndarray | None = None


@dataclass(frozen=True)
class TensorSpec:
    name: str
    type: int
    shape: tuple[int, ...]
    buffer: int
    quantization: QuantSpec | None = None
    is_variable: bool = False
    shape_signature: tuple[int, ...] | None = None


@dataclass(frozen=True)
class OperatorSpec:
    opcode_index: int
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    intermediates: tuple[int, ...] = ()
    options: OptionsTable | None = None
    custom_options: bytes | None = None


@dataclass(frozen=True)
class OperatorCodeSpec:
    builtin_code: int
    custom_code: str | None
    version: int


@dataclass(frozen=True)
class SubgraphSpec:
    name: str
    tensors: tuple[TensorSpec, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    operators: tuple[OperatorSpec, ...]


@dataclass(frozen=True)
class SignatureSpec:
    key: str
    subgraph_index: int
    inputs: tuple[tuple[str, int], ...]
    outputs: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class ModelSpec:
    description: str
    operator_codes: tuple[OperatorCodeSpec, ...]
    subgraphs: tuple[SubgraphSpec, ...]
    buffers: tuple[bytes, ...]  # buffers[0] must be b"" (the sentinel)
    metadata: tuple[tuple[str, int], ...] = ()
    signature_defs: tuple[SignatureSpec, ...] = field(default=())


_SCALAR_NUMPY = {
    "bool": np.dtype("?"), "int8": np.dtype("i1"), "uint8": np.dtype("u1"),
    "int16": np.dtype("<i2"), "uint16": np.dtype("<u2"), "int32": np.dtype("<i4"),
    "uint32": np.dtype("<u4"), "int64": np.dtype("<i8"), "uint64": np.dtype("<u8"),
    "float32": np.dtype("<f4"), "float64": np.dtype("<f8"),
}

_PREPEND_SLOT = {
    "bool": "PrependBoolSlot", "int8": "PrependInt8Slot", "uint8": "PrependUint8Slot",
    "int16": "PrependInt16Slot", "uint16": "PrependUint16Slot", "int32": "PrependInt32Slot",
    "uint32": "PrependUint32Slot", "int64": "PrependInt64Slot", "uint64": "PrependUint64Slot",
    "float32": "PrependFloat32Slot", "float64": "PrependFloat64Slot",
}


def _vector(b: flatbuffers.Builder, values: Sequence[object] | np.ndarray, kind: str) -> int:
    array = np.ascontiguousarray(np.asarray(values, dtype=_SCALAR_NUMPY[kind]).reshape(-1))
    return b.CreateNumpyVector(array)


def _aligned_bytes(b: flatbuffers.Builder, data: bytes, alignment: int) -> int:
    """A [ubyte] vector whose first data byte is ``alignment``-aligned in the final file."""
    b.StartVector(1, len(data), alignment)
    b.head -= len(data)
    b.Bytes[b.head:b.head + len(data)] = data
    return b.EndVector()


def _offset_vector(b: flatbuffers.Builder, offsets: Sequence[int]) -> int:
    b.StartVector(4, len(offsets), 4)
    for off in reversed(offsets):
        b.PrependUOffsetTRelative(off)
    return b.EndVector()


def _write_options(b: flatbuffers.Builder, table: OptionsTable) -> int:
    """The options table's offset; vectors and strings are written before the table starts."""
    children: dict[int, int] = {}
    for f in table.fields:
        if f.kind == "string":
            if f.value is not None:
                children[f.slot] = b.CreateString(str(f.value))
        elif f.kind.startswith("["):
            if isinstance(f.value, (list, tuple, np.ndarray)):
                children[f.slot] = _vector(b, f.value, f.kind[1:-1])
            elif f.value is not None:
                raise BuildError(f"options slot {f.slot} is a {f.kind} vector but holds "
                                 f"{type(f.value).__name__}; give a list of values")
    slots = max((f.slot for f in table.fields), default=-1) + 1
    b.StartObject(slots)
    # Larger scalars first, like flatc's generated builders, so the table packs tightly.
    for f in sorted(table.fields, key=lambda f: -_SCALAR_NUMPY.get(f.kind, np.dtype("<u4"))
                    .itemsize):
        if f.slot in children:
            b.PrependUOffsetTRelativeSlot(f.slot, children[f.slot], 0)
        elif f.kind in _PREPEND_SLOT and f.value is not None:
            value = f.value
            default = f.default
            if f.kind == "bool":
                value, default = bool(value), (None if default is None else bool(default))
            getattr(b, _PREPEND_SLOT[f.kind])(f.slot, value, default)
    return b.EndObject()


def _write_quantization(b: flatbuffers.Builder, q: QuantSpec) -> int:
    min_off = _vector(b, q.min, "float32") if q.min is not None else None
    max_off = _vector(b, q.max, "float32") if q.max is not None else None
    scale_off = _vector(b, q.scale, "float32")
    zp_off = _vector(b, q.zero_point, "int64")
    b.StartObject(7)
    if min_off is not None:
        b.PrependUOffsetTRelativeSlot(0, min_off, 0)
    if max_off is not None:
        b.PrependUOffsetTRelativeSlot(1, max_off, 0)
    b.PrependUOffsetTRelativeSlot(2, scale_off, 0)
    b.PrependUOffsetTRelativeSlot(3, zp_off, 0)
    b.PrependInt32Slot(6, int(q.quantized_dimension), 0)
    return b.EndObject()


def _write_tensor(b: flatbuffers.Builder, t: TensorSpec) -> int:
    shape_off = _vector(b, t.shape, "int32")
    name_off = b.CreateString(t.name)
    quant_off = _write_quantization(b, t.quantization) if t.quantization is not None else None
    sig_off = (_vector(b, t.shape_signature, "int32") if t.shape_signature is not None else None)
    b.StartObject(8)
    b.PrependUOffsetTRelativeSlot(0, shape_off, 0)
    b.PrependInt8Slot(1, int(t.type), 0)
    b.PrependUint32Slot(2, int(t.buffer), 0)
    b.PrependUOffsetTRelativeSlot(3, name_off, 0)
    if quant_off is not None:
        b.PrependUOffsetTRelativeSlot(4, quant_off, 0)
    b.PrependBoolSlot(5, bool(t.is_variable), False)
    if sig_off is not None:
        b.PrependUOffsetTRelativeSlot(7, sig_off, 0)
    return b.EndObject()


def _write_operator(b: flatbuffers.Builder, op: OperatorSpec) -> int:
    inputs_off = _vector(b, op.inputs, "int32")
    outputs_off = _vector(b, op.outputs, "int32")
    inter_off = _vector(b, op.intermediates, "int32") if op.intermediates else None
    custom_off = (_vector(b, np.frombuffer(op.custom_options, np.uint8), "uint8")
                  if op.custom_options is not None else None)
    options_off = _write_options(b, op.options) if op.options is not None else None
    b.StartObject(12)
    b.PrependUint32Slot(0, op.opcode_index, 0)
    b.PrependUOffsetTRelativeSlot(1, inputs_off, 0)
    b.PrependUOffsetTRelativeSlot(2, outputs_off, 0)
    if op.options is not None and options_off is not None:
        union_slot = op.options.union_slot
        b.PrependUint8Slot(union_slot, op.options.union_type, 0)
        b.PrependUOffsetTRelativeSlot(union_slot + 1, options_off, 0)
    if custom_off is not None:
        b.PrependUOffsetTRelativeSlot(5, custom_off, 0)
    if inter_off is not None:
        b.PrependUOffsetTRelativeSlot(8, inter_off, 0)
    return b.EndObject()


def _write_subgraph(b: flatbuffers.Builder, sg: SubgraphSpec) -> int:
    tensors = _offset_vector(b, [_write_tensor(b, t) for t in sg.tensors])
    inputs = _vector(b, sg.inputs, "int32")
    outputs = _vector(b, sg.outputs, "int32")
    operators = _offset_vector(b, [_write_operator(b, op) for op in sg.operators])
    name = b.CreateString(sg.name)
    b.StartObject(5)
    b.PrependUOffsetTRelativeSlot(0, tensors, 0)
    b.PrependUOffsetTRelativeSlot(1, inputs, 0)
    b.PrependUOffsetTRelativeSlot(2, outputs, 0)
    b.PrependUOffsetTRelativeSlot(3, operators, 0)
    b.PrependUOffsetTRelativeSlot(4, name, 0)
    return b.EndObject()


def _write_operator_code(b: flatbuffers.Builder, code: OperatorCodeSpec) -> int:
    custom = b.CreateString(code.custom_code) if code.custom_code is not None else None
    b.StartObject(4)
    # The converter writes both: old readers look at deprecated_builtin_code (a byte, capped at
    # PLACEHOLDER_FOR_GREATER_OP_CODES = 127), new readers take the larger of the two.
    b.PrependInt8Slot(0, min(code.builtin_code, 127), 0)
    if custom is not None:
        b.PrependUOffsetTRelativeSlot(1, custom, 0)
    b.PrependInt32Slot(2, code.version, 1)
    b.PrependInt32Slot(3, code.builtin_code, 0)
    return b.EndObject()


def _write_tensor_map(b: flatbuffers.Builder, name: str, index: int) -> int:
    name_off = b.CreateString(name)
    b.StartObject(2)
    b.PrependUOffsetTRelativeSlot(0, name_off, 0)
    b.PrependUint32Slot(1, index, 0)
    return b.EndObject()


def _write_signature(b: flatbuffers.Builder, sig: SignatureSpec) -> int:
    inputs = _offset_vector(b, [_write_tensor_map(b, n, i) for n, i in sig.inputs])
    outputs = _offset_vector(b, [_write_tensor_map(b, n, i) for n, i in sig.outputs])
    key = b.CreateString(sig.key)
    b.StartObject(5)
    b.PrependUOffsetTRelativeSlot(0, inputs, 0)
    b.PrependUOffsetTRelativeSlot(1, outputs, 0)
    b.PrependUOffsetTRelativeSlot(2, key, 0)
    b.PrependUint32Slot(4, sig.subgraph_index, 0)
    return b.EndObject()


def _write_buffer(b: flatbuffers.Builder, data: bytes) -> int:
    data_off = _aligned_bytes(b, data, BUFFER_ALIGNMENT) if data else None
    b.StartObject(1)
    if data_off is not None:
        b.PrependUOffsetTRelativeSlot(0, data_off, 0)
    return b.EndObject()


def write_model(spec: ModelSpec) -> bytes:
    """Serialise ``spec`` into the bytes of a .tflite file."""
    size_hint = sum(len(d) + BUFFER_ALIGNMENT for d in spec.buffers) + 4096
    b = flatbuffers.Builder(size_hint)
    # Buffers are written first so that they end up at the end of the file, as the converter
    # lays them out; their data is the bulk of the file and tables then sit close together.
    buffers = _offset_vector(b, [_write_buffer(b, d) for d in spec.buffers])
    codes = _offset_vector(b, [_write_operator_code(b, c) for c in spec.operator_codes])
    subgraphs = _offset_vector(b, [_write_subgraph(b, sg) for sg in spec.subgraphs])
    description = b.CreateString(spec.description)
    metadata_offs = []
    for name, buffer_index in spec.metadata:
        name_off = b.CreateString(name)
        b.StartObject(2)
        b.PrependUOffsetTRelativeSlot(0, name_off, 0)
        b.PrependUint32Slot(1, buffer_index, 0)
        metadata_offs.append(b.EndObject())
    metadata = _offset_vector(b, metadata_offs) if spec.metadata else None
    signatures = (_offset_vector(b, [_write_signature(b, s) for s in spec.signature_defs])
                  if spec.signature_defs else None)
    b.StartObject(8)
    b.PrependUint32Slot(0, SCHEMA_VERSION, 0)
    b.PrependUOffsetTRelativeSlot(1, codes, 0)
    b.PrependUOffsetTRelativeSlot(2, subgraphs, 0)
    b.PrependUOffsetTRelativeSlot(3, description, 0)
    b.PrependUOffsetTRelativeSlot(4, buffers, 0)
    if metadata is not None:
        b.PrependUOffsetTRelativeSlot(6, metadata, 0)
    if signatures is not None:
        b.PrependUOffsetTRelativeSlot(7, signatures, 0)
    root = b.EndObject()
    b.Finish(root, file_identifier=FILE_IDENTIFIER)
    return bytes(b.Output())
