"""The ``tinyarena`` command: parse, make one library call, render.

Each subcommand is a small ``_cmd_<name>`` registrar that adds its parser and sets its handler;
``COMMANDS`` lists them in one place, so adding a subcommand is one function and one line.
Errors from the library (``TinyArenaError``) become ``error: <message>`` on stderr, exit 1.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
from typing import Any, Callable, Sequence

from tinyarena.cli_common import add_target_argument, plan_warnings, target_from_args
from tinyarena.cli_targets import add_targets_parser
from tinyarena.errors import TinyArenaError

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
    from tinyarena.arena.targets import get_target
    from tinyarena.errors import PlanError
    from tinyarena.report import plan_dict, render_plan

    if args.planner == "optimal":
        from tinyarena.optimize import optimal_layout

        # The layout is TFLM's, running the best plan pinned offline; name it for what it is.
        profile = target_from_args(args)
        if profile.kernel_set != get_target(profile.name).kernel_set:
            raise PlanError("--planner optimal plans for the target's own kernel set; drop "
                            "--kernels or use --planner greedy")
        layout = dataclasses.replace(optimal_layout(args.model, target=profile.name),
                                     planner="optimal")
    else:
        layout = _layout(args, target=target_from_args(args), planner=args.planner)
    return _emit(args, plan_dict(layout),
                 render_plan(layout, title=args.model, ascii_picture=args.ascii),
                 plan_warnings(args))


def _cmd_plan(sub: Any) -> None:
    p = sub.add_parser("plan", help="the memory plan of the head (TFLM's planners)",
                       description="Show where TFLM's memory planner puts every tensor and "
                                   "scratch buffer of MODEL in the arena's head.")
    p.add_argument("model", help="a .tflite file")
    p.add_argument("--planner", choices=("greedy", "linear", "optimal"), default="greedy",
                   help="TFLM's GreedyMemoryPlanner (default) or LinearMemoryPlanner, or the "
                        "best plan tinyarena finds (as TFLM runs it when pinned offline)")
    p.add_argument("--ascii", action="store_true", help="add TFLM's PrintMemoryPlan picture")
    add_target_argument(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_run_plan)


def _run_size(args: argparse.Namespace) -> int:
    from tinyarena.report import render_size, size_dict

    layout = _layout(args, target=target_from_args(args), arena_size=args.arena_size)
    return _emit(args, size_dict(layout), render_size(layout, title=args.model),
                 plan_warnings(args))


def _cmd_size(sub: Any) -> None:
    p = sub.add_parser("size", help="arena bytes TFLM needs for a model",
                       description="Emulate TFLM's AllocateTensors for MODEL and report the "
                                   "arena it uses (head + tail), the minimum working arena and "
                                   "the tail by TFLM's recording categories.")
    p.add_argument("model", help="a .tflite file")
    add_target_argument(p)
    p.add_argument("--arena-size", type=int, default=None, metavar="N",
                   help="check that an arena of N bytes is enough (fails like TFLM otherwise)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_run_size)


def _cmd_run(sub: Any) -> None:
    from tinyarena.cli_run import add_run_parser

    add_run_parser(sub)


def _cmd_demo(sub: Any) -> None:
    from tinyarena.cli_run import add_demo_parser

    add_demo_parser(sub)


def _time_budget(text: str) -> float:
    """argparse type of --time-budget: a finite number of seconds, zero or more."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds >= 0, got {text}")
    return value


def _run_optimize(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tinyarena.optimize import optimize_model
    from tinyarena.optimize.report import render_optimize

    result = optimize_model(args.model, reorder=args.reorder, overlap=args.overlap,
                            time_budget_s=args.time_budget, target=args.target,
                            kernel_set=args.kernel_set or getattr(args, "kernels", None))
    Path(args.output).write_bytes(result.model)
    data = {"model": args.model, "output": args.output, **result.to_dict()}
    return _emit(args, data, render_optimize(result, args.model, args.output))


def _cmd_optimize(sub: Any) -> None:
    p = sub.add_parser("optimize", help="write a model that TFLM runs in a smaller arena",
                       description="Reorder operators, let views and in-place element-wise "
                                   "ops share bytes, search a placement certified against a "
                                   "lower bound, and pin it in the model as "
                                   "OfflineMemoryAllocation metadata. The unmodified TFLM "
                                   "follows it and computes identical outputs.")
    p.add_argument("model", help="a .tflite file")
    p.add_argument("-o", "--output", required=True, help="where to write the optimized model")
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
    p.add_argument("--time-budget", type=_time_budget, default=1.0, metavar="SECONDS",
                   help="time for the placement search (default 1)")
    add_target_argument(p)
    p.set_defaults(target=None)  # no target named: plan for every kernel set
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_run_optimize)


COMMANDS: tuple[Registrar, ...] = (_cmd_plan, _cmd_size, _cmd_run, _cmd_demo, _cmd_optimize,
                                    add_targets_parser)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tinyarena",
        description="TensorFlow Lite Micro's tensor arena, byte for byte.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for register in COMMANDS:
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (0 ok, 1 tinyarena error, 2 usage error)."""
    parser = build_parser()
    args = parser.parse_args(None if argv is None else list(argv))
    try:
        status: int = args.handler(args)
    except TinyArenaError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. `tinyarena plan big.tflite | head`: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except OSError as exc:  # a file the command writes (-o, --output, --save) cannot be written
        where = f"{exc.filename}: " if exc.filename is not None else ""
        print(f"error: {where}{exc.strerror or exc}; check the path", file=sys.stderr)
        return 1
    return status


__all__ = ["COMMANDS", "build_parser", "main"]
