"""``optimize --patches``: search a split point and grid for the smallest arena on the target.

Each candidate (a stage from ``rewrite.patches.stage_splits`` and an R x C grid) is written
with ``patch_model`` and sized with ``allocate_model`` on the target, so everything the rewrite
costs is counted: the tail growth of every duplicated node (OpData, per-channel arrays, node
records, eval tensors), the kernel set's scratch for the new convolutions and TFLM's planning
transient. The best few are planned by ``optimize_model`` (reordering, safe overlap, offline
plan), and the result is compared with ``optimize_model`` on the unpatched model: patches are
kept only when the minimum arena is strictly smaller, otherwise the plain result is returned
with a note saying why.

Pruning. A stage ending at operator s is skipped when the largest sum of buffers live together
at an operator after s in the original model, plus the original tail, is no better than the
best candidate's bound (those operators and their tensors are unchanged and the tail only
grows; overlap rules could in principle go below a live sum, so this is a heuristic). Grids
are tried square first (2x2, 3x3, ...) until the MAC budget is exceeded or the ranking key
grew twice in a row, then the two neighbours of the best square; the best candidate's cuts are
then moved (``_refine_cuts``), and the best few are planned.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path

from tinyarena.arena import ArenaLayout, allocate_model
from tinyarena.arena.targets import TargetProfile
from tinyarena.errors import PlanError, TinyArenaError
from tinyarena.model import read_model
from tinyarena.model.metadata import without_offline_plan
from tinyarena.model.types import Model
from tinyarena.optimize.graph import op_graph, supports_graph_edits
from tinyarena.optimize.overlap import alias_groups, partial_overlaps
from tinyarena.optimize.pipeline import (
    DEFAULT_OVERLAP,
    OptimizeResult,
    _links,
    _problem,
    optimize_model,
    resolve_kernel_set,
)
from tinyarena.optimize.placement import linked_lower_bound
from tinyarena.optimize.safety import rule_set
from tinyarena.rewrite.patches import (
    NotPatchable,
    PatchedModel,
    Stage,
    clamp_grid,
    grid_spans,
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
"""Even-grid patched models sized at most, so the search time stays bounded on deep models."""
SEARCH_BUDGET = 60.0
"""Seconds after which no new candidate is sized (the best found so far are planned)."""
REFINED = 1
"""Best even-grid candidates whose cuts are then refined (uneven patches)."""
CUT_EVALUATIONS = 24
"""Patched models sized at most while refining one candidate's cuts."""


@dataclass(frozen=True)
class PatchTrial:
    """One sized candidate: the split, the grid emitted, its cuts and TFLM's numbers.

    ``bound`` (``planned_bound``: the optimizer's lower bound plus the tail) is what the
    optimizer reaches when its search succeeds; candidates are ranked by it, then by the
    greedy ``min_arena``."""

    split_after: int
    grid: tuple[int, int]
    cuts: tuple[tuple[int, ...], tuple[int, ...]]
    extra_macs_percent: float
    bound: int
    min_arena: int

    @property
    def key(self) -> tuple[int, int, float]:
        return (self.bound, self.min_arena, self.extra_macs_percent)


def rest_lower_bound(layout: ArenaLayout, split_after: int) -> int:
    """No patched model split after ``split_after`` has a smaller minimum arena than this:
    the largest sum of buffers live together at an operator after the split, plus the tail
    (with ``split_after`` -1: the live bound of the whole model)."""
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


Candidate = tuple[PatchTrial, PatchedModel]


@dataclass(frozen=True)
class Planning:
    """What ``optimize_model`` will plan for: the profile, rule-set key and overlap mode."""

    profile: TargetProfile
    key: str
    overlap: str


def planned_bound(model: Model, layout: ArenaLayout, planning: Planning) -> int:
    """The optimizer's own lower bound for ``model`` in its current operator order (alias
    groups and rule-(c) links of ``planning``'s rules) plus the tail: what ``optimize_model``
    reaches when its search proves optimality, which ranks candidates far better than the
    greedy plan on targets whose rules let outputs overlap their inputs."""
    if not supports_graph_edits(model) or planning.overlap == "none":
        return rest_lower_bound(layout, -1)
    graph = op_graph(model, layout)
    groups = alias_groups(model, graph, planning.overlap, planning.key)
    partial = (partial_overlaps(model, graph, groups, rule_set(planning.key).partial_ops)
               if planning.overlap == "safe" else ())
    problem = _problem(layout, groups)
    return linked_lower_bound(problem.buffers, _links(problem, partial)) + layout.tail


