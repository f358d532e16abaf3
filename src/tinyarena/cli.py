"""The ``tinyarena`` command: parse, make one library call, render.

Each subcommand is a small ``_cmd_<name>`` registrar that adds its parser and sets its handler;
``COMMANDS`` lists them in one place, so adding a subcommand is one function and one line.
Errors from the library (``TinyArenaError``) become ``error: <message>`` on stderr, exit 1;
a ``UsageError`` (options that name nothing or contradict each other) exits 2, like argparse's.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from typing import Any, Callable, Sequence

from tinyarena.cli_common import (
    add_batch_arguments,
    add_executor_argument,
    add_footprint_arguments,
    add_target_argument,
    announce_default,
    check_esp_nn_usage,
    error_object,
    expand_models,
    is_single,
    oserror_message,
    plan_warnings,
    positive_int_argument,
    seconds_argument,
    size_argument,
    target_defaulted,
    target_from_args,
    target_line,
    version_text,
)
from tinyarena.errors import PlanError, TinyArenaError, UsageError

Registrar = Callable[[Any], None]  # takes the subparsers action


def _layout(args: argparse.Namespace, **kwargs: Any) -> Any:
    from tinyarena.arena import allocate_model
    from tinyarena.model import read_model

    return allocate_model(read_model(args.model), **kwargs)


def _emit(args: argparse.Namespace, data: dict[str, Any], text: str,
          warnings: list[str] | None = None) -> int:
    if args.json:
        print(json.dumps(data if warnings is None else {**data, "warnings": warnings},
                         indent=2))
    else:
        print(text)
    return 0


def _run_plan(args: argparse.Namespace) -> int:
    if args.buffers is not None:
        from tinyarena.cli_buffers import run_plan_buffers

        return run_plan_buffers(args)
    if args.model is None:
        raise UsageError("plan needs a model (a .tflite file) or --buffers FILE.csv")
    from tinyarena.arena.targets import get_target
    from tinyarena.model import read_model
    from tinyarena.report import explain_arena, plan_dict, render_plan

    model = read_model(args.model)
    if args.planner == "optimal":
        from tinyarena.optimize import optimal_layout

        # The layout is TFLM's, running the best plan pinned offline; name it for what it is.
        profile = target_from_args(args)
        if profile.kernel_set != get_target(profile.name).kernel_set:
            raise UsageError("--planner optimal plans for the target's own kernel set; drop "
                             "--kernels or use --planner greedy")
        layout = dataclasses.replace(optimal_layout(model, target=profile),
                                     planner="optimal")
    else:
        from tinyarena.arena import allocate_model

        layout = allocate_model(model, planner=args.planner, target=target_from_args(args))
    explained = explain_arena(model, layout)
    if args.svg:
        from pathlib import Path

        from tinyarena.report.svg import plan_svg

        Path(args.svg).write_text(plan_svg(explained, title=args.model), encoding="utf-8")
    return _emit(args, {**plan_dict(layout, explained),
                        "target_defaulted": target_defaulted(args)},
                 announce_default(args, render_plan(layout, title=args.model,
                                                    ascii_picture=args.ascii,
                                                    explanation=explained)),
                 plan_warnings(args))


def _cmd_plan(sub: Any) -> None:
    p = sub.add_parser("plan", help="the memory plan of the head (TFLM's planners)",
                       description="Show where TFLM's memory planner puts every tensor and "
                                   "scratch buffer of MODEL in the arena's head.")
    p.add_argument("model", nargs="?", help="a .tflite file")
    p.add_argument("--buffers", metavar="FILE.csv",
                   help="plan these buffers instead of a model's: MiniMalloc's CSV "
                        "(id,lower,upper,size; live on [lower, upper))")
    p.add_argument("--planner", choices=("greedy", "linear", "optimal"), default="greedy",
                   help="TFLM's GreedyMemoryPlanner (default) or LinearMemoryPlanner, or the "
                        "best plan tinyarena finds (as TFLM runs it when pinned offline)")
    p.add_argument("--time-budget", type=seconds_argument, default=1.0, metavar="SECONDS",
                   help="with --planner optimal: the whole command's time, start-up and "
                        "reading included (default 1)")
    add_target_argument(p)
    p.add_argument("--ascii", action="store_true", help="add TFLM's PrintMemoryPlan picture")
    p.add_argument("--svg", metavar="FILE", help="also write the plan as an SVG picture")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_run_plan)


def _run_size(args: argparse.Namespace) -> int:
    from tinyarena.cli_layouts import run_layouts, wants_layouts
    from tinyarena.cli_size import run_size

    if wants_layouts(args):
        if args.separate_variables or args.max_resource_variables is not None:
            from tinyarena.cli_common import report_error

            report_error(args, "UsageError", "--separate-variables and "
                         "--max-resource-variables size one model's tensor arena; drop them "
                         "or drop --split/--shared-arena")
            return 2
        return run_layouts(args, args.model)
    return run_size(args)


def _cmd_size(sub: Any) -> None:
    p = sub.add_parser("size", help="arena bytes TFLM needs for a model",
                       description="Emulate TFLM's AllocateTensors for MODEL and report the "
                                   "arena it uses (head + tail), the minimum working arena and "
                                   "the tail by TFLM's recording categories. Declare "
                                   "min_arena bytes, 16-byte aligned.")
    add_batch_arguments(p)
    add_target_argument(p, several=True)
    p.add_argument("--arena-size", type=size_argument, default=None, metavar="N",
                   help="check that an arena of N bytes (98304, 0x18000, 96K) is enough "
                        "(fails like TFLM otherwise)")
    add_footprint_arguments(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--ethos-u-fast-memory", action="store_true",
                   help="Vela models: the Ethos-U driver has its own fast memory; also give the "
                        "fast memory Vela's fast scratch needs and the arena without it")
    from tinyarena.cli_common import add_variables_arguments
    from tinyarena.cli_layouts import add_layout_arguments

    add_layout_arguments(p)
    add_variables_arguments(p)
    p.set_defaults(handler=_run_size)


def _cmd_run(sub: Any) -> None:
    from tinyarena.cli_run import add_run_parser

    add_run_parser(sub)


def _cmd_check(sub: Any) -> None:
    from tinyarena.cli_check import add_check_parser

    add_check_parser(sub)


def _cmd_export(sub: Any) -> None:
    from tinyarena.cli_export import add_export_parser

    add_export_parser(sub)


def _cmd_demo(sub: Any) -> None:
    from tinyarena.cli_run import add_demo_parser

    add_demo_parser(sub)


def _cmd_whatif(sub: Any) -> None:
    from tinyarena.cli_whatif import add_whatif_parser

    add_whatif_parser(sub)


def _budget_left(args: argparse.Namespace) -> float:
    """--time-budget counts the whole command: what start-up and parsing left of it."""
    spent = time.perf_counter() - getattr(args, "started", time.perf_counter())
    return max(args.time_budget - spent, 0.0)


def _run_optimize(args: argparse.Namespace) -> int:
    from pathlib import Path

    if not is_single(args.model):
        return _run_optimize_many(args)
    args.model = args.model[0]
    from tinyarena.optimize import optimize_model
    from tinyarena.optimize.report import render_optimize

    if args.max_extra_macs is not None and not args.patches:
        args.optimize_parser.error("--max-extra-macs bounds the recomputation of --patches; "
                                   "add --patches or drop it")
    kernel_set = args.kernel_set or getattr(args, "kernels", None)
    # --esp-nn picks the esp32* build the before/after numbers are for (the profile carries it)
    target = target_from_args(args) if getattr(args, "esp_nn", None) else args.target
    sized_on = _optimize_build(target, kernel_set)
    _refuse_overwrite(args.model, args.output, args.force)
    if args.time_budget is None:
        args.time_budget = 1.0
        if args.patches:
            from tinyarena.optimize.patches import PATCHES_TIME_BUDGET

            args.time_budget = PATCHES_TIME_BUDGET
    options: dict[str, Any] = dict(
        reorder=args.reorder, overlap=args.overlap, time_budget_s=_budget_left(args),
        target=target, kernel_set=kernel_set)
    if args.patches:
        from tinyarena.optimize.patches import DEFAULT_MAX_EXTRA_MACS, optimize_with_patches

        pct = DEFAULT_MAX_EXTRA_MACS if args.max_extra_macs is None else args.max_extra_macs
        result = optimize_with_patches(args.model, max_extra_macs=pct, **options)
    else:
        result = optimize_model(args.model, progress=_search_progress(args.time_budget),
                                **options)
    Path(args.output).write_bytes(result.model)
    data = {"model": args.model, "output": args.output, **result.to_dict()}
    return _emit(args, data, f"{target_line(sized_on)}\n"
                             f"{render_optimize(result, args.model, args.output)}")


def _optimize_build(target: Any, kernel_set: str | None) -> Any:
    """The build optimize's before/after sizes are for; an unknown --kernel-set is a usage
    error (exit 2) before any model is read."""
    from tinyarena.errors import PlanError
    from tinyarena.optimize.pipeline import resolve_kernel_set

    try:
        return resolve_kernel_set(target, kernel_set)[0]
    except PlanError as exc:
        raise UsageError(str(exc)) from None


def _run_optimize_many(args: argparse.Namespace) -> int:
    """optimize MODEL... or DIR... -o OUTDIR: one optimized model per input, in OUTDIR."""
    from tinyarena.batch import optimize_models

    pairs = batch_outputs(args.model, args.output)
    if not pairs:
        raise PlanError(f"no .tflite files in {', '.join(args.model)}")
    for model, output in pairs:
        _refuse_overwrite(model, output, args.force)
    if args.patches or args.max_extra_macs is not None:
        raise UsageError("--patches optimizes one model at a time; give one .tflite file")
    records = optimize_models([m for m, _ in pairs], [o for _, o in pairs], (args.target,),
                              kernel_set=args.kernel_set or getattr(args, "kernels", None),
                              time_budget_s=1.0 if args.time_budget is None else args.time_budget,
                              reorder=args.reorder,
                              overlap=args.overlap, jobs=args.jobs, executor=args.executor)
    if args.json:
        print(json.dumps(records, indent=2))
    for r in records:
        if "error" in r:
            print(f"error: {r['model']}: {r['error']['message']}", file=sys.stderr)
        elif not args.json:
            after, before = r["after"]["min_arena"], r["before"]["min_arena"]
            print(f"{r['model']} -> {r['output']}: min_arena {before:,} -> {after:,} bytes"
                  f" ({'proven optimal' if r['optimal'] else 'not proven optimal'})")
    return 1 if any("error" in r for r in records) else 0


def batch_outputs(inputs: Sequence[str], outdir: str) -> list[tuple[str, str]]:
    """(model, output) for ``optimize`` over several models: a model named as a file keeps
    its file name in ``outdir``; a folder's models keep their paths below that folder. Two
    inputs that would write the same output are refused."""
    from pathlib import Path

    pairs: list[tuple[str, str]] = []
    for text in inputs:  # a folder's models as every batch command finds them
        root = Path(text)
        pairs.extend((model, str(Path(outdir) / (Path(model).relative_to(root) if root.is_dir()
                                                 else root.name)))
                     for model in expand_models([text]))
    seen: dict[str, str] = {}
    for model, output in pairs:
        if output in seen:
            raise PlanError(f"{seen[output]} and {model} would both be written to {output}; "
                            f"optimize them in separate runs")
        seen[output] = model
    return pairs


LONG_SEARCH_S = 5.0
"""From this --time-budget on, `optimize` reports its placement search's progress on stderr."""


