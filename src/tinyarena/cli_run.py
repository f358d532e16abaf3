"""``tinyarena run`` and ``tinyarena demo``: the interpreter from the command line.

Registered in ``cli.COMMANDS`` through ``add_run_parser`` and ``add_demo_parser``.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from tinyarena.cli_common import (
    add_target_argument,
    positive_int_argument,
    positive_size_argument,
    size_argument,
    target_defaulted,
    target_from_args,
    target_line,
)


def _dequantized(value: np.ndarray, details: dict[str, Any]) -> np.ndarray | None:
    q = details["quantization_parameters"]
    if len(q["scales"]) != 1 or value.dtype.kind not in "iu":
        return None
    return (value.astype(np.float64) - int(q["zero_points"][0])) * float(q["scales"][0])


def _format_array(value: np.ndarray) -> str:
    return np.array2string(value, threshold=64, edgeitems=4, precision=6,
                           max_line_width=96)


def _timed_invokes(ip: Any, inputs: list[np.ndarray], repeat: int) -> list[float]:
    times = []
    for _ in range(max(repeat, 1)):
        for i, x in enumerate(inputs):
            ip.set_input(x, i)  # inputs may share memory the plan reuses: set them every time
        start = time.perf_counter()
        ip.invoke()
        times.append(time.perf_counter() - start)
    return times


def _output_name(name: str, index: int, used: set[str]) -> str:
    key = "".join(c if c.isalnum() or c in "._-" else "_" for c in name) or f"output_{index}"
    if key in used:
        key = f"{key}_{index}"
    used.add(key)
    return key


def _save_npz(path: str, arrays: dict[str, np.ndarray]) -> None:
    """The arrays as an .npz archive (what np.savez writes: one NAME.npy per entry in an
    uncompressed zip). Written here because np.savez(path, **arrays) takes an output named
    "file" or "allow_pickle" as its own keyword argument instead of an array."""
    import zipfile  # here: `tinyarena size`, which builds this parser too, never needs it

    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, value in arrays.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)


def run_command(args: argparse.Namespace) -> int:
    """Load MODEL, feed the input file (or random data), invoke, print outputs and report."""
    import sys

    from tinyarena.interpreter import Interpreter
    from tinyarena.interpreter.inputs import load_inputs, random_inputs
    from tinyarena.kernels import native as native_kernels
    from tinyarena.model import read_model

    _check_image_options(args)
    profile = target_from_args(args)
    if not args.json:  # first, as in every command: what the numbers below are for
        print(target_line(profile, defaulted=target_defaulted(args)), flush=True)
    warnings = _unproven_plan(args)
    model = read_model(args.model)
    native = _native_setting(args.native, args.repeat, _operator_count(model),
                             native_kernels.available() and not native_kernels.switched_off(),
                             native_kernels.cache_is_warm())
    if args.native == "on" and not native_kernels.available():
        from tinyarena.errors import InterpreterError

        raise InterpreterError(f"--native on needs numba, which is not installed: "
                               f"{native_kernels.INSTALL_HINT}; or run with --native off (or "
                               f"auto), which gives the same outputs with the numpy kernels")
    if native and not native_kernels.cache_is_warm():
        print(f"[tinyarena] first build of the compiled kernels on this machine (numba): "
              f"allocation takes a few seconds per kernel family (person_detect ~6 s), once; "
              f"they are cached on disk. --native off skips it", file=sys.stderr, flush=True)
    ip = Interpreter(model, arena_size=args.arena_size, target=profile, native=native,
                     alt_decompression_memory_size=args.alt_decompression_memory)
    started = time.perf_counter()
    ip.allocate_tensors()
    _say_if_kernels_were_built(ip.native, time.perf_counter() - started)
    in_details = ip.get_input_details()
    if args.input:
        inputs = load_inputs(args.input, in_details, pixels=args.pixels, resize=args.resize,
                             pixel_range=args.pixel_range)
        source = str(args.input)
    else:
        inputs = random_inputs(in_details, args.seed)
        source = f"random (seed {args.seed})"
    labels = args.labels.split(",") if args.labels else None
    if labels is not None:
        _check_labels(labels, ip.get_output_details())
    times = _timed_invokes(ip, inputs, args.repeat)
    out_details = ip.get_output_details()
    outputs = [ip.get_output(i) for i in range(len(out_details))]
    report = ip.allocation_report()
    import statistics

    median_ms = statistics.median(times) * 1e3
    if args.output:
        # np.savez appends ".npz" to a name without it; name the file actually written.
        if not str(args.output).endswith(".npz"):
            args.output = f"{args.output}.npz"
        used: set[str] = set()
        _save_npz(args.output, {_output_name(d["name"], i, used): v
                                for i, (d, v) in enumerate(zip(out_details, outputs))})
    if args.json:
        data = {
            "model": str(args.model), "input": source,
            "build": {"target": profile.name, "kernels": profile.kernels,
                      "kernel_set": profile.kernel_set,
                      "esp_nn_version": (profile.esp_nn_version
                                         if profile.kernel_set == "esp-nn" else None),
                      "allocator": profile.default_allocator, "tflm": profile.tflm_commit},
            "outputs": [{"name": d["name"], "index": i, "dtype": v.dtype.name,
                         "shape": list(v.shape), "values": v.tolist(),
                         "dequantized": (None if (dq := _dequantized(v, d)) is None
                                         else dq.tolist()),
                         "top_k": _top_k(v, d, args.top_k, labels if i == 0 else None)}
                        for i, (d, v) in enumerate(zip(out_details, outputs))],
            "invoke_ms": {"median": median_ms, "runs": len(times),
                          "kernels": "compiled" if ip.native else "numpy"},
            "allocation": report.to_dict(),
            "target_defaulted": target_defaulted(args),
            "warnings": warnings,
            "target": profile.name, "kernel_set": profile.kernel_set,
            "tflm": profile.tflm_commit,
        }
        print(json.dumps(_json_safe(data), indent=2, allow_nan=False))
        return 0
    print(f"{args.model}  input: {source}")
    for i, (d, v) in enumerate(zip(out_details, outputs)):
        print(f"output {i} {d['name']!r} {v.dtype.name}{list(v.shape)}:")
        print(f"  {_format_array(v)}")
        dq = _dequantized(v, d)
        if dq is not None:
            print(f"  dequantized: {_format_array(dq)}")
        top = _top_k(v, d, args.top_k, labels if i == 0 else None)
        if top:
            print(f"  top {len(top)}:")
            for entry in top:
                name = f" {entry['label']}" if entry["label"] is not None else ""
                print(f"    {entry['rank']}. class {entry['index']}{name}: "
                      f"{entry['score']:.4f}")
    kernels = "compiled kernels" if ip.native else "numpy kernels"
    print(f"host time, invoke: {median_ms:,.3f} ms (median of {len(times)}, tinyarena's "
          f"{kernels} on this machine; not the device's time)")
    if args.output:
        print(f"outputs saved to {args.output}")
    print()
    print("\n".join(_report_lines(report, profile.name)))
    return 0


def _report_lines(report: Any, target: str) -> list[str]:
    """TFLM's allocation lines as its recording allocator prints them, then the arena and the
    host-only memory in words (the device needs the arena, never tinyarena's workspaces)."""
    lines = ["TFLM's allocation report, as its RecordingMicroAllocator prints it:"]
    lines += [line for line in report.text.splitlines() if not line.startswith("[tinyarena]")]
    lines.append(f"arena on {target}: {report.arena_size:,} bytes, {report.total:,} used "
                 f"(head {report.head:,} + tail {report.tail:,})")
    host = report.workspace_bytes + report.compiled_constant_bytes
    parts = [f"{report.workspace_bytes:,} bytes of workspaces in {report.workspace_count:,} "
             f"buffers"]
    if report.compiled_constant_bytes:
        parts.append(f"{report.compiled_constant_bytes:,} bytes of compiled kernels' packed "
                     f"constants")
    lines.append(f"host memory of tinyarena's kernels; the device does not need it: {host:,} "
                 f"bytes ({', '.join(parts)})")
    return lines


def _check_image_options(args: argparse.Namespace) -> None:
    """--pixels, --pixel-range and --resize say how an image becomes the input: given with
    no image they would be silently ignored, so they are a usage error (exit 2)."""
    from tinyarena.errors import UsageError
    from tinyarena.interpreter.inputs import IMAGE_SUFFIXES

    given = [flag for flag, value in (("--pixels", args.pixels is not None),
                                      ("--pixel-range", args.pixel_range != (0.0, 1.0)),
                                      ("--resize", args.resize)) if value]
    image = args.input is not None and Path(args.input).suffix.lower() in IMAGE_SUFFIXES
    if given and not image:
        what = f"--input {args.input} is not an image" if args.input else "there is no --input"
        raise UsageError(f"{', '.join(given)}: only for an image input "
                         f"({', '.join(IMAGE_SUFFIXES)}), and {what}; drop "
                         f"{'it' if len(given) == 1 else 'them'}")


def _unproven_plan(args: argparse.Namespace) -> list[str]:
    """Refuse (PlanError) a model whose arena plan ``tinyarena optimize`` proved only for
    other kernels than the target's: tinyarena's kernels would give the right outputs where
    that device's loop order overwrites data still needed (issue 19: 8 of 55 models differed
    on a Cortex-M4 CMSIS-NN build, and run showed the correct outputs). With --force it runs,
    and the warnings returned (printed to stderr here) say so."""
    import sys

    from tinyarena.errors import PlanError
    from tinyarena.model import read_model
    from tinyarena.optimize.safety import plan_warnings

    profile = target_from_args(args)
    found = plan_warnings(read_model(args.model), profile)
    if found and not args.force:
        raise PlanError(f"refusing to run on target {profile.name}: {found[0]}; or pass --force "
                        f"to run it anyway (its outputs are then not what {profile.name} "
                        f"computes)")
    said = [f"run with --force: these outputs are tinyarena's, not what target {profile.name} "
            f"computes with this plan: {w}" for w in found]
    for text in said:
        print(f"warning: {text}", file=sys.stderr)
    return said


def _check_labels(labels: list[str], details: list[dict[str, Any]]) -> None:
    """--labels names output 0's classes: a count that differs names the wrong classes (an
    argument that contradicts the model: a usage error, exit 2)."""
    from tinyarena.errors import UsageError

    shape = tuple(int(d) for d in details[0]["shape"]) if details else ()
    if len(shape) == 2 and shape[0] == 1:
        shape = shape[1:]
    if len(shape) != 1:
        raise UsageError(f"--labels names the classes of a classifier output, but output "
                         f"0 has shape {list(details[0]['shape']) if details else []}")
    if len(labels) != shape[0]:
        raise UsageError(f"--labels gives {len(labels)} names but output 0 has "
                         f"{shape[0]} classes; give one name per class, in order")


def _json_safe(value: Any) -> Any:
    """JSON has no NaN or infinity (Python's ``NaN`` token breaks jq and most parsers): a
    float output that holds them gives the strings "NaN", "Infinity" and "-Infinity"."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    return value


def _top_k(value: np.ndarray, details: dict[str, Any], k: int,
           labels: list[str] | None) -> list[dict[str, Any]] | None:
    """The k best classes of a classifier output (shape (N,) or (1, N), N >= 2), by score
    (dequantized when the output is quantized); None for other outputs."""
    if k <= 0 or value.ndim not in (1, 2) or (value.ndim == 2 and value.shape[0] != 1):
        return None
    dq = _dequantized(value, details)
    scores = (dq if dq is not None else value).reshape(-1).astype(np.float64)
    if scores.shape[0] < 2:
        return None
    order = np.argsort(-scores, kind="stable")[:k]
    return [{"rank": rank + 1, "index": int(i),
             "label": labels[int(i)] if labels is not None and int(i) < len(labels) else None,
             "score": float(scores[int(i)])} for rank, i in enumerate(order)]


def _pixel_range(text: str) -> tuple[float, float]:
    """argparse type of --pixel-range: LOW,HIGH, the real values of pixels 0 and 255."""
    try:
        low, high = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not LOW,HIGH: {text!r}; e.g. 0,1 or -1,1 or 0,255") from None
    if not (np.isfinite(low) and np.isfinite(high)) or low == high:
        raise argparse.ArgumentTypeError(f"LOW and HIGH must be finite and differ: {text!r}")
    return low, high


def _non_negative_int(text: str) -> int:
    """argparse type of --seed and --top-k: numpy's seeds and a count of classes are >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def add_run_parser(sub: Any) -> None:
    p = sub.add_parser(
        "run", help="run a model in tinyarena's interpreter",
        description="Allocate MODEL's tensors in one arena exactly as TFLM would, run it once "
                    "on the given input (random when none is given) and print the outputs, the "
                    "invoke time and TFLM's allocation report, with the top classes of a "
                    "classifier output. An image (.png, .jpg, .bmp; grayscale or RGB; needs "
                    "Pillow: pip install 'tinyarena[images]', except 8-bit grayscale .bmp) "
                    "feeds a single image input: tinyarena run person_detect.tflite --input "
                    "person.bmp")
    p.add_argument("model", help="a .tflite file")
    p.add_argument("--input", type=Path, default=None, metavar="FILE",
                   help=".npy (one input), .npz (arrays named after the inputs, or arr_0, "
                        "arr_1, ...) or an image (.png, .jpg, .jpeg, .bmp)")
    p.add_argument("--pixels", choices=("raw", "scaled"), default=None,
                   help="how image pixels become input values: scaled (mapped onto "
                        "--pixel-range, then quantized with the input's scale and zero point; "
                        "default for PNG/JPEG) or raw (bytes copied, as TFLM's examples feed "
                        "their .bmp test images; default for .bmp)")
    p.add_argument("--pixel-range", type=_pixel_range, default=(0.0, 1.0), metavar="LOW,HIGH",
                   help="real values of pixels 0 and 255 for --pixels scaled (default 0,1; "
                        "-1,1 or 0,255 for other models)")
    p.add_argument("--resize", action="store_true",
                   help="resize the image to the input's height and width (otherwise a "
                        "different size is an error)")
    p.add_argument("--top-k", type=_non_negative_int, default=5, metavar="K",
                   help="classes printed for a classifier output (shape (N,) or (1, N)); "
                        "0 for none (default 5)")
    p.add_argument("--output", type=Path, default=None, metavar="OUT.npz",
                   help="save the outputs, one array per output name")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--arena-size", type=positive_size_argument, default=None, metavar="N",
                   help="arena bytes: 98304, 0x18000, 96K (default: the smallest arena TFLM "
                        "accepts)")
    p.add_argument("--alt-decompression-memory", type=size_argument, default=0, metavar="N",
                   help="an alternate decompression memory of N bytes for TFLM_DECODE outputs "
                        "(the wheel's alt_decompression_memory_size; `size` gives the model's "
                        "need; default none)")
    add_target_argument(p)
    p.add_argument("--force", action="store_true",
                   help="run a model whose arena plan (from tinyarena optimize) is not proven "
                        "for the target's kernels anyway; its outputs are then not what that "
                        "device computes")
    p.add_argument("--labels", default=None, metavar="A,B,...",
                   help="names of output 0's classes, printed with the top classes (person_detect: "
                        "--labels no_person,person)")
    p.add_argument("--seed", type=_non_negative_int, default=0, help="seed of the random input")
    p.add_argument("--repeat", type=positive_int_argument, default=1, metavar="N",
                   help="invoke N times and report the median time")
    p.add_argument("--native", choices=("auto", "on", "off"), default="auto",
                   help="compiled kernels (extra 'fast', numba): 'auto' (default) uses them when "
                        "numba is installed and the expected saving (--repeat x operators x "
                        "~20 us) outweighs loading them (~0.5 s) or, on a machine that has not "
                        "built them yet, their first build (~6 s); same outputs either way")
    p.set_defaults(handler=run_command)


