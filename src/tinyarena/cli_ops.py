"""``tinyarena ops``: every operator TFLM's Python runtime registers, and what tinyarena does
with it (the data is ``tinyarena.kernels.catalog``; this module only renders it).

``--markdown`` prints the table docs/operators.md carries; a test keeps the two identical.
"""

from __future__ import annotations

import argparse
import json
from typing import Any, Sequence

from tinyarena.kernels.catalog import OpSupport, op_catalog


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def render_text(rows: Sequence[OpSupport]) -> str:
    width = max(len(r.name) for r in rows)
    lines = [f"{'operator':<{width}}  kind     sizing  running  dtypes"]
    for r in rows:
        kind = "custom" if r.custom else "builtin"
        dtypes = ", ".join(r.dtypes) or "-"
        note = f"  ({r.note})" if r.note else ""
        lines.append(f"{r.name:<{width}}  {kind:<7}  {_yes(r.sizing):<6}  {_yes(r.running):<7}  "
                     f"{dtypes}{note}")
    wheel = [r for r in rows if r.in_wheel]
    lines.append("")
    lines.append(f"{len(wheel)} operators registered by the tflite-micro wheel: tinyarena sizes "
                 f"{sum(r.sizing for r in wheel)} and runs {sum(r.running for r in wheel)}.")
    return "\n".join(lines)


def render_markdown(rows: Sequence[OpSupport]) -> str:
    lines = ["| operator | kind | dtypes | sizing | running | note |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        kind = "custom" if r.custom else "builtin"
        dtypes = ", ".join(r.dtypes) or "-"
        lines.append(f"| `{r.name}` | {kind} | {dtypes} | {_yes(r.sizing)} | "
                     f"{_yes(r.running)} | {r.note} |")
    return "\n".join(lines)


def _run_ops(args: argparse.Namespace) -> int:
    rows = op_catalog()
    if args.json:
        print(json.dumps([r.to_dict() for r in rows], indent=2))
    elif args.markdown:
        print(render_markdown(rows))
    else:
        print(render_text(rows))
    return 0


def add_ops_parser(sub: Any) -> None:
    p = sub.add_parser(
        "ops", help="the operators tinyarena sizes and runs",
        description="List every operator the tflite-micro wheel's PythonOpsResolver registers "
                    "(and tinyarena's own extra kernels), with the data types TFLM's kernel "
                    "accepts and whether tinyarena sizes its arena and runs it.")
    form = p.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="machine-readable output")
    form.add_argument("--markdown", action="store_true", help="the table of docs/operators.md")
    p.set_defaults(handler=_run_ops)
