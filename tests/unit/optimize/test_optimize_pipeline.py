"""optimize_model, the overlap rules and the CLI, without the wheel (see tests/oracle for it)."""

from __future__ import annotations

import json
import struct

import pytest

from optimize_models import elementwise_model, reorder_model, view_model
from tinyarena.arena import allocate_model
from tinyarena.builder.random_graphs import random_model
from tinyarena.cli import main
from tinyarena.errors import BuildError, PlanError
from tinyarena.model import read_model
from tinyarena.model.metadata import encode_offline_plan
from tinyarena.optimize import optimize_model
from tinyarena.optimize.graph import op_graph
from tinyarena.optimize.overlap import alias_groups, no_aliases
from tinyarena.optimize.pipeline import verify_layout, with_offline_plan
from tinyarena.planning import Buffer, lower_bound


def test_offline_plan_words() -> None:
    """Facts 3: version, subgraph count, offset count, then int32 offsets (-1 = online)."""
    data = encode_offline_plan([0, -1, 400], 1)
    assert struct.unpack("<3I3i", data) == (1, 1, 3, 0, -1, 400)
    with pytest.raises(BuildError):
        encode_offline_plan([-2], 1)


@pytest.mark.parametrize("seed", [13, 15, 18, 36, 3, 7])
def test_never_worse_and_bound_holds(seed: int) -> None:
    data = random_model(seed, max_blocks=6).model
    for overlap in ("none", "views", "safe"):
        result = optimize_model(data, overlap=overlap, time_budget_s=0.2, kernel_set="reference")
        assert result.lower_bound <= result.after.head <= result.before.head
        assert result.optimal == (result.after.head == result.lower_bound)
        layout = allocate_model(read_model(result.model))
        assert (layout.head, layout.tail) == (result.after.head, result.after.tail)


def test_unchanged_model_comes_back_byte_for_byte() -> None:
    data = random_model(1, max_blocks=2).model
    layout = allocate_model(read_model(data))
    result = optimize_model(data, overlap="none", reorder=False, time_budget_s=0.1)
    if layout.head == layout.lower_bound:
        assert not result.changed and result.model == data and result.optimal


def test_in_place_only_when_the_input_dies_there() -> None:
    """In the ADD model both convolution outputs die at the ADD: exactly one of them holds
    the sum (``views`` mode makes no such group). The graph input, read by both convolutions,
    is never overwritten."""
    model = read_model(elementwise_model("ADD"))
    layout = allocate_model(model)
    graph = op_graph(model, layout)
    groups = alias_groups(model, graph, "safe", "reference")
    add = next(op for op in model.subgraphs[0].operators if op.name == "ADD")
    y = add.outputs[0]
    assert sum(groups.same(x, y) for x in add.inputs) == 1
    x0 = model.subgraphs[0].inputs[0]
    assert groups.members(groups.root[x0]) == (x0,)
    assert alias_groups(model, graph, "views", "reference").root == no_aliases(
        len(graph.sizes)).root


def test_safe_overlap_refused_for_unknown_kernels() -> None:
    with pytest.raises(PlanError, match="unknown kernel set 'xtensa'"):
        optimize_model(elementwise_model("RELU"), overlap="safe", kernel_set="xtensa")
    # views do not depend on the kernel set
    result = optimize_model(view_model("RESHAPE"), overlap="views", kernel_set="cmsis-nn")
    assert result.after.head == 3072


def test_verifier_rejects_overlap_outside_alias_groups() -> None:
    """Pin the view model's conv output and the view at one offset: fine as an alias group,
    a PlanError without it."""
    model = read_model(view_model("RESHAPE"))
    layout = allocate_model(model)
    graph = op_graph(model, layout)
    groups = alias_groups(model, graph, "views", "reference")
    offsets = [-1] * model.tensor_count
    for b in layout.buffers:
        offsets[b.index] = 0 if groups.same(b.index, groups.reasons[0][3]) else 2048
    pinned = allocate_model(with_offline_plan(model, offsets))
    verify_layout(pinned, groups)
    with pytest.raises(PlanError, match="share bytes"):
        verify_layout(pinned, no_aliases(len(graph.sizes)))


def test_lower_bound_is_the_peak_of_the_final_buffers() -> None:
    result = optimize_model(reorder_model(), overlap="none", time_budget_s=0.2)
    layout = allocate_model(read_model(result.model))
    bufs = [Buffer(b.size, b.first, b.last) for b in layout.buffers]
    assert result.lower_bound == lower_bound(bufs) == 1536


