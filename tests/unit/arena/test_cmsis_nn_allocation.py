"""The CMSIS-NN kernel set's allocations for ops the device oracle's sweeps do not cover.

Expected values come from the facts sheet (5.3) and from CMSIS-NN's size formulas worked by
hand for each geometry (written out in the comments), not from tinyarena's output. The sweep
ops (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, AVERAGE_POOL_2D, SOFTMAX, ADD) are checked
byte-exact against the real builds in tests/oracle/test_device_oracle.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from tinyarena.arena.allocator import allocate_model
from tinyarena.arena.layout import ArenaLayout
from tinyarena.arena.targets import PROFILES, get_target
from tinyarena.builder import ModelBuilder
from tinyarena.errors import KernelError, UnsupportedOpError
from tinyarena.kernels import registration
from tinyarena.model import read_model

CORES = [name for name, p in PROFILES.items() if p.cmsis_nn_isa is not None]  # Cortex-M


def _layout(model: bytes, target: str, kernels: str | None = None) -> ArenaLayout:
    return allocate_model(read_model(model), target=target, kernel_set=kernels)


def _scratch(layout: ArenaLayout) -> list[int]:
    """Scratch requests' byte counts in request order."""
    found = sorted((b.index, b.nbytes) for b in layout.buffers if b.kind == "scratch")
    return [n for _, n in found]


def _prepare_persistent(layout: ArenaLayout, op: str) -> list[int]:
    return [t.requested for t in layout.tail_allocations if t.label.startswith(f"{op} prepare")]


def _transpose_conv(cin: int, stride: int) -> bytes:
    """int8 TRANSPOSE_CONV, 3x3 input, 3x3 filter, 2 output channels, SAME padding."""
    rng = np.random.default_rng(1)
    b = ModelBuilder()
    out = 3 * stride
    shape = b.add_constant("shape", np.array([1, out, out, 2], np.int32))
    w = b.add_constant("w", rng.integers(-127, 128, (2, 3, 3, cin)).astype(np.int8),
                       scale=0.02, zero_point=0)
    x = b.add_input("x", (1, 3, 3, cin), "int8", scale=0.05, zero_point=1)
    y = b.add_tensor("y", (1, out, out, 2), "int8", scale=0.1, zero_point=-2)
    b.add_operator("TRANSPOSE_CONV", [shape, w, x], [y], padding="SAME", stride_w=stride,
                   stride_h=stride)
    b.mark_output(y)
    return b.build()


def test_transpose_conv_int8_two_buffers() -> None:
    # 4 input channels (not above REVERSE_TCOL_EFFICIENT_THRESHOLD 16): column buffer
    # ((in_w - 1) * stride + max(k_w, stride)) * C_out * max(k_h, stride) * 4
    # = ((3 - 1) * 2 + 3) * 2 * 3 * 4 = 168 on every ISA; the reverse-conv buffer is 0 bytes
    # but still requested.
    model = _transpose_conv(4, 2)
    for core in CORES:
        assert _scratch(_layout(model, core)) == [168, 0], core
    assert _scratch(_layout(model, "cortex-m4", "reference")) == [4 * 6 * 6 * 2]


def test_transpose_conv_int8_reverse_conv() -> None:
    # 20 input channels, stride 1: run as a convolution. K = 3 * 3 * 20 = 180;
    # im2col 2 * 2 * align4(180) = 720 (plain, DSP) or 4 * 16 * ceil(180 / 16) = 768 (MVE);
    # reverse buffer C_in * k_w * k_h * C_out = 20 * 9 * 2 = 360.
    model = _transpose_conv(20, 1)
    assert _scratch(_layout(model, "cortex-m3")) == [720, 360]
    assert _scratch(_layout(model, "cortex-m33")) == [720, 360]
    assert _scratch(_layout(model, "cortex-m85")) == [768, 360]


