"""Pre-allocated tensors used in place, the Interpreter over two arenas, SharedAllocator, and
the error instead of corruption when two Interpreters get overlapping memory."""

from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import tinyarena
from tflm_oracle import SHARED_MODELS, model_random_inputs, tflm_run
from tinyarena.arena.multi import allocate_split
from tinyarena.arena.whatif import saving_without
from tinyarena.errors import InterpreterError
from tinyarena.model import read_model

sys.path.insert(0, str(Path(__file__).resolve().parent))
from interp_models import float_chain, int8_add_with_variable, two_input_add  # noqa: E402


def _address(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def _run(ip: tinyarena.Interpreter, inputs: list[np.ndarray]) -> list[np.ndarray]:
    for i, x in enumerate(inputs):
        ip.set_input(i, x)
    ip.invoke()
    return [ip.get_output(i) for i in range(ip.outputs_size())]


def _shared(name: str) -> bytes:
    path = SHARED_MODELS / name
    if not path.exists():
        pytest.skip(f"{name} not in ../shared/models")
    return path.read_bytes()


def test_preallocated_input_and_output_are_used_in_place() -> None:
    data = two_input_add()
    m = read_model(data)
    sg = m.subgraphs[0]
    a_buf = np.zeros((2, 3), np.float32)
    y_buf = np.zeros((2, 3), np.float32)
    ip = tinyarena.Interpreter(data, preallocated={sg.inputs[0]: a_buf})
    ip.register_preallocated_tensor(sg.outputs[0], y_buf)
    ip.allocate_tensors()
    assert _address(ip.input(0)) == _address(a_buf)
    assert _address(ip.output(0)) == _address(y_buf)
    a_buf[...] = [[1, 2, 3], [4, 5, 6]]  # the "sensor" writes straight into the tensor
    ip.set_input(1, np.full((2, 3), 0.5, np.float32))
    ip.invoke()
    assert np.array_equal(y_buf, (a_buf + 0.5) * a_buf)  # the caller's array changed in place
    plain = tinyarena.Interpreter(data)
    plain.allocate_tensors()
    head, tail = saving_without(plain.layout, [sg.inputs[0], sg.outputs[0]])
    assert head > 0 and plain.arena_used_bytes() - ip.arena_used_bytes() == head + tail


def test_preallocated_invoke_allocates_nothing_large() -> None:
    data = float_chain(n=4, size=4096)
    m = read_model(data)
    sg = m.subgraphs[0]
    x = np.zeros(m.subgraphs[0].tensors[sg.inputs[0]].shape, np.float32)
    y = np.zeros(m.subgraphs[0].tensors[sg.outputs[0]].shape, np.float32)
    ip = tinyarena.Interpreter(data, preallocated={sg.inputs[0]: x, sg.outputs[0]: y})
    ip.allocate_tensors()
    x[...] = np.linspace(-1, 1, x.size, dtype=np.float32).reshape(x.shape)
    ip.invoke()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        ip.invoke()
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert peak < 128 * 1024  # the bound of tests/unit/test_no_alloc_invoke.py
    reference = tinyarena.Interpreter(data)
    reference.allocate_tensors()
    reference.set_input(0, x)
    reference.invoke()
    assert np.array_equal(reference.get_output(0), y)


def test_preallocated_variable_lives_in_the_callers_buffer() -> None:
    data = int8_add_with_variable()
    m = read_model(data)
    var = next(t for t in m.subgraphs[0].tensors if t.is_variable)
    state = np.full((1, 8), 99, np.int8)
    ip = tinyarena.Interpreter(data, target="arm32", preallocated={var.index: state})
    ip.allocate_tensors()
    assert np.all(state == -7)  # Reset wrote the zero point into the caller's buffer
    plain = tinyarena.Interpreter(data, target="arm32")
    plain.allocate_tensors()
    assert plain.arena_used_bytes() - ip.arena_used_bytes() == 16
    x = np.arange(8, dtype=np.int8).reshape(1, 8)
    assert np.array_equal(_run(ip, [x])[0], _run(plain, [x])[0])


def test_bad_buffers_are_refused_clearly() -> None:
    data = two_input_add()
    sg = read_model(data).subgraphs[0]
    x = sg.inputs[0]
    with pytest.raises(InterpreterError, match="needs exactly 24"):
        tinyarena.Interpreter(data, preallocated={x: np.zeros(5, np.float32)})
    with pytest.raises(InterpreterError, match="is int32 but the tensor is float32"):
        tinyarena.Interpreter(data, preallocated={x: np.zeros((2, 3), np.int32)})
    with pytest.raises(InterpreterError, match="read-only"):
        tinyarena.Interpreter(data, preallocated={x: bytes(24)})
    with pytest.raises(InterpreterError, match="contiguous"):
        tinyarena.Interpreter(data, preallocated={x: np.zeros((3, 4), np.float32)[:, ::2]})
    with pytest.raises(InterpreterError, match="aligned"):
        tinyarena.Interpreter(data, preallocated={x: np.zeros(25, np.uint8)[1:]})
    with pytest.raises(InterpreterError, match="writable buffer"):
        tinyarena.Interpreter(data, preallocated={x: [0.0] * 6})
    with pytest.raises(InterpreterError, match="subgraph 0 has tensors"):
        tinyarena.Interpreter(data, preallocated={99: bytearray(24)})
    with pytest.raises(InterpreterError, match="only tensors of subgraph 0"):
        tinyarena.Interpreter(data, preallocated={(1, x): bytearray(24)})
    with pytest.raises(InterpreterError, match="only tensors of subgraph 0"):
        tinyarena.Interpreter(data).register_preallocated_tensor(x, bytearray(24), 2)
    tinyarena.Interpreter(data, preallocated={np.int64(x): bytearray(24), (0, sg.inputs[1]):
                                              np.zeros((2, 3), np.float32)}).allocate_tensors()
    ip = tinyarena.Interpreter(data, preallocated={x: bytearray(24)})  # raw bytes are fine
    ip.allocate_tensors()
    with pytest.raises(InterpreterError, match="before allocate_tensors"):
        ip.register_preallocated_tensor(sg.inputs[1], bytearray(24))


def test_constant_is_refused() -> None:
    data = float_chain(n=2, size=8)
    m = read_model(data)
    constant = next(t for t in m.subgraphs[0].tensors if t.is_constant)
    with pytest.raises(InterpreterError, match="constant"):
        tinyarena.Interpreter(data, preallocated={constant.index: bytearray(constant.tflm_nbytes
                                                                            or 4)})


@pytest.mark.oracle
def test_two_arenas_run_like_one(shared_models) -> None:
    data = _shared("micro_speech_quantized.tflite")
    s = allocate_split(read_model(data))
    persistent = np.zeros(s.persistent_min, np.uint8)
    non_persistent = bytearray(s.non_persistent_min)
    ip = tinyarena.Interpreter(data, persistent_arena=persistent,
                               non_persistent_arena=non_persistent)
    ip.allocate_tensors()
    assert ip.arena_used_bytes() == s.persistent_used + s.non_persistent_used
    inputs = model_random_inputs(data, 1)
    outputs = _run(ip, inputs)
    for got, want in zip(outputs, tflm_run(data, inputs)):
        assert np.array_equal(got, want)
    with pytest.raises(tinyarena.ArenaTooSmallError, match="non-persistent"):
        tinyarena.Interpreter(data, persistent_arena=persistent,
                              non_persistent_arena=bytearray(s.non_persistent_min - 16)
                              ).allocate_tensors()
    with pytest.raises(InterpreterError, match="overlap"):
        tinyarena.Interpreter(data, persistent_arena=persistent[:100],
                              non_persistent_arena=persistent[50:])


@pytest.mark.oracle
def test_shared_allocator_runs_models_in_turn(shared_models) -> None:
    a_data = _shared("micro_speech_quantized.tflite")
    b_data = _shared("hello_world_int8.tflite")
    from tinyarena.arena.multi import allocate_shared

    size = allocate_shared([read_model(a_data), read_model(b_data)]).min_arena
    shared = tinyarena.SharedAllocator(bytearray(size))
    a = tinyarena.Interpreter(a_data, allocator=shared)
    a.allocate_tensors()
    b = tinyarena.Interpreter(b_data, allocator=shared)
    b.allocate_tensors()
    assert a.arena is b.arena
    a_in, b_in = model_random_inputs(a_data, 2), model_random_inputs(b_data, 2)
    a_want, b_want = tflm_run(a_data, a_in), tflm_run(b_data, b_in)
    for _ in range(2):  # A, B, A as TFLM's multi-tenant test: inputs set right before invoke
        assert all(np.array_equal(g, w) for g, w in zip(_run(a, a_in), a_want))
        assert all(np.array_equal(g, w) for g, w in zip(_run(b, b_in), b_want))
    # out of turn: B's invoke overwrote A's outputs and A's inputs
    with pytest.raises(InterpreterError, match="read outputs right after"):
        a.get_output(0)
    a.set_input(0, a_in[0])
    b.set_input(0, b_in[0])
    with pytest.raises(InterpreterError, match="write inputs right before"):
        a.invoke()


def test_overlapping_arenas_are_an_error_not_corruption() -> None:
    """Before: two Interpreters on one bytearray silently overwrote each other's data."""
    data = two_input_add()
    arena = bytearray(4096)
    a = tinyarena.Interpreter(data, arena=arena)
    a.allocate_tensors()
    b = tinyarena.Interpreter(float_chain(n=2, size=8), arena=arena)
    b.allocate_tensors()
    with pytest.raises(InterpreterError, match="overlapping memory"):
        a.set_input(0, np.zeros((2, 3), np.float32))
    with pytest.raises(InterpreterError, match="allocate_tensors"):
        a.invoke()
    a.allocate_tensors()  # taking the arena back works, and then b is the one refused
    a.set_input(0, np.ones((2, 3), np.float32))
    with pytest.raises(InterpreterError, match="overlapping memory"):
        b.invoke()
    # the same memory through another view (numpy over the bytearray, shifted) is caught too
    c = tinyarena.Interpreter(data, arena=np.frombuffer(arena, np.uint8)[16:])
    c.allocate_tensors()
    with pytest.raises(InterpreterError, match="overlapping memory"):
        a.invoke()
    # a larger buffer around a smaller arena (different ends) is caught as well
    outer = bytearray(8192)
    small = tinyarena.Interpreter(data, arena=memoryview(outer)[:2048])
    small.allocate_tensors()
    big = tinyarena.Interpreter(data, arena=outer)
    big.allocate_tensors()
    with pytest.raises(InterpreterError, match="overlapping memory"):
        small.invoke()
    big.set_input(0, np.ones((2, 3), np.float32))
    big.set_input(1, np.ones((2, 3), np.float32))
    big.invoke()
    assert np.array_equal(big.get_output(0), np.full((2, 3), 2, np.float32))


def test_an_independent_interpreter_over_a_shared_arena_is_caught() -> None:
    arena = bytearray(8192)
    shared = tinyarena.SharedAllocator(arena)
    a = tinyarena.Interpreter(two_input_add(), allocator=shared)
    a.allocate_tensors()
    b = tinyarena.Interpreter(float_chain(n=2, size=8), allocator=shared)
    b.allocate_tensors()
    intruder = tinyarena.Interpreter(two_input_add(), arena=arena)
    intruder.allocate_tensors()
    for ip in (a, b):
        with pytest.raises(InterpreterError, match="overlapping memory"):
            ip.invoke()


def test_memory_options_are_exclusive() -> None:
    data = two_input_add()
    with pytest.raises(InterpreterError, match="give one of"):
        tinyarena.Interpreter(data, arena=bytearray(64),
                              allocator=tinyarena.SharedAllocator(bytearray(64)))
    with pytest.raises(InterpreterError, match="both persistent_arena"):
        tinyarena.Interpreter(data, persistent_arena=bytearray(64))
    with pytest.raises(InterpreterError, match="SharedAllocator"):
        tinyarena.Interpreter(data, allocator=object())  # type: ignore[arg-type]
