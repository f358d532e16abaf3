"""Invoke as a precompiled sequence of closures, built once per ``allocate_tensors``.

Streaming models run 40-120 small operators per invoke, many times a second, so what an
invoke costs besides the arithmetic matters as much as the arithmetic. Here every operator
becomes one zero-argument callable when the tensors are allocated:

* a kernel whose ``Registration`` has ``bind`` returns its own closure over the arena views,
  workspaces and constants it needs, looked up once (no per-invoke lookups, attribute chains
  or dtype checks);
* any other kernel (every kernel written to the plain init/prepare/eval contract, including
  new ones) runs as ``functools.partial(eval, ctx, op, data)``: a C-level call with its
  arguments already bound.

An invoke is then one loop over the tuple of callables. Nothing is allocated per invoke by the
plan itself; the kernels keep their own no-allocation contract.
"""

from __future__ import annotations

import warnings
from functools import partial
from typing import Any, Sequence

import numpy as np

from tinyarena.errors import KernelError, TinyArenaError
from tinyarena.kernels._bound import nothing
from tinyarena.kernels._ieee import FloatErrorsOff
from tinyarena.kernels.native import CompileFailed, is_quiet, quiet
from tinyarena.kernels.base import BindFn, EvalContext, EvalFn, InvokeAbort, Step
from tinyarena.model.types import Operator


class InvokePlan:
    """One subgraph's operators as bound steps, run in order (MicroInterpreterGraph)."""

    __slots__ = ("_steps", "operators", "subgraph_index", "quiet", "_calls", "_call_ops",
                 "_ignore")

    def __init__(self, steps: Sequence[Step], operators: Sequence[Operator],
                 subgraph_index: int) -> None:
        self.operators = tuple(operators)
        self.subgraph_index = subgraph_index
        self._ignore = FloatErrorsOff()
        self.steps = steps

    @property
    def steps(self) -> tuple[Step, ...]:
        """One step per operator (``nothing`` for an op with nothing to do at invoke)."""
        return self._steps

    @steps.setter
    def steps(self, steps: Sequence[Step]) -> None:
        self._steps: tuple[Step, ...] = tuple(steps)
        # Only compiled steps and byte copies: no numpy arithmetic, so no error state to set
        # (np.errstate costs ~1.7 us, FloatErrorsOff ~0.35: more than a small compiled kernel).
        self.quiet = bool(self._steps) and all(is_quiet(s) for s in self._steps)
        # What an invoke calls: every step but those that do nothing (a RESHAPE planned in
        # place, a VAR_HANDLE whose id is in place since reset), each a distinct object, so
        # that a failing step names its operator without a counter in the loop.
        calls: list[Step] = []
        call_ops: list[Operator | None] = []
        for i, step in enumerate(self._steps):
            if step is nothing:
                continue
            if any(step is c for c in calls):
                step = quiet(partial(step)) if is_quiet(step) else partial(step)
            calls.append(step)
            call_ops.append(self.operators[i] if i < len(self.operators) else None)
        self._calls: tuple[Step, ...] = tuple(calls)
        self._call_ops = tuple(call_ops)

    def run(self) -> None:
        """Every step in order. Float arithmetic runs in C's default IEEE environment (inf and
        NaN, no warnings), as TFLM's kernels do: one errstate for the whole invoke, so that
        bound steps need no per-op switch."""
        step: Step | None = None
        try:
            if self.quiet:
                for step in self._calls:
                    step()
            else:
                token = self._ignore.enter()
                try:
                    for step in self._calls:
                        step()
                finally:
                    self._ignore.leave(token)
        except InvokeAbort:  # kTfLiteAbort (CIRCULAR_BUFFER): the remaining operators do not run
            return
        except TinyArenaError:
            raise
        except Exception as exc:  # a foreign error inside a kernel: name the op
            op = self._operator_of(step)
            where = "" if op is None else \
                f"{op.name} (operator {op.index} of subgraph {self.subgraph_index})"
            raise KernelError(f"{where} failed during invoke: {type(exc).__name__}: {exc}") \
                from exc

    def _operator_of(self, step: Step | None) -> Operator | None:
        """The operator whose step is ``step`` (the loop's last one: the one that raised)."""
        for call, op in zip(self._calls, self._call_ops):
            if call is step:
                return op
        return None


def bind_step(ctx: EvalContext, op: Operator, data: Any, eval_fn: EvalFn,
              bind: BindFn | None) -> Step:
    """The kernel's own bound step when it offers one, else its eval with bound arguments."""
    if bind is not None:
        try:
            step = bind(ctx, op, data)
        except TinyArenaError:
            raise
        except CompileFailed as exc:
            warnings.warn(f"{op.name} (operator {op.index}): its compiled kernel could not be "
                          f"built ({exc}); it runs the numpy kernel instead (same results, "
                          f"slower)", RuntimeWarning, stacklevel=2)
            step = None
        except Exception as exc:
            raise KernelError(f"{op.name} (operator {op.index}) could not bind its tensors: "
                              f"{type(exc).__name__}: {exc}") from exc
        if step is not None:
            return step
    return partial(eval_fn, ctx, op, data)


def compile_plan(ctx: EvalContext, operators: Sequence[Operator], evals: Sequence[EvalFn],
                 binds: Sequence[BindFn | None], op_data: Sequence[Any],
                 subgraph_index: int) -> InvokePlan:
    """Every operator of one subgraph as a step; ``binds`` may be shorter (missing: None)."""
    steps = []
    for i, (op, fn, data) in enumerate(zip(operators, evals, op_data)):
        bind = binds[i] if i < len(binds) else None
        steps.append(bind_step(ctx, op, data, fn, bind))
    return InvokePlan(steps, operators, subgraph_index)


__all__ = ["InvokePlan", "bind_step", "compile_plan"]
