"""``tinyarena size --split`` and ``tinyarena size A B --shared-arena``: TFLM's two-arena
constructor and several models in one arena. Called from ``cli._run_size``."""

from __future__ import annotations

import argparse
import json
from typing import Any

from tinyarena.cli_common import target_defaulted, target_from_args, target_line
from tinyarena.errors import ModelError, UsageError


def add_layout_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--split", action="store_true",
                   help="two arenas (MicroAllocator::Create with a persistent and a "
                        "non-persistent arena): used and minimum size of each")
    p.add_argument("--shared-arena", action="store_true",
                   help="the models allocated in turn from one MicroAllocator over one arena, "
                        "in the order given (the order matters)")


def wants_layouts(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "split", False) or getattr(args, "shared_arena", False))


def run_layouts(args: argparse.Namespace, models: list[str]) -> int:
    from tinyarena.arena.multi import allocate_shared, allocate_split
    from tinyarena.cli_common import expand_models
    from tinyarena.model import read_model
    from tinyarena.report.explain import planner_text

    if len(getattr(args, "targets", None) or ()) > 1:
        raise UsageError("--split and --shared-arena size for one build; give one --target")
    if args.split and args.shared_arena:
        raise UsageError("choose --split or --shared-arena, not both")
    if getattr(args, "csv", None):
        raise UsageError("--csv writes one row per model; --split and --shared-arena give one "
                        "record, use --json instead")
    given = models
    models = expand_models(given)  # a folder is its *.tflite files, sorted, as for size
    if not models:
        raise ModelError(f"no .tflite files in {', '.join(given)}")
    if args.split:
        if len(models) != 1:
            raise UsageError("--split sizes one model; give exactly one .tflite file")
        if args.arena_size is not None:
            raise UsageError("--arena-size checks one arena; --split reports the minimum of "
                            "each of the two arenas instead")
        profile = target_from_args(args)
        s = allocate_split(read_model(models[0]), target=profile)
        data: dict[str, Any] = {"model": models[0], **s.to_dict()}
        line = target_line(profile, "production", planner_text(s.layout),
                           defaulted=target_defaulted(args))
        text = (f"{line}\n"
                f"{models[0]}  [two arenas]\n"
                f"persistent arena      used {s.persistent_used:>10,}  minimum "
                f"{s.persistent_min:>10,} bytes\n"
                f"non-persistent arena  used {s.non_persistent_used:>10,}  minimum "
                f"{s.non_persistent_min:>10,} bytes  (Prepare's temp tensors and the "
                f"planner's working area live here before the plan)")
    else:
        profile = target_from_args(args)
        shared = allocate_shared([read_model(m) for m in models], target=profile,
                                 arena_size=args.arena_size)
        data = {"models": models, **shared.to_dict(models)}
        rows = [f"  {i + 1}. {name}: its plan {m.own_head:,}, its tail {m.own_tail:,} bytes; "
                f"shared head {m.head:,}, tail {m.tail:,} after its AllocateTensors"
                for i, (name, m) in enumerate(zip(models, shared.models))]
        text = "\n".join(
            [target_line(profile, "production", defaulted=target_defaulted(args)),
             "shared arena  [one MicroAllocator, models allocated in this order]", *rows,
             f"used {shared.used:,} bytes (head {shared.head:,} + tail {shared.tail:,}), "
             f"minimum arena {shared.min_arena:,} bytes"])
    data["target_defaulted"] = target_defaulted(args)
    print(json.dumps(data, indent=2) if args.json else text)
    return 0


__all__ = ["add_layout_arguments", "run_layouts", "wants_layouts"]
