"""``optimize_model``: the same model, pinned to a smaller arena plan that TFLM follows.

Pipeline (each step checked by the arena emulation, which reproduces TFLM's planner exactly):

1. the original model's arena (``allocate_model``): the "before" numbers;
2. optionally a better operator order (``reorder.best_order``), applied in memory;
3. alias groups the overlap mode permits (``overlap.alias_groups``) for that order, and
   with "safe" the rule-(c) links between an op's input and output groups
   (``overlap.partial_overlaps``);
4. the placement search (``placement.search_plan``) over one buffer per group plus every
   kernel scratch buffer, with those links;
5. the tensors' offsets written as OfflineMemoryAllocation metadata, and beside them which
   kernel sets the plan is proven safe for (``safety``; a ``tinyarena.plan_safety`` entry that
   ``size``/``run``/``plan`` check against the target). TFLM pins the offsets and plans
   the scratch buffers online around them (facts 3), so the head is re-predicted by running
   ``allocate_model`` on the candidate: that prediction, not the search's, is the "after";
6. the plan TFLM will use is verified (overlaps only inside alias groups, or between linked
   groups at a displacement within the op's margin);
7. if the candidate is not smaller than the original, the original model is returned unchanged;
   otherwise the file is rewritten losslessly (``tinyarena.rewrite``) and re-read to confirm
   the prediction.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from tinyarena.arena import ArenaLayout, allocate_model
from tinyarena.arena.targets import TargetProfile, get_target
from tinyarena.arena.lifetimes import ONLINE
from tinyarena.errors import PlanError, TinyArenaError
from tinyarena.kernels import ethos_u
from tinyarena.model import read_model
from tinyarena.model.metadata import (
    OFFLINE_PLAN_NAME,
    PLAN_SAFETY_NAME,
    PlanSafety,
    encode_offline_plan,
    encode_plan_safety,
    offline_offsets,
    plan_safety,
    without_offline_plan,
)
from tinyarena.model.types import Model
from tinyarena.optimize.graph import op_graph, reordered_model, supports_graph_edits
from tinyarena.optimize.overlap import (
    AliasGroups,
    PartialOverlap,
    alias_groups,
    check_mode,
    inplace_groups,
    kernel_partial_overlaps,
    no_aliases,
    view_groups,
)
from tinyarena.optimize.placement import Link, SearchResult, linked_lower_bound, search_plan
from tinyarena.optimize.reorder import OrderResult, best_order
from tinyarena.optimize.safety import (
    ESP_NN,
    PARTIAL_OPS,
    PORTABLE,
    allows,
    forbidden_why,
    kernel_set_key,
    matched_key,
    op_keys,
    rule_set,
    safe_for,
    target_key,
)
from tinyarena.planning import Buffer, Plan, verify_plan

if TYPE_CHECKING:
    from tinyarena.rewrite.patches import PatchInfo

DEFAULT_OVERLAP = "safe"
DEFAULT_KERNEL_SET = PORTABLE
"""With no target or kernel set named, plan only what every kernel set tolerates."""
SIZING_TARGET = "host-x64"


@dataclass(frozen=True)
class ArenaNumbers:
    """Head, tail, total (arena_used_bytes) and the smallest working arena."""

    head: int
    tail: int
    total: int
    min_arena: int

    @classmethod
    def of(cls, layout: ArenaLayout) -> ArenaNumbers:
        return cls(layout.head, layout.tail, layout.total, layout.min_arena)

    def to_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class OptimizeResult:
    """What ``optimize_model`` did and what TFLM will see.

    ``model`` is the file to ship: the rewritten model, or the original bytes when nothing
    smaller was found (``changed`` False). ``lower_bound`` is a bound no plan of the final
    operator order can beat under the overlap mode's rules (with scratch buffers counted);
    ``optimal`` is True when the predicted head equals it. ``order[k]`` is the original index
    of the op that now runs k-th.
    """

    model: bytes
    before: ArenaNumbers
    after: ArenaNumbers
    lower_bound: int
    optimal: bool
    changed: bool
    order: tuple[int, ...]
    order_exact: bool | None  # None: reordering not attempted
    overlap: str
    kernel_set: str
    aliases: tuple[tuple[int, str, str, int, int], ...]
    search_method: str
    search_head: int
    greedy_head: int
    elapsed_s: float
    notes: tuple[str, ...]
    layout: ArenaLayout | None = dataclasses.field(default=None, repr=False, compare=False)
    partial: tuple[PartialOverlap, ...] = ()
    target: str | None = None
    safe_for: tuple[str, ...] = (PORTABLE,)
    savings_by_rule: tuple[tuple[str, int], ...] = ()
    """Per overlap rule the plan uses (``rule_label``): the bytes of head the placement search
    needs more when that rule alone is withdrawn (same order, same search): its marginal
    saving, so the figures need not add up to the total."""
    patches: PatchInfo | None = None  # optimize --patches: the rewrite, None when unpatched

    @property
    def shifts(self) -> tuple[int | None, ...]:
        """Per rule-(c) overlap: output offset minus input offset in the plan TFLM uses."""
        if self.layout is None:
            return tuple(None for _ in self.partial)
        offs = self.layout.tensor_offsets
        return tuple(offs[(0, p.output)] - offs[(0, p.input)]
                     if (0, p.output) in offs and (0, p.input) in offs else None
                     for p in self.partial)

    @property
    def saving(self) -> int:
        return self.before.total - self.after.total

    @property
    def reordered(self) -> bool:
        return self.order != tuple(range(len(self.order)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "before": self.before.to_dict(),
            "after": self.after.to_dict(),
            "saving_bytes": self.saving,
            "head_saving_bytes": self.before.head - self.after.head,
            "lower_bound_bytes": self.lower_bound,
            "optimal": self.optimal,
            "changed": self.changed,
            "reordered": self.reordered,
            "order": list(self.order),
            "order_exact": self.order_exact,
            "overlap": self.overlap,
            "kernel_set": self.kernel_set,
            "target": self.target,
            "safe_for_kernel_sets": list(self.safe_for),
            "aliases": [{"op": op, "op_name": name, "rule": rule, "tensor": kept,
                         "shares_with": merged}
                        for op, name, rule, kept, merged in self.aliases],
            "partial_overlaps": [{"op": p.op, "op_name": p.op_name, "input": p.input,
                                  "output": p.output, "margin_bytes": p.margin,
                                  "max_shift_bytes": p.max_delta, "shift_bytes": shift,
                                  "rule": partial_label(p),
                                  "kernel_path": kernel_path(self.kernel_set, p.rule, p.scheme)}
                                 for p, shift in zip(self.partial, self.shifts)],
            "savings_by_rule": dict(self.savings_by_rule),
            "search_method": self.search_method,
            "search_head": self.search_head,
            "greedy_head": self.greedy_head,
            "elapsed_s": round(self.elapsed_s, 4),
            "notes": list(self.notes),
            "patches": None if self.patches is None else self.patches.to_dict(),
        }


def with_offline_plan(model: Model, offsets: Sequence[int]) -> Model:
    """``model`` (in memory) carrying ``offsets`` as its OfflineMemoryAllocation entry."""
    payload = encode_offline_plan(offsets, len(model.subgraphs))
    base = without_offline_plan(model)
    buffers = tuple(base.buffers) + (memoryview(payload),)
    return dataclasses.replace(base, buffers=buffers,
                               metadata=base.metadata + ((OFFLINE_PLAN_NAME,
                                                          len(buffers) - 1),))


@dataclass(frozen=True)
class _Problem:
    """One planner buffer per alias group and per scratch buffer."""

    buffers: tuple[Buffer, ...]
    tensor_unit: dict[tuple[int, int], int]  # (subgraph, tensor) -> index into buffers


def _problem(layout: ArenaLayout, groups: AliasGroups) -> _Problem:
    units: dict[tuple[str, int, int], list[int]] = {}  # key -> [size, first, last]
    tensor_unit_key: dict[tuple[int, int], tuple[str, int, int]] = {}
    order: list[tuple[str, int, int]] = []
    for b in layout.buffers:
        if b.kind == "tensor":
            root = groups.root[b.index] if b.subgraph == 0 else b.index
            key = ("tensor", b.subgraph, root)
            tensor_unit_key[(b.subgraph, b.index)] = key
        else:
            key = ("scratch", b.subgraph, b.index)
        if key not in units:
            units[key] = [b.size, b.first, b.last]
            order.append(key)
        else:
            u = units[key]
            u[0], u[1], u[2] = max(u[0], b.size), min(u[1], b.first), max(u[2], b.last)
    index = {key: i for i, key in enumerate(order)}
    buffers = tuple(Buffer(*units[key]) for key in order)
    return _Problem(buffers, {t: index[k] for t, k in tensor_unit_key.items()})


def _links(problem: _Problem, partial: Sequence[PartialOverlap]) -> tuple[Link, ...]:
    return tuple(Link(problem.tensor_unit[(0, p.input)], problem.tensor_unit[(0, p.output)],
                      p.max_delta)
                 for p in partial
                 if (0, p.input) in problem.tensor_unit and (0, p.output) in problem.tensor_unit)


def _tensor_offsets(model: Model, problem: _Problem, plan: Plan) -> list[int]:
    """One offset per tensor of every subgraph (concatenated), -1 for the unplanned."""
    offsets: list[int] = []
    for sg in model.subgraphs:
        for t in sg.tensors:
            unit = problem.tensor_unit.get((sg.index, t.index))
            offsets.append(ONLINE if unit is None else plan.offsets[unit])
    # TFLM's AllocateVariables looks a variable of subgraph >= 1 up by its subgraph-local
    # index (facts 3): an offset there would take its tail buffer away. Leave those entries
    # online; TFLM then plans that tensor around the pinned ones.
    for sg in model.subgraphs[1:]:
        for t in sg.tensors:
            if t.is_variable and t.index < len(offsets):
                offsets[t.index] = ONLINE
    return offsets


def verify_layout(layout: ArenaLayout, groups: AliasGroups,
                  partial: Sequence[PartialOverlap] = ()) -> None:
    """The plan TFLM will use is safe: buffers live together share bytes only inside one
    alias group of subgraph 0, or between a rule-(c) input group and output group when the
    output starts at most the op's aligned margin above the input."""
    bufs = layout.buffers
    plan = Plan(tuple(b.offset for b in bufs), tuple(Buffer(b.size, b.first, b.last)
                                                      for b in bufs))
    limits = {(groups.root[p.input], groups.root[p.output]): p.max_delta for p in partial}

    def allowed(i: int, j: int) -> bool:
        a, b = bufs[i], bufs[j]
        if not (a.kind == b.kind == "tensor" and a.subgraph == b.subgraph == 0):
            return False
        if groups.same(a.index, b.index):
            return True
        for x, y in ((a, b), (b, a)):
            limit = limits.get((groups.root[x.index], groups.root[y.index]))
            if limit is not None and y.offset - x.offset <= limit:
                return True
        return False

    verify_plan(plan, allowed_overlaps=allowed)