def _lstm(kind: str, batch: int = 2, n_input: int = 3, n_state: int = 5) -> bytes:
    rng = np.random.default_rng(2)
    b = ModelBuilder()
    act = {"float": "float32", "8x8_16": "int8", "16x8_16": "int16"}[kind]
    q = {} if kind == "float" else {"scale": 0.01, "zero_point": 0}
    x = b.add_input("x", (batch, 4, n_input), act, **q)

    def weights(name: str, cols: int) -> int:
        if kind == "float":
            return b.add_constant(name, rng.normal(0, 0.3, (n_state, cols)).astype(np.float32))
        return b.add_constant(name, rng.integers(-127, 128, (n_state, cols)).astype(np.int8),
                              scale=0.01, zero_point=0)

    def bias(name: str) -> int:
        if kind == "float":
            return b.add_constant(name, np.zeros(n_state, np.float32))
        dt = np.int32 if kind == "8x8_16" else np.int64
        return b.add_constant(name, np.zeros(n_state, dt), scale=0.0001, zero_point=0)

    wi = [weights(f"wi{g}", n_input) for g in range(4)]
    wr = [weights(f"wr{g}", n_state) for g in range(4)]
    bs = [bias(f"b{g}") for g in range(4)]
    h = b.add_tensor("h", (batch, n_state), act, is_variable=True, **q)
    c = b.add_tensor("c", (batch, n_state), "float32" if kind == "float" else "int16",
                     is_variable=True, **({} if kind == "float" else
                                          {"scale": 2.0 ** -11, "zero_point": 0}))
    y = b.add_tensor("y", (batch, 4, n_state), act, **q)
    b.add_operator("UNIDIRECTIONAL_SEQUENCE_LSTM",
                   [x, *wi, *wr, None, None, None, *bs, None, None, h, c, None, None, None, None],
                   [y], fused_activation_function="TANH", cell_clip=0.0, time_major=False)
    b.mark_output(y)
    return b.build()


@pytest.mark.parametrize("kind,buffers,sum_bytes", [
    ("float", [2 * 5 * 4] * 4, None),  # reference path: 4 buffers of batch * state * 4
    ("8x8_16", [2 * 5 * 2] * 3, 5 * 4),  # 3 buffers; eight int32 kernel sums per state unit
    ("16x8_16", [2 * 5 * 2] * 3, 5 * 8),  # 3 buffers; eight int64 kernel sums
])
def test_lstm_buffers_and_kernel_sums(kind: str, buffers: list[int], sum_bytes: int | None
                                      ) -> None:
    model = _lstm(kind)
    for core in ("cortex-m0", "cortex-m7", "cortex-m55"):
        layout = _layout(model, core)
        assert _scratch(layout) == buffers, core
        sums = _prepare_persistent(layout, "UNIDIRECTIONAL_SEQUENCE_LSTM")
        assert sums == ([] if sum_bytes is None else [sum_bytes] * 8), core
    reference = _layout(model, "cortex-m4", "reference")
    assert len(_scratch(reference)) == 4
    assert not _prepare_persistent(reference, "UNIDIRECTIONAL_SEQUENCE_LSTM")


def _svdf(dtype: str, units: int = 3, rank: int = 2) -> bytes:
    rng = np.random.default_rng(3)
    b = ModelBuilder()
    filters = units * rank
    if dtype == "float32":
        x = b.add_input("x", (1, 8), "float32")
        wf = b.add_constant("wf", rng.normal(0, 0.3, (filters, 8)).astype(np.float32))
        wt = b.add_constant("wt", rng.normal(0, 0.3, (filters, 4)).astype(np.float32))
        bias = b.add_constant("b", np.zeros(units, np.float32))
        st = b.add_tensor("s", (1, 4 * filters), "float32", is_variable=True)
        y = b.add_tensor("y", (1, units), "float32")
    else:
        x = b.add_input("x", (1, 8), "int8", scale=0.05, zero_point=0)
        wf = b.add_constant("wf", rng.integers(-127, 128, (filters, 8)).astype(np.int8),
                            scale=0.01, zero_point=0)
        wt = b.add_constant("wt", rng.integers(-1000, 1000, (filters, 4)).astype(np.int16),
                            scale=0.002, zero_point=0)
        bias = b.add_constant("b", np.zeros(units, np.int32),
                              scale=float(np.float32(0.02) * np.float32(0.002)), zero_point=0)
        st = b.add_tensor("s", (1, 4 * filters), "int16", scale=0.02, zero_point=0,
                          is_variable=True)
        y = b.add_tensor("y", (1, units), "int8", scale=0.5, zero_point=0)
    b.add_operator("SVDF", [x, wf, wt, bias, st], [y], rank=rank)
    b.mark_output(y)
    return b.build()


