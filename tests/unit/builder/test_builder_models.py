"""ModelBuilder output: loads and agrees in the tflite-micro wheel and in LiteRT, reads back
with tinyarena's reader as built, and has the layout TFLM needs (aligned buffers, op codes)."""

from __future__ import annotations

import numpy as np
import pytest
from builder_cases import CASES, Case
from litert_runner import litert_run
from tflm_oracle import tflm_run

from tinyarena.builder import ModelBuilder, quant
from tinyarena.errors import BuildError
from tinyarena.model import TensorType, read_model
from tinyarena.model._flatbuf import FlatBuffer
from tinyarena.model.options import Conv2DOptions, ReshapeOptions, VarHandleOptions


def _assert_same_outputs(ours: list[np.ndarray], theirs: list[np.ndarray]) -> None:
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype and a.shape == b.shape
        if a.dtype.kind == "f":
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
        else:
            assert np.array_equal(a, b)


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(CASES))
def test_builder_model_agrees_in_wheel_and_litert(name: str) -> None:
    case: Case = CASES[name]()
    from_litert = litert_run(case.model, case.inputs, reference=case.litert_reference)
    assert from_litert, "LiteRT produced no outputs"
    if case.in_wheel:
        _assert_same_outputs(tflm_run(case.model, case.inputs), from_litert)


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(CASES))
def test_builder_model_agrees_in_wheel_and_tinyarena(name: str) -> None:
    from tinyarena.errors import UnsupportedOpError
    from tinyarena.interpreter import Interpreter

    case = CASES[name]()
    if not case.in_wheel:
        pytest.skip("op not in the wheel")
    try:
        interpreter = Interpreter(read_model(case.model))
        interpreter.allocate_tensors()
    except UnsupportedOpError as exc:
        pytest.skip(f"tinyarena has no kernel yet: {exc}")
    for i, value in enumerate(case.inputs):
        interpreter.set_input(value, i)
    interpreter.invoke()
    ours = [interpreter.get_output(i) for i in range(len(interpreter.get_output_details()))]
    _assert_same_outputs([np.asarray(o) for o in ours], tflm_run(case.model, case.inputs))


@pytest.mark.parametrize("name", sorted(CASES))
def test_builder_model_reads_back(name: str) -> None:
    case = CASES[name]()
    model = read_model(case.model)
    assert model.version == 3
    assert len(model.buffers[0]) == 0
    main = model.subgraphs[0]
    assert len(main.inputs) == len(case.inputs)
    for index, value in zip(main.inputs, case.inputs):
        assert main.tensors[index].shape == value.shape


def test_builder_buffers_are_16_byte_aligned() -> None:
    model = read_model(CASES["residual_int8"]().model)
    base = np.frombuffer(model.raw, np.uint8).ctypes.data
    data_buffers = [buf for buf in model.buffers if len(buf)]
    assert len(data_buffers) >= 5
    for buf in data_buffers:
        assert (np.frombuffer(buf, np.uint8).ctypes.data - base) % 16 == 0


def test_builder_round_trips_tensors_options_metadata_signatures() -> None:
    rng = np.random.default_rng(0)
    b = ModelBuilder()
    x = b.add_input("x", (1, 5, 5, 2), "int8", scale=0.25, zero_point=-3)
    wq, ws = quant.quantize_weights(rng.normal(size=(3, 3, 3, 2)), axis=0)
    w = b.add_constant("w", wq, scale=ws, zero_point=0, quantized_dimension=0)
    y = b.add_tensor("y", (1, 3, 3, 3), "int8", scale=0.5, zero_point=7)
    b.add_operator("CONV_2D", [x, w, -1], [y], padding="VALID", stride_w=2, stride_h=2,
                   fused_activation_function="RELU6", dilation_w_factor=1, dilation_h_factor=1)
    shape = b.add_constant("shape", np.array([1, 27], np.int32))
    z = b.add_tensor("z", (1, 27), np.int8, scale=0.5, zero_point=7)
    b.add_operator("RESHAPE", [y, shape], [z], options=ReshapeOptions(new_shape=(1, 27)))
    state = b.add_tensor("state", (2, 4), TensorType.INT16, scale=0.01, zero_point=0,
                         is_variable=True)
    b.mark_output(z)
    b.add_metadata("note", b"\x01\x02\x03")
    b.add_signature("serving_default", {"in": x}, {"out": z})
    model = read_model(b.build())

    sg = model.subgraphs[0]
    assert sg.inputs == (x,) and sg.outputs == (z,)
    tx, tw, ty, tz, ts = (sg.tensors[i] for i in (x, w, y, z, state))
    assert (tx.name, tx.type, tx.shape) == ("x", TensorType.INT8, (1, 5, 5, 2))
    assert tx.quantization.scale.tolist() == [0.25]
    assert tx.quantization.zero_point.tolist() == [-3]
    assert tw.quantization.per_channel and tw.quantization.quantized_dimension == 0
    assert np.array_equal(tw.quantization.scale, ws)
    assert np.array_equal(tw.data, wq)
    assert ts.is_variable and not ts.is_constant and ts.type == TensorType.INT16
    assert tz.shape == (1, 27) and not tz.is_constant
    conv, reshape = sg.operators
    assert conv.name == "CONV_2D" and conv.inputs == (x, w, -1) and conv.outputs == (y,)
    assert conv.options == Conv2DOptions(padding="VALID", stride_w=2, stride_h=2,
                                         fused_activation_function="RELU6")
    assert reshape.options == ReshapeOptions(new_shape=(1, 27))
    assert model.metadata_bytes("note") == b"\x01\x02\x03"
    (sig,) = model.signature_defs
    assert sig.signature_key == "serving_default"
    assert sig.inputs == (("in", x),) and sig.outputs == (("out", z),)
    assert ty.quantization.zero_point.tolist() == [7]


