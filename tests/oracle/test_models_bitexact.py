"""Every model in ../shared/models through tinyarena.Interpreter and through the wheel.

Outputs must be identical (np.array_equal) on several random inputs per model, and on
person_detect with TFLM's own test images; every tensor must sit at the memory model's offset,
and the arena must report the wheel's arena_used_bytes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tinyarena
from tflm_oracle import tflm_allocations, tflm_run
from tinyarena.interpreter.inputs import load_inputs, random_inputs

pytestmark = pytest.mark.oracle

SEEDS = (0, 1, 2)
# Every output must be identical to the wheel's, float32 included (measured: 0 ulp on every
# model here). A float mismatch is reported as its distance in ulp.
FLOAT_ULPS = 0


def _interpreter(path: Path) -> tinyarena.Interpreter:
    ip = tinyarena.Interpreter(path)
    ip.allocate_tensors()
    return ip


def _run(ip: tinyarena.Interpreter, inputs: list[np.ndarray]) -> list[np.ndarray]:
    for i, x in enumerate(inputs):
        ip.set_input(x, i)
    ip.invoke()
    return [ip.get_output(i) for i in range(ip.outputs_size())]


def _assert_same(got: list[np.ndarray], want: list[np.ndarray], what: str) -> None:
    assert len(got) == len(want), what
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, f"{what} output {k}"
        if g.dtype == np.float32:
            ulps = _ulp_distance(g, w)
            assert ulps <= FLOAT_ULPS, f"{what} output {k}: {ulps} ulp from the wheel"
            continue
        assert np.array_equal(g, w), (
            f"{what} output {k}: {np.count_nonzero(g != w)} of {g.size} elements differ")


def _ulp_distance(a: np.ndarray, b: np.ndarray) -> int:
    """Largest distance in representable float32 values between corresponding elements."""
    def ordered(x: np.ndarray) -> np.ndarray:
        i = x.astype(np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    if a.size == 0:
        return 0
    return int(np.max(np.abs(ordered(a) - ordered(b))))


def test_outputs_are_bit_exact(shared_model_name: str, shared_models: Path) -> None:
    path = shared_models / f"{shared_model_name}.tflite"
    model = path.read_bytes()
    ip = _interpreter(path)
    details = ip.get_input_details()
    for seed in SEEDS:
        inputs = random_inputs(details, seed)
        ip.reset()  # stateful models (variables) start from the wheel's fresh state
        _assert_same(_run(ip, inputs), tflm_run(model, inputs), f"{shared_model_name} seed {seed}")


def test_tensors_at_memory_model_offsets(shared_model_name: str, shared_models: Path) -> None:
    path = shared_models / f"{shared_model_name}.tflite"
    ip = _interpreter(path)
    layout = tinyarena.allocate_model(tinyarena.read_model(path.read_bytes()),
                                      arena_size=ip.arena.nbytes)
    base = int(ip.arena.__array_interface__["data"][0])
    for sg in ip.model.subgraphs:
        for t in sg.tensors:
            offset = layout.tensor_offsets.get((sg.index, t.index))
            if offset is None:
                continue
            view = ip._allocated().views[sg.index].arrays[t.index]
            assert int(view.__array_interface__["data"][0]) - base == offset, t.name
    assert ip.arena_used_bytes() == tflm_allocations(path.read_bytes()).total


@pytest.mark.parametrize("image, person_wins", [("person.bmp", True), ("no_person.bmp", False)])
def test_person_detect_on_tflm_test_images(image: str, person_wins: bool,
                                           shared_models: Path) -> None:
    path = shared_models / "person_detect.tflite"
    ip = _interpreter(path)
    inputs = load_inputs(shared_models / "testdata" / image, ip.get_input_details())
    got = _run(ip, inputs)
    _assert_same(got, tflm_run(path.read_bytes(), inputs), image)
    no_person, person = (int(v) for v in got[0].reshape(-1))  # kNotAPersonIndex 0, kPerson 1
    assert (person > no_person) == person_wins
