"""Helpers for the compiled-kernel tests: run one model with ``native=True`` and ``native=False``
side by side and compare every output bit for bit, after checking that the operators under
test really run compiled (a bind that declines would otherwise make the test vacuous)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

import tinyarena
from tinyarena.interpreter.inputs import random_inputs
from tinyarena.kernels.native import is_quiet


def compiled_ops(ip: tinyarena.Interpreter) -> dict[str, bool]:
    """Per operator name of subgraph 0: does every such operator run a compiled step?"""
    plan = ip._alloc.graph._plans[0]
    found: dict[str, bool] = {}
    for step, op in zip(plan.steps, plan.operators):
        found[op.name] = found.get(op.name, True) and is_quiet(step)
    return found


def native_matches_numpy(model: bytes, op_name: str, target: str | None = None,
                         inputs: Sequence[Sequence[np.ndarray]] | None = None,
                         invokes: int = 3, seed: int = 0) -> list[np.ndarray]:
    """Invoke both interpreters ``invokes`` times (or once per entry of ``inputs``) and assert
    bit-identical outputs; returns the native outputs of the last invoke."""
    kw = {} if target is None else {"target": target}
    fast = tinyarena.Interpreter(model, native=True, **kw)
    ref = tinyarena.Interpreter(model, native=False, **kw)
    fast.allocate_tensors()
    ref.allocate_tensors()
    assert compiled_ops(fast).get(op_name), f"{op_name} did not bind a compiled step"
    feeds = list(inputs) if inputs is not None else [
        random_inputs(fast.get_input_details(), seed=seed + k) for k in range(invokes)]
    outputs: list[np.ndarray] = []
    for k, feed in enumerate(feeds):
        for i, x in enumerate(feed):
            fast.input(i)[...] = x
            ref.input(i)[...] = x
        fast.invoke()
        ref.invoke()
        outputs = [np.array(fast.output(i)) for i in range(len(fast.get_output_details()))]
        for i, got in enumerate(outputs):
            want = ref.output(i)
            assert got.dtype == want.dtype and got.shape == want.shape
            assert np.array_equal(got.reshape(-1).view(np.uint8),  # 0-d: view needs 1-d
                                  np.asarray(want).reshape(-1).view(np.uint8)), \
                (op_name, target, k, i, got, want)
    return outputs
