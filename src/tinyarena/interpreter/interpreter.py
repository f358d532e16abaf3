"""``tinyarena.Interpreter``: TFLM's MicroInterpreter on one caller-supplied arena, in numpy.

``allocate_tensors`` runs the arena emulation (``arena.allocator.allocate_model``: TFLM's
AllocateTensors with every kernel's init and prepare) once, then places every non-constant
tensor as a numpy view at exactly the offset TFLM would use: planned tensors and scratch buffers
in the head, variable tensors and resource buffers in the tail. Constants stay zero-copy views of
the model bytes. Kernel workspaces (Python-side buffers requested in prepare) are made here,
once, outside the arena, and reported separately so the arena stays byte-identical to TFLM's.

The public methods follow TFLM (``input``/``output``, ``arena_used_bytes``, ``reset``), the
tflite_micro wheel's Python runtime (``Interpreter.from_bytes``/``from_file``,
``set_input(data, index)``, ``get_output(index)``, ``get_input_details(index)``) and
``tf.lite.Interpreter`` (``Interpreter(model_path=...)``, ``get_input_details()``,
``set_tensor``/``get_tensor``, ``allocate_tensors``/``invoke``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from tinyarena.arena.allocator import allocate_model
from tinyarena.arena.layout import ArenaLayout
from tinyarena.arena.targets import TargetProfile, get_target
from tinyarena.errors import (
    InterpreterError,
    ModelError,
    PlanError,
    UnsupportedOpError,
)
from tinyarena.interpreter.graph import Graph, SubgraphViews
from tinyarena.interpreter.placement import (
    SharedAllocator,
    SplitMemory,
    StampCheck,
    new_token,
    preallocated_view,
    stamp_slot,
    write_stamp,
)
from tinyarena.interpreter.resolver import OpResolver
from tinyarena.kernels import native as native_kernels
from tinyarena.kernels.native import is_quiet
from tinyarena.kernels.base import EvalFn, Registration, initial_array
from tinyarena.model.types import NUMPY_DTYPES, Model, Subgraph, Tensor

ARENA_ALIGNMENT = 16  # MicroArenaBufferAlignment()
WORKSPACE_ALIGNMENT = 64  # scratch workspaces in the shared pool: cache-line aligned

ModelSource = Model | bytes | bytearray | memoryview | str | os.PathLike


@dataclass(frozen=True)
class AllocationReport:
    """What the arena holds after ``allocate_tensors``, as TFLM's RecordingMicroAllocator reports
    it, plus what tinyarena keeps outside the arena (kernel workspaces).

    ``head``/``tail``/``total`` are TFLM's numbers (``total == arena_used_bytes()``);
    ``categories`` maps each recorded category to (used, requested, count). ``str(report)``
    gives the text in TFLM's PrintAllocations format followed by tinyarena's own lines.
    """

    arena_size: int
    head: int
    tail: int
    total: int
    categories: Mapping[str, tuple[int, int, int]]
    workspace_bytes: int
    workspace_count: int
    min_arena: int | None = None
    text: str = field(default="", repr=False)
    compiled_constant_bytes: int = 0  # constants packed by compiled kernels (kernels.native)

    def __str__(self) -> str:
        return self.text

    def to_dict(self) -> dict[str, Any]:
        return {
            "arena_size": self.arena_size, "head": self.head, "tail": self.tail,
            "total": self.total, "min_arena": self.min_arena,
            "categories": {name: {"used": u, "requested": r, "count": c}
                           for name, (u, r, c) in self.categories.items()},
            "workspace_bytes": self.workspace_bytes, "workspace_count": self.workspace_count,
            "compiled_constant_bytes": self.compiled_constant_bytes,
        }


# Nouns RecordingMicroAllocator::PrintAllocations puts after each category's count.
_COUNT_NOUNS = {
    "Persistent TfLiteTensor data": "tensors",
    "NodeAndRegistration struct": "NodeAndRegistration structs",
    "Operator runtime data": "OpData structs",
}


def render_allocations(head: int, tail: int, total: int,
                       categories: Mapping[str, tuple[int, int, int]]) -> list[str]:
    """TFLM's RecordingMicroAllocator::PrintAllocations lines, in its order and wording."""
    prefix = "[RecordingMicroAllocator] "
    lines = [f"{prefix}Arena allocation total {total} bytes",
             f"{prefix}Arena allocation head {head} bytes",
             f"{prefix}Arena allocation tail {tail} bytes"]
    for name, (used, requested, count) in categories.items():
        if used == 0 and requested == 0:
            continue
        noun = _COUNT_NOUNS.get(name, "allocations")
        lines.append(f"{prefix}'{name}' used {used} bytes with alignment overhead "
                     f"(requested {requested} bytes for {count} {noun})")
    return lines


def _load_model(model: ModelSource) -> Model:
    from tinyarena.model import read_model

    if isinstance(model, Model):
        return model
    if isinstance(model, (str, os.PathLike)):
        path = Path(model)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ModelError(f"cannot read model file {path}: {exc.strerror or exc}") from None
        return read_model(data)
    if isinstance(model, (bytes, bytearray, memoryview)):
        return read_model(model)
    raise InterpreterError(
        f"model must be a path, bytes or a tinyarena Model, not {type(model).__name__}")


def _arena_array(arena: Any) -> np.ndarray:
    """The caller's buffer as a writable 1-D uint8 numpy array sharing its memory."""
    try:
        view = memoryview(arena)
    except TypeError:
        raise InterpreterError(
            f"arena must be a writable buffer (bytearray, numpy uint8 array, ...), not "
            f"{type(arena).__name__}") from None
    if view.readonly:
        raise InterpreterError("arena is read-only; pass a bytearray or a writable numpy array")
    if not view.c_contiguous:
        raise InterpreterError("arena must be one contiguous buffer")
    return np.frombuffer(view.cast("B") if view.ndim != 1 or view.format != "B" else view,
                         dtype=np.uint8)


def _address(array: np.ndarray) -> int:
    return int(array.__array_interface__["data"][0])


