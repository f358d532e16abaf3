"""What CI and everyday users rely on: ``check``'s exit codes and JSON, one size syntax, many
models at once (batch == single, --jobs 2 == --jobs 1, CSV), --version, JSON errors, and
``optimize`` refusing to overwrite."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tinyarena import __version__
from tinyarena.cli import main
from tinyarena.cli_check import EXIT_BAD_INPUT, EXIT_OK, EXIT_OVER_BUDGET
from tinyarena.cli_common import parse_size

from small_models import hello_world_like

# hello_world_float's shape: the facts sheet (section 8) gives min_arena 1,936 bytes on the
# wheel (head 128 + tail 1,408 + the 400 bytes AllocateTensors needs on top).
FC_MIN_ARENA = 1936


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("ci_models")
    for seed in range(3):
        (folder / f"fc{seed}.tflite").write_bytes(hello_world_like(seed))
    return folder


@pytest.fixture(scope="module")
def malformed(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("ci_bad") / "bad.tflite"
    path.write_bytes(b"\x10\x00\x00\x00TFL3" + b"\xff" * 8)
    return path


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    status = main(argv)
    out = capsys.readouterr()
    return status, out.out, out.err


# -- sizes ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, value", [
    ("98304", 98304), ("96K", 98304), ("96k", 98304), ("96KB", 98304), ("96KiB", 98304),
    ("0x18000", 98304), ("0X18000", 98304), ("1M", 1 << 20), ("1MiB", 1 << 20),
    ("98_304", 98304), ("98,304", 98304), (" 2K ", 2048), ("0", 0), ("512B", 512),
])
def test_sizes_parse(text: str, value: int) -> None:
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["", "K", "96Q", "-5", "1.5K", "0x", "0xZZ", "96 K B", "ten"])
def test_bad_sizes_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="96K"):
        parse_size(text)


def test_every_size_option_takes_the_syntax(capsys, models: Path) -> None:
    model = str(models / "fc0.tflite")
    status, out, _ = _run(capsys, ["size", model, "--arena-size", "0x790", "--json"])
    assert status == 0 and json.loads(out)["arena_size"] == 0x790 == FC_MIN_ARENA
    with pytest.raises(SystemExit) as info:
        main(["size", model, "--arena-size", "1.5K", "--json"])
    assert info.value.code == 2
    assert json.loads(capsys.readouterr().out)["error"]["type"] == "UsageError"


# -- check ---------------------------------------------------------------------------------------
def test_check_fits_exits_0(capsys, models: Path) -> None:
    status, out, _ = _run(capsys, ["check", "--target", "host-x64", str(models / "fc0.tflite"), "--budget",
                                   str(FC_MIN_ARENA), "--json"])
    data = json.loads(out)
    assert status == EXIT_OK == data["exit_code"] == 0 and data["ok"] is True
    assert data["models"][0]["min_arena"] == FC_MIN_ARENA
    assert data["models"][0]["fits"] is True and data["models"][0]["over_by"] == 0


def test_check_over_budget_gives_bytes_over_per_model(capsys, models: Path) -> None:
    status, out, _ = _run(capsys, ["check", "--target", "host-x64", str(models), "--budget", "1900", "--json"])
    data = json.loads(out)
    assert status == EXIT_OVER_BUDGET == data["exit_code"] and data["ok"] is False
    assert [m["over_by"] for m in data["models"]] == [FC_MIN_ARENA - 1900] * 3
    assert data["over_budget"] == 3 and data["errors"] == 0
    status, text, _ = _run(capsys, ["check", "--target", "host-x64", str(models), "--budget", "1900"])
    assert status == EXIT_OVER_BUDGET and text.count("36 over the 1,900-byte budget") == 3


def test_check_missing_and_malformed_are_bad_input(capsys, models: Path, malformed: Path,
                                                   tmp_path: Path) -> None:
    for path in (tmp_path / "missing.tflite", malformed):
        status, out, _ = _run(capsys, ["check", "--target", "host-x64", str(path), "--budget", "96K", "--json"])
        data = json.loads(out)
        assert status == EXIT_BAD_INPUT == data["exit_code"]
        assert data["models"][0]["error"]["type"] == "ModelError"
        assert data["models"][0]["error"]["message"]
    # A bad model among fitting ones: still bad input, the others still reported.
    status, out, _ = _run(capsys, ["check", "--target", "host-x64", str(models / "fc0.tflite"), str(malformed),
                                   "--budget", "96K", "--json"])
    data = json.loads(out)
    assert status == EXIT_BAD_INPUT and data["fits"] == 1 and data["errors"] == 1
    assert len({EXIT_OK, EXIT_OVER_BUDGET, EXIT_BAD_INPUT, 2}) == 4


def test_check_usage_error_is_json_with_exit_2(capsys, models: Path) -> None:
    with pytest.raises(SystemExit) as info:
        main(["check", "--target", "host-x64", str(models), "--json"])  # no --budget
    assert info.value.code == 2
    assert "--budget" in json.loads(capsys.readouterr().out)["error"]["message"]


# -- many models ---------------------------------------------------------------------------------
def test_size_batch_equals_single_and_jobs(capsys, models: Path, malformed: Path) -> None:
    singles = []
    for seed in range(3):
        status, out, _ = _run(capsys, ["size", str(models / f"fc{seed}.tflite"), "--json"])
        assert status == 0
        singles.append(json.loads(out))
    status, out1, _ = _run(capsys, ["size", str(models), "--json", "--jobs", "1"])
    assert status == 0 and json.loads(out1) == singles
    status, out2, _ = _run(capsys, ["size", str(models), "--json", "--jobs", "2"])
    assert status == 0 and out2 == out1
    status, out, _ = _run(capsys, ["size", str(models), str(malformed), "--json", "-j", "2"])
    data = json.loads(out)
    assert status == 1 and data[:3] == singles and data[3]["error"]["type"] == "ModelError"


def test_check_jobs_2_equals_jobs_1_and_csv(capsys, models: Path, tmp_path: Path) -> None:
    outputs = []
    for jobs in ("1", "2"):
        table = tmp_path / f"check{jobs}.csv"
        status, out, _ = _run(capsys, ["check", "--target", "host-x64", str(models), "--budget", "2K", "--jobs", jobs,
                                       "--json", "--csv", str(table)])
        assert status == 0
        outputs.append((out, table.read_text()))
    assert outputs[0] == outputs[1]
    rows = list(csv.DictReader(io.StringIO(outputs[0][1])))
    assert [Path(r["model"]).name for r in rows] == ["fc0.tflite", "fc1.tflite", "fc2.tflite"]
    assert {(r["min_arena"], r["fits"], r["over_by"]) for r in rows} == {("1936", "true", "0")}


def test_size_csv(capsys, models: Path, tmp_path: Path) -> None:
    table = tmp_path / "size.csv"
    status, _, _ = _run(capsys, ["size", str(models), "--csv", str(table)])
    assert status == 0
    rows = list(csv.DictReader(table.open()))
    assert len(rows) == 3 and {r["min_arena"] for r in rows} == {str(FC_MIN_ARENA)}
    assert {r["head"] for r in rows} == {"128"} and {r["tail"] for r in rows} == {"1408"}


def test_empty_folder_is_an_error(capsys, tmp_path: Path) -> None:
    status, out, _ = _run(capsys, ["check", "--target", "host-x64", str(tmp_path), "--budget", "1K", "--json"])
    assert status == EXIT_BAD_INPUT and "no .tflite files" in json.loads(out)["error"]["message"]


# -- conventions ---------------------------------------------------------------------------------
def test_version(capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"tinyarena {__version__} ")
    assert "tflite-micro 0.dev20261023182759" in out and "8f6596d" in out


def test_size_says_what_to_declare(capsys, models: Path) -> None:
    status, out, _ = _run(capsys, ["size", str(models / "fc0.tflite")])
    assert status == 0
    assert f"alignas(16) uint8_t tensor_arena[{FC_MIN_ARENA}]" in out.replace(",", "")
    assert "arena used" in out and "not enough" in out


def test_errors_are_json_with_json(capsys, tmp_path: Path, models: Path) -> None:
    status, out, err = _run(capsys, ["plan", str(tmp_path / "missing.tflite"), "--json"])
    assert status == 1 and err == ""
    assert json.loads(out)["error"]["type"] == "ModelError"
    status, out, _ = _run(capsys, ["size", str(models / "fc0.tflite"), "--arena-size", "1920",
                                   "--json"])
    error = json.loads(out)["error"]
    assert status == 1 and error["type"] == "ArenaTooSmallError"
    assert error["needed"] == FC_MIN_ARENA and error["missing"] == FC_MIN_ARENA - 1920


def test_optimize_refuses_to_overwrite(capsys, tmp_path: Path) -> None:
    model = tmp_path / "fc.tflite"
    data = hello_world_like(1)
    model.write_bytes(data)
    status, out, _ = _run(capsys, ["optimize", str(model), "-o", str(model), "--json",
                                   "--time-budget", "0"])
    assert status == 1 and "input model" in json.loads(out)["error"]["message"]
    assert model.read_bytes() == data
    existing = tmp_path / "existing.tflite"
    existing.write_bytes(b"keep me")
    status, _, err = _run(capsys, ["optimize", str(model), "-o", str(existing),
                                   "--time-budget", "0"])
    assert status == 1 and "--force" in err and existing.read_bytes() == b"keep me"
    status, _, _ = _run(capsys, ["optimize", str(model), "-o", str(existing), "--force",
                                 "--time-budget", "0"])
    assert status == 0 and existing.read_bytes()[4:8] == b"TFL3"


def test_progress_bar_only_on_a_terminal_for_long_batches(monkeypatch) -> None:
    import sys

    from tinyarena.cli_common import PROGRESS_MIN_ITEMS, run_batch

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    for tty, items, shown in ((True, PROGRESS_MIN_ITEMS, True), (False, 10, False),
                              (True, PROGRESS_MIN_ITEMS - 1, False)):
        stream = Terminal() if tty else io.StringIO()
        monkeypatch.setattr(sys, "stderr", stream)
        assert run_batch(abs, list(range(-items, 0)), 1, "size") == list(range(items, 0, -1))
        assert (f"0/{items} " in stream.getvalue()) == shown
