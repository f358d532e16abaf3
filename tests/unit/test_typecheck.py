"""mypy finds no type errors in src/tinyarena under the [tool.mypy] settings of pyproject.toml.

The check narrows every Optional explicitly (a kernel missing a tensor raises KernelError), so a
new ``Tensor | None`` used unchecked, or an annotation that no longer matches its value, fails
here rather than at an invoke.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_mypy_reports_no_errors() -> None:
    api = pytest.importorskip("mypy.api", reason="mypy is not installed (pip install .[test])")
    start = time.perf_counter()
    # The config (python_version, overrides, check_untyped_defs) comes from pyproject.toml;
    # the incremental cache lives in ROOT/.mypy_cache (ignored by git).
    stdout, stderr, status = api.run([
        "--config-file", str(ROOT / "pyproject.toml"),
        "--cache-dir", str(ROOT / ".mypy_cache"),
        "--no-error-summary",
        str(ROOT / "src" / "tinyarena"),
    ])
    elapsed = time.perf_counter() - start
    errors = [line for line in stdout.splitlines() if ": error:" in line]
    assert status == 0 and not errors, (
        f"mypy found {len(errors)} errors (exit {status}):\n" + "\n".join(errors or [stdout])
        + stderr)
    assert elapsed < 60, f"mypy took {elapsed:.1f} s; the budget is 60 s"
