"""The CLI's plan and size commands: stable JSON keys, readable text, errors -> exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tinyarena.cli import COMMANDS, main

from small_models import hello_world_like


@pytest.fixture(scope="module")
def fc_model(tmp_path_factory) -> Path:
    """hello_world_float's shape (facts 8: head 128, tail 1408 on the wheel, 776 on arm32)."""
    path = tmp_path_factory.mktemp("cli") / "fc.tflite"
    path.write_bytes(hello_world_like(2))
    return path


def _json(capsys, argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_size_json_keys_and_values(capsys, fc_model: Path) -> None:
    data = _json(capsys, ["size", str(fc_model), "--json"])
    assert {"head", "tail", "total", "min_arena", "categories"} <= data.keys()
    assert (data["head"], data["tail"], data["total"], data["min_arena"]) == (128, 1408, 1536,
                                                                             1936)
    assert data["categories"]["NodeAndRegistration struct"] == {"used": 192, "requested": 192,
                                                                "count": 3}
    for usage in data["categories"].values():
        assert set(usage) == {"used", "requested", "count"}


def test_size_arm32(capsys, fc_model: Path) -> None:
    data = _json(capsys, ["size", str(fc_model), "--target", "arm32", "--json"])
    assert data["total"] == 776


def test_plan_json_keys(capsys, fc_model: Path) -> None:
    data = _json(capsys, ["plan", str(fc_model), "--json"])
    assert (data["head_bytes"], data["lower_bound_bytes"]) == (128, 128)
    assert [(b["kind"], b["size"], b["first"], b["last"]) for b in data["buffers"]] == [
        ("tensor", 16, 0, 1), ("tensor", 64, 1, 2), ("tensor", 64, 2, 3), ("tensor", 16, 3, 3)]
    for b in data["buffers"]:
        assert {"kind", "index", "size", "offset", "first", "last"} <= b.keys()
    linear = _json(capsys, ["plan", str(fc_model), "--planner", "linear", "--json"])
    assert linear["head_bytes"] == 160


def test_human_output(capsys, fc_model: Path) -> None:
    assert main(["size", str(fc_model)]) == 0
    out = capsys.readouterr().out
    assert "1,536" in out and "1,936" in out and "TfLiteEvalTensor data" in out
    assert main(["plan", str(fc_model), "--ascii"]) == 0
    out = capsys.readouterr().out
    assert "head 128 bytes" in out
    assert "0 (id=0): size=16, offset=0, first_used=0 last_used=1" in out


def test_too_small_arena_is_an_error(capsys, fc_model: Path) -> None:
    assert main(["size", str(fc_model), "--arena-size", "1920"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "1936" in err and "Too many buffers (max is 3)" in err


def test_missing_file_is_an_error(capsys, tmp_path: Path) -> None:
    assert main(["size", str(tmp_path / "missing.tflite")]) == 1
    assert capsys.readouterr().err.startswith("error: ")


def test_usage_errors_exit_2(capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["size"])
    assert info.value.code == 2
    assert len(COMMANDS) >= 2


def test_plan_optimal_is_labelled_optimal(capsys, fc_model: Path) -> None:
    data = _json(capsys, ["plan", str(fc_model), "--planner", "optimal", "--json"])
    assert data["planner"] == "optimal"
    assert data["head_bytes"] >= data["lower_bound_bytes"]


def test_output_piped_into_a_closed_reader_ends_quietly(capsys, monkeypatch,
                                                     fc_model: Path) -> None:
    """`tinyarena plan ... | head -1`: once the reader has gone, writing raises
    BrokenPipeError; the command stops quietly instead of reporting a file error."""
    import os
    import sys

    read_end, write_end = os.pipe()

    class ClosedPipe:
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self) -> None:
            pass

        def fileno(self) -> int:
            return write_end

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    try:
        assert main(["plan", str(fc_model), "--ascii"]) == 0
    finally:
        os.close(read_end)
        os.close(write_end)
    assert capsys.readouterr().err == ""