def _aligned(array: np.ndarray) -> np.ndarray:
    """MicroAllocator::Create: start aligned up to 16, end kept."""
    pad = -_address(array) % ARENA_ALIGNMENT
    return array[pad:] if pad <= array.shape[0] else array[:0]


def _own_arena(size: int) -> np.ndarray:
    """A zeroed arena of ``size`` bytes whose start is 16-aligned (like ``new uint8_t[]``)."""
    try:
        raw = np.zeros(size + ARENA_ALIGNMENT, dtype=np.uint8)
    except (MemoryError, ValueError) as exc:
        raise InterpreterError(
            f"cannot make an arena of {size} bytes ({type(exc).__name__}: {exc}); pass a "
            f"smaller arena_size, or none for the smallest arena TFLM accepts") from None
    pad = -_address(raw) % ARENA_ALIGNMENT
    return raw[pad:pad + size]


def _tensor_view(arena: np.ndarray, offset: int, tensor: Tensor) -> tuple[np.ndarray, np.ndarray]:
    """(typed view, byte view) of ``tensor`` at ``offset`` of the arena."""
    dtype = _dtype(tensor)
    nbytes = tensor.element_count * dtype.itemsize
    raw = arena[offset:offset + nbytes]
    if raw.shape[0] != nbytes:
        raise InterpreterError(
            f"tensor {tensor.index} ({tensor.name!r}) at offset {offset} does not fit the "
            f"{arena.shape[0]}-byte arena")
    return raw.view(dtype).reshape(tensor.shape), raw


def _dtype(tensor: Tensor) -> np.dtype:
    dtype = NUMPY_DTYPES.get(tensor.type)
    if dtype is None:
        raise UnsupportedOpError(
            f"tensor {tensor.index} ({tensor.name!r}) has type {tensor.type.name}, which has no "
            f"numpy equivalent in tinyarena")
    return dtype


def _reset_value(tensor: Tensor) -> int:
    """MicroInterpreterGraph::ResetTensorData: int8 tensors reset to their zero point."""
    q = tensor.quantization
    if tensor.type.name == "INT8" and q is not None and len(q.zero_point) > 0:
        return int(q.zero_point[0])
    return 0


