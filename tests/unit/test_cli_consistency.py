"""One consistent CLI (issue 19, item 6): stdout carries only what was asked for, several
``--target`` give one record each, every usage error exits 2, every command starts with the same
target line, and text numbers are written alike."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

from small_models import hello_world_like
from tinyarena.arena.targets import get_target
from tinyarena.builder import ModelBuilder
from tinyarena.cli import main
from tinyarena.cli_common import target_line
from tinyarena.errors import UsageError

LONG_NAME = "model/block_" + "very_long_layer_name/" * 4 + "Relu"


def _long_named() -> bytes:
    """A relu chain whose middle tensor has a TF-style name of 100+ characters."""
    b = ModelBuilder()
    x = b.add_input("x", (1, 64), "float32")
    w = b.add_constant("w", np.eye(64, dtype=np.float32))
    y = b.add_tensor(LONG_NAME, (1, 64), "float32")
    b.add_operator("FULLY_CONNECTED", [x, w], [y])
    z = b.add_tensor("z", (1, 64), "float32")
    b.add_operator("RELU", [y], [z])
    b.mark_output(z)
    return b.build()


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("consistency")
    a, b = folder / "alpha.tflite", folder / "beta.tflite"
    a.write_bytes(hello_world_like(1))
    b.write_bytes(_long_named())
    return a, b


def _exit(argv: list[str]) -> int:
    """The process's exit status: main's return, or argparse's SystemExit code."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    status = _exit(argv)
    out = capsys.readouterr()
    return status, out.out, out.err


# -- --csv - -------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", [["size"], ["check", "--budget", "2K"], ["export"]])
def test_csv_to_stdout_is_csv_only(capsys, models, tmp_path, command) -> None:
    extra = ["-o", str(tmp_path)] if command == ["export"] else []
    status, out, err = _run(capsys, [command[0], *map(str, models), *command[1:], *extra,
                                     "--target", "cortex-m4", "--csv", "-"])
    assert status in (0, 3)
    rows = list(csv.reader(io.StringIO(out)))
    header = rows[0]
    assert len(rows) == 3 and all(len(r) == len(header) for r in rows)
    assert {"model", "target", "kernel_set", "tflm"} <= set(header)
    records = [dict(zip(header, r)) for r in rows[1:]]
    assert {(r["target"], r["kernel_set"], r["tflm"]) for r in records} == {
        ("cortex-m4", "cmsis-nn", get_target("cortex-m4").tflm_commit)}
    assert err.startswith("target cortex-m4 | ")  # the text went to stderr
    if command[0] == "check":
        assert {r["fits"] for r in records} <= {"true", "false"}


def test_csv_to_stdout_with_json_is_a_usage_error(capsys, models) -> None:
    status, out, _ = _run(capsys, ["size", str(models[0]), "--csv", "-", "--json"])
    assert status == 2 and json.loads(out)["error"]["type"] == "UsageError"


# -- several --target ----------------------------------------------------------------------------
def test_size_gives_one_record_per_target(capsys, models, tmp_path) -> None:
    argv = ["size", str(models[0]), "--target", "cortex-m4", "--target", "cortex-m55"]
    status, out, _ = _run(capsys, [*argv, "--json"])
    records = json.loads(out)
    assert status == 0 and [r["target"] for r in records] == ["cortex-m4", "cortex-m55"]
    single = [json.loads(_run(capsys, ["size", str(models[0]), "--target", t, "--json"])[1])
              for t in ("cortex-m4", "cortex-m55")]
    # the same record as one target at a time; a later build also says what changed
    assert records[1]["change"]["from"].startswith("cortex-m4 ")
    assert [{k: v for k, v in r.items() if k != "change"} for r in records] == single
    table = tmp_path / "sizes.csv"
    assert main([*argv, "--csv", str(table)]) == 0
    text = capsys.readouterr().out
    rows = list(csv.DictReader(table.open()))
    assert [(r["target"], int(r["min_arena"])) for r in rows] == [
        (r["target"], r["min_arena"]) for r in records]
    blocks = [line for line in text.splitlines() if line.startswith("target ")]
    assert len(blocks) == 2
    side = text.split("side by side")[1].splitlines()
    minimum = next(line for line in side if line.strip().startswith("minimum arena"))
    assert minimum.split()[2:] == [f"{r['min_arena']:,}" for r in records]


def test_check_gives_one_record_per_target(capsys, models) -> None:
    status, out, _ = _run(capsys, ["check", *map(str, models), "--budget", "1K", "--target",
                                   "host-x64", "--target", "cortex-m0", "--json"])
    summaries = json.loads(out)
    assert [s["target"] for s in summaries] == ["host-x64", "cortex-m0"]
    assert status == 3 and all(len(s["models"]) == 2 for s in summaries)


@pytest.mark.parametrize("command", [["plan"], ["whatif"], ["run", "--native", "off"],
                                     ["export", "-o", "OUT"]])
def test_one_build_commands_refuse_a_second_target(capsys, models, tmp_path, command) -> None:
    argv = [a.replace("OUT", str(tmp_path)) for a in command]
    status, _, err = _run(capsys, [argv[0], str(models[0]), *argv[1:], "--target", "cortex-m4",
                                   "--target", "cortex-m7"])
    assert status == 2 and "one --target" in err


