"""Several invokes in a row, in the wheel and through tinyarena's kernels, keeping state.

SVDF and UNIDIRECTIONAL_SEQUENCE_LSTM update variable tensors that persist between invokes.
``kernel_runner.run_kernels`` runs one invoke; this helper keeps the storage (and therefore
the variable tensors) across invokes, as the interpreter does. The wheel's side of the
comparison is ``tflm_oracle.tflm_invokes``.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from kernel_runner import _Context, _storage
from tinyarena.kernels import registration
from tinyarena.model import read_model


def kernels_invokes(model_bytes: bytes, steps: Sequence[Sequence[np.ndarray]]
                    ) -> list[list[np.ndarray]]:
    """Outputs of each invoke, with init/prepare once and variables kept between invokes."""
    model = read_model(model_bytes)
    sg = model.subgraphs[0]
    arrays = {t.index: _storage(t) for t in sg.tensors}
    ctx = _Context(model, sg, arrays)
    regs = [registration(op.name) for op in sg.operators]
    for reg, op in zip(regs, sg.operators):
        if reg.init is not None:
            reg.init(ctx, op)
    op_data: list[Any] = [reg.prepare(ctx, op) if reg.prepare is not None else None
                          for reg, op in zip(regs, sg.operators)]
    results = []
    for inputs in steps:
        for i, data in zip(sg.inputs, inputs):
            arrays[i][...] = np.asarray(data).reshape(arrays[i].shape)
        for reg, op, data in zip(regs, sg.operators, op_data):
            assert reg.eval is not None, f"{op.name} has no eval yet"
            reg.eval(ctx, op, data)
        results.append([np.array(arrays[i], copy=True) for i in sg.outputs])
    return results


def max_ulp_diff(a: np.ndarray, b: np.ndarray) -> int:
    """Largest distance in float32 units in the last place between two float32 arrays."""
    ia = np.asarray(a, dtype=np.float32).view(np.int32).astype(np.int64)
    ib = np.asarray(b, dtype=np.float32).view(np.int32).astype(np.int64)
    ia = np.where(ia < 0, -(ia & 0x7FFFFFFF), ia)  # map to a monotonic integer line
    ib = np.where(ib < 0, -(ib & 0x7FFFFFFF), ib)
    return int(np.max(np.abs(ia - ib))) if ia.size else 0


def skip_unless_all_kernels(model_bytes: bytes) -> None:
    """Skip (not fail) an end-to-end test while another op of the model has no eval yet."""
    import pytest

    from tinyarena.errors import UnsupportedOpError

    for op in read_model(model_bytes).subgraphs[0].operators:
        try:
            reg = registration(op.name)
        except UnsupportedOpError:
            pytest.skip(f"{op.name} has no kernel yet")
        if reg.eval is None:
            pytest.skip(f"{op.name} has no eval yet")


def assert_same_as_tflm(model_bytes: bytes, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """One invoke in the wheel and through the kernel runner; outputs must be identical."""
    from kernel_runner import run_kernels
    from tflm_oracle import tflm_run

    want = tflm_run(model_bytes, inputs)
    got = run_kernels(model_bytes, inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.shape, w.shape)
        assert np.array_equal(g, w), (g, w)
    return got
