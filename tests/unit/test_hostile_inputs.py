"""Regression tests for hostile input found by review: each must fail as a tinyarena error
(or an argparse usage error) that names the problem, never as a foreign traceback."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tinyarena.builder import ModelBuilder
from tinyarena.cli import main
from tinyarena.errors import InterpreterError, KernelError, ModelError, UnsupportedOpError
from tinyarena.interpreter import Interpreter
from tinyarena.interpreter.inputs import load_inputs


def _unary(op: str, dtype: str = "float32", inputs: int = 1) -> bytes:
    """A one-operator model whose tensors carry no quantization and default options."""
    b = ModelBuilder()
    xs = [b.add_input(f"x{i}", (1, 4), dtype) for i in range(inputs)]
    y = b.add_tensor("y", (1, 4), dtype)
    b.add_operator(op, xs, [y])
    b.mark_output(y)
    return b.build()


def _details() -> list[dict]:
    return [{"name": "x", "shape": np.array([1, 4]), "dtype": np.int8}]


@pytest.mark.parametrize("op", ["IF", "WHILE", "CALL_ONCE"])
def test_control_flow_calling_its_own_subgraph_is_a_model_error(op: str) -> None:
    # Default options name subgraph 0, the caller itself: TFLM would recurse forever.
    with pytest.raises(ModelError, match="already running"):
        Interpreter(_unary(op)).allocate_tensors()


@pytest.mark.parametrize("op,dtype,inputs", [
    ("RELU", "int16", 1),  # no quantization: a zero scale divided by
    ("SUB", "float32", 1),  # a binary op given one input
    ("TRANSPOSE", "float32", 1),  # no permutation tensor
])
def test_malformed_operator_fails_in_prepare_naming_the_op(op: str, dtype: str,
                                                          inputs: int) -> None:
    with pytest.raises(KernelError, match=rf"{op} \(operator 0 of subgraph 0\).*prepare"):
        Interpreter(_unary(op, dtype, inputs)).allocate_tensors()


def test_builtin_without_kernel_does_not_suggest_an_impossible_fix() -> None:
    with pytest.raises(UnsupportedOpError, match=r"TILE \(operator 0 of subgraph 0\).*not an "
                       r"operator TFLM registers.*Registration\(\.\.\.\)") as info:
        Interpreter(_unary("TILE")).allocate_tensors()
    assert (info.value.op_name, info.value.op_index, info.value.subgraph_index) == ("TILE", 0, 0)


def test_huge_arena_size_is_an_interpreter_error() -> None:
    with pytest.raises(InterpreterError, match="cannot make an arena"):
        Interpreter(_unary("RELU"), arena_size=1 << 60)


def test_bool_arena_size_is_refused() -> None:
    with pytest.raises(InterpreterError, match="positive int"):
        Interpreter(_unary("RELU"), arena_size=True)


def test_npz_that_is_not_a_zip_is_an_interpreter_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"PK\x03\x04 not a zip archive")
    with pytest.raises(InterpreterError, match="cannot read"):
        load_inputs(bad, _details())


def test_npz_with_an_array_matching_no_input_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "extra.npz"
    np.savez(path, arr_0=np.zeros((1, 4), np.int8), arr_1=np.zeros((1, 4), np.int8))
    with pytest.raises(InterpreterError, match=r"\['arr_1'\] that match no model input"):
        load_inputs(path, _details())


def test_npz_with_exactly_the_inputs_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "ok.npz"
    value = np.arange(4, dtype=np.int8).reshape(1, 4)
    np.savez(path, x=value)
    (loaded,) = load_inputs(path, _details())
    assert np.array_equal(loaded, value)


@pytest.mark.parametrize("flag,value", [("--time-budget", "-1"), ("--time-budget", "nan"),
                                        ("--time-budget", "inf")])
def test_optimize_rejects_bad_time_budget(tmp_path: Path, flag: str, value: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "m.tflite"
    model.write_bytes(_unary("RELU"))
    with pytest.raises(SystemExit) as info:
        main(["optimize", str(model), "-o", str(tmp_path / "o.tflite"), flag, value])
    assert info.value.code == 2
    assert "--time-budget" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "-3"])
def test_run_rejects_non_positive_repeat(tmp_path: Path, value: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "m.tflite"
    model.write_bytes(_unary("RELU"))
    with pytest.raises(SystemExit) as info:
        main(["run", str(model), "--repeat", value])
    assert info.value.code == 2
    assert "--repeat" in capsys.readouterr().err


def test_unwritable_output_paths_are_clean_errors(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "m.tflite"
    model.write_bytes(_unary("RELU"))
    missing_dir = tmp_path / "no" / "such" / "dir"
    assert main(["optimize", str(model), "-o", str(tmp_path)]) == 1  # a directory
    assert "error:" in capsys.readouterr().err
    assert main(["run", str(model), "--output", str(missing_dir / "o.npz")]) == 1
    assert "No such file" in capsys.readouterr().err
    assert main(["demo", "--save", str(missing_dir / "d.tflite")]) == 1
    assert "No such file" in capsys.readouterr().err


def test_optimize_model_refuses_a_nonsense_time_budget() -> None:
    from tinyarena.errors import PlanError
    from tinyarena.optimize import optimize_model

    for budget in (-1.0, float("nan"), float("inf")):
        with pytest.raises(PlanError, match="time budget"):
            optimize_model(_unary("RELU"), time_budget_s=budget)


def test_run_output_names_the_file_written(tmp_path, capsys) -> None:
    model = tmp_path / "m.tflite"
    model.write_bytes(_unary("RELU"))
    target = tmp_path / "outs"
    assert main(["run", str(model), "--output", str(target)]) == 0
    assert (tmp_path / "outs.npz").is_file()
    assert f"outputs saved to {target}.npz" in capsys.readouterr().out
