"""``tinyarena whatif MODEL``: what keeping tensors outside the arena would save (TFLM RFC 001,
"Pre-allocated tensors"), computed exactly by re-planning; registered in ``cli.COMMANDS``."""

from __future__ import annotations

import argparse
import json
from typing import Any

from tinyarena.cli_common import (
    add_target_argument,
    positive_int_argument,
    target_defaulted,
    target_from_args,
    target_line,
)


def _render(w: Any, title: str, names: dict[int, str], header: str, planner: str) -> str:
    lines = [header, title,
             f"arena used {w.total:,} bytes (head {w.head:,} + tail {w.tail:,})",
             f"peak: steps {', '.join(map(str, w.peak_steps)) or '-'}; tensors forming it: "
             + (", ".join(f"{t} {names[t]!r}" for t in w.peak_tensors) or "-"),
             "",
             f"{'rank':>4}  {'tensor':>6}  {'saving':>9}  {'memcpy':>9}  {'bytes':>9}  "
             f"{'roles':<18} name"]
    for rank, c in enumerate(w.candidates, 1):
        lines.append(f"{rank:>4}  {c.tensor:>6}  {c.saving_bytes:>9,}  {c.memcpy_bytes:>9,}  "
                     f"{c.nbytes:>9,}  {','.join(c.roles):<18} {c.name}")
    if not w.candidates and "offline plan" in planner:
        lines.append("no candidate: every graph input and output, variable and peak tensor is "
                     "a constant or pinned by the model's offline plan, and RFC 001 does not "
                     "let an offline-planned tensor be pre-allocated")
    elif not w.candidates:
        lines.append("no candidate: the model has no non-constant graph input, output, "
                     "variable or planned tensor")
    lines.append("")
    lines.append("saving = arena bytes (head + tail) no longer needed when the tensor's data is "
                 "the application's buffer; memcpy = bytes a sensor or consumer no longer copies "
                 "per inference")
    for label, s in (("best pair", w.best_pair), (f"best {w.max_external}", w.best_set)):
        if s is not None:
            how = "every set tried" if s.exact else "chosen greedily"
            if s is w.best_set and len(s.tensors) < w.max_external:
                label = f"best {len(s.tensors)}"
                how += f"; all {len(s.tensors)} candidates, fewer than --max-external"
            lines.append(f"{label:<10} tensors {list(s.tensors)}: saves {s.saving_bytes:,} "
                         f"bytes, {s.memcpy_bytes:,} memcpy bytes ({how})")
    return "\n".join(lines)


def _run_whatif(args: argparse.Namespace) -> int:
    from tinyarena.arena import allocate_model
    from tinyarena.arena.whatif import analyse_preallocation
    from tinyarena.model import read_model
    from tinyarena.report.explain import planner_text

    model = read_model(args.model)
    profile = target_from_args(args)
    layout = allocate_model(model, target=profile)
    w = analyse_preallocation(model, target=profile, max_external=args.max_external,
                              layout=layout)
    if args.json:
        print(json.dumps({"model": args.model, **w.to_dict(),
                          "target_defaulted": target_defaulted(args)}, indent=2))
    else:
        names = {t.index: t.name for t in model.subgraphs[0].tensors}
        planner = planner_text(layout)
        print(_render(w, args.model, names,
                      target_line(profile, layout.allocator, planner,
                                  defaulted=target_defaulted(args)), planner))
    return 0


def add_whatif_parser(sub: Any) -> None:
    p = sub.add_parser("whatif", help="arena bytes saved by keeping tensors outside the arena",
                       description="For each graph input and output, each variable and each "
                                   "tensor live at the plan's peak: the arena bytes saved if "
                                   "the application pre-allocated it (TFLM RFC 001), the memcpy "
                                   "bytes saved per inference, a ranking, the best pair and "
                                   "the best set of --max-external buffers.")
    p.add_argument("model", help="a .tflite file")
    add_target_argument(p)
    p.add_argument("--max-external", type=positive_int_argument, default=2, metavar="N",
                   help="how many external buffers the best set may use (default 2)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_run_whatif)


__all__ = ["add_whatif_parser"]
