"""Which overlap rules a finished plan relies on, and the lower bound that holds for them.

A plan from TFLM's greedy planner never lets two live buffers share a byte, so the plain
live-bytes bound (``planning.lower_bound``) is the one to compare it with. A plan pinned
offline (``tinyarena optimize``) may share bytes on purpose: a view on its input, an
element-wise op in place, a conv output starting inside its dying input. Against such a plan
the plain bound says nothing; the bound that holds is the one for the same rules
(``placement.linked_lower_bound`` over the optimizer's alias groups and links). Pairs that no
rule permits are collisions: the plan is wrong for TFLM's kernels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tinyarena.planning import Buffer, Plan, lower_bound, verify_plan

if TYPE_CHECKING:
    from tinyarena.arena import ArenaLayout
    from tinyarena.model.types import Model

RULE_TEXT = {
    "none": "no two live buffers share a byte",
    "views": "live buffers share bytes only as views (RESHAPE/SQUEEZE/EXPAND_DIMS on their input)",
    "safe": "live buffers share bytes only under the optimizer's safe rules for the plan's "
            "kernel set (views, element-wise ops in place, conv/depthwise/pooling/PAD outputs "
            "partly over their dying input, each where that kernel set's loop order allows it)",
    "vela": "live buffers share bytes only as Vela placed them (the Ethos-U scratch holds the "
            "NPU's inputs and outputs; scratch and fast scratch start together)",
}


@dataclass(frozen=True)
class SharedBytes:
    """Two buffers (indices into ``layout.buffers``) live at one step that share bytes."""

    a: int
    b: int
    reason: str  # "view", "in place", "partial overlap", "vela" or "collision"
    rule: str = ""
    """For an intended pair: the rule and kernel path it relies on (``safety`` key, e.g.
    ``cmsis-nn:mve CONV_2D:INT8:1x1: block rule (mve4) ...``)."""

    @property
    def intended(self) -> bool:
        return self.reason != "collision"


@dataclass(frozen=True)
class PlanRules:
    """The overlap rules a plan uses and the lower bound under them.

    ``rules`` is "none", "views" or "safe" (the weakest set permitting every intended pair);
    ``bound`` holds for every plan of this operator order obeying those rules.
    ``no_overlap_bound`` is the plain live-bytes bound (``ArenaLayout.lower_bound``).
    """

    rules: str
    bound: int
    no_overlap_bound: int
    shared: tuple[SharedBytes, ...]

    @property
    def collisions(self) -> tuple[SharedBytes, ...]:
        return tuple(s for s in self.shared if not s.intended)

    @property
    def description(self) -> str:
        return RULE_TEXT[self.rules]


def shared_pairs(layout: ArenaLayout) -> list[tuple[int, int]]:
    """Every pair of buffers live at a common step that share a byte (the verifier's sweep,
    asked to permit and record each one)."""
    pairs: list[tuple[int, int]] = []

    def record(i: int, j: int) -> bool:
        pairs.append((i, j))
        return True

    bufs = layout.buffers
    verify_plan(Plan(tuple(b.offset for b in bufs),
                     tuple(Buffer(b.size, b.first, b.last) for b in bufs)), record)
    return sorted(set(pairs))


def plan_rules(model: Model, layout: ArenaLayout, kernel_set: str = "reference") -> PlanRules:
    """Classify the plan's shared bytes by the optimizer's rules and bound it accordingly."""
    plain = lower_bound([Buffer(b.size, b.first, b.last) for b in layout.buffers])
    pairs = shared_pairs(layout)
    if not pairs:
        return PlanRules("none", plain, plain, ())
    vela = _vela_rules(model, layout, pairs)
    if vela is not None:
        return vela
    # A plan with shared bytes (an offline plan): only now the optimizer's modules, which a
    # plain ``size`` or ``plan`` does not need to import.
    from tinyarena.arena import allocate_model
    from tinyarena.model.metadata import without_offline_plan
    from tinyarena.optimize.graph import op_graph, supports_graph_edits
    from tinyarena.arena.targets import get_target
    from tinyarena.optimize.overlap import alias_groups, kernel_partial_overlaps
    from tinyarena.optimize.pipeline import _links, _problem, alias_label, kernel_path
    from tinyarena.optimize.placement import linked_lower_bound
    from tinyarena.optimize.safety import PORTABLE, RULE_SETS, target_key

    work = without_offline_plan(model)
    if not supports_graph_edits(work):
        return PlanRules("none", plain, plain,
                         tuple(SharedBytes(a, b, "collision") for a, b in pairs))
    base = allocate_model(work, target=layout.target)
    graph = op_graph(work, base)
    key = kernel_set
    if kernel_set == "cmsis-nn":  # the target's ISA class picks CMSIS-NN's code paths
        key = target_key(get_target(layout.target, "cmsis-nn"))
    mode = "safe" if key in RULE_SETS and key != PORTABLE else "views"
    if key not in RULE_SETS:
        key = PORTABLE
    groups = alias_groups(work, graph, mode, key)
    partial = kernel_partial_overlaps(work, graph, groups, key) if mode == "safe" else ()
    group_rules: dict[int, set[str]] = {}
    group_labels: dict[int, set[str]] = {}
    for op, _, rule, kept, _merged in groups.reasons:
        group_rules.setdefault(groups.root[kept], set()).add(rule)
        group_labels.setdefault(groups.root[kept], set()).add(alias_label(work, op, rule, key))
    limits = {(groups.root[p.input], groups.root[p.output]): p.max_delta for p in partial}
    paths = {(groups.root[p.input], groups.root[p.output]):
             f"op {p.op} {p.op_name}: " + kernel_path(key, p.rule, p.scheme) for p in partial}
    bufs = layout.buffers
    shared = []
    for i, j in pairs:
        x, y = bufs[i], bufs[j]
        reason, rule = "collision", ""
        if x.kind == y.kind == "tensor" and x.subgraph == y.subgraph == 0:
            if groups.same(x.index, y.index):
                rules_here = group_rules.get(groups.root[x.index], set())
                reason = "view" if rules_here <= {"view"} else "in place"
                rule = f"{key}: " + ", ".join(sorted(group_labels.get(groups.root[x.index],
                                                                        set())))
            else:
                for u, v in ((x, y), (y, x)):
                    pair = (groups.root[u.index], groups.root[v.index])
                    limit = limits.get(pair)
                    if limit is not None and v.offset - u.offset <= limit:
                        reason, rule = "partial overlap", paths[pair]
        shared.append(SharedBytes(i, j, reason, rule))
    used = {s.reason for s in shared if s.intended}
    rules = "views" if used <= {"view"} else "safe"
    if rules == "views" and mode == "safe":
        groups = alias_groups(work, graph, "views", key)
        partial = ()
    problem = _problem(base, groups)
    bound = linked_lower_bound(problem.buffers, _links(problem, partial))
    return PlanRules(rules, bound, plain, tuple(shared))


def _vela_rules(model: Model, layout: ArenaLayout, pairs: list[tuple[int, int]]
                ) -> PlanRules | None:
    """A Vela model's plan: Vela pins its scratch (and fast scratch) and the NPU's inputs and
    outputs inside it, sharing bytes on purpose (the NPU reaches them through the scratch's
    base address). Those pairs are Vela's; the bound treats the pinned group as one buffer
    spanning it. None for a model without the ethos-u operator."""
    from tinyarena.kernels import ethos_u

    if not ethos_u.has_ethos_u(model):
        return None
    bufs = layout.buffers
    pinned = [i for i, b in enumerate(bufs) if b.offline and b.kind == "tensor"]
    shared = tuple(SharedBytes(i, j, "vela" if i in pinned and j in pinned else "collision")
                   for i, j in pairs)
    others = [Buffer(b.size, b.first, b.last) for i, b in enumerate(bufs) if i not in pinned]
    if pinned:
        group = [bufs[i] for i in pinned]
        span = max(b.offset + b.size for b in group) - min(b.offset for b in group)
        others.append(Buffer(span, min(b.first for b in group), max(b.last for b in group)))
    plain = lower_bound([Buffer(b.size, b.first, b.last) for b in bufs])
    return PlanRules("vela", lower_bound(others), plain, shared)


__all__ = ["PlanRules", "RULE_TEXT", "SharedBytes", "plan_rules", "shared_pairs"]
