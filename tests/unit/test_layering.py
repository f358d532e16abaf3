"""Imports only point down the layer list (TFLM's DAG): a module may import its own package and
packages of a lower rank, never a higher or equal-rank sibling."""

from __future__ import annotations

import ast
from pathlib import Path

import tinyarena

PACKAGE = Path(tinyarena.__file__).resolve().parent

# Lower rank = closer to the leaves. Equal rank, different name: neither may import the other.
RANKS = {
    "_util": 0, "errors": 0, "_version": 0,
    "executors": 1,
    "planning": 1, "model": 1,
    "kernels": 2,
    "arena": 3,
    "interpreter": 4, "builder": 4,
    "rewrite": 5, "examples": 5,
    "optimize": 6,
    "report": 7, "export": 7,
    "cli_common": 8, "footprint": 8,
    "cli_run": 9,  # and any other cli_<name>.py subcommand module
    "cli_report": 9, "cli_check": 9, "cli_export": 9, "cli_size": 9,
    "cli_whatif": 9, "cli_layouts": 9, "cli_ops": 9, "cli_buffers": 9, "cli_targets": 9,
    "batch": 9.5,
    "cli_fit": 9,
    "cli": 10,
    "__init__": 11, "__main__": 11,
}


def _unit(module: str) -> str:
    """The layer a dotted tinyarena module name belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "tinyarena":
                found.add("__init__")
            elif node.module.startswith("tinyarena."):
                found.add(_unit(node.module))
        elif isinstance(node, ast.Import):
            found.update(_unit(a.name) for a in node.names if a.name.startswith("tinyarena."))
    return found


def test_every_unit_has_a_rank() -> None:
    units = {p.stem if p.parent == PACKAGE else p.relative_to(PACKAGE).parts[0]
             for p in PACKAGE.rglob("*.py")}
    assert units <= RANKS.keys(), f"give these a rank in RANKS: {sorted(units - RANKS.keys())}"


def test_imports_only_point_down() -> None:
    violations = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        unit = path.stem if len(rel.parts) == 1 else rel.parts[0]
        for target in _imports(path) - {unit}:
            if RANKS[target] >= RANKS[unit]:
                violations.append(f"{rel} imports tinyarena.{target}")
    assert not violations, "imports that point up or sideways:\n" + "\n".join(violations)
