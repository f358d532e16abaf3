"""Vela (Arm Ethos-U) models against TFLM built for Cortex-M55 with the ethos_u kernel.

``ethos_u_device.json`` beside this file holds what that build reported on QEMU mps3-an547
(its ``provenance`` says how): ``arena_used_bytes`` and the minimum working arena of the
production MicroInterpreter, the recording allocator's head and tail, where the inputs and
outputs sit in the arena and what the kernel handed the (stubbed) Ethos-U driver. Two sets:
models with Vela's layout built by ``ethos_u_cases.py`` (always run), and the shared models
compiled by Vela (run when ``ethos-u-vela`` is installed and compiles them to the very bytes
that were measured).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from ethos_u_cases import CASES, build_vela_model
from tinyarena.arena import allocate_model
from tinyarena.arena.other_memory import ethos_u_memory, without_fast_scratch
from tinyarena.kernels import ethos_u
from tinyarena.model import read_model

ORACLE = Path(__file__).resolve().parent / "ethos_u_device.json"
SHARED_MODELS = Path(__file__).resolve().parents[3] / "shared" / "models"
TARGET = "cortex-m55"
VELA_MAIN = "import sys; from ethosu.vela.vela import main; sys.exit(main())"  # `vela` itself
VELA_ARGS = {
    "u55-shared": ["--accelerator-config", "ethos-u55-128"],
    # the same, for a model Vela leaves CPU operators in (a firmware with those kernels too)
    "u55-shared-cpu-ops": ["--accelerator-config", "ethos-u55-128"],
    "u65-dedicated": ["--accelerator-config", "ethos-u65-256", "--system-config",
                      "Ethos_U65_High_End", "--memory-mode", "Dedicated_Sram_384KB"],
}


@lru_cache(maxsize=1)
def _oracle() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(ORACLE.read_text())
    return data


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _check(model: bytes, figures: dict[str, Any]) -> None:
    """Every device figure: sizes, recording head, input/output offsets, the driver's view."""
    parsed = read_model(model)
    layout = allocate_model(parsed, target=TARGET)
    assert (layout.total, layout.min_arena) == (figures["arena_used_bytes"],
                                                figures["min_arena"])
    assert layout.head == figures["recording"]["head"]
    recording = allocate_model(parsed, target=TARGET, allocator="recording")
    assert (recording.tail, recording.total) == (figures["recording"]["tail"],
                                                 figures["recording"]["total"])
    sg = parsed.subgraphs[0]
    for key, tensors in (("inputs", sg.inputs), ("outputs", sg.outputs)):
        assert [{"offset": layout.tensor_offsets[(0, t)],
                 "bytes": sg.tensors[t].tflm_nbytes} for t in tensors] == figures[key]
    op = next(o for o in sg.operators if o.name == ethos_u.CUSTOM_CODE)  # the first one
    call = figures["driver_call"]  # the driver's first call: that operator's
    data = layout.op_data[(0, op.index)]
    assert isinstance(data, ethos_u.EthosUData)
    assert data.cms_data_size == call["cms_data_size"]
    # Eval hands the driver inputs 1.. and the outputs: their sizes and, for tensors in the
    # arena, their offsets there
    handed = [*op.inputs[1:], *op.outputs]
    assert [sg.tensors[t].element_count for t in handed] == call["base_addr_size"]
    for t, offset, nbytes in zip(handed, call["base_addr_arena_offset"],
                                 call["base_addr_size"]):
        if offset is not None:  # in the arena (the weights are in the model, a [0] fast
            assert layout.tensor_offsets[(0, t)] == offset  # scratch has no address)
        elif nbytes:
            assert sg.tensors[t].is_constant
    fast = ethos_u.fast_scratch(parsed)
    assert fast is not None and fast.nbytes == call["base_addr_size"][2]
    # several ethos-u operators share Vela's one scratch: each role is named once
    assert set(ethos_u.vela_roles(parsed).values()) <= set(ethos_u.ROLE_NAMES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_vela_layout_models_match_the_device(case: Any) -> None:
    figures = _oracle()["synthetic"][case.name]
    model = build_vela_model(case)
    assert _sha(model) == figures["model_sha256"], (
        "ethos_u_cases.py built other bytes than were measured: restore the case")
    _check(model, figures)


def test_fast_memory_sizing_is_the_device_arena_of_the_fast_scratch_shaped_0() -> None:
    """--ethos-u-fast-memory's arena without the fast scratch is what TFLM allocated for the
    model whose fast scratch takes no bytes, and the fast memory is the driver's size."""
    by_name = {c.name: c for c in CASES}
    parsed = read_model(build_vela_model(by_name["dedicated_2in_2out"]))
    npu = ethos_u_memory(parsed, target=TARGET)
    device = _oracle()["synthetic"]["dedicated_fast_scratch_0"]
    assert npu is not None and npu.without_fast_scratch is not None and not npu.shared
    assert (npu.without_fast_scratch.total, npu.without_fast_scratch.min_arena) == (
        device["arena_used_bytes"], device["min_arena"])
    assert npu.fast_memory == _oracle()["synthetic"]["dedicated_2in_2out"][
        "driver_call"]["base_addr_size"][2]
    shared = ethos_u_memory(read_model(build_vela_model(by_name["shared_1in_1out"])),
                            target=TARGET)
    assert shared is not None and shared.shared and shared.without_fast_scratch is None


def _vela(name: str, config: str, tmp_path: Path) -> bytes:
    source = SHARED_MODELS / f"{name}.tflite"
    if not source.is_file():
        pytest.skip("../shared/models is not present")
    if importlib.util.find_spec("ethosu") is None:
        pytest.skip("ethos-u-vela is not installed (pip install ethos-u-vela)")
    out = tmp_path / config
    proc = subprocess.run([sys.executable, "-c", VELA_MAIN, str(source), *VELA_ARGS[config],
                           "--output-dir", str(out)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return (out / f"{name}_vela.tflite").read_bytes()


def _vela_cases() -> list[tuple[str, str]]:
    return [(config, name) for config in VELA_ARGS
            for name in sorted(_oracle()["vela"].get(config, {}))]


@pytest.mark.parametrize("config,name", _vela_cases())
def test_vela_compiled_shared_models_match_the_device(config: str, name: str,
                                                      tmp_path: Path) -> None:
    figures = _oracle()["vela"][config][name]
    model = _vela(name, config, tmp_path)
    if _sha(model) != figures["vela_sha256"]:
        pytest.skip(f"this Vela wrote other bytes for {name} than the measured ethos-u-vela "
                    f"5.2.0 did")
    _check(model, figures)
    if config == "u65-dedicated":
        zero = _oracle()["vela"]["u65-dedicated-fast-scratch-0"][name]
        npu = ethos_u_memory(read_model(model), target=TARGET)
        assert npu is not None and npu.without_fast_scratch is not None
        assert (npu.without_fast_scratch.total, npu.without_fast_scratch.min_arena) == (
            zero["arena_used_bytes"], zero["min_arena"])
        _check_sizes(without_fast_scratch(read_model(model)), zero)


def _check_sizes(model: Any, figures: dict[str, Any]) -> None:
    layout = allocate_model(model, target=TARGET)
    assert (layout.total, layout.min_arena, layout.head) == (
        figures["arena_used_bytes"], figures["min_arena"], figures["recording"]["head"])


def test_every_measured_figure_is_exercised() -> None:
    """The JSON names exactly the synthetic cases, and Vela configurations the tests know."""
    data = _oracle()
    assert set(data["synthetic"]) == {c.name for c in CASES}
    assert set(data["vela"]) == {*VELA_ARGS, "u65-dedicated-fast-scratch-0"}
