"""The compiled kernels (``kernels.native``, the ``fast`` extra) give the numpy kernels' bits.

The numpy kernels are the reference: every other test in tests/kernels checks them against the
wheel op by op, and the model-level tests run whatever ``Interpreter`` picks by default (the
compiled kernels when numba is installed). This runs the same models both ways, on the host and
on Cortex-M targets whose arithmetic differs (fused multiply-adds on M4/M55, newlib's expf and
CMSIS-NN kernels), over several invokes with state carried between them, and compares the
outputs byte for byte. It skips where numba is not installed.
"""

from __future__ import annotations

import numpy as np
import pytest

from model_families import FAMILIES
from tflm_oracle import model_random_inputs, shared_model_bytes
from tinyarena.errors import InterpreterError
from tinyarena.examples.streaming import streaming_model
from tinyarena.interpreter import Interpreter
from tinyarena.kernels import native

needs_numba = pytest.mark.skipif(not native.available(), reason="numba (extra 'fast') absent")

INVOKES = 3
TARGETS = ("host-x64", "cortex-m4+fp", "cortex-m0")  # glibc; fused FPU sums; fdlibm expf
SMALL_SHARED = ("hello_world_float", "hello_world_int8", "trained_lstm", "trained_lstm_int8",
                "keyword_scrambled", "keyword_scrambled_8bit", "micro_speech_quantized",
                "simple_add_model", "kws_ref_model", "person_detect")


def _outputs(model: bytes, native_on: bool, target: str) -> list[bytes]:
    ip = Interpreter(model, target=target, native=native_on)
    ip.allocate_tensors()
    got = []
    for seed in range(INVOKES):
        for i, x in enumerate(model_random_inputs(model, seed)):
            ip.set_input(x, i)
        ip.invoke()
        got.extend(np.ascontiguousarray(ip.get_output(i)).tobytes()
                   for i in range(ip.outputs_size()))
    return got


def _same_both_ways(model: bytes, target: str) -> None:
    compiled = _outputs(model, True, target)
    reference = _outputs(model, False, target)
    assert len(compiled) == len(reference)
    for k, (a, b) in enumerate(zip(compiled, reference)):
        assert a == b, f"output {k % max(1, len(compiled) // INVOKES)} of invoke " \
                       f"{k // max(1, len(compiled) // INVOKES)} differs on {target}"


@needs_numba
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_model_families_native_equals_numpy(family: str, target: str) -> None:
    _same_both_ways(FAMILIES[family](), target)


@needs_numba
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", SMALL_SHARED)
def test_shared_models_native_equals_numpy(shared_models: object, name: str, target: str
                                           ) -> None:
    _same_both_ways(shared_model_bytes(name), target)


@needs_numba
@pytest.mark.parametrize("target", TARGETS)
def test_streaming_benchmark_models_native_equals_numpy(target: str) -> None:
    _same_both_ways(streaming_model(), target)
    _same_both_ways(streaming_model(kernels=(3, 5, 7), channels=16), target)


def test_native_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    """None follows availability and TINYARENA_NATIVE; True without numba names the extra."""
    monkeypatch.setenv(native.ENVIRONMENT_SWITCH, "0")
    assert native.resolve(None) is False
    assert native.resolve(False) is False
    monkeypatch.delenv(native.ENVIRONMENT_SWITCH)
    assert native.resolve(None) is native.available()
    monkeypatch.setattr(native, "available", lambda: False)
    with pytest.raises(InterpreterError, match=r"tinyarena\[fast\]"):
        native.resolve(True)
    assert native.resolve(None) is False


def test_native_argument_is_checked() -> None:
    from small_models import hello_world_like

    with pytest.raises(InterpreterError, match="native must be"):
        Interpreter(hello_world_like(0), native="yes")  # type: ignore[arg-type]


@needs_numba
def test_numba_that_fails_to_import_leaves_numpy_kernels(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """numba installed but broken (e.g. built for another numpy): native=True still runs,
    on the numpy kernels, and says so."""
    from small_models import hello_world_like

    model = hello_world_like(1)
    monkeypatch.setattr(native, "numba_module", lambda: None)
    ip = Interpreter(model, native=True)
    ip.allocate_tensors()
    assert ip.native is False
    assert not any(native.is_quiet(s) and hasattr(getattr(s, "func", None), "py_func")
                   for s in ip._allocated().graph.steps())
    monkeypatch.undo()
    assert _outputs(model, True, "host-x64") == _outputs(model, False, "host-x64")