def _search_progress(budget: float) -> Callable[[str], None] | None:
    """Progress lines on stderr for long searches on a terminal (stdout stays the result)."""
    if budget < LONG_SEARCH_S or not sys.stderr.isatty():
        return None

    def show(line: str) -> None:
        print(f"optimize: {line}", file=sys.stderr, flush=True)
    return show


def _refuse_overwrite(model: str, output: str, force: bool) -> None:
    """optimize never replaces its input, or any existing file, unless --force."""
    from pathlib import Path

    from tinyarena.errors import BuildError

    out = Path(output)
    if force or not out.exists():
        return
    same = Path(model).exists() and out.resolve() == Path(model).resolve()
    what = "is the input model" if same else "exists"
    raise BuildError(f"{output} {what}; choose another -o, or pass --force to overwrite it")


def _percent_argument(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a percentage >= 0, got {text!r}")
    return value


def _cmd_optimize(sub: Any) -> None:
    p = sub.add_parser("optimize", help="write a model that TFLM runs in a smaller arena",
                       description="Reorder operators, let views and in-place element-wise "
                                   "ops share bytes, search a placement certified against a "
                                   "lower bound, and pin it in the model as "
                                   "OfflineMemoryAllocation metadata. The unmodified TFLM "
                                   "follows it and computes identical outputs.")
    p.add_argument("model", nargs="+",
                   help="a .tflite file; or several files or folders, then -o is a folder")
    p.add_argument("-o", "--output", required=True,
                   help="where to write the optimized model (a folder for several models: "
                        "each keeps its file name, a folder's models their relative paths)")
    p.add_argument("--jobs", "-j", type=positive_int_argument, default=1, metavar="N",
                   help="models optimized in parallel (processes; default 1)")
    add_executor_argument(p)
    p.add_argument("--force", action="store_true",
                   help="overwrite OUTPUT if it exists (even when it is the input model)")
    p.add_argument("--reorder", action=argparse.BooleanOptionalAction, default=True,
                   help="search a better operator order (default on)")
    p.add_argument("--overlap", choices=("none", "views", "safe"), default="safe",
                   help="which tensors may share bytes: none, views (RESHAPE/SQUEEZE/"
                        "EXPAND_DIMS outputs on their input), safe (views plus every rule the "
                        "named kernels' loop order is proven to tolerate: element-wise ops in "
                        "place, conv/depthwise/pooling/PAD outputs partly over their dying "
                        "input). Default safe; with no --target or --kernel-set it plans only "
                        "what every kernel set tolerates")
    p.add_argument("--kernel-set", default=None, metavar="NAME",
                   help="the kernels the firmware runs: reference, cmsis-nn, or cmsis-nn:plain|"
                        "dsp|mve (default: the --target's kernels; neither named: a plan safe "
                        "for every kernel set)")
    p.add_argument("--time-budget", type=seconds_argument, default=None, metavar="SECONDS",
                   help="time for the placement search (default 1; with --patches, for each "
                        "planned candidate, default 10: the exact search stops once it proves "
                        "a plan optimal)")
    p.add_argument("--patches", action="store_true",
                   help="also try running the first stage of a CNN as a grid of spatial "
                        "patches (STRIDED_SLICE, PAD, its own ops, CONCATENATION: stock TFLM "
                        "builtins, outputs identical); kept only when the minimum arena on the "
                        "target is smaller")
    p.add_argument("--max-extra-macs", type=_percent_argument, default=None, metavar="PCT",
                   help="with --patches: the recomputation allowed, in percent of the model's "
                        "multiply-accumulates (default 25)")
    add_target_argument(p, default_words="default: none, a plan searched on host-x64 and kept "
                                          "only where it costs no build it is meant for")
    p.set_defaults(target=None)  # no target named: plan for every kernel set
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_run_optimize, optimize_parser=p)


