"""The what-if analysis (RFC 001, exact): each candidate's predicted saving equals the arena
actually measured when tinyarena's runtime runs the model with that tensor pre-allocated, and
the outputs stay bit-identical with the live TFLM wheel's."""

from __future__ import annotations

import numpy as np
import pytest

import tinyarena
from tflm_oracle import model_random_inputs, shared_model_bytes, tflm_run
from tinyarena.arena import allocate_model
from tinyarena.arena.whatif import analyse_preallocation
from tinyarena.builder.random_graphs import random_model
from tinyarena.errors import PlanError
from tinyarena.model import read_model
from tinyarena.model.types import NUMPY_DTYPES

# Shared models the runtime runs in well under a second (mobilenet is sized, not run).
RUN_MODELS = ["hello_world_float", "hello_world_int8", "keyword_scrambled",
              "keyword_scrambled_8bit", "micro_speech_quantized", "person_detect",
              "simple_add_model", "trained_lstm", "trained_lstm_int8", "kws_ref_model"]


def _measured(data: bytes, tensor: int,
              inputs: list[np.ndarray]) -> tuple[tuple[int, int], list[np.ndarray]]:
    """((head, tail), outputs) of tinyarena's runtime with ``tensor`` pre-allocated."""
    m = read_model(data)
    t = m.subgraphs[0].tensors[tensor]
    buffer = np.zeros(t.shape, dtype=NUMPY_DTYPES[t.type])
    ip = tinyarena.Interpreter(data, preallocated={tensor: buffer})
    ip.allocate_tensors()
    for i, x in enumerate(inputs):
        ip.set_input(i, x)
    ip.invoke()
    report = ip.allocation_report()
    assert report.head + report.tail == ip.arena_used_bytes()
    return (report.head, report.tail), [ip.get_output(i) for i in range(ip.outputs_size())]


def _check_model(data: bytes, inputs: list[np.ndarray]) -> int:
    m = read_model(data)
    w = analyse_preallocation(m)
    expected = tflm_run(data, inputs)
    checked = 0
    for c in w.candidates:
        (head, tail), outputs = _measured(data, c.tensor, inputs)
        assert (w.head - head, w.tail - tail) == (c.head_saving, c.tail_saving), (c.tensor, c.name)
        assert c.saving_bytes == c.head_saving + c.tail_saving
        assert len(outputs) == len(expected)
        for got, want in zip(outputs, expected):
            assert np.array_equal(got, want), (c.tensor, c.name)
        checked += 1
    return checked


@pytest.mark.oracle
@pytest.mark.parametrize("name", RUN_MODELS)
def test_predicted_saving_is_measured_on_shared_models(shared_models, name: str) -> None:
    if not (shared_models / f"{name}.tflite").exists():
        pytest.skip(f"{name}.tflite not in ../shared/models")
    data = shared_model_bytes(name)
    assert _check_model(data, model_random_inputs(data, 3)) > 0


@pytest.mark.oracle
@pytest.mark.parametrize("seed", range(6))
def test_predicted_saving_is_measured_on_builder_models(seed: int) -> None:
    rm = random_model(seed, max_blocks=4)
    assert _check_model(rm.model, list(rm.inputs)) > 0


def test_mobilenet_predictions_equal_the_preallocated_allocation(shared_models) -> None:
    path = shared_models / "mobilenet_v2_quantized_1x3x224x224.tflite"
    if not path.exists():
        pytest.skip("mobilenet not in ../shared/models")
    m = read_model(path.read_bytes())
    w = analyse_preallocation(m)
    for c in w.candidates[:3]:
        assert w.total - allocate_model(m, preallocated=[c.tensor]).total == c.saving_bytes