def _root_array(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _compiled_constant_bytes(alloc: _Allocation, arena: np.ndarray) -> int:
    """Memory owned by the arrays compiled steps were bound to (``native.native_step``: a
    partial whose arguments are arrays), each counted once, less the arena and workspaces."""
    shared = {id(_root_array(a)) for a in (arena, *alloc.workspace_memory, *alloc.workspaces)}
    owned: dict[int, int] = {}
    for step in alloc.graph.steps():
        if not (is_quiet(step) and isinstance(step, partial)):
            continue
        for arg in step.args:
            if isinstance(arg, np.ndarray):
                root = _root_array(arg)
                if root.base is None and id(root) not in shared:  # made at bind, not a view
                    owned[id(root)] = root.nbytes
    return sum(owned.values())


@dataclass(frozen=True)
class _Allocation:
    """Everything allocate_tensors made; replaced whole on every allocate_tensors."""

    layout: ArenaLayout
    graph: Graph
    views: tuple[SubgraphViews, ...]
    live_after_invoke: frozenset[int]  # subgraph-0 tensor indices still valid after invoke
    variables: tuple[tuple[np.ndarray, int], ...]  # (byte view, reset byte value)
    resources: tuple[tuple[np.ndarray, int], ...]
    workspaces: tuple[np.ndarray, ...]
    workspace_memory: tuple[np.ndarray, ...]  # the buffers the workspaces are views of
    scratch_pool: np.ndarray  # the shared bytes every op's scratch workspaces are views of
    persistent_workspaces: int  # how many workspaces are private (not in the pool)


class Interpreter:
    """Runs a .tflite model with TFLM's arena layout and bit-exact kernels.

    ``arena`` is any writable buffer (its start is aligned up to 16 as TFLM does); or give
    ``arena_size`` to have a 16-aligned arena made; with neither, the smallest arena TFLM
    would accept is made at allocation time. ``target`` names the build (``"cortex-m4"`` runs
    CMSIS-NN's kernels, as that build does); ``kernel_set`` ("reference" or "cmsis-nn")
    overrides the target's kernels, and the default resolver registers that set's kernels.
    ``native`` chooses the compiled kernels of the ``fast`` extra (numba): ``None`` (default)
    uses them when numba is installed and ``TINYARENA_NATIVE=0`` is not set, ``False`` runs
    numpy only; both give the same bits (``kernels.native``).
    """

    def __init__(self, model: ModelSource | None = None, arena: Any = None, *,
                 arena_size: int | None = None, resolver: OpResolver | None = None,
                 target: str | TargetProfile = "host-x64", kernel_set: str | None = None,
                 model_path: str | os.PathLike | None = None,
                 model_content: bytes | None = None,
                 preallocated: Mapping[Any, Any] | None = None,
                 persistent_arena: Any = None, non_persistent_arena: Any = None,
                 allocator: SharedAllocator | None = None,
                 native: bool | None = None,
                 alt_decompression_memory_size: int = 0) -> None:
        model = _one_model(model, model_path, model_content)
        if native is not None and not isinstance(native, bool):
            raise InterpreterError(f"native must be True, False or None, not {native!r}")
        self._native = native_kernels.resolve(native)
        if arena is not None and arena_size is not None:
            raise InterpreterError("give either arena (a buffer) or arena_size, not both")
        self._memory = _memory_options(arena, arena_size, persistent_arena,
                                       non_persistent_arena, allocator)
        if arena_size is not None and (not isinstance(arena_size, int)
                                       or isinstance(arena_size, bool) or arena_size <= 0):
            raise InterpreterError(f"arena_size must be a positive int, got {arena_size!r}")
        if (isinstance(alt_decompression_memory_size, bool)
                or not isinstance(alt_decompression_memory_size, int)
                or alt_decompression_memory_size < 0):
            raise InterpreterError(f"alt_decompression_memory_size must be an int >= 0 (bytes; "
                                   f"0: none), got {alt_decompression_memory_size!r}")
        if alt_decompression_memory_size and self._memory is not None:
            raise InterpreterError("an alternate decompression memory works with one arena "
                                   "only (not with two arenas or a SharedAllocator)")
        # TFLM's alternate decompression memory (SetDecompressionMemory, one region): made
        # 16-aligned at allocation, as the wheel's new uint8_t[alt_decompression_memory_size]
        self._alt_size = alt_decompression_memory_size
        self._alt_memory: np.ndarray | None = None
        if resolver is not None and not isinstance(resolver, OpResolver):
            raise InterpreterError(
                f"resolver must be a tinyarena.OpResolver, not {type(resolver).__name__}")
        self._model = _load_model(model)
        if not self._model.subgraphs:
            raise ModelError("the model has no subgraphs")
        self._target = get_target(target, kernel_set)
        self._resolver = (resolver if resolver is not None
                          else OpResolver.default(self._target.kernel_set))
        if self._resolver.kernel_set != self._target.kernel_set:
            raise InterpreterError(
                f"the resolver registers {self._resolver.kernel_set} kernels but target "
                f"{self._target.name} runs {self._target.kernel_set}; build it with "
                f"OpResolver([...], kernel_set={self._target.kernel_set!r}) or pass "
                f"kernel_set={self._resolver.kernel_set!r}")
        self._arena: np.ndarray | None
        if arena is not None:
            self._arena = _aligned(_arena_array(arena))
            self._arena_owner: Any = arena
        elif arena_size is not None:
            self._arena = _own_arena(arena_size)
            self._arena_owner = None
        else:
            self._arena = None  # sized at allocation time
            self._arena_owner = None
        self._alloc: _Allocation | None = None
        self._preallocated: dict[int, Any] = {}
        self._split: SplitMemory | None = None
        self._token = allocator.token if allocator is not None else new_token()
        self._stamp: StampCheck | None = None
        # SharedAllocator.take_turn when the arena is shared (looked up once, not per invoke)
        self._take_turn = allocator.take_turn if allocator is not None else None
        for key, buffer in (preallocated or {}).items():
            sg_index, index = key if isinstance(key, tuple) else (0, key)
            self.register_preallocated_tensor(index, buffer, sg_index)

    @classmethod
    def from_bytes(cls, model_data: bytes | bytearray | memoryview,
                   custom_op_registerers: Sequence[str] | None = None,
                   arena_size: int | None = None, **kwargs: Any) -> Interpreter:
        """tflite_micro's ``Interpreter.from_bytes(model_data, arena_size=...)``: built and
        allocated, ready for ``set_input(data, index)``. Without ``arena_size`` the arena is
        the smallest TFLM accepts (the wheel guesses ten times the model size instead).
        ``kwargs`` are this class's own (``resolver``, ``target``, ``arena``)."""
        _refuse_registerers(custom_op_registerers)
        if not isinstance(model_data, (bytes, bytearray, memoryview)):
            raise InterpreterError(
                f"from_bytes takes the model's bytes, not {type(model_data).__name__}; use "
                f"Interpreter.from_file(path) for a file")
        interpreter = cls(model_data, arena_size=arena_size, **kwargs)
        interpreter.allocate_tensors()
        return interpreter

    @classmethod
    def from_file(cls, model_path: str | os.PathLike,
                  custom_op_registerers: Sequence[str] | None = None,
                  arena_size: int | None = None, **kwargs: Any) -> Interpreter:
        """tflite_micro's ``Interpreter.from_file(model_path, arena_size=...)``: built and
        allocated, ready for ``set_input(data, index)``."""
        _refuse_registerers(custom_op_registerers)
        if not isinstance(model_path, (str, os.PathLike)):
            raise InterpreterError(
                f"from_file takes a path, not {type(model_path).__name__}; use "
                f"Interpreter.from_bytes(data) for bytes")
        interpreter = cls(model_path, arena_size=arena_size, **kwargs)
        interpreter.allocate_tensors()
        return interpreter

    # -- properties ----------------------------------------------------------------------------
    @property
    def model(self) -> Model:
        return self._model

    @property
    def arena(self) -> np.ndarray:
        """The (16-aligned) arena as a uint8 array; allocate first when no arena was given."""
        if self._arena is None:
            raise InterpreterError("no arena yet: call allocate_tensors() first")
        return self._arena

    @property
    def layout(self) -> ArenaLayout:
        """The ArenaLayout of the last allocate_tensors (offsets, plan, categories)."""
        return self._allocated().layout

    @property
    def target(self) -> TargetProfile:
        """The build this interpreter emulates (struct layout, kernel set, TFLM version)."""
        return self._target

    @property
    def resolver(self) -> OpResolver:
        return self._resolver

    @property
    def allocated(self) -> bool:
        return self._alloc is not None

    # -- allocation ----------------------------------------------------------------------------
    def register_preallocated_tensor(self, tensor_index: int, buffer: Any,
                                     subgraph_index: int = 0) -> None:
        """RFC 001's RegisterPreallocatedTensor: ``buffer`` (a writable numpy array or buffer of
        exactly the tensor's bytes) becomes the data of subgraph-0 tensor ``tensor_index``; it
        is not planned in the arena and is used in place, never copied. Call it before
        ``allocate_tensors``; constants, offline-planned tensors and tensors of other
        subgraphs are refused."""
        if self._alloc is not None:
            raise InterpreterError("register pre-allocated tensors before allocate_tensors() "
                                   "(TFLM plans the arena once, at AllocateTensors)")
        from tinyarena.arena.allocator import check_preallocated
        from tinyarena.arena.lifetimes import tensor_nbytes

        try:
            ((_, index),) = check_preallocated(self._model, [(subgraph_index, tensor_index)])
        except PlanError as exc:
            raise InterpreterError(str(exc)) from None
        tensor = self._model.subgraphs[0].tensors[index]
        self._preallocated[index] = preallocated_view(
            tensor, tensor_nbytes(self._model, 0, index), buffer)

    def allocate_tensors(self) -> None:
        """TFLM's MicroInterpreter::AllocateTensors: plan the arena and build every view."""
        self._alloc = None  # a failed allocation leaves nothing half-built behind
        registrations = self._resolve()
        if self._memory is not None:
            layout = self._allocate_elsewhere()
        elif self._arena is None:
            # Smallest arena TFLM accepts: the layout's offsets then refer to min_arena bytes.
            layout = allocate_model(self._model, target=self._target, arena_size=None,
                                    resolver=self._resolver, allow_tinyarena_kernels=True,
                                    preallocated=tuple(self._preallocated),
                                    alt_decompression_memory=self._alt_size)
            self._arena = _own_arena(int(layout.arena_size))
        else:
            layout = allocate_model(self._model, target=self._target,
                                    arena_size=int(self._arena.shape[0]),
                                    resolver=self._resolver, allow_tinyarena_kernels=True,
                                    preallocated=tuple(self._preallocated),
                                    alt_decompression_memory=self._alt_size)
        if self._alt_size and self._alt_memory is None:
            self._alt_memory = _own_arena(self._alt_size)
        self._alloc = self._build(layout, registrations)
        if self._memory is None or self._memory[0] != "shared":
            # This Interpreter now owns all of its memory: clearing it also wipes the owner
            # stamp of any other Interpreter whose allocator objects lie inside it.
            for buffer in self._owned_buffers():
                buffer.fill(0)
        slot = stamp_slot(self._addressable(), layout)
        write_stamp(slot, self._token)
        self._stamp = StampCheck(slot, self._token)
        self.reset()

    def _owned_buffers(self) -> tuple[np.ndarray, ...]:
        if self._split is not None and self._memory is not None and self._memory[0] == "split":
            return (self._split.non_persistent, self._split.persistent)
        return (self.arena,)

    def _allocate_elsewhere(self) -> ArenaLayout:
        """Two arenas (allocate_split) or a SharedAllocator's arena (allocate_shared)."""
        assert self._memory is not None
        kind, first, second = self._memory
        if kind == "shared":
            if self._preallocated:
                raise InterpreterError("pre-allocated tensors are not supported on a "
                                       "SharedAllocator; give the Interpreter its own arena")
            layout: ArenaLayout = first.allocate(id(self), self._model, self._target,
                                                 self._resolver)
            self._arena = first.arena
            return layout
        from tinyarena.arena.multi import allocate_split

        split = allocate_split(self._model, target=self._target,
                               persistent_size=int(second.shape[0]),
                               non_persistent_size=int(first.shape[0]),
                               resolver=self._resolver, allow_tinyarena_kernels=True,
                               preallocated=tuple(self._preallocated))
        self._arena = first
        self._split = SplitMemory(first, second, split.persistent_base)
        return split.layout

    def _addressable(self) -> Any:
        """What the layout's addresses index: the arena, or both arenas of a split layout."""
        if self._memory is not None and self._memory[0] == "split":
            return self._split
        return self.arena

    def _resolve(self) -> tuple[tuple[Registration, ...], ...]:
        registrations = self._resolver.resolve_model(self._model)
        for sg, regs in zip(self._model.subgraphs, registrations):
            for op, reg in zip(sg.operators, regs):
                if reg.eval is None and reg.eval_refusal:
                    raise UnsupportedOpError(
                        f"{op.name} (operator {op.index} of subgraph {sg.index}) "
                        f"{reg.eval_refusal}", op_name=op.name, op_index=op.index,
                        subgraph_index=sg.index)
                if reg.eval is None:
                    raise UnsupportedOpError(
                        f"{op.name} (operator {op.index} of subgraph {sg.index}) has no eval "
                        f"kernel in tinyarena yet, so the model cannot run here; its arena "
                        f"size is exact all the same: use `tinyarena size` / `plan` / "
                        f"`optimize` (tinyarena.allocate_model)",
                        op_name=op.name, op_index=op.index, subgraph_index=sg.index)
        return registrations

    def _build(self, layout: ArenaLayout,
               registrations: tuple[tuple[Registration, ...], ...]) -> _Allocation:
        arena = self._addressable()
        offsets: Mapping[tuple[int, int], int] = layout.tensor_offsets
        views = tuple(_subgraph_views(arena, sg, offsets) for sg in self._model.subgraphs)
        views = (_with_preallocated(views[0], self._preallocated), *views[1:])
        if self._alt_memory is not None and layout.alt_decompression_offsets:
            views = tuple(_with_alternate(v, sg, self._alt_memory,
                                          layout.alt_decompression_offsets)
                          for v, sg in zip(views, self._model.subgraphs))
        scratch = _scratch_views(arena, layout)
        workspaces, workspace_memory, pool = _make_workspaces(layout)
        resources = _resource_views(arena, layout, self._model)
        handles = _resource_handle_views(arena, layout)
        views = tuple(_with_handles(v, sg.index, handles)
                      for v, sg in zip(views, self._model.subgraphs))
        op_data = tuple(tuple(layout.op_data.get((sg.index, op.index))
                              for op in sg.operators) for sg in self._model.subgraphs)
        evals = tuple(tuple(_eval_fn(reg) for reg in regs) for regs in registrations)
        graph = Graph(model=self._model, target=self._target,
                      evals=evals, op_data=op_data, views=views, scratch=scratch,
                      workspaces=workspaces, resources=tuple(r for r, _ in resources),
                      resets=tuple(tuple(reg.reset for reg in regs) for regs in registrations),
                      binds=tuple(tuple(reg.bind for reg in regs) for regs in registrations),
                      native=self._native)
        variables = tuple(
            (view, _reset_value(t))
            for sg in self._model.subgraphs for t in sg.tensors
            if t.is_variable and (view := views[sg.index].byte_views[t.index]) is not None)
        return _Allocation(layout=layout, graph=graph, views=views,
                           workspace_memory=workspace_memory, scratch_pool=pool,
                           persistent_workspaces=len(workspace_memory) - 1,
                           live_after_invoke=_live_after_invoke(layout, self._model.subgraphs[0])
                           | frozenset(self._preallocated),
                           variables=variables, resources=resources, workspaces=workspaces)

    def _allocated(self) -> _Allocation:
        if self._alloc is None or self._stamp is None:
            raise InterpreterError("tensors are not allocated: call allocate_tensors() first")
        if not self._stamp.intact():
            self._alloc = None
            raise InterpreterError(
                "this Interpreter's arena was taken over by another allocation (its allocator "
                "objects in the tail were overwritten): two Interpreters were given overlapping "
                "memory. Give each its own buffer, or share one arena on purpose with "
                "Interpreter(model, allocator=tinyarena.SharedAllocator(arena)); then call "
                "allocate_tensors() again")
        return self._alloc

    @property
    def native(self) -> bool:
        """Kernels that have a compiled path (extra ``fast``) run it (see ``kernels.native``):
        asked for, and numba imports (an installed numba that fails to import leaves every
        kernel on numpy)."""
        return self._native and native_kernels.numba_module() is not None

    # -- running -------------------------------------------------------------------------------
    def invoke(self) -> None:
        """Run subgraph 0 once (MicroInterpreter::Invoke): its precompiled invoke plan."""
        # _allocated() inlined (every invoke pays for it): allocated, and the owner stamp intact
        alloc, stamp = self._alloc, self._stamp
        if alloc is None or stamp is None or not stamp.intact():
            alloc = self._allocated()  # raises the error that says which
        if self._take_turn is not None:
            self._take_turn(id(self), "invoke", bool(self._model.subgraphs[0].inputs))
        alloc.graph.invoke_main()

    def reset(self) -> None:
        """MicroInterpreter::Reset: variable tensors and resource variables back to their
        initial value (zero, or the zero point of int8 tensors), and every kernel's reset."""
        alloc = self._allocated()
        for view, value in alloc.variables:
            view.fill(value & 0xFF)
        for view, value in alloc.resources:
            view.fill(value & 0xFF)
        alloc.graph.reset_kernels()

    # -- TFLM-style I/O --------------------------------------------------------------------------
    def input(self, index: int) -> np.ndarray:
        """The arena view of input ``index`` (TFLM's ``interpreter.input(i)``): write into it."""
        return self._io_view(index, self._model.subgraphs[0].inputs, "input")

    def output(self, index: int) -> np.ndarray:
        """The arena view of output ``index`` (TFLM's ``interpreter.output(i)``)."""
        return self._io_view(index, self._model.subgraphs[0].outputs, "output")

    def set_input(self, data: Any, index: Any = 0) -> None:
        """Copy ``data`` into input ``index`` (tflite_micro's ``set_input(input_data, index)``);
        its shape and dtype must match exactly. tinyarena's earlier order, ``set_input(index,
        array)``, is still accepted when it cannot be misread: an int index and an array."""
        value, index = _input_arguments(data, index)
        sg = self._model.subgraphs[0]
        view = self._io_view(index, sg.inputs, "input")
        _check_value(sg.tensors[sg.inputs[index]], view, value, f"input {index}")
        view[...] = value

    def get_output(self, index: int = 0) -> np.ndarray:
        """A copy of output ``index`` after the last invoke (tflite_micro's ``get_output``)."""
        return self.output(index).copy()

    def inputs_size(self) -> int:
        return len(self._model.subgraphs[0].inputs)

    def outputs_size(self) -> int:
        return len(self._model.subgraphs[0].outputs)

    # -- tf.lite-style I/O -----------------------------------------------------------------------
    def get_input_details(self, index: int | None = None) -> Any:
        """tf.lite's ``get_input_details()`` (a list of dicts); with an ``index``,
        tflite_micro's ``get_input_details(index)`` (that input's dict)."""
        sg = self._model.subgraphs[0]
        if index is not None:
            return _details(sg.tensors[sg.inputs[_io_index(index, len(sg.inputs), "input")]])
        return [_details(sg.tensors[i]) for i in sg.inputs]

    def get_output_details(self, index: int | None = None) -> Any:
        """tf.lite's ``get_output_details()`` (a list of dicts); with an ``index``,
        tflite_micro's ``get_output_details(index)`` (that output's dict)."""
        sg = self._model.subgraphs[0]
        if index is not None:
            return _details(sg.tensors[sg.outputs[_io_index(index, len(sg.outputs), "output")]])
        return [_details(sg.tensors[i]) for i in sg.outputs]

    def print_allocations(self) -> None:
        """tflite_micro's ``print_allocations()``: the recording allocator's report, on
        stderr as the wheel prints it."""
        import sys

        print(self.allocation_report().text, file=sys.stderr)

    def get_tensor_details(self) -> list[dict[str, Any]]:
        return [_details(t) for t in self._model.subgraphs[0].tensors]

    def set_tensor(self, tensor_index: int, value: Any) -> None:
        """Write a subgraph-0 tensor (by tensor index, as in tf.lite); constants are refused."""
        tensor = self._tensor(tensor_index)
        if tensor.is_constant:
            raise InterpreterError(
                f"tensor {tensor_index} ({tensor.name!r}) is a constant in the model; it cannot "
                f"be set")
        view = self._view(tensor_index)
        _check_value(tensor, view, value, f"tensor {tensor_index} ({tensor.name!r})")
        view[...] = value

    def get_tensor(self, tensor_index: int) -> np.ndarray:
        """A copy of a subgraph-0 tensor. After an invoke, only tensors whose memory no later
        buffer reused (inputs, outputs, constants, variables, ...) can be read."""
        tensor = self._tensor(tensor_index)
        alloc = self._allocated()
        if tensor.is_constant:
            assert tensor.data is not None
            return np.array(tensor.data, copy=True)
        if tensor_index not in alloc.live_after_invoke:
            raise InterpreterError(
                f"tensor {tensor_index} ({tensor.name!r}) is not live after invoke: its arena "
                f"memory is reused by a later buffer of the memory plan. Read graph inputs, "
                f"outputs or variables, or make it a graph output to keep it.")
        return self._view(tensor_index).copy()

    # -- arena -----------------------------------------------------------------------------------
    def arena_used_bytes(self) -> int:
        """MicroInterpreter::arena_used_bytes: head + tail of the emulated TFLM arena."""
        return int(self._allocated().layout.total)

    def workspace_bytes(self) -> int:
        """Bytes of kernel workspaces tinyarena keeps outside the arena: the private
        (persistent) workspaces plus the one scratch pool all ops share."""
        return int(sum(m.nbytes for m in self._allocated().workspace_memory))

    def compiled_constant_bytes(self) -> int:
        """Bytes the compiled kernels' steps own (weights in the layout their loops read,
        per-channel parameters, small accumulators), outside the arena and the workspaces;
        0 with ``native=False``. Arena views, workspaces and the model's constants they read
        in place are not counted."""
        alloc = self._allocated()
        return _compiled_constant_bytes(alloc, self.arena)

    def allocation_report(self) -> AllocationReport:
        """TFLM's recording-allocator numbers (and text) plus tinyarena's workspaces."""
        alloc = self._allocated()
        layout = alloc.layout
        categories = _categories(layout)
        ws_bytes = self.workspace_bytes()
        lines = render_allocations(int(layout.head), int(layout.tail), int(layout.total),
                                   categories)
        lines.append(f"[tinyarena] arena size {self.arena.shape[0]} bytes, used "
                     f"{int(layout.total)} bytes")
        pool = int(alloc.scratch_pool.nbytes)
        kept = alloc.persistent_workspaces
        lines.append(f"[tinyarena] kernel workspaces outside the arena: {ws_bytes} bytes in "
                     f"{len(alloc.workspaces)} buffers ({ws_bytes - pool} bytes in {kept} "
                     f"persistent, {pool} bytes in one scratch pool shared by "
                     f"{len(alloc.workspaces) - kept})")
        compiled = self.compiled_constant_bytes()
        if compiled:
            lines.append(f"[tinyarena] compiled kernels' packed constants outside the arena: "
                         f"{compiled} bytes")
        min_arena = layout.min_arena
        return AllocationReport(
            arena_size=int(self.arena.shape[0]), head=int(layout.head), tail=int(layout.tail),
            total=int(layout.total), categories=categories, workspace_bytes=ws_bytes,
            workspace_count=len(alloc.workspaces), compiled_constant_bytes=compiled,
            min_arena=int(min_arena), text="\n".join(lines))

    def tensor_offset(self, tensor_index: int, subgraph_index: int = 0) -> int | None:
        """Byte offset of a tensor's data from the (aligned) arena start; None for constants."""
        return self._allocated().layout.tensor_offsets.get((subgraph_index, tensor_index))

    # -- helpers ---------------------------------------------------------------------------------
    def _io_view(self, index: int, indices: Sequence[int], kind: str) -> np.ndarray:
        if not isinstance(index, (int, np.integer)) or not 0 <= index < len(indices):
            raise InterpreterError(
                f"{kind} index {index!r} out of range: the model has {len(indices)} {kind}s")
        view = self._view(indices[index])
        if self._memory is not None and self._memory[0] == "shared":
            self._memory[1].take_turn(id(self), kind, False)
        return view

    def _tensor(self, tensor_index: int) -> Tensor:
        tensors = self._model.subgraphs[0].tensors
        if not isinstance(tensor_index, (int, np.integer)) or \
                not 0 <= tensor_index < len(tensors):
            raise InterpreterError(
                f"tensor index {tensor_index!r} out of range: subgraph 0 has {len(tensors)} "
                f"tensors")
        return tensors[tensor_index]

    def _view(self, tensor_index: int) -> np.ndarray:
        view = self._allocated().views[0].arrays[tensor_index]
        if view is None:
            raise InterpreterError(f"tensor {tensor_index} has no storage in the arena")
        return view


def _one_model(model: ModelSource | None, model_path: Any, model_content: Any) -> ModelSource:
    """The model from exactly one of: the positional argument, tf.lite's ``model_path=`` or
    ``model_content=``."""
    given = [m for m in (model, model_path, model_content) if m is not None]
    if len(given) != 1:
        raise InterpreterError(
            "give the model once: Interpreter(model), Interpreter(model_path=...) or "
            f"Interpreter(model_content=...); got {len(given)}")
    if model_path is not None and not isinstance(model_path, (str, os.PathLike)):
        raise InterpreterError(f"model_path must be a path, not {type(model_path).__name__}")
    if model_content is not None and not isinstance(model_content,
                                                    (bytes, bytearray, memoryview)):
        raise InterpreterError(
            f"model_content must be the model's bytes, not {type(model_content).__name__}")
    return given[0]


def _refuse_registerers(registerers: Sequence[str] | None) -> None:
    if registerers:
        raise InterpreterError(
            "custom_op_registerers name C++ registration functions of the tflite_micro wheel; "
            "tinyarena runs Python kernels: pass resolver=tinyarena.OpResolver.default()"
            ".add_custom(name, Registration(...)) instead")


def _is_index(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _input_arguments(data: Any, index: Any) -> tuple[Any, Any]:
    """(value, index) of ``set_input``: tflite_micro's order (data, index), or tinyarena's
    earlier (index, array) when that reading is the only one that makes sense."""
    if _is_index(index):
        return data, index
    if _is_index(data) and index is not None and not _is_index(index):
        return index, data  # set_input(0, array): the old order, unambiguous
    raise InterpreterError(
        f"set_input takes (data, index) as tflite_micro does, e.g. set_input(array, 0); got "
        f"({type(data).__name__}, {type(index).__name__})")


def _io_index(index: Any, count: int, kind: str) -> int:
    if not _is_index(index) or not 0 <= int(index) < count:
        raise InterpreterError(
            f"{kind} index {index!r} out of range: the model has {count} {kind}s")
    return int(index)


def _memory_options(arena: Any, arena_size: int | None, persistent: Any, non_persistent: Any,
                    allocator: Any) -> tuple[str, Any, Any] | None:
    """("split", non-persistent, persistent arrays), ("shared", allocator, None) or None."""
    split = persistent is not None or non_persistent is not None
    if split and (persistent is None or non_persistent is None):
        raise InterpreterError("two arenas need both persistent_arena and non_persistent_arena")
    if sum((split, allocator is not None, arena is not None or arena_size is not None)) > 1:
        raise InterpreterError("give one of: arena/arena_size, persistent_arena with "
                               "non_persistent_arena, or allocator")
    if allocator is not None:
        if not isinstance(allocator, SharedAllocator):
            raise InterpreterError(f"allocator must be a tinyarena.SharedAllocator, not "
                                   f"{type(allocator).__name__}")
        return ("shared", allocator, None)
    if split:
        from tinyarena.interpreter.placement import persistent_buffer

        p = persistent_buffer(_arena_array(persistent))
        n = _aligned(_arena_array(non_persistent))
        if np.may_share_memory(p, n):
            raise InterpreterError("persistent_arena and non_persistent_arena overlap; give "
                                   "two separate buffers")
        return ("split", n, p)
    return None


def _with_preallocated(views: SubgraphViews, arrays: Mapping[int, np.ndarray]) -> SubgraphViews:
    """Subgraph 0's views with each pre-allocated tensor viewing the caller's buffer."""
    if not arrays:
        return views
    typed = list(views.arrays)
    raw = list(views.byte_views)
    for index, array in arrays.items():
        typed[index] = array
        raw[index] = array.reshape(-1).view(np.uint8)
    return SubgraphViews(tuple(typed), tuple(raw))


def _check_value(tensor: Tensor, view: np.ndarray, value: Any, what: str) -> None:
    if not isinstance(value, np.ndarray):
        value = np.asarray(value)
    if value.dtype != view.dtype:
        raise InterpreterError(
            f"{what} ({tensor.name!r}) is {view.dtype.name}, got {value.dtype.name}; convert "
            f"with np.asarray(x, dtype=np.{view.dtype.name})")
    if value.shape != view.shape:
        raise InterpreterError(
            f"{what} ({tensor.name!r}) has shape {tuple(view.shape)}, got {tuple(value.shape)}")


def _details(tensor: Tensor) -> dict[str, Any]:
    """One entry of tf.lite's get_input_details(), for a tinyarena tensor."""
    q = tensor.quantization
    if q is not None and len(q.scale) > 0:
        scales = np.asarray(q.scale, dtype=np.float32)
        zero_points = np.asarray(q.zero_point, dtype=np.int32)
        quantization = (float(scales[0]), int(zero_points[0]) if len(zero_points) else 0)
        dimension = int(q.quantized_dimension)
    else:
        scales = np.zeros(0, dtype=np.float32)
        zero_points = np.zeros(0, dtype=np.int32)
        quantization = (0.0, 0)
        dimension = 0
    dtype = NUMPY_DTYPES.get(tensor.type)
    signature = tensor.shape_signature if tensor.shape_signature is not None else tensor.shape
    return {
        "name": tensor.name,
        "index": tensor.index,
        "shape": np.array(tensor.shape, dtype=np.int32),
        "shape_signature": np.array(signature, dtype=np.int32),
        "dtype": None if dtype is None else dtype.type,
        "quantization": quantization,
        "quantization_parameters": {"scales": scales, "zero_points": zero_points,
                                    "quantized_dimension": dimension},
        "sparsity_parameters": {},
    }


def _eval_fn(reg: Registration) -> EvalFn:
    """The kernel's eval; ``_resolve`` has already refused models with an op that has none."""
    if reg.eval is None:
        raise UnsupportedOpError(f"{reg.name} has no eval kernel in tinyarena yet (its arena "
                                 f"size is known: use tinyarena.allocate_model for sizing)",
                                 op_name=reg.name)
    return reg.eval


def _subgraph_views(arena: np.ndarray, sg: Subgraph,
                    offsets: Mapping[tuple[int, int], int]) -> SubgraphViews:
    arrays: list[np.ndarray | None] = []
    byte_views: list[np.ndarray | None] = []
    for t in sg.tensors:
        offset = offsets.get((sg.index, t.index))
        if t.data is not None:
            data = t.data
            arrays.append(data)
            byte_views.append(data.reshape(-1).view(np.uint8))
        elif offset is not None:
            typed, raw = _tensor_view(arena, int(offset), t)
            arrays.append(typed)
            byte_views.append(raw)
        elif t.element_count == 0 and t.type in NUMPY_DTYPES:  # nothing to plan, still an array
            arrays.append(np.empty(t.shape, NUMPY_DTYPES[t.type]))
            byte_views.append(np.empty(0, np.uint8))
        else:
            arrays.append(None)
            byte_views.append(None)
    return SubgraphViews(tuple(arrays), tuple(byte_views))


def _make_workspaces(layout: ArenaLayout) -> tuple[tuple[np.ndarray, ...],
                                                   tuple[np.ndarray, ...], np.ndarray]:
    """Every requested workspace as an array made once: (views by handle, buffers, pool).

    A persistent workspace (the default) is a zeroed array of its own: it keeps its contents
    from one invoke to the next (a border filled once, CALL_ONCE's flag). Scratch workspaces
    (``persistent=False``: undefined at the start of every eval) are views into one shared
    pool: the scratch of one op is laid out back to back, each buffer 64-byte aligned, and
    every op starts at the pool's start, so the pool is as large as the largest op's scratch.
    ``buffers`` lists the memory actually held: the persistent arrays, then the pool.
    A persistent workspace with initial contents (``request_workspace(..., initial=)``: e.g.
    weights converted in prepare) is that read-only array itself, counted like the others.
    """
    flags = layout.workspace_persistent
    initial = layout.workspace_initial
    owners = layout.workspace_owners
    specs = [(tuple(int(d) for d in shape), np.dtype(dtype))
             for shape, dtype in layout.workspaces]
    offsets: dict[int, int] = {}
    ends: dict[tuple[int, int], int] = {}
    for handle, (shape, dtype) in enumerate(specs):
        if handle < len(flags) and not flags[handle]:
            owner = owners[handle] if handle < len(owners) else (-1, handle)
            start = _align_up(ends.get(owner, 0), WORKSPACE_ALIGNMENT)
            offsets[handle] = start
            ends[owner] = start + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    pool_bytes = _align_up(max(ends.values(), default=0), WORKSPACE_ALIGNMENT)
    raw = np.zeros(pool_bytes + WORKSPACE_ALIGNMENT, dtype=np.uint8)
    skip = -raw.ctypes.data % WORKSPACE_ALIGNMENT
    pool = raw[skip:skip + pool_bytes]
    views: list[np.ndarray] = []
    kept: list[np.ndarray] = []
    for handle, (shape, dtype) in enumerate(specs):
        if handle in offsets:
            size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
            start = offsets[handle]
            views.append(pool[start:start + size].view(dtype).reshape(shape))
        else:
            given = initial[handle] if handle < len(initial) else None
            array = np.zeros(shape, dtype=dtype) if given is None else \
                initial_array(shape, dtype, given)
            views.append(array)
            kept.append(array)
    return tuple(views), (*kept, pool), pool


def _align_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def _scratch_views(arena: np.ndarray, layout: ArenaLayout) -> tuple[np.ndarray, ...]:
    """Scratch buffer ``handle`` as uint8 bytes at its planned offset (unrounded size)."""
    sizes = {b.index: b.nbytes for b in layout.buffers if b.kind == "scratch"}
    return tuple(arena[int(offset):int(offset) + int(sizes.get(handle, 0))]
                 for handle, offset in enumerate(layout.scratch_offsets))


def _resource_views(arena: np.ndarray, layout: ArenaLayout,
                    model: Model) -> tuple[tuple[np.ndarray, int], ...]:
    """(tail buffer, reset byte) of every resource variable, in resource-id order.

    The buffer is the tail allocation at the resource's address; its fill value is
    MicroResourceVariables::Allocate's default: the zero point of the first assigned value
    when that tensor is quantized, else 0.
    """
    sizes = {t.address: t.requested for t in layout.tail_allocations}
    defaults = _resource_defaults(model, layout)
    return tuple((arena[int(offset):int(offset) + int(sizes[offset])], defaults.get(rid, 0))
                 for rid, offset in enumerate(layout.resource_offsets))


def _resource_defaults(model: Model, layout: ArenaLayout) -> dict[int, int]:
    bound: dict[tuple[int, int], int] = {}
    defaults: dict[int, int] = {}
    for sg in model.subgraphs:
        for op in sg.operators:
            data = layout.op_data.get((sg.index, op.index))
            if op.name == "VAR_HANDLE" and data is not None:
                bound[(sg.index, op.outputs[0])] = int(data.resource_id)
            elif op.name == "ASSIGN_VARIABLE" and len(op.inputs) == 2:
                rid = bound.get((sg.index, op.inputs[0]))
                if rid is not None and rid not in defaults:
                    q = sg.tensors[op.inputs[1]].quantization
                    quantized = q is not None and len(q.scale) > 0 and len(q.zero_point) > 0
                    defaults[rid] = int(q.zero_point[0]) if quantized and q is not None else 0
    return defaults


def _resource_handle_views(arena: np.ndarray,
                           layout: ArenaLayout) -> dict[tuple[int, int], np.ndarray]:
    """VAR_HANDLE outputs, which TFLM points at the op's OpData in the tail (VarHandlePrepare):
    (subgraph, tensor) -> int32 view of that OpData's resource_id."""
    return {key: arena[address:address + 4].view(np.int32)
            for key, address in layout.bound_tensor_offsets.items()
            if key not in layout.tensor_offsets}


def _categories(layout: ArenaLayout) -> dict[str, tuple[int, int, int]]:
    result = {}
    for name, usage in layout.categories.items():
        result[name] = (int(usage.used), int(usage.requested), int(usage.count))
    return result


def _with_handles(views: SubgraphViews, subgraph: int,
                  handles: Mapping[tuple[int, int], np.ndarray]) -> SubgraphViews:
    arrays = list(views.arrays)
    byte_views = list(views.byte_views)
    for (sg, index), view in handles.items():
        if sg == subgraph:
            arrays[index] = view
            byte_views[index] = view.view(np.uint8)
    return SubgraphViews(tuple(arrays), tuple(byte_views))


def _with_alternate(views: SubgraphViews, sg: Subgraph, memory: np.ndarray,
                    offsets: Mapping[tuple[int, int], int]) -> SubgraphViews:
    """TFLM_DECODE outputs TFLM put in the alternate decompression memory: views there."""
    arrays = list(views.arrays)
    byte_views = list(views.byte_views)
    for (subgraph, index), offset in offsets.items():
        if subgraph == sg.index:
            arrays[index], byte_views[index] = _tensor_view(memory, offset, sg.tensors[index])
    return SubgraphViews(tuple(arrays), tuple(byte_views))


def _live_after_invoke(layout: ArenaLayout, sg: Subgraph) -> frozenset[int]:
    """Subgraph-0 tensors whose bytes no buffer first used after their last use overlaps.

    The greedy plan lets buffers share memory only when their lifetimes are disjoint, so a
    tensor's data survives the invoke unless a buffer that starts after its last use overlaps
    it in the arena. Variable tensors live in the tail and always survive.
    """
    planned = [b for b in layout.buffers]
    live: set[int] = set()
    mine = {b.index: b for b in planned if b.kind == "tensor" and b.subgraph == sg.index}
    for t in sg.tensors:
        if t.is_variable and (sg.index, t.index) in layout.tensor_offsets and t.index not in mine:
            live.add(t.index)
            continue
        own = mine.get(t.index)
        if own is None:
            continue
        start, end = own.offset, own.offset + own.size
        clobbered = any(
            b is not own and b.first > own.last and b.offset < end and start < b.offset + b.size
            for b in planned)
        if not clobbered:
            live.add(t.index)
    return frozenset(live)


__all__ = ["AllocationReport", "Interpreter", "render_allocations"]
