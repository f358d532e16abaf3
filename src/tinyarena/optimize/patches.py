"""``optimize --patches``: search a split point and grid for the smallest arena on the target.

Each candidate (a stage from ``rewrite.patches.stage_splits`` and an R x C grid) is written
with ``patch_model`` and sized with ``allocate_model`` on the target, so everything the rewrite
costs is counted: the tail growth of every duplicated node (OpData, per-channel arrays, node
records, eval tensors), CMSIS-NN / ESP-NN scratch of the new convolutions and TFLM's planning
transient. The best few are planned by ``optimize_model`` (reordering, safe overlap, offline
plan), and the result is compared with ``optimize_model`` on the unpatched model: patches are
kept only when the minimum arena is strictly smaller, otherwise the plain result is returned
with a note saying why.

Pruning. A stage ending at operator s cannot beat the largest sum of buffers live together at
any operator after s in the original model plus the original tail (those operators and their
tensors are unchanged, and the tail only grows), so stages whose bound is no better than the
best candidate are skipped. Grids are tried square first (2x2, 3x3, ...) until the MAC budget
is exceeded or the arena grew twice in a row, then the two neighbours of the best square.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path

from tinyarena.arena import ArenaLayout, allocate_model
from tinyarena.arena.targets import TargetProfile
from tinyarena.model import read_model
from tinyarena.model.metadata import without_offline_plan
from tinyarena.model.types import Model
from tinyarena.optimize.pipeline import (
    DEFAULT_OVERLAP,
    ArenaNumbers,
    OptimizeResult,
    optimize_model,
    resolve_kernel_set,
)
from tinyarena.rewrite.patches import (
    NotPatchable,
    PatchedModel,
    Stage,
    clamp_grid,
    model_macs,
    patch_macs,
    patch_model,
    stage_splits,
)

DEFAULT_MAX_EXTRA_MACS = 25.0
FINALISTS = 3
"""Candidates (by greedy minimum arena) handed to the full optimizer."""
PATCHES_TIME_BUDGET = 10.0
"""Default placement-search seconds per planned candidate: a patched model has hundreds of
operators, and the exact search needs seconds to reach (and prove) the plans rule (c) allows."""
MAX_TRIALS = 60
"""Patched models sized at most, so the search time stays bounded on deep models."""


@dataclass(frozen=True)
class PatchTrial:
    """One sized candidate: the split, the grid emitted and TFLM's greedy numbers."""

    split_after: int
    grid: tuple[int, int]
    extra_macs_percent: float
    min_arena: int
    total: int


def rest_lower_bound(layout: ArenaLayout, split_after: int) -> int:
    """No patched model split after ``split_after`` has a smaller minimum arena than this:
    the largest sum of buffers live together at an operator after the split, plus the tail."""
    peak = 0
    for t in {b.first for b in layout.buffers} | {b.last for b in layout.buffers}:
        if t <= split_after:
            continue
        peak = max(peak, sum(b.size for b in layout.buffers if b.first <= t <= b.last))
    return peak + layout.tail


def _grids(height: int, width: int) -> list[tuple[int, int]]:
    """Square grids in increasing size, clamped to the stage output, without repeats."""
    seen: list[tuple[int, int]] = []
    for n in range(2, 11):
        g = clamp_grid((n, n), height, width)
        if g != (1, 1) and g not in seen:
            seen.append(g)
    return seen


def _size(model: Model, stage: Stage, grid: tuple[int, int], macs: int,
          profile: TargetProfile) -> tuple[PatchTrial, PatchedModel]:
    patched = patch_model(model, stage.split_after, grid)
    layout = allocate_model(read_model(patched.model), target=profile)
    extra = 100.0 * (patched.info.macs_after - macs) / macs if macs else 0.0
    return (PatchTrial(stage.split_after, patched.info.grid, extra, layout.min_arena,
                       layout.total), patched)


