"""``tinyarena ops``: the table renders the library's catalog, and docs/operators.md (linked from
the README) carries it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tinyarena.cli import main
from tinyarena.cli_ops import render_markdown
from tinyarena.kernels.catalog import WHEEL_OPS, op_catalog

OPS_DOC = Path(__file__).resolve().parents[2] / "docs" / "operators.md"


def test_json_lists_every_wheel_op(capsys) -> None:
    assert main(["ops", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    names = {r["name"] for r in rows}
    assert set(WHEEL_OPS) <= names and "ethos-u" in names
    split_v = next(r for r in rows if r["name"] == "SPLIT_V")
    assert split_v["sizing"] and split_v["running"] and split_v["in_wheel"]
    ethos = next(r for r in rows if r["name"] == "ethos-u")
    assert ethos["sizing"] and not ethos["running"] and not ethos["in_wheel"]
    assert "Ethos-U NPU" in ethos["note"]


def test_text_ends_with_the_tally(capsys) -> None:
    assert main(["ops"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    wheel = [o for o in op_catalog() if o.in_wheel]
    assert last == (f"{len(wheel)} operators registered by the tflite-micro wheel: tinyarena "
                    f"sizes {sum(o.sizing for o in wheel)} and runs "
                    f"{sum(o.running for o in wheel)}.")


def test_docs_table_is_the_generated_one() -> None:
    text = OPS_DOC.read_text()
    found = re.search(r"<!-- ops-table:start -->\n(.*?)\n<!-- ops-table:end -->", text, re.S)
    assert found, "docs/operators.md lost its ops-table markers"
    assert found.group(1) == render_markdown(op_catalog()), (
        "docs/operators.md's operator table is stale: replace the lines between the ops-table "
        "markers with the output of `tinyarena ops --markdown`")
