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
    check_build_arguments,
    check_output_arguments,
    error_object,
    expand_models,
    failed_record,
    is_single,
    report_error,
    run_batch,
    side_by_side,
    targets_from_args,
    text_stream,
    write_csv,
)
from tinyarena.errors import TinyArenaError

CSV_COLUMNS = ("model", "target", "kernel_set", "tflm", "allocator", "planner", "head", "tail",
               "total", "min_arena", "error")
# The side-by-side table of several --target: one row per quantity, one column per target.
SIDE_BY_SIDE = (("minimum arena", "min_arena"), ("arena used", "total"), ("head", "head"),
                ("tail", "tail"))


def size_record(model: str, *, target: str, arena_size: int | None,
                kernels: str | None = None, parsed: Any = None) -> dict[str, Any]:
    """``size --json`` of one model (with its path under ``model``), or its error object;
    ``text`` holds the human rendering and is dropped from the JSON. ``warnings``: a plan
    that ``optimize`` proved safe only for other kernels than this target's. ``parsed``: the
    model already read (a batch sizing one model for several targets reads it once)."""
    from tinyarena.arena import allocate_model
    from tinyarena.arena.targets import get_target
    from tinyarena.model import read_model
    from tinyarena.model.metadata import plan_safety
    from tinyarena.report import explain_arena, render_size, size_dict

    try:
        profile = get_target(target, kernels)
        parsed = read_model(model) if parsed is None else parsed
        layout = allocate_model(parsed, target=profile, arena_size=arena_size)
        explained = explain_arena(parsed, layout)
        warnings: list[str] = []
        if plan_safety(parsed) is not None:  # only a plan tinyarena optimize pinned
            from tinyarena.optimize.safety import plan_warnings

            warnings = plan_warnings(parsed, profile)
    except TinyArenaError as exc:
        return {"model": model, "target": target, **error_object(exc)}
    return {"model": model, **size_dict(layout, explained), "warnings": warnings,
            "text": render_size(layout, title=model, explanation=explained)}


def size_records(model: str, *, targets: tuple[str, ...], arena_size: int | None,
                 kernels: str | None = None) -> list[dict[str, Any]]:
    """``size_record`` for every target, the model read once: one batch task per model."""
    from tinyarena.model import read_model

    try:
        parsed = read_model(model)
    except TinyArenaError as exc:
        return [{"model": model, "target": t, **error_object(exc)} for t in targets]
    return [size_record(model, target=t, arena_size=arena_size, kernels=kernels,
                        parsed=parsed) for t in targets]


def run_size(args: argparse.Namespace) -> int:
    check_output_arguments(args)
    check_build_arguments(args)
    models = expand_models(args.model)
    if not models:
        report_error(args, "ModelError", f"no .tflite files in {', '.join(args.model)}")
        return 1
    targets = tuple(targets_from_args(args))
    job = functools.partial(size_records, targets=targets, arena_size=args.arena_size,
                            kernels=getattr(args, "kernels", None))
    nested = run_batch(job, models, args.jobs, desc="size", executor=args.executor,
                       on_error=lambda model, exc: [failed_record(model, exc)] * len(targets))
    # one record per model and target, each model's targets together
    records = [record for per_model in nested for record in per_model]
    texts = [r.pop("text", None) for r in records]
    for r in records:  # on stderr with --json too: JSON lists them under "warnings"
        for warning in r.get("warnings", ()):
            print(f"warning: {r['model']}: {warning}", file=sys.stderr)
    if args.csv:
        write_csv(args.csv, [{**r, "error": r["error"]["message"]} if "error" in r
                             else {**r, "planner": r.get("planned_by")}  # JSON's planned_by
                             for r in records], CSV_COLUMNS)
    if args.json:
        one = is_single(args.model) and len(targets) == 1
        print(json.dumps(records[0] if one else records, indent=2))
    else:
        out = text_stream(args)
        blocks = []
        for r, text in zip(records, texts):
            if "error" in r:
                print(f"error: {r['model']}: {r['error']['message']}", file=sys.stderr)
            elif text is not None:
                blocks.append(text)
        if len(targets) > 1:
            blocks.append(side_by_side_text(records, targets))
        if blocks:
            print("\n\n".join(blocks), file=out)
    return 1 if any("error" in r for r in records) else 0


def side_by_side_text(records: list[dict[str, Any]], targets: list[str]) -> str:
    """Several --target in one table: per model, each quantity in one column per target."""
    models = list(dict.fromkeys(r["model"] for r in records))
    found = {(r["model"], r.get("target")): r for r in records if "error" not in r}
    builds = {t: r for (m, t), r in found.items()}
    lines = ["side by side (bytes): " + "; ".join(
        f"{t}: kernels {builds[t]['kernel_set']}, TFLM {builds[t]['tflm']}"
        for t in targets if t in builds)]
    for model in models:
        rows = [(f"  {label}", ["error" if (model, t) not in found
                                else f"{found[(model, t)][key]:,}" for t in targets])
                for label, key in SIDE_BY_SIDE]
        lines.append("")
        lines.extend(side_by_side(model, targets, rows))
    return "\n".join(lines)


__all__ = ["CSV_COLUMNS", "run_size", "side_by_side_text", "size_record", "size_records"]