def resolve_kernel_set(target: str | TargetProfile | None, kernel_set: str | None
                       ) -> tuple[TargetProfile, str]:
    """(the profile to size with, the ``safety.RULE_SETS`` key to plan for).

    Nothing named: host-x64's numbers and the portable rules. A target: its kernel set on its
    ISA (``--target cortex-m4``: CMSIS-NN's DSP kernels; host-x64: reference). A kernel set
    alone (``reference``, ``cmsis-nn``, ``cmsis-nn:dsp``): its rules, host-x64's numbers."""
    if target is None:
        key = PORTABLE if kernel_set is None else kernel_set_key(kernel_set)
        return get_target(SIZING_TARGET), key
    profile = get_target(target)
    if kernel_set is not None:
        profile = profile.with_kernel_set(kernel_set.split(":")[0])
    return profile, target_key(profile)


def partial_label(p: PartialOverlap) -> str:
    """The savings_by_rule name of a rule-(c) overlap: ``partial:<kernel path key>``."""
    return f"partial:{p.rule or p.op_name}"


def alias_label(model: Model, op_index: int, rule: str, key: str) -> str:
    """The savings_by_rule name of a view or in-place merge: ``view:RESHAPE``,
    ``in-place:ADD:INT8`` (the most specific key the kernel set lists)."""
    op = model.subgraphs[0].operators[op_index]
    if rule == "view":
        return f"view:{op.name}"
    return f"in-place:{matched_key(rule_set(key).inplace_ops, op_keys(model, op)) or op.name}"


