"""Turning the many ways a caller can name a tensor type into one ``TensorType``."""

from __future__ import annotations

from typing import Any

import numpy as np

from tinyarena.errors import BuildError
from tinyarena.model.types import NUMPY_DTYPES, TensorType

# numpy dtype -> TensorType, for the types numpy can represent unambiguously (INT4 and RESOURCE
# share numpy dtypes with INT8/INT32 and are only reachable by name).
_FROM_NUMPY: dict[np.dtype, TensorType] = {
    dtype: ttype
    for ttype, dtype in NUMPY_DTYPES.items()
    if ttype not in (TensorType.INT4, TensorType.RESOURCE)
}

# Element storage of each type inside a constant buffer: numpy dtype per element. INT4 is packed
# two per byte in the file and handled separately.
STORAGE_DTYPES: dict[TensorType, np.dtype] = dict(NUMPY_DTYPES)


def tensor_type(dtype: Any) -> TensorType:
    """``"int8"``, ``np.int8``, ``np.dtype("int8")``, ``TensorType.INT8`` or ``9`` -> INT8."""
    if isinstance(dtype, TensorType):
        return dtype
    if isinstance(dtype, str):
        key = dtype.strip().upper()
        if key in TensorType.__members__:
            return TensorType[key]
        try:
            np_dtype = np.dtype(dtype)
        except TypeError:
            np_dtype = None
        if np_dtype is not None and np_dtype.newbyteorder("<") in _FROM_NUMPY:
            return _FROM_NUMPY[np_dtype.newbyteorder("<")]
        raise BuildError(
            f"unknown tensor type {dtype!r}: use a TensorType name such as 'int8' or 'float32'"
        )
    if isinstance(dtype, (int, np.integer)) and not isinstance(dtype, bool):
        try:
            return TensorType(int(dtype))
        except ValueError:
            raise BuildError(f"unknown TensorType value {dtype}") from None
    try:
        np_dtype = np.dtype(dtype)
    except TypeError:
        raise BuildError(f"cannot interpret {dtype!r} as a tensor type") from None
    little = np_dtype.newbyteorder("<") if np_dtype.byteorder == ">" else np_dtype
    for candidate, ttype in _FROM_NUMPY.items():
        if candidate == little:
            return ttype
    raise BuildError(f"numpy dtype {np_dtype} has no .tflite TensorType")


def encode_constant(data: np.ndarray, ttype: TensorType) -> bytes:
    """Little-endian bytes of ``data`` as a buffer of type ``ttype`` stores them.

    INT4 values (given as small integers in [-8, 7]) are packed two per byte, low nibble first,
    which is how the converter stores them and how TFLM's int4 unpacking reads them.
    """
    if ttype == TensorType.INT4:
        values = np.asarray(data).astype(np.int64).reshape(-1)
        if values.size and (values.min() < -8 or values.max() > 7):
            raise BuildError("int4 constant values must lie in [-8, 7]")
        nibbles = (values & 0xF).astype(np.uint8)
        if nibbles.size % 2:
            nibbles = np.concatenate([nibbles, np.zeros(1, np.uint8)])
        packed = nibbles[0::2] | (nibbles[1::2] << 4)
        return packed.tobytes()
    if ttype == TensorType.STRING:
        raise BuildError("STRING constants are not supported by the builder; pass raw bytes "
                         "with add_constant(..., raw=True) instead")
    storage = STORAGE_DTYPES.get(ttype)
    if storage is None:
        raise BuildError(f"the builder cannot encode constants of type {ttype.name}")
    array = np.asarray(data)
    if array.dtype.kind == "f" and storage.kind in "iub":
        raise BuildError(
            f"float data given for a {ttype.name} constant: quantize it first "
            "(tinyarena.builder.quant.quantize)"
        )
    converted = array.astype(storage, copy=False)
    if storage.kind in "iu" and array.dtype.kind in "iu":
        if not np.array_equal(converted.astype(np.int64), array.astype(np.int64)):
            raise BuildError(f"constant values do not fit in {ttype.name}")
    return np.ascontiguousarray(converted).tobytes()
