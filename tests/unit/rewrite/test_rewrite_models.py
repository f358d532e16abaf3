"""The rewriter on every shared model and on hand-made ones: lossless, loadable, aligned."""

from __future__ import annotations

import struct

import flatbuffers
import numpy as np
import pytest
from tflm_oracle import model_random_inputs, shared_model_bytes, tflm_run

from tinyarena.builder import ModelBuilder
from tinyarena.builder import _writer as w
from tinyarena.errors import BuildError
from tinyarena.model import Model, read_model
from tinyarena.model._flatbuf import FlatBuffer
from tinyarena.rewrite import (
    KeptOperator,
    NewOperator,
    NewTensor,
    SubgraphReplacement,
    reorder_operators,
    replace_subgraph,
    rewrite_model,
    set_metadata,
)

STATEFUL = {"CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"}


def _other_topological_order(model: Model, sg: int = 0) -> list[int]:
    """A valid order differing from the stored one where the graph allows: Kahn's algorithm
    always taking the ready operator with the highest index."""
    ops = model.subgraphs[sg].operators
    variables = {t.index for t in model.subgraphs[sg].tensors if t.is_variable}
    producer = {t: op.index for op in ops for t in op.outputs}
    deps: dict[int, set[int]] = {op.index: set() for op in ops}
    for op in ops:
        deps[op.index] |= {producer[t] for t in op.inputs if t in producer and
                           producer[t] != op.index}
    chained: dict[object, int] = {}
    for op in ops:  # ops sharing a variable (or resource ops) keep their order
        keys = [("v", t) for t in set(op.inputs) | set(op.outputs) if t in variables]
        keys += ["resource"] if op.name in STATEFUL else []
        for key in keys:
            if key in chained:
                deps[op.index].add(chained[key])
            chained[key] = op.index
    order: list[int] = []
    done: set[int] = set()
    while len(order) < len(ops):
        ready = [i for i in deps if i not in done and deps[i] <= done]
        pick = max(ready)
        order.append(pick)
        done.add(pick)
    return order


def _tensor_key(t):
    q = t.quantization
    qkey = None if q is None else (q.scale.tobytes(), q.zero_point.tobytes(),
                                   q.quantized_dimension)
    data = None if t.data is None else t.data.tobytes()
    return (t.name, t.type, t.shape, t.shape_signature, t.buffer, data, t.is_variable, qkey)


def _op_key(op):
    return (op.name, op.builtin_code, op.version, op.inputs, op.outputs, op.intermediates,
            op.options, op.custom_options)


def _buffer_offsets(data: bytes) -> list[int]:
    model = read_model(data)
    base = np.frombuffer(model.raw, np.uint8).ctypes.data
    return [np.frombuffer(b, np.uint8).ctypes.data - base if len(b) else -1
            for b in model.buffers]


def test_rewrite_without_edits_returns_the_same_bytes(shared_models, shared_model_name) -> None:
    data = shared_model_bytes(shared_model_name)
    assert rewrite_model(data) == data
    assert rewrite_model(data, metadata={}, operator_order={}) == data


@pytest.mark.oracle
def test_rewrite_metadata_and_reorder_is_lossless(shared_models, shared_model_name) -> None:
    data = shared_model_bytes(shared_model_name)
    old = read_model(data)
    order = _other_topological_order(old)
    payload = b"tinyarena rewrite test \x00\x01\x02"
    new_bytes = rewrite_model(data, metadata={"tinyarena_test": payload},
                              operator_order={0: order})
    new = read_model(new_bytes)

    # every other field reads back identical
    assert (new.version, new.description) == (old.version, old.description)
    assert new.metadata[:len(old.metadata)] == old.metadata
    assert new.metadata_bytes("tinyarena_test") == payload
    assert len(new.buffers) == len(old.buffers) + 1
    assert all(bytes(a) == bytes(b) for a, b in zip(old.buffers, new.buffers))
    assert new.signature_defs == old.signature_defs
    assert len(new.subgraphs) == len(old.subgraphs)
    for sg_old, sg_new in zip(old.subgraphs, new.subgraphs):
        assert (sg_new.name, sg_new.inputs, sg_new.outputs) == \
            (sg_old.name, sg_old.inputs, sg_old.outputs)
        assert [_tensor_key(t) for t in sg_new.tensors] == [_tensor_key(t) for t in sg_old.tensors]
    ops_old = old.subgraphs[0].operators
    assert [_op_key(op) for op in new.subgraphs[0].operators] == \
        [_op_key(ops_old[i]) for i in order]
    for sg_old, sg_new in zip(old.subgraphs[1:], new.subgraphs[1:]):
        assert [_op_key(o) for o in sg_new.operators] == [_op_key(o) for o in sg_old.operators]

    # buffer data keeps its alignment (16 bytes, or the original's modulo 16)
    for before, after in zip(_buffer_offsets(data), _buffer_offsets(new_bytes)):
        if before >= 0:
            assert after % 16 == before % 16
    assert _buffer_offsets(new_bytes)[-1] % 16 == 0

    # the wheel runs it with outputs identical to the original's
    inputs = model_random_inputs(old, seed=len(data))
    expected = tflm_run(data, inputs)
    got = tflm_run(new_bytes, inputs)
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert a.dtype == b.dtype and np.array_equal(a, b)


