"""Fixtures for the model reader tests: the wheel's generated schema as an independent reader
and writer (``ModelT`` object API + ``flatbuffers.Builder``)."""

from __future__ import annotations

from typing import Any, Callable

import pytest


@pytest.fixture(scope="session")
def schema_fb() -> Any:
    """The flatc-generated Python schema shipped in the tflite-micro wheel."""
    return pytest.importorskip(
        "tflite_micro.tensorflow.lite.micro.python.schema_py_generated")


@pytest.fixture(scope="session")
def pack(schema_fb: Any) -> Callable[[Any], bytes]:
    """Serialise a ModelT with the flatbuffers runtime, with the 'TFL3' identifier."""
    import flatbuffers

    def _pack(model_t: Any, identifier: bytes | None = b"TFL3") -> bytes:
        builder = flatbuffers.Builder(1024)
        builder.Finish(model_t.Pack(builder), file_identifier=identifier)
        return bytes(builder.Output())

    return _pack


@pytest.fixture()
def tiny_model_t(schema_fb: Any) -> Any:
    """A fresh ModelT: 2 buffers (sentinel + 16 bytes), one subgraph, tensors x, w (constant),
    y, one ADD(x, w) -> y. Tests mutate it, then pack it."""
    fb = schema_fb
    model = fb.ModelT()
    model.version = 3
    model.description = "tiny"
    sentinel, weights = fb.BufferT(), fb.BufferT()
    weights.data = list(range(16))
    model.buffers = [sentinel, weights]
    tensors = []
    for name, buffer in (("x", 0), ("w", 1), ("y", 0)):
        tensor = fb.TensorT()
        tensor.name, tensor.shape, tensor.buffer = name, [1, 4], buffer
        tensor.type = fb.TensorType.FLOAT32
        tensors.append(tensor)
    code = fb.OperatorCodeT()
    code.builtinCode = code.deprecatedBuiltinCode = fb.BuiltinOperator.ADD
    code.version = 1
    model.operatorCodes = [code]
    op = fb.OperatorT()
    op.opcodeIndex, op.inputs, op.outputs = 0, [0, 1], [2]
    subgraph = fb.SubGraphT()
    subgraph.tensors, subgraph.operators = tensors, [op]
    subgraph.inputs, subgraph.outputs = [0], [2]
    model.subgraphs = [subgraph]
    return model
