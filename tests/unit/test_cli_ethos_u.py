"""The CLI on Vela (Arm Ethos-U) models: size, plan, check, export, report, optimize and run.

The models have Vela's layout (``ethos_u_cases.py``); the sizes they must give are the ones
TFLM with the ethos_u kernel reported on Cortex-M55 (``tests/oracle/ethos_u_device.json``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ethos_u_cases import CASES, build_vela_model
from tinyarena.cli import main

DEVICE = json.loads((Path(__file__).resolve().parents[1] / "oracle" /
                     "ethos_u_device.json").read_text())["synthetic"]
CASE = {c.name: c for c in CASES}


def _write(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(build_vela_model(CASE[name]))
    return path


def _json(capsys: Any, argv: list[str], code: int = 0) -> Any:
    assert main(argv) == code
    return json.loads(capsys.readouterr().out)


def test_size_json_gives_the_device_figures(tmp_path: Path, capsys: Any) -> None:
    for name in ("shared_1in_1out", "dedicated_2in_2out"):
        data = _json(capsys, ["size", str(_write(tmp_path, name)), "--target", "cortex-m55",
                              "--json"])
        assert (data["total"], data["min_arena"]) == (DEVICE[name]["arena_used_bytes"],
                                                      DEVICE[name]["min_arena"])
        assert data["alt_decompression_memory"] == 0
        assert "ethos_u" not in data  # only with --ethos-u-fast-memory


def test_size_with_a_driver_fast_memory(tmp_path: Path, capsys: Any) -> None:
    path = _write(tmp_path, "dedicated_2in_2out")
    data = _json(capsys, ["size", str(path), "--target", "cortex-m55", "--json",
                          "--ethos-u-fast-memory"])
    npu = data["ethos_u"]
    zero = DEVICE["dedicated_fast_scratch_0"]
    assert npu["fast_memory"] == DEVICE["dedicated_2in_2out"]["driver_call"]["base_addr_size"][2]
    assert (npu["arena_without_fast_scratch"]["total"],
            npu["arena_without_fast_scratch"]["min_arena"]) == (zero["arena_used_bytes"],
                                                                zero["min_arena"])
    assert data["min_arena"] == DEVICE["dedicated_2in_2out"]["min_arena"]  # unchanged
    assert main(["size", str(path), "--target", "cortex-m55", "--ethos-u-fast-memory"]) == 0
    text = capsys.readouterr().out
    assert "Ethos-U fast memory" in text and "arena without the fast scratch" in text
    shared = _json(capsys, ["size", str(_write(tmp_path, "shared_1in_1out")), "--target",
                            "cortex-m55", "--json", "--ethos-u-fast-memory"])["ethos_u"]
    assert shared["fast_scratch_is_scratch"] and shared["arena_without_fast_scratch"] is None


def test_plan_names_vela_tensors_and_the_npu_scratch(tmp_path: Path, capsys: Any) -> None:
    path = _write(tmp_path, "dedicated_2in_2out")
    data = _json(capsys, ["plan", str(path), "--target", "cortex-m55", "--json"])
    roles = {b["name"]: b.get("npu_role") for b in data["buffers"]}
    assert roles["scratch"] == "scratch" and roles["scratch_fast"] == "fast_scratch"
    assert roles["input_0"] is None
    assert sorted(r for r in roles.values() if r and "base_address" in r) == [
        "base_address_sizes", "base_addresses"]
    assert data["bound"]["overlap_rules"] == "vela"
    assert all(p["reason"] == "vela" for p in data["bound"]["shared_bytes_pairs"])
    assert any("arena bytes 0..2,048" in line for line in data["npu"])
    assert main(["plan", str(path), "--target", "cortex-m55"]) == 0
    text = capsys.readouterr().out
    assert "Arm Ethos-U (Vela) buffers in the arena" in text and "COLLISION" not in text
    shared = _json(capsys, ["plan", str(_write(tmp_path, "shared_1in_1out")), "--target",
                            "cortex-m55", "--json"])
    assert {b.get("npu_role") for b in shared["buffers"]} >= {"scratch+fast_scratch"}


def test_export_registers_add_ethos_u(tmp_path: Path, capsys: Any) -> None:
    path = _write(tmp_path, "shared_1in_1out")
    assert main(["export", str(path), "--target", "cortex-m55", "-o", str(tmp_path)]) == 0
    source = (tmp_path / "shared_1in_1out.cc").read_text()
    header = (tmp_path / "shared_1in_1out.h").read_text()
    assert "resolver.AddEthosU()" in source and "AddCustom" not in source
    assert f"kTensorArenaSize = {DEVICE['shared_1in_1out']['min_arena']};" in header
    assert "CO_PROCESSOR=ethos_u" in header


def test_check_gates_on_the_device_minimum(tmp_path: Path, capsys: Any) -> None:
    path = str(_write(tmp_path, "shared_3in_1out"))
    need = DEVICE["shared_3in_1out"]["min_arena"]
    assert main(["check", path, "--target", "cortex-m55", "--budget", str(need)]) == 0
    assert main(["check", path, "--target", "cortex-m55", "--budget", str(need - 16)]) == 3


def test_the_host_refuses_and_run_names_the_npu(tmp_path: Path, capsys: Any) -> None:
    path = str(_write(tmp_path, "shared_1in_1out"))
    error = _json(capsys, ["size", path, "--json"], code=1)["error"]
    assert "device builds" in error["message"] and "cortex-m55" in error["message"]
    error = _json(capsys, ["run", path, "--target", "cortex-m55", "--json"], code=1)["error"]
    assert "Ethos-U NPU" in error["message"] and "arithmetic is the NPU's" in error["message"]


def test_optimize_keeps_vela_models_and_says_why(tmp_path: Path, capsys: Any) -> None:
    path = _write(tmp_path, "shared_1in_1out")
    out = tmp_path / "out.tflite"
    data = _json(capsys, ["optimize", str(path), "-o", str(out), "--target", "cortex-m55",
                          "--json"])
    assert out.read_bytes() == path.read_bytes()
    assert data["before"] == data["after"]
    assert any("Vela" in note and "unchanged" in note for note in data["notes"])


def test_report_names_the_npu_scratch(tmp_path: Path, capsys: Any) -> None:
    path = _write(tmp_path, "dedicated_2in_2out")
    out = tmp_path / "r.html"
    assert main(["report", str(path), "--target", "cortex-m55", "-o", str(out)]) == 0
    html = out.read_text()
    assert "Arm Ethos-U (Vela) buffers in the arena" in html and "Ethos-U fast scratch" in html


def test_ops_table_counts_ethos_u_as_sized_not_run(capsys: Any) -> None:
    rows = _json(capsys, ["ops", "--json"])
    row = next(r for r in rows if r["name"] == "ethos-u")
    assert row["sizing"] and not row["running"]
