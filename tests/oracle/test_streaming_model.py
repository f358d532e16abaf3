"""The microWakeWord-shaped streaming benchmark model against the live wheel, over invokes."""

from __future__ import annotations

import numpy as np
import pytest

import tinyarena
from tflm_oracle import tflm_invokes
from tinyarena.examples.streaming import streaming_model

pytestmark = pytest.mark.oracle


def test_streaming_model_matches_the_wheel_invoke_after_invoke() -> None:
    model = streaming_model()
    ops = [len(sg.operators) for sg in tinyarena.read_model(model).subgraphs]
    assert ops[0] >= 55  # ~60 small ops per invoke, as microWakeWord models have
    rng = np.random.default_rng(3)
    feeds = [[rng.integers(-128, 128, size=(1, 3, 40)).astype(np.int8)] for _ in range(8)]
    want = tflm_invokes(model, feeds)
    ip = tinyarena.Interpreter(model)
    ip.allocate_tensors()
    got = []
    for (x,) in feeds:
        ip.set_input(0, x)
        ip.invoke()
        got.append(ip.get_output(0))
    assert len({int(w[0].reshape(-1)[0]) for w in want}) > 1  # the state changes the output
    for w, g in zip(want, got):
        assert g.dtype == w[0].dtype and np.array_equal(g, w[0])
