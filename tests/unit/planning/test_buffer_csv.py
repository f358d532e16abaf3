"""MiniMalloc's CSV format, and `tinyarena plan --buffers`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tinyarena.cli import main
from tinyarena.errors import PlanError
from tinyarena.planning import Buffer, lower_bound, plan_greedy
from tinyarena.planning.buffer_csv import parse_buffer_csv, read_buffer_csv

SAMPLE = "id,lower,upper,size\n0,0,2,32\n1,1,3,48\n2,3,4,16\n"


def test_half_open_rows_become_closed_lifetimes() -> None:
    table = parse_buffer_csv(SAMPLE)
    assert table.ids == ("0", "1", "2")
    assert table.buffers == (Buffer(32, 0, 1), Buffer(48, 1, 2), Buffer(16, 3, 3))


def test_columns_may_come_in_any_order() -> None:
    table = parse_buffer_csv("size,upper,id,lower\n32,2,a,0\n")
    assert table.buffers == (Buffer(32, 0, 1),) and table.ids == ("a",)


@pytest.mark.parametrize("text, words", [
    ("", "empty"),
    ("id,lower,size\n0,0,16\n", "lacks upper"),
    ("id,lower,upper,size,offset\n0,0,1,16,0\n", "offset are not read"),
    ("id,lower,upper,size\n0,0,1,x\n", "line 2: size 'x' is not a whole number"),
    ("id,lower,upper,size\n0,3,3,16\n", "line 2: upper 3 <= lower 3"),
    ("id,lower,upper,size\n0,0,1,-16\n", "negative"),
    ("id,lower,upper,size\n0,0,1,16\n0,1,2,16\n", "appears twice"),
    ("id,lower,upper,size\n0,0,1\n", "3 fields"),
    ("id,lower,upper,size\n", "no buffers"),
])
def test_bad_files_name_the_problem(text: str, words: str) -> None:
    with pytest.raises(PlanError, match=words):
        parse_buffer_csv(text)


def test_missing_file_and_folder(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="no such file"):
        read_buffer_csv(tmp_path / "absent.csv")
    with pytest.raises(PlanError, match="folder"):
        read_buffer_csv(tmp_path)


def test_plan_buffers_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "b.csv"
    path.write_text(SAMPLE)
    buffers = list(parse_buffer_csv(SAMPLE).buffers)
    assert main(["plan", "--buffers", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["head_bytes"] == plan_greedy(buffers).head_size
    assert data["lower_bound_bytes"] == lower_bound(buffers)
    assert [b["offset"] for b in data["buffers"]] == list(plan_greedy(buffers).offsets)
    assert [b["id"] for b in data["buffers"]] == ["0", "1", "2"]
    assert isinstance(data["seconds"], float) and data["optimal"] is True  # head = bound here
    assert main(["plan", "--buffers", str(path), "--planner", "optimal", "--json",
                 "--time-budget", "2"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["optimal"] is True and data["head_bytes"] == lower_bound(buffers)


def test_plan_buffers_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("id,lower,upper\n")
    assert main(["plan", "--buffers", str(bad), "--json"]) == 1
    assert "lacks size" in json.loads(capsys.readouterr().out)["error"]["message"]
    assert main(["plan"]) == 2  # a usage error (issue 19)
    assert "--buffers" in capsys.readouterr().err
