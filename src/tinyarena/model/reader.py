"""Read a .tflite flatbuffer into the frozen ``tinyarena.model.types`` dataclasses.

The reader walks the file with the bounds-checked table reader of ``_flatbuf`` and the schema
description of ``_schema``; nothing is generated and neither the ``tflite`` package nor the
runtime's generated accessors are used, so every defect surfaces as one ``ModelError`` that says
what is wrong and where. Constant data, buffers and quantization arrays are read-only views into
the source bytes (zero copy). Beyond the flatbuffer's own structure the reader checks what TFLM
relies on without checking: tensor, buffer and operator-code indices in range, constant buffers
large enough for their tensor's shape.
"""

from __future__ import annotations

import os
from typing import Union

import numpy as np

from tinyarena.errors import ModelError
from tinyarena.model._flatbuf import FlatBuffer, Table
from tinyarena.model._schema import ENUMS, FILE_IDENTIFIER
from tinyarena.model.options import decode_operator_options
from tinyarena.model.types import (
    NUMPY_DTYPES,
    Model,
    Operator,
    Quantization,
    SignatureDef,
    Subgraph,
    Tensor,
    TensorType,
)

ModelSource = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview]

_CUSTOM = 32
_OPERATOR_NAMES = dict((code, name) for name, code in ENUMS["BuiltinOperator"].values)
_TENSOR_TYPES = frozenset(int(t) for t in TensorType)
# Types stored two (INT4, UINT4) or four (INT2) elements per byte.
_PACKED_PER_BYTE = {TensorType.INT4: 2, TensorType.UINT4: 2, TensorType.INT2: 4}
_SCHEMA_VERSION = 3


def read_model(source: ModelSource | Model) -> Model:
    """Parse a TFLite model from a path or from bytes; raise ModelError for anything malformed.
    A ``Model`` passes through, so every function that reads its argument with ``read_model``
    takes a path, bytes or a Model alike.

    ``bytes`` and read-only buffers are used in place (``Model.raw`` is the same object, constant
    tensors view it); a writable ``bytearray`` or memoryview is viewed read-only, so later edits
    to it show through: pass ``bytes(...)`` for a snapshot.
    """
    if isinstance(source, Model):
        return source
    raw, view = _load(source)
    if len(view) == 0:
        raise ModelError("empty model: 0 bytes; expected a TFLite flatbuffer (.tflite)")
    if len(view) < 8:
        raise ModelError(f"not a TFLite model: only {len(view)} bytes, fewer than the 8-byte "
                         "flatbuffer header (root offset and 'TFL3' file identifier)")
    identifier = bytes(view[4:8])
    if identifier == FILE_IDENTIFIER:
        return _read(raw, view, strict=False)
    try:
        return _read(raw, view, strict=True)
    except ModelError as exc:
        raise ModelError(
            f"not a TFLite model: file identifier is {_show(identifier)}, expected 'TFL3', and "
            f"the data do not parse as a model without one ({exc})") from None


def _show(identifier: bytes) -> str:
    text = identifier.decode("latin-1")
    return repr(text) if text.isprintable() else identifier.hex(" ")


