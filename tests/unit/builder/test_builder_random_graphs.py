"""The random-graph generator: valid, deterministic models that the wheel and LiteRT agree on."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from litert_runner import litert_run
from tflm_oracle import tflm_run

from tinyarena.builder.random_graphs import BLOCKS, models, random_model
from tinyarena.errors import BuildError
from tinyarena.model import read_model


def test_random_model_is_deterministic() -> None:
    assert random_model(7).model == random_model(7).model
    assert random_model(7).model != random_model(8).model


def test_random_models_cover_every_block_and_join() -> None:
    made = [random_model(seed) for seed in range(40)]
    assert {b for m in made for b in m.blocks} == set(BLOCKS)
    ops = {op for m in made for op in m.ops}
    assert {"ADD", "CONCATENATION", "CONV_2D", "SOFTMAX"} <= ops


def test_random_model_reads_back_with_its_ops_in_order() -> None:
    r = random_model(3, dtype="float32", max_blocks=4)
    model = read_model(r.model)
    assert tuple(op.name for op in model.subgraphs[0].operators) == r.ops
    (x,) = model.subgraphs[0].inputs
    assert model.subgraphs[0].tensors[x].shape == r.inputs[0].shape


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("seed", range(8))
def test_random_model_agrees_in_wheel_and_litert(seed: int, dtype: str) -> None:
    r = random_model(seed, dtype=dtype)
    (ours,) = tflm_run(r.model, r.inputs)
    (theirs,) = litert_run(r.model, r.inputs)
    if dtype == "int8":
        assert np.array_equal(ours, theirs)
    else:
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4)


@pytest.mark.oracle
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models(max_blocks=3))
def test_random_models_strategy_runs_in_wheel(r) -> None:
    (out,) = tflm_run(r.model, r.inputs)
    assert out.dtype == np.int8


def test_random_model_rejects_unknown_choices() -> None:
    with pytest.raises(BuildError, match="unknown"):
        random_model(0, blocks=("spiral",))
    with pytest.raises(BuildError, match="int8 or float32"):
        random_model(0, dtype="int16")
