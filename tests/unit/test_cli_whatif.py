"""``tinyarena whatif``, ``size --split`` and ``size A B --shared-arena`` from the command line;
the numbers are checked against the device in tests/unit/arena/test_multi_layouts.py and
against the runtime in tests/unit/arena/test_preallocation_whatif.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tflm_oracle import SHARED_MODELS
from tinyarena.cli import main


def _model(name: str) -> Path:
    path = SHARED_MODELS / name
    if not path.exists():
        pytest.skip(f"{name} not in ../shared/models")
    return path


def test_whatif_json_ranks_candidates(capsys) -> None:
    path = _model("person_detect.tflite")
    assert main(["whatif", str(path), "--json", "--max-external", "3"]) == 0
    data = json.loads(capsys.readouterr().out)
    candidates = data["candidates"]
    assert {"tensor", "name", "saving_bytes", "memcpy_bytes"} <= set(candidates[0])
    savings = [c["saving_bytes"] for c in candidates]
    assert savings == sorted(savings, reverse=True) and savings[0] > 0
    assert data["best_set"]["tensors"] and len(data["best_set"]["tensors"]) == 3
    assert main(["whatif", str(path), "--target", "arm32-short-enums"]) == 0
    text = capsys.readouterr().out
    assert "Conv2d_1_pointwise" in text and "best pair" in text


def test_size_split_and_shared_json(capsys) -> None:
    hello = _model("hello_world_float.tflite")
    assert main(["size", str(hello), "--split", "--target", "arm32-short-enums", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["persistent_arena"] == {"used": 624, "min": 624}  # device figures
    assert data["non_persistent_arena"] == {"used": 128, "min": 560}
    a, b = _model("trained_lstm_int8.tflite"), _model("keyword_scrambled.tflite")
    assert main(["size", str(a), str(b), "--shared-arena", "--target", "arm32-short-enums",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["shared_arena"] == {"head": 1536, "tail": 14068, "used": 15604, "min": 17088}
    assert [(m["head"], m["tail"]) for m in data["models"]] == [(1536, 1684), (1536, 14068)]
    assert main(["size", str(a), str(b), "--shared-arena"]) == 0
    assert "minimum arena" in capsys.readouterr().out


def test_layout_usage_errors(capsys) -> None:
    hello = _model("hello_world_float.tflite")
    # Several models without --shared-arena are a batch (issue 11), each sized on its own.
    assert main(["size", str(hello), str(hello), "--split"]) == 2  # a usage error (issue 19)
    assert "exactly one" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["whatif", str(hello), "--max-external", "0"])
