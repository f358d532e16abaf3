"""A lean install (no OR-Tools) gives the same proven plans as one with it.

The oracle is CP-SAT itself (``placement._exact``, run alone with a generous budget on the
same placement problem the optimizer builds), so each test needs OR-Tools installed to compare
against, and hides it from the code under test (``lean``)."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

import model_families as families
from tinyarena.arena import allocate_model
from tinyarena.cli import main
from tinyarena.model import read_model
from tinyarena.model.metadata import without_offline_plan
from tinyarena.optimize import optimize_model
from tinyarena.optimize.graph import op_graph, supports_graph_edits
from tinyarena.optimize.overlap import alias_groups, partial_overlaps
from tinyarena.optimize.pipeline import _links, _problem, resolve_kernel_set
from tinyarena.optimize.placement import Link, _exact, linked_lower_bound, search_plan
from tinyarena.optimize.safety import rule_set
from tinyarena.planning import Buffer, buffer_arrays, plan_greedy

# (target, kernel set) as `optimize` takes them: portable, each kernel set alone, two targets.
CONFIGS = [(None, None), (None, "reference"), (None, "cmsis-nn"), ("cortex-m4", None),
           ("host-x64", None)]
FAMILIES = {
    "ds_cnn": lambda: families.ds_cnn(),
    "micronet": lambda: families.ds_cnn(micronet=True),
    "ds_cnn_float": lambda: families.ds_cnn(quant=False),
    "mobilenet": lambda: families.mobilenet(),
    "ssd_detector": lambda: families.ssd_detector(),
    "activity": lambda: families.activity(),
    "audio_frontend": lambda: families.audio_frontend(),
    "st_image_uint8_io": lambda: families.st_image_uint8_io(),
    "int16x8": lambda: families.int16x8(),
    "exporter_habits": lambda: families.exporter_habits(),
}


def _ortools_modules() -> list[str]:
    return [n for n in sys.modules if n == "ortools" or n.startswith("ortools.")]


@contextlib.contextmanager
def lean() -> Iterator[None]:
    """``import ortools`` (or any of its submodules) fails inside, as on a lean install; the
    modules already loaded are back afterwards."""
    saved = {n: sys.modules[n] for n in _ortools_modules()}
    for name in saved:
        sys.modules[name] = None  # type: ignore[assignment]
    sys.modules["ortools"] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        for name in _ortools_modules():
            del sys.modules[name]
        sys.modules.update(saved)


def _cp_sat() -> None:
    pytest.importorskip("ortools", reason="the oracle is CP-SAT (extra `optimal`)")


def _placement(source: bytes | Path, target: str | None, kernel_set: str | None
               ) -> tuple[tuple[Buffer, ...], tuple[Link, ...]] | None:
    """The buffers and links ``optimize`` hands the placement search (original order)."""
    profile, key = resolve_kernel_set(target, kernel_set)
    model = without_offline_plan(read_model(source))
    if not supports_graph_edits(model):
        return None
    layout = allocate_model(model, target=profile)
    graph = op_graph(model, layout)
    groups = alias_groups(model, graph, "safe", key)
    problem = _problem(layout, groups)
    return problem.buffers, _links(problem, partial_overlaps(model, graph, groups,
                                                             rule_set(key).partial_ops))


def _cp_sat_optimum(buffers: tuple[Buffer, ...], links: tuple[Link, ...]) -> int:
    """CP-SAT alone, from TFLM's greedy plan, until it proves its optimum."""
    arrays = buffer_arrays(buffers)
    links = tuple(Link(k.a, k.b, max(k.max_delta, -buffers[k.b].size)) for k in links)
    greedy = plan_greedy(buffers)
    found = _exact(arrays, np.asarray(greedy.offsets, dtype=np.int64), greedy.head_size,
                   linked_lower_bound(buffers, links), 60.0, links)
    assert found is not None and found[1], "CP-SAT did not prove an optimum in 60 s"
    return int((found[0] + arrays.sizes).max())