def kernel_path(key: str, rule: str, scheme: str | None) -> str:
    """What a rule-(c) overlap rests on, in words: the kernel set, the code path and how its
    margin was derived (``report`` and ``optimize --json`` show it)."""
    how = (f"block rule ({scheme}): outputs written inside a block while it is read"
           if scheme else "margin of the reference order (blocks written after their reads)")
    source = rule_set(key).sources.get(rule)
    return f"{key} {rule}: {how}" + (f"; {source}" if source else "")


def _withdrawn(model: Model, graph: Any, key: str, groups: AliasGroups,
               partial: Sequence[PartialOverlap], label: str
               ) -> tuple[AliasGroups, tuple[PartialOverlap, ...]]:
    """The alias groups and links of the plan with the one rule ``label`` withdrawn."""
    if label.startswith("partial:"):
        return groups, tuple(p for p in partial if partial_label(p) != label)
    views = view_groups(model, graph)
    if label.startswith("view:"):
        name = label.split(":", 1)[1]
        kept = [r for r in views.reasons if r[1] != name]
        uf = list(range(len(views.root)))
        for _, _, _, x, y in kept:  # re-merge the other views
            rx, ry = uf[x], uf[y]
            uf = [rx if r == ry else r for r in uf]
        base = AliasGroups(tuple(uf), tuple(kept))
        ops = rule_set(key).inplace_ops
    else:
        base = views
        name = label.split(":")[1]  # in-place:<OP>[:TYPE]: withdraw the op's in-place keys
        ops = frozenset(k for k in rule_set(key).inplace_ops if k.split(":")[0] != name)
    return inplace_groups(model, graph, base, ops), tuple(partial)


