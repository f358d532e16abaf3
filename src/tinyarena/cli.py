"""The ``tinyarena`` command: parse, make one library call, render.

Each subcommand is a small ``_cmd_<name>`` registrar that adds its parser and sets its handler;
``COMMANDS`` lists them in one place, so adding a subcommand is one function and one line.
Errors from the library (``TinyArenaError``) become ``error: <message>`` on stderr, exit 1.
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
    add_footprint_arguments,
    add_target_argument,
    error_object,
    oserror_message,
    plan_warnings,
    seconds_argument,
    size_argument,
    target_from_args,
    version_text,
)
from tinyarena.errors import PlanError, TinyArenaError

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
        raise PlanError("plan needs a model (a .tflite file) or --buffers FILE.csv")
    from tinyarena.arena.targets import get_target
    from tinyarena.model import read_model
    from tinyarena.report import explain_arena, plan_dict, render_plan

    model = read_model(args.model)
    if args.planner == "optimal":
        from tinyarena.optimize import optimal_layout

        # The layout is TFLM's, running the best plan pinned offline; name it for what it is.
        profile = target_from_args(args)
        if profile.kernel_set != get_target(profile.name).kernel_set:
            raise PlanError("--planner optimal plans for the target's own kernel set; drop "
                            "--kernels or use --planner greedy")
        layout = dataclasses.replace(optimal_layout(model, target=profile.name),
                                     planner="optimal")
    else:
        from tinyarena.arena import allocate_model

        layout = allocate_model(model, planner=args.planner, target=target_from_args(args))
    explained = explain_arena(model, layout)
    if args.svg:
        from pathlib import Path

        from tinyarena.report.svg import plan_svg

        Path(args.svg).write_text(plan_svg(explained, title=args.model), encoding="utf-8")
    return _emit(args, plan_dict(layout, explained),
                 render_plan(layout, title=args.model, ascii_picture=args.ascii,
                             explanation=explained),
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
        return run_layouts(args, args.model)
    return run_size(args)


def _cmd_size(sub: Any) -> None:
    p = sub.add_parser("size", help="arena bytes TFLM needs for a model",
                       description="Emulate TFLM's AllocateTensors for MODEL and report the "
                                   "arena it uses (head + tail), the minimum working arena and "
                                   "the tail by TFLM's recording categories. Declare "
                                   "min_arena bytes, 16-byte aligned.")
    add_batch_arguments(p)
    add_target_argument(p)
    p.add_argument("--arena-size", type=size_argument, default=None, metavar="N",
                   help="check that an arena of N bytes (98304, 0x18000, 96K) is enough "
                        "(fails like TFLM otherwise)")
    add_footprint_arguments(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    from tinyarena.cli_layouts import add_layout_arguments

    add_layout_arguments(p)
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

    from tinyarena.optimize import optimize_model
    from tinyarena.optimize.report import render_optimize

    _refuse_overwrite(args.model, args.output, args.force)
    result = optimize_model(args.model, reorder=args.reorder, overlap=args.overlap,
                            time_budget_s=_budget_left(args), target=args.target,
                            kernel_set=args.kernel_set or getattr(args, "kernels", None))
    Path(args.output).write_bytes(result.model)
    data = {"model": args.model, "output": args.output, **result.to_dict()}
    return _emit(args, data, render_optimize(result, args.model, args.output))


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


def _cmd_optimize(sub: Any) -> None:
    p = sub.add_parser("optimize", help="write a model that TFLM runs in a smaller arena",
                       description="Reorder operators, let views and in-place element-wise "
                                   "ops share bytes, search a placement certified against a "
                                   "lower bound, and pin it in the model as "
                                   "OfflineMemoryAllocation metadata. The unmodified TFLM "
                                   "follows it and computes identical outputs.")
    p.add_argument("model", help="a .tflite file")
    p.add_argument("-o", "--output", required=True, help="where to write the optimized model")
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
    p.add_argument("--time-budget", type=seconds_argument, default=1.0, metavar="SECONDS",
                   help="time for the placement search (default 1)")
    add_target_argument(p)
    p.set_defaults(target=None)  # no target named: plan for every kernel set
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_run_optimize)


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
    """Entry point; returns the exit status (0 ok, 1 tinyarena error, 2 usage error)."""
    started = time.perf_counter()  # --time-budget counts from here
    arguments = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(json_errors="--json" in arguments,
                          only=arguments[0] if arguments else None)
    args = parser.parse_args(arguments)  # usage errors exit 2 (as JSON with --json)
    args.started = started
    try:
        status: int = args.handler(args)
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