BUILD_NOTE_SECONDS = 2.0  # loading every cached kernel of a large model takes under a second


def _say_if_kernels_were_built(native: bool, seconds: float) -> None:
    """A first run with compiled kernels builds them (numba: a few seconds per kernel family);
    say why this allocation was slow, on stderr so that --json stays parseable."""
    if native and seconds > BUILD_NOTE_SECONDS:
        import sys

        print(f"[tinyarena] allocate_tensors took {seconds:.1f} s, mostly building the compiled "
              "kernels for this model's ops (numba, first use; cached on disk, later runs load "
              "them in under a second); --native off runs the numpy kernels instead",
              file=sys.stderr)


# --native auto: compiled kernels pay off only when the invokes they speed up outweigh what
# loading them costs. Typical figures from benchmarks/invoke.py (docs/speed.md): the compiled
# kernels save ~2-150 us per operator and invoke (20 us is a middle value), importing numba and
# loading cached kernels costs ~0.5 s, and a first build on a machine ~6 s (person_detect).
SAVING_PER_OP_INVOKE_S = 20e-6
CACHED_LOAD_S = 0.5
UNCACHED_BUILD_S = 6.0


def _native_setting(choice: str, repeat: int, operators: int, available: bool,
                    cache_warm: bool) -> bool:
    """``Interpreter(native=...)`` for ``--native``: 'auto' compiles only where the expected
    saving (``repeat`` invokes of ``operators`` operators) outweighs loading the compiled
    kernels, or building them when none is cached on this machine yet."""
    if choice == "on":
        return True
    if choice == "off" or not available:
        return False
    cost = CACHED_LOAD_S if cache_warm else UNCACHED_BUILD_S
    return repeat * operators * SAVING_PER_OP_INVOKE_S > cost


