"""Eval of the control-flow and resource-variable kernels (IF, WHILE, CALL_ONCE, VAR_HANDLE,
ASSIGN_VARIABLE, READ_VARIABLE).

Their allocation behaviour lives in the per-op modules (``if_.py``, ...); this module holds
what they do at invoke time, as TFLM's ``IfEval``, ``WhileEval``, ``CallOnceEval``,
``VarHandleEval``, ``AssignVariable``'s and ``ReadVariable``'s ``Eval`` do. They need a context
that can run subgraphs and reach resource buffers: the interpreter's ``ArenaEvalContext``
(``subgraph_input_bytes``, ``subgraph_output_bytes``, ``resource_buffer``). The one check their
Prepare functions share, that referenced subgraphs exist, is here too.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._bound import items, nothing
from tinyarena.kernels.native import quiet


def check_subgraph_indices(ctx: Any, op_name: str, indices: Sequence[int]) -> None:
    """IfPrepare / WhilePrepare / CallOncePrepare: each subgraph the options name must exist."""
    for index in indices:
        if not 0 <= index < ctx.subgraph_count():
            raise KernelError(f"{op_name} refers to subgraph {index}, but the model has "
                              f"{ctx.subgraph_count()}")


def _copy(destinations: Sequence[np.ndarray], sources: Sequence[np.ndarray], what: str) -> None:
    """tflite::micro::Copy*: byte copies of equal-sized tensors, skipped when they alias."""
    if len(destinations) != len(sources):
        raise KernelError(f"{what}: {len(sources)} tensors for {len(destinations)} places")
    for dst, src in zip(destinations, sources):
        if dst.nbytes != src.nbytes:
            raise KernelError(f"{what}: {src.nbytes} bytes copied into {dst.nbytes}")
        if dst.__array_interface__["data"][0] != src.__array_interface__["data"][0]:
            np.copyto(dst, src)


def _bool_scalar(array: np.ndarray) -> bool:
    return bool(array.reshape(-1)[0])


def eval_if(ctx: Any, op: Any, data: Any) -> None:
    """IfEval: copy inputs 1.. into the chosen branch, run it, copy its outputs back."""
    options = op.options
    branch = (options.then_subgraph_index if _bool_scalar(ctx.tensor_data(op.inputs[0]))
              else options.else_subgraph_index)
    _copy(ctx.subgraph_input_bytes(branch),
          [ctx.tensor_bytes(i) for i in op.inputs[1:]], "IF inputs")
    ctx.invoke_subgraph(branch)
    _copy([ctx.tensor_bytes(i) for i in op.outputs],
          ctx.subgraph_output_bytes(branch), "IF outputs")


def eval_while(ctx: Any, op: Any, data: Any) -> None:
    """WhileEval: outputs start as the inputs; run body while cond's first output is true."""
    cond = op.options.cond_subgraph_index
    body = op.options.body_subgraph_index
    outputs = [ctx.tensor_bytes(i) for i in op.outputs]
    _copy(ctx.subgraph_input_bytes(cond), [ctx.tensor_bytes(i) for i in op.inputs],
          "WHILE inputs")
    _copy(outputs, [ctx.tensor_bytes(i) for i in op.inputs], "WHILE inputs to outputs")
    ctx.invoke_subgraph(cond)
    cond_out = ctx.subgraph_output_bytes(cond)[0]
    while bool(cond_out[0]):
        _copy(ctx.subgraph_input_bytes(body), outputs, "WHILE body inputs")
        ctx.invoke_subgraph(body)
        _copy(outputs, ctx.subgraph_output_bytes(body), "WHILE body outputs")
        _copy(ctx.subgraph_input_bytes(cond), outputs, "WHILE cond inputs")
        ctx.invoke_subgraph(cond)


def eval_call_once(ctx: Any, op: Any, data: Any) -> None:
    """CallOnceEval: run the init subgraph on the first invoke only.

    ``has_run`` lives in a one-element workspace requested in prepare (TFLM keeps it in the
    op's persistent OpData, which Reset does not clear either).
    """
    has_run = ctx.workspace(_workspace_handle(data))
    if has_run[0]:
        return
    ctx.invoke_subgraph(op.options.init_subgraph_index)
    has_run[0] = True


def _workspace_handle(data: Any) -> int:
    handle = getattr(data, "has_run_workspace", None)
    if handle is None:
        raise KernelError("CALL_ONCE prepared without its has_run workspace")
    return int(handle)


def eval_var_handle(ctx: Any, op: Any, data: Any) -> None:
    """VarHandleEval: the output holds the resource id found in prepare."""
    ctx.tensor_data(op.outputs[0]).reshape(-1)[0] = _resource_id(data)


def _resource_id(data: Any) -> int:
    rid = data if isinstance(data, int) else getattr(data, "resource_id", None)
    if rid is None:
        raise KernelError("VAR_HANDLE prepared without a resource id")
    return int(rid)


def eval_assign_variable(ctx: Any, op: Any, data: Any) -> None:
    """AssignVariable Eval: MicroResourceVariables::Assign copies the value's bytes."""
    rid = int(ctx.tensor_data(op.inputs[0]).reshape(-1)[0])
    _copy([ctx.resource_buffer(rid)], [ctx.tensor_bytes(op.inputs[1])], "ASSIGN_VARIABLE")


