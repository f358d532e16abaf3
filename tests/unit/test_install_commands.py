"""The README's first command installs only what the demo needs; its test command installs the
test extras itself; CI runs exactly that test command (issue 11, item 6)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _readme_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```sh\n(.*?)```", readme, re.S)
    assert block is not None, "the README starts with a ```sh block of commands"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_first_command_installs_runtime_dependencies_only() -> None:
    first = _readme_commands()[0]
    assert "pip install -e . " in first and "[" not in first and "tinyarena demo" in first


def test_test_command_installs_the_test_extras_and_ci_runs_it() -> None:
    test = _readme_commands()[1]
    assert '.venv/bin/pip install -e ".[test]"' in test and "pytest" in test
    ci = ROOT / ".ci" / "run"
    if not ci.exists():
        pytest.skip("no .ci/run in this checkout")
    lines = [line.strip() for line in ci.read_text().splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    assert test.strip() in lines


def test_demo_needs_no_optional_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = {re.split(r"[<>=!~\[ ]", d)[0].lower() for d in project["dependencies"]}
    assert runtime <= {"numpy", "flatbuffers", "tqdm"}
    assert {"images", "optimal", "test"} <= project["optional-dependencies"].keys()
