"""PAD and PADV2 against the live TFLM wheel: 1-D to 5-D, image-style and generic paddings,
default pad value (int8: the output zero point) and explicit constant values."""

from __future__ import annotations

import numpy as np
import pytest

from stateful_runner import assert_same_as_tflm
from tinyarena.builder import ModelBuilder

pytestmark = pytest.mark.oracle


def _case(op: str, dtype: str, rng: np.random.Generator) -> tuple[bytes, np.ndarray]:
    rank = int(rng.integers(1, 6))
    shape = tuple(int(d) for d in rng.integers(1, 4, size=rank))
    pads = rng.integers(0, 3, size=(rank, 2)).astype(np.int32)
    if rank == 4 and rng.random() < 0.5:
        pads[0] = pads[3] = 0  # TFLM's image-style category
    out_shape = tuple(int(s + a + b) for s, (a, b) in zip(shape, pads))
    q = {"scale": 0.1, "zero_point": int(rng.integers(-50, 50))} if dtype == "int8" else {}
    b = ModelBuilder()
    x = b.add_input("x", shape, dtype, **q)
    p = b.add_constant("paddings", pads)
    ins = [x, p]
    if op == "PADV2":
        value = np.array([rng.integers(-20, 20)]).astype(dtype) if dtype != "float32" \
            else np.array([rng.normal()], np.float32)
        ins.append(b.add_constant("value", value.reshape(()), **q))
    y = b.add_tensor("y", out_shape, dtype, **q)
    b.add_operator(op, ins, [y])
    b.mark_output(y)
    data = (rng.normal(size=shape).astype(np.float32) if dtype == "float32"
            else rng.integers(-100, 100, size=shape).astype(dtype))
    return b.build(), data


@pytest.mark.parametrize("op", ["PAD", "PADV2"])
@pytest.mark.parametrize("dtype", ["float32", "int8", "int16", "int32"])
def test_pad_matches_tflm(op: str, dtype: str) -> None:
    rng = np.random.default_rng(51 + len(op) + len(dtype))
    for _ in range(5):
        model, data = _case(op, dtype, rng)
        assert_same_as_tflm(model, [data])


@pytest.mark.parametrize("pads,out_shape", [([[1, 0], [0, 0]], (3, 2)),  # words 1,0,0,0: fits
                                            ([[1, 0], [1, 0]], (3, 3))])  # words 1,0,0,0: refused
def test_int64_paddings_read_as_int32_words(pads: list[list[int]],
                                            out_shape: tuple[int, int]) -> None:
    """PadPrepare reads the paddings with GetTensorData<int32_t> whatever their type, so int64
    paddings are taken word by word: the wheel runs the first model and refuses the second."""
    from op_sweep import check_op
    from tinyarena.errors import TinyArenaError
    from tinyarena.interpreter import Interpreter

    b = ModelBuilder()
    x = b.add_input("x", (2, 2), "float32")
    p = b.add_constant("paddings", np.array(pads, np.int64))
    y = b.add_tensor("y", out_shape, "float32")
    b.add_operator("PAD", [x, p], [y])
    b.mark_output(y)
    model = b.build()
    data = np.arange(4, dtype=np.float32).reshape(2, 2)
    if out_shape == (3, 2):
        check_op(model, [data])
    else:
        from tflm_oracle import tflm_fits
        assert not tflm_fits(model, 1 << 20)[0]
        with pytest.raises(TinyArenaError):
            Interpreter(model).allocate_tensors()
