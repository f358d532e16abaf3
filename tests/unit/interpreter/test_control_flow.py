"""IF, WHILE, CALL_ONCE and resource variables, against the live wheel over several invokes."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pytest

import tinyarena
from tflm_oracle import captured_stderr, make_interpreter, parse_allocations, tflm_invokes
from tinyarena.builder import ModelBuilder

pytestmark = pytest.mark.oracle


def _ours(model: bytes, feeds: Sequence[Sequence[np.ndarray]]) -> list[list[np.ndarray]]:
    ip = tinyarena.Interpreter(model)
    ip.allocate_tensors()
    results = []
    for inputs in feeds:
        for i, x in enumerate(inputs):
            ip.set_input(x, i)
        ip.invoke()
        results.append([ip.get_output(i) for i in range(ip.outputs_size())])
    return results


def _same(model: bytes, feeds: Sequence[Sequence[np.ndarray]]) -> None:
    want = tflm_invokes(model, feeds)
    got = _ours(model, feeds)
    for w_outs, g_outs in zip(want, got):
        assert len(w_outs) == len(g_outs)
        for w, g in zip(w_outs, g_outs):
            assert g.dtype == w.dtype and np.array_equal(g, w)


def _if_model() -> bytes:
    b = ModelBuilder()
    cond = b.add_input("cond", (1,), "bool")
    x = b.add_input("x", (4,), "float32")
    y = b.add_input("y", (4,), "float32")
    out = b.add_tensor("out", (4,), "float32")
    b.add_operator("IF", [cond, x, y], [out], then_subgraph_index=1, else_subgraph_index=2)
    b.mark_output(out)
    for index, op in ((1, "ADD"), (2, "MUL")):
        sg = b.add_subgraph()
        assert sg.index == index
        a = sg.add_input("a", (4,), "float32")
        c = sg.add_input("c", (4,), "float32")
        r = sg.add_tensor("r", (4,), "float32")
        sg.add_operator(op, [a, c], [r])
        sg.mark_output(r)
    return b.build()


def test_if_runs_the_chosen_branch() -> None:
    rng = np.random.default_rng(1)
    feeds = [[np.array([flag]), rng.standard_normal(4).astype(np.float32),
              rng.standard_normal(4).astype(np.float32)] for flag in (True, False, True)]
    _same(_if_model(), feeds)


def _resource_model() -> bytes:
    """CALL_ONCE initialises a resource to a constant; each invoke adds x to it and returns it."""
    b = ModelBuilder()
    x = b.add_input("x", (4,), "float32")
    handle = b.add_tensor("handle", (), "resource")
    value = b.add_tensor("value", (4,), "float32")
    y = b.add_tensor("y", (4,), "float32")
    b.add_operator("CALL_ONCE", [], [], init_subgraph_index=1)
    b.add_operator("VAR_HANDLE", [], [handle], shared_name="acc")
    b.add_operator("READ_VARIABLE", [handle], [value])
    b.add_operator("ADD", [value, x], [y])
    b.add_operator("ASSIGN_VARIABLE", [handle, y], [])
    b.mark_output(y)
    init = b.add_subgraph("init")
    h = init.add_tensor("handle", (), "resource")
    c = init.add_constant("start", np.array([1.0, -2.0, 0.5, 10.0], np.float32))
    init.add_operator("VAR_HANDLE", [], [h], shared_name="acc")
    init.add_operator("ASSIGN_VARIABLE", [h, c], [])
    return b.build()


def test_call_once_and_resource_variables_keep_state_across_invokes() -> None:
    rng = np.random.default_rng(2)
    feeds = [[rng.standard_normal(4).astype(np.float32)] for _ in range(4)]
    _same(_resource_model(), feeds)


def test_reset_restores_resource_variables_like_tflm() -> None:
    model = _resource_model()
    x = np.ones(4, np.float32)
    with captured_stderr():
        wheel = make_interpreter(model)
        for _ in range(2):
            wheel.set_input(x, 0)
            wheel.invoke()
        wheel.reset()
        wheel.set_input(x, 0)
        wheel.invoke()
        want = np.array(wheel.get_output(0), copy=True)
    ip = tinyarena.Interpreter(model)
    ip.allocate_tensors()
    for _ in range(2):
        ip.set_input(x, 0)
        ip.invoke()
    ip.reset()
    ip.set_input(x, 0)
    ip.invoke()
    assert np.array_equal(ip.get_output(0), want)


def test_arena_numbers_and_report_text_match_the_wheel() -> None:
    for model in (_if_model(), _resource_model()):
        ip = tinyarena.Interpreter(model)
        ip.allocate_tensors()
        with captured_stderr() as err:
            wheel = make_interpreter(model)
            wheel.print_allocations()
        want = parse_allocations(err[0])
        assert ip.arena_used_bytes() == want.total
        ours = [line for line in str(ip.allocation_report()).splitlines()
                if line.startswith("[RecordingMicroAllocator]")]
        theirs = [line for line in want.text.splitlines()
                  if line.startswith("[RecordingMicroAllocator]")]
        assert ours == theirs


def _while_model() -> bytes:
    """WHILE(flag, x): cond passes the flag through; the body adds c to x and clears the flag,
    so the body runs once when the flag starts true and never when it starts false."""
    b = ModelBuilder()
    flag = b.add_input("flag", (1,), "bool")
    x = b.add_input("x", (4,), "float32")
    flag_out = b.add_tensor("flag_out", (1,), "bool")
    y = b.add_tensor("y", (4,), "float32")
    b.add_operator("WHILE", [flag, x], [flag_out, y], cond_subgraph_index=1,
                   body_subgraph_index=2)
    b.mark_output(y)
    cond = b.add_subgraph("cond")
    cf = cond.add_input("flag", (1,), "bool")
    cond.add_input("x", (4,), "float32")
    cond.mark_output(cf)
    body = b.add_subgraph("body")
    body.add_input("flag", (1,), "bool")
    bx = body.add_input("x", (4,), "float32")
    done = body.add_constant("done", np.array([False]))
    step = body.add_constant("step", np.array([0.5, -1.0, 2.0, 4.0], np.float32))
    bnext = body.add_tensor("next", (4,), "float32")
    body.add_operator("ADD", [bx, step], [bnext])
    body.mark_output(done, bnext)
    return b.build()


def test_while_runs_its_body_while_cond_holds() -> None:
    rng = np.random.default_rng(3)
    feeds = [[np.array([flag]), rng.standard_normal(4).astype(np.float32)]
             for flag in (True, False, True)]
    _same(_while_model(), feeds)