def _savings_by_rule(model: Model, layout: ArenaLayout, key: str, groups: AliasGroups,
                     partial: Sequence[PartialOverlap], used: Sequence[PartialOverlap],
                     head: int, seed: int, budget_s: float,
                     clock: Callable[[], float] | None = None) -> tuple[tuple[str, int], ...]:
    """Marginal head saving of each rule the plan uses (``OptimizeResult.savings_by_rule``);
    ``clock`` as ``optimize_model``'s."""
    labels = sorted({alias_label(model, op, rule, key) for op, _, rule, _, _ in groups.reasons}
                    | {partial_label(p) for p in used})
    if not labels:
        return ()
    graph = op_graph(model, layout)
    out = []
    per = budget_s / len(labels)
    for label in labels:
        g, links_without = _withdrawn(model, graph, key, groups, partial, label)
        problem = _problem(layout, g)
        res = search_plan(problem.buffers, seed=seed, links=_links(problem, links_without),
                          time_budget_s=per, clock=clock or time.perf_counter,
                          cp_sat=clock is None)
        out.append((label, max(res.head - head, 0)))
    return tuple(out)


def _refused_partial(model: Model, key: str) -> list[str]:
    """Notes naming the window/PAD ops rule (c) would have applied to but the kernel set's loop
    order is not proven for."""
    allowed = rule_set(key).partial_ops
    sg = model.subgraphs[0] if model.subgraphs else None
    names = sorted({op.name for op in sg.operators
                    if op.name in PARTIAL_OPS and not allows(allowed, op_keys(model, op))}
                   ) if sg is not None else []
    rs = rule_set(key)
    forbidden: dict[str, str] = {}
    if sg is not None:
        for op in sg.operators:
            if op.name in PARTIAL_OPS:
                why_not = forbidden_why(rs, op_keys(model, op))
                if why_not is not None:
                    forbidden.setdefault(matched_key(frozenset(rs.forbidden),
                                                     op_keys(model, op)), why_not)
    notes = [f"no overlap for {k} on kernel set {key}: {w}" for k, w in sorted(forbidden.items())]
    if key == ESP_NN:
        notes.append("no overlap for esp-nn: no rule is proven for ESP-NN's kernels (their "
                     "per-chip code, the S3/P4 assembly included, is not read yet); the plan "
                     "uses views, lifetimes and reordering only")
    if not names:
        return notes
    why = ("no kernels were named, so the plan must be safe for every kernel set (name them "
           "with --target or --kernel-set; TFLM's reference kernels allow it)" if key == PORTABLE
           else f"the loop order of kernel set {key} is not proven to tolerate it there")
    return notes + [f"partial overlap of {', '.join(names)} outputs with their inputs not used: "
                    f"{why}"]