def test_svdf_kernel_sums_only_on_mve() -> None:
    model = _svdf("int8")
    # reference scratches 4 * batch * filters and 4 * batch * units on every ISA
    for core in CORES:
        layout = _layout(model, core)
        assert _scratch(layout) == [4 * 6, 4 * 3], core
        mve = get_target(core).cmsis_nn_isa == "mve"
        assert _prepare_persistent(layout, "SVDF") == ([4 * 6] if mve else []), core
    assert _prepare_persistent(_layout(_svdf("float32"), "cortex-m55"), "SVDF") == []


def _fc_rank3(per_channel: bool, nin: int = 8) -> bytes:
    rng = np.random.default_rng(4)
    b = ModelBuilder()
    x = b.add_input("x", (1, 3, nin), "int8", scale=0.05, zero_point=0)
    scale = [0.01, 0.02, 0.03, 0.04, 0.05] if per_channel else 0.01
    w = b.add_constant("w", rng.integers(-127, 128, (5, nin)).astype(np.int8), scale=scale,
                       zero_point=[0] * 5 if per_channel else 0, quantized_dimension=0)
    y = b.add_tensor("y", (1, 3, 5), "int8", scale=0.1, zero_point=0)
    b.add_operator("FULLY_CONNECTED", [x, w, None], [y], keep_num_dims=True)
    b.mark_output(y)
    return b.build()


def test_fully_connected_as_1x1_convolution() -> None:
    """Rank-3 output and accum_depth % 4 == 0: per-tensor quantization gets a scratch holding
    per-channel copies (2 * 4 bytes per output); the 1x1 buffer itself is empty with GCC."""
    for core in CORES:
        assert _scratch(_layout(_fc_rank3(False), core)) == [8 * 5], core
        assert _scratch(_layout(_fc_rank3(True), core)) == [], core
    # accum_depth 6: not a 1x1 convolution, so the plain FC path (MVE: kernel sums in the tail)
    layout = _layout(_fc_rank3(False, nin=6), "cortex-m55")
    assert _scratch(layout) == [] and _prepare_persistent(layout, "FULLY_CONNECTED") == [4 * 5]


def test_cmsis_nn_opdata_wraps_the_reference_opdata() -> None:
    """Each cmsis_nn OpData is the reference struct plus CMSIS-NN's fields (32-bit layout)."""
    t = get_target("cortex-m4")
    assert t.sizeof("CmsisNnOpDataConv") == t.sizeof("OpDataConv") + 4
    assert t.sizeof("CmsisNnOpDataFullyConnected") == t.sizeof("OpDataFullyConnected") + 6 * 4
    assert t.sizeof("CmsisNnOpDataPooling") == t.sizeof("OpDataPooling") + 4
    assert t.sizeof("CMSISNNSoftmaxParams") == t.sizeof("SoftmaxParams") + 8
    # OpDataLSTM + cmsis_nn_lstm_params: 15 int32 and four gates of 9 words + a 1-byte enum
    # (padded to 40), then padding to OpDataLSTM's 8-byte alignment
    assert t.sizeof("CmsisNnOpDataLSTM") == t.sizeof("OpDataLSTM") + 15 * 4 + 4 * 40 + 4


def test_registry_falls_back_to_reference() -> None:
    for op in ("ADD", "MUL", "PAD", "TRANSPOSE", "MAXIMUM", "RESHAPE"):
        assert registration(op, "cmsis-nn") is registration(op)
    assert registration("CONV_2D", "cmsis-nn") is not registration("CONV_2D")
    with pytest.raises(UnsupportedOpError, match="kernel set"):
        registration("CONV_2D", "xtensa")


def test_fully_connected_per_channel_int16_is_refused() -> None:
    """cmsis_nn/fully_connected.cc: per-channel weights only with int8 input (TF_LITE_ENSURE)."""
    b = ModelBuilder()
    x = b.add_input("x", (1, 4), "int16", scale=0.001, zero_point=0)
    w = b.add_constant("w", np.ones((3, 4), np.int8), scale=[0.01, 0.02, 0.03],
                       zero_point=[0, 0, 0], quantized_dimension=0)
    y = b.add_tensor("y", (1, 3), "int16", scale=0.01, zero_point=0)
    b.add_operator("FULLY_CONNECTED", [x, w, None], [y])
    b.mark_output(y)
    model = b.build()
    with pytest.raises(KernelError, match="per-channel"):
        _layout(model, "cortex-m4")
    assert _layout(model, "cortex-m4", "reference").total > 0
