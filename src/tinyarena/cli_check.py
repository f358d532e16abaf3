"""``tinyarena check``: a CI gate on the arena budget of one or many models.

Exit status: 0 when every model fits, ``EXIT_OVER_BUDGET`` (3) when one or more does not (and
every model could be sized), 1 when a model could not be sized (missing, malformed, an op TFLM
does not have), 2 for a usage error. With ``--json`` the output is always one JSON object, on
success and on failure alike.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from typing import Any

from tinyarena.cli_common import (
    add_batch_arguments,
    add_footprint_budgets,
    add_target_argument,
    error_object,
    expand_models,
    positive_size_argument,
    report_error,
    run_batch,
    write_csv,
)
from tinyarena.errors import TinyArenaError

EXIT_OK = 0
EXIT_BAD_INPUT = 1
EXIT_OVER_BUDGET = 3

CSV_COLUMNS = ("model", "target", "budget", "min_arena", "fits", "over_by", "headroom", "error")


def check_record(model: str, *, target: str, budget: int,
                 kernels: str | None = None, ram_budget: int | None = None,
                 flash_budget: int | None = None, libc: str = "full") -> dict[str, Any]:
    """Does ``model`` fit ``budget`` bytes of arena on ``target``? As a JSON-ready dict.

    The arena a model needs is ``min_arena`` (the smallest arena TFLM's AllocateTensors
    accepts), declared 16-byte aligned; ``over_by`` is how many bytes it lacks."""
    from tinyarena.arena import allocate_model
    from tinyarena.arena.targets import get_target
    from tinyarena.model import read_model

    try:
        layout = allocate_model(read_model(model), target=get_target(target, kernels))
    except TinyArenaError as exc:
        return {"model": model, "target": target, "budget": budget, **error_object(exc)}
    need = int(layout.min_arena)
    record = {"model": model, "target": target, "budget": budget, "min_arena": need,
              "fits": need <= budget, "over_by": max(0, need - budget),
              "headroom": max(0, budget - need)}
    if ram_budget is None and flash_budget is None:
        return record
    return _footprint_gate(record, model, layout.min_arena, target, kernels, ram_budget,
                          flash_budget, libc)


def _footprint_gate(record: dict[str, Any], model: str, min_arena: int, target: str,
                   kernels: str | None, ram_budget: int | None, flash_budget: int | None,
                   libc: str) -> dict[str, Any]:
    """``check``'s record with the whole footprint gated too: ``footprint`` and ``fits`` false
    when RAM (arena + static) or flash (model + code) is over its budget; an error when the
    code sizes for the build were not measured (a gate never passes on a guess)."""
    from pathlib import Path

    from tinyarena.arena.targets import get_target
    from tinyarena.footprint import footprint_for
    from tinyarena.model import read_model

    profile = get_target(target, kernels)
    found = footprint_for(read_model(model), Path(model).stat().st_size, min_arena,
                          profile.name, profile.kernel_set, libc)
    if isinstance(found, str):
        return {**record, "fits": None, "error": {"type": "FootprintUnknown",
                                                  "message": f"footprint: {found}"}}
    ram_over = ram_budget is not None and found.ram_total > ram_budget
    flash_over = flash_budget is not None and found.flash_total > flash_budget
    return {**record, "fits": bool(record["fits"]) and not ram_over and not flash_over,
            "footprint": {**found.to_dict(), "ram_budget": ram_budget,
                          "flash_budget": flash_budget, "ram_over": ram_over,
                          "flash_over": flash_over}}


def run_check(args: argparse.Namespace) -> int:
    models = expand_models(args.model)
    if not models:
        report_error(args, "ModelError", f"no .tflite files in {', '.join(args.model)}")
        return EXIT_BAD_INPUT
    job = functools.partial(check_record, target=args.target, budget=args.budget,
                            kernels=getattr(args, "kernels", None),
                            ram_budget=getattr(args, "ram_budget", None),
                            flash_budget=getattr(args, "flash_budget", None),
                            libc=getattr(args, "libc", "full"))
    records = run_batch(job, models, args.jobs, desc="check")
    build = _build_words(args)
    errors = sum("error" in r for r in records)
    over = sum(r.get("fits") is False for r in records)
    status = EXIT_BAD_INPUT if errors else EXIT_OVER_BUDGET if over else EXIT_OK
    if args.csv:
        write_csv(args.csv, [{**r, "error": r["error"]["message"]} if "error" in r else r
                             for r in records], CSV_COLUMNS)
    if args.json:
        print(json.dumps({"ok": status == EXIT_OK, "exit_code": status, "target": args.target,
                          "kernel_set": build[0], "tflm": build[1], "budget": args.budget,
                          "fits": len(records) - over - errors,
                          "over_budget": over, "errors": errors, "models": records}, indent=2))
        return status
    for r in records:
        if "error" in r:
            print(f"ERROR  {r['model']}: {r['error']['message']}", file=sys.stderr)
        elif r["fits"]:
            print(f"ok     {r['model']}: {r['min_arena']:,} bytes, {r['headroom']:,} under "
                  f"the {args.budget:,}-byte budget{_footprint_words(r)}")
        else:
            print(f"OVER   {r['model']}: {r['min_arena']:,} bytes, {r['over_by']:,} over the "
                  f"{args.budget:,}-byte budget{_footprint_words(r)}")
    print(f"{len(records)} model(s) on {args.target} (kernels {build[0]}, TFLM {build[1]}): "
          f"{len(records) - over - errors} fit, {over} over budget, {errors} could not be sized")
    return status


def _footprint_words(r: dict[str, Any]) -> str:
    """The footprint gate's part of a ``check`` line (empty without --ram/--flash-budget)."""
    fp = r.get("footprint")
    if fp is None:
        return ""
    words = []
    for memory, budget_key, over_key in (("ram", "ram_budget", "ram_over"),
                                         ("flash", "flash_budget", "flash_over")):
        if fp[budget_key] is not None:
            state = "OVER" if fp[over_key] else "within"
            words.append(f"{memory} {fp[memory]['total']:,} {state} {fp[budget_key]:,}")
    return "; footprint " + ", ".join(words)


def _build_words(args: argparse.Namespace) -> tuple[str, str]:
    """The kernel set and TFLM version the numbers hold for (they differ between builds)."""
    from tinyarena.arena.targets import get_target

    profile = get_target(args.target, getattr(args, "kernels", None))
    return profile.kernel_set, profile.tflm_commit


def add_check_parser(sub: Any) -> None:
    p = sub.add_parser(
        "check", help="CI gate: does every model's arena fit the budget?",
        description="Size each MODEL's minimum working arena on --target and compare it with "
                    "--budget. Exit 0 when all fit, 3 when one or more is over budget (the "
                    "bytes over are printed per model), 1 when a model cannot be sized "
                    "(missing, malformed, unsupported), 2 for bad arguments. --json always "
                    "prints one JSON object, errors included.")
    add_batch_arguments(p)
    p.add_argument("--budget", type=positive_size_argument, required=True, metavar="BYTES",
                   help="arena bytes available on the device: 98304, 0x18000, 96K or 96KiB")
    add_target_argument(p)
    add_footprint_budgets(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=run_check)


__all__ = ["CSV_COLUMNS", "EXIT_BAD_INPUT", "EXIT_OK", "EXIT_OVER_BUDGET", "add_check_parser",
           "check_record", "run_check"]