def _stale_plan(model: Model, key: str) -> str | None:
    """Why the model's own plan must not be handed back: it was written by tinyarena optimize
    for kernel sets that do not include ``key`` (None: no such record)."""
    record = plan_safety(model)
    if record is None or PORTABLE in record.safe_for or key in record.safe_for:
        return None
    return (f"the model's plan was proven safe only for kernel set(s) "
            f"{', '.join(record.safe_for)}, not {key}: it is replaced by a plan safe for {key} "
            f"(even where that plan is larger)")


def optimize_model(source: bytes | bytearray | memoryview | str | Path | Model, *,
                   reorder: bool = True, overlap: str = DEFAULT_OVERLAP,
                   time_budget_s: float = 1.0, target: str | TargetProfile | None = None,
                   kernel_set: str | None = None, seed: int = 0,
                   progress: Callable[[str], None] | None = None,
                   clock: Callable[[], float] | None = None) -> OptimizeResult:
    """The model with a smaller arena plan for TFLM, and the numbers before and after.

    ``overlap``: "none" (lifetimes only), "views" (rule (a) of ``overlap``), "safe" (views plus
    every rule the kernel set's loop order is proven to tolerate: ``safety.RULE_SETS``).
    ``target``/``kernel_set`` name the firmware's kernels (``resolve_kernel_set``); with
    neither, "safe" plans only what every kernel set tolerates (views, lifetimes, reordering).
    The written model records the kernel sets its plan is safe for (``result.safe_for``).
    ``progress`` receives a line each time the placement search improves (for long budgets).
    ``clock`` measures ``time_budget_s`` (default: wall-clock time); a
    ``planning.clock.WorkClock`` counts work instead, so the written model is the same on any
    machine and under any load (OR-Tools, whose limit is wall-clock, is then left out).
    """
    start = time.perf_counter()
    timer = clock or time.perf_counter
    budget_start = timer()
    profile, key = resolve_kernel_set(target, kernel_set)
    target_name = None if target is None else profile.name
    check_mode(overlap, key)
    kernel_set = key
    target = profile
    if not math.isfinite(time_budget_s) or time_budget_s < 0:
        raise PlanError(f"time budget must be a finite number of seconds >= 0, got "
                        f"{time_budget_s!r}")
    model = read_model(source)
    data = bytes(model.raw)
    before_layout = allocate_model(model, target=target)
    before = ArenaNumbers.of(before_layout)
    if ethos_u.has_ethos_u(model):
        return _vela_unchanged(data, model, before_layout, overlap, kernel_set, target_name,
                               time.perf_counter() - start)
    notes: list[str] = []
    work = without_offline_plan(model)
    if len(work.metadata) != len(model.metadata):
        notes.append("the model's own OfflineMemoryAllocation plan was replaced")
    emulated = timer()
    layout = allocate_model(work, target=target)
    # What follows the search (two more emulations and the rewrite) must fit in the budget too.
    reserve = 2.5 * (timer() - emulated)
    editable = supports_graph_edits(work)
    if not editable and (reorder or overlap != "none"):
        notes.append("subgraph 0 runs other subgraphs (IF/WHILE/CALL_ONCE): no reordering and "
                     "no overlap, lifetimes only")
    n_ops = len(work.subgraphs[0].operators) if work.subgraphs else 0
    order: tuple[int, ...] = tuple(range(n_ops))
    order_result: OrderResult | None = None
    mode = overlap if editable else "none"
    if reorder and editable:
        graph = op_graph(work, layout)
        views = alias_groups(work, graph, "views", kernel_set) if mode != "none" \
            else no_aliases(len(graph.sizes))
        order_result = best_order(graph, views, time_budget_s=0.4 * time_budget_s,
                                  clock=timer)
        if order_result.changed:
            order = order_result.order
            work = reordered_model(work, order)
            layout = allocate_model(work, target=target)
    groups = (alias_groups(work, op_graph(work, layout), mode, kernel_set) if editable
              else no_aliases(len(work.subgraphs[0].tensors) if work.subgraphs else 0))
    partial = (kernel_partial_overlaps(work, op_graph(work, layout), groups, kernel_set)
               if editable and mode == "safe" else ())
    if editable and mode == "safe":
        notes.extend(_refused_partial(work, kernel_set))
    problem = _problem(layout, groups)
    links = _links(problem, partial)
    search: SearchResult = search_plan(problem.buffers, seed=seed, links=links,
                                       deadline=budget_start + max(time_budget_s - reserve, 0.0),
                                       progress=progress, clock=timer, cp_sat=clock is None)
    notes.extend(search.notes)
    bound = linked_lower_bound(problem.buffers, links)
    if search.optimal and search.head > bound:
        bound = search.head  # the exact solver proved nothing smaller exists
    offsets = _tensor_offsets(work, problem, search.plan)
    candidate = with_offline_plan(work, offsets)
    after_layout = allocate_model(candidate, target=target)
    verify_layout(after_layout, groups, partial)
    if after_layout.head > search.head:
        notes.append(f"TFLM places the scratch buffers online around the pinned tensors: head "
                     f"{after_layout.head}, the search had {search.head}")
    better = (after_layout.head, after_layout.total) < (before.head, before.total)
    better = better and after_layout.min_arena <= before.min_arena
    stale = _stale_plan(model, kernel_set)
    if stale is not None:
        notes.append(stale)

    def unchanged(why: str) -> OptimizeResult:
        notes.append(why)
        return OptimizeResult(data, before, before, bound, before.head <= bound, False,
                              tuple(range(n_ops)),
                              None if order_result is None else order_result.exact,
                              overlap, kernel_set, (), search.method, search.head,
                              search.greedy_head, time.perf_counter() - start, tuple(notes),
                              before_layout, target=target_name)

    if not better and stale is None:
        return unchanged("no smaller plan than TFLM's own was found: the model is returned "
                         "unchanged")
    ops = work.subgraphs[0].operators
    offs = after_layout.tensor_offsets
    used_partial = _used(partial, after_layout)
    used = safe_for([(rule, op_keys(work, ops[i])) for i, _, rule, _, _ in groups.reasons]
                    + [("partial", op_keys(work, ops[p.op])) for p in used_partial],
                    [(work, ops[p.op], offs[(0, p.output)] - offs[(0, p.input)])
                     for p in used_partial])
    safety = PlanSafety(used, kernel_set, target_name,
                        tuple(sorted({r for _, _, r, _, _ in groups.reasons}
                                     | ({"partial"} if partial else set()))))
    out = _write(data, order, offsets, safety)
    if target_name is None:  # sized on the host: keep only what no build it is meant for pays
        costly = costlier_somewhere(model, out, used)
        if costly and stale is None:
            return _reordered_only(data, order, model, before, bound, order_result, overlap,
                                   kernel_set, search, start, notes, costly, unchanged)
        if costly:
            notes.append(f"{_costly_text(costly)}; it is kept because the model's own plan "
                         f"was not proven for {kernel_set}")
    confirm = allocate_model(read_model(out), target=target)
    savings = _savings_by_rule(work, layout, kernel_set, groups, partial, used_partial,
                               search.head, seed, 0.3 * time_budget_s, clock)
    if (confirm.head, confirm.tail) != (after_layout.head, after_layout.tail):
        raise PlanError(f"internal error: the rewritten model predicts head {confirm.head}, "
                        f"tail {confirm.tail}, the plan had {after_layout.head}, "
                        f"{after_layout.tail}")
    return OptimizeResult(out, before, ArenaNumbers.of(confirm), bound,
                          confirm.head <= bound, True, order,
                          None if order_result is None else order_result.exact, overlap,
                          kernel_set,
                          groups.reasons, search.method, search.head, search.greedy_head,
                          time.perf_counter() - start, tuple(notes), confirm,
                          partial=_used(partial, confirm), target=target_name,
                          safe_for=used, savings_by_rule=savings)


