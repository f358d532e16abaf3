"""TFLM's two other arena layouts: two arenas for one model, one arena for several models.

* ``allocate_split``: ``MicroAllocator::Create(persistent, p_size, non_persistent, np_size)``.
  A ``PersistentArenaBufferAllocator`` takes tail allocations from the top of one buffer (its
  end aligned down to 16); a ``NonPersistentArenaBufferAllocator`` holds the head, Prepare's
  temp allocations and the planner's working area in the other (its start aligned up to 16).
  Create puts both allocator objects, the GreedyMemoryPlanner and the MicroAllocator in the
  persistent buffer. Each side fails only against its own bounds, so each has its own
  minimum; the non-persistent minimum is the peak of Prepare's temp tensors and the planner's
  working area, which can be far above the head that remains after AllocateTensors.
* ``allocate_shared``: ``MicroAllocator::Create(arena, size)`` once, then one MicroInterpreter
  per model on that allocator, each AllocateTensors in turn: the allocator objects are paid
  once, each model's tail follows the previous one's, and the head is reserved at the largest
  plan so far (``max_head_buffer_usage_``). The order matters: a later model's Prepare runs
  with the earlier models' tails already taken.

Addresses: the split layout uses one virtual address space, the non-persistent buffer at
``[0, non_persistent_size)`` and the persistent one from ``persistent_base`` up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from tinyarena._util import align_down, align_up
from tinyarena.arena import allocator as _alloc
from tinyarena.arena.allocator import Resolver, check_preallocated
from tinyarena.arena.buffer_allocator import ARENA_ALIGNMENT, BufferAllocator
from tinyarena.arena.layout import ArenaLayout
from tinyarena.arena.targets import TargetProfile, get_target
from tinyarena.errors import ArenaTooSmallError, PlanError
from tinyarena.model.types import Model

_BIG = 1 << 40
SPLIT_OBJECTS = ("PersistentArenaBufferAllocator", "NonPersistentArenaBufferAllocator",
                 "GreedyMemoryPlanner", "MicroAllocator")
SHARED_OBJECTS = ("SingleArenaBufferAllocator", "GreedyMemoryPlanner", "MicroAllocator")


class SplitBufferAllocator(BufferAllocator):
    """PersistentArenaBufferAllocator + NonPersistentArenaBufferAllocator as address
    arithmetic over two buffers; ``required_persistent`` / ``required_non_persistent`` are the
    smallest sizes (16-byte steps) that pass every check made so far."""

    def __init__(self, persistent_size: int, non_persistent_size: int) -> None:
        self.non_persistent_size = non_persistent_size
        self.persistent_base = align_up(non_persistent_size, ARENA_ALIGNMENT)
        self.persistent_end = self.persistent_base + align_down(persistent_size, ARENA_ALIGNMENT)
        super().__init__(self.persistent_end)
        self.required_persistent = 0
        self.required_non_persistent = 0

    @property
    def tail_used(self) -> int:
        return self.persistent_end - self.tail

    def available_memory(self, alignment: int) -> int:
        return align_down(self.non_persistent_size, alignment) - align_up(self.temp, alignment)

    def allocate_persistent(self, size: int, alignment: int) -> int:
        result = align_down(self.tail - size, alignment)
        self.required_persistent = max(self.required_persistent, self.persistent_end - result)
        self._require(self.required_persistent)
        if result < self.persistent_base:
            missing = self.persistent_base - result
            self._fail(f"Failed to allocate tail memory. Requested: {size}, available "
                       f"{size - missing}, missing: {missing}", missing)
        self.used_bytes += self.tail - result
        self.requested_tail_bytes += size
        self.alloc_count += 1
        self.tail = result
        return result

    def resize_head(self, size: int, alignment: int) -> int:
        if self.head != self.temp:
            raise AssertionError("ResizeBuffer with live temp allocations (TFLM refuses this)")
        start = align_up(0, alignment)
        self._need_np(start + size)
        available = self.non_persistent_size - start
        if available < size:
            self._fail(f"Failed to resize buffer. Requested: {size}, available {available}, "
                       f"missing: {size - available}", size - available)
        previous = self.head
        self.head = start + size
        self.temp = self.head
        self.used_bytes += self.head - previous
        self.requested_head_bytes = size
        return start

    def allocate_temp(self, size: int, alignment: int) -> int:
        result = align_up(self.temp, alignment)
        self._need_np(result + size)
        available = self.non_persistent_size - result
        if available < size:
            self._fail(f"Failed to allocate temp memory. Requested: {size}, available "
                       f"{available}, missing: {size - available}", size - available)
        self.temp = result + size
        self.temp_peak = max(self.temp_peak, self.temp)
        self.temp_count += 1
        return result

    def require_planner_area(self, needed_bytes: int) -> None:
        self._need_np(align_up(self.temp, ARENA_ALIGNMENT) + needed_bytes)

    def _need_np(self, end: int) -> None:
        self.required_non_persistent = max(self.required_non_persistent, end)
        self._require(end)


@dataclass(frozen=True)
class SplitLayout:
    """One model over two arenas: used bytes and smallest working size of each."""

    target: str
    persistent_used: int
    persistent_min: int
    non_persistent_used: int
    non_persistent_min: int
    persistent_size: int  # the buffers ``layout``'s addresses refer to
    non_persistent_size: int
    persistent_base: int  # virtual address of the persistent buffer's start
    layout: ArenaLayout

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "persistent_arena": {"used": self.persistent_used, "min": self.persistent_min},
            "non_persistent_arena": {"used": self.non_persistent_used,
                                     "min": self.non_persistent_min},
            "arena_used_bytes": self.persistent_used + self.non_persistent_used,
        }


@dataclass(frozen=True)
class SharedModel:
    """One model's place in a shared arena: the shared head and tail right after its own
    AllocateTensors (what TFLM reports: the allocator's totals), the head its own plan needs
    and the tail bytes its allocation added."""

    head: int
    tail: int
    own_head: int
    own_tail: int
    layout: ArenaLayout

    def to_dict(self) -> dict[str, Any]:
        return {"head": self.head, "tail": self.tail, "own_head": self.own_head,
                "own_tail": self.own_tail}


@dataclass(frozen=True)
class SharedLayout:
    """Several models allocated in turn from one MicroAllocator over one arena."""

    target: str
    head: int
    tail: int
    min_arena: int
    arena_size: int
    models: tuple[SharedModel, ...]

    @property
    def used(self) -> int:
        return self.head + self.tail

    def to_dict(self, names: Sequence[str] | None = None) -> dict[str, Any]:
        labels = list(names) if names is not None else [str(i) for i in range(len(self.models))]
        return {"target": self.target,
                "shared_arena": {"head": self.head, "tail": self.tail, "used": self.used,
                                 "min": self.min_arena},
                "models": [{"model": n, **m.to_dict()} for n, m in zip(labels, self.models)]}


def allocate_split(model: Model, *, target: str | TargetProfile = "host-x64",
                   persistent_size: int | None = None, non_persistent_size: int | None = None,
                   resolver: Resolver | None = None, preallocated: Iterable[Any] = (),
                   allow_tinyarena_kernels: bool = False,
                   kernel_set: str | None = None) -> SplitLayout:
    """TFLM's two-arena AllocateTensors (greedy planner). A size left None is "the minimum";
    a given size too small raises ``ArenaTooSmallError`` naming which arena and by how much.
    Minimums are TFLM's checked sizes, as the device's bisection measures them."""
    profile = _profile(target, kernel_set)
    res = resolver or _default_resolver(profile)
    if not allow_tinyarena_kernels:
        _alloc._refuse_tinyarena_only_kernels(model, res)
    pre = check_preallocated(model, preallocated)
    for name, value in (("persistent_size", persistent_size),
                        ("non_persistent_size", non_persistent_size)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 0):
            raise PlanError(f"{name} must be a number of bytes >= 0, got {value!r}")
    big = _split_run(model, profile, res, pre, _BIG, _BIG)
    alloc = big.alloc
    assert isinstance(alloc, SplitBufferAllocator)
    p_min = align_up(alloc.required_persistent, ARENA_ALIGNMENT)
    np_min = align_up(alloc.required_non_persistent, ARENA_ALIGNMENT)
    p_size = p_min if persistent_size is None else persistent_size
    np_size = np_min if non_persistent_size is None else non_persistent_size
    short = [(what, size, need) for what, size, need in
             (("persistent", align_down(p_size, ARENA_ALIGNMENT), p_min),
              ("non-persistent", np_size, np_min)) if size < need]
    if short:
        what, size, need = short[0]
        raise ArenaTooSmallError(
            f"{what} arena of {size} bytes is too small for this model on {profile.name}: it "
            f"needs {need} bytes ({need - size} missing)",
            arena_size=size, needed=need, missing=need - size)
    final = _split_run(model, profile, res, pre, p_size, np_size)
    fa = final.alloc
    assert isinstance(fa, SplitBufferAllocator)
    layout = _layout_of(final, fa.arena_size)
    return SplitLayout(target=profile.name, persistent_used=fa.tail_used,
                       persistent_min=p_min, non_persistent_used=fa.head_used,
                       non_persistent_min=np_min, persistent_size=p_size,
                       non_persistent_size=np_size, persistent_base=fa.persistent_base,
                       layout=layout)


def _profile(target: str | TargetProfile, kernel_set: str | None) -> TargetProfile:
    """The target, with another kernel set when one is named (profiles that know kernel sets
    offer ``with_kernel_set``)."""
    profile = get_target(target)
    if kernel_set is None:
        return profile
    with_kernel_set = getattr(profile, "with_kernel_set", None)
    if with_kernel_set is None:
        raise PlanError(f"target {profile.name} has no kernel-set choice in this build; "
                        f"leave kernel_set out")
    chosen: TargetProfile = with_kernel_set(kernel_set)
    return chosen


def _default_resolver(profile: TargetProfile) -> Resolver:
    """allocate_model's default resolver for this target's kernels."""
    factory: Any = _alloc._DefaultResolver
    kernel_set = getattr(profile, "kernel_set", None)
    resolver: Resolver = factory() if kernel_set in (None, "reference") else factory(kernel_set)
    return resolver


def _layout_of(run: Any, min_arena: int) -> ArenaLayout:
    """The run's ArenaLayout with ``min_arena`` as its minimum (TFLM's checked size)."""
    layout: ArenaLayout = run.layout(min_arena, min_arena, "")
    return layout


def _split_run(model: Model, profile: TargetProfile, res: Resolver,
               pre: frozenset[tuple[int, int]], p_size: int, np_size: int) -> Any:
    alloc = SplitBufferAllocator(p_size, np_size)
    return _alloc._run(model, profile, "production", "greedy", res, alloc.arena_size,
                       preallocated=pre, alloc=alloc, allocator_objects=SPLIT_OBJECTS)


def allocate_shared(models: Sequence[Model], *, target: str | TargetProfile = "host-x64",
                    arena_size: int | None = None, resolver: Resolver | None = None,
                    allow_tinyarena_kernels: bool = False,
                    resolvers: Sequence[Resolver] | None = None,
                    kernel_set: str | None = None) -> SharedLayout:
    """The models allocated in the order given from one MicroAllocator over one arena
    (production allocator, greedy planner). ``arena_size=None``: the smallest arena (16-byte
    steps) in which every AllocateTensors succeeds. ``resolvers`` gives one op resolver per
    model (each MicroInterpreter has its own), else ``resolver`` serves them all."""
    if not models:
        raise PlanError("give at least one model to share an arena")
    profile = _profile(target, kernel_set)
    if resolvers is not None and len(resolvers) != len(models):
        raise PlanError(f"give one resolver per model ({len(models)}), not {len(resolvers)}")
    res = list(resolvers) if resolvers is not None else \
        [resolver or _default_resolver(profile)] * len(models)
    if not allow_tinyarena_kernels:
        for m, r in zip(models, res):
            _alloc._refuse_tinyarena_only_kernels(m, r)
    big = _shared_runs(models, profile, res, _BIG)
    min_arena = align_up(big[-1][0].alloc.required_end, ARENA_ALIGNMENT)
    size = min_arena if arena_size is None else arena_size
    try:
        runs = _shared_runs(models, profile, res, size)
    except ArenaTooSmallError as exc:
        raise ArenaTooSmallError(
            f"arena of {size} bytes is too small for these {len(models)} models sharing it on "
            f"{profile.name} in this order: it needs {min_arena} bytes "
            f"({min_arena - size} missing). TFLM reports: {exc}",
            arena_size=size, needed=min_arena, missing=min_arena - size) from None
    tails = [0] + [tail for _, (_, tail) in runs]
    per_model = tuple(
        SharedModel(head, tail, run.plan.head_size if run.plan is not None else 0,
                    tail - before, _layout_of(run, min_arena))
        for (run, (head, tail)), before in zip(runs, tails))
    last = runs[-1][0].alloc
    return SharedLayout(target=profile.name, head=last.head_used, tail=last.tail_used,
                        min_arena=min_arena, arena_size=size, models=per_model)


def _shared_runs(models: Sequence[Model], profile: TargetProfile, res: Sequence[Resolver],
                 arena_size: int) -> list[tuple[Any, tuple[int, int]]]:
    """Each model's run and the shared (head, tail) right after its AllocateTensors."""
    alloc = BufferAllocator(arena_size)
    runs: list[tuple[Any, tuple[int, int]]] = []
    head = 0
    for i, model in enumerate(models):
        run = _alloc._run(model, profile, "production", "greedy", res[i], arena_size,
                          alloc=alloc, prior_head=head,
                          allocator_objects=SHARED_OBJECTS if i == 0 else ())
        head = max(head, run.plan.head_size if run.plan is not None else 0)
        runs.append((run, (alloc.head_used, alloc.tail_used)))
    return runs


__all__ = ["SHARED_OBJECTS", "SPLIT_OBJECTS", "SharedLayout", "SharedModel", "SplitLayout",
           "SplitBufferAllocator", "allocate_shared", "allocate_split"]