def _operator_count(model: Any) -> int:
    return sum(len(sg.operators) for sg in model.subgraphs)


def _summary(model: Any) -> list[str]:
    lines = []
    for sg in model.subgraphs:
        lines.append(f"subgraph {sg.index}: {len(sg.tensors)} tensors, "
                     f"{len(sg.operators)} operators")
        for op in sg.operators:
            ins = ", ".join(_tensor_text(sg.tensors[i]) for i in op.inputs if i >= 0)
            outs = ", ".join(_tensor_text(sg.tensors[i]) for i in op.outputs)
            lines.append(f"  {op.index:2d} {op.name:<16s} {ins} -> {outs}")
    return lines


def _tensor_text(t: Any) -> str:
    kind = "const " if t.is_constant else ""
    return f"{kind}{t.name}{list(t.shape)}:{t.type.name.lower()}"


def demo_command(args: argparse.Namespace) -> int:
    """Build the bundled stripes classifier, allocate it, show plan and report, run it."""
    from tinyarena.interpreter import Interpreter
    from tinyarena.arena import allocate_model
    from tinyarena.examples import stripes
    from tinyarena.model import read_model
    from tinyarena.planning.ascii import render_memory_plan
    from tinyarena.planning.buffers import Buffer, Plan

    model_bytes = stripes.build_model()
    if args.save:
        Path(args.save).write_bytes(model_bytes)
    model = read_model(model_bytes)
    layout = allocate_model(model)
    from tinyarena.arena.targets import get_target

    print(target_line(get_target(layout.target), layout.allocator))
    print("tinyarena demo: an int8 CNN built with tinyarena.builder, run in a TFLM arena")
    print("=" * 78)
    print(f"model: {model.description!r}, {len(model_bytes):,} bytes"
          + (f" (saved to {args.save})" if args.save else ""))
    print("\n".join(_summary(model)))
    print()
    print(f"arena plan (head = {layout.head:,} bytes, TFLM's GreedyMemoryPlanner; one row per "
          f"time step, one column per 1/80 of the head):")
    plan = Plan(tuple(b.offset for b in layout.buffers),
                tuple(Buffer(b.size, b.first, b.last) for b in layout.buffers))
    print(render_memory_plan(plan).rstrip("\n"))
    print()
    ip = Interpreter(model_bytes)  # the smallest arena TFLM accepts
    ip.allocate_tensors()
    print(f"allocation report ({ip.arena.nbytes:,}-byte arena):")
    print("\n".join(_report_lines(ip.allocation_report(), layout.target)))
    print()
    for vertical in (True, False):
        image = stripes.stripes(vertical)
        ip.set_input(image, 0)
        start = time.perf_counter()
        ip.invoke()
        elapsed = (time.perf_counter() - start) * 1e3
        out = ip.get_output(0)
        probs = stripes.probabilities(out)
        best = int(np.argmax(probs))
        verdict = _wheel_verdict(model_bytes, image, out)
        print(f"input: {stripes.LABELS[0 if vertical else 1]}")
        for row in stripes.picture(image)[:4]:
            print(f"    {row}")
        print("    ...")
        scores = ", ".join(f"{label} {p:.3f}" for label, p in zip(stripes.LABELS, probs))
        print(f"  -> {stripes.LABELS[best]}  (int8 output {out.reshape(-1).tolist()}: "
              f"{scores}; invoke {elapsed:.2f} ms){verdict}")
    return 0


