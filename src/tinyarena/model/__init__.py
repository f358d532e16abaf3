"""The .tflite model: frozen data types, the reader, builtin options and TFLM metadata."""

from __future__ import annotations

from tinyarena.model.reader import read_model
from tinyarena.model.types import (
    NUMPY_DTYPES,
    TFLM_TYPE_SIZES,
    Model,
    Operator,
    Quantization,
    SignatureDef,
    Subgraph,
    Tensor,
    TensorType,
)

__all__ = [
    "NUMPY_DTYPES",
    "TFLM_TYPE_SIZES",
    "Model",
    "Operator",
    "Quantization",
    "SignatureDef",
    "Subgraph",
    "Tensor",
    "TensorType",
    "read_model",
]
