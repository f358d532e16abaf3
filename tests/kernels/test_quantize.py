"""QUANTIZE against the live TFLM wheel: float->int8/int16 and every integer requantization
pair TFLM's reference kernel implements."""

from __future__ import annotations

import numpy as np
import pytest

from unary_cases import QRANGE, compare, random_input, single_op_model

pytestmark = pytest.mark.oracle


def _q(rng: np.random.Generator, dtype: str) -> tuple[float, int]:
    scale = float(10 ** rng.uniform(-3, 0))
    if dtype == "int16":
        return scale, int(rng.integers(-50, 50)) if rng.random() < 0.3 else 0
    if dtype == "int32":
        return scale, 0
    lo, hi = QRANGE[dtype]
    return scale, int(rng.integers(lo, hi + 1))


@pytest.mark.parametrize("out_dtype", ["int8", "int16"])
def test_float_to_int_matches_tflm(out_dtype: str) -> None:
    rng = np.random.default_rng(70 if out_dtype == "int8" else 71)
    for _ in range(8):
        shape = tuple(int(d) for d in rng.integers(1, 8, size=int(rng.integers(1, 4))))
        out_q = _q(rng, out_dtype)
        model = single_op_model("QUANTIZE", shape, "float32", None, shape, out_dtype, out_q)
        x = random_input(rng, shape, "float32", 3.0 * out_q[0] * 200)
        # exact halves of the scale: ties must round away from zero
        ties = np.float32(out_q[0]) * np.array([0.5, -0.5, 2.5, -3.5], np.float32)
        n = min(4, x.size)
        x.reshape(-1)[:n] = ties[:n]
        compare(model, [x])
    # values far outside the range, infinities and NaN
    shape = (8,)
    model = single_op_model("QUANTIZE", shape, "float32", None, shape, out_dtype, (0.5, 3))
    x = np.array([1e30, -1e30, np.inf, -np.inf, np.nan, 3e9, -3e9, 0.25], np.float32)
    compare(model, [x])


PAIRS = [("int8", "int8"), ("int8", "uint8"), ("uint8", "int8"), ("int8", "int16"),
         ("int8", "int32"), ("int16", "int8"), ("int16", "int16"), ("int16", "int32"),
         ("int32", "int8"), ("int32", "int16")]


@pytest.mark.parametrize("pair", PAIRS, ids=["-".join(p) for p in PAIRS])
def test_requantize_matches_tflm(pair: tuple[str, str]) -> None:
    in_dtype, out_dtype = pair
    rng = np.random.default_rng(700 + PAIRS.index(pair))
    for _ in range(5):
        shape = tuple(int(d) for d in rng.integers(1, 8, size=int(rng.integers(1, 4))))
        in_q, out_q = _q(rng, in_dtype), _q(rng, out_dtype)
        model = single_op_model("QUANTIZE", shape, in_dtype, in_q, shape, out_dtype, out_q)
        x = random_input(rng, shape, in_dtype)
        if in_dtype == "int32":
            x = (x // 4096).astype(np.int32)
        compare(model, [x])


def test_int8_uint8_shift_fast_path_matches_tflm() -> None:
    full = np.arange(-128, 128, dtype=np.int8)
    model = single_op_model("QUANTIZE", (256,), "int8", (0.05, -3), (256,), "uint8", (0.05, 125))
    compare(model, [full])
    back = single_op_model("QUANTIZE", (256,), "uint8", (0.05, 125), (256,), "int8", (0.05, -3))
    compare(back, [np.arange(256, dtype=np.uint8)])


def test_unquantized_output_is_refused_like_tflm_with_the_real_reason() -> None:
    """An exporter that forgot the output's scale: TFLM's Prepare fails (quantization type is
    not affine); tinyarena refuses too, saying the scale is missing (not "per channel")."""
    from tflm_oracle import tflm_fits
    from tinyarena.builder import ModelBuilder
    from tinyarena.errors import KernelError
    from tinyarena.interpreter import Interpreter

    b = ModelBuilder()
    x = b.add_input("x", (1, 4), "int8", scale=0.1, zero_point=-7)
    y = b.add_tensor("y", (1, 4), "uint8")
    b.add_operator("QUANTIZE", [x], [y])
    b.mark_output(y)
    model = b.build()
    assert not tflm_fits(model, 1 << 20)[0]
    with pytest.raises(KernelError, match="QUANTIZE output has no quantization") as info:
        Interpreter(model).allocate_tensors()
    assert "per channel" not in str(info.value)