def test_builder_writes_both_builtin_codes_and_custom_ops() -> None:
    b = ModelBuilder()
    x = b.add_input("x", (1, 3, 3, 3, 1), "float32")
    w = b.add_constant("w", np.ones((1, 1, 1, 1, 1), np.float32))
    y = b.add_tensor("y", (1, 3, 3, 3, 1), "float32")
    b.add_operator("CONV_3D", [x, w], [y], padding="VALID", stride_d=1, stride_w=1, stride_h=1)
    z = b.add_tensor("z", (1, 3, 3, 3, 1), "float32")
    b.add_operator("MY_CUSTOM_OP", [y], [z], custom_options=b"\x00\x07")
    b.mark_output(z)
    data = b.build()
    assert data[4:8] == b"TFL3"
    codes = FlatBuffer(memoryview(data)).root("Model").tables("operator_codes")
    stored = [(c.scalar("deprecated_builtin_code"), c.scalar("builtin_code"),
               c.string("custom_code")) for c in codes]
    assert stored == [(127, 132, None), (32, 32, "MY_CUSTOM_OP")]
    ops = read_model(data).subgraphs[0].operators
    assert ops[0].name == "CONV_3D" and ops[0].builtin_code == 132
    assert ops[1].is_custom and ops[1].name == "MY_CUSTOM_OP"
    assert ops[1].custom_options == b"\x00\x07"


def test_builder_multiple_subgraphs_and_string_options() -> None:
    case = CASES["resource_variables_call_once"]()
    model = read_model(case.model)
    assert [sg.name for sg in model.subgraphs] == ["main", "init"]
    ops = model.subgraphs[0].operators
    assert ops[0].options.init_subgraph_index == 1
    assert ops[1].options == VarHandleOptions(container="", shared_name="acc")


def test_builder_int4_constants_are_packed() -> None:
    b = ModelBuilder()
    values = np.array([-8, 7, 1, -1, 3], np.int8)
    t = b.add_constant("w", values, "int4", scale=1.0, zero_point=0)
    model = read_model(b.build())
    raw = bytes(model.buffers[model.subgraphs[0].tensors[t].buffer])
    # low nibble first: (-8, 7) -> 0x78, (1, -1) -> 0xF1, (3, pad) -> 0x03
    assert raw == bytes([0x78, 0xF1, 0x03])


@pytest.mark.parametrize("make, message", [
    (lambda b: b.add_operator("NOT_AN_OP_BUT_CUSTOM", [0], [0], padding="SAME"), "custom"),
    (lambda b: b.add_operator("CONV_2D", [0], [1], paddingg="SAME"), "paddingg"),
    (lambda b: b.add_operator("CONV_2D", [0], [1], padding="FULL"), "Padding"),
    (lambda b: b.add_operator("RELU", [0], [1], alpha=0.1), "no builtin options"),
    (lambda b: b.add_operator("RELU", [0], [9]), "not a tensor index"),
    (lambda b: b.add_operator("CUSTOM", [0], [1]), "custom_code"),
    (lambda b: b.add_tensor("t", (2, 3), "int8", scale=[0.1, 0.2, 0.3],
                            quantized_dimension=0), "per-channel"),
    (lambda b: b.add_tensor("t", (2,), "int8", scale=[0.1, 0.2], zero_point=[0, 1, 2]),
     "zero points"),
    (lambda b: b.add_tensor("t", (2,), "int8", scale=-1.0), "positive"),
    (lambda b: b.add_tensor("t", (2,), "int9"), "unknown tensor type"),
    (lambda b: b.add_constant("c", np.ones(3), "int8"), "quantize it first"),
    (lambda b: b.add_constant("c", np.array([300]), "int8"), "do not fit"),
    (lambda b: b.add_constant("c", np.ones(3), shape=(2, 2)), "do not fill"),
    (lambda b: b.subgraph(5), "no subgraph"),
])
def test_builder_rejects_bad_requests(make, message: str) -> None:
    b = ModelBuilder()
    b.add_input("x", (1, 4), "float32")
    b.add_tensor("y", (1, 4), "float32")
    with pytest.raises(BuildError, match=message):
        make(b)


def test_builder_rejects_writes_to_constants_and_double_producers() -> None:
    b = ModelBuilder()
    x = b.add_input("x", (1, 4), "float32")
    c = b.add_constant("c", np.ones((1, 4), np.float32))
    b.add_operator("RELU", [x], [c])
    with pytest.raises(BuildError, match="constant"):
        b.build()
    b = ModelBuilder()
    x = b.add_input("x", (1, 4), "float32")
    y = b.add_tensor("y", (1, 4), "float32")
    b.add_operator("RELU", [x], [y])
    b.add_operator("RELU6", [x], [y])
    with pytest.raises(BuildError, match="written by operators 0 and 1"):
        b.build()