# -- usage errors exit 2 -------------------------------------------------------------------------
def test_usage_errors_exit_2(capsys, models, tmp_path) -> None:
    a, b = map(str, models)
    buffers = tmp_path / "buffers.csv"
    buffers.write_text("id,lower,upper,size\n0,0,2,64\n1,1,3,32\n")
    cases = [
        ["size", a, b, "--split"],
        ["size", a, "--split", "--shared-arena"],
        ["plan", a, "--buffers", str(buffers)],
        ["plan", "--buffers", str(buffers), "--target", "cortex-m4"],
        ["plan"],
        ["size", a, "--kernels", "cmsis-nn"],
        ["check", a, "--budget", "1K", "--kernels", "cmsis-nn"],
        ["export", a, "--name", "okay-nabu", "-o", str(tmp_path)],
        ["export", a, b, "--name", "okay_nabu", "-o", str(tmp_path)],
        ["optimize", a, "-o", str(tmp_path / "o.tflite"), "--kernel-set", "xtensa"],
        ["plan", a, "--planner", "optimal", "--target", "cortex-m4", "--kernels", "reference"],
        ["size", a, "--target", "cortex-m5"],
        ["size", a, "--split", "--target", "cortex-m4", "--target", "cortex-m7"],
        ["run", a, "--input", str(tmp_path / "x.npy"), "--pixels", "raw"],
        ["run", a, "--resize"],
        ["run", a, "--labels", "one,two,three", "--native", "off"],
        ["report", a, "-o", str(tmp_path / "r.html"), "--optimized", a, "--no-optimize"],
    ]
    np.save(tmp_path / "x.npy", np.zeros((1, 1), np.float32))
    for argv in cases:
        assert _exit(argv) == 2, argv
        assert capsys.readouterr().err, argv
        assert _exit([*argv, "--json"]) == 2, argv
        assert json.loads(capsys.readouterr().out)["error"]["type"] == "UsageError", argv
    for written in ("okay-nabu.h", "o.tflite", "r.html"):
        assert not (tmp_path / written).exists(), written


def test_unknown_target_is_a_usage_error_in_the_library_too() -> None:
    from tinyarena.arena import allocate_model

    with pytest.raises(UsageError, match="unknown target 'cortex-m5'"):
        get_target("cortex-m5")
    with pytest.raises(UsageError, match="cortex-m"):
        allocate_model(hello_world_like(1), target="host-x64", kernel_set="cmsis-nn")


# -- one target line, numbers alike --------------------------------------------------------------
def _first_lines(capsys, argv: list[str]) -> tuple[list[str], str]:
    status = main(argv)
    out = capsys.readouterr().out
    assert status == 0, argv
    return out.splitlines(), out


def test_every_command_starts_with_the_same_target_line(capsys, models, tmp_path) -> None:
    a, b = map(str, models)
    m4 = target_line(get_target("cortex-m4")).splitlines()[0]  # then the renamed-name note
    commands = [["size", a], ["plan", a], ["whatif", a], ["size", a, "--split"],
                ["size", a, b, "--shared-arena"], ["check", a, "--budget", "64K"],
                ["export", a, "-o", str(tmp_path)], ["run", a, "--native", "off"],
                ["report", a, "-o", str(tmp_path / "r.html"), "--no-optimize"]]
    for argv in commands:
        lines, _ = _first_lines(capsys, [*argv, "--target", "cortex-m4"])
        assert lines[0].startswith(m4), (argv, lines[0])
    lines, _ = _first_lines(capsys, ["optimize", a, "-o", str(tmp_path / "o.tflite"),
                                     "--target", "cortex-m4"])
    assert lines[0].startswith(m4)


def test_text_numbers_have_thousands_separators(capsys, models, tmp_path) -> None:
    """Every byte count of 1,000 or more in text reads 82,320; exempt are C declarations
    (tensor_arena[82320]) and TFLM's own report lines, which print as TFLM prints them."""
    a, b = map(str, models)
    commands = [["size", a, b], ["plan", a], ["whatif", a], ["size", a, "--split"],
                ["size", a, b, "--shared-arena"],
                ["check", a, b, "--budget", "64K", "--target", "cortex-m4"],
                ["export", a, "-o", str(tmp_path), "--target", "cortex-m4"],
                ["run", a, "--native", "off"],
                ["size", a, "--target", "host-x64", "--target", "cortex-m4"]]
    bare = re.compile(r"(?<![\w.,\[])\d{4,}(?![\w,\]])")
    for argv in commands:
        _, out = _first_lines(capsys, argv)
        for line in out.splitlines():
            if line.startswith("[RecordingMicroAllocator]") or "tensor_arena[" in line:
                continue
            if line.strip().startswith("[") or line.startswith("  "):  # run's output arrays
                continue
            assert not bare.search(line), (argv, line)


def test_report_declares_per_target_and_shortens_long_names(capsys, models, tmp_path) -> None:
    page = tmp_path / "r.html"
    assert main(["report", str(models[1]), "--target", "host-x64", "--target", "cortex-m4",
                 "-o", str(page), "--no-optimize"]) == 0
    out = capsys.readouterr().out
    html = page.read_text()
    banners = re.findall(r'<p class="declare">declare <span data-target="([^"]+)" '
                         r'data-key="size.min_arena">([0-9,]+)</span> bytes', html)
    assert [t for t, _ in banners] == ["host-x64", "cortex-m4"]
    for target, shown in banners:
        from tinyarena.arena import allocate_model

        need = allocate_model(models[1].read_bytes(), target=target).min_arena
        assert shown == f"{need:,}" and f"declare {need:,} bytes" in out
    cells = re.findall(r'<td class="name" title="([^"]*)">([^<]*)</td>', html)
    long_cells = [(full, shown) for full, shown in cells if full == LONG_NAME]
    assert long_cells and all(len(shown) < len(full) and shown.startswith("\u2026")
                              and full.endswith(shown[1:]) for full, shown in long_cells)
