"""``tinyarena size`` over one or many models: the per-model work and the batch rendering.

``cli.py`` keeps the ``size`` parser; this module holds ``size_record`` (a module-level function
returning plain data, so a batch runs in a process pool with the same result per model as a
single call) and ``run_size``.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from typing import Any

from tinyarena.cli_common import (
    error_object,
    expand_models,
    is_single,
    report_error,
    run_batch,
    write_csv,
)
from tinyarena.errors import TinyArenaError

CSV_COLUMNS = ("model", "target", "allocator", "planner", "head", "tail", "total", "min_arena",
               "error")


def size_record(model: str, *, target: str, arena_size: int | None,
                kernels: str | None = None, libc: str = "full",
                build: str = "default") -> dict[str, Any]:
    """``size --json`` of one model (with its path under ``model``), or its error object;
    ``text`` holds the human rendering and is dropped from the JSON. ``warnings``: a plan
    that ``optimize`` proved safe only for other kernels than this target's. Device targets
    add ``footprint`` (flash and RAM for ``libc`` and ``build``; null with
    ``footprint_note`` where the code sizes were not measured)."""
    from tinyarena.arena import allocate_model
    from tinyarena.arena.targets import get_target
    from tinyarena.model import read_model
    from tinyarena.model.metadata import plan_safety
    from tinyarena.report import explain_arena, render_size, size_dict

    try:
        profile = get_target(target, kernels)
        parsed = read_model(model)
        layout = allocate_model(parsed, target=profile, arena_size=arena_size)
        explained = explain_arena(parsed, layout)
        warnings: list[str] = []
        if plan_safety(parsed) is not None:  # only a plan tinyarena optimize pinned
            from tinyarena.optimize.safety import plan_warnings

            warnings = plan_warnings(parsed, profile)
    except TinyArenaError as exc:
        return {"model": model, **error_object(exc)}
    text = render_size(layout, title=model, explanation=explained)
    record = {"model": model, **size_dict(layout, explained), "warnings": warnings}
    if profile.core is not None:  # a device build: the whole footprint
        from pathlib import Path

        from tinyarena.footprint import footprint_for

        found = footprint_for(parsed, Path(model).stat().st_size, layout.min_arena,
                              profile.name, profile.kernel_set, libc, build)
        if isinstance(found, str):
            record.update(footprint=None, footprint_note=found)
            text += f"\nfootprint unknown: {found}"
        else:
            record.update(footprint=found.to_dict(), footprint_note=None)
            text += "\n" + "\n".join(found.render())
    return {**record, "text": text}


def run_size(args: argparse.Namespace) -> int:
    models = expand_models(args.model)
    if not models:
        report_error(args, "ModelError", f"no .tflite files in {', '.join(args.model)}")
        return 1
    if getattr(args, "build", "default") != "default":
        from tinyarena.footprint import unmeasured_build

        reason = unmeasured_build(args.build)
        if reason:
            report_error(args, "UsageError", reason)
            return 2
    job = functools.partial(size_record, target=args.target, arena_size=args.arena_size,
                            kernels=getattr(args, "kernels", None),
                            libc=getattr(args, "libc", "full"),
                            build=getattr(args, "build", "default"))
    records = run_batch(job, models, args.jobs, desc="size")
    texts = [r.pop("text", None) for r in records]
    for r in records:  # on stderr with --json too: JSON lists them under "warnings"
        for warning in r.get("warnings", ()):
            print(f"warning: {r['model']}: {warning}", file=sys.stderr)
    if args.csv:
        write_csv(args.csv, [{**r, "error": r["error"]["message"]} if "error" in r
                             else {**r, "planner": r.get("planned_by")}  # JSON's planned_by
                             for r in records], CSV_COLUMNS)
    if args.json:
        print(json.dumps(records[0] if is_single(args.model) else records, indent=2))
    else:
        blocks = []
        for r, text in zip(records, texts):
            if "error" in r:
                print(f"error: {r['model']}: {r['error']['message']}", file=sys.stderr)
            elif text is not None:
                blocks.append(text)
        if blocks:
            print("\n\n".join(blocks))
    return 1 if any("error" in r for r in records) else 0


__all__ = ["CSV_COLUMNS", "run_size", "size_record"]