def meant_for(safe: Sequence[str]) -> tuple[TargetProfile, ...]:
    """Every build a plan proven for the kernel-set keys ``safe`` may run on: each target with
    each kernel set it can link, keeping one per distinct arena accounting (the float ABI, for
    one, changes no size). A portable plan is meant for all of them."""
    from tinyarena.arena.targets import KERNEL_SETS, PROFILES

    found: dict[tuple[Any, ...], TargetProfile] = {}
    for base in PROFILES.values():
        for kernels in (None, *KERNEL_SETS):  # None: the target's own kernels
            try:
                profile = base.with_kernel_set(kernels)
                if PORTABLE not in safe and target_key(profile) not in safe:
                    continue
            except TinyArenaError:  # no such build (CMSIS-NN off Cortex-M), or unknown kernels
                continue
            cmsis = profile.kernel_set == "cmsis-nn"  # the ISA only matters to CMSIS-NN
            sizing = (tuple(sorted(profile.structs.items())), profile.pointer_size,
                      profile.compression, profile.default_allocator, profile.kernel_set,
                      profile.cmsis_nn_isa if cmsis else None,
                      profile.kernels_optimized_for_speed if cmsis else None,
                      profile.tflm_commit)
            found.setdefault(sizing, profile)
    return tuple(found.values())