def search_patches(model: Model, profile: TargetProfile, max_extra_macs: float,
                   deadline: float | None = None
                   ) -> tuple[list[tuple[PatchTrial, PatchedModel]], list[str]]:
    """The best patched candidates on ``profile`` (smallest greedy minimum arena first) and
    notes on what was refused."""
    base = without_offline_plan(model)
    stages, reason = stage_splits(base)
    if not stages:
        return [], [f"patches: no patchable stage ({reason})"]
    layout = allocate_model(base, target=profile)
    macs = model_macs(base)
    bounds = sorted((rest_lower_bound(layout, s.split_after), s.split_after, s) for s in stages)
    found: list[tuple[PatchTrial, PatchedModel]] = []
    trials = 0
    over_budget = 0

    def best() -> int:
        return min([t.min_arena for t, _ in found] + [layout.min_arena])

    def affordable(stage: Stage, grid: tuple[int, int]) -> bool:
        return macs == 0 or 100.0 * (patch_macs(base, stage, grid) - macs) / macs \
            <= max_extra_macs

    for bound, _, stage in bounds:
        if bound >= best() or trials >= MAX_TRIALS:
            continue
        if deadline is not None and time.perf_counter() > deadline and found:
            break
        shape = base.subgraphs[0].tensors[stage.output].shape
        sized: dict[tuple[int, int], int] = {}
        worse = 0
        for grid in _grids(shape[1], shape[2]):
            if not affordable(stage, grid):
                over_budget += 1
                break
            try:
                trial, patched = _size(base, stage, grid, macs, profile)
            except NotPatchable:
                continue
            trials += 1
            found.append((trial, patched))
            prior = min(sized.values(), default=None)
            sized[trial.grid] = trial.min_arena
            worse = worse + 1 if prior is not None and trial.min_arena >= prior else 0
            if worse >= 2 or trials >= MAX_TRIALS:
                break
        if not sized:
            continue
        r, c = min(sized, key=lambda g: sized[g])
        for grid in (clamp_grid((r, c + 1), shape[1], shape[2]),
                     clamp_grid((r + 1, c), shape[1], shape[2])):
            if grid in sized or not affordable(stage, grid) or trials >= MAX_TRIALS:
                continue
            try:
                trial, patched = _size(base, stage, grid, macs, profile)
            except NotPatchable:
                continue
            trials += 1
            sized[trial.grid] = trial.min_arena
            found.append((trial, patched))
    found.sort(key=lambda tp: (tp[0].min_arena, tp[0].total, tp[0].extra_macs_percent))
    notes = []
    if not found:
        notes.append(f"patches: no grid of the {len(stages)} patchable stage(s) stays within "
                     f"--max-extra-macs {max_extra_macs:g}%" if over_budget else
                     "patches: no patched candidate could be built")
    return found[:FINALISTS], notes


def optimize_with_patches(source: bytes | bytearray | memoryview | str | Path | Model, *,
                          max_extra_macs: float = DEFAULT_MAX_EXTRA_MACS,
                          reorder: bool = True, overlap: str = DEFAULT_OVERLAP,
                          time_budget_s: float = 1.0,
                          target: str | TargetProfile | None = None,
                          kernel_set: str | None = None, seed: int = 0) -> OptimizeResult:
    """``optimize_model`` on the best patched rewrite of the model, or on the model itself when
    no patched candidate ends with a strictly smaller minimum arena (the notes say why).
    ``result.patches`` describes the rewrite (None: unpatched)."""
    from tinyarena.errors import PlanError

    if not max_extra_macs >= 0:
        raise PlanError(f"--max-extra-macs must be a percentage >= 0, got {max_extra_macs!r}")
    start = time.perf_counter()
    model = read_model(source)
    profile, _ = resolve_kernel_set(target, kernel_set)
    options = dict(reorder=reorder, overlap=overlap, time_budget_s=time_budget_s,
                   target=target, kernel_set=kernel_set, seed=seed)
    plain = optimize_model(model, **options)  # type: ignore[arg-type]
    finalists, notes = search_patches(model, profile, max_extra_macs)
    best: OptimizeResult | None = None
    best_info = None
    for trial, patched in finalists:
        if trial.min_arena >= plain.after.min_arena and best is not None:
            continue
        result = optimize_model(patched.model, **options)  # type: ignore[arg-type]
        if best is None or (result.after.min_arena, result.after.total) < \
                (best.after.min_arena, best.after.total):
            best, best_info = result, patched.info
    elapsed = time.perf_counter() - start
    if best is None or best_info is None or best.after.min_arena >= plain.after.min_arena:
        if best is not None:
            notes.append(f"patches: do not pay here: the best patched model needs a minimum "
                         f"arena of {best.after.min_arena} bytes, the unpatched one "
                         f"{plain.after.min_arena} (the tail growth of the duplicated "
                         f"operators cancels the head saving): the model is left unpatched")
        return dataclasses.replace(plain, notes=plain.notes + tuple(notes), elapsed_s=elapsed)
    info = best_info
    notes.append(f"patches: operators 0..{info.split_after} run as a {info.grid[0]}x"
                 f"{info.grid[1]} grid of patches ({', '.join(dict.fromkeys(info.stage_ops))}; "
                 f"stage output tensor {info.stage_output} "
                 f"{'x'.join(str(d) for d in info.stage_output_shape)}), "
                 f"{info.extra_macs_percent:+.1f}% MACs, {info.ops_before} -> {info.ops_after} "
                 f"operators")
    if info.grid != info.requested_grid:
        notes.append(f"patches: grid {info.requested_grid[0]}x{info.requested_grid[1]} clamped "
                     f"to {info.grid[0]}x{info.grid[1]} by the stage output's size")
    return dataclasses.replace(best, before=plain.before, changed=True, patches=info,
                               notes=best.notes + tuple(notes), elapsed_s=elapsed)


__all__ = ["DEFAULT_MAX_EXTRA_MACS", "PATCHES_TIME_BUDGET", "PatchTrial", "optimize_with_patches", "rest_lower_bound",
           "search_patches"]
