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
    builds_from_args,
    check_build_arguments,
    check_output_arguments,
    error_object,
    expand_models,
    failed_record,
    positive_size_argument,
    records_per_build,
    report_error,
    require_target,
    run_batch,
    side_by_side,
    target_line,
    targets_from_args,
    text_stream,
    write_csv,
)
from tinyarena.errors import TinyArenaError

EXIT_OK = 0
EXIT_BAD_INPUT = 1
EXIT_OVER_BUDGET = 3

CSV_COLUMNS = ("model", "target", "kernel_set", "tflm", "budget", "min_arena", "fits", "over_by",
               "headroom", "error")


def check_record(model: str, *, target: str, budget: int,
                 kernels: str | None = None, esp_nn: str | None = None,
                 parsed: Any = None, ram_budget: int | None = None,
                 flash_budget: int | None = None, libc: str = "full") -> dict[str, Any]:
    """Does ``model`` fit ``budget`` bytes of arena on ``target``? As a JSON-ready dict.

    The arena a model needs is ``min_arena`` (the smallest arena TFLM's AllocateTensors
    accepts), declared 16-byte aligned; ``over_by`` is how many bytes it lacks."""
    from tinyarena.arena import allocate_model
    from tinyarena.arena.targets import get_target
    from tinyarena.errors import PlanError
    from tinyarena.model import read_model
    from tinyarena.optimize.safety import plan_warnings

    build: dict[str, Any] = {"model": model, "target": target}
    try:
        profile = get_target(target, kernels, esp_nn)
        build.update(kernel_set=profile.kernel_set, tflm=profile.tflm_commit)
        if profile.kernel_set == "esp-nn":
            build["esp_nn_version"] = profile.esp_nn_version
        parsed = read_model(model) if parsed is None else parsed
        unproven = plan_warnings(parsed, profile)
        if unproven:  # its size is right, but the firmware would compute wrong outputs
            raise PlanError(f"not safe on target {profile.name}: {unproven[0]}")
        layout = allocate_model(parsed, target=profile)
    except TinyArenaError as exc:
        return {**build, "budget": budget, **error_object(exc)}
    need = int(layout.min_arena)
    record = {**build, "budget": budget, "min_arena": need,
              "fits": need <= budget, "over_by": max(0, need - budget),
              "headroom": max(0, budget - need)}
    if ram_budget is None and flash_budget is None:
        return record
    return _footprint_gate(record, parsed, layout.min_arena, profile, ram_budget,
                           flash_budget, libc)


def _footprint_gate(record: dict[str, Any], model: Any, min_arena: int, profile: Any,
                    ram_budget: int | None, flash_budget: int | None,
                    libc: str) -> dict[str, Any]:
    """``check``'s record with the whole footprint gated too: ``footprint`` and ``fits`` false
    when RAM (arena + static) or flash (model + code) is over its budget; an error when the
    code sizes for the build were not measured (a gate never passes on a guess)."""
    from tinyarena.footprint import footprint_for

    found = footprint_for(model, len(model.raw), min_arena, profile.name, profile.kernel_set,
                          libc)
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
    missing = require_target(args, "check")
    if missing is not None:
        return missing
    check_output_arguments(args)
    check_build_arguments(args)
    models = expand_models(args.model)
    if not models:
        report_error(args, "ModelError", f"no .tflite files in {', '.join(args.model)}")
        return EXIT_BAD_INPUT
    builds = tuple(builds_from_args(args))
    job = functools.partial(check_records, builds=builds, budget=args.budget,
                            kernels=getattr(args, "kernels", None),
                            ram_budget=getattr(args, "ram_budget", None),
                            flash_budget=getattr(args, "flash_budget", None),
                            libc=getattr(args, "libc", "full"))
    nested = run_batch(job, models, args.jobs, desc="check", executor=args.executor,
                       on_error=lambda model, exc: [failed_record(model, exc)] * len(builds))
    summaries = [_summary(args, build, [per_model[i] for per_model in nested])
                 for i, build in enumerate(builds)]
    if args.csv:
        write_csv(args.csv, [{**r, "error": r["error"]["message"]} if "error" in r else r
                             for s in summaries for r in s["models"]], CSV_COLUMNS)
    if args.json:
        print(json.dumps(summaries[0] if len(summaries) == 1 else summaries, indent=2))
    else:
        _print_summaries(args, summaries)
    statuses = {s["exit_code"] for s in summaries}
    return next((s for s in (EXIT_BAD_INPUT, EXIT_OVER_BUDGET) if s in statuses), EXIT_OK)


