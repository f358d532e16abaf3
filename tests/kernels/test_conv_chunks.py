"""The chunked conv kernels against the live wheel: CONV_2D and DEPTHWISE_CONV_2D compute,
requantise and store their sums a band of output rows (a run of pixels for a pointwise conv)
at a time. Shrinking ``CHUNK_BYTES`` to a few pixels forces many chunks, chunks that end
mid-row (pointwise) and a last, shorter chunk; outputs must still equal the wheel's exactly.
Also: large constant weight copies live in workspaces, not in the op data.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tinyarena
from conv_cases import add_activation, add_filter_and_bias, compare, random_input, random_qspec
from test_conv_2d import _conv_case
from test_depthwise_conv_2d import _case as _depthwise_case
from tinyarena.builder import ModelBuilder
from tinyarena.kernels import _conv_kernels

pytestmark = pytest.mark.oracle


@pytest.fixture
def tiny_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_conv_kernels, "CHUNK_BYTES", 8 * 8 * 3)  # 3 pixels of 8 channels


def _pointwise(dtype: str, rng: np.random.Generator, groups: int) -> tuple[bytes, np.ndarray]:
    """1x1 stride-1 conv (the pointwise path), optionally grouped (filter depth cin/groups)."""
    q = random_qspec(dtype, rng)
    cin, cout = 4 * groups, 3 * groups
    shape = (2, 5, 7, cin)
    b = ModelBuilder()
    x = add_activation(b, "x", shape, q, output=False, is_input=True)
    wt, bt = add_filter_and_bias(b, q, (cout, 1, 1, cin // groups), cout, 0, True, True,
                                 "int32" if dtype != "float32" else "float32", rng)
    y = add_activation(b, "y", (2, 5, 7, cout), q, output=True)
    b.add_operator("CONV_2D", [x, wt, bt], [y], padding="VALID", stride_w=1, stride_h=1,
                   dilation_w_factor=1, dilation_h_factor=1, fused_activation_function="RELU")
    b.mark_output(y)
    return b.build(), random_input(shape, dtype, rng)


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
def test_conv_chunks_match_tflm(dtype: str, tiny_chunks: None) -> None:
    rng = np.random.default_rng(sum(map(ord, "chunks" + dtype)))
    bias_dtype = {"int8": "int32", "int16": "int64", "float32": "float32"}[dtype]
    for _ in range(12):
        model, inputs, desc = _conv_case(dtype, rng, bias_dtype=bias_dtype, big=True)
        try:
            compare(model, inputs[:1], dtype, max_ulps=0 if dtype != "float32" else 32)
        except AssertionError as exc:
            raise AssertionError(f"{desc}: {exc}") from None


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("groups", [1, 2])
def test_pointwise_chunks_match_tflm(dtype: str, groups: int, tiny_chunks: None) -> None:
    rng = np.random.default_rng(groups * 10 + len(dtype))
    for _ in range(3):
        model, x = _pointwise(dtype, rng, groups)
        compare(model, [x], dtype, max_ulps=0)


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
def test_depthwise_chunks_match_tflm(dtype: str, tiny_chunks: None) -> None:
    rng = np.random.default_rng(sum(map(ord, "dw chunks" + dtype)))
    for _ in range(12):
        model, inputs, desc = _depthwise_case(dtype, rng)
        try:
            compare(model, inputs[:1], dtype, max_ulps=0)
        except AssertionError as exc:
            raise AssertionError(f"{desc}: {exc}") from None


CONV_FAMILY = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV")


def _arrays(value: object) -> list[np.ndarray]:
    if isinstance(value, np.ndarray):
        return [value]
    if hasattr(value, "__dataclass_fields__"):
        return [a for name in value.__dataclass_fields__ for a in _arrays(getattr(value, name))]
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in _arrays(v)]
    return []


def test_weight_copies_are_workspaces(shared_model_name: str, shared_models: Path) -> None:
    """Conv-family op data keeps per-channel vectors only; the converted weights are
    read-only persistent workspaces, counted in workspace_bytes()."""
    ip = tinyarena.Interpreter(shared_models / f"{shared_model_name}.tflite")
    ip.allocate_tensors()
    layout = ip.layout
    for (sg, index), data in layout.op_data.items():
        if ip.model.subgraphs[sg].operators[index].name in CONV_FAMILY:
            assert all(a.ndim <= 1 for a in _arrays(data)), (sg, index)
    alloc = ip._allocated()
    # initial contents given as arrays, or as callables run when the workspaces were made
    given = [alloc.workspaces[h] for h, a in enumerate(layout.workspace_initial)
             if a is not None]
    for array in given:
        assert not array.flags.writeable
        assert any(m is array for m in alloc.workspace_memory)  # held once, and counted
    assert ip.workspace_bytes() >= sum(a.nbytes for a in given) + alloc.scratch_pool.nbytes


@pytest.mark.parametrize("depth", [1, 1023, 1024, 1025, 4096])
def test_float32_gemm_bound_shortcut_agrees_with_the_sums(depth: int) -> None:
    """The shortcut (every |int8| <= 128, so a row of ``depth`` weights sums to at most
    128 * depth) answers as the row sums do: worst-case filters (all -128) and random ones."""
    from tinyarena.kernels._conv_kernels import float32_gemm_is_exact

    rng = np.random.default_rng(depth)
    for filt in (np.full((3, depth), -128, np.int8),
                 rng.integers(-128, 128, (4, 1, 1, depth)).astype(np.int8)):
        rows = np.abs(filt.reshape(filt.shape[0], -1).astype(np.int64)).sum(axis=1)
        assert float32_gemm_is_exact(filt) == (int(rows.max()) * 128 < (1 << 24))
