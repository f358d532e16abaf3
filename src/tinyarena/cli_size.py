"""``tinyarena size`` over one or many models: the per-model work and the batch rendering.

``cli.py`` keeps the ``size`` parser; this module holds ``size_record`` (a module-level function
returning plain data, so a batch runs in a process pool with the same result per model as a
single call) and ``run_size``. Several ``--target`` or ``--esp-nn`` values give one record per
build and model; each record after the first of a model says what changed from the previous
build and which operator's scratch request moved the arena (``change``).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from typing import Any

from tinyarena.cli_common import (
    builds_from_args,
    check_build_arguments,
    check_output_arguments,
    error_object,
    expand_models,
    failed_record,
    is_single,
    records_per_build,
    announce_default,
    report_error,
    run_batch,
    side_by_side,
    target_defaulted,
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
                kernels: str | None = None, esp_nn: str | None = None,
                parsed: Any = None, separate_variables: bool = False,
                max_resource_variables: int | None = None,
                ethos_u_fast_memory: bool = False, libc: str = "full",
                build: str = "default") -> dict[str, Any]:
    """``size --json`` of one model (with its path under ``model``), or its error object;
    ``text`` holds the human rendering and is dropped from the JSON. ``warnings``: a plan
    that ``optimize`` proved safe only for other kernels than this target's.
    ``scratch_requests``: every kernel scratch request (operator and bytes). ``parsed``: the
    model already read (a batch sizing one model for several builds reads it once).
    ``separate_variables``: MicroResourceVariables in a second arena (``variables_arena``).
    ``alt_decompression_memory``: the alternate decompression memory the model needs (0
    without TFLM_DECODE outputs) and the arena with it; ``ethos_u`` (with
    ``ethos_u_fast_memory``): a driver fast memory for Vela's fast scratch and the arena
    without it. Device targets add ``footprint`` (flash and RAM for ``libc`` and ``build``;
    null with ``footprint_note`` where the code sizes were not measured)."""
    from tinyarena.arena import allocate_model
    from tinyarena.arena.other_memory import alt_decompression, ethos_u_memory
    from tinyarena.arena.targets import get_target
    from tinyarena.model import read_model
    from tinyarena.model.metadata import plan_safety
    from tinyarena.report import explain_arena, render_size, size_dict
    from tinyarena.report.changes import scratch_requests
    from tinyarena.report.text import render_other_memory

    try:
        profile = get_target(target, kernels, esp_nn)
        parsed = read_model(model) if parsed is None else parsed
        layout = allocate_model(parsed, target=profile, arena_size=arena_size,
                                separate_variables=separate_variables,
                                max_resource_variables=max_resource_variables)
        explained = explain_arena(parsed, layout)
        alt = alt_decompression(parsed, target=profile)
        npu = ethos_u_memory(parsed, target=profile) if ethos_u_fast_memory else None
        warnings: list[str] = []
        if plan_safety(parsed) is not None:  # only a plan tinyarena optimize pinned
            from tinyarena.optimize.safety import plan_warnings

            warnings = plan_warnings(parsed, profile)
    except TinyArenaError as exc:
        return {"model": model, "target": target, **error_object(exc)}
    extra: dict[str, Any] = {
        "alt_decompression_memory": 0 if alt is None else alt.nbytes,
        "arena_with_alt_decompression_memory": (None if alt is None or alt.with_memory is None
                                                else alt.with_memory.to_dict())}
    if ethos_u_fast_memory:  # null for a model without Vela's ethos-u operator
        extra["ethos_u"] = None if npu is None else npu.to_dict()
    text = "\n".join([render_size(layout, title=model, explanation=explained),
                      *render_other_memory(alt, npu)])
    record = {"model": model, **size_dict(layout, explained), **extra, "warnings": warnings,
              "scratch_requests": scratch_requests(explained), "build": _label(profile)}
    if profile.core is not None:  # a device build: the whole footprint
        from tinyarena.footprint import footprint_for

        found = footprint_for(parsed, len(parsed.raw), layout.min_arena, profile.name,
                              profile.kernel_set, libc, build)
        if isinstance(found, str):
            record.update(footprint=None, footprint_note=found)
            text += f"\nfootprint unknown: {found}"
        else:
            record.update(footprint=found.to_dict(), footprint_note=None)
            text += "\n" + "\n".join(found.render())
    return {**record, "text": text}


def _label(profile: Any) -> str:
    """A build as the change lines name it: ``esp32s3 esp-nn 1.2.0 (ESP32-S3 dispatch)``."""
    return f"{profile.name} {profile.kernels}"


def size_records(model: str, *, builds: tuple[tuple[str, str | None], ...],
                 arena_size: int | None, kernels: str | None = None,
                 separate_variables: bool = False,
                 max_resource_variables: int | None = None,
                 ethos_u_fast_memory: bool = False, libc: str = "full",
                 build: str = "default", source: Any = None) -> list[dict[str, Any]]:
    """``size_record`` for every build (target, esp-nn release), the model read once: one
    batch task per model (``source``: the model's bytes when ``model`` only names it)."""
    return records_per_build(size_record, model, builds, source=source, arena_size=arena_size,
                             kernels=kernels, separate_variables=separate_variables,
                             max_resource_variables=max_resource_variables,
                             ethos_u_fast_memory=ethos_u_fast_memory, libc=libc, build=build)


def _with_changes(records: list[dict[str, Any]], builds: int) -> None:
    """Each record after the first of its model gets ``change``: from the previous build."""
    from tinyarena.report.changes import arena_change

    for i, r in enumerate(records):
        prev = records[i - 1] if i % builds else None
        if prev is not None and "error" not in r and "error" not in prev:
            r["change"] = arena_change(prev, r, prev["build"])


def run_size(args: argparse.Namespace) -> int:
    from tinyarena.report.changes import change_lines

    check_output_arguments(args)
    check_build_arguments(args)
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
    builds = tuple(builds_from_args(args))
    job = functools.partial(size_records, builds=builds, arena_size=args.arena_size,
                            kernels=getattr(args, "kernels", None),
                            separate_variables=getattr(args, "separate_variables", False),
                            max_resource_variables=getattr(args, "max_resource_variables",
                                                           None),
                            ethos_u_fast_memory=getattr(args, "ethos_u_fast_memory", False),
                            libc=getattr(args, "libc", "full"),
                            build=getattr(args, "build", "default"))
    nested = run_batch(job, models, args.jobs, desc="size", executor=args.executor,
                       on_error=lambda model, exc: [failed_record(model, exc)] * len(builds))
    # one record per model and build, each model's builds together
    defaulted = target_defaulted(args)
    records = [{**r, "target_defaulted": defaulted} if "error" not in r else r
               for per_model in nested for r in per_model]
    _with_changes(records, len(builds))
    texts = [None if t is None else announce_default(args, t)
             for t in (r.pop("text", None) for r in records)]
    for r in records:  # on stderr with --json too: JSON lists them under "warnings"
        for warning in r.get("warnings", ()):
            print(f"warning: {r['model']}: {warning}", file=sys.stderr)
    if args.csv:
        write_csv(args.csv, [{**r, "error": r["error"]["message"]} if "error" in r
                             else {**r, "planner": r.get("planned_by")}  # JSON's planned_by
                             for r in records], CSV_COLUMNS)
    if args.json:
        single = is_single(args.model) and len(builds) == 1
        print(json.dumps(records[0] if single else records, indent=2))
    else:
        out = text_stream(args)
        blocks = []
        for r, text in zip(records, texts):
            if "error" in r:
                print(f"error: {r['model']}: {r['error']['message']}", file=sys.stderr)
            elif text is not None:
                extra = change_lines(r["change"]) if "change" in r else []
                blocks.append("\n".join([text, *extra]))
        if len(builds) > 1:
            blocks.append(side_by_side_text(records, [_column(t, v) for t, v in builds]))
        if blocks:
            print("\n\n".join(blocks), file=out)
    return 1 if any("error" in r for r in records) else 0


def _column(target: str, esp_nn: str | None) -> str:
    """A build's column name: the target, with the esp-nn release when one is named."""
    return target if esp_nn is None else f"{target} esp-nn {esp_nn}"


def side_by_side_text(records: list[dict[str, Any]], columns: list[str]) -> str:
    """Several builds in one table: per model, each quantity in one column per build.
    ``records`` hold each model's builds together, in the order of ``columns``."""
    n = len(columns)
    groups = [records[i:i + n] for i in range(0, len(records), n)]
    first_ok = {c: r for group in groups for c, r in zip(columns, group) if "error" not in r}
    lines = ["side by side (bytes): " + "; ".join(
        f"{c}: kernels {first_ok[c]['kernel_set']}, TFLM {first_ok[c]['tflm']}"
        for c in columns if c in first_ok)]
    for group in groups:
        rows = [(f"  {label}", ["error" if "error" in r else f"{r[key]:,}" for r in group])
                for label, key in SIDE_BY_SIDE]
        lines.append("")
        lines.extend(side_by_side(group[0]["model"], columns, rows))
    return "\n".join(lines)


__all__ = ["CSV_COLUMNS", "run_size", "side_by_side_text", "size_record", "size_records"]
