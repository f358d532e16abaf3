"""What pre-allocating tensors would save: the "Pre-allocated tensors" RFC's analysis, exact.

TFLM's RFC 001 declined ``RegisterPreallocatedTensor`` because the arena saving "depends on the
other tensors": it read person_detect's ``PrintMemoryPlan`` by hand to find the peak
combination. Here the saving of every candidate is computed, not estimated: the head is
re-planned by TFLM's greedy planner without the candidate's buffer (the planner sees exactly
the records it would see when the tensor's data is already set), and a variable's tail is
replayed without its allocation. ``allocate_model(..., preallocated=...)`` gives the same
arena, which the tests check against the interpreter's measured head and tail.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from math import comb
from typing import Any, Iterable, Sequence

from tinyarena._util import align_down
from tinyarena.arena.allocator import Resolver, allocate_model
from tinyarena.arena.layout import ArenaLayout, PlannedBuffer
from tinyarena.arena.lifetimes import tensor_nbytes
from tinyarena.arena.targets import TargetProfile
from tinyarena.errors import PlanError
from tinyarena.model.metadata import offline_offsets
from tinyarena.model.types import Model
from tinyarena.planning import Buffer, plan_greedy

EXHAUSTIVE_LIMIT = 5000  # largest number of sets tried one by one for --max-external


@dataclass(frozen=True)
class Candidate:
    """One tensor the application could keep in its own buffer, and what that would save."""

    tensor: int  # subgraph-0 tensor index
    name: str
    nbytes: int
    roles: tuple[str, ...]  # "input", "output", "variable", "peak"
    saving_bytes: int  # arena_used_bytes saved (head + tail)
    head_saving: int
    tail_saving: int
    memcpy_bytes: int  # bytes copied per inference that a direct sensor/consumer buffer avoids

    def to_dict(self) -> dict[str, Any]:
        return {"tensor": self.tensor, "name": self.name, "nbytes": self.nbytes,
                "roles": list(self.roles), "saving_bytes": self.saving_bytes,
                "head_saving": self.head_saving, "tail_saving": self.tail_saving,
                "memcpy_bytes": self.memcpy_bytes}


@dataclass(frozen=True)
class ExternalSet:
    """Several tensors pre-allocated together and their combined saving."""

    tensors: tuple[int, ...]
    saving_bytes: int
    memcpy_bytes: int
    exact: bool  # True: every set of this size was tried; False: chosen greedily

    def to_dict(self) -> dict[str, Any]:
        return {"tensors": list(self.tensors), "saving_bytes": self.saving_bytes,
                "memcpy_bytes": self.memcpy_bytes, "exact": self.exact}


@dataclass(frozen=True)
class WhatIf:
    """The analysis for one model and target (greedy planner, the target's allocator)."""

    target: str
    head: int
    tail: int
    total: int
    peak_steps: tuple[int, ...]  # time steps at which the plan reaches the head size
    peak_tensors: tuple[int, ...]  # the peak combination (largest live bytes among those)
    candidates: tuple[Candidate, ...]  # ranked: largest saving first
    best_pair: ExternalSet | None
    best_set: ExternalSet | None
    max_external: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target, "head": self.head, "tail": self.tail, "total": self.total,
            "peak_steps": list(self.peak_steps), "peak_tensors": list(self.peak_tensors),
            "candidates": [c.to_dict() for c in self.candidates],
            "best_pair": None if self.best_pair is None else self.best_pair.to_dict(),
            "max_external": self.max_external,
            "best_set": None if self.best_set is None else self.best_set.to_dict(),
        }


def analyse_preallocation(model: Model, *, target: str | TargetProfile = "host-x64",
                          resolver: Resolver | None = None, max_external: int = 2,
                          layout: ArenaLayout | None = None) -> WhatIf:
    """Every candidate's exact saving, a ranking, the best pair and the best set of
    ``max_external`` tensors. ``layout`` may pass an ``allocate_model`` result already made
    (greedy planner, no pre-allocated tensors) to avoid a second emulation."""
    if isinstance(max_external, bool) or not isinstance(max_external, int) or max_external < 1:
        raise PlanError(f"max_external must be a positive number of buffers, got "
                        f"{max_external!r}")
    base = layout if layout is not None else allocate_model(model, target=target,
                                                            resolver=resolver)
    if base.planner != "greedy":
        raise PlanError("the what-if analysis replans with TFLM's greedy planner; give a "
                        "layout made with planner='greedy'")
    steps, peak = _peak(base)
    roles = _roles(model, _live_at(base, steps))
    ranked = sorted(
        (_candidate(model, base, t, r) for t, r in roles.items()),
        key=lambda c: (-c.saving_bytes, -c.memcpy_bytes, c.tensor))
    indices = [c.tensor for c in ranked]
    memcpy = {c.tensor: c.memcpy_bytes for c in ranked}
    pair = _best_set(base, indices, 2, memcpy) if len(indices) >= 2 else None
    best = _best_set(base, indices, min(max_external, len(indices)), memcpy) if indices else None
    return WhatIf(target=base.target, head=base.head, tail=base.tail, total=base.total,
                  peak_steps=steps, peak_tensors=peak, candidates=tuple(ranked),
                  best_pair=pair, best_set=best, max_external=max_external)


def saving_without(layout: ArenaLayout, tensors: Iterable[int]) -> tuple[int, int]:
    """(head saving, tail saving) when these subgraph-0 tensors are pre-allocated."""
    removed = {(0, t) for t in tensors}
    return _head_without(layout, removed), _tail_without(layout, removed)