def eval_read_variable(ctx: Any, op: Any, data: Any) -> None:
    """ReadVariable Eval: MicroResourceVariables::Read copies the buffer into the output."""
    rid = int(ctx.tensor_data(op.inputs[0]).reshape(-1)[0])
    _copy([ctx.tensor_bytes(op.outputs[0])], [ctx.resource_buffer(rid)], "READ_VARIABLE")


# -- bound steps (kernels.base: bind) ------------------------------------------------------------
#
# The resource id a READ/ASSIGN_VARIABLE sees is data (the int32 its VAR_HANDLE's OpData holds),
# so it is still read per invoke, but as one memoryview item; the buffers and their byte views
# are looked up once. A copy whose sizes do not match, or an unknown id, falls back to eval,
# which raises the error eval always raised. None of these steps does float arithmetic, so they
# are quiet (kernels.native.quiet): an invoke of quiet steps needs no np.errstate. CALL_ONCE's
# subgraph is a plan of its own, which sets the error state itself when it needs it.


def reset_var_handle(ctx: Any, op: Any, data: Any) -> None:
    """The output is the OpData's ``resource_id``, which VarHandlePrepare sets: written into
    the arena's tail when the interpreter allocates and resets (after it clears the arena),
    as Prepare leaves it in TFLM, so that invoke has nothing to do."""
    ctx.tensor_data(op.outputs[0]).reshape(-1)[0] = _resource_id(data)


def bind_var_handle(ctx: Any, op: Any, data: Any) -> Callable[[], None]:
    """VarHandleEval only points the output at the OpData: the id is in place since reset
    (``reset_var_handle``; nothing else writes the tail), so the step does nothing."""
    _resource_id(data)  # the error eval would raise, at bind time
    return nothing


def _resource_pairs(ctx: Any, tensor: np.ndarray, to_resource: bool
                    ) -> dict[int, tuple[memoryview, memoryview]]:
    """Resource id -> (destination, source) byte views of the copy between it and ``tensor``;
    ids whose buffer has another size are left out (eval's error)."""
    pairs = {}
    mine = tensor.reshape(-1).view(np.uint8).data
    for rid, buffer in enumerate(ctx.resource_buffers()):
        if buffer.nbytes != tensor.nbytes:
            continue
        theirs = buffer.reshape(-1).view(np.uint8).data
        if _address(buffer) == _address(tensor):  # one buffer: nothing to copy
            theirs = mine = theirs[:0]
        pairs[rid] = (theirs, mine) if to_resource else (mine, theirs)
    return pairs


def _address(array: np.ndarray) -> int:
    return int(array.__array_interface__["data"][0])


def _int_cell(array: np.ndarray) -> Any:
    """An int32/int64 array's elements as a memoryview (element 0: ~50 ns, numpy ~200)."""
    if array.dtype not in (np.int32, np.int64) or array.size < 1 or \
            not array.flags.c_contiguous:
        return None
    return items(array)


def bind_read_variable(ctx: Any, op: Any, data: Any) -> Callable[[], None]:
    return _bind_variable_copy(ctx, op, data, ctx.tensor_bytes(op.outputs[0]), False,
                               eval_read_variable)


def bind_assign_variable(ctx: Any, op: Any, data: Any) -> Callable[[], None]:
    return _bind_variable_copy(ctx, op, data, ctx.tensor_bytes(op.inputs[1]), True,
                               eval_assign_variable)


def _bind_variable_copy(ctx: Any, op: Any, data: Any, tensor: np.ndarray, to_resource: bool,
                        fallback: Callable[[Any, Any, Any], None]) -> Callable[[], None]:
    handle = ctx.tensor_data(op.inputs[0])
    cell = _int_cell(handle)
    pairs = _resource_pairs(ctx, tensor, to_resource)
    if cell is None:
        flat = handle.reshape(-1)

        def any_handle() -> None:
            pair = pairs.get(int(flat[0]))
            if pair is None:
                fallback(ctx, op, data)
            else:
                dst, src = pair
                dst[:] = src
        return quiet(any_handle)

    def step() -> None:
        pair = pairs.get(cell[0])
        if pair is None:  # an id with no buffer of this size: eval raises what it raises
            fallback(ctx, op, data)
        else:
            dst, src = pair
            dst[:] = src
    return quiet(step)


def bind_call_once(ctx: Any, op: Any, data: Any) -> Callable[[], None]:
    has_run = items(ctx.workspace(_workspace_handle(data)))
    init = op.options.init_subgraph_index
    invoke = ctx.invoke_subgraph

    def step() -> None:
        if has_run[0]:
            return
        invoke(init)
        has_run[0] = 1
    return quiet(step)


__all__ = ["bind_assign_variable", "bind_call_once", "bind_read_variable", "bind_var_handle",
           "eval_assign_variable", "eval_call_once", "eval_if", "eval_read_variable",
           "eval_var_handle", "eval_while", "reset_var_handle"]
