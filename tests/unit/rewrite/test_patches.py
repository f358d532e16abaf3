"""The patch rewrite's rectangle algebra and stage rules (no wheel; see
tests/oracle/test_patches.py for outputs and arenas against TFLM)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tinyarena.arena import allocate_model
from tinyarena.errors import TinyArenaError
from tinyarena.model import read_model
from tinyarena.rewrite.patches import (
    PATCHES_METADATA,
    NotPatchable,
    Rect,
    Span,
    clamp_grid,
    find_stage,
    grid_spans,
    model_macs,
    patch_macs,
    patch_model,
    patch_record,
    same_padding,
    stage_splits,
    window_input_span,
    window_output_size,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from patch_models import (  # noqa: E402
    fc_only_model,
    mobilenet_like,
    nchw_model,
    squeeze_yolo_model,
)


def _correlate(x: np.ndarray, w: np.ndarray, stride: int, dilation: int, pad_before: int,
               out_size: int) -> np.ndarray:
    """1-D correlation by its definition: out[i] = sum_j x[i*s - p + j*d] * w[j], taps
    outside x skipped (what TFLM's SAME padding does)."""
    out = np.zeros(out_size, np.int64)
    for i in range(out_size):
        for j in range(len(w)):
            k = i * stride - pad_before + j * dilation
            if 0 <= k < len(x):
                out[i] += int(x[k]) * int(w[j])
    return out


@given(size=st.integers(1, 40), k=st.integers(1, 5), stride=st.integers(1, 3),
       dilation=st.integers(1, 3), same=st.booleans(), data=st.data())
def test_a_patch_computed_from_its_input_span_equals_the_full_output(
        size: int, k: int, stride: int, dilation: int, same: bool, data: st.DataObject) -> None:
    padding = "SAME" if same else "VALID"
    out_size = window_output_size(size, k, stride, dilation, padding)
    if out_size < 1:
        return
    rng = np.random.default_rng(size * 1000 + k * 100 + stride * 10 + dilation)
    x = rng.integers(-128, 128, size)
    w = rng.integers(-128, 128, k)
    before = same_padding(size, k, stride, dilation)[0] if same else 0
    full = _correlate(x, w, stride, dilation, before, out_size)
    a = data.draw(st.integers(0, out_size - 1))
    b = data.draw(st.integers(a + 1, out_size))
    ext = window_input_span(Span(a, b), k, stride, dilation, before)
    # the patch: the input span, zeros where it sticks out (the zero point after offset),
    # then a VALID correlation
    window = np.array([x[i] if 0 <= i < size else 0 for i in range(ext.start, ext.stop)])
    patch = _correlate(window, w, stride, dilation, 0, b - a)
    assert np.array_equal(patch, full[a:b])
    assert (ext.size - (k - 1) * dilation - 1) // stride + 1 == b - a  # VALID gives b - a


@given(size=st.integers(1, 300), k=st.integers(1, 7), stride=st.integers(1, 4),
       dilation=st.integers(1, 4))
def test_same_padding_matches_tflite(size: int, k: int, stride: int, dilation: int) -> None:
    before, after = same_padding(size, k, stride, dilation)
    out = -(-size // stride)
    assert window_output_size(size, k, stride, dilation, "SAME") == out
    total = max((out - 1) * stride + (k - 1) * dilation + 1 - size, 0)
    assert (before, after) == (total // 2, total - total // 2)
    span = window_input_span(Span(0, out), k, stride, dilation, before)
    assert span.start == -before and span.stop <= size + after


def test_same_padding_stride_two_on_even_sizes_pads_only_after() -> None:
    assert same_padding(224, 3, 2, 1) == (0, 1)
    assert same_padding(225, 3, 2, 1) == (1, 1)
    assert same_padding(10, 1, 2, 1) == (0, 0)
    assert same_padding(8, 3, 1, 2) == (2, 2)


@given(n=st.integers(1, 200), parts=st.integers(-3, 300))
def test_grid_spans_partition_the_axis_without_empty_cells(n: int, parts: int) -> None:
    spans = grid_spans(n, parts)
    assert spans[0].start == 0 and spans[-1].stop == n
    assert all(a.stop == b.start for a, b in zip(spans, spans[1:]))
    assert all(s.size >= 1 for s in spans)
    assert len(spans) == max(1, min(parts, n))
    assert max(s.size for s in spans) - min(s.size for s in spans) <= 1


def test_grid_is_clamped_to_the_stage_output_and_concat_limit() -> None:
    assert clamp_grid((50, 3), 7, 28) == (7, 3)
    assert clamp_grid((12, 12), 28, 28) == (10, 10)
    assert clamp_grid((0, 2), 5, 5) == (1, 2)


def test_span_and_rect_helpers() -> None:
    assert Span(-2, 5).clip(4) == Span(0, 4)
    assert Span(6, 9).clip(4).size == 0
    r = Rect(Span(0, 2), Span(1, 3)).union(Rect(Span(1, 4), Span(0, 2)))
    assert r == Rect(Span(0, 4), Span(0, 3))
    assert r.contains(Rect(Span(1, 2), Span(1, 2)))
    assert r.shift(-1, 2) == Rect(Span(-1, 3), Span(2, 5))


def test_a_residual_shortcut_crossing_the_cut_is_refused() -> None:
    model = read_model(mobilenet_like())
    stages, _ = stage_splits(model)
    splits = [s.split_after for s in stages]
    # ops 3..5 run inside the inverted residual whose input op 2 writes and ADD (op 6) reads
    assert splits == [0, 1, 2, 6, 7, 8]
    with pytest.raises(NotPatchable, match="shortcut crosses the cut"):
        find_stage(model, 4)


def test_the_stage_search_stops_at_the_first_op_no_stage_can_hold() -> None:
    stages, reason = stage_splits(read_model(mobilenet_like()))
    assert "operator 9 (RESHAPE)" in reason
    assert stages[-1].split_after == 8


def test_a_model_without_convolutions_has_no_stage() -> None:
    stages, reason = stage_splits(read_model(fc_only_model()))
    assert stages == ()
    assert "FULLY_CONNECTED" in reason
    with pytest.raises(TinyArenaError):
        patch_model(fc_only_model(), 0, (2, 2))


def test_too_fine_a_grid_is_clamped_never_emitted() -> None:
    data = squeeze_yolo_model()
    model = read_model(data)
    stage = find_stage(model, 8)
    out = model.subgraphs[0].tensors[stage.output]
    patched = patch_model(data, 8, (40, 40))
    assert patched.info.grid == (out.shape[1], out.shape[2]) == (5, 5)
    assert patched.info.requested_grid == (40, 40)
    new = read_model(patched.model)
    assert all(0 not in t.shape for t in new.subgraphs[0].tensors)


def test_a_one_patch_grid_is_refused() -> None:
    with pytest.raises(NotPatchable, match="one patch"):
        patch_model(mobilenet_like(), 2, (1, 1))


def test_a_patch_wholly_in_padding_is_refused() -> None:
    # op 3 pads one column on the left: a 1-column cell there has no input
    with pytest.raises(NotPatchable, match="entirely in padding"):
        patch_model(nchw_model(), 3, (10, 10))


def test_the_rewrite_shares_weights_keeps_quantization_and_records_itself() -> None:
    data = mobilenet_like()
    old = read_model(data)
    patched = patch_model(data, 8, (2, 3))
    new = read_model(patched.model)
    sg_old, sg_new = old.subgraphs[0], new.subgraphs[0]
    # every operator after the stage is unchanged, and every kept tensor keeps its index
    tail_old = [(op.name, op.inputs, op.outputs) for op in sg_old.operators[9:]]
    tail_new = [(op.name, op.inputs, op.outputs) for op in sg_new.operators[-len(tail_old):]]
    assert tail_old == tail_new
    assert sg_new.inputs == sg_old.inputs and sg_new.outputs == sg_old.outputs
    # weights are referenced, not copied: no new buffer holds more than a slice's constants
    assert len(new.buffers) - len(old.buffers) <= 40
    for op in sg_new.operators:
        if op.name in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            assert op.options.padding == "VALID"
            w = sg_new.tensors[op.inputs[1]]
            assert any(w.buffer == t.buffer for t in sg_old.tensors if t.is_constant)
    # no quantization parameter is new: every quantized tensor's (scale, zp) existed before
    old_q = {(tuple(t.quantization.scale.tolist()), tuple(t.quantization.zero_point.tolist()))
             for t in sg_old.tensors if t.quantization is not None}
    for t in sg_new.tensors:
        if t.quantization is not None and t.quantization.scale.size:
            assert (tuple(t.quantization.scale.tolist()),
                    tuple(t.quantization.zero_point.tolist())) in old_q
    # the stage's old intermediate tensors are gone (TFLM would plan them)
    produced = {o for op in sg_new.operators for o in op.outputs}
    for t in sg_new.tensors:
        if not t.is_constant and t.index not in sg_new.inputs:
            assert t.index in produced
    record = patch_record(new)
    assert record is not None and record["grid"] == [2, 3] and record["split_after"] == 8
    assert json.loads(bytes(new.buffers[dict(new.metadata)[PATCHES_METADATA]]))["format"] == 1
    assert patched.info.ops_after == len(sg_new.operators)
    allocate_model(new)  # sizes


def test_macs_count_the_recomputed_halo() -> None:
    data = mobilenet_like()
    model = read_model(data)
    stage = find_stage(model, 8)
    for grid in ((2, 2), (3, 3)):
        patched = patch_model(data, 8, grid)
        assert patch_macs(model, stage, grid) == patched.info.macs_after \
            == model_macs(read_model(patched.model))
        assert patched.info.macs_after > patched.info.macs_before == model_macs(model)