@pytest.mark.oracle
def test_rewritten_models_pass_litert_verifier(shared_models, shared_model_name) -> None:
    from litert_check import litert_loads

    data = shared_model_bytes(shared_model_name)
    try:
        litert_loads(data)
    except ValueError:
        pytest.skip("LiteRT rejects the original model too")
    model = read_model(data)
    new = rewrite_model(data, metadata={"m": b"x" * 33},
                        operator_order={0: _other_topological_order(model)})
    litert_loads(new)


def test_replacing_metadata_keeps_its_buffer_slot() -> None:
    b = ModelBuilder()
    x = b.add_input("x", (1, 4), "float32")
    y = b.add_tensor("y", (1, 4), "float32")
    b.add_operator("RELU", [x], [y])
    b.mark_output(y)
    b.add_metadata("a", b"old")
    b.add_metadata("b", b"keep")
    data = b.build()
    new = read_model(set_metadata(data, "a", b"new contents"))
    assert new.metadata == read_model(data).metadata
    assert new.metadata_bytes("a") == b"new contents"
    assert new.metadata_bytes("b") == b"keep"
    pointed = read_model(rewrite_model(data, metadata={"c": 2}))
    assert pointed.metadata_bytes("c") == b"keep"


def _model_with_unknown_fields() -> bytes:
    """A model whose Model table has two fields this schema lacks: slot 14 a string (an offset),
    slot 15 an int32 scalar; and whose SubGraph table has an unknown int64 at slot 9."""
    b = ModelBuilder()
    x = b.add_input("x", (1, 4), "float32")
    h = b.add_tensor("h", (1, 4), "float32")
    y = b.add_tensor("y", (1, 4), "float32")
    b.add_operator("RELU", [x], [h])
    b.add_operator("RELU6", [h], [y])
    b.mark_output(y)
    spec = b.spec()
    fb = flatbuffers.Builder(1024)
    buffers = w._offset_vector(fb, [w._write_buffer(fb, d) for d in spec.buffers])
    codes = w._offset_vector(fb, [w._write_operator_code(fb, c) for c in spec.operator_codes])
    sg = spec.subgraphs[0]
    tensors = w._offset_vector(fb, [w._write_tensor(fb, t) for t in sg.tensors])
    ins, outs = w._vector(fb, sg.inputs, "int32"), w._vector(fb, sg.outputs, "int32")
    ops = w._offset_vector(fb, [w._write_operator(fb, op) for op in sg.operators])
    fb.StartObject(10)
    fb.PrependUOffsetTRelativeSlot(0, tensors, 0)
    fb.PrependUOffsetTRelativeSlot(1, ins, 0)
    fb.PrependUOffsetTRelativeSlot(2, outs, 0)
    fb.PrependUOffsetTRelativeSlot(3, ops, 0)
    fb.PrependInt64Slot(9, 0x1122334455667788, 0)
    subgraphs = w._offset_vector(fb, [fb.EndObject()])
    secret = fb.CreateString("from the future")
    fb.StartObject(16)
    fb.PrependUint32Slot(0, 3, 0)
    fb.PrependUOffsetTRelativeSlot(1, codes, 0)
    fb.PrependUOffsetTRelativeSlot(2, subgraphs, 0)
    fb.PrependUOffsetTRelativeSlot(4, buffers, 0)
    fb.PrependUOffsetTRelativeSlot(14, secret, 0)
    fb.PrependInt32Slot(15, 424242, 0)
    fb.Finish(fb.EndObject(), file_identifier=b"TFL3")
    return bytes(fb.Output())


def _unknown_field(data: bytes, table_pos: int, slot: int) -> int:
    soffset = struct.unpack_from("<i", data, table_pos)[0]
    vtable = table_pos - soffset
    vsize = struct.unpack_from("<H", data, vtable)[0]
    assert 4 + 2 * slot < vsize, "the unknown field's vtable entry was lost"
    rel = struct.unpack_from("<H", data, vtable + 4 + 2 * slot)[0]
    assert rel, "the unknown field was dropped"
    return table_pos + rel


