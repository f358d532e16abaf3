"""Interpreter: tensor placement in the arena, the public API and its errors."""

from __future__ import annotations

import numpy as np
import pytest

import tinyarena
from interp_models import float_chain, int8_add_with_variable, two_input_add
from tinyarena.errors import ArenaTooSmallError, InterpreterError


def _address(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def _ready(model: bytes, **kwargs) -> tinyarena.Interpreter:
    ip = tinyarena.Interpreter(model, **kwargs)
    ip.allocate_tensors()
    return ip


def test_every_tensor_sits_at_the_memory_model_offset() -> None:
    model = float_chain(6)
    ip = _ready(model, arena_size=8192)
    # The memory model, computed independently of the interpreter for the same arena size.
    layout = tinyarena.allocate_model(tinyarena.read_model(model), arena_size=8192)
    base = _address(ip.arena)
    sg = ip.model.subgraphs[0]
    planned = 0
    for t in sg.tensors:
        if t.is_constant:
            continue
        view = ip._allocated().views[0].arrays[t.index]
        assert _address(view) - base == layout.tensor_offsets[(0, t.index)]
        assert view.shape == t.shape and view.dtype == np.float32
        planned += 1
    assert planned == 7
    assert base % 16 == 0


def test_constants_are_zero_copy_views_of_the_model_bytes() -> None:
    model = float_chain(2)
    ip = _ready(model, arena_size=4096)
    raw = np.frombuffer(ip.model.raw, dtype=np.uint8)
    for t in ip.model.subgraphs[0].tensors:
        if t.is_constant:
            view = ip._allocated().views[0].arrays[t.index]
            assert np.shares_memory(view, raw)
            assert not view.flags.writeable


def test_tensor_data_lives_only_in_the_arena() -> None:
    ip = _ready(two_input_add(), arena_size=4096)
    arena = ip.arena
    lo, hi = _address(arena), _address(arena) + arena.nbytes
    for view in ip._allocated().views[0].arrays:
        assert view is not None
        assert lo <= _address(view) and _address(view) + view.nbytes <= hi


def test_results_and_io_api() -> None:
    ip = _ready(two_input_add(), arena_size=4096)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.full((2, 3), 0.5, dtype=np.float32)
    ip.set_input(a, 0)
    ip.set_tensor(ip.get_input_details()[1]["index"], b)
    ip.invoke()
    assert np.array_equal(ip.get_output(0), (a + b) * a)
    out_index = ip.get_output_details()[0]["index"]
    assert np.array_equal(ip.get_tensor(out_index), ip.get_output(0))
    assert ip.get_output(0) is not ip.output(0)  # get_output copies, output() is the view
    assert np.shares_memory(ip.output(0), ip.arena)


def test_details_describe_quantization() -> None:
    ip = _ready(int8_add_with_variable(), arena_size=4096)
    (inp,) = ip.get_input_details()
    assert inp["name"] == "x" and inp["dtype"] is np.int8
    assert list(inp["shape"]) == [1, 8]
    assert inp["quantization"] == (0.5, 3)
    assert list(inp["quantization_parameters"]["zero_points"]) == [3]
    (out,) = ip.get_output_details()
    assert out["quantization"] == (1.0, 1)


def test_variable_tensors_live_in_the_tail_and_reset_to_their_zero_point() -> None:
    size = 4096
    ip = _ready(int8_add_with_variable(), arena_size=size)
    layout = ip.layout
    offset = ip.tensor_offset(1)
    assert offset is not None and offset >= size - layout.tail  # tail = the top of the arena
    state = ip._allocated().views[0].arrays[1]
    assert np.all(state == -7)  # ResetVariableTensors: the int8 zero point
    state[...] = 42
    ip.reset()
    assert np.all(state == -7)


def test_caller_buffer_is_aligned_like_tflm_and_used_in_place() -> None:
    backing = np.zeros(4096 + 32, dtype=np.uint8)
    misaligned = backing[3:3 + 4096]  # start 3 bytes past a 16-byte boundary (or so)
    ip = _ready(two_input_add(), arena=misaligned)
    pad = -_address(misaligned) % 16
    assert _address(ip.arena) == _address(misaligned) + pad
    assert ip.arena.nbytes == 4096 - pad  # MicroAllocator::Create keeps the end
    a = np.ones((2, 3), np.float32)
    ip.set_input(a, 0)
    ip.set_input(a, 1)
    ip.invoke()
    assert np.shares_memory(ip.output(0), backing)
    assert np.array_equal(ip.get_output(0), np.full((2, 3), 2.0, np.float32))


def test_bytearray_arena() -> None:
    arena = bytearray(4096)
    ip = _ready(two_input_add(), arena=arena)
    ip.set_input(np.ones((2, 3), np.float32), 0)
    ip.set_input(np.ones((2, 3), np.float32), 1)
    ip.invoke()
    assert np.array_equal(ip.get_output(0), np.full((2, 3), 2.0, np.float32))
    assert any(arena)  # the data went into the caller's buffer


def test_arena_made_to_the_smallest_working_size() -> None:
    model = two_input_add()
    ip = _ready(model)
    layout = tinyarena.allocate_model(tinyarena.read_model(model))
    assert ip.arena.nbytes == layout.min_arena
    assert ip.arena_used_bytes() == layout.total


def test_errors() -> None:
    ip = tinyarena.Interpreter(two_input_add(), arena_size=4096)
    with pytest.raises(InterpreterError, match="allocate_tensors"):
        ip.invoke()
    with pytest.raises(InterpreterError, match="allocate_tensors"):
        ip.set_input(np.zeros((2, 3), np.float32), 0)
    ip.allocate_tensors()
    with pytest.raises(InterpreterError, match=r"shape \(2, 3\)"):
        ip.set_input(np.zeros((3, 2), np.float32), 0)
    with pytest.raises(InterpreterError, match="float32, got float64"):
        ip.set_input(np.zeros((2, 3)), 0)
    with pytest.raises(InterpreterError, match="out of range"):
        ip.set_input(np.zeros((2, 3), np.float32), 2)
    with pytest.raises(InterpreterError, match="out of range"):
        ip.get_output(1)
    with pytest.raises(InterpreterError, match="not both"):
        tinyarena.Interpreter(two_input_add(), bytearray(10), arena_size=10)
    with pytest.raises(InterpreterError, match="read-only"):
        tinyarena.Interpreter(two_input_add(), bytes(4096))


def test_arena_too_small_names_what_is_needed() -> None:
    model = float_chain(3)
    needed = tinyarena.allocate_model(tinyarena.read_model(model)).min_arena
    ip = tinyarena.Interpreter(model, arena_size=needed - 16)
    with pytest.raises(ArenaTooSmallError) as info:
        ip.allocate_tensors()
    assert info.value.needed == needed
    assert info.value.missing == 16
    assert not ip.allocated
    _ready(model, arena_size=needed)  # and the reported size is enough


def test_get_tensor_refuses_tensors_overwritten_during_invoke() -> None:
    ip = _ready(float_chain(6), arena_size=8192)
    x = np.zeros((1, 32), np.float32)
    ip.set_input(x, 0)
    ip.invoke()
    sg = ip.model.subgraphs[0]
    y = ip.get_tensor(sg.outputs[0])
    assert np.array_equal(y, x + sum(range(1, 7)))
    layout = ip.layout
    by_index = {b.index: b for b in layout.buffers if b.kind == "tensor"}
    refused = 0
    for t in sg.tensors:
        if t.is_constant:
            continue
        own = by_index[t.index]
        clobbered = any(b.first > own.last and b.offset < own.offset + own.size
                        and own.offset < b.offset + b.size for b in layout.buffers)
        if clobbered:
            refused += 1
            with pytest.raises(InterpreterError, match="not live after invoke"):
                ip.get_tensor(t.index)
        else:
            # Still holds what the chain computed there: t{k} = x + 1 + ... + (k+1).
            k = -1 if t.name == "x" else int(t.name[1:])
            assert np.array_equal(ip.get_tensor(t.index), x + (k + 1) * (k + 2) // 2)
    assert refused > 0  # the chain reuses memory, so some intermediates are gone


def test_allocation_report_has_tflm_numbers_and_workspaces_apart() -> None:
    ip = _ready(float_chain(2), arena_size=4096)
    report = ip.allocation_report()
    assert report.total == ip.arena_used_bytes() == report.head + report.tail
    text = str(report)
    assert f"[RecordingMicroAllocator] Arena allocation total {report.total} bytes" in text
    assert "kernel workspaces outside the arena" in text
    assert report.to_dict()["arena_size"] == 4096


def test_compiled_kernels_constants_are_reported_apart() -> None:
    """Compiled steps' own arrays (weights in their loops' layout, parameters) are outside the
    arena and the workspaces: counted once, named in the report, 0 with numpy kernels. The arena
    (2 KB here), the workspaces and the model's constants read in place must not be counted."""
    from small_models import hello_world_like

    from tinyarena.kernels import native

    model = hello_world_like(3)
    numpy_only = tinyarena.Interpreter(model, native=False)
    numpy_only.allocate_tensors()
    assert numpy_only.compiled_constant_bytes() == 0
    assert "compiled kernels" not in str(numpy_only.allocation_report())
    if not native.available():
        pytest.skip("numba (extra 'fast') absent")
    ip = tinyarena.Interpreter(model, native=True)
    ip.allocate_tensors()
    owned = ip.compiled_constant_bytes()
    weights = sum(t.data.nbytes for t in ip.model.subgraphs[0].tensors if t.data is not None)
    assert 0 < owned < weights + 4096  # packed copies and parameters, never arena or model
    report = ip.allocation_report()
    assert report.to_dict()["compiled_constant_bytes"] == owned
    assert f"packed constants outside the arena: {owned} bytes" in str(report)
