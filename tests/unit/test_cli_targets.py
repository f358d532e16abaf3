"""``tinyarena targets`` and the ``--target``/``--kernels`` pair on size and plan (issue 9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tinyarena.cli import main

from small_models import hello_world_like

ORACLE = Path(__file__).resolve().parents[3] / "shared" / "device-oracle"
SHARED_MODELS = Path(__file__).resolve().parents[3] / "shared" / "models"

ISA = {"cortex-m0": "plain", "cortex-m0plus": "plain", "cortex-m3": "plain",
       "cortex-m4": "dsp", "cortex-m7": "dsp", "cortex-m33": "dsp",
       "cortex-m55": "mve", "cortex-m85": "mve"}


@pytest.fixture(scope="module")
def fc_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli_targets") / "fc.tflite"
    path.write_bytes(hello_world_like(2))
    return path


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    assert main(argv) == 0
    data: dict = json.loads(capsys.readouterr().out)
    return data


def test_targets_lists_every_core(capsys: pytest.CaptureFixture[str]) -> None:
    rows = {r["name"]: r for r in _json(capsys, ["targets", "--json"])["targets"]}
    assert {"host-x64", "arm32", "arm32-short-enums"} <= rows.keys()
    for core, isa in ISA.items():
        assert (rows[core]["kernels"], rows[core]["cmsis_nn_isa"], rows[core]["allocator"]) == (
            "cmsis-nn", isa, "production")
    assert rows["host-x64"]["kernels"] == "reference"
    assert main(["targets"]) == 0
    text = capsys.readouterr().out
    assert "cortex-m55" in text and "MVE" in text and "--kernels" in text


def test_size_header_names_the_build(capsys: pytest.CaptureFixture[str], fc_model: Path) -> None:
    assert main(["size", str(fc_model), "--target", "cortex-m4"]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    for part in ("cortex-m4", "short enums", "cmsis-nn (DSP", "allocator production",
                 "90b983c2"):
        assert part in header
    data = _json(capsys, ["size", str(fc_model), "--target", "cortex-m4", "--kernels",
                          "reference", "--json"])
    assert (data["target"], data["kernel_set"], data["allocator"]) == (
        "cortex-m4", "reference", "production")
    assert main(["plan", str(fc_model), "--target", "cortex-m55"]) == 0
    assert "cmsis-nn (MVE" in capsys.readouterr().out


def test_cmsis_nn_needs_a_cortex_target(capsys: pytest.CaptureFixture[str],
                                        fc_model: Path) -> None:
    # a usage error (exit 2, issue 19), not a model's failure
    assert main(["size", str(fc_model), "--target", "host-x64", "--kernels", "cmsis-nn"]) == 2
    assert "cortex-m" in capsys.readouterr().err


def test_size_matches_the_device(capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's example: a keyword model on a Cortex-M4 with CMSIS-NN, from the CLI."""
    if not ORACLE.is_dir() or not SHARED_MODELS.is_dir():
        pytest.skip("../shared/device-oracle or ../shared/models absent")
    results = json.loads((ORACLE / "models.json").read_text())["results"]
    model = str(SHARED_MODELS / "kws_ref_model.tflite")
    for config, kernels in (("m4-cmsis-nn", "cmsis-nn"), ("m4-reference", "reference")):
        data = _json(capsys, ["size", model, "--target", "cortex-m4", "--kernels", kernels,
                              "--json"])
        fig = results[config]["kws_ref_model.tflite"]
        assert (data["total"], data["min_arena"]) == (fig["arena_used_bytes"], fig["min_arena"])


def test_size_warns_below_the_safe_minimum(capsys: pytest.CaptureFixture[str]) -> None:
    """An arena TFLM's checks accept but a kernel's Prepare overlaps (the device hard-faults
    there: device-oracle m55-cmsis-nn fc_int8_36, 688 bytes) is flagged, not passed as fine."""
    model = ORACLE / "models" / "fc_int8_36.tflite"
    if not model.is_file():
        pytest.skip("../shared/device-oracle absent")
    assert main(["size", str(model), "--target", "cortex-m55", "--arena-size", "688"]) == 0
    out = capsys.readouterr().out
    assert "below the safe minimum; declare 704 bytes" in out
    assert main(["size", str(model), "--target", "cortex-m55", "--arena-size", "672"]) == 1
    assert "704" in capsys.readouterr().err
