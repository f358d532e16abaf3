"""``tinyarena optimize --patches``: flags, JSON contract, unpatched models with a reason."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tinyarena.cli import main
from tinyarena.model import read_model
from tinyarena.rewrite.patches import patch_record

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rewrite"))
from patch_models import fc_only_model, wide_stem_model  # noqa: E402

PATCH_KEYS = {"split_after", "grid", "extra_macs_percent", "ops_before", "ops_after"}


def _optimize(tmp_path: Path, data: bytes, *extra: str,
              capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    src = tmp_path / "in.tflite"
    src.write_bytes(data)
    out = tmp_path / "out.tflite"
    status = main(["optimize", str(src), "-o", str(out), "--json", *extra])
    text = capsys.readouterr().out
    return status, json.loads(text)


def test_a_model_without_a_patchable_stage_is_returned_unpatched_with_a_reason(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, data = _optimize(tmp_path, fc_only_model(), "--patches", "--time-budget", "0.2",
                             capsys=capsys)
    assert status == 0
    assert data["patches"] is None
    assert any("no patchable stage" in n and "FULLY_CONNECTED" in n for n in data["notes"])
    assert patch_record(read_model(tmp_path / "out.tflite")) is None


def test_patches_json_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, data = _optimize(tmp_path, wide_stem_model(), "--patches", "--target", "host-x64",
                             "--time-budget", "0.3", capsys=capsys)
    assert status == 0
    assert PATCH_KEYS <= data["patches"].keys()
    assert data["after"]["min_arena"] < data["before"]["min_arena"]
    assert 0 < data["patches"]["extra_macs_percent"] <= 25
    new = read_model(tmp_path / "out.tflite")
    assert data["patches"]["ops_after"] == len(new.subgraphs[0].operators)
    record = patch_record(new)
    assert record is not None and record["grid"] == data["patches"]["grid"]


def test_plain_optimize_reports_no_patches(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    status, data = _optimize(tmp_path, wide_stem_model(), "--time-budget", "0.2",
                             capsys=capsys)
    assert status == 0 and data["patches"] is None


@pytest.mark.parametrize("flags", [["--max-extra-macs", "5"],
                                   ["--patches", "--max-extra-macs", "-1"],
                                   ["--patches", "--max-extra-macs", "nan"]])
def test_bad_mac_budgets_are_usage_errors(tmp_path: Path, flags: list[str]) -> None:
    src = tmp_path / "in.tflite"
    src.write_bytes(wide_stem_model())
    with pytest.raises(SystemExit) as exc:
        main(["optimize", str(src), "-o", str(tmp_path / "o.tflite"), *flags])
    assert exc.value.code == 2