def _cmd_report(sub: Any) -> None:
    from tinyarena.cli_report import add_report_parser

    add_report_parser(sub)


def _cmd_targets(sub: Any) -> None:
    from tinyarena.cli_targets import add_targets_parser

    add_targets_parser(sub)


def _cmd_ops(sub: Any) -> None:
    from tinyarena.cli_ops import add_ops_parser

    add_ops_parser(sub)


def _cmd_fit(sub: Any) -> None:
    from tinyarena.cli_fit import add_fit_parser

    add_fit_parser(sub)


COMMANDS: tuple[Registrar, ...] = (_cmd_plan, _cmd_size, _cmd_run, _cmd_demo, _cmd_optimize,
                                   _cmd_report, _cmd_check, _cmd_export, _cmd_whatif, _cmd_ops,
                                   _cmd_targets, _cmd_fit)


class _Version(argparse.Action):
    """--version on one unwrapped line (argparse's own action rewraps it to the terminal)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(version_text())
        parser.exit()


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are the JSON error object when --json was given."""

    json_errors = False

    def error(self, message: str) -> Any:  # argparse's hook; never returns
        if self.json_errors:
            _print_quietly(json.dumps({"error": {"type": "UsageError", "message": message}},
                                      indent=2))
            raise SystemExit(2)
        return super().error(message)