def _wheel_verdict(model: bytes, image: np.ndarray, ours: np.ndarray) -> str:
    """When the tflite-micro wheel is installed, say whether it gives the same bytes."""
    try:
        from tflite_micro.python.tflite_micro import runtime
    except Exception:
        return ""
    import os
    import sys
    import tempfile

    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with tempfile.TemporaryFile() as sink:
            os.dup2(sink.fileno(), 2)
            wheel = runtime.Interpreter.from_bytes(model, arena_size=1 << 20)
            wheel.set_input(image, 0)
            wheel.invoke()
            theirs = np.array(wheel.get_output(0))
    except Exception:
        return ""
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    return "\n     TFLM wheel output: identical" if np.array_equal(theirs, ours) else \
        f"\n     TFLM wheel output DIFFERS: {theirs.reshape(-1).tolist()}"


def add_demo_parser(sub: Any) -> None:
    p = sub.add_parser("demo", help="run the bundled example model end to end",
                       description="Build a small int8 CNN with tinyarena.builder, show its "
                                   "arena plan and TFLM's allocation report, and run it on two "
                                   "images. Needs no file from outside the package.")
    p.add_argument("--save", type=Path, default=None, metavar="PATH",
                   help="also write the demo model to PATH (.tflite)")
    p.set_defaults(handler=demo_command)


__all__ = ["add_demo_parser", "add_run_parser", "demo_command", "run_command"]