def _compare(source: bytes | Path) -> int:
    """Every configuration: the lean search's head equals CP-SAT's proven optimum, proven.
    Returns how many configurations had overlap links."""
    linked = 0
    for target, kernel_set in CONFIGS:
        problem = _placement(source, target, kernel_set)
        if problem is None:
            continue
        buffers, links = problem
        linked += bool(links)
        optimum = _cp_sat_optimum(buffers, links)
        with lean():
            result = search_plan(buffers, links=links, time_budget_s=5.0)
        assert (result.head, result.optimal) == (optimum, True), (target, kernel_set)
        assert not result.method.startswith("exact:cp-sat")
    return linked


def test_lean_search_equals_cp_sat_on_shared_models(shared_model_name: str,
                                                    shared_models: Path) -> None:
    _cp_sat()
    _compare(shared_models / f"{shared_model_name}.tflite")


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_lean_search_equals_cp_sat_on_model_families(family: str) -> None:
    _cp_sat()
    _compare(FAMILIES[family]())


def test_the_families_exercise_links() -> None:
    """Most families must give the search overlap links under some configuration, or the
    comparison above says little about them."""
    linked = sum(any(p is not None and p[1] for p in (_placement(make(), t, k)
                                                       for t, k in CONFIGS))
                 for make in FAMILIES.values())
    assert linked >= 7


def test_lean_optimize_person_detect_reference_is_proven(shared_models: Path,
                                                        tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    """The issue's check, through the CLI: CP-SAT's optimum for person_detect's placement
    problem with reference kernels, reached and proven without OR-Tools."""
    _cp_sat()
    path = shared_models / "person_detect.tflite"
    if not path.is_file():
        pytest.skip("person_detect.tflite is not in ../shared/models")
    problem = _placement(path, None, "reference")
    assert problem is not None and problem[1]
    optimum = _cp_sat_optimum(*problem)
    out = tmp_path / "o.tflite"
    with lean():
        # A budget far above what it needs (it stops once proven): a loaded CI box must not
        # turn this into a timing test.
        assert main(["optimize", str(path), "--kernel-set", "reference", "--json", "-o",
                     str(out), "--time-budget", "20"]) == 0
        result = optimize_model(path, kernel_set="reference", time_budget_s=20)
    data = json.loads(capsys.readouterr().out)
    assert data["after"]["head"] == optimum and data["optimal"] is True
    assert data["search_method"] != "exact:cp-sat"
    assert allocate_model(read_model(out.read_bytes())).head == optimum
    assert (result.after.head, result.optimal) == (optimum, True)


def test_cp_sat_says_when_it_changes_the_result() -> None:
    """Three buffers live together, each allowed to start up to 48 bytes above the next in a
    cycle: the in-house search has no placement order for such links and cannot prove its
    plan, CP-SAT proves all three at one offset (64 bytes). The result says OR-Tools did it."""
    _cp_sat()
    buffers = [Buffer(64, 0, 0), Buffer(64, 0, 0), Buffer(64, 0, 0)]
    links = [Link(0, 1, 48), Link(1, 2, 48), Link(2, 0, 48)]
    with_ortools = search_plan(buffers, links=links, time_budget_s=5.0)
    assert (with_ortools.head, with_ortools.optimal) == (64, True)
    assert with_ortools.notes and "OR-Tools" in with_ortools.notes[0]
    with lean():
        alone = search_plan(buffers, links=links, time_budget_s=0.5)
    assert not alone.notes and not alone.method.startswith("exact:cp-sat")
    assert not alone.optimal or alone.head == 64


def test_long_searches_show_progress_on_a_terminal(shared_models: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """From --time-budget 5 on, on a terminal, `optimize` writes where its exact search
    stands to stderr (stdout keeps the JSON); with a short budget or no terminal, nothing."""
    path = shared_models / "person_detect.tflite"
    if not path.is_file():
        pytest.skip("person_detect.tflite is not in ../shared/models")
    args = ["optimize", str(path), "--kernel-set", "reference", "--json", "-o"]
    with lean():
        assert main(args + [str(tmp_path / "quiet.tflite")]) == 0
        quiet = capsys.readouterr()
        monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
        assert main(args + [str(tmp_path / "loud.tflite"), "--time-budget", "5"]) == 0
        loud = capsys.readouterr()
    assert "optimize:" not in quiet.err
    lines = [line for line in loud.err.splitlines() if line.startswith("optimize: ")]
    assert lines and lines[-1].endswith("proven optimal")
    assert json.loads(loud.out)["optimal"] is True
