"""read_model against an independent reader (the wheel's flatc-generated ModelT) and writer.

Every shared model is read twice, by tinyarena and by the generated object API of the live
``tflite_micro`` wheel, and compared field by field. Hand-made models are written with that same
generated API plus the ``flatbuffers`` runtime. Malformed input (truncation, random bytes, bit
flips) must raise ModelError or succeed, never anything else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tflm_oracle import shared_model_bytes

from tinyarena.errors import ModelError
from tinyarena.model import TensorType, read_model

# numpy dtype of each TensorType code, written out here independently of tinyarena.model.types.
DTYPES = {0: "<f4", 1: "<f2", 2: "<i4", 3: "u1", 4: "<i8", 6: "?", 7: "<i2", 9: "i1", 10: "<f8",
          12: "<u8", 15: "<u4", 16: "<u2"}


def as_tuple(values: Any) -> tuple:
    return () if values is None else tuple(np.asarray(values).tolist())


def as_str(value: Any) -> str:
    return "" if value is None else value.decode() if isinstance(value, bytes) else value


def enum_names(enum_class: Any) -> dict[int, str]:
    return {v: k for k, v in vars(enum_class).items() if not k.startswith("_")}


def wheel_model(schema_fb: Any, data: bytes) -> Any:
    return schema_fb.ModelT.InitFromObj(schema_fb.Model.GetRootAsModel(data, 0))


# ---- shared models against the wheel's reader ------------------------------------------------


def test_shared_model_matches_wheel_reader(shared_model_name: str, shared_models: Path,
                                           schema_fb: Any) -> None:
    data = shared_model_bytes(shared_model_name)
    ours = read_model(data)
    ref = wheel_model(schema_fb, data)
    op_names = enum_names(schema_fb.BuiltinOperator)

    assert ours.version == ref.version
    assert ours.description == as_str(ref.description)
    assert len(ours.buffers) == len(ref.buffers)
    for mine, theirs in zip(ours.buffers, ref.buffers):
        assert bytes(mine) == bytes(as_tuple(theirs.data))
    assert ours.metadata == tuple((as_str(m.name), m.buffer) for m in (ref.metadata or []))
    assert len(ours.signature_defs) == len(ref.signatureDefs or [])
    for mine, theirs in zip(ours.signature_defs, ref.signatureDefs or []):
        assert mine.signature_key == as_str(theirs.signatureKey)
        assert mine.subgraph_index == theirs.subgraphIndex
        assert mine.inputs == tuple((as_str(t.name), t.tensorIndex) for t in theirs.inputs or [])
        assert mine.outputs == tuple((as_str(t.name), t.tensorIndex) for t in theirs.outputs or [])

    assert len(ours.subgraphs) == len(ref.subgraphs)
    for sg, ref_sg in zip(ours.subgraphs, ref.subgraphs):
        assert sg.name == as_str(ref_sg.name)
        assert sg.inputs == as_tuple(ref_sg.inputs)
        assert sg.outputs == as_tuple(ref_sg.outputs)
        assert len(sg.tensors) == len(ref_sg.tensors)
        for tensor, ref_t in zip(sg.tensors, ref_sg.tensors):
            compare_tensor(tensor, ref_t, ref.buffers)
        assert len(sg.operators) == len(ref_sg.operators)
        for op, ref_op in zip(sg.operators, ref_sg.operators):
            code = ref.operatorCodes[ref_op.opcodeIndex]
            builtin = max(code.deprecatedBuiltinCode, code.builtinCode)
            assert op.opcode_index == ref_op.opcodeIndex
            assert op.builtin_code == builtin
            assert op.name == (as_str(code.customCode) if builtin == 32 else op_names[builtin])
            assert op.version == code.version
            assert op.inputs == as_tuple(ref_op.inputs)
            assert op.outputs == as_tuple(ref_op.outputs)
            assert op.intermediates == as_tuple(ref_op.intermediates)
            custom = ref_op.customOptions
            assert op.custom_options == (None if custom is None else bytes(as_tuple(custom)))


def compare_tensor(tensor: Any, ref_t: Any, ref_buffers: list) -> None:
    assert tensor.name == as_str(ref_t.name)
    assert int(tensor.type) == ref_t.type
    assert tensor.shape == as_tuple(ref_t.shape)
    expected_signature = None if ref_t.shapeSignature is None else as_tuple(ref_t.shapeSignature)
    assert tensor.shape_signature == expected_signature
    assert tensor.buffer == ref_t.buffer
    assert tensor.is_variable == bool(ref_t.isVariable)
    raw = as_tuple(ref_buffers[ref_t.buffer].data)
    if ref_t.buffer > 0 and raw:
        expected = np.frombuffer(bytes(raw), DTYPES[ref_t.type]).reshape(tensor.shape)
        assert tensor.data is not None and tensor.data.dtype == expected.dtype
        assert np.array_equal(tensor.data, expected)
    else:
        assert tensor.data is None
    q = ref_t.quantization
    if q is None or q.scale is None or len(q.scale) == 0 or q.zeroPoint is None \
            or len(q.zeroPoint) == 0:
        assert tensor.quantization is None
    else:
        mine = tensor.quantization
        assert mine is not None
        assert mine.scale.dtype == np.float32 and mine.zero_point.dtype == np.int64
        assert np.array_equal(mine.scale, np.asarray(q.scale, np.float32))
        assert np.array_equal(mine.zero_point, np.asarray(q.zeroPoint, np.int64))
        assert mine.quantized_dimension == q.quantizedDimension
        for ours_v, ref_v in ((mine.min, q.min), (mine.max, q.max)):
            assert as_tuple(ours_v) == as_tuple(None if ref_v is None else np.float32(ref_v))


def test_shared_model_constants_are_zero_copy(shared_model_name: str, shared_models: Path) -> None:
    data = shared_model_bytes(shared_model_name)
    model = read_model(data)
    whole = np.frombuffer(data, np.uint8)
    assert model.raw is data
    constants = [t for sg in model.subgraphs for t in sg.tensors if t.data is not None]
    assert constants or shared_model_name == "simple_add_model"
    for tensor in constants:
        assert np.shares_memory(tensor.data, whole)
        assert not tensor.data.flags.writeable
        with pytest.raises(ValueError):
            tensor.data.reshape(-1)[0] = 1
    for buffer in model.buffers:
        assert buffer.readonly


def test_known_facts_of_shared_models(shared_models: Path) -> None:
    """Facts from ../shared/models/README.md (op counts), independent of any reader."""
    model = read_model(shared_models / "person_detect.tflite")
    names = [op.name for op in model.subgraphs[0].operators]
    assert names.count("CONV_2D") == 14 and names.count("DEPTHWISE_CONV_2D") == 14
    assert model.subgraphs[0].tensors[model.subgraphs[0].inputs[0]].shape == (1, 96, 96, 1)
    lstm = read_model(shared_models / "keyword_scrambled.tflite")
    assert any(t.is_variable for t in lstm.subgraphs[0].tensors)


def test_source_kinds_agree(shared_models: Path) -> None:
    path = shared_models / "micro_speech_quantized.tflite"
    data = path.read_bytes()
    models = [read_model(path), read_model(str(path)), read_model(data),
              read_model(bytearray(data)), read_model(memoryview(data))]
    shapes = {tuple(t.shape for t in m.subgraphs[0].tensors) for m in models}
    assert len(shapes) == 1
    # A bytearray is viewed read-only: constant data stay immutable through the model.
    from_array = models[3]
    assert all(not t.data.flags.writeable for t in from_array.subgraphs[0].tensors
               if t.data is not None)


def test_mobilenet_reads(shared_models: Path) -> None:
    # Reading speed is a benchmark (benchmarks/), not a timed test.
    data = (shared_models / "mobilenet_v2_quantized_1x3x224x224.tflite").read_bytes()
    model = read_model(data)
    assert model.tensor_count > 150


# ---- hand-made models written with the wheel's generated object API --------------------------


def test_tiny_model_roundtrip(tiny_model_t: Any, pack: Any) -> None:
    model = read_model(pack(tiny_model_t))
    sg = model.subgraphs[0]
    assert model.description == "tiny"
    assert [t.name for t in sg.tensors] == ["x", "w", "y"]
    assert sg.tensors[1].data is not None
    assert np.array_equal(sg.tensors[1].data,
                          np.frombuffer(bytes(range(16)), "<f4").reshape(1, 4))
    assert sg.operators[0].name == "ADD"
    assert sg.operators[0].options.fused_activation_function == "NONE"
    assert sg.operators[0].options.pot_scale_int16 is True  # schema default


def test_missing_shape_is_scalar(tiny_model_t: Any, pack: Any) -> None:
    tiny_model_t.subgraphs[0].tensors[1].shape = None
    tiny_model_t.buffers[1].data = [0, 0, 128, 63]  # 1.0f
    tensor = read_model(pack(tiny_model_t)).subgraphs[0].tensors[1]
    assert tensor.shape == () and tensor.data.shape == () and float(tensor.data) == 1.0


def test_int4_constants_stay_packed(tiny_model_t: Any, pack: Any, schema_fb: Any) -> None:
    tensor_t = tiny_model_t.subgraphs[0].tensors[1]
    tensor_t.type, tensor_t.shape = schema_fb.TensorType.INT4, [5]
    # Values 1, -2, 7, -8, 3: low nibble first (TFLM UnpackDenseInt4IntoInt8).
    tiny_model_t.buffers[1].data = [0xE1, 0x87, 0x03]
    tensor = read_model(pack(tiny_model_t)).subgraphs[0].tensors[1]
    assert tensor.type == TensorType.INT4
    assert tensor.data.dtype == np.int8 and tensor.data.shape == (3,)
    assert np.array_equal(tensor.unpacked_data, np.array([1, -2, 7, -8, 3], np.int8))


def test_buffer_stored_after_the_flatbuffer(tiny_model_t: Any, pack: Any) -> None:
    """Models > 2 GB keep buffers outside the flatbuffer: Buffer.offset/size into the file."""
    payload = np.arange(4, dtype="<f4").tobytes()
    buffer_t = tiny_model_t.buffers[1]
    buffer_t.data, buffer_t.offset, buffer_t.size = None, 2, len(payload)
    size = len(pack(tiny_model_t))
    buffer_t.offset = -(-size // 16) * 16
    head = pack(tiny_model_t)
    assert len(head) == size
    data = head + bytes(buffer_t.offset - size) + payload
    model = read_model(data)
    assert bytes(model.buffers[1]) == payload
    assert np.array_equal(model.subgraphs[0].tensors[1].data, np.arange(4, dtype="<f4")[None])
    with pytest.raises(ModelError, match="past the end"):
        read_model(data[:-1])


def test_custom_op(tiny_model_t: Any, pack: Any, schema_fb: Any) -> None:
    code = tiny_model_t.operatorCodes[0]
    code.builtinCode = code.deprecatedBuiltinCode = schema_fb.BuiltinOperator.CUSTOM
    code.customCode = "MyOp"
    tiny_model_t.subgraphs[0].operators[0].customOptions = [1, 2, 3]
    op = read_model(pack(tiny_model_t)).subgraphs[0].operators[0]
    assert (op.name, op.builtin_code, op.is_custom) == ("MyOp", 32, True)
    assert op.custom_options == b"\x01\x02\x03" and op.options is None


def test_extended_builtin_code(tiny_model_t: Any, pack: Any, schema_fb: Any) -> None:
    """Codes above 127 live in builtin_code; deprecated_builtin_code holds the placeholder."""
    code = tiny_model_t.operatorCodes[0]
    code.deprecatedBuiltinCode = schema_fb.BuiltinOperator.PLACEHOLDER_FOR_GREATER_OP_CODES
    code.builtinCode = schema_fb.BuiltinOperator.CUMSUM
    op = read_model(pack(tiny_model_t)).subgraphs[0].operators[0]
    assert (op.name, op.builtin_code) == ("CUMSUM", 128)


def test_optional_inputs_and_signature(tiny_model_t: Any, pack: Any, schema_fb: Any) -> None:
    tiny_model_t.subgraphs[0].operators[0].inputs = [0, -1]
    signature = schema_fb.SignatureDefT()
    signature.signatureKey = "serving_default"
    entry = schema_fb.TensorMapT()
    entry.name, entry.tensorIndex = "in", 0
    signature.inputs, signature.outputs, signature.subgraphIndex = [entry], [], 0
    tiny_model_t.signatureDefs = [signature]
    model = read_model(pack(tiny_model_t))
    assert model.subgraphs[0].operators[0].inputs == (0, -1)
    assert model.signature_defs[0].signature_key == "serving_default"
    assert model.signature_defs[0].inputs == (("in", 0),)


def test_missing_identifier_is_accepted_when_the_model_parses(tiny_model_t: Any,
                                                             pack: Any) -> None:
    data = pack(tiny_model_t, identifier=None)
    assert data[4:8] != b"TFL3"
    assert read_model(data).subgraphs[0].tensors[0].name == "x"


# ---- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize("mutate, message", [
    (lambda m, fb: setattr(m.subgraphs[0].operators[0], "opcodeIndex", 5), "operator code 5"),
    (lambda m, fb: setattr(m.subgraphs[0].operators[0], "inputs", [0, 9]), "tensor 9"),
    (lambda m, fb: setattr(m.subgraphs[0].operators[0], "inputs", [0, -2]), "tensor -2"),
    (lambda m, fb: setattr(m.subgraphs[0], "outputs", [3]), "tensor 3"),
    (lambda m, fb: setattr(m.subgraphs[0].tensors[1], "buffer", 7), "buffer 7"),
    (lambda m, fb: setattr(m.subgraphs[0].tensors[1], "type", 99), "tensor type 99"),
    (lambda m, fb: setattr(m.subgraphs[0].tensors[1], "shape", [2, 4]), "needs 32"),
    (lambda m, fb: setattr(m.subgraphs[0].tensors[1], "shape", [-1, 4]), "negative"),
    (lambda m, fb: setattr(m.operatorCodes[0], "builtinCode", 4000), "builtin code 4000"),
    (lambda m, fb: setattr(m, "subgraphs", []), "no subgraphs"),
])
def test_inconsistent_models_raise(tiny_model_t: Any, pack: Any, schema_fb: Any, mutate: Any,
                                   message: str) -> None:
    mutate(tiny_model_t, schema_fb)
    with pytest.raises(ModelError, match=message):
        read_model(pack(tiny_model_t))


def test_empty_short_and_foreign_inputs(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="empty"):
        read_model(b"")
    with pytest.raises(ModelError, match="8-byte"):
        read_model(b"\x08\x00\x00\x00TF")
    with pytest.raises(ModelError, match="file identifier is 'GIF8', expected 'TFL3'"):
        read_model(b"\x10\x00\x00\x00GIF89a" + bytes(200))
    with pytest.raises(ModelError, match="cannot read model file"):
        read_model(tmp_path / "missing.tflite")
    with pytest.raises(ModelError, match="not int"):
        read_model(12)  # type: ignore[arg-type]


def test_truncated_file_message(shared_models: Path) -> None:
    data = (shared_models / "hello_world_int8.tflite").read_bytes()
    with pytest.raises(ModelError, match=r"past the end of the 1000-byte file"):
        read_model(data[:1000])


def test_absurd_vector_length_is_rejected(tiny_model_t: Any, pack: Any) -> None:
    data = bytearray(pack(tiny_model_t))
    weights = bytes(range(16))
    at = data.find(weights) - 4  # the uint32 length of Buffer 1's data vector
    assert int.from_bytes(data[at:at + 4], "little") == 16
    data[at:at + 4] = (0x7FFFFFFF).to_bytes(4, "little")
    with pytest.raises(ModelError, match="more than the whole"):
        read_model(bytes(data))


# ---- fuzzing: only ModelError (or success) ------------------------------------------------

FUZZ_MODELS = ("simple_add_model", "hello_world_int8", "micro_speech_quantized")


def read_or_model_error(data: bytes) -> None:
    try:
        model = read_model(data)
    except ModelError as exc:
        assert str(exc)
        return
    for sg in model.subgraphs:  # a success must be fully usable
        for tensor in sg.tensors:
            if tensor.data is not None:
                tensor.unpacked_data
        for op in sg.operators:
            repr(op.options)


@pytest.mark.parametrize("name", FUZZ_MODELS)
def test_fuzz_truncations(name: str, shared_models: Path) -> None:
    data = shared_model_bytes(name)
    lengths = sorted(set(np.linspace(0, len(data) - 1, 400).astype(int).tolist()))
    for length in lengths:
        read_or_model_error(data[:length])


@pytest.mark.parametrize("name", FUZZ_MODELS)
def test_fuzz_bit_flips(name: str, shared_models: Path) -> None:
    data = shared_model_bytes(name)
    rng = np.random.default_rng(1234)
    for _ in range(400):
        mutated = bytearray(data)
        for position in rng.integers(0, len(data), rng.integers(1, 4)):
            mutated[position] ^= 1 << int(rng.integers(0, 8))
        read_or_model_error(bytes(mutated))


def test_fuzz_overwritten_words(shared_models: Path) -> None:
    """Large values in offset/length words reach the size checks, not numpy or struct."""
    data = shared_model_bytes("micro_speech_quantized")
    rng = np.random.default_rng(99)
    for _ in range(400):
        mutated = bytearray(data)
        at = int(rng.integers(0, len(data) // 4)) * 4
        value = int(rng.choice([0, 1, 0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, len(data),
                                int(rng.integers(0, 2**32))]))
        mutated[at:at + 4] = value.to_bytes(4, "little")
        read_or_model_error(bytes(mutated))


def test_every_word_overwritten(shared_models: Path) -> None:
    """Exhaustive over the small model: every aligned word set to each troublesome value."""
    data = shared_model_bytes("simple_add_model")
    for at in range(0, len(data) - 3, 4):
        for value in (0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFF):
            mutated = bytearray(data)
            mutated[at:at + 4] = value.to_bytes(4, "little")
            read_or_model_error(bytes(mutated))


def test_fuzz_random_bytes() -> None:
    rng = np.random.default_rng(7)
    for size in list(range(0, 64)) + rng.integers(64, 4096, 200).tolist():
        read_or_model_error(rng.integers(0, 256, size, dtype=np.uint8).tobytes())
        with_identifier = bytearray(rng.integers(0, 256, max(size, 8), dtype=np.uint8).tobytes())
        with_identifier[4:8] = b"TFL3"
        read_or_model_error(bytes(with_identifier))
