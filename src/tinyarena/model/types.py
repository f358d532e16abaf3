"""Plain, frozen data describing a .tflite model, as the reader produces it.

Nothing here knows about arenas or kernels. Shapes are tuples of ints; constant tensor data are
read-only numpy views into the model bytes (zero copy). Builtin options are decoded once by
``model.options`` into frozen dataclasses whose field names are the schema's, in snake_case,
with enum values as their schema names (``padding == "SAME"``,
``fused_activation_function == "RELU6"``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class TensorType(enum.IntEnum):
    """``tflite::TensorType`` values, as stored in the flatbuffer."""

    FLOAT32 = 0
    FLOAT16 = 1
    INT32 = 2
    UINT8 = 3
    INT64 = 4
    STRING = 5
    BOOL = 6
    INT16 = 7
    COMPLEX64 = 8
    INT8 = 9
    FLOAT64 = 10
    COMPLEX128 = 11
    UINT64 = 12
    RESOURCE = 13
    VARIANT = 14
    UINT32 = 15
    UINT16 = 16
    INT4 = 17
    BFLOAT16 = 18
    INT2 = 19
    UINT4 = 20
    FLOAT8_E4M3FN = 21
    FLOAT8_E5M2 = 22


# Bytes per element as TFLM's TfLiteTypeSizeOf counts them (memory_helpers.cc). INT4 is one byte
# per element because TFLM keeps int4 activations unpacked. Types missing here have no size in
# TFLM, and any tensor of such a type makes AllocateTensors fail.
TFLM_TYPE_SIZES: dict[TensorType, int] = {
    TensorType.FLOAT32: 4, TensorType.INT32: 4, TensorType.UINT32: 4, TensorType.RESOURCE: 4,
    TensorType.INT16: 2, TensorType.UINT16: 2, TensorType.FLOAT16: 2, TensorType.BFLOAT16: 2,
    TensorType.INT8: 1, TensorType.UINT8: 1, TensorType.BOOL: 1, TensorType.INT4: 1,
    TensorType.INT64: 8, TensorType.UINT64: 8, TensorType.FLOAT64: 8, TensorType.COMPLEX64: 8,
    TensorType.COMPLEX128: 16,
}

# numpy dtype of each type's elements, where numpy has one (INT4 is unpacked to int8).
NUMPY_DTYPES: dict[TensorType, np.dtype] = {
    TensorType.FLOAT32: np.dtype("<f4"), TensorType.FLOAT16: np.dtype("<f2"),
    TensorType.FLOAT64: np.dtype("<f8"), TensorType.INT32: np.dtype("<i4"),
    TensorType.UINT32: np.dtype("<u4"), TensorType.INT16: np.dtype("<i2"),
    TensorType.UINT16: np.dtype("<u2"), TensorType.INT8: np.dtype("i1"),
    TensorType.UINT8: np.dtype("u1"), TensorType.BOOL: np.dtype("?"),
    TensorType.INT64: np.dtype("<i8"), TensorType.UINT64: np.dtype("<u8"),
    TensorType.COMPLEX64: np.dtype("<c8"), TensorType.COMPLEX128: np.dtype("<c16"),
    TensorType.INT4: np.dtype("i1"), TensorType.RESOURCE: np.dtype("<i4"),
}


@dataclass(frozen=True)
class Quantization:
    """Affine quantization: real = scale * (q - zero_point), per tensor or per channel."""

    scale: np.ndarray  # float32, shape (n,)
    zero_point: np.ndarray  # int64, shape (m,), m may be < n in odd models (TFLM replicates [0])
    quantized_dimension: int = 0
    min: np.ndarray | None = None
    max: np.ndarray | None = None

    @property
    def per_channel(self) -> bool:
        return len(self.scale) > 1


@dataclass(frozen=True)
class Tensor:
    index: int  # index within its subgraph
    name: str
    type: TensorType
    shape: tuple[int, ...]  # () for a scalar
    shape_signature: tuple[int, ...] | None
    buffer: int  # buffer index in Model.buffers (0 = the empty sentinel)
    # Read-only zero-copy view of constant data; None when not constant. Shaped and typed for
    # types with a numpy dtype; INT4 data stay packed as in the file (two per byte, low nibble
    # first): a 1-D int8 view of ceil(n / 2) bytes, see ``unpacked_data``. Types without a numpy
    # dtype (STRING, BFLOAT16, INT2, UINT4, FLOAT8_*, VARIANT) get the raw 1-D uint8 bytes.
    data: np.ndarray | None
    is_variable: bool = False
    quantization: Quantization | None = None

    @property
    def is_constant(self) -> bool:
        return self.data is not None

    @property
    def unpacked_data(self) -> np.ndarray | None:
        """Constant data with the tensor's shape; INT4 is sign-extended to int8 (a new array).

        Ports TFLM's ``tensor_utils::UnpackDenseInt4IntoInt8``: element 2i is the low nibble of
        byte i, element 2i+1 its high nibble. Other types return ``data`` itself.
        """
        if self.data is None or self.type != TensorType.INT4:
            return self.data
        count = self.element_count
        packed = self.data.view(np.int8)
        low = np.left_shift(packed, 4).astype(np.int8) >> 4
        high = packed >> 4
        both = np.stack([low, high], axis=-1).reshape(-1)[:count]
        return both.reshape(self.shape)

    @property
    def element_count(self) -> int:
        count = 1
        for dim in self.shape:
            count *= dim
        return count

    @property
    def tflm_nbytes(self) -> int | None:
        """Byte size as TFLM computes it, or None for a type TFLM cannot size."""
        size = TFLM_TYPE_SIZES.get(self.type)
        return None if size is None else size * self.element_count


@dataclass(frozen=True)
class Operator:
    index: int  # index within its subgraph
    opcode_index: int
    name: str  # builtin name ("CONV_2D") or the custom code of a CUSTOM op
    builtin_code: int  # max(deprecated_builtin_code, builtin_code); 32 (CUSTOM) for custom ops
    version: int
    inputs: tuple[int, ...]  # -1 marks an omitted optional input
    outputs: tuple[int, ...]
    intermediates: tuple[int, ...] = ()
    options: Any = None  # frozen options dataclass from model.options, or None
    custom_options: bytes | None = None
    # True when the file has no options table of the kind this op reads (absent, or another
    # union member). ``options`` then holds the schema defaults, whereas TFLM's parser leaves
    # its params struct zero-initialised (e.g. padding kTfLitePaddingUnknown, dilation 0,
    # pot_scale_int16 false): kernels that must match TFLM bit for bit can check this.
    options_absent: bool = False

    @property
    def is_custom(self) -> bool:
        return self.builtin_code == 32


@dataclass(frozen=True)
class Subgraph:
    index: int
    name: str
    tensors: tuple[Tensor, ...]
    operators: tuple[Operator, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


@dataclass(frozen=True)
class SignatureDef:
    signature_key: str
    subgraph_index: int
    inputs: tuple[tuple[str, int], ...]  # (name, tensor index)
    outputs: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Model:
    version: int
    description: str
    subgraphs: tuple[Subgraph, ...]
    buffers: tuple[memoryview, ...]  # raw bytes of each buffer (empty for none); zero copy
    metadata: tuple[tuple[str, int], ...]  # (name, buffer index), in file order
    signature_defs: tuple[SignatureDef, ...] = ()
    raw: bytes | memoryview = field(default=b"", repr=False)  # the whole file

    def metadata_bytes(self, name: str) -> bytes | None:
        """Bytes of the first metadata entry called ``name``, or None."""
        for entry_name, buffer_index in self.metadata:
            if entry_name == name:
                return bytes(self.buffers[buffer_index])
        return None

    @property
    def tensor_count(self) -> int:
        return sum(len(sg.tensors) for sg in self.subgraphs)