def test_cli_json(tmp_path, capsys) -> None:
    src = tmp_path / "m.tflite"
    out = tmp_path / "o.tflite"
    src.write_bytes(view_model("RESHAPE"))
    assert main(["optimize", str(src), "-o", str(out), "--overlap", "views", "--json",
                 "--time-budget", "0.2"]) == 0
    data = json.loads(capsys.readouterr().out)
    for key in ("before", "after"):
        assert set(data[key]) == {"head", "tail", "total", "min_arena"}
    assert data["before"]["head"] == 4096 and data["after"]["head"] == 3072
    assert data["lower_bound_bytes"] == 3072 and data["optimal"] is True
    assert allocate_model(read_model(out.read_bytes())).head == 3072
    assert main(["optimize", str(src), "-o", str(out), "--no-reorder", "--overlap",
                 "none", "--force"]) == 0  # out exists: overwriting it needs --force
    text = capsys.readouterr().out
    assert "proven optimal" in text and "head" in text
    assert main(["plan", str(src), "--planner", "optimal", "--json"]) == 0
    json.loads(capsys.readouterr().out)


def test_partial_overlap_one_by_one_conv_hand_computed() -> None:
    """x (12x12x1, graph input, 144 B) -> 1x1 conv -> a (1152 B) -> 1x1 conv 8->8 -> b
    (1152 B) -> 1x1 conv -> y (144 B). Without rule (c) the middle conv's step holds a and b:
    2304 B. Its margin is -7 (channel j of pixel p is written before channel j+1 rereads byte
    8p), rounded to -16: a and b fit in 1168 B, so the first conv's step (x + a = 1296 B)
    becomes the peak."""
    from optimize_models import window_model

    data = window_model("CONV_2D", 1, 1, "VALID", 1, "int8", 1)
    views = optimize_model(data, overlap="views", time_budget_s=0.2)
    result = optimize_model(data, overlap="safe", time_budget_s=0.2, kernel_set="reference")
    assert views.after.head == 2304
    assert result.after.head == 1296 == result.lower_bound and result.optimal
    margins = {p.op: p.margin for p in result.partial}
    assert margins[1] == -7
    d = result.to_dict()
    assert d["kernel_set"] == "reference" and d["safe_for_kernel_sets"] == ["reference"]
    assert any(p["op"] == 1 and p["shift_bytes"] <= -16 for p in d["partial_overlaps"])


def test_partial_overlap_refused_for_unknown_kernels(tmp_path, capsys) -> None:
    from optimize_models import window_model

    src = tmp_path / "m.tflite"
    src.write_bytes(window_model("CONV_2D", 1, 1, "VALID"))  # CMSIS-NN's 1x1: channel-major
    result = optimize_model(src.read_bytes(), overlap="safe", kernel_set="cmsis-nn",
                            time_budget_s=0.2)
    assert result.partial == () and any("CONV_2D" in n for n in result.notes)
    out = tmp_path / "o.tflite"
    assert main(["optimize", str(src), "-o", str(out), "--kernel-set", "cmsis-nn",
                 "--time-budget", "0.2"]) == 0
    text = capsys.readouterr().out
    assert "not proven" in text and "partial overlap" in text
    assert main(["optimize", str(src), "-o", str(out), "--time-budget", "0.2",
                 "--target", "host-x64", "--force"]) == 0
    text = capsys.readouterr().out
    assert "safe only for kernel set(s) reference" in text and "partial overlap" in text


def test_verifier_rejects_partial_overlap_beyond_the_margin() -> None:
    """The optimized plan passes; moving the conv output one 16-byte unit above its
    permitted start is rejected."""
    import dataclasses

    from optimize_models import window_model
    from tinyarena.optimize.overlap import partial_overlaps

    data = window_model("CONV_2D", 1, 1, "VALID", 1, "int8", 1)
    model = read_model(data)
    layout = allocate_model(model)
    graph = op_graph(model, layout)
    groups = alias_groups(model, graph, "safe", "reference")
    partial = partial_overlaps(model, graph, groups)
    p = next(q for q in partial if q.op == 1)
    offsets = [-1] * model.tensor_count
    offsets[model.subgraphs[0].inputs[0]] = 0
    offsets[p.input] = 2000
    offsets[p.output] = 2000 + p.max_delta
    y = model.subgraphs[0].operators[2].outputs[0]
    offsets[y] = 4000
    pinned = allocate_model(with_offline_plan(model, offsets))
    verify_layout(pinned, groups, partial)
    offsets[p.output] += 16
    moved = allocate_model(with_offline_plan(model, offsets))
    with pytest.raises(PlanError, match="share bytes"):
        verify_layout(moved, groups, partial)
    with pytest.raises(PlanError, match="share bytes"):
        verify_layout(pinned, groups, (dataclasses.replace(p, max_delta=p.max_delta - 16),))
