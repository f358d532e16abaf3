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
                kernels: str | None = None, ethos_u_fast_memory: bool = False
                ) -> dict[str, Any]:
    """``size --json`` of one model (with its path under ``model``), or its error object;
    ``text`` holds the human rendering and is dropped from the JSON. ``warnings``: a plan
    that ``optimize`` proved safe only for other kernels than this target's.
    ``alt_decompression_memory``: the alternate decompression memory the model needs (0
    without TFLM_DECODE outputs) and the arena with it; ``ethos_u`` (with
    ``ethos_u_fast_memory``): a driver fast memory for Vela's fast scratch and the arena
    without it."""
    from tinyarena.arena import allocate_model
    from tinyarena.arena.other_memory import alt_decompression, ethos_u_memory
    from tinyarena.arena.targets import get_target
    from tinyarena.model import read_model
    from tinyarena.model.metadata import plan_safety
    from tinyarena.report import explain_arena, render_size, size_dict
    from tinyarena.report.text import render_other_memory

    try:
        profile = get_target(target, kernels)
        parsed = read_model(model)
        layout = allocate_model(parsed, target=profile, arena_size=arena_size)
        explained = explain_arena(parsed, layout)
        alt = alt_decompression(parsed, target=profile)
        npu = ethos_u_memory(parsed, target=profile) if ethos_u_fast_memory else None
        warnings: list[str] = []
        if plan_safety(parsed) is not None:  # only a plan tinyarena optimize pinned
            from tinyarena.optimize.safety import plan_warnings

            warnings = plan_warnings(parsed, profile)
    except TinyArenaError as exc:
        return {"model": model, **error_object(exc)}
    extra: dict[str, Any] = {
        "alt_decompression_memory": 0 if alt is None else alt.nbytes,
        "arena_with_alt_decompression_memory": (None if alt is None or alt.with_memory is None
                                                else alt.with_memory.to_dict())}
    if ethos_u_fast_memory:  # null for a model without Vela's ethos-u operator
        extra["ethos_u"] = None if npu is None else npu.to_dict()
    text = "\n".join([render_size(layout, title=model, explanation=explained),
                      *render_other_memory(alt, npu)])
    return {"model": model, **size_dict(layout, explained), **extra, "warnings": warnings,
            "text": text}


def run_size(args: argparse.Namespace) -> int:
    models = expand_models(args.model)
    if not models:
        report_error(args, "ModelError", f"no .tflite files in {', '.join(args.model)}")
        return 1
    job = functools.partial(size_record, target=args.target, arena_size=args.arena_size,
                            kernels=getattr(args, "kernels", None),
                            ethos_u_fast_memory=getattr(args, "ethos_u_fast_memory", False))
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
