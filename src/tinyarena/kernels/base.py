"""The contract between kernels and the layers that run them.

A kernel is one module, ``kernels/<op>.py``, that ports one TFLM kernel: its allocation
behaviour (what TFLM's Init and Prepare allocate, so that the emulated arena stays byte-exact)
and its arithmetic (bit-exact with TFLM's reference kernels). The module ends with::

    REGISTRATION = Registration("CONV_2D", init=init, prepare=prepare, eval=eval_,
                                builtin_data="TfLiteConvParams")

Lifecycle, as in TFLM's micro_context.h:

* ``init(ctx, op)`` runs once per operator, for all operators of all subgraphs, before any
  prepare. It may only call ``ctx.allocate_persistent`` (TFLM: the OpData allocation).
* ``prepare(ctx, op)`` runs once per operator, in subgraph then operator order. It may allocate
  temp tensors (``ctx.allocate_temp_tensor``, bookkeeping only: TFLM's AllocateTemp*Tensor),
  persistent buffers, scratch buffers in the head (``ctx.request_scratch``) and Python-side
  workspaces outside the arena (``ctx.request_workspace``; ``persistent=False`` for per-eval
  scratch, which all ops share; ``initial=`` for constant data derived from the model, such as
  weights converted for a GEMM). It returns the op's data (a frozen dataclass: multipliers,
  shifts, scratch and workspace handles), which eval receives. Large arrays belong in
  workspaces, not in the op data: ``Interpreter.workspace_bytes()`` counts workspaces only, so
  op data keeps just per-channel constants (a few bytes per channel).
* ``eval(ctx, op, data)`` runs at every invoke. It reads inputs and writes outputs through
  ``ctx.tensor_data(i)`` (numpy views into the arena), and allocates nothing in the arena.
* ``reset(ctx, op, data)`` (optional, TFLMRegistration::reset) runs when the interpreter is
  reset (``MicroInterpreter::Reset``): a kernel that keeps state between invokes in its
  persistent workspaces (the signal library's circular buffers) puts it back as Prepare left it.
* ``bind(ctx, op, data)`` (optional) runs once per ``allocate_tensors``, after every view and
  workspace exists, and returns a zero-argument callable that does what ``eval(ctx, op, data)``
  does. It looks up once what eval would look up at every invoke (the arena views of the
  tensors, workspaces, constants from ``data``) and closes over them, so an invoke is a plain
  sequence of calls (``interpreter.invoke_plan``). It must give bit-identical results, allocate
  nothing per call, and keep ``eval`` as the reference path; a kernel without ``bind`` runs as
  a closure around its eval. ``bind`` may return ``None`` to decline (e.g. an unusual layout):
  eval is used then.

``op`` is the ``tinyarena.model.types.Operator`` being run. ``ctx.target`` is the target
profile (struct sizes per target, see ``arena.targets``); sizes that differ between targets are
looked up by their C struct name, e.g. ``ctx.target.sizeof("OpDataConv")``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.model.types import Operator, Tensor


class Target(Protocol):
    # Read-only members: the allocator passes a frozen ``arena.targets.TargetProfile``.
    @property
    def name(self) -> str: ...

    @property
    def cmsis_nn_isa(self) -> str | None:
        """CMSIS-NN's code path on this core: "plain", "dsp", "mve" (None: no CMSIS-NN)."""
        ...

    @property
    def esp_nn_dispatch(self) -> str | None:
        """esp_nn.h's dispatch on this chip: "esp32s3", "esp32p4", "generic" (None: no ESP-NN)."""
        ...

    @property
    def esp_nn_version(self) -> str | None:
        """The esp-nn release the build links (its scratch-size formulas), e.g. "1.2.3"."""
        ...

    @property
    def core(self) -> str | None:
        """The Cortex-M core of a device build (``"cortex-m55"``); None for the host wheel and
        the generic ABI profiles."""
        ...

    @property
    def kernels_optimized_for_speed(self) -> bool: ...

    @property
    def float_fma(self) -> bool:
        """Float ``a * b + c`` is one fused multiply-add in this build (hard-float FPU)."""
        ...

    @property
    def libm(self) -> str:
        """The C library float kernels call ``expf`` from (``kernels._libm.expf_for``)."""
        ...

    def sizeof(self, struct: str) -> int: ...

    def alignof(self, struct: str) -> int: ...