def build_parser(json_errors: bool = False, only: str | None = None
                 ) -> argparse.ArgumentParser:
    """The whole parser; with ``only``, just that subcommand's when its registrar is
    ``_cmd_<only>`` (a cold ``tinyarena size`` then imports no other command's module;
    its help, usage errors and defaults are the same). Other names get every subcommand."""
    parser = _Parser(
        prog="tinyarena",
        description="TensorFlow Lite Micro's tensor arena, byte for byte.")
    parser.json_errors = json_errors
    parser.add_argument("--version", action=_Version, nargs=0,
                        help="tinyarena's version and the TFLM version it emulates")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = [r for r in COMMANDS if only and r.__name__ == f"_cmd_{only}"]
    for register in chosen or COMMANDS:
        register(sub)
    for command in sub.choices.values():
        command.json_errors = json_errors
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (0 ok, 1 tinyarena error, 2 usage error: argparse's
    or a ``UsageError``)."""
    started = time.perf_counter()  # --time-budget counts from here
    arguments = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(json_errors="--json" in arguments,
                          only=arguments[0] if arguments else None)
    args = parser.parse_args(arguments)  # usage errors exit 2 (as JSON with --json)
    args.started = started
    clash = check_esp_nn_usage(args)
    if clash is not None:
        parser.error(clash)  # exit 2, as JSON with --json
    try:
        status: int = args.handler(args)
    except UsageError as exc:
        _fail(args, error_object(exc), f"error: {exc}")
        return 2
    except TinyArenaError as exc:
        _fail(args, error_object(exc), f"error: {exc}")
        return 1
    except BrokenPipeError:  # e.g. `tinyarena plan big.tflite | head`: stop quietly
        _silence_stdout()
        return 0
    except OSError as exc:  # a file the command writes (-o, --output, --save) cannot be written
        message = oserror_message(exc)
        _fail(args, {"error": {"type": "OSError", "message": message}}, f"error: {message}")
        return 1
    return status


def _fail(args: argparse.Namespace, data: dict[str, Any], text: str) -> None:
    """A failed command: the JSON error object on stdout with --json, else text on stderr."""
    if getattr(args, "json", False):
        _print_quietly(json.dumps(data, indent=2))
    else:
        print(text, file=sys.stderr)


def _silence_stdout() -> None:
    """The reader of stdout has gone: later writes (and Python's flush at exit) go nowhere."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _print_quietly(text: str) -> None:
    """Print an error object; a reader that has gone (`| head`) must not turn the command's
    own exit status into a BrokenPipeError traceback."""
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()


__all__ = ["COMMANDS", "build_parser", "main"]
