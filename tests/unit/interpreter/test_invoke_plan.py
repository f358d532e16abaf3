"""The precompiled invoke plan: kernels' bound steps give exactly what their eval gives.

Each model runs twice over several invokes (state carries over): once with the default
kernels (their ``bind`` steps where they have one), once with every ``bind`` removed, so each
op runs its plain eval, the path the kernel tests check against TFLM. Outputs and every
non-constant tensor still live after the invoke must match bit for bit.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import tinyarena
from tinyarena.builder import ModelBuilder
from tinyarena.errors import KernelError
from tinyarena.examples.streaming import streaming_model
from tinyarena.interpreter.inputs import random_inputs
from tinyarena.kernels.base import Registration

MODELS = Path(__file__).resolve().parents[3].parent / "shared" / "models"


def _eval_only(model: bytes, kernel_set: str = "reference") -> tinyarena.OpResolver:
    names = {op.name for sg in tinyarena.read_model(model).subgraphs for op in sg.operators}
    default = tinyarena.OpResolver.default(kernel_set)
    resolver = tinyarena.OpResolver(kernel_set=kernel_set)
    for name in sorted(names):
        resolver.add(name, replace(default.resolve_name(name), bind=None))
    return resolver


def _run(model: bytes, resolver: tinyarena.OpResolver | None, steps: int,
         target: str = "host-x64", kernel_set: str | None = None) -> list[np.ndarray]:
    ip = tinyarena.Interpreter(model, resolver=resolver, target=target, kernel_set=kernel_set)
    ip.allocate_tensors()
    details = ip.get_input_details()
    results = []
    for step in range(steps):
        for i, x in enumerate(random_inputs(details, seed=step)):
            ip.set_input(i, x)
        ip.invoke()
        results += [ip.get_output(i) for i in range(ip.outputs_size())]
    return results


def _same(model: bytes, steps: int = 4, target: str = "host-x64",
          kernel_set: str = "reference") -> None:
    bound = _run(model, None, steps, target, kernel_set)
    plain = _run(model, _eval_only(model, kernel_set), steps, target, kernel_set)
    assert len(bound) == len(plain)
    for b, p in zip(bound, plain):
        assert b.dtype == p.dtype and np.array_equal(b, p)


def test_streaming_model_bound_equals_eval() -> None:
    _same(streaming_model(kernels=(3, 5), channels=8), steps=6)


def _concat_slice_model() -> bytes:
    """CONCATENATION on an inner axis (many pieces) and a strided, shrinking STRIDED_SLICE."""
    b = ModelBuilder()
    x = b.add_input("x", (2, 3, 4), "int8", scale=0.5, zero_point=1)
    y = b.add_input("y", (2, 3, 2), "int8", scale=0.5, zero_point=1)
    cat = b.add_tensor("cat", (2, 3, 6), "int8", scale=0.5, zero_point=1)
    b.add_operator("CONCATENATION", [x, y], [cat], axis=-1)
    begin = b.add_constant("begin", np.array([1, 0, 5], np.int32))
    end = b.add_constant("end", np.array([2, 3, 0], np.int32))
    strides = b.add_constant("strides", np.array([1, 2, -2], np.int32))
    sl = b.add_tensor("sl", (2, 3), "int8", scale=0.5, zero_point=1)
    b.add_operator("STRIDED_SLICE", [cat, begin, end, strides], [sl], shrink_axis_mask=1)
    flat = b.add_tensor("flat", (6,), "int8", scale=0.5, zero_point=1)
    b.add_operator("RESHAPE", [sl, b.add_constant("shape", np.array([6], np.int32))], [flat])
    prob = b.add_tensor("prob", (6,), "int8", scale=1 / 256, zero_point=-128)
    b.add_operator("LOGISTIC", [flat], [prob])
    out = b.add_tensor("out", (6,), "uint8", scale=1 / 256, zero_point=0)
    b.add_operator("QUANTIZE", [prob], [out])
    b.mark_output(cat, out)
    return b.build()


def test_copies_and_tables_bound_equal_eval() -> None:
    _same(_concat_slice_model())


@pytest.mark.parametrize("name", ["hello_world_int8.tflite", "hello_world_float.tflite",
                                  "keyword_scrambled_8bit.tflite",
                                  "trained_lstm_int8.tflite"])
def test_real_models_bound_equal_eval(name: str) -> None:
    path = MODELS / name
    if not path.exists():
        pytest.skip(f"{path} not present")
    _same(path.read_bytes(), steps=2)


@pytest.mark.parametrize("kernel_set", ["reference", "cmsis-nn"])
@pytest.mark.parametrize("name", ["hello_world_int8.tflite", "hello_world_float.tflite",
                                  "keyword_scrambled_8bit.tflite",
                                  "trained_lstm_int8.tflite"])
def test_bound_steps_keep_the_target_arithmetic(name: str, kernel_set: str) -> None:
    """On a Cortex-M4 build (fused float multiply-adds, TFLM 90b983c2's float32 multipliers),
    with either kernel set, bound steps give what eval gives there. (That eval equals the
    device is tests/oracle/test_device_outputs.py's check; it fails if the small float
    FULLY_CONNECTED path, which has no fused form, is taken on a fused build.)"""
    path = MODELS / name
    if not path.exists():
        pytest.skip(f"{path} not present")
    _same(path.read_bytes(), steps=2, target="cortex-m4", kernel_set=kernel_set)


def test_a_kernel_without_bind_runs_its_eval_and_errors_name_the_op() -> None:
    """A Registration with only eval (the plain contract) runs, and a foreign error in it
    becomes a KernelError naming the op, as before the plan existed."""
    b = ModelBuilder()
    x = b.add_input("x", (4,), "float32")
    y = b.add_tensor("y", (4,), "float32")
    b.add_operator("CUSTOM", [x], [y], custom_code="TWICE")
    b.mark_output(y)
    calls = []

    def eval_(ctx, op, data) -> None:
        calls.append(1)
        out = ctx.tensor_data(op.outputs[0])
        np.multiply(ctx.tensor_data(op.inputs[0]), 2, out=out)
        if len(calls) > 1:
            raise ValueError("boom")

    resolver = tinyarena.OpResolver()
    resolver.add_custom("TWICE", Registration("TWICE", eval=eval_, tflm=False))
    ip = tinyarena.Interpreter(b.build(), resolver=resolver)
    ip.allocate_tensors()
    ip.set_input(0, np.arange(4, dtype=np.float32))
    ip.invoke()
    assert np.array_equal(ip.get_output(0), np.arange(4, dtype=np.float32) * 2)
    with pytest.raises(KernelError, match=r"TWICE.*operator 0.*ValueError: boom"):
        ip.invoke()


def test_plan_skips_error_state_only_when_every_step_is_quiet() -> None:
    """A plan of quiet steps (compiled kernels, byte copies) runs without np.errstate; one
    numpy step brings it back for the whole invoke, so numpy never warns from a kernel."""
    from tinyarena.interpreter.invoke_plan import InvokePlan
    from tinyarena.kernels.native import quiet

    seen: list[str] = []

    def numpy_step() -> None:
        seen.append(np.geterr()["divide"])
        np.float32(1.0) / np.float32(0.0)  # would warn outside C's IEEE environment

    def quiet_step() -> None:
        seen.append(np.geterr()["divide"])

    all_quiet = InvokePlan([quiet(quiet_step), quiet(quiet_step)], [], 0)
    mixed = InvokePlan([quiet(quiet_step), numpy_step], [], 0)
    assert all_quiet.quiet and not mixed.quiet
    with np.errstate(divide="raise"):
        all_quiet.run()
        mixed.run()
    assert seen == ["raise", "raise", "ignore", "ignore"]


def _add_one(x: np.ndarray) -> None:  # compiled below for arrays it cannot type
    x[0] += 1


def test_a_kernel_that_cannot_be_compiled_runs_its_numpy_step_with_a_warning() -> None:
    """numba failing on a kernel's bound arrays is no reason to refuse the model: native_step
    reports it as CompileFailed, the plan warns and binds eval, and the outputs stay exact."""
    from tinyarena.kernels import native

    if not native.available():
        pytest.skip("numba (extra 'fast') absent")
    with pytest.raises(native.CompileFailed, match="_add_one"):
        native.native_step(native.jit(_add_one), np.array([object()]))

    model = streaming_model(kernels=(3,), channels=4)
    default = tinyarena.OpResolver.default()
    resolver = tinyarena.OpResolver()
    names = {op.name for sg in tinyarena.read_model(model).subgraphs for op in sg.operators}

    def uncompilable(ctx: object, op: object, data: object) -> None:
        native.native_step(native.jit(_add_one), np.array([object()]))

    for name in sorted(names):
        kernel = default.resolve_name(name)
        resolver.add(name, replace(kernel, bind=uncompilable) if name == "FULLY_CONNECTED"
                     else kernel)
    with pytest.warns(RuntimeWarning, match="FULLY_CONNECTED .* runs the numpy kernel"):
        broken = _run(model, resolver, 3)
    assert all(np.array_equal(a, b) for a, b in zip(broken, _run(model, _eval_only(model), 3)))
