"""``tinyarena export``: C++ sources a TFLM firmware project compiles as they are.

Registered in ``cli.COMMANDS`` through ``add_export_parser``. The per-model work
(``export_record``) is a module-level function returning plain data, so a batch runs in a
process pool and gives the same records as one model at a time.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from typing import Any

from tinyarena.cli_common import (
    add_batch_arguments,
    add_target_argument,
    add_variables_arguments,
    check_build_arguments,
    check_output_arguments,
    esp_nn_of,
    error_object,
    report_error,
    expand_models,
    failed_record,
    is_single,
    oserror_message,
    require_target,
    run_batch,
    size_argument,
    target_from_args,
    target_line,
    text_stream,
    write_csv,
)
from tinyarena.errors import TinyArenaError, UsageError

CSV_COLUMNS = ("model", "name", "header", "source", "target", "kernel_set", "tflm", "model_bytes",
               "min_arena", "margin", "arena_size", "op_count", "ops", "error")


def export_record(model: str, *, target: str, output: str, name: str | None,
                  margin: int, kernels: str | None = None,
                  esp_nn: str | None = None, force: bool = False,
                  separate_variables: bool = False,
                  max_resource_variables: int | None = None) -> dict[str, Any]:
    """Export one model into ``output``; its result (or its error) as a JSON-ready dict."""
    from tinyarena.arena.targets import get_target
    from tinyarena.export import export_model

    try:
        profile = get_target(target, kernels, esp_nn)
        sources = export_model(model, target=profile, name=name, margin=margin, force=force,
                               separate_variables=separate_variables,
                               max_resource_variables=max_resource_variables)
        header, source = sources.write(output)
    except TinyArenaError as exc:
        return {"model": model, **error_object(exc)}
    except OSError as exc:
        return {"model": model, "error": {"type": "OSError", "message": oserror_message(exc)}}
    # the kernel set and TFLM version kTensorArenaSize holds for, named in JSON and CSV too
    return {"model": model, "kernel_set": profile.kernel_set, "tflm": profile.tflm_commit,
            **sources.to_dict(), "header": str(header), "source": str(source)}


def run_export(args: argparse.Namespace) -> int:
    missing = require_target(args, "export")
    if missing is not None:
        return missing
    check_output_arguments(args)
    check_build_arguments(args)
    _check_name(args.name)
    models = expand_models(args.model)
    if not models:
        report_error(args, "ModelError", f"no .tflite files in {', '.join(args.model)}")
        return 1
    if args.name is not None and len(models) > 1:
        raise UsageError("--name names one model; with several, each is named after its file")
    clash = _duplicate_names(models) if args.name is None else None
    if clash is not None:
        report_error(args, "BuildError", clash)
        return 1
    job = functools.partial(export_record, target=args.target,
                            kernels=getattr(args, "kernels", None), esp_nn=esp_nn_of(args)[0],
                            output=args.output, name=args.name, margin=args.margin,
                            force=args.force, separate_variables=args.separate_variables,
                            max_resource_variables=args.max_resource_variables)
    records = run_batch(job, models, args.jobs, desc="export", executor=args.executor,
                        on_error=failed_record)
    if args.csv:
        write_csv(args.csv, [_csv_row(r) for r in records], CSV_COLUMNS)
    if args.json:
        print(json.dumps(records[0] if is_single(args.model) else records,
                         indent=2))
    else:
        out = text_stream(args)
        print(target_line(target_from_args(args)), file=out)
        for r in records:
            if "error" in r:
                print(f"error: {r['model']}: {r['error']['message']}", file=sys.stderr)
            else:
                for warning in r.get("warnings", ()):
                    print(f"warning: {r['model']}: exported with --force: {warning}",
                          file=sys.stderr)
                variables = (f"; kNumResourceVariables {r['resource_variables']}, "
                             f"CreateInterpreter()" if r["resource_variables"] else "")
                if "variables_arena_size" in r:
                    variables += f", kVariablesArenaSize {r['variables_arena_size']:,}"
                print(f"{r['model']}: wrote {r['header']} and {r['source']}  "
                      f"(kTensorArenaSize {r['arena_size']:,} = min_arena {r['min_arena']:,} "
                      f"+ margin {r['margin']:,}; MicroMutableOpResolver<{r['op_count']}>"
                      f"{variables}; target {r['target']})", file=out)
    return 1 if any("error" in r for r in records) else 0


def _check_name(name: str | None) -> None:
    """--name becomes a C++ namespace and the file stem: refuse one that is not an identifier
    before anything is written (a usage error, whatever the models)."""
    from tinyarena.export import c_name

    if name is not None and c_name(name) != name:
        raise UsageError(f"--name {name!r} is not a C++ identifier (it names the namespace and "
                         f"the files); use e.g. {c_name(name)!r}")


def _duplicate_names(models: list[str]) -> str | None:
    """Two models whose file stems give the same name would write the same files."""
    from pathlib import Path

    from tinyarena.export import c_name

    seen: dict[str, str] = {}
    for model in models:
        name = c_name(Path(model).stem)
        if name in seen:
            return (f"{seen[name]} and {model} would both be exported as {name}.h/.cc; "
                    f"export them one at a time with --name")
        seen[name] = model
    return None


def _csv_row(record: dict[str, Any]) -> dict[str, Any]:
    row = dict(record)
    row.pop("warnings", None)
    if "error" in row:
        row["error"] = row["error"]["message"]
    if "ops" in row:
        row["ops"] = " ".join(row["ops"])
    return row


def add_export_parser(sub: Any) -> None:
    p = sub.add_parser(
        "export", help="C++ sources for a TFLM firmware: model array, arena size, op resolver",
        description="Write NAME.h and NAME.cc for each MODEL: the model as a 16-byte aligned "
                    "const unsigned char array g_model (with g_model_len), kTensorArenaSize "
                    "(the minimum working arena for --target, plus --margin) and "
                    "RegisterOps(), which adds exactly the model's operators to a "
                    "tflite::MicroMutableOpResolver<kOpCount>. A model with resource variables "
                    "(VAR_HANDLE) also gets kNumResourceVariables and CreateInterpreter(), "
                    "the construction TFLM needs for them. Everything lives in namespace "
                    "NAME. The output depends only on the model, target, name and margin.")
    add_batch_arguments(p)
    add_target_argument(p, required=True)
    p.add_argument("--force", action="store_true",
                   help="export a model whose arena plan (from tinyarena optimize) is not "
                        "proven for the target's kernels anyway; the header then carries a "
                        "#warning, since the firmware's outputs can be wrong")
    p.add_argument("-o", "--output", default=".", metavar="DIR",
                   help="folder for the sources (made if missing; default: the current one)")
    p.add_argument("--name", default=None,
                   help="C++ namespace and file stem (default: the model file's stem)")
    p.add_argument("--margin", type=size_argument, default=0, metavar="BYTES",
                   help="bytes added to the minimum arena (96, 1K, 0x400; default 0)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_variables_arguments(p)
    p.set_defaults(handler=run_export)


__all__ = ["CSV_COLUMNS", "add_export_parser", "export_record", "run_export"]
