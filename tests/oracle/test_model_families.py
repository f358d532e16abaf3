"""One builder-made model per family of real TFLM models (tests/model_families.py), end to end
against the live wheel: head, tail and every recording category, the minimum arena (the wheel
runs in it and fails 16 bytes below), the outputs of consecutive invokes (the wake-word ring
buffers and the LSTM state carry over), and sizing on the Cortex-M builds with both kernel
sets without a warning. Per-op sweeps live in tests/kernels; this checks the combinations."""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from model_families import FAMILIES
from tflm_oracle import model_random_inputs, tflm_allocations, tflm_fits, tflm_invokes
from tinyarena.arena import allocate_model
from tinyarena.errors import UnsupportedOpError
from tinyarena.interpreter import Interpreter
from tinyarena.model import read_model

pytestmark = pytest.mark.oracle

INVOKES = 3


def _steps(name: str, model: bytes) -> list[list[np.ndarray]]:
    if name == "audio_frontend":  # speech-like int16 samples rather than full-scale noise
        rng = np.random.default_rng(7)
        return [[np.clip(rng.normal(0, 3000, (1, 480)), -32768, 32767).astype(np.int16)]
                for _ in range(INVOKES)]
    return [model_random_inputs(model, seed) for seed in range(INVOKES)]


def _ours(model: bytes, steps: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
    ip = Interpreter(model)
    ip.allocate_tensors()
    results = []
    for inputs in steps:
        for i, x in enumerate(inputs):
            ip.set_input(i, x)
        ip.invoke()
        results.append([np.array(ip.get_output(i), copy=True) for i in range(ip.outputs_size())])
    return results


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_family_matches_wheel(name: str) -> None:
    model = FAMILIES[name]()
    steps = _steps(name, model)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        layout = allocate_model(read_model(model))
        got = _ours(model, steps)
    wheel = tflm_allocations(model, inputs=steps[0])
    assert (layout.head, layout.tail, layout.total) == (wheel.head, wheel.tail, wheel.total), \
        wheel.text
    cats = {k: (v.used, v.requested, v.count) for k, v in layout.categories.items()}
    assert cats == wheel.categories, wheel.text
    want = tflm_invokes(model, steps)
    for step, (g, w) in enumerate(zip(got, want)):
        assert len(g) == len(w)
        for k, (a, b) in enumerate(zip(g, w)):
            assert (a.dtype, a.shape) == (b.dtype, b.shape), (step, k)
            assert np.array_equal(a, b), (step, k, a, b)


def test_family_min_arena() -> None:
    """min_arena is TFLM's threshold: the wheel allocates and invokes in it, not 16 below."""
    names = sorted(FAMILIES)

    def probe(name: str) -> tuple[str, int, bool, bool]:
        model = FAMILIES[name]()
        m = allocate_model(read_model(model)).min_arena
        return name, m, tflm_fits(model, m)[0], tflm_fits(model, m - 16)[0]

    with ThreadPoolExecutor(max_workers=4) as pool:
        for name, m, fits, fits_below in pool.map(probe, names):
            assert fits and not fits_below, (name, m, fits, fits_below)


@pytest.mark.parametrize("target", ["cortex-m0", "cortex-m4", "cortex-m55", "arm32-short-enums"])
@pytest.mark.parametrize("kernel_set", ["reference", "cmsis-nn"])
def test_family_sizes_on_targets(target: str, kernel_set: str) -> None:
    """Every family sizes on the embedded builds, quietly; CMSIS-NN on a core without it is
    a clear refusal, not a number."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in sorted(FAMILIES):
            model = read_model(FAMILIES[name]())
            if kernel_set == "cmsis-nn" and not target.startswith("cortex-m"):
                with pytest.raises(UnsupportedOpError, match="no CMSIS-NN build"):
                    allocate_model(model, target=target, kernel_set=kernel_set)
                continue
            layout = allocate_model(model, target=target, kernel_set=kernel_set)
            assert layout.min_arena >= layout.head + layout.tail > 0, name