def _load(source: ModelSource) -> tuple[bytes | memoryview, memoryview]:
    """(object to keep as Model.raw, read-only 1-D byte view of it)."""
    if isinstance(source, (str, os.PathLike)):
        try:
            with open(source, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise ModelError(f"cannot read model file {os.fspath(source)!r}: {exc.strerror or exc}"
                             "; check the path") from None
        return data, memoryview(data)
    if isinstance(source, bytes):
        return source, memoryview(source)
    if isinstance(source, (bytearray, memoryview)):
        view = memoryview(source)
        if not view.c_contiguous:
            raise ModelError("model memoryview is not contiguous; pass bytes(view) instead")
        view = view.cast("B") if view.format != "B" or view.ndim != 1 else view
        view = view.toreadonly()
        return view, view
    raise ModelError(f"read_model takes a path, bytes, bytearray or memoryview, not "
                     f"{type(source).__name__}")


def _read(raw: bytes | memoryview, view: memoryview, *, strict: bool) -> Model:
    fb = FlatBuffer(view)
    root = fb.root("Model")
    version = int(root.scalar("version"))
    if strict and version != _SCHEMA_VERSION:
        raise ModelError(f"schema version is {version}, expected {_SCHEMA_VERSION}")
    buffers = tuple(_read_buffer(fb, table) for table in root.tables("buffers"))
    opcodes = tuple(_read_opcode(table) for table in root.tables("operator_codes"))
    subgraphs = tuple(
        _read_subgraph(index, table, buffers, opcodes)
        for index, table in enumerate(root.tables("subgraphs")))
    if not subgraphs:
        raise ModelError("the model has no subgraphs; TFLM needs at least one to run")
    metadata = tuple(_read_metadata(table, len(buffers)) for table in root.tables("metadata"))
    signatures = tuple(_read_signature(table, subgraphs) for table in root.tables("signature_defs"))
    return Model(
        version=version,
        description=root.string("description") or "",
        subgraphs=subgraphs,
        buffers=buffers,
        metadata=metadata,
        signature_defs=signatures,
        raw=raw,
    )


def _read_buffer(fb: FlatBuffer, table: Table) -> memoryview:
    """Buffer bytes: inline ``data``, or ``offset``/``size`` into the file (models > 2 GB)."""
    offset = int(table.scalar("offset"))
    if offset > 1:
        size = int(table.scalar("size"))
        fb.check(offset, size, f"{table.where} (data outside the flatbuffer, {size} bytes)")
        return fb.data[offset:offset + size]
    data = table.bytes_view("data")
    return data if data is not None else fb.data[0:0]


def _read_opcode(table: Table) -> tuple[int, str, int]:
    """(builtin code, op name, version) of one OperatorCode.

    Ports TFLM's ``GetBuiltinCode``: the larger of the legacy int8 field and the int32 one.
    """
    code = max(int(table.scalar("deprecated_builtin_code")), int(table.scalar("builtin_code")))
    version = int(table.scalar("version"))
    if code == _CUSTOM:
        custom = table.string("custom_code")
        if not custom:
            raise ModelError(f"{table.where} is a CUSTOM operator code without a custom_code "
                             "name; TFLM cannot resolve it")
        return code, custom, version
    name = _OPERATOR_NAMES.get(code)
    if name is None:
        raise ModelError(f"{table.where} has builtin code {code}, which the TFLite schema does "
                         "not define; the file is damaged or newer than this reader")
    return code, name, version


def _read_subgraph(index: int, table: Table, buffers: tuple[memoryview, ...],
                   opcodes: tuple[tuple[int, str, int], ...]) -> Subgraph:
    tensors = tuple(_read_tensor(i, t, buffers) for i, t in enumerate(table.tables("tensors")))
    count = len(tensors)
    operators = tuple(_read_operator(i, t, opcodes, count)
                      for i, t in enumerate(table.tables("operators")))
    return Subgraph(
        index=index,
        name=table.string("name") or "",
        tensors=tensors,
        operators=operators,
        inputs=_tensor_indices(table, "inputs", count, allow_omitted=False),
        outputs=_tensor_indices(table, "outputs", count, allow_omitted=False),
    )


def _tensor_indices(table: Table, name: str, count: int, *, allow_omitted: bool) -> tuple[int, ...]:
    values = table.array(name)
    if values is None or len(values) == 0:
        return ()
    low = -1 if allow_omitted else 0
    bad = (values < low) | (values >= count)
    if bad.any():
        first = int(values[np.argmax(bad)])
        raise ModelError(f"{table.where}.{name} refers to tensor {first}, but the subgraph has "
                         f"{count} tensors (valid: {low}..{count - 1}); the file is damaged")
    return tuple(values.tolist())


def _read_tensor(index: int, table: Table, buffers: tuple[memoryview, ...]) -> Tensor:
    code = int(table.scalar("type"))
    if code not in _TENSOR_TYPES:
        raise ModelError(f"{table.where} has tensor type {code}, which the TFLite schema does not "
                         "define; the file is damaged or newer than this reader")
    tensor_type = TensorType(code)
    shape = table.ints("shape") or ()
    buffer = int(table.scalar("buffer"))
    if buffer >= max(len(buffers), 1):
        raise ModelError(f"{table.where} uses buffer {buffer}, but the model has {len(buffers)} "
                         "buffers; the file is damaged")
    data = None
    if buffer > 0 and len(buffers[buffer]) > 0:
        data = _constant_data(table.where, tensor_type, shape, buffers[buffer])
    return Tensor(
        index=index,
        name=table.string("name") or "",
        type=tensor_type,
        shape=shape,
        shape_signature=table.ints("shape_signature"),
        buffer=buffer,
        data=data,
        is_variable=bool(table.scalar("is_variable")),
        quantization=_read_quantization(table.table("quantization")),
    )


def _constant_data(where: str, tensor_type: TensorType, shape: tuple[int, ...],
                   raw: memoryview) -> np.ndarray:
    """Read-only numpy view of a constant tensor's buffer (see ``Tensor.data`` for the layout)."""
    if any(dim < 0 for dim in shape):
        raise ModelError(f"{where} is constant but its shape {shape} has an unknown (negative) "
                         "dimension; the file is damaged")
    count = 1
    for dim in shape:
        count *= dim
    dtype = NUMPY_DTYPES.get(tensor_type)
    per_byte = _PACKED_PER_BYTE.get(tensor_type)
    if per_byte is not None:
        needed = -(-count // per_byte)
    elif dtype is not None and tensor_type != TensorType.RESOURCE:
        needed = count * dtype.itemsize
    else:
        needed = len(raw)  # STRING, BFLOAT16, FLOAT8_*, VARIANT...: raw bytes, no shape check
    if len(raw) < needed:
        raise ModelError(f"{where}: its buffer holds {len(raw)} bytes but shape {shape} of "
                         f"{tensor_type.name} needs {needed}; the file is damaged")
    if tensor_type == TensorType.INT4:
        array = np.frombuffer(raw, np.int8, needed)
    elif per_byte is not None or dtype is None or tensor_type == TensorType.RESOURCE:
        array = np.frombuffer(raw, np.uint8, needed)
    else:
        array = np.frombuffer(raw, dtype, count).reshape(shape)
    array.flags.writeable = False
    return array


def _read_quantization(table: Table | None) -> Quantization | None:
    """Affine parameters, or None when scale or zero_point is missing or empty.

    TFLM's micro_allocator (``InitializeTfLiteTensorFromFlatbuffer``) treats a tensor as
    quantized only when both vectors are non-empty; this mirrors it.
    """
    if table is None:
        return None
    scale = table.array("scale")
    zero_point = table.array("zero_point")
    if scale is None or zero_point is None or len(scale) == 0 or len(zero_point) == 0:
        return None
    return Quantization(
        scale=scale,
        zero_point=zero_point,
        quantized_dimension=int(table.scalar("quantized_dimension")),
        min=table.array("min"),
        max=table.array("max"),
    )


def _read_operator(index: int, table: Table, opcodes: tuple[tuple[int, str, int], ...],
                   tensor_count: int) -> Operator:
    opcode_index = int(table.scalar("opcode_index"))
    if opcode_index >= len(opcodes):
        raise ModelError(f"{table.where} uses operator code {opcode_index}, but the model has "
                         f"{len(opcodes)} operator codes; the file is damaged")
    code, name, version = opcodes[opcode_index]
    custom_options = _custom_options(table)
    options, absent = (None, False) if code == _CUSTOM else decode_operator_options(name, table)
    return Operator(
        index=index,
        opcode_index=opcode_index,
        name=name,
        builtin_code=code,
        version=version,
        inputs=_tensor_indices(table, "inputs", tensor_count, allow_omitted=True),
        outputs=_tensor_indices(table, "outputs", tensor_count, allow_omitted=True),
        intermediates=_tensor_indices(table, "intermediates", tensor_count, allow_omitted=True),
        options=options,
        custom_options=custom_options,
        options_absent=absent,
    )


def _custom_options(table: Table) -> bytes | None:
    """Custom options bytes: inline, or at ``large_custom_options_offset`` (models > 2 GB)."""
    offset = int(table.scalar("large_custom_options_offset"))
    if offset > 1:
        size = int(table.scalar("large_custom_options_size"))
        table.fb.check(offset, size, f"{table.where} (custom options outside the flatbuffer)")
        return bytes(table.fb.data[offset:offset + size])
    data = table.bytes_view("custom_options")
    return None if data is None else bytes(data)


def _read_metadata(table: Table, buffer_count: int) -> tuple[str, int]:
    buffer = int(table.scalar("buffer"))
    if buffer >= buffer_count:
        raise ModelError(f"{table.where} uses buffer {buffer}, but the model has {buffer_count} "
                         "buffers; the file is damaged")
    return table.string("name") or "", buffer


def _read_signature(table: Table, subgraphs: tuple[Subgraph, ...]) -> SignatureDef:
    index = int(table.scalar("subgraph_index"))
    if index >= len(subgraphs):
        raise ModelError(f"{table.where} names subgraph {index}, but the model has "
                         f"{len(subgraphs)}; the file is damaged")

    def tensor_map(name: str) -> tuple[tuple[str, int], ...]:
        return tuple((entry.string("name") or "", int(entry.scalar("tensor_index")))
                     for entry in table.tables(name))

    return SignatureDef(
        signature_key=table.string("signature_key") or "",
        subgraph_index=index,
        inputs=tensor_map("inputs"),
        outputs=tensor_map("outputs"),
    )
