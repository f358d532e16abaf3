"""The peak explanation against facts computed here, from the model alone (issue 10).

Independent facts: each non-constant, non-variable tensor's bytes (shape x element size,
rounded up to 16 as TFLM's CreatePlan does) and its lifetime from the operator lists (graph
inputs from step 0, operator k at step k + 1, graph outputs to the last step); kernels'
scratch buffers, which only the kernels know, are taken from the layout. The wheel's
recorded head is the oracle for the head.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from tinyarena.arena import allocate_model
from tinyarena.builder import ModelBuilder
from tinyarena.cli import main
from tinyarena.model import read_model
from tinyarena.model.types import Model
from tinyarena.report import explain_arena, render_plan

ITEM_BYTES = {"FLOAT32": 4, "INT8": 1, "UINT8": 1, "INT16": 2, "INT32": 4, "INT64": 8,
              "BOOL": 1, "FLOAT16": 2, "FLOAT64": 8, "UINT16": 2, "UINT32": 4}


def _tensor_facts(model: Model) -> dict[int, tuple[int, int, int]]:
    """tensor index -> (planned bytes, first step, last step), subgraph 0 only."""
    sg = model.subgraphs[0]
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for t in sg.inputs:
        first[t], last[t] = 0, 0
    for k, op in enumerate(sg.operators):
        step = k + 1
        for t in op.outputs:
            first.setdefault(t, step)
            last[t] = step
        for t in op.inputs:
            if t >= 0:
                last[t] = step
    for t in sg.outputs:
        first.setdefault(t, len(sg.operators))
        last[t] = len(sg.operators)
    facts = {}
    for t in first:
        tensor = sg.tensors[t]
        if tensor.is_constant or tensor.is_variable:
            continue
        nbytes = math.prod(tensor.shape) * ITEM_BYTES[tensor.type.name]
        if nbytes:
            facts[t] = (-(-nbytes // 16) * 16, first[t], last[t])
    return facts


def _check_against_facts(model: Model) -> None:
    layout = allocate_model(model)
    e = explain_arena(model, layout)
    facts = _tensor_facts(model)
    scratch = [b for b in layout.buffers if b.kind == "scratch"]
    steps = range(0, len(model.subgraphs[0].operators) + 1)
    live = {t: sum(size for size, f, la in facts.values() if f <= t <= la)
            + sum(b.size for b in scratch if b.first <= t <= b.last) for t in steps}
    recorded = {step: level for step, level, _ in e.live_by_step}
    assert {t: v for t, v in live.items() if v} == recorded
    p = e.peak
    assert p is not None
    assert p.head_bytes == layout.head
    assert p.live_bytes == live[p.step]
    tensors_live = {t for t, (_, f, la) in facts.items() if f <= p.step <= la}
    named = {e.buffers[i].index for i in p.buffers if e.buffers[i].kind == "tensor"}
    assert named == tensors_live
    # the head is reached at the step shown: the highest live byte there is the head
    assert max(e.buffers[i].end for i in p.buffers) == layout.head
    sg = model.subgraphs[0]
    for i in p.buffers:
        b = e.buffers[i]
        if b.kind == "tensor":
            t = sg.tensors[b.index]
            name = t.name or f"tensor {b.index}"  # unnamed tensors get their index
            assert (b.name, b.shape, b.dtype) == (name, tuple(t.shape), t.type.name.lower())
            makers = [k for k, op in enumerate(sg.operators) if b.index in op.outputs]
            users = [k for k, op in enumerate(sg.operators) if b.index in op.inputs]
            assert (b.producer.index if b.producer else None) == (makers[0] if makers else None)
            assert (b.last_consumer.index if b.last_consumer else None) == \
                (users[-1] if users else None)
    if p.step > 0:
        assert p.operator is not None and p.operator.index == p.step - 1
        assert p.operator.type == sg.operators[p.step - 1].name
    # no plan can beat the live bytes at any step unless it shares bytes on purpose
    assert e.rules.no_overlap_bound == max(live.values())


def _chain(widths: tuple[int, ...], dtype: str = "float32") -> bytes:
    """x -> FC -> FC ...: tensor k has widths[k] elements, so every size is known."""
    rng = np.random.default_rng(0)
    b = ModelBuilder()
    prev = b.add_input("x", (1, widths[0]), dtype)
    for i, out in enumerate(widths[1:]):
        w = b.add_constant(f"w{i}", rng.standard_normal((out, widths[i])).astype(np.float32))
        y = b.add_tensor(f"y{i}", (1, out), dtype)
        b.add_operator("FULLY_CONNECTED", [prev, w, None], [y])
        prev = y
    b.mark_output(prev)
    return b.build()


def test_shared_models_peak_against_facts(shared_model_name: str, shared_models: Path) -> None:
    _check_against_facts(read_model(shared_models / f"{shared_model_name}.tflite"))


@pytest.mark.oracle
def test_shared_models_peak_head_is_the_wheels(shared_model_name: str,
                                               shared_models: Path) -> None:
    from tflm_oracle import tflm_allocations

    data = (shared_models / f"{shared_model_name}.tflite").read_bytes()
    model = read_model(data)
    e = explain_arena(model, allocate_model(model))
    assert e.peak is not None and e.peak.head_bytes == tflm_allocations(data).head


def test_builder_chain_known_peak() -> None:
    # x 64 floats (256 B), y0 256 (1024 B), y1 32 (128 B), y2 8 (32 B): live per step
    # 0: 256, 1: 1280, 2: 1152, 3: 160, so the peak is step 1, FC 0, {x, y0}.
    model = read_model(_chain((64, 256, 32, 8)))
    e = explain_arena(model, allocate_model(model))
    assert e.peak is not None
    assert e.peak.step == 1 and e.peak.live_bytes == 1280
    assert e.peak.operator is not None
    assert (e.peak.operator.index, e.peak.operator.type) == (0, "FULLY_CONNECTED")
    assert {e.buffers[i].name for i in e.peak.buffers} == {"x", "y0"}
    assert e.peak.head_bytes == 1280
    _check_against_facts(model)


def test_builder_chain_peak_in_the_middle() -> None:
    # 16 -> 32 -> 512 -> 512 -> 4 floats: live 64, 192, 2176, 4096, 2064 at steps 0..4
    model = read_model(_chain((16, 32, 512, 512, 4)))
    e = explain_arena(model, allocate_model(model))
    assert e.peak is not None and e.peak.step == 3
    assert {e.buffers[i].name for i in e.peak.buffers} == {"y1", "y2"}
    assert e.peak.live_bytes == 4096
    _check_against_facts(model)


def test_plan_json_peak_and_names(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "chain.tflite"
    path.write_bytes(_chain((64, 256, 32, 8)))
    assert main(["plan", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"head_bytes", "lower_bound_bytes", "buffers", "planner"} <= data.keys()
    names = {b["index"]: b["name"] for b in data["buffers"]}
    assert names == {0: "x", 2: "y0", 4: "y1", 6: "y2"}
    for b in data["buffers"]:
        assert {"kind", "index", "size", "offset", "first", "last", "name"} <= b.keys()
    peak = data["peak"]
    assert peak["step"] == 1 and peak["head_bytes"] == data["head_bytes"] == 1280
    assert peak["operator"]["index"] == 0 and peak["operator"]["type"] == "FULLY_CONNECTED"
    assert sorted((b["kind"], b["index"], b["name"], b["size"]) for b in peak["buffers"]) == \
        [("tensor", 0, "x", 256), ("tensor", 2, "y0", 1024)]


def test_words_lower_bound_names_its_rules() -> None:
    model = read_model(_chain((64, 256, 32, 8)))
    greedy = explain_arena(model, allocate_model(model))
    assert "no two live buffers share a byte" in greedy.bound_text()
    assert "optimal" in greedy.bound_text()  # 1280 == the live peak
    linear = explain_arena(model, allocate_model(model, planner="linear"))
    assert linear.layout.head > linear.rules.bound
    assert "optimal" not in linear.bound_text()
    assert "above it" in linear.bound_text()


def _pinned_chain(offsets: list[int]) -> Model:
    from tinyarena.optimize.pipeline import with_offline_plan

    return with_offline_plan(read_model(_chain((64, 256, 32, 8))), offsets)


def test_offline_plan_named_in_headers_and_collision_drawn() -> None:
    # x and y0 are both live at step 1; pinning both at 0 is a real collision
    model = _pinned_chain([0, -1, 0, -1, 1024, -1, 0])
    layout = allocate_model(model)
    e = explain_arena(model, layout)
    assert "offline plan" in e.planner_text and "greedy" not in e.planner_text
    assert [(s.a, s.b, s.reason) for s in e.rules.collisions] != []
    text = render_plan(layout, "m", ascii_picture=True, explanation=e)
    assert "COLLISION" in text
    assert "offline plan" in text.splitlines()[0]  # the header, above the title
    picture = text.split("PrintMemoryPlan picture")[1]
    assert "!" in picture.split("\n", 1)[1]


@pytest.mark.slow
def test_optimized_model_overlaps_drawn_as_intended(shared_models: Path) -> None:
    from tinyarena.optimize import optimize_model

    # The reference kernels' rules (the default plan is safe for every kernel set: no overlap)
    result = optimize_model(shared_models / "person_detect.tflite", time_budget_s=0.5,
                            kernel_set="reference")
    model = read_model(result.model)
    layout = allocate_model(model)
    e = explain_arena(model, layout)
    assert e.rules.rules == "safe" and not e.rules.collisions and e.rules.shared
    assert e.rules.no_overlap_bound == layout.lower_bound > layout.head
    assert e.rules.bound <= layout.head
    assert (e.rules.bound == layout.head) == ("optimal" in e.bound_text())
    assert "without any sharing" in e.bound_text()
    text = render_plan(layout, "m", ascii_picture=True, explanation=e)
    rows = [line for line in text.split("PrintMemoryPlan picture")[1].splitlines()
            if line[:4].strip().isdigit() and line[4:6] == ": "]
    assert rows and not any("!" in r for r in rows) and any("=" in r for r in rows)
    assert "offline plan" in text.splitlines()[0]


def test_tail_by_operator_adds_up(shared_model_name: str, shared_models: Path) -> None:
    model = read_model(shared_models / f"{shared_model_name}.tflite")
    layout = allocate_model(model)
    e = explain_arena(model, layout)
    assert sum(o.total for o in e.tail_by_operator) + e.model_wide_tail == layout.tail
    assert sum(v for _, v in e.tail_by_category) == layout.tail
    n_ops = {(sg.index, op.index) for sg in model.subgraphs for op in sg.operators}
    assert {(o.subgraph, o.index) for o in e.tail_by_operator} <= n_ops


@pytest.mark.oracle
def test_variable_state_by_operator_is_the_wheels(shared_models: Path) -> None:
    from tflm_oracle import tflm_allocations

    data = (shared_models / "keyword_scrambled.tflite").read_bytes()
    model = read_model(data)
    e = explain_arena(model, allocate_model(model))
    wheel = tflm_allocations(data).categories["TfLiteTensor variable buffer data"][0]
    assert sum(o.variable_state for o in e.tail_by_operator) == wheel
    svdf = [o for o in e.tail_by_operator if o.type == "SVDF"]
    assert svdf and all(o.variable_state > 0 for o in svdf)



def _if_model() -> bytes:
    """IF running a two-op 'then' and a one-op 'else' subgraph; every tensor 64 floats
    (256 bytes) except the bool condition (16 bytes planned)."""
    b = ModelBuilder()
    cond = b.add_input("cond", (1,), "bool")
    x = b.add_input("x", (64,), "float32")
    y = b.add_tensor("y", (64,), "float32")
    then = b.add_subgraph("then")
    tx = then.add_input("tx", (64,), "float32")
    tc = then.add_constant("tc", np.full(64, 2.0, np.float32))
    t1 = then.add_tensor("t1", (64,), "float32")
    t2 = then.add_tensor("t2", (64,), "float32")
    then.add_operator("ADD", [tx, tc], [t1])
    then.add_operator("ADD", [t1, tc], [t2])
    then.mark_output(t2)
    other = b.add_subgraph("else")
    ex = other.add_input("ex", (64,), "float32")
    ec = other.add_constant("ec", np.full(64, -1.0, np.float32))
    e1 = other.add_tensor("e1", (64,), "float32")
    other.add_operator("ADD", [ex, ec], [e1])
    other.mark_output(e1)
    b.add_operator("IF", [cond, x], [y], then_subgraph_index=1, else_subgraph_index=2)
    b.mark_output(y)
    return b.build()


def test_control_flow_steps_and_peak() -> None:
    # TFLM's walk: IF at step 1, 'then' inputs at 2, its ADDs at 3 and 4, 'else' inputs at
    # 5, its ADD at 6. Live: cond+x from 0, y from 1, tx 2..3, t1 3..4, t2 4, ex 5..6, e1 6.
    model = read_model(_if_model())
    e = explain_arena(model, allocate_model(model))
    assert [(o.step, o.subgraph, o.index, o.type) for o in e.operators] == \
        [(1, 0, 0, "IF"), (3, 1, 0, "ADD"), (4, 1, 1, "ADD"), (6, 2, 0, "ADD")]
    assert {t: v for t, v, _ in e.live_by_step} == \
        {0: 272, 1: 528, 2: 784, 3: 1040, 4: 1040, 5: 784, 6: 1040}
    p = e.peak
    assert p is not None and p.live_bytes == 1040 and p.step in (3, 4, 6)
    assert p.operator is not None and p.operator.type == "ADD"
    assert (p.operator.subgraph, p.operator.index) == {3: (1, 0), 4: (1, 1), 6: (2, 0)}[p.step]
    live_names = {3: {"cond", "x", "y", "tx", "t1"}, 4: {"cond", "x", "y", "t1", "t2"},
                  6: {"cond", "x", "y", "ex", "e1"}}[p.step]
    assert {e.buffers[i].name for i in p.buffers} == live_names


@pytest.mark.oracle
def test_control_flow_peak_head_is_the_wheels() -> None:
    from tflm_oracle import tflm_allocations

    data = _if_model()
    model = read_model(data)
    e = explain_arena(model, allocate_model(model))
    cond = np.array([True])
    x = np.zeros(64, np.float32)
    assert e.peak is not None
    assert e.peak.head_bytes == tflm_allocations(data, inputs=[cond, x]).head