class InitContext(Protocol):
    @property
    def target(self) -> Target: ...

    def allocate_persistent(self, nbytes: int) -> int:
        """TFLM's AllocatePersistentBuffer (16-aligned, tail). Returns a handle."""
        ...


class PrepareContext(InitContext, Protocol):
    def tensor(self, index: int) -> Tensor | None:
        """The model tensor at ``index`` of the current subgraph; None for -1 (omitted input)."""
        ...

    def allocate_temp_tensor(self, index: int) -> None:
        """Bookkeeping for TFLM's AllocateTempInput/Output/IntermediateTensor (temp section)."""
        ...

    def request_scratch(self, nbytes: int, *, eval_writes: int = 0) -> int:
        """TFLM's RequestScratchBufferInArena: a head buffer live only during this op.
        ``eval_writes``: a kernel whose eval writes more than it requested (a bug of that
        kernel, e.g. esp-nn's softmax) says how many bytes from the buffer's start; the
        minimum arena then keeps that overrun clear of the tail."""
        ...

    def request_workspace(self, shape: tuple[int, ...], dtype: Any, *,
                          persistent: bool = True,
                          initial: np.ndarray | Callable[[], np.ndarray] | None = None) -> int:
        """A Python-side buffer outside the emulated arena, made once, reused every invoke.

        ``persistent=True`` (the default): private to this op, zeroed once at allocation, and
        it keeps its contents from one eval to the next (a border filled once, a flag, state).
        ``initial``: a persistent workspace whose contents prepare computes (constants such as
        weights in a GEMM's dtype), or a zero-argument callable that computes them: sizing
        (``allocate_model``) then never pays for it, only the interpreter does, once. The
        context keeps that very array, read-only, as the workspace (no second copy), so eval
        reads it through ``ctx.workspace`` and the bytes are counted with the other
        workspaces; shape and dtype must match. Prepare may run
        more than once (the allocator sizes the arena in several passes): it must not keep
        the array anywhere else.
        ``persistent=False``: scratch. Its contents are undefined at the start of every eval of
        this op (other ops' scratch shares the same memory), so eval must write every element
        before reading it. Scratch buffers of one op never overlap each other, and never
        overlap the arena or any persistent workspace. An op that invokes a subgraph must not
        keep scratch contents across ``invoke_subgraph`` (the subgraph's ops reuse the pool).
        """
        ...

    def subgraph_count(self) -> int: ...

    def reset_decompression_memory(self) -> None:
        """MicroContext::ResetDecompressionMemoryAllocations (TFLM_DECODE's Prepare)."""
        ...

    def decompress_into_alternate_memory(self, tensor_index: int) -> bool:
        """TFLM_DECODE's SetOutputTensorData: put an output in the alternate decompression
        memory when the interpreter has one and the bytes fit (the tensor is then not
        planned in the arena). True when it did."""
        ...


class EvalContext(Protocol):
    def tensor(self, index: int) -> Tensor | None: ...

    def tensor_data(self, index: int) -> np.ndarray:
        """The tensor's bytes in the arena as a numpy array of its shape and dtype."""
        ...

    def scratch(self, handle: int) -> np.ndarray:
        """The scratch buffer's bytes in the arena (uint8, 1-D)."""
        ...

    def workspace(self, handle: int) -> np.ndarray: ...

    def invoke_subgraph(self, index: int) -> None:
        """Run another subgraph (IF, WHILE, CALL_ONCE)."""
        ...