def _size(model: Model, stage: Stage, grid: tuple[int, int], macs: int, planning: Planning,
          cuts: tuple[tuple[int, ...], tuple[int, ...]] | None = None) -> Candidate:
    patched = patch_model(model, stage.split_after, grid, cuts)
    new = read_model(patched.model)
    try:
        layout = allocate_model(new, target=planning.profile)
    except TinyArenaError as exc:  # a kernel of the target refuses a new op: not a candidate
        raise NotPatchable(f"operators 0..{stage.split_after} as {grid[0]}x{grid[1]} patches "
                           f"cannot be sized on {planning.profile.name}: {exc}") from exc
    extra = 100.0 * (patched.info.macs_after - macs) / macs if macs else 0.0
    return (PatchTrial(stage.split_after, patched.info.grid, patched.info.cuts, extra,
                       planned_bound(new, layout, planning), layout.min_arena), patched)


def _moves(cuts: tuple[int, ...], n: int) -> list[tuple[int, ...]]:
    """Every cut vector with one run of consecutive boundaries shifted by one cell (single
    boundaries first), still strictly inside (0, n)."""
    out = []
    k = len(cuts)
    for length in range(1, k + 1):
        for i in range(k - length + 1):
            for delta in (-1, 1):
                moved = list(cuts)
                for j in range(i, i + length):
                    moved[j] += delta
                points = [0, *moved, n]
                if all(b > a for a, b in zip(points, points[1:])):
                    out.append(tuple(moved))
    return out


def _refine_cuts(model: Model, stage: Stage, start: Candidate, macs: int,
                 planning: Planning, max_extra_macs: float, evaluations: int,
                 deadline: float | None = None) -> list[Candidate]:
    """Uneven cuts by first-improvement descent from ``start``'s cuts: shift a run of
    boundaries by one cell while the ranking key improves. A square grid on a square map moves
    rows and columns together (half the evaluations)."""
    shape = model.subgraphs[0].tensors[stage.output].shape
    h, w = shape[1], shape[2]
    best = start
    tried: list[Candidate] = []
    seen = {start[0].cuts}
    together = h == w and start[0].cuts[0] == start[0].cuts[1]
    improved = True
    while improved and evaluations > 0:
        improved = False
        rows, cols = best[0].cuts
        if together:
            options = [(m, m) for m in _moves(rows, h)]
        else:
            options = [(m, cols) for m in _moves(rows, h)] + [(rows, m) for m in _moves(cols, w)]
        for cuts in options:
            if deadline is not None and time.perf_counter() > deadline:
                return tried
            if cuts in seen or evaluations <= 0:
                continue
            seen.add(cuts)
            evaluations -= 1
            try:
                candidate = _size(model, stage, best[0].grid, macs, planning, cuts)
            except NotPatchable:
                continue
            if candidate[0].extra_macs_percent > max_extra_macs:
                continue
            tried.append(candidate)
            if candidate[0].key < best[0].key:
                best, improved = candidate, True
                break
    return tried


def search_patches(model: Model, planning: Planning, max_extra_macs: float,
                   deadline: float | None = None) -> tuple[list[Candidate], list[str]]:
    """The best patched candidates on ``profile`` (best ranking key first) and notes on what
    was refused."""
    base = without_offline_plan(model)
    stages, reason = stage_splits(base)
    if not stages:
        return [], [f"patches: no patchable stage ({reason})"]
    layout = allocate_model(base, target=planning.profile)
    macs = model_macs(base)
    bounds = sorted((rest_lower_bound(layout, s.split_after), s.split_after, s) for s in stages)
    found: list[Candidate] = []
    trials = 0
    over_budget = 0
    plain_bound = planned_bound(base, layout, planning)

    def best() -> int:
        return min([t.bound for t, _ in found] + [plain_bound])

    def affordable(stage: Stage, grid: tuple[int, int]) -> bool:
        return macs == 0 or 100.0 * (patch_macs(base, stage, grid) - macs) / macs \
            <= max_extra_macs

    pruned = 0
    for bound, _, stage in bounds:
        if bound >= best() or trials >= MAX_TRIALS:
            pruned += 1
            continue
        if deadline is not None and time.perf_counter() > deadline and found:
            break
        shape = base.subgraphs[0].tensors[stage.output].shape
        sized: dict[tuple[int, int], tuple[int, int, float]] = {}
        worse = 0
        for grid in _grids(shape[1], shape[2]):
            if not affordable(stage, grid):
                over_budget += 1
                break
            if deadline is not None and time.perf_counter() > deadline and found:
                break
            try:
                trial, patched = _size(base, stage, grid, macs, planning)
            except NotPatchable:
                continue
            trials += 1
            found.append((trial, patched))
            prior = min(sized.values(), default=None)
            sized[trial.grid] = trial.key
            worse = worse + 1 if prior is not None and trial.key >= prior else 0
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
                trial, patched = _size(base, stage, grid, macs, planning)
            except NotPatchable:
                continue
            trials += 1
            sized[trial.grid] = trial.key
            found.append((trial, patched))
    found.sort(key=lambda tp: tp[0].key)
    for candidate in found[:REFINED]:
        stage = next(s for s in stages if s.split_after == candidate[0].split_after)
        found.extend(_refine_cuts(base, stage, candidate, macs, planning, max_extra_macs,
                                  CUT_EVALUATIONS, deadline))
    found.sort(key=lambda tp: tp[0].key)
    notes = []
    if not found and over_budget:
        notes.append(f"patches: no grid of the {len(stages)} patchable stage(s) stays within "
                     f"--max-extra-macs {max_extra_macs:g}%")
    elif not found:
        notes.append(f"patches: not tried: of the {len(stages)} possible split points, "
                     f"{pruned} leave an unpatched rest of the network whose largest set of "
                     f"buffers live together, plus the tail, is already no smaller than the "
                     f"whole model's lower bound ({plain_bound} bytes), and the others end in "
                     f"a map too small to cut")
    finalists = found[:FINALISTS - 1]
    by_greedy = min(found, key=lambda tp: (tp[0].min_arena, tp[0].key), default=None)
    if by_greedy is not None and all(by_greedy[0] != f[0] for f in finalists):
        finalists.append(by_greedy)
    return finalists, notes