def test_person_detect_reproduces_the_rfc_picture(shared_models) -> None:
    """RFC 001 read person_detect's PrintMemoryPlan by hand: layer 3 is the peak, formed by the
    depthwise output '9' (96*... 18432 bytes) and the pointwise output 'a' (36864 bytes); the
    input 't' (96x96 = 9216 bytes) is not in it, so moving it saves no arena at all."""
    if not (shared_models / "person_detect.tflite").exists():
        pytest.skip("person_detect not in ../shared/models")
    m = read_model(shared_model_bytes("person_detect"))
    sg = m.subgraphs[0]
    w = analyse_preallocation(m)
    peak = [sg.tensors[t] for t in w.peak_tensors]
    assert sorted(t.tflm_nbytes for t in peak) == [48 * 48 * 8, 48 * 48 * 16]
    assert {t.name.split("/")[-2] for t in peak} == {"Conv2d_1_depthwise", "Conv2d_1_pointwise"}
    assert w.head == 48 * 48 * 8 + 48 * 48 * 16
    by_tensor = {c.tensor: c for c in w.candidates}
    (x,) = sg.inputs
    assert by_tensor[x].saving_bytes == 0 and by_tensor[x].memcpy_bytes == 96 * 96
    top = w.candidates[0]
    assert top.tensor in w.peak_tensors and top.nbytes == 48 * 48 * 16
    # Without the pointwise output the next peak is the 2x18432 of layers 6-7 (and 2 and 3).
    assert top.saving_bytes == w.head - 2 * 48 * 48 * 8
    assert [c.saving_bytes for c in w.candidates] == sorted(
        (c.saving_bytes for c in w.candidates), reverse=True)


def test_best_set_is_no_worse_than_any_single_candidate(shared_models) -> None:
    if not (shared_models / "micro_speech_quantized.tflite").exists():
        pytest.skip("micro_speech not in ../shared/models")
    m = read_model(shared_model_bytes("micro_speech_quantized"))
    w = analyse_preallocation(m, max_external=3)
    assert w.best_set is not None and w.best_pair is not None and w.best_set.exact
    assert len(w.best_set.tensors) == 3
    best_single = max(c.saving_bytes for c in w.candidates)
    assert w.best_set.saving_bytes >= w.best_pair.saving_bytes >= best_single
    pre = allocate_model(m, preallocated=list(w.best_set.tensors))
    assert w.total - pre.total == w.best_set.saving_bytes


def test_variables_save_their_tail_bytes() -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interpreter"))
    from interp_models import int8_add_with_variable

    data = int8_add_with_variable()
    m = read_model(data)
    w = analyse_preallocation(m, target="arm32")
    (var,) = [c for c in w.candidates if "variable" in c.roles]
    assert var.tail_saving == 16 and var.head_saving == 0
    assert w.total - allocate_model(m, target="arm32", preallocated=[var.tensor]).total == 16


def test_bad_requests_are_refused() -> None:
    rm = random_model(0, max_blocks=2)
    m = read_model(rm.model)
    sg = m.subgraphs[0]
    constant = next(t.index for t in sg.tensors if t.is_constant)
    with pytest.raises(PlanError, match="constant"):
        allocate_model(m, preallocated=[constant])
    with pytest.raises(PlanError, match="subgraph 0"):
        allocate_model(m, preallocated=[(1, 0)])
    with pytest.raises(PlanError, match="tensors 0"):
        allocate_model(m, preallocated=[len(sg.tensors)])
    with pytest.raises(PlanError, match="max_external"):
        analyse_preallocation(m, max_external=0)


def test_offline_planned_tensors_cannot_be_preallocated() -> None:
    from tinyarena.builder import ModelBuilder

    b = ModelBuilder()
    x = b.add_input("x", (1, 4), "float32")
    y = b.add_tensor("y", (1, 4), "float32")
    b.add_operator("RELU", [x], [y])
    b.mark_output(y)
    b.add_metadata("OfflineMemoryAllocation",
                   np.array([0, 0, 2, 0, 16], dtype=np.int32).tobytes())
    m = read_model(b.build())
    with pytest.raises(PlanError, match="offline-planned"):
        allocate_model(m, preallocated=[0])


@pytest.mark.parametrize("name", ["person_detect", "keyword_scrambled", "trained_lstm_int8",
                                  "micro_speech_quantized", "kws_ref_model"])
def test_predictions_hold_on_the_cortex_m_layout(shared_models, name: str) -> None:
    """The same identity on the 32-bit short-enum build (production allocator, other tail
    alignments): predicted saving == arena_used_bytes lost when allocated pre-allocated."""
    if not (shared_models / f"{name}.tflite").exists():
        pytest.skip(f"{name}.tflite not in ../shared/models")
    m = read_model(shared_model_bytes(name))
    w = analyse_preallocation(m, target="arm32-short-enums")
    for c in w.candidates:
        pre = allocate_model(m, target="arm32-short-enums", preallocated=[c.tensor])
        assert w.total - pre.total == c.saving_bytes, (name, c.tensor)
