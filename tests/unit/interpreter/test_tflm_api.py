"""The call patterns of TFLM's Python runtime (``tflite_micro.runtime.Interpreter``) and of
``tf.lite.Interpreter``, written from their documentation, work on ``tinyarena.Interpreter``;
every public function that takes a model takes a path, bytes or a Model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tinyarena
from tinyarena.errors import InterpreterError, ModelError

from small_models import hello_world_like


@pytest.fixture(scope="module")
def model_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("api") / "hello.tflite"
    path.write_bytes(hello_world_like(7))
    return path


X = np.array([[0.75]], np.float32)


def _expected(data: bytes) -> np.ndarray:
    ip = tinyarena.Interpreter(data)
    ip.allocate_tensors()
    ip.input(0)[...] = X  # TFLM's C++ pattern: write into interpreter.input(0)
    ip.invoke()
    return ip.output(0).copy()


def test_tflite_micro_from_file_pattern(model_file: Path) -> None:
    # tflite_micro: interpreter = runtime.Interpreter.from_file(model_path, arena_size=...)
    #               interpreter.set_input(input_data, 0); interpreter.invoke();
    #               interpreter.get_output(0)
    interpreter = tinyarena.Interpreter.from_file(model_file, arena_size=4096)
    interpreter.set_input(X, 0)
    interpreter.invoke()
    assert np.array_equal(interpreter.get_output(0), _expected(model_file.read_bytes()))
    assert interpreter.arena.shape[0] == 4096


def test_tflite_micro_from_bytes_pattern(model_file: Path) -> None:
    data = model_file.read_bytes()
    interpreter = tinyarena.Interpreter.from_bytes(data)  # arena: the smallest TFLM accepts
    details = interpreter.get_input_details(0)  # tflite_micro: one dict per index
    assert list(details["shape"]) == [1, 1] and details["dtype"] is np.float32
    assert interpreter.get_output_details(0)["dtype"] is np.float32
    interpreter.set_input(np.zeros(details["shape"], details["dtype"]) + X, 0)
    interpreter.invoke()
    assert np.array_equal(interpreter.get_output(0), _expected(data))
    interpreter.reset()
    with pytest.raises(InterpreterError, match="custom_op_registerers"):
        tinyarena.Interpreter.from_bytes(data, ["SignalRegisterer"])
    with pytest.raises(InterpreterError, match="from_file"):
        tinyarena.Interpreter.from_bytes(str(model_file))  # type: ignore[arg-type]


@pytest.mark.parametrize("how", ["model_path", "model_content"])
def test_tf_lite_pattern(model_file: Path, how: str) -> None:
    # tf.lite: interpreter = tf.lite.Interpreter(model_path=...) or (model_content=...)
    #          interpreter.allocate_tensors()
    #          input_details = interpreter.get_input_details()
    #          interpreter.set_tensor(input_details[0]['index'], input_data)
    #          interpreter.invoke()
    #          interpreter.get_tensor(output_details[0]['index'])
    source = str(model_file) if how == "model_path" else model_file.read_bytes()
    interpreter = tinyarena.Interpreter(**{how: source})
    interpreter.allocate_tensors()
    input_details = interpreter.get_input_details()
    output_details = interpreter.get_output_details()
    assert isinstance(input_details, list) and isinstance(output_details, list)
    input_data = np.array(np.full(input_details[0]["shape"], 0.75), dtype=np.float32)
    interpreter.set_tensor(input_details[0]["index"], input_data)
    interpreter.invoke()
    output_data = interpreter.get_tensor(output_details[0]["index"])
    assert np.array_equal(output_data, _expected(model_file.read_bytes()))


def test_set_input_argument_order(model_file: Path) -> None:
    ip = tinyarena.Interpreter(model_file)
    ip.allocate_tensors()
    ip.set_input(X, 0)
    new = (ip.invoke(), ip.get_output(0))[1]
    ip.set_input(0, X)  # tinyarena's earlier order: an int and an array cannot be misread
    ip.invoke()
    assert np.array_equal(ip.get_output(0), new)
    ip.set_input(X)  # index 0 by default
    with pytest.raises(InterpreterError, match=r"\(data, index\)"):
        ip.set_input(X, X)
    with pytest.raises(InterpreterError, match="out of range"):
        ip.set_input(X, 1)
    with pytest.raises(InterpreterError, match="out of range"):
        ip.get_input_details(3)


def test_model_given_once(model_file: Path) -> None:
    with pytest.raises(InterpreterError, match="give the model once"):
        tinyarena.Interpreter(model_file, model_path=str(model_file))
    with pytest.raises(InterpreterError, match="give the model once"):
        tinyarena.Interpreter()
    with pytest.raises(InterpreterError, match="model_content"):
        tinyarena.Interpreter(model_content=str(model_file))  # type: ignore[arg-type]


def test_every_model_function_takes_path_bytes_or_model(model_file: Path,
                                                        tmp_path: Path) -> None:
    from tinyarena.export import export_model

    data = model_file.read_bytes()
    sources = [str(model_file), model_file, data, bytearray(data), tinyarena.read_model(data)]
    mins = {tinyarena.allocate_model(s, target="arm32").min_arena for s in sources}
    assert len(mins) == 1
    model = tinyarena.read_model(data)
    assert tinyarena.read_model(model) is model
    # Only the banner's "from hello.tflite" differs when a path is given.
    assert len({export_model(s, name="m").source.split("\n", 1)[1] for s in sources}) == 1
    for s in sources:
        ip = tinyarena.Interpreter(s)
        ip.allocate_tensors()
    from tinyarena.rewrite import set_metadata

    assert len({set_metadata(s, "note", b"x") for s in sources}) == 1
    before = tinyarena.optimize_model(model, time_budget_s=0).before
    assert before == tinyarena.optimize_model(str(model_file), time_budget_s=0).before
    with pytest.raises(ModelError, match="cannot read model file"):
        tinyarena.allocate_model(str(tmp_path / "missing.tflite"))
    with pytest.raises(ModelError):
        tinyarena.allocate_model(12)  # type: ignore[arg-type]


@pytest.mark.oracle
def test_same_calls_same_outputs_as_the_wheel(model_file: Path) -> None:
    """The identical call sequence on the wheel and on tinyarena gives identical outputs."""
    from tflm_oracle import captured_stderr
    from tflite_micro.python.tflite_micro import runtime

    results = []
    for module in (runtime, tinyarena):
        with captured_stderr():
            interpreter = module.Interpreter.from_file(str(model_file), arena_size=16384)
            interpreter.set_input(X, 0)
            interpreter.invoke()
            results.append(np.array(interpreter.get_output(0), copy=True))
            details = interpreter.get_input_details(0)
            assert list(details["shape"]) == [1, 1]
    assert np.array_equal(results[0], results[1])
