"""CONV_3D (tinyarena-only: TFLM has no CONV_3D) against LiteRT's reference kernel.

The oracle is LiteRT run with ``OpResolverType.BUILTIN_REF`` (reference_ops::Conv3D: a float32
sum per output in tap-then-channel order). Small layers are summed here in that same order, so
the bound is 0 ulps. Layers above ``EXACT_FLOAT_WORK`` use float64 GEMMs rounded once; on
all-positive data (no cancellation, so ulps are meaningful) the measured distance to the
reference's float32 running sum is a few ulps, bound 32. LiteRT's default (optimized) resolver
reorders the sum and is not ulp-comparable near zero (thousands of ulps after cancellation), so
it is not used as the oracle.
"""

from __future__ import annotations

import numpy as np
import pytest

from conv_cases import ulp_distance
from kernel_runner import run_kernels
from tinyarena.builder import ModelBuilder
from tinyarena.errors import KernelError
from tinyarena.kernels import registration
from tinyarena.kernels._conv_common import compute_out_size
from tinyarena.kernels._conv_kernels import EXACT_FLOAT_WORK

pytestmark = pytest.mark.oracle


def _litert_reference(model: bytes, x: np.ndarray) -> np.ndarray:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    ip = Interpreter(model_content=model,
                     experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
    ip.allocate_tensors()
    ip.set_tensor(ip.get_input_details()[0]["index"], x)
    ip.invoke()
    return np.array(ip.get_tensor(ip.get_output_details()[0]["index"]), copy=True)


def _model(in_shape: tuple[int, ...], weights: np.ndarray, bias: np.ndarray | None,
           padding: str, strides: tuple[int, int, int], dilations: tuple[int, int, int],
           activation: str) -> bytes:
    out = [compute_out_size(padding, i, k, s, d)
           for i, k, s, d in zip(in_shape[1:4], weights.shape[:3], strides, dilations)]
    b = ModelBuilder()
    x = b.add_input("x", in_shape, "float32")
    inputs = [x, b.add_constant("w", weights)]
    if bias is not None:
        inputs.append(b.add_constant("b", bias))
    y = b.add_tensor("y", (in_shape[0], *out, weights.shape[4]), "float32")
    b.add_operator("CONV_3D", inputs, [y], padding=padding, stride_d=strides[0],
                   stride_h=strides[1], stride_w=strides[2], dilation_d_factor=dilations[0],
                   dilation_h_factor=dilations[1], dilation_w_factor=dilations[2],
                   fused_activation_function=activation)
    b.mark_output(y)
    return b.build()


def _random_case(rng: np.random.Generator) -> tuple[bytes, tuple[int, ...], str] | None:
    in_shape = (int(rng.integers(1, 3)), *(int(v) for v in rng.integers(1, 7, 3)),
                int(rng.integers(1, 5)))
    kernel = tuple(int(v) for v in rng.integers(1, 4, 3))
    strides = tuple(int(v) for v in rng.integers(1, 3, 3))
    dilations = tuple(int(v) for v in rng.integers(1, 3, 3))
    padding = str(rng.choice(["SAME", "VALID"]))
    act = str(rng.choice(["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]))
    if not all(compute_out_size(padding, i, k, s, d)
               for i, k, s, d in zip(in_shape[1:4], kernel, strides, dilations)):
        return None
    cout = int(rng.integers(1, 5))
    weights = rng.uniform(-1, 1, (*kernel, in_shape[4], cout)).astype(np.float32)
    bias = rng.uniform(-1, 1, cout).astype(np.float32) if rng.integers(0, 3) else None
    model = _model(in_shape, weights, bias, padding, strides, dilations,  # type: ignore[arg-type]
                   act)
    desc = (f"{in_shape} k={kernel} s={strides} d={dilations} {padding} {act} "
            f"bias={bias is not None}")
    return model, in_shape, desc


def test_conv_3d_matches_litert_reference_bit_for_bit() -> None:
    rng = np.random.default_rng(3003)
    checked = 0
    while checked < 30:
        case = _random_case(rng)
        if case is None:
            continue
        model, in_shape, desc = case
        for _ in range(2):
            x = rng.uniform(-2, 2, in_shape).astype(np.float32)
            got = run_kernels(model, [x])[0]
            d = ulp_distance(_litert_reference(model, x), got)
            assert d == 0, f"{desc}: {d} ulps from LiteRT's reference"
        checked += 1


def test_conv_3d_gemm_path_within_ulps() -> None:
    rng = np.random.default_rng(3004)
    in_shape = (1, 8, 16, 16, 8)
    weights = rng.uniform(0, 1, (3, 3, 3, 8, 16)).astype(np.float32)
    work = 8 * 16 * 16 * 16 * 27 * 8
    assert work > EXACT_FLOAT_WORK  # takes the float64 GEMM path
    model = _model(in_shape, weights, rng.uniform(0, 1, 16).astype(np.float32), "SAME",
                   (1, 1, 1), (1, 1, 1), "NONE")
    x = rng.uniform(0, 1, in_shape).astype(np.float32)
    d = ulp_distance(_litert_reference(model, x), run_kernels(model, [x])[0])
    assert d <= 32, f"{d} ulps"


def test_conv_3d_refuses_quantized_models() -> None:
    b = ModelBuilder()
    x = b.add_input("x", (1, 2, 2, 2, 1), "int8", scale=0.1, zero_point=0)
    w = b.add_constant("w", np.ones((1, 1, 1, 1, 1), np.int8), scale=0.1, zero_point=0)
    y = b.add_tensor("y", (1, 2, 2, 2, 1), "int8", scale=0.1, zero_point=0)
    b.add_operator("CONV_3D", [x, w], [y], padding="VALID", stride_d=1, stride_h=1, stride_w=1)
    b.mark_output(y)
    with pytest.raises(KernelError, match="float32 only"):
        run_kernels(b.build(), [np.zeros((1, 2, 2, 2, 1), np.int8)])


def test_conv_3d_refuses_an_output_shape_padding_does_not_give() -> None:
    b = ModelBuilder()
    x = b.add_input("x", (1, 4, 5, 5, 2), "float32")
    w = b.add_constant("w", np.ones((2, 3, 3, 2, 3), np.float32))
    y = b.add_tensor("y", (1, 3, 5, 5, 3), "float32")  # SAME gives depth 4
    b.add_operator("CONV_3D", [x, w], [y], padding="SAME", stride_d=1, stride_h=1, stride_w=1)
    b.mark_output(y)
    with pytest.raises(KernelError, match=r"\(1, 4, 5, 5, 3\)"):
        run_kernels(b.build(), [np.zeros((1, 4, 5, 5, 2), np.float32)])


def test_conv_3d_is_marked_tinyarena_only() -> None:
    assert registration("CONV_3D").tflm is False
    assert registration("CONV_2D").tflm is True
