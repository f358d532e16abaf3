"""One-op models checked end to end against the live wheel: outputs and the arena.

``check_op`` runs the model once in the wheel (one interpreter: invoke, then its recording
allocator's report) and once through tinyarena (``allocate_model`` for head, tail and the
recording categories; the ``Interpreter`` on a real arena for the outputs). Outputs must be
identical (``np.array_equal``, NaN equal to NaN for floats) with the wheel's dtype and shape.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tflm_oracle import _feed, _outputs, captured_stderr, make_interpreter, parse_allocations
from tinyarena.arena.allocator import allocate_model
from tinyarena.builder import ModelBuilder
from tinyarena.interpreter import Interpreter
from tinyarena.model import read_model


def wheel_run(model: bytes, inputs: Sequence[np.ndarray]) -> tuple[list[np.ndarray], Any]:
    """The wheel's outputs of one invoke and its allocation report, from one interpreter."""
    with captured_stderr() as err:
        ip = make_interpreter(model)
        _feed(ip, inputs)
        ip.invoke()
        outputs = _outputs(ip)
        ip.print_allocations()
    return outputs, parse_allocations(err[0])


def ours_run(model: bytes, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    interp = Interpreter(model)
    interp.allocate_tensors()
    for i, data in enumerate(inputs):
        interp.set_input(i, data)
    interp.invoke()
    return [np.array(interp.get_output(i), copy=True)
            for i in range(len(interp.get_output_details()))]


def assert_arena_matches(model: bytes, wheel: Any) -> None:
    ours = allocate_model(read_model(model))
    assert (ours.head, ours.tail, ours.total) == (wheel.head, wheel.tail, wheel.total), wheel.text
    got = {k: (v.used, v.requested, v.count) for k, v in ours.categories.items()}
    assert got == wheel.categories, wheel.text


def check_op(model: bytes, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Outputs and arena identical to the wheel's; returns the wheel's outputs."""
    want, report = wheel_run(model, inputs)
    assert_arena_matches(model, report)
    got = ours_run(model, inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        assert np.array_equal(g, w, equal_nan=g.dtype.kind == "f"), (g, w)
        if g.dtype.kind == "f":  # signed zeros too
            assert np.array_equal(np.signbit(g), np.signbit(w)), (g, w)
    return want


def one_op(op: str, inputs: Sequence[tuple[str, Any]], outputs: Sequence[tuple[tuple[int, ...], str]],
           *, quant: tuple[float, int] | None = None, out_quant: tuple[float, int] | None = None,
           **options: Any) -> tuple[bytes, list[str]]:
    """A one-op model. ``inputs``: ("name", shape tuple + dtype as ((shape), dtype)) for graph
    inputs, or ("name", ndarray) for constants. Returns (model bytes, graph input names)."""
    b = ModelBuilder()
    q = {} if quant is None else {"scale": quant[0], "zero_point": quant[1]}
    oq = q if out_quant is None else {"scale": out_quant[0], "zero_point": out_quant[1]}
    ids: list[int | None] = []
    names = []
    for name, spec in inputs:
        if spec is None:
            ids.append(None)
        elif isinstance(spec, np.ndarray):
            ids.append(b.add_constant(name, spec))
        else:
            shape, dtype = spec
            extra = q if dtype in ("int8", "int16") else {}
            ids.append(b.add_input(name, tuple(shape), dtype, **extra))
            names.append(name)
    outs = []
    for k, (shape, dtype) in enumerate(outputs):
        extra = oq if dtype in ("int8", "int16") else {}
        outs.append(b.add_tensor(f"y{k}", tuple(shape), dtype, **extra))
    b.add_operator(op, ids, outs, **options)
    for o in outs:
        b.mark_output(o)
    return b.build(), names


def random_array(rng: np.random.Generator, shape: Sequence[int], dtype: str) -> np.ndarray:
    if dtype == "float32":
        return rng.standard_normal(tuple(shape)).astype(np.float32)
    if dtype == "bool":
        return rng.integers(0, 2, size=tuple(shape)).astype(bool)
    info = np.iinfo(np.dtype(dtype))
    lo, hi = max(info.min, -1000), min(info.max, 1000)
    if dtype in ("int8", "uint8"):
        lo, hi = info.min, info.max
    return rng.integers(lo, hi, size=tuple(shape), endpoint=True).astype(dtype)