def check_workspace_initial(shape: tuple[int, ...], dtype: Any, persistent: bool,
                            initial: Any) -> Any:
    """Validate ``request_workspace``'s ``initial`` and return it read-only (no copy when it
    is already a C-contiguous array of the dtype; contexts share this check). A callable is
    returned as it is: the context calls it when it makes the workspace (``initial_array``)."""
    if initial is None:
        return None
    if callable(initial):  # made when the interpreter builds its workspaces, never for sizing
        if not persistent:
            raise KernelError("request_workspace: initial contents need persistent=True "
                              "(scratch is undefined at every eval)")
        return initial
    if not persistent:
        raise KernelError("request_workspace: initial contents need persistent=True (scratch "
                          "is undefined at every eval)")
    array = np.ascontiguousarray(initial)
    if array.dtype != np.dtype(dtype) or array.shape != tuple(int(d) for d in shape):
        raise KernelError(f"request_workspace: initial is {array.dtype}{array.shape} but the "
                          f"request is {np.dtype(dtype)}{tuple(shape)}; pass matching ones")
    array.flags.writeable = False
    return array


def initial_array(shape: tuple[int, ...], dtype: Any, initial: Any) -> np.ndarray:
    """The contents of a workspace with ``initial``: the array itself, or what the callable
    given in prepare makes, checked against the request's shape and dtype."""
    made = initial() if callable(initial) else initial
    array = check_workspace_initial(shape, dtype, True, made)
    assert array is not None
    return array


class InvokeAbort(Exception):
    """Raised by an eval that returns TFLM's kTfLiteAbort (CIRCULAR_BUFFER between its
    strides): the interpreter skips the rest of the subgraph and the invoke still succeeds,
    as the wheel's does. Not an error, so not a TinyArenaError."""


InitFn = Callable[[InitContext, Operator], None]
PrepareFn = Callable[[PrepareContext, Operator], Any]
EvalFn = Callable[[EvalContext, Operator, Any], None]
ResetFn = Callable[[EvalContext, Operator, Any], None]
Step = Callable[[], None]
BindFn = Callable[[EvalContext, Operator, Any], "Step | None"]


def required_tensor(ctx: PrepareContext, index: int, op_name: str, role: str) -> Tensor:
    """The tensor at ``index``, which the kernel cannot run without: KernelError naming the op
    and the tensor's role when the model omits it (index -1), as TFLM's TF_LITE_ENSURE does."""
    tensor = ctx.tensor(index) if index >= 0 else None
    if tensor is None:
        raise KernelError(f"{op_name} needs its {role} tensor, but the model omits it "
                          f"(index {index}); give the operator that tensor")
    return tensor


@dataclass(frozen=True)
class Registration:
    """One kernel, as TFLM's TFLMRegistration, plus its parse-time builtin-data struct."""

    name: str
    init: InitFn | None = None
    prepare: PrepareFn | None = None
    eval: EvalFn | None = None
    builtin_data: str | None = None  # C struct allocated when the op's options are parsed
    tflm: bool = True  # False: a tinyarena-only kernel; TFLM has none, so no arena to emulate
    # TFLMRegistration::reset, which MicroInterpreter::Reset calls for every node: kernels
    # that keep state between invokes outside variable tensors (the signal library's rings)
    reset: ResetFn | None = None
    bind: BindFn | None = None  # optional: eval pre-bound to its views (see the module doc)
    # why no host eval can exist (an NPU op), said by `run` instead of "not ported yet"
    eval_refusal: str = ""


def module_registration(module: Any, op_name: str) -> Registration:
    """A kernel module's Registration for ``op_name``: its ``REGISTRATIONS`` entry (a module
    serving several ops, e.g. pooling) or its single ``REGISTRATION``; the same lookup for the
    reference modules and every kernel set's folder."""
    registrations = getattr(module, "REGISTRATIONS", None)
    if registrations is not None:
        found: Registration = registrations[op_name]
        return found
    single: Registration = module.REGISTRATION
    return single