def optimize_with_patches(source: bytes | bytearray | memoryview | str | Path | Model, *,
                          max_extra_macs: float = DEFAULT_MAX_EXTRA_MACS,
                          reorder: bool = True, overlap: str = DEFAULT_OVERLAP,
                          time_budget_s: float = 1.0,
                          target: str | TargetProfile | None = None,
                          kernel_set: str | None = None, seed: int = 0,
                          search_budget_s: float = SEARCH_BUDGET) -> OptimizeResult:
    """``optimize_model`` on the best patched rewrite of the model, or on the model itself when
    no patched candidate ends with a strictly smaller minimum arena (the notes say why).
    ``result.patches`` describes the rewrite (None: unpatched). ``time_budget_s`` is each
    placement search's; ``search_budget_s`` bounds the candidate search (once one candidate
    is sized, no new one is started after it)."""
    if not max_extra_macs >= 0:
        raise PlanError(f"--max-extra-macs must be a percentage >= 0, got {max_extra_macs!r}")
    start = time.perf_counter()
    model = read_model(source)
    profile, key = resolve_kernel_set(target, kernel_set)
    options = dict(reorder=reorder, overlap=overlap, time_budget_s=time_budget_s,
                   target=target, kernel_set=kernel_set, seed=seed)
    plain = optimize_model(model, **options)  # type: ignore[arg-type]
    finalists, notes = search_patches(model, Planning(profile, key, overlap), max_extra_macs,
                                      time.perf_counter() + search_budget_s)
    best: OptimizeResult | None = None
    best_info = None
    for _, patched in finalists:
        try:
            result = optimize_model(patched.model, **options)  # type: ignore[arg-type]
        except TinyArenaError as exc:
            notes.append(f"patches: a {patched.info.grid[0]}x{patched.info.grid[1]} candidate "
                         f"after operator {patched.info.split_after} could not be planned "
                         f"({exc})")
            continue
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
    even = (tuple(s.start for s in grid_spans(info.stage_output_shape[1], info.grid[0])[1:]),
            tuple(s.start for s in grid_spans(info.stage_output_shape[2], info.grid[1])[1:]))
    if info.cuts != even:
        notes.append(f"patches: uneven cuts, rows at {list(info.cuts[0])}, columns at "
                     f"{list(info.cuts[1])} (of {info.stage_output_shape[1]}x"
                     f"{info.stage_output_shape[2]})")
    if info.grid != info.requested_grid:
        notes.append(f"patches: grid {info.requested_grid[0]}x{info.requested_grid[1]} clamped "
                     f"to {info.grid[0]}x{info.grid[1]} by the stage output's size")
    return dataclasses.replace(best, before=plain.before, changed=True, patches=info,
                               notes=best.notes + tuple(notes), elapsed_s=elapsed)


__all__ = ["DEFAULT_MAX_EXTRA_MACS", "PATCHES_TIME_BUDGET", "PatchTrial", "Planning",
           "optimize_with_patches", "planned_bound", "rest_lower_bound", "search_patches"]
