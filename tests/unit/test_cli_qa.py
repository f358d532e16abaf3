"""Regressions found by trying every command as a new user would (bad values, unusual models);
each test failed before its fix."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tinyarena.builder import ModelBuilder
from tinyarena.cli import main


def _tiny_model(tmp_path) -> str:
    b = ModelBuilder()
    x = b.add_input("x", (4,), "float32")
    y = b.add_tensor("y", (4,), "float32")
    b.add_operator("RELU", [x], [y])
    b.mark_output(y)
    path = tmp_path / "tiny.tflite"
    path.write_bytes(b.build())
    return str(path)


@pytest.mark.parametrize("option", ["--seed", "--top-k"])
def test_run_negative_seed_or_top_k_is_a_usage_error(tmp_path, capsys, option) -> None:
    # --seed -1 used to end in numpy's raw "ValueError: expected non-negative integer"
    with pytest.raises(SystemExit) as exc:
        main(["run", _tiny_model(tmp_path), option, "-1", "--json"])
    assert exc.value.code == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert option in error["message"] and "0 or more" in error["message"]
