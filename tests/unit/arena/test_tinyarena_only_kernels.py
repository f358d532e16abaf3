"""A model with an op TFLM has no kernel for (CONV_3D) has no TFLM arena to emulate."""

from __future__ import annotations

import numpy as np
import pytest

from tinyarena import Interpreter, allocate_model, read_model
from tinyarena.builder import ModelBuilder
from tinyarena.cli import main
from tinyarena.errors import UnsupportedOpError


def _conv3d_model() -> bytes:
    b = ModelBuilder()
    x = b.add_input("x", (1, 3, 4, 4, 2), "float32")
    w = b.add_constant("w", np.ones((1, 1, 1, 2, 3), np.float32))
    y = b.add_tensor("y", (1, 3, 4, 4, 3), "float32")
    b.add_operator("CONV_3D", [x, w], [y], padding="VALID", stride_d=1, stride_w=1, stride_h=1)
    b.mark_output(y)
    return b.build()


def test_sizing_refuses_with_the_op_named() -> None:
    with pytest.raises(UnsupportedOpError, match="CONV_3D .*operator 0.*no TFLM kernel"):
        allocate_model(read_model(_conv3d_model()))


def test_cli_size_reports_it_as_an_error(tmp_path, capsys) -> None:
    path = tmp_path / "conv3d.tflite"
    path.write_bytes(_conv3d_model())
    assert main(["size", str(path)]) == 1
    assert "no TFLM kernel" in capsys.readouterr().err


def test_the_interpreter_still_runs_it() -> None:
    ip = Interpreter(_conv3d_model())
    ip.allocate_tensors()
    x = np.arange(96, dtype=np.float32).reshape(1, 3, 4, 4, 2)
    ip.set_input(x, 0)
    ip.invoke()
    # A 1x1x1 all-ones filter sums the two input channels into each of the three outputs.
    expected = np.repeat(x.sum(axis=-1, keepdims=True), 3, axis=-1)
    assert np.array_equal(ip.get_output(0), expected)