@pytest.mark.oracle
def test_rewrite_preserves_fields_the_schema_does_not_know() -> None:
    data = _model_with_unknown_fields()
    new = rewrite_model(data, metadata={"note": b"hi"}, operator_order={0: [0, 1]})
    root = FlatBuffer(memoryview(new)).root("Model")
    string_field = _unknown_field(new, root.pos, 14)
    target = string_field + struct.unpack_from("<I", new, string_field)[0]
    length = struct.unpack_from("<I", new, target)[0]
    assert new[target + 4:target + 4 + length] == b"from the future"
    assert struct.unpack_from("<i", new, _unknown_field(new, root.pos, 15))[0] == 424242
    (sub,) = root.tables("subgraphs")
    assert struct.unpack_from("<q", new, _unknown_field(new, sub.pos, 9))[0] == \
        0x1122334455667788
    x = np.array([[-1.0, 0.5, 7.0, 3.0]], np.float32)
    assert np.array_equal(tflm_run(new, [x])[0], tflm_run(data, [x])[0])
    from litert_check import litert_loads

    litert_loads(new)


def _chain_model() -> bytes:
    b = ModelBuilder()
    x = b.add_input("x", (1, 4), "float32")
    a = b.add_tensor("a", (1, 4), "float32")
    c = b.add_tensor("c", (1, 4), "float32")
    y = b.add_tensor("y", (1, 4), "float32")
    b.add_operator("RELU", [x], [a])
    b.add_operator("TANH", [x], [c])
    b.add_operator("ADD", [a, c], [y])
    b.mark_output(y)
    return b.build()


def test_reorder_independent_ops_is_allowed_and_runs() -> None:
    data = _chain_model()
    new = reorder_operators(data, 0, [1, 0, 2])
    names = [op.name for op in read_model(new).subgraphs[0].operators]
    assert names == ["TANH", "RELU", "ADD"]


@pytest.mark.parametrize("order, message", [
    ([2, 0, 1], "not topological"),
    ([0, 1], "not a permutation"),
    ([0, 0, 2], "not a permutation"),
])
def test_bad_orders_raise_build_error(order, message) -> None:
    with pytest.raises(BuildError, match=message):
        reorder_operators(_chain_model(), 0, order)


def test_bad_edits_raise_before_writing() -> None:
    data = _chain_model()
    with pytest.raises(BuildError, match="buffer index 99 is out of range"):
        rewrite_model(data, metadata={"m": 99})
    with pytest.raises(BuildError, match="subgraph 3 does not exist"):
        reorder_operators(data, 3, [0])
    with pytest.raises(BuildError, match="bytes or an existing buffer index"):
        rewrite_model(data, metadata={"m": "text"})
    with pytest.raises(BuildError, match="not a readable model"):
        set_metadata(b"\x00" * 16, "m", b"x")


def test_stateful_ops_keep_their_order() -> None:
    b = ModelBuilder()
    handle = b.add_tensor("handle", (1,), "resource")
    x = b.add_input("x", (1, 2), "float32")
    v = b.add_tensor("v", (1, 2), "float32")
    b.add_operator("VAR_HANDLE", [], [handle], shared_name="s")
    b.add_operator("ASSIGN_VARIABLE", [handle, x], [])
    b.add_operator("READ_VARIABLE", [handle], [v])
    b.mark_output(v)
    with pytest.raises(BuildError, match="relative order"):
        reorder_operators(b.build(), 0, [0, 2, 1])


@pytest.mark.oracle
def test_replace_subgraph_inserts_an_op_and_keeps_the_rest() -> None:
    data = _chain_model()
    # insert y2 = y * y after the ADD, keeping tensors 0..3 and the three ops verbatim
    rep = SubgraphReplacement(
        tensors=(0, 1, 2, 3, NewTensor("y2", "float32", (1, 4))),
        operators=(0, 1, KeptOperator(2), NewOperator("MUL", (3, 3), (4,))),
        inputs=(0,), outputs=(4,))
    new = replace_subgraph(data, 0, rep)
    model = read_model(new)
    assert [op.name for op in model.subgraphs[0].operators] == ["RELU", "TANH", "ADD", "MUL"]
    x = np.array([[-1.0, 0.5, 2.0, 3.0]], np.float32)
    (y2,) = tflm_run(new, [x])
    y = np.maximum(x, 0) + np.tanh(x)
    np.testing.assert_allclose(y2, y * y, rtol=1e-5)
    with pytest.raises(BuildError, match="outside the new tensor list"):
        replace_subgraph(data, 0, SubgraphReplacement((0, 1), (0,), (0,), (5,)))
