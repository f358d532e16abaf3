"""Patch-rewritten models against the live TFLM wheel: outputs bit-identical to the original's,
the arena the wheel's recording allocator reports equal to tinyarena's prediction, and the
wheel allocating and invoking in exactly the predicted minimum arena (not 16 bytes less)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from tflm_oracle import (
    model_random_inputs,
    shared_model_bytes,
    tflm_allocations,
    tflm_fits,
    tflm_run,
)
from tinyarena import Interpreter
from tinyarena.arena import allocate_model
from tinyarena.model import read_model
from tinyarena.optimize import optimize_model
from tinyarena.optimize.patches import optimize_with_patches
from tinyarena.rewrite.patches import NotPatchable, patch_model, stage_splits

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "rewrite"))
from patch_models import MODELS  # noqa: E402

pytestmark = pytest.mark.oracle

MOBILENET_V2 = "mobilenet_v2_quantized_1x3x224x224"


def _same_outputs(original: bytes, patched: bytes, seeds: int = 2) -> None:
    for seed in range(seeds):
        feed = model_random_inputs(original, seed)
        expected = tflm_run(original, feed)
        got = tflm_run(patched, feed)
        assert len(expected) == len(got)
        for e, g in zip(expected, got):
            assert np.array_equal(e, g)


def _arena_as_predicted(model: bytes, fits: bool = False) -> None:
    layout = allocate_model(read_model(model))
    report = tflm_allocations(model)
    assert (report.head, report.tail, report.total) == (layout.head, layout.tail, layout.total)
    if fits:
        assert tflm_fits(model, layout.min_arena)[0]
        assert not tflm_fits(model, layout.min_arena - 16)[0]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_stage_of_the_test_cnns_runs_bit_exact_in_the_wheel(name: str) -> None:
    data = MODELS[name]()
    stages, _ = stage_splits(read_model(data))
    assert len(stages) >= 3
    checked = 0
    for stage in stages:
        for grid in ((3, 2), (10, 10)):
            try:
                patched = patch_model(data, stage.split_after, grid)
            except NotPatchable:
                continue
            _same_outputs(data, patched.model)
            _arena_as_predicted(patched.model)
            checked += 1
    assert checked >= 5
    single_column = patch_model(data, stages[-1].split_after, (3, 1))  # one concat by rows
    _same_outputs(data, single_column.model, seeds=1)
    single_row = patch_model(data, stages[-1].split_after, (1, 3))  # one concat by columns
    _same_outputs(data, single_row.model, seeds=1)
    _arena_as_predicted(single_row.model, fits=True)
    # tinyarena's own interpreter (``tinyarena run``) gives the wheel's outputs on it too
    feed = model_random_inputs(data, 5)
    expected = tflm_run(data, feed)
    for target in ("host-x64", "cortex-m4"):
        ip = Interpreter(single_row.model, target=target)
        ip.allocate_tensors()
        for i, x in enumerate(feed):
            ip.set_input(x, i)
        ip.invoke()
        for i, e in enumerate(expected):
            assert np.array_equal(ip.get_output(i), e)


@pytest.mark.parametrize("target", ["host-x64", "cortex-m4"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_patches_are_never_worse_than_plain_optimize(name: str, target: str) -> None:
    data = MODELS[name]()
    plain = optimize_model(data, target=target, time_budget_s=0.3)
    result = optimize_with_patches(data, target=target, time_budget_s=0.3)
    assert result.after.min_arena <= plain.after.min_arena
    assert result.before == plain.before
    if name == "wide_stem":  # built so that its early maps dwarf the rest: patches pay
        assert result.patches is not None
    if result.patches is None:
        assert any("patches" in n for n in result.notes)
        return
    assert result.after.min_arena < plain.after.min_arena
    assert result.patches.extra_macs_percent <= 25
    if "reference" in result.safe_for or "any" in result.safe_for:
        _same_outputs(data, result.model, seeds=1)
    if target == "host-x64":
        _arena_as_predicted(result.model)


def test_a_mac_budget_of_zero_leaves_the_model_unpatched() -> None:
    data = MODELS["mobilenet_like"]()
    result = optimize_with_patches(data, target="host-x64", max_extra_macs=0.0,
                                   time_budget_s=0.2)
    assert result.patches is None
    assert any("--max-extra-macs" in n for n in result.notes)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["host-x64", "cortex-m4"])
def test_mobilenet_v2_minimum_arena_at_least_3_5x_smaller(shared_models: Path,
                                                           target: str) -> None:
    data = shared_model_bytes(MOBILENET_V2)
    before = allocate_model(read_model(data), target=target).min_arena
    result = optimize_with_patches(data, target=target, time_budget_s=2.0)
    assert result.patches is not None
    assert result.before.min_arena == before
    assert before / result.after.min_arena >= 3.5
    assert result.patches.extra_macs_percent <= 25
    again = allocate_model(read_model(result.model), target=target)
    assert again.min_arena == result.after.min_arena
    if target == "host-x64":
        assert tflm_allocations(data).total == before
        _same_outputs(data, result.model, seeds=2)
        _arena_as_predicted(result.model, fits=True)
