"""No allocation during invoke, and tensor data nowhere but in the arena.

TFLM's Invoke allocates nothing: kernels write into the arena, and what they need besides is
planned at AllocateTensors. tinyarena keeps that contract: kernels write through ``out=`` views
and use workspaces made once at allocation. tracemalloc (which sees numpy's data allocations)
measures the peak memory allocated during one invoke; it must stay under a fixed bound however
large the model's tensors are.
"""

from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import tinyarena
from tinyarena.examples.streaming import streaming_model

sys.path.insert(0, str(Path(__file__).resolve().parent / "interpreter"))
from interp_models import float_chain, int8_add_with_variable  # noqa: E402

# Bytes one invoke may allocate, whatever the model. numpy's ufunc machinery buffers casts in
# chunks of 8192 elements (np.getbufsize()), i.e. up to 64 KiB for float64, allocated per call
# and freed at once; the rest is Python frames and small index objects.
BOUND = 128 * 1024


def _address(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def _ready(model: bytes | Path) -> tinyarena.Interpreter:
    ip = tinyarena.Interpreter(model)
    ip.allocate_tensors()
    rng = np.random.default_rng(0)
    for i, d in enumerate(ip.get_input_details()):
        if np.issubdtype(d["dtype"], np.floating):
            x = rng.standard_normal(d["shape"]).astype(d["dtype"])
        else:
            info = np.iinfo(d["dtype"])
            x = rng.integers(info.min, info.max, size=d["shape"], endpoint=True).astype(d["dtype"])
        ip.set_input(x, i)
    ip.invoke()  # warm-up: first calls may fill caches (imports, ufunc loops)
    return ip


def _invoke_peak(ip: tinyarena.Interpreter) -> int:
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        ip.invoke()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak - before


def _tensors_in_arena(ip: tinyarena.Interpreter) -> None:
    lo = _address(ip.arena)
    hi = lo + ip.arena.nbytes
    for sg in ip.model.subgraphs:
        for t in sg.tensors:
            view = ip._allocated().views[sg.index].arrays[t.index]
            if t.is_constant or view is None:
                continue
            assert lo <= _address(view) and _address(view) + view.nbytes <= hi, t.name


def test_numpy_cast_buffer_is_the_fixed_part_of_the_bound() -> None:
    """A casting ufunc over a large array allocates one 64 KiB buffer, not the array size."""
    assert np.getbufsize() * 8 <= BOUND // 2
    src = np.ones(1 << 20, np.int8)
    dst = np.empty(1 << 20, np.float64)
    np.multiply(src, 3.0, out=dst, casting="unsafe")  # warm-up
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        np.multiply(src, 3.0, out=dst, casting="unsafe")
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert peak < BOUND


def test_tracemalloc_sees_numpy_allocations() -> None:
    """The measurement itself can fail: a 1 MiB numpy temporary shows up."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        np.ones(1 << 18, np.float32).sum()
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert peak >= 1 << 20


_SHARED = ["hello_world_int8", "person_detect", "kws_ref_model", "micro_speech_quantized",
           "mobilenet_v2_quantized_1x3x224x224"]


@pytest.mark.parametrize("name", _SHARED)
def test_invoke_allocates_under_a_fixed_bound(name: str, shared_models: Path) -> None:
    ip = _ready(shared_models / f"{name}.tflite")
    _tensors_in_arena(ip)
    peak = _invoke_peak(ip)
    assert peak < BOUND, f"{name}: one invoke allocated {peak} bytes (arena {ip.arena.nbytes})"


@pytest.mark.parametrize("model", [int8_add_with_variable(), float_chain(3, 32),
                                   streaming_model(kernels=(3, 5), channels=8)],
                         ids=["int8_add_variable", "float_chain_small", "streaming_bound_steps"])
def test_small_built_models(model: bytes) -> None:
    ip = _ready(model)
    _tensors_in_arena(ip)
    assert _invoke_peak(ip) < BOUND


def test_first_invoke_compiles_nothing_with_compiled_kernels() -> None:
    """With the ``fast`` extra the compiled kernels are made (or loaded from numba's cache) at
    allocate_tensors, for the exact argument types they are bound to: the very first invoke,
    without a warm-up, stays within the bound (compiling a kernel allocates megabytes)."""
    from tinyarena.kernels import native

    if not native.available():
        pytest.skip("numba (extra 'fast') absent")
    model = streaming_model(kernels=(3, 5), channels=8)
    ip = tinyarena.Interpreter(model, native=True)
    ip.allocate_tensors()
    for i, d in enumerate(ip.get_input_details()):
        ip.set_input(np.zeros(d["shape"], d["dtype"]), i)
    assert _invoke_peak(ip) < BOUND
