"""Regressions found while making mypy pass (see tests/unit/test_typecheck.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tinyarena import allocate_model, read_model
from tinyarena.builder import ModelBuilder
from tinyarena.cli import main
from tinyarena.errors import KernelError
from tinyarena.optimize import optimize_model


def _add_model(out_names: tuple[str, str]) -> bytes:
    b = ModelBuilder()
    a = b.add_input("a", (2, 3), "float32")
    c = b.add_input("b", (2, 3), "float32")
    s = b.add_tensor(out_names[0], (2, 3), "float32")
    d = b.add_tensor(out_names[1], (2, 3), "float32")
    b.add_operator("ADD", [a, c], [s])
    b.add_operator("SUB", [a, c], [d])
    b.mark_output(s)
    b.mark_output(d)
    return b.build()


def test_run_saves_outputs_named_like_savez_keywords(tmp_path: Path) -> None:
    # np.savez(path, **arrays) took an output named "file" as its own argument (TypeError) and
    # one named "allow_pickle" as the pickle flag (the array was silently not saved).
    model = tmp_path / "m.tflite"
    model.write_bytes(_add_model(("file", "allow_pickle")))
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.full((2, 3), 0.5, np.float32)
    np.savez(tmp_path / "in.npz", a=a, b=b)
    out = tmp_path / "out.npz"
    assert main(["run", str(model), "--input", str(tmp_path / "in.npz"), "--output",
                 str(out)]) == 0
    with np.load(out) as saved:
        assert sorted(saved.files) == ["allow_pickle", "file"]
        assert np.array_equal(saved["file"], a + b)
        assert np.array_equal(saved["allow_pickle"], a - b)


def test_omitted_required_input_is_a_kernel_error() -> None:
    b = ModelBuilder()
    x = b.add_input("x", (2, 3), "float32")
    y = b.add_tensor("y", (6,), "float32")
    b.add_operator("RESHAPE", [-1], [y])
    b.add_operator("ADD", [x, x], [b.add_tensor("z", (2, 3), "float32")])
    b.mark_output(y)
    with pytest.raises(KernelError, match="RESHAPE needs its input tensor"):
        allocate_model(read_model(b.build()))


def test_order_exact_is_none_without_reordering_and_a_bool_with_it() -> None:
    data = _add_model(("s", "d"))
    assert optimize_model(data, reorder=False, time_budget_s=0.2).order_exact is None
    assert isinstance(optimize_model(data, reorder=True, time_budget_s=0.2).order_exact, bool)