def check_records(model: str, *, builds: tuple[tuple[str, str | None], ...], budget: int,
                  kernels: str | None = None, ram_budget: int | None = None,
                  flash_budget: int | None = None, libc: str = "full",
                  source: Any = None) -> list[dict[str, Any]]:
    """``check_record`` for every build (target, esp-nn release), the model read once: one
    batch task per model (``source``: the model's bytes when ``model`` only names it)."""
    return records_per_build(check_record, model, builds, source=source,
                             unreadable={"budget": budget}, budget=budget, kernels=kernels,
                             ram_budget=ram_budget, flash_budget=flash_budget, libc=libc)


def _summary(args: argparse.Namespace, build: tuple[str, str | None],
             records: list[dict[str, Any]]) -> dict[str, Any]:
    """``check --json`` for one build: every model's record and the verdict."""
    target, esp_nn = build
    profile = _profile(target, getattr(args, "kernels", None), esp_nn)
    kernel_set, tflm = profile.kernel_set, profile.tflm_commit
    errors = sum("error" in r for r in records)
    over = sum(r.get("fits") is False for r in records)
    status = EXIT_BAD_INPUT if errors else EXIT_OVER_BUDGET if over else EXIT_OK
    esp = {"esp_nn_version": profile.esp_nn_version} if kernel_set == "esp-nn" else {}
    return {"ok": status == EXIT_OK, "exit_code": status, "target": target,
            "kernel_set": kernel_set, **esp, "tflm": tflm, "budget": args.budget,
            "fits": len(records) - over - errors, "over_budget": over, "errors": errors,
            "models": records}


def _print_summaries(args: argparse.Namespace, summaries: list[dict[str, Any]]) -> None:
    """One block per target (its target line first), then, for several, one row per model."""
    out = text_stream(args)
    for i, s in enumerate(summaries):
        if i:
            print(file=out)
        print(target_line(_profile(s["target"], getattr(args, "kernels", None),
                                   s.get("esp_nn_version"))), file=out)
        for r in s["models"]:
            if "error" in r:
                print(f"ERROR  {r['model']}: {r['error']['message']}", file=sys.stderr)
            elif r["fits"]:
                print(f"ok     {r['model']}: {r['min_arena']:,} bytes, {r['headroom']:,} under "
                      f"the {args.budget:,}-byte budget{_footprint_words(r)}", file=out)
            else:
                print(f"OVER   {r['model']}: {r['min_arena']:,} bytes, {r['over_by']:,} over "
                      f"the {args.budget:,}-byte budget{_footprint_words(r)}", file=out)
        print(f"{len(s['models'])} model(s) on {_label(s)} (kernels {s['kernel_set']}, TFLM "
              f"{s['tflm']}): {s['fits']} fit, {s['over_budget']} over budget, {s['errors']} "
              f"could not be sized", file=out)
    if len(summaries) > 1:
        print(file=out)
        print(f"side by side: minimum arena (bytes) against the {args.budget:,}-byte budget",
              file=out)
        rows = [(r["model"], [_cell(s["models"][i]) for s in summaries])
                for i, r in enumerate(summaries[0]["models"])]
        print("\n".join(side_by_side("model", [_label(s) for s in summaries], rows)),
              file=out)


def _cell(record: dict[str, Any]) -> str:
    if "error" in record:
        return "error"
    return f"{record['min_arena']:,}" + ("" if record["fits"] else " OVER")


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


def _profile(target: str, kernels: str | None, esp_nn: str | None) -> Any:
    """The build the numbers hold for (kernel set, esp-nn release and TFLM version differ)."""
    from tinyarena.arena.targets import get_target

    return get_target(target, kernels, esp_nn)


def _label(summary: dict[str, Any]) -> str:
    """A build's column name: the target, with the esp-nn release when one is named."""
    version = summary.get("esp_nn_version")
    return summary["target"] if version is None else f"{summary['target']} esp-nn {version}"


def add_check_parser(sub: Any) -> None:
    p = sub.add_parser(
        "check", help="CI gate: does every model's arena fit the budget?",
        description="Size each MODEL's minimum working arena on --target and compare it with "
                    "--budget. Exit 0 when all fit, 3 when one or more is over budget (the "
                    "bytes over are printed per model), 1 when a model cannot be sized "
                    "(missing, malformed, unsupported) or is an optimized model whose plan "
                    "is not proven for the target's kernels, 2 for bad arguments or no "
                    "--target. --json always prints one JSON object, errors included.")
    add_batch_arguments(p)
    p.add_argument("--budget", type=positive_size_argument, required=True, metavar="BYTES",
                   help="arena bytes available on the device: 98304, 0x18000, 96K or 96KiB")
    add_target_argument(p, several=True, required=True)
    add_footprint_budgets(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=run_check)


__all__ = ["CSV_COLUMNS", "EXIT_BAD_INPUT", "EXIT_OK", "EXIT_OVER_BUDGET", "add_check_parser",
           "check_record", "check_records", "run_check"]