def costlier_somewhere(original: Model, optimized: bytes, safe: Sequence[str]
                       ) -> tuple[tuple[str, int, int], ...]:
    """(target, original min_arena, optimized min_arena) for every build the plan is meant for
    (``meant_for``) where the optimized model needs more arena than the original. Offsets
    searched on one build are pinned on all: TFLM fits each build's own scratch buffers
    around them, which can cost more than the plan saved (issue 19: v2_okay_nabu on a
    Cortex-M4 19,392 -> 20,624 bytes with a host-x64 plan)."""
    new = read_model(optimized)
    worse = []
    for profile in meant_for(safe):
        try:
            was = allocate_model(original, target=profile).min_arena
        except TinyArenaError:  # the original does not run there: nothing to compare with
            continue
        now = allocate_model(new, target=profile).min_arena
        if now > was:
            worse.append((f"{profile.name} ({profile.kernel_set})", was, now))
    return tuple(worse)


def _costly_text(costly: Sequence[tuple[str, int, int]]) -> str:
    where = ", ".join(f"{name} {was:,} -> {now:,}" for name, was, now in costly)
    return (f"the plan searched on {SIZING_TARGET} needs more arena on builds it is meant for "
            f"(min_arena {where})")


def _reordered_only(data: bytes, order: Sequence[int], model: Model, before: ArenaNumbers,
                    bound: int, order_result: OrderResult | None, overlap: str,
                    kernel_set: str, search: SearchResult, start: float, notes: list[str],
                    costly: Sequence[tuple[str, int, int]],
                    unchanged: Any) -> OptimizeResult:
    """No target named and the pinned plan costs on some build: keep the new operator order
    alone (TFLM then plans each build itself) if it needs no more arena anywhere and less
    here; else the original model. Either way the notes name the builds and a --target."""
    fix = "pass --target for the device to get a plan searched with its own numbers"
    notes.append(f"{_costly_text(costly)}: the pinned plan is dropped; {fix}")
    if list(order) == list(range(len(order))) or offline_offsets(model) is not None:
        return unchanged("the model is returned unchanged")
    from tinyarena.rewrite.rewriter import rewrite_model

    out = rewrite_model(data, operator_order={0: list(order)})
    layout = allocate_model(read_model(out), target=SIZING_TARGET)
    if (layout.min_arena >= before.min_arena
            or costlier_somewhere(model, out, (PORTABLE,))):
        return unchanged("reordering alone does not help on every build either: the model is "
                         "returned unchanged")
    notes.append("kept: the new operator order alone, which needs no more arena on any build")
    return OptimizeResult(out, before, ArenaNumbers.of(layout), bound, layout.head <= bound,
                          True, tuple(order),
                          None if order_result is None else order_result.exact, overlap,
                          kernel_set, (), search.method, search.head, search.greedy_head,
                          time.perf_counter() - start, tuple(notes), layout)


