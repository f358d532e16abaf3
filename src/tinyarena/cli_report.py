"""``tinyarena report MODEL [--target T ...] -o report.html``: the arena explained on one page.

Registered with one line in ``cli.COMMANDS``; the rendering is ``tinyarena.report.html``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tinyarena.cli_common import DEFAULT_TARGET, DEFAULT_TARGET_WORDS, seconds_argument
from tinyarena.errors import ModelError


def add_report_parser(sub: Any) -> None:
    from tinyarena.arena.targets import ESP_NN_VERSIONS, PROFILES

    p = sub.add_parser("report", help="one self-contained HTML page explaining the arena",
                       description="Write an HTML page (no network, no scripts) with the memory "
                                   "plan as a picture, the peak named and explained, the "
                                   "arena's composition, one column per --target, and what "
                                   "`tinyarena optimize` would save.")
    p.add_argument("model", help="a .tflite file")
    p.add_argument("--target", action="append", choices=tuple(PROFILES), default=None,
                   help="a TFLM build to size for (repeat for several, shown side by side; "
                        "default host-x64, the x86-64 pip wheel, not a device)")
    p.add_argument("--esp-nn", action="append", choices=ESP_NN_VERSIONS, default=None,
                   metavar="VERSION",
                   help="on esp32* targets: an esp-nn release to size for (repeat for one "
                        "column each; every column after the first says which operator's "
                        "scratch changed)")
    p.add_argument("-o", "--output", required=True, help="where to write the HTML file")
    p.add_argument("--optimized", metavar="FILE", default=None,
                   help="an optimized model (from `tinyarena optimize`) to compare with; "
                        "default: compute one")
    p.add_argument("--no-optimize", action="store_true",
                   help="leave out the optimizer's before/after")
    p.add_argument("--time-budget", type=seconds_argument, default=1.0, metavar="SECONDS",
                   help="time for the optimizer's placement search (default 1)")
    p.set_defaults(handler=run_report, several_builds=True)


def _graph(model: Any) -> tuple[Any, ...]:
    """What optimizing keeps: every tensor (name, type, shape) and every operator (op, inputs,
    outputs) of every subgraph; only the operators' order and the offline plan may change."""
    return tuple((tuple((t.name, t.type, t.shape) for t in sg.tensors),
                  sorted((op.name, tuple(op.inputs), tuple(op.outputs)) for op in sg.operators))
                 for sg in model.subgraphs)


def _optimize_view(args: argparse.Namespace, model: Any, target: str) -> Any:
    from tinyarena.arena import allocate_model
    from tinyarena.model import read_model
    from tinyarena.model.metadata import offline_offsets, without_offline_plan
    from tinyarena.optimize import optimize_model
    from tinyarena.report.explain import explain_arena
    from tinyarena.report.html import OptimizeView

    base = without_offline_plan(model)
    before = explain_arena(base, allocate_model(base, target=target))
    if args.optimized is not None:
        after_model = read_model(args.optimized)
        if _graph(after_model) != _graph(model):
            raise ModelError(
                f"{args.optimized} is not an optimized {args.model}: their tensors or "
                f"operators differ, so its plan says nothing about this model; give the file "
                f"`tinyarena optimize {args.model} -o FILE` wrote")
        source = f"the optimized model {args.optimized}"
        notes: tuple[str, ...] = ()
    elif offline_offsets(model) is not None:
        after_model = model
        source = "the model's own offline plan, against TFLM's greedy plan without it"
        notes = ()
    else:
        result = optimize_model(args.model, target=target, time_budget_s=args.time_budget)
        after_model = read_model(result.model)
        source = (f"computed with tinyarena.optimize (overlap {result.overlap}, kernel set "
                  f"{result.kernel_set}, {args.time_budget:g} s)")
        notes = result.notes
    after = explain_arena(after_model, allocate_model(after_model, target=target))
    return OptimizeView(before, after, source, notes)


def _verdict(model: Any, layout: Any, defaulted: bool) -> tuple[bool, str]:
    """Whether the model may go into that target's firmware as it is, in one sentence: the
    arena to declare, or why its pinned plan must not be used there."""
    from tinyarena.arena.targets import get_target
    from tinyarena.optimize.safety import plan_warnings

    profile = get_target(layout.target, layout.kernel_set, layout.esp_nn_version)
    name = DEFAULT_TARGET_WORDS if defaulted else profile.name
    unproven = plan_warnings(model, profile)
    if unproven:
        return False, f"verdict for target {name}: NOT SAFE: {unproven[0]}"
    return True, (f"verdict for target {name}: safe as it is; declare {layout.min_arena:,} "
                  f"bytes, alignas(16) uint8_t tensor_arena[{layout.min_arena}] (kernels "
                  f"{profile.kernels}; any arena plan pinned by tinyarena optimize is proven "
                  f"for them)")


def run_report(args: argparse.Namespace) -> int:
    from tinyarena.arena import allocate_model
    from tinyarena.model import read_model
    from tinyarena.report.explain import explain_arena
    from tinyarena.report.html import render_report

    from tinyarena.arena.targets import get_target

    if args.optimized is not None and args.no_optimize:
        from tinyarena.errors import UsageError

        raise UsageError("--optimized FILE compares with an optimized model and --no-optimize "
                         "leaves the comparison out; give one of them")
    model = read_model(args.model)
    targets = list(dict.fromkeys(args.target or [DEFAULT_TARGET]))
    versions = list(dict.fromkeys(args.esp_nn or [None]))
    explanations = [explain_arena(model, allocate_model(model, target=get_target(t, None, v)))
                    for t in targets for v in versions]
    verdicts = [_verdict(model, e.layout, args.target is None) for e in explanations]
    view = None if args.no_optimize else _optimize_view(args, model, targets[0])
    from tinyarena.rewrite.patches import patch_record

    page = render_report(Path(args.model).name, explanations, view, verdicts,
                         patch_record(model))
    Path(args.output).write_text(page, encoding="utf-8")
    from tinyarena.cli_common import target_line

    for e, (_, verdict) in zip(explanations, verdicts):  # each build's line and verdict
        print(target_line(get_target(e.layout.target, e.layout.kernel_set,
                                     e.layout.esp_nn_version), e.layout.allocator,
                          e.planner_text, defaulted=args.target is None))
        print(verdict)
    print(f"wrote {args.output}: {len(explanations)} build(s), "
          f"{sum(len(e.buffers) for e in explanations)} planned buffers drawn")
    return 0


__all__ = ["add_report_parser", "run_report"]
