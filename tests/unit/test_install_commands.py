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


def test_license_is_the_apache_2_text_pyproject_names() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0" and "LICENSE" in project["license-files"]


def test_readme_quick_start_sizes_checks_and_exports_for_a_cortex_m() -> None:
    """Right after the install commands: size -> check -> export, each naming a device target."""
    readme = (ROOT / "README.md").read_text()
    after_install = readme.split("```", 2)[2]
    block = re.search(r"```console\n(.*?)```", after_install, re.S)
    assert block is not None
    assert after_install.index("```console") < after_install.index("## What it does")
    commands = [line.split("#")[0] for line in block.group(1).splitlines()
                if line.startswith("$ tinyarena ")]
    assert [c.split()[2] for c in commands] == ["size", "check", "export"]
    assert all("--target cortex-m4" in c for c in commands)
    assert "../shared/models/README.md" in readme   # where the example models come from


def test_readme_links_to_files_that_exist() -> None:
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(([^)#:]+)\)", readme)
    assert "LICENSE" in links and any(link.startswith("docs/") for link in links)
    missing = [link for link in links if not (ROOT / link).exists()]
    assert not missing, f"README links to missing files: {missing}"