def _vela_unchanged(data: bytes, model: Model, layout: ArenaLayout, overlap: str,
                    kernel_set: str, target: str | None, elapsed: float) -> OptimizeResult:
    """A Vela model is returned unchanged, saying why: Vela's offline plan pins its scratch
    with the NPU's inputs and outputs inside it, and its command stream addresses them at
    those offsets from the scratch's base address, so no other plan may move them; the rest
    are the ethos-u kernel's scratch buffers, which TFLM always plans online."""
    from tinyarena.optimize.rules import plan_rules

    numbers = ArenaNumbers.of(layout)
    pinned = sum(1 for b in layout.buffers if b.offline)
    movable = [b for b in layout.buffers if not b.offline and b.kind == "tensor"]
    note = (f"Vela model (ethos-u operator): Vela's offline plan pins {pinned} buffers (its "
            f"scratch, with the NPU's inputs and outputs at offsets its command stream "
            f"addresses), which no plan may move; TFLM plans the ethos-u kernel's scratch "
            f"buffers online")
    if movable:
        note += (f"; the {len(movable)} tensors of the CPU operators around the NPU part are "
                 f"not re-planned around Vela's pinned ones (not supported yet)")
    note += ": the model is returned unchanged"
    bound = plan_rules(model, layout, kernel_set).bound
    n_ops = len(model.subgraphs[0].operators) if model.subgraphs else 0
    return OptimizeResult(data, numbers, numbers, bound, numbers.head <= bound, False,
                          tuple(range(n_ops)), None, overlap, kernel_set, (), "none",
                          numbers.head, numbers.head, elapsed, (note,), layout, target=target)


def _used(partial: Sequence[PartialOverlap], layout: ArenaLayout
          ) -> tuple[PartialOverlap, ...]:
    """The rule-(c) links whose two tensors really share bytes in the final plan."""
    sizes = {(b.subgraph, b.index): b.size for b in layout.buffers if b.kind == "tensor"}
    offs = layout.tensor_offsets
    used = []
    for p in partial:
        x, y = (0, p.input), (0, p.output)
        if x in offs and y in offs and x in sizes and y in sizes:
            if offs[y] < offs[x] + sizes[x] and offs[x] < offs[y] + sizes[y]:
                used.append(p)
    return tuple(used)


def _write(data: bytes, order: Sequence[int], offsets: Sequence[int],
           safety: PlanSafety) -> bytes:
    from tinyarena.model import read_model as _read
    from tinyarena.rewrite.rewriter import rewrite_model

    n_subgraphs = len(_read(data).subgraphs)
    edits: dict[str, Any] = {"metadata": {OFFLINE_PLAN_NAME:
                                          encode_offline_plan(offsets, n_subgraphs),
                                          PLAN_SAFETY_NAME: encode_plan_safety(safety)}}
    if list(order) != list(range(len(order))):
        edits["operator_order"] = {0: list(order)}
    return rewrite_model(data, **edits)


def optimal_layout(source: bytes | bytearray | memoryview | str | Path | Model, *,
                   target: str | TargetProfile = "host-x64", time_budget_s: float = 1.0
                   ) -> ArenaLayout:
    """The arena TFLM would have with the best plan found for this model as it is (same
    order, no overlap): ``tinyarena plan --planner optimal``. Never worse than greedy."""
    model = source if isinstance(source, Model) else read_model(source)
    greedy = allocate_model(model, target=target)
    work = without_offline_plan(model)
    layout = allocate_model(work, target=target)
    problem = _problem(layout, no_aliases(len(work.subgraphs[0].tensors)
                                          if work.subgraphs else 0))
    search = search_plan(problem.buffers, time_budget_s=time_budget_s)
    candidate = with_offline_plan(work, _tensor_offsets(work, problem, search.plan))
    best = allocate_model(candidate, target=target)
    return best if (best.head, best.total) < (greedy.head, greedy.total) else greedy


__all__ = ["ArenaNumbers", "DEFAULT_KERNEL_SET", "DEFAULT_OVERLAP", "OptimizeResult",
           "alias_label", "kernel_path", "optimal_layout", "optimize_model", "partial_label",
           "resolve_kernel_set", "verify_layout",
           "with_offline_plan",
           "without_offline_plan"]