# -- the pieces --------------------------------------------------------------------------------


def _peak(layout: ArenaLayout) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(steps where the planned buffers reach the head size, subgraph-0 tensors forming the
    peak combination: live at the one of those steps whose live bytes are largest, the
    RFC's "largest combination of simultaneously used tensors")."""
    buffers = layout.buffers
    if not buffers:
        return (), ()
    last = max(b.last for b in buffers)
    extent = [0] * (last + 1)
    live_bytes = [0] * (last + 1)
    for b in buffers:
        for s in range(max(b.first, 0), b.last + 1):
            extent[s] = max(extent[s], b.offset + b.size)
            live_bytes[s] += b.size
    top = max(extent)
    steps = tuple(s for s, e in enumerate(extent) if e == top and top > 0)
    if not steps:
        return (), ()
    most = max(live_bytes[s] for s in steps)
    combination = [s for s in steps if live_bytes[s] == most]
    live = sorted({b.index for b in buffers if b.kind == "tensor" and b.subgraph == 0
                   and any(b.first <= s <= b.last for s in combination)})
    return steps, tuple(live)


def _live_at(layout: ArenaLayout, steps: Sequence[int]) -> tuple[int, ...]:
    return tuple(sorted({b.index for b in layout.buffers
                         if b.kind == "tensor" and b.subgraph == 0
                         and any(b.first <= s <= b.last for s in steps)}))


def _roles(model: Model, peak: Sequence[int]) -> dict[int, tuple[str, ...]]:
    """Candidates: graph inputs and outputs, variables, tensors live at a step that reaches
    the head size, minus what
    cannot be pre-allocated (constants, offline-planned tensors)."""
    sg = model.subgraphs[0]
    offsets = offline_offsets(model)
    found: dict[int, list[str]] = {}
    for role, indices in (("input", sg.inputs), ("output", sg.outputs),
                          ("variable", [t.index for t in sg.tensors if t.is_variable]),
                          ("peak", peak)):
        for t in indices:
            tensor = sg.tensors[t]
            if tensor.is_constant or (offsets is not None and offsets[t] != -1):
                continue
            found.setdefault(t, [])
            if role not in found[t]:
                found[t].append(role)
    return {t: tuple(r) for t, r in found.items()}


def _candidate(model: Model, layout: ArenaLayout, tensor: int,
               roles: tuple[str, ...]) -> Candidate:
    head, tail = saving_without(layout, [tensor])
    nbytes = tensor_nbytes(model, 0, tensor)
    copies = sum(1 for r in roles if r in ("input", "output"))
    return Candidate(tensor=tensor, name=model.subgraphs[0].tensors[tensor].name, nbytes=nbytes,
                     roles=roles, saving_bytes=head + tail, head_saving=head, tail_saving=tail,
                     memcpy_bytes=copies * nbytes)


def _head_without(layout: ArenaLayout, removed: set[tuple[int, int]]) -> int:
    """Re-plan the head with TFLM's greedy planner, the removed tensors' records skipped."""
    kept = [_buffer(b) for b in layout.buffers
            if not (b.kind == "tensor" and (b.subgraph, b.index) in removed)]
    if len(kept) == len(layout.buffers):
        return 0
    return layout.head - plan_greedy(kept).head_size


def _buffer(b: PlannedBuffer) -> Buffer:
    return Buffer(b.size, b.first, b.last, b.offset if b.offline else None)


def _tail_without(layout: ArenaLayout, removed: set[tuple[int, int]]) -> int:
    """Replay the tail's allocations (sizes and alignments, in order) without the removed
    variables: later allocations' padding depends on where the tail stands."""
    addresses = {off for key, off in layout.tensor_offsets.items()
                 if key in removed and key not in {(b.subgraph, b.index) for b in layout.buffers
                                                   if b.kind == "tensor"}}
    if not addresses:
        return 0
    tail = layout.arena_size
    for a in layout.tail_allocations:
        if a.address in addresses and a.label.startswith("variable tensor"):
            continue
        tail = align_down(tail - a.requested, a.alignment)
    return layout.tail - (layout.arena_size - tail)


def _best_set(layout: ArenaLayout, indices: Sequence[int], size: int,
              memcpy: dict[int, int]) -> ExternalSet:
    """The set of ``size`` candidates saving most (ties: more memcpy saved, lower indices);
    exhaustive while the number of sets is small, greedy (best addition each time) beyond."""
    def score(group: Sequence[int]) -> tuple[int, int]:
        head, tail = saving_without(layout, group)
        return head + tail, sum(memcpy[t] for t in group)

    if comb(len(indices), size) <= EXHAUSTIVE_LIMIT:
        best: tuple[int, ...] = ()
        best_score = (-1, -1)
        for group in combinations(sorted(indices), size):
            s = score(group)
            if s > best_score:
                best, best_score = group, s
        return ExternalSet(best, best_score[0], best_score[1], exact=True)
    chosen: list[int] = []
    for _ in range(size):
        rest = [t for t in sorted(indices) if t not in chosen]
        pick = max(rest, key=lambda t: (score(chosen + [t]), -t))
        chosen.append(pick)
    s = score(chosen)
    return ExternalSet(tuple(sorted(chosen)), s[0], s[1], exact=False)


__all__ = ["Candidate", "ExternalSet", "WhatIf", "analyse_preallocation", "saving_without"]
