"""TFLM's AllocateTensors, emulated on arena addresses: ``allocate_model(model) -> ArenaLayout``.

The sequence is ``MicroInterpreter::AllocateTensors`` (facts sheet 4.2):

1. allocator objects (``RecordingMicroAllocator::Create`` or ``MicroAllocator::Create``), and
   ``MicroResourceVariables`` when the model has VAR_HANDLE ops (or, with
   ``separate_variables``, in a second arena of its own: ``variables_arena``);
2. ``StartModelAllocation``: builtin-data allocator, the scratch-request array in the head,
   SubgraphAllocations, TfLiteEvalTensor arrays, NodeAndRegistration arrays;
3. builtin parameter structs (``PrepareNodeAndRegistrationDataFromFlatbuffer``);
4. every kernel's init, then every kernel's prepare (``InitSubgraphs``, ``PrepareSubgraphs``,
   ``FinishPrepareNodeAllocations`` after each node);
5. ``FinishModelAllocation``: scratch handles, then ``CommitStaticMemoryPlan`` (temp arrays,
   variables, lifetimes, the planner's working area, the plan, the head reservation);
6. input and output TfLiteTensors of subgraph 0.

What each kernel allocates lives in its module under ``tinyarena.kernels``; this module only
runs them through an emulating context.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Protocol

from tinyarena._util import align_up
from tinyarena.arena import recording as rec
from tinyarena.arena.buffer_allocator import ARENA_ALIGNMENT, BufferAllocator
from tinyarena.arena.layout import ArenaLayout, PlannedBuffer, TailAllocation, VariablesArena
from tinyarena.arena.lifetimes import (
    ONLINE,
    AllocationRecord,
    ScratchRequest,
    allocation_records,
    planned_records,
    tensor_nbytes,
)
from tinyarena.arena.targets import TargetProfile, get_target
from tinyarena.errors import (
    ArenaTooSmallError,
    KernelError,
    PlanError,
    TinyArenaError,
    UnsupportedOpError,
)
from tinyarena.kernels.base import Registration, check_workspace_initial
from tinyarena.model.metadata import offline_offsets
from tinyarena.model.reader import read_model
from tinyarena.model.types import Model, Operator, Tensor
from tinyarena.planning import lower_bound, plan_greedy, plan_linear
from tinyarena.planning.buffers import Buffer, Plan

MAX_SCRATCH_PER_OP = 12  # kMaxScratchBuffersPerOp
PLANNER_BYTES_PER_BUFFER = 40  # GreedyMemoryPlanner::per_buffer_size()
LINEAR_PLANNER_MAX_BUFFERS = 1024
_BIG_ARENA = 1 << 40  # "big enough": a multiple of 16 far above any model


class Resolver(Protocol):
    def registration(self, op_name: str) -> Registration: ...


@dataclass(frozen=True)
class _DefaultResolver:
    """Every kernel tinyarena has in the target's kernel set, like the wheel's
    PythonOpsResolver (or a firmware's resolver listing every op)."""

    kernel_set: str = "reference"

    def registration(self, op_name: str) -> Registration:
        from tinyarena.kernels import registration

        return registration(op_name, self.kernel_set)


def allocate_model(
    model: Model | bytes | bytearray | memoryview | str | os.PathLike[str],
    *,
    target: str | TargetProfile = "host-x64",
    arena_size: int | None = None,
    planner: str = "greedy",
    resolver: Resolver | None = None,
    allocator: str | None = None,
    allow_tinyarena_kernels: bool = False,
    preallocated: Iterable[Any] = (),
    kernel_set: str | None = None,
    separate_variables: bool = False,
    max_resource_variables: int | None = None,
    alt_decompression_memory: int = 0,
) -> ArenaLayout:
    """Emulate TFLM's AllocateTensors for ``model`` and return the resulting arena layout.

    ``arena_size=None`` means "big enough"; the layout's absolute offsets then refer to an
    arena of ``min_arena`` bytes. With a size, ``ArenaTooSmallError`` is raised where TFLM's
    AllocateTensors would fail, carrying TFLM's own message plus the bytes needed and missing.
    ``allocator`` picks the tail objects: "recording" (the Python wheel) or "production"
    (``MicroInterpreter(model, resolver, arena, size)``); the default is the target's.
    ``planner`` is "greedy" (TFLM's default) or "linear" (TFLM's kPreserveAllTensors).
    A model with an op that only tinyarena has a kernel for (``Registration.tflm`` False, e.g.
    CONV_3D) has no TFLM arena to emulate: that raises ``UnsupportedOpError`` unless
    ``allow_tinyarena_kernels`` (the interpreter's case: it needs offsets, not TFLM's sizes).
    ``preallocated`` lists subgraph-0 tensor indices whose data the application supplies
    (the RFC's ``RegisterPreallocatedTensor``): they are not planned (nor, for variables,
    allocated in the tail), exactly as TFLM skips tensors whose data is already set.
    ``kernel_set`` ("reference" or "cmsis-nn") overrides the target's default kernel set.
    ``max_resource_variables`` is the count given to ``MicroResourceVariables::Create``
    (default: the model's distinct VAR_HANDLE shared names; fewer fails like TFLM).
    ``separate_variables`` is ESPHome's micro_wake_word layout: ``MicroResourceVariables`` is
    created over a MicroAllocator of a second arena, so this arena holds neither it nor its
    variable table (the variables' buffers stay here: ASSIGN_VARIABLE's Prepare allocates them
    through the interpreter's context); the layout's ``variables_arena`` sizes the other one.
    ``alt_decompression_memory`` is the size of TFLM's alternate decompression memory (the
    wheel's ``alt_decompression_memory_size``; 0: none): TFLM_DECODE outputs that fit go
    there instead of the arena (``layout.alt_decompression_offsets``).
    """
    model = read_model(model)  # a path or bytes is read; a Model passes through
    profile = get_target(target, kernel_set)
    path = allocator or profile.default_allocator
    if path not in ("recording", "production"):
        raise PlanError(f"unknown allocator {path!r}; use 'recording' or 'production'")
    if planner not in ("greedy", "linear"):
        raise PlanError(f"unknown planner {planner!r}; use 'greedy' or 'linear'")
    if planner == "linear":
        path = "production"  # the wheel's kPreserveAllTensors uses a plain MicroAllocator
    res = resolver or _DefaultResolver(profile.kernel_set)
    if not allow_tinyarena_kernels:
        _refuse_tinyarena_only_kernels(model, res, profile)
    pre = check_preallocated(model, preallocated)
    variables = _variables_setup(model, profile, separate_variables, max_resource_variables)
    alt = _check_alt_memory(alt_decompression_memory)
    run = functools.partial(_run, preallocated=pre, alt_memory=alt, variables=variables)

    big = run(model, profile, path, planner, res, _BIG_ARENA)
    checked = align_up(big.alloc.required_end, ARENA_ALIGNMENT)
    # The number to declare: TFLM's own checks pass from ``checked``, but a kernel that
    # allocates persistent memory in Prepare while holding temp tensors only checks against
    # the head, so below the overlap-free size it writes over its own temp tensors and works
    # or crashes by luck (facts 1.5; measured on Cortex-M55: a hard fault). Declare the size
    # that cannot overlap.
    min_arena = max(checked, align_up(big.alloc.overlap_free_end, ARENA_ALIGNMENT))
    overrun_end, overrun_by = _scratch_overrun_end(big)
    overrun_min = align_up(overrun_end + big.alloc.tail_used, ARENA_ALIGNMENT)
    overrun_note = ""
    if overrun_min > min_arena:
        min_arena = overrun_min
        overrun_note = (f"min_arena {min_arena:,} keeps an invoke-time overrun clear of the "
                        f"tail: {overrun_by} reaches TFLM's tail objects in a smaller arena "
                        f"(TFLM's own checks pass from {checked:,} bytes; below {min_arena:,} "
                        f"the model works or crashes depending on the bytes overwritten)")
    if arena_size is None:
        final = _relocated(big, min_arena)
    elif arena_size >= min_arena and arena_size % ARENA_ALIGNMENT == 0:
        final = _relocated(big, arena_size)  # same end remainder: it fits, same paddings
    else:
        if arena_size < 0:
            raise ArenaTooSmallError(f"arena size {arena_size} is negative", arena_size=arena_size,
                                     needed=min_arena, missing=min_arena - arena_size)
        try:
            final = run(model, profile, path, planner, res, arena_size)
        except ArenaTooSmallError as exc:
            # The minimum in 16-byte steps, as ``size`` reports it; an arena at least that big
            # can still fail when its end is not a multiple of 16 (more tail padding): then the
            # smallest working arena with the same remainder mod 16.
            needed = (min_arena if arena_size < min_arena else _needed_with_end(
                model, profile, path, planner, res, arena_size % ARENA_ALIGNMENT, pre, alt,
                variables))
            raise ArenaTooSmallError(
                f"arena of {arena_size} bytes is too small for this model on {profile.name}: "
                f"it needs {needed} bytes ({needed - arena_size} missing). TFLM reports: {exc}",
                arena_size=arena_size, needed=needed, missing=needed - arena_size,
            ) from None
    layout = dataclasses.replace(
        final.layout(min_arena, checked,
                     overrun_note or _min_arena_note(min_arena, checked, big)),
        min_arena_cause="invoke overrun" if overrun_note else _min_arena_cause(checked, big))
    if variables.separate:
        layout = dataclasses.replace(layout, variables_arena=variables_arena(
            profile, variables.count))
    return layout


@dataclass(frozen=True)
class _Variables:
    """Where ``MicroResourceVariables`` lives and how many variables its table holds (0 and
    not separate: the model has no VAR_HANDLE, nothing is created)."""

    count: int
    separate: bool


def _variables_setup(model: Model, profile: TargetProfile, separate: bool,
                     count: int | None) -> _Variables:
    if count is not None and (isinstance(count, bool) or not isinstance(count, int)
                              or count < 0):
        raise PlanError(f"max_resource_variables must be a whole number >= 0, got {count!r}")
    needed = len({shared for _, shared in _shared_names(model)})
    if count is None:
        count = needed
    elif count < needed:
        raise KernelError(
            f"the model's VAR_HANDLE ops name {needed} resource variables but "
            f"MicroResourceVariables::Create is given {count}: TFLM's AllocateTensors fails "
            f"(\"Maximum resource variable count ({count}) reached\"); give at least {needed}")
    return _Variables(count, separate)


def variables_arena(target: str | TargetProfile, count: int) -> VariablesArena:
    """The second arena of ESPHome's micro_wake_word: ``MicroAllocator::Create(var_arena, n)``
    (its SingleArenaBufferAllocator, GreedyMemoryPlanner and MicroAllocator objects, each at
    its own alignment, micro_allocator.cc) then ``MicroResourceVariables::Create(allocator,
    count)``: the object and the ``count``-entry variable table, each through
    ``MicroAllocator::AllocatePersistentBuffer`` (16-aligned, micro_resource_variable.cc).
    Nothing else ever comes from it. All from the tail of a 16-aligned buffer, so the bytes
    used are the same for any size that fits, and the minimum is that rounded up to 16 (below
    it TFLM does not fail cleanly: Create does not check its allocations). ``min_4_aligned``:
    the minimum (a multiple of 16) for a buffer only 4-byte aligned, as from a heap: Create
    aligns its start up to 16, and the 16-aligned allocations pad by the end's remainder."""
    profile = get_target(target)
    steps, used = _variables_allocations(profile, count, _BIG_ARENA)
    shift = _BIG_ARENA - align_up(used, ARENA_ALIGNMENT)  # addresses in a minimum-size arena
    steps = [dataclasses.replace(s, address=s.address - shift) for s in steps]
    worst = max(align_up(_variables_allocations(profile, count, _BIG_ARENA + start)[1]
                         + ARENA_ALIGNMENT - start, ARENA_ALIGNMENT) for start in (4, 8, 12))
    return VariablesArena(count, used, align_up(used, ARENA_ALIGNMENT), tuple(steps), worst)


def _variables_allocations(profile: TargetProfile, count: int, arena_end: int
                           ) -> tuple[list[TailAllocation], int]:
    """The variables arena's tail allocations, from an arena ending at ``arena_end``."""
    alloc = BufferAllocator(arena_end)
    steps = []
    objects = [(name, profile.sizeof(name), profile.alignof(name))
               for name in ("SingleArenaBufferAllocator", "GreedyMemoryPlanner",
                            "MicroAllocator")]
    objects += [("MicroResourceVariables", profile.sizeof("MicroResourceVariables"),
                 ARENA_ALIGNMENT),
                (f"MicroResourceVariable[{count}]",
                 profile.sizeof("MicroResourceVariable") * count, ARENA_ALIGNMENT)]
    for label, size, alignment in objects:
        before = alloc.tail
        address = alloc.allocate_persistent(size, alignment)
        steps.append(TailAllocation(label, size, alignment, before - address, address, None))
    return steps, alloc.tail_used


def _min_arena_cause(checked: int, big: _Run) -> str:
    """Why TFLM's checks need more than ``arena_used_bytes()`` (head + tail after
    AllocateTensors; facts 1.5): "rounding" when the 16-byte rounding of the arena size alone
    explains it, else the transient step that needs the most (empty when nothing does)."""
    used = big.alloc.head_used + big.alloc.tail_used
    if checked <= used:
        return ""
    if checked <= align_up(used, ARENA_ALIGNMENT) or not big.required_driver:
        return "rounding"
    return big.required_driver


def _scratch_overrun_end(run: _Run) -> tuple[int, str]:
    """The highest arena byte (from the arena start, where the head begins) a kernel's eval
    writes past a scratch buffer it requested too small, and which request; (0, "") when none
    does. Below ``that + tail`` the overrun reaches the tail (TFLM's own objects) at invoke."""
    if run.plan is None:
        return 0, ""
    end, by = 0, ""
    for r, off in zip(run.plan_records, run.plan.offsets):
        if r.kind != "scratch":
            continue
        req = run.scratch_requests[r.index]
        if req.eval_writes > req.nbytes and off + req.eval_writes > end:
            end = off + req.eval_writes
            op = run.model.subgraphs[req.subgraph].operators[req.op_index]
            by = (f"op {req.op_index} {op.name}'s kernel, which writes {req.eval_writes:,} "
                  f"bytes into the {req.nbytes:,}-byte scratch it requested,")
    return end, by


def _min_arena_note(min_arena: int, checked: int, big: _Run) -> str:
    """Why min_arena is above what TFLM's checks accept, naming the allocation (empty when
    they agree)."""
    if min_arena == checked:
        return ""
    return (f"min_arena {min_arena:,} keeps every kernel's Prepare-time persistent allocations "
            f"clear of its live temp tensors; TFLM's own checks already pass from {checked:,} "
            f"bytes, but below {min_arena:,} {big.overlap_driver} overwrites temp tensors it "
            f"still uses (TFLM does not check this), so the model then works or crashes "
            f"depending on the bytes overwritten")


def _relocated(run: _Run, arena_size: int) -> _Run:
    """The run as it would have gone on an arena of ``arena_size`` bytes, without running it.

    Valid when both sizes are multiples of 16 and ``arena_size`` is at least the run's required
    end: then every check passes on both, the head is identical, and every tail allocation sits
    at the same distance from the end (its padding depends only on the end mod 16, facts 1.2),
    so tail addresses just move by the difference. This replaces the second emulation that
    ``allocate_model`` used to run at ``min_arena``. Every tail address ``_Run`` keeps must be
    moved here.
    """
    delta = run.alloc.arena_size - arena_size
    assert delta % ARENA_ALIGNMENT == 0 and arena_size >= run.alloc.required_end
    run.alloc.arena_size = arena_size
    run.alloc.tail -= delta
    # TailAllocation's fields positionally: dataclasses.replace costs ~8 us a record, a
    # tenth of a small model's sizing (the order is checked in tests/unit/arena).
    run.tail_log = [TailAllocation(t.label, t.requested, t.alignment, t.used,
                                   t.address - delta, t.category, t.op, t.role)
                    for t in run.tail_log]
    address_maps: tuple[dict[Any, int], ...] = (
        run.resource_buffers, run.init_buffers, run.bound_tensor_offsets, run.variable_offsets)
    for addresses in address_maps:
        for key in addresses:
            addresses[key] -= delta
    return run


def _check_alt_memory(nbytes: int) -> int:
    """The alternate decompression memory's size as a whole number of bytes >= 0."""
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
        raise PlanError(f"alternate decompression memory must be a whole number of bytes >= 0, "
                        f"got {nbytes!r}")
    return nbytes


def _needed_with_end(model: Model, profile: TargetProfile, path: str, planner: str,
                     res: Resolver, remainder: int,
                     preallocated: frozenset[tuple[int, int]] = frozenset(),
                     alt_memory: int = 0, variables: _Variables | None = None) -> int:
    """Smallest working arena whose size is ``remainder`` mod 16 (the tail's padding depends
    on that remainder, facts 1.2, so the smallest arena overall may not be a multiple of 16)."""
    run = _run(model, profile, path, planner, res, _BIG_ARENA + remainder,
               preallocated=preallocated, alt_memory=alt_memory, variables=variables)
    need = run.alloc.required_end
    return need + (remainder - need) % ARENA_ALIGNMENT


def check_preallocated(model: Model, tensors: Iterable[Any]) -> frozenset[tuple[int, int]]:
    """The RFC's RegisterPreallocatedTensor checks: subgraph-0 tensors that TFLM would give
    arena memory (not constants, not offline-planned); returned as (0, index) keys."""
    keys: set[tuple[int, int]] = set()
    if not model.subgraphs:
        return frozenset()
    sg = model.subgraphs[0]
    offsets = offline_offsets(model)
    for item in tensors:
        if isinstance(item, tuple):
            if len(item) != 2 or item[0] != 0:
                raise PlanError(
                    f"cannot pre-allocate {item!r}: only tensors of subgraph 0 (the tensors "
                    f"MicroInterpreter exposes) can be pre-allocated; give its index in "
                    f"subgraph 0")
            item = item[1]
        try:
            index = -1 if isinstance(item, bool) else operator.index(item)
        except TypeError:
            index = -1
        if not 0 <= index < len(sg.tensors):
            raise PlanError(f"cannot pre-allocate tensor {item!r}: subgraph 0 has tensors "
                            f"0..{len(sg.tensors) - 1}")
        item = index
        tensor = sg.tensors[item]
        if tensor.is_constant:
            raise PlanError(f"cannot pre-allocate tensor {item} ({tensor.name!r}): it is a "
                            f"constant whose data is in the model")
        if offsets is not None and offsets[item] != ONLINE:
            raise PlanError(f"cannot pre-allocate tensor {item} ({tensor.name!r}): it is "
                            f"offline-planned (OfflineMemoryAllocation metadata), which the "
                            f"RFC forbids; drop it from the offline plan first")
        keys.add((0, int(item)))
    return frozenset(keys)


# -- one emulated run ------------------------------------------------------------------------------


@dataclass
class _Run:
    """State of one AllocateTensors emulation (mutable, local to one call)."""

    model: Model
    target: TargetProfile
    path: str
    planner: str
    alloc: BufferAllocator
    recorder: rec.Recorder
    tail_log: list[TailAllocation] = field(default_factory=list)
    scratch_requests: list[ScratchRequest] = field(default_factory=list)
    op_data: dict[tuple[int, int], Any] = field(default_factory=dict)
    workspaces: list[tuple[tuple[int, ...], Any]] = field(default_factory=list)
    workspace_owners: list[tuple[int, int]] = field(default_factory=list)  # (subgraph, op)
    workspace_persistent: list[bool] = field(default_factory=list)  # False: shared scratch
    workspace_initial: list[Any] = field(default_factory=list)  # contents given in prepare
    data_set_in_prepare: set[tuple[int, int]] = field(default_factory=set)
    resource_names: list[tuple[str, str]] = field(default_factory=list)
    resource_buffers: dict[int, int] = field(default_factory=dict)
    tensor_resource: dict[tuple[int, int], int] = field(default_factory=dict)
    init_buffers: dict[tuple[int, int], int] = field(default_factory=dict)  # (sg, op) -> address
    bound_tensor_offsets: dict[tuple[int, int], int] = field(default_factory=dict)
    plan_records: list[AllocationRecord] = field(default_factory=list)
    plan: Plan | None = None
    variable_offsets: dict[tuple[int, int], int] = field(default_factory=dict)
    temp_peak: int = 0
    resource_limit: int = 0  # MicroResourceVariables' max_variable_count_
    preallocated: frozenset[tuple[int, int]] = frozenset()  # data supplied by the application
    prior_head: int = 0  # MicroAllocator::max_head_buffer_usage_ before this model
    overlap_driver: str = ""  # the allocation that last raised the overlap-free bound
    required_driver: str = ""  # the step of AllocateTensors that last raised required_end

    def note_required(self, step: str, before: int) -> None:
        """``step`` raised the arena end TFLM's checks need above ``before``: remember it, so
        that ``size`` can say what makes the minimum arena larger than the arena used."""
        if self.alloc.required_end > before:
            self.required_driver = step
    alt_memory: int = 0  # the alternate decompression memory's bytes (0: none set)
    alt_cursor: int = 0  # MicroContext::decompress_regions_allocations_[0]
    alt_used: int = 0  # the highest end any allocation reached in it
    alt_offsets: dict[tuple[int, int], int] = field(default_factory=dict)

    def allocate_decompression_memory(self, nbytes: int) -> int | None:
        """MicroContext::AllocateDecompressionMemory on one region (16-aligned start): the
        offset of ``nbytes`` in the alternate memory, or None when they do not fit."""
        if self.alt_memory <= 0:
            return None
        offset = align_up(self.alt_cursor, ARENA_ALIGNMENT)
        if offset + nbytes > self.alt_memory:
            return None
        self.alt_cursor = offset + nbytes
        self.alt_used = max(self.alt_used, self.alt_cursor)
        return offset

    # -- tail helpers --------------------------------------------------------------------------

    def persistent(self, label: str, size: int, alignment: int,
                   category: str | None = None, op: tuple[int, int] | None = None,
                   role: str = "") -> int:
        before = self.alloc.tail
        free_end = self.alloc.overlap_free_end
        if category is None:
            address = self.alloc.allocate_persistent(size, alignment)
        else:
            with self.recorder.record(category):
                address = self.alloc.allocate_persistent(size, alignment)
        self.tail_log.append(TailAllocation(label, size, alignment, before - address, address,
                                            category, op, role))
        if self.alloc.overlap_free_end > max(free_end, self.alloc.required_end):
            self.overlap_driver = label
        return address

    def struct(self, label: str, name: str, count: int = 1, category: str | None = None,
               op: tuple[int, int] | None = None, role: str = "") -> int:
        return self.persistent(label, self.target.sizeof(name) * count, self.target.alignof(name),
                               category, op, role)

    def note_temp_peak(self, extra: int = 0) -> None:
        self.temp_peak = max(self.temp_peak, self.alloc.head_used + extra)

    def layout(self, min_arena: int, checked: int, note: str) -> ArenaLayout:
        assert self.plan is not None
        buffers = tuple(
            PlannedBuffer(r.kind, r.subgraph, r.index, b.size, off, b.first, b.last, r.nbytes,
                          r.offline_offset != ONLINE)
            for r, b, off in zip(self.plan_records, self.plan.buffers, self.plan.offsets)
        )
        head_start = 0  # the overlay starts at the (16-aligned) arena start
        tensor_offsets = dict(self.variable_offsets)
        scratch = [0] * len(self.scratch_requests)
        for b in buffers:
            if b.kind == "tensor":
                tensor_offsets[(b.subgraph, b.index)] = head_start + b.offset
            else:
                scratch[b.index] = head_start + b.offset
        return ArenaLayout(
            target=self.target.name,
            kernel_set=self.target.kernel_set,
            esp_nn_version=(self.target.esp_nn_version if self.target.kernel_set == "esp-nn"
                            else None),
            allocator=self.path,
            planner=self.planner,
            arena_size=self.alloc.arena_size,
            head=self.alloc.head_used,
            tail=self.alloc.tail_used,
            total=self.alloc.head_used + self.alloc.tail_used,
            min_arena=min_arena,
            overlap_free_arena=min_arena,
            tflm_checked_min_arena=checked,
            min_arena_note=note,
            temp_peak=self.temp_peak,
            lower_bound=_lower_bound(self.plan.buffers),
            categories=self.recorder.categories(),
            buffers=buffers,
            tensor_offsets=tensor_offsets,
            scratch_offsets=tuple(scratch),
            op_data=dict(self.op_data),
            workspaces=tuple(self.workspaces),
            workspace_owners=tuple(self.workspace_owners),
            workspace_persistent=tuple(self.workspace_persistent),
            workspace_initial=tuple(self.workspace_initial),
            tail_allocations=tuple(self.tail_log),
            resource_offsets=tuple(self.resource_buffers[i]
                                   for i in sorted(self.resource_buffers)),
            bound_tensor_offsets=dict(self.bound_tensor_offsets),
            alt_decompression_memory=self.alt_memory,
            alt_decompression_used=self.alt_used,
            alt_decompression_offsets=dict(self.alt_offsets),
        )


def _run(model: Model, target: TargetProfile, path: str, planner: str, resolver: Resolver,
         arena_size: int, *, preallocated: frozenset[tuple[int, int]] = frozenset(),
         alloc: BufferAllocator | None = None, prior_head: int = 0,
         allocator_objects: tuple[str, ...] | None = None, alt_memory: int = 0,
         variables: _Variables | None = None) -> _Run:
    """One model's AllocateTensors. ``alloc`` continues an existing arena (several models
    allocated in turn from one MicroAllocator), ``prior_head`` is that MicroAllocator's
    max_head_buffer_usage_ so far, and ``allocator_objects`` the structs its Create put in the
    tail (None: the default single-arena set; () when the allocator already exists).
    ``variables``: the MicroResourceVariables count and arena (None: the model's count, here)."""
    alloc = BufferAllocator(arena_size) if alloc is None else alloc
    run = _Run(model, target, path, planner, alloc, rec.Recorder(alloc),
               preallocated=preallocated, prior_head=prior_head, alt_memory=alt_memory)
    registrations = _registrations(model, resolver)
    if allocator_objects is None:
        _create_allocator_objects(run)
    for name in allocator_objects or ():
        run.struct(name, name)
    _create_resource_variables(run, variables)
    _set_decompression_memory(run)
    _start_model_allocation(run)
    _parse_builtin_data(run, registrations)
    _init_kernels(run, registrations)
    _prepare_kernels(run, registrations)
    before = run.alloc.required_end
    _finish_model_allocation(run)
    run.note_required("memory planning: the planner's working area (40 bytes per planned "
                      "buffer) and its allocation records", before)
    _allocate_io_tensors(run)
    return run


def _registrations(model: Model, resolver: Resolver) -> dict[tuple[int, int], Registration]:
    """GetRegistrationFromOpCode for every node; unknown ops fail before anything is sized."""
    found = {}
    for sg in model.subgraphs:
        for op in sg.operators:
            try:
                found[(sg.index, op.index)] = resolver.registration(op.name)
            except UnsupportedOpError as exc:  # say where the op sits in the model
                raise UnsupportedOpError(
                    f"{op.name} (operator {op.index} of subgraph {sg.index}): {exc}",
                    op_name=op.name, op_index=op.index, subgraph_index=sg.index) from None
    return found


def _refuse_tinyarena_only_kernels(model: Model, resolver: Resolver,
                                   profile: TargetProfile | None = None) -> None:
    """``profile``: the build named in the message (its TFLM, e.g. esp-tflite-micro's)."""
    build = "" if profile is None else f" (the {profile.name} build, TFLM {profile.tflm_commit})"
    for (sg, index), reg in _registrations(model, resolver).items():
        if not reg.tflm:
            raise UnsupportedOpError(
                f"{reg.name} (operator {index} of subgraph {sg}) has no TFLM kernel, so TFLM"
                f"{build} cannot run this model and there is no TFLM arena to size; "
                f"tinyarena's Interpreter can still run it", op_name=reg.name, op_index=index,
                subgraph_index=sg)


def _create_allocator_objects(run: _Run) -> None:
    """RecordingMicroAllocator::Create or MicroAllocator::Create (facts 4.1)."""
    planner = "GreedyMemoryPlanner" if run.planner == "greedy" else "LinearMemoryPlanner"
    if run.path == "recording":
        objects = ("RecordingSingleArenaBufferAllocator", planner, "RecordingMicroAllocator")
    else:
        objects = ("SingleArenaBufferAllocator", planner, "MicroAllocator")
    for name in objects:
        run.struct(name, name)


def _shared_names(model: Model) -> list[tuple[str, str]]:
    """(container, shared_name) of every VAR_HANDLE, in subgraph then op order."""
    return [
        (str(getattr(op.options, "container", "") or ""),
         str(getattr(op.options, "shared_name", "") or ""))
        for sg in model.subgraphs
        for op in sg.operators
        if op.name == "VAR_HANDLE"
    ]


def resource_variable_count(model: Model) -> int:
    """Distinct resource variables the model's VAR_HANDLE ops name: the smallest count
    ``MicroResourceVariables::Create`` accepts for it (0: it needs none)."""
    return len({shared for _, shared in _shared_names(model)})


def _create_resource_variables(run: _Run, variables: _Variables | None) -> None:
    """MicroResourceVariables::Create, sized as the wheel sizes it (distinct shared names)
    unless ``variables`` gives the count; nothing in this arena when it lives in another."""
    if variables is None:
        variables = _Variables(len({shared for _, shared in _shared_names(run.model)}), False)
    count = variables.count
    if variables.separate:
        run.resource_limit = count
        return
    if not _shared_names(run.model) and count == 0:
        return
    cat = rec.PERSISTENT_BUFFER_DATA
    run.persistent("MicroResourceVariables", run.target.sizeof("MicroResourceVariables"),
                   ARENA_ALIGNMENT, cat)
    run.persistent(f"MicroResourceVariable[{count}]",
                   run.target.sizeof("MicroResourceVariable") * count, ARENA_ALIGNMENT, cat)
    run.resource_limit = count


def _set_decompression_memory(run: _Run) -> None:
    """MicroInterpreter::SetDecompressionMemory with one region, as the wheel calls it before
    AllocateTensors: a persistent array of one size_t (the region's allocation cursor)."""
    if run.alt_memory > 0:
        run.persistent("decompress_regions_allocations_[1]", run.target.sizeof("size_t"),
                       ARENA_ALIGNMENT, rec.PERSISTENT_BUFFER_DATA)


def _start_model_allocation(run: _Run) -> None:
    """MicroAllocator::StartModelAllocation and the recording wrappers' count fix-ups."""
    model = run.model
    run.struct("MicroBuiltinDataAllocator", "MicroBuiltinDataAllocator")
    _resize_request_array(run)
    run.struct(f"SubgraphAllocations[{len(model.subgraphs)}]", "SubgraphAllocations",
               len(model.subgraphs))
    for sg in model.subgraphs:
        run.struct(f"TfLiteEvalTensor[{len(sg.tensors)}] (subgraph {sg.index})",
                   "TfLiteEvalTensor", len(sg.tensors), rec.EVAL_TENSOR_DATA)
        run.recorder.adjust_count(rec.EVAL_TENSOR_DATA, len(sg.tensors) - 1)
    for sg in model.subgraphs:
        run.struct(f"NodeAndRegistration[{len(sg.operators)}] (subgraph {sg.index})",
                   "NodeAndRegistration", len(sg.operators), rec.NODE_AND_REGISTRATION)
        run.recorder.adjust_count(rec.NODE_AND_REGISTRATION, len(sg.operators) - 1)


def _resize_request_array(run: _Run) -> None:
    """The head holds (requests so far + kMaxScratchBuffersPerOp) ScratchBufferRequests."""
    t = run.target
    run.alloc.resize_head(t.sizeof("ScratchBufferRequest")
                          * (len(run.scratch_requests) + MAX_SCRATCH_PER_OP),
                          t.alignof("ScratchBufferRequest"))
    run.note_temp_peak()


def _parse_builtin_data(run: _Run, regs: dict[tuple[int, int], Registration]) -> None:
    """The parse functions' builtin structs (MicroBuiltinDataAllocator, not itemised)."""
    for sg in run.model.subgraphs:
        for op in sg.operators:
            reg = regs[(sg.index, op.index)]
            if reg.builtin_data is not None and not op.is_custom:
                run.struct(f"{reg.builtin_data} (op {op.index} {op.name}, subgraph {sg.index})",
                           reg.builtin_data, op=(sg.index, op.index), role="builtin data")


@contextmanager
def _foreign_errors_named(op: Operator, subgraph: int, phase: str) -> Iterator[None]:
    """A kernel's init/prepare that trips over malformed tensors (too few inputs, missing
    quantization, ...) fails as KernelError naming the op, as TFLM's TF_LITE_ENSUREs would."""
    try:
        yield
    except TinyArenaError:
        raise
    except (ArithmeticError, LookupError, TypeError, ValueError, AttributeError,
            RecursionError) as exc:
        raise KernelError(
            f"{op.name} (operator {op.index} of subgraph {subgraph}) rejected its tensors during "
            f"{phase}: {type(exc).__name__}: {exc}; check the operator's input and output count, "
            f"types, shapes, options and quantization against what TFLM's kernel expects"
        ) from exc


def _init_kernels(run: _Run, regs: dict[tuple[int, int], Registration]) -> None:
    """MicroInterpreterGraph::InitSubgraphs: every init, all subgraphs."""
    for sg in run.model.subgraphs:
        for op in sg.operators:
            reg = regs[(sg.index, op.index)]
            if reg.init is not None:
                with _foreign_errors_named(op, sg.index, "init"):
                    reg.init(_KernelContext(run, sg.index, op, "init"), op)


def _prepare_kernels(run: _Run, regs: dict[tuple[int, int], Registration]) -> None:
    """MicroInterpreterGraph::PrepareSubgraphs, with FinishPrepareNodeAllocations per node."""
    for sg in run.model.subgraphs:
        for op in sg.operators:
            reg = regs[(sg.index, op.index)]
            before = run.alloc.required_end
            ctx = _KernelContext(run, sg.index, op, "prepare")
            if reg.prepare is not None:
                with _foreign_errors_named(op, sg.index, "prepare"):
                    run.op_data[(sg.index, op.index)] = reg.prepare(ctx, op)
                run.alt_cursor = 0  # ResetDecompressionMemoryAllocations after each Prepare
            _check_dynamic_tensors(sg.tensors, op, sg.index)
            ctx.finish()
            _resize_request_array(run)
            where = f" of subgraph {sg.index}" if sg.index else ""
            run.note_required(f"the Prepare of operator {op.index}{where} ({op.name}): its temp "
                              f"tensors and scratch requests", before)


def _check_dynamic_tensors(tensors: tuple[Tensor, ...], op: Operator, subgraph: int) -> None:
    """CheckDynamicTensors, after each Prepare: an output with a dimension <= 0 (a legacy [0]
    scalar aside) is refused, so TFLM never runs a zero-sized output."""
    for index in op.outputs:
        if index < 0:
            continue
        shape = tuple(tensors[index].shape)
        if shape != (0,) and any(d <= 0 for d in shape):
            raise KernelError(
                f"Op#{op.index} ({op.name}) of subgraph {subgraph} has dynamic tensor #{index} "
                f"(shape {shape}): Dynamic tensors are not supported by TFLM; give every "
                f"output dimension a positive size")


def _finish_model_allocation(run: _Run) -> None:
    """FinishModelAllocation: scratch handles, then CommitStaticMemoryPlan."""
    model, t, alloc = run.model, run.target, run.alloc
    n_requests = len(run.scratch_requests)
    if n_requests:
        run.struct(f"ScratchBufferHandle[{n_requests}]", "ScratchBufferHandle", n_requests)
    # AllocationInfoBuilder::CreateAllocationInfo (temp).
    alloc.allocate_temp(t.sizeof("size_t") * len(model.subgraphs), t.alignof("size_t"))
    alloc.allocate_temp(t.sizeof("AllocationInfo") * (model.tensor_count + n_requests),
                        t.alignof("AllocationInfo"))
    offsets = offline_offsets(model)
    _allocate_variables(run, offsets)
    records = allocation_records(model, run.scratch_requests, offsets=offsets,
                                 data_set_in_prepare=run.data_set_in_prepare | run.preallocated)
    planned = planned_records(records)
    # The planner gets all remaining memory as its working area (temp).
    if run.planner == "greedy":
        needed = PLANNER_BYTES_PER_BUFFER * len(planned)
        alloc.require_planner_area(needed)
        run.note_temp_peak(align_up(alloc.temp, ARENA_ALIGNMENT) - alloc.head_used + needed)
        area = alloc.available_memory(ARENA_ALIGNMENT)
        max_buffers = max(area, 0) // PLANNER_BYTES_PER_BUFFER
        if len(planned) > max_buffers:
            missing = needed - area
            raise ArenaTooSmallError(
                f"Too many buffers (max is {max_buffers})", arena_size=alloc.arena_size,
                needed=alloc.arena_size + missing, missing=missing)
    else:
        if len(planned) > LINEAR_PLANNER_MAX_BUFFERS:
            raise PlanError(f"Too many buffers (max is {LINEAR_PLANNER_MAX_BUFFERS}): TFLM's "
                            f"LinearMemoryPlanner holds at most 1024; use the greedy planner")
        if any(r.offline_offset != ONLINE for r in planned):
            raise PlanError("TFLM's LinearMemoryPlanner cannot place offline-planned buffers "
                            "(OfflineMemoryAllocation metadata); use the greedy planner")
        run.note_temp_peak(align_up(alloc.temp, ARENA_ALIGNMENT) - alloc.head_used)
    buffers = [r.to_buffer() for r in planned]
    run.plan = _plan(run.planner, buffers)
    run.plan_records = planned
    alloc.deallocate_temp()
    alloc.deallocate_temp()
    alloc.reset_temp()
    alloc.resize_head(0, 1)  # DeallocateResizableBuffer
    # ReserveNonPersistentOverlayMemory(max_head_buffer_usage_): the largest plan so far
    alloc.resize_head(max(run.plan.head_size, run.prior_head), ARENA_ALIGNMENT)
    run.note_temp_peak()


def _allocate_variables(run: _Run, offsets: tuple[int, ...] | None) -> None:
    """MicroAllocator::AllocateVariables for every subgraph, recorded as variable buffers.

    TFLM looks the offline offset up with the subgraph-local tensor index here (facts 3), even
    though planning uses the index into all subgraphs' tensors; reproduced on purpose.
    """
    for sg in run.model.subgraphs:
        with run.recorder.record(rec.VARIABLE_BUFFER_DATA):
            for tensor in sg.tensors:
                if not tensor.is_variable:
                    continue
                if offsets is not None and offsets[tensor.index] != ONLINE:
                    continue
                if (sg.index, tensor.index) in run.preallocated:
                    continue  # its data is the application's buffer
                nbytes = tensor_nbytes(run.model, sg.index, tensor.index)
                before = run.alloc.tail
                address = run.alloc.allocate_persistent(nbytes, ARENA_ALIGNMENT)
                run.tail_log.append(TailAllocation(
                    f"variable tensor {tensor.index} {tensor.name!r} (subgraph {sg.index})",
                    nbytes, ARENA_ALIGNMENT, before - address, address, rec.VARIABLE_BUFFER_DATA,
                    role="variable"))
                run.variable_offsets[(sg.index, tensor.index)] = address


def _allocate_io_tensors(run: _Run) -> None:
    """MicroInterpreter::AllocateTensors' persistent TfLiteTensors for subgraph 0's IO."""
    if not run.model.subgraphs:
        return
    sg = run.model.subgraphs[0]
    ptr = run.target.sizeof("void*")
    for kind, indices in (("input", sg.inputs), ("output", sg.outputs)):
        run.persistent(f"{kind} TfLiteTensor* [{len(indices)}]", ptr * len(indices),
                       ARENA_ALIGNMENT, rec.PERSISTENT_BUFFER_DATA)
        for t in indices:
            tensor = sg.tensors[t]
            run.struct(f"TfLiteTensor ({kind} tensor {t})", "TfLiteTensor", 1,
                       rec.PERSISTENT_TENSOR_DATA)
            channels = _quantized_channels(tensor)
            with run.recorder.record(rec.PERSISTENT_QUANTIZATION_DATA):
                if channels:
                    run.struct(f"TfLiteAffineQuantization ({kind} tensor {t})",
                               "TfLiteAffineQuantization")
                    run.persistent(f"zero points ({kind} tensor {t})", 4 + 4 * channels,
                                   run.target.alignof("TfLiteIntArray"))


def _quantized_channels(tensor: Tensor) -> int:
    """Scale count when TFLM copies the quantization (scale and zero_point both non-empty)."""
    q = tensor.quantization
    if q is None or len(q.scale) == 0 or len(q.zero_point) == 0:
        return 0
    return len(q.scale)


def _plan(planner: str, buffers: list[Buffer]) -> Plan:
    return plan_greedy(buffers) if planner == "greedy" else plan_linear(buffers)


def _lower_bound(buffers: tuple[Buffer, ...]) -> int:
    """Largest total size of buffers live at one time step."""
    return int(lower_bound(list(buffers)))


# -- the context kernels see -------------------------------------------------------------------------


class _KernelContext:
    """InitContext / PrepareContext on the emulated arena, for one node.

    Besides kernels/base.py's contract it offers what the resource-variable kernels need
    (``resource_id``, ``bind_resource``, ``resource_of``, ``allocate_resource``), mirroring
    ``MicroResourceVariables`` and VAR_HANDLE's trick of pointing its output at its OpData.
    """

    def __init__(self, run: _Run, subgraph: int, op: Operator, phase: str) -> None:
        self._run = run
        self.target = run.target
        self.subgraph = subgraph
        self.op = op
        self.phase = phase
        self._temps = 0
        self._requests_this_op = 0

    # InitContext
    def allocate_persistent(self, nbytes: int) -> int:
        """MicroContext::AllocatePersistentBuffer: 16-aligned tail, "Persistent buffer data"."""
        if nbytes < 0:
            raise KernelError(f"{self.op.name} asked for {nbytes} persistent bytes")
        label = f"{self.op.name} {self.phase} (op {self.op.index}, subgraph {self.subgraph})"
        address = self._run.persistent(label, nbytes, ARENA_ALIGNMENT,
                                       rec.PERSISTENT_BUFFER_DATA, (self.subgraph, self.op.index),
                                       "op data" if self.phase == "init" else "persistent buffer")
        if self.phase == "init":  # the OpData that TfLiteNode::user_data points at
            self._run.init_buffers.setdefault((self.subgraph, self.op.index), address)
        return address

    # PrepareContext
    def tensor(self, index: int) -> Tensor | None:
        if index < 0:
            return None
        return self._run.model.subgraphs[self.subgraph].tensors[index]

    def allocate_temp_tensor(self, index: int) -> None:
        """MicroAllocator::AllocateTempTfLiteTensor: the struct, then its quantization copy."""
        self._require_prepare("allocate_temp_tensor")
        if index < 0:
            return
        t, alloc = self.target, self._run.alloc
        alloc.allocate_temp(t.sizeof("TfLiteTensor"), t.alignof("TfLiteTensor"))
        self._temps += 1
        channels = _quantized_channels(self._run.model.subgraphs[self.subgraph].tensors[index])
        if channels:
            alloc.allocate_temp(t.sizeof("TfLiteAffineQuantization"),
                                t.alignof("TfLiteAffineQuantization"))
            alloc.allocate_temp(4 + 4 * channels, t.alignof("TfLiteIntArray"))
            self._temps += 2
        self._run.note_temp_peak()

    def request_scratch(self, nbytes: int, *, eval_writes: int = 0) -> int:
        """MicroAllocator::RequestScratchBufferInArena: a request record in the head."""
        self._require_prepare("request_scratch")
        if self._requests_this_op >= MAX_SCRATCH_PER_OP:
            raise KernelError(f"Scratch buffer request exceeds limit per operator "
                              f"({MAX_SCRATCH_PER_OP}): op {self.op.index} {self.op.name}")
        self._requests_this_op += 1
        self._run.scratch_requests.append(ScratchRequest(nbytes, self.op.index, self.subgraph,
                                                         eval_writes))
        return len(self._run.scratch_requests) - 1

    def request_workspace(self, shape: tuple[int, ...], dtype: Any, *,
                          persistent: bool = True, initial: Any = None) -> int:
        self._require_prepare("request_workspace")
        initial = check_workspace_initial(shape, dtype, persistent, initial)
        self._run.workspaces.append((tuple(shape), dtype))
        self._run.workspace_owners.append((self.subgraph, self.op.index))
        self._run.workspace_persistent.append(bool(persistent))
        self._run.workspace_initial.append(initial)
        return len(self._run.workspaces) - 1

    def subgraph_count(self) -> int:
        return len(self._run.model.subgraphs)

    # Resource variables (MicroResourceVariables)
    def resource_id(self, container: str, shared_name: str) -> int:
        """CreateIdIfNoneFound: the id of (container, shared_name), created on first use."""
        names = self._run.resource_names
        key = (container, shared_name)
        if key in names:
            return names.index(key)
        limit = self._run.resource_limit
        if len(names) >= limit:
            raise KernelError(f"Failed to allocate resource variable. Maximum resource variable "
                              f"count ({limit}) reached.")
        names.append(key)
        return len(names) - 1

    def bind_resource(self, tensor_index: int, resource: int) -> None:
        """VAR_HANDLE's Prepare points its output tensor at its OpData: the tensor then has
        data before planning, so TFLM does not plan it."""
        key = (self.subgraph, tensor_index)
        self._run.tensor_resource[key] = resource
        self._run.data_set_in_prepare.add(key)
        opdata = self._run.init_buffers.get((self.subgraph, self.op.index))
        if opdata is None:
            raise KernelError(f"{self.op.name} (operator {self.op.index}) binds tensor "
                              f"{tensor_index} to an OpData it never allocated in init")
        self._run.bound_tensor_offsets[key] = opdata

    def resource_of(self, tensor_index: int) -> int | None:
        """The resource id a resource tensor of this subgraph holds at Prepare time, if any."""
        return self._run.tensor_resource.get((self.subgraph, tensor_index))

    def allocate_resource(self, resource: int, nbytes: int) -> None:
        """MicroResourceVariables::Allocate: the first call for a resource allocates its buffer."""
        if resource in self._run.resource_buffers:
            return
        self._run.resource_buffers[resource] = self.allocate_persistent(nbytes)

    # Alternate decompression memory (MicroContext, TFLM compression builds)
    def reset_decompression_memory(self) -> None:
        """MicroContext::ResetDecompressionMemoryAllocations."""
        self._run.alt_cursor = 0

    def decompress_into_alternate_memory(self, tensor_index: int) -> bool:
        """DECODE's SetOutputTensorData: an output without data takes its bytes from the
        alternate decompression memory when they fit, and is then not planned in the arena.
        True when it did."""
        self._require_prepare("decompress_into_alternate_memory")
        key = (self.subgraph, tensor_index)
        if key in self._run.preallocated or key in self._run.data_set_in_prepare:
            return False  # "If memory has already been assigned to the tensor, leave it be"
        offset = self._run.allocate_decompression_memory(
            tensor_nbytes(self._run.model, self.subgraph, tensor_index))
        if offset is None:
            return False
        self._run.alt_offsets[key] = offset
        self._run.data_set_in_prepare.add(key)
        return True

    # bookkeeping
    def finish(self) -> None:
        """FinishPrepareNodeAllocations: release this node's temp allocations."""
        for _ in range(self._temps):
            self._run.alloc.deallocate_temp()
        self._temps = 0
        self._run.alloc.reset_temp()

    def _require_prepare(self, what: str) -> None:
        if self.phase != "prepare":
            raise KernelError(f"{self.op.name}: {what} is only allowed in prepare "
                              f"(TFLM's micro_context.h lifecycle)")


__all__ = ["allocate_model", "check_preallocated", "resource_variable_count",
           "variables_arena"]
