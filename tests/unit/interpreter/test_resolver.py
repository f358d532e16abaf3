"""OpResolver: explicit registration, missing ops at allocation, custom ops from Python."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import tinyarena
from interp_models import two_input_add
from tinyarena.builder import ModelBuilder
from tinyarena.errors import InterpreterError, UnsupportedOpError
from tinyarena.kernels.base import Registration


def test_explicit_resolver_runs_the_model() -> None:
    resolver = tinyarena.OpResolver().add("ADD").add("MUL")
    assert "ADD" in resolver and "CONV_2D" not in resolver
    ip = tinyarena.Interpreter(two_input_add(), arena_size=4096, resolver=resolver)
    ip.allocate_tensors()
    one = np.ones((2, 3), np.float32)
    ip.set_input(one, 0)
    ip.set_input(one, 1)
    ip.invoke()
    assert np.array_equal(ip.get_output(0), 2 * one)


def test_missing_op_fails_at_allocation_naming_op_and_index() -> None:
    ip = tinyarena.Interpreter(two_input_add(), arena_size=4096,
                               resolver=tinyarena.OpResolver(["ADD"]))
    with pytest.raises(UnsupportedOpError, match=r"MUL \(operator 1 of subgraph 0\)") as info:
        ip.allocate_tensors()
    assert info.value.op_name == "MUL" and info.value.op_index == 1
    assert "resolver.add('MUL')" in str(info.value)


def test_registration_mistakes_are_refused() -> None:
    resolver = tinyarena.OpResolver().add("ADD")
    with pytest.raises(InterpreterError, match="already registered"):
        resolver.add("ADD")
    with pytest.raises(UnsupportedOpError, match="no builtin kernel called NOT_AN_OP"):
        resolver.add("NOT_AN_OP")
    with pytest.raises(InterpreterError, match="Registration"):
        resolver.add("MINE", kernel=lambda ctx, op, data: None)  # type: ignore[arg-type]


@dataclass(frozen=True)
class _ScaleData:
    factor: float
    workspace: int


def _scale_prepare(ctx, op) -> _ScaleData:
    shape = ctx.tensor(op.inputs[0]).shape
    return _ScaleData(3.0, ctx.request_workspace(shape, np.float32))


def _scale_eval(ctx, op, data: _ScaleData) -> None:
    tmp = ctx.workspace(data.workspace)
    np.multiply(ctx.tensor_data(op.inputs[0]), data.factor, out=tmp)
    np.add(tmp, 1.0, out=ctx.tensor_data(op.outputs[0]))


def _custom_model() -> bytes:
    b = ModelBuilder()
    x = b.add_input("x", (4,), "float32")
    y = b.add_tensor("y", (4,), "float32")
    b.add_operator("CUSTOM", [x], [y], custom_code="SCALE_PLUS_ONE")
    b.mark_output(y)
    return b.build()


def test_custom_op_registered_from_python() -> None:
    model = _custom_model()
    with pytest.raises(UnsupportedOpError, match="custom op SCALE_PLUS_ONE"):
        tinyarena.Interpreter(model, arena_size=4096).allocate_tensors()
    resolver = tinyarena.OpResolver.default().add_custom(
        "SCALE_PLUS_ONE", Registration("SCALE_PLUS_ONE", prepare=_scale_prepare, eval=_scale_eval))
    ip = tinyarena.Interpreter(model, arena_size=4096, resolver=resolver)
    ip.allocate_tensors()
    x = np.array([0.0, 1.0, -2.0, 0.5], np.float32)
    ip.set_input(x, 0)
    ip.invoke()
    assert np.array_equal(ip.get_output(0), x * 3 + 1)
    # The workspace is outside the arena and reported on its own.
    assert ip.workspace_bytes() == 16
    assert ip.allocation_report().workspace_bytes == 16
