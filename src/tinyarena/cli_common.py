"""Pieces every ``tinyarena`` subcommand shares (arguments that must mean the same everywhere).

Subcommands live in ``cli.py`` and ``cli_<name>.py`` modules; those import from here, never from
each other, so that a new subcommand is one module and one line in ``cli.COMMANDS``.

Besides ``--target``, this holds what makes the commands behave alike for a user and for CI: one
size syntax (``96K``, ``96KiB``, ``0x18000``, ``98304``), one JSON error object, and one way to
run a command over many models (folders expanded, a process pool, a progress bar on a terminal,
CSV next to JSON).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

from tinyarena._version import EMULATED_TFLM, __version__

T = TypeVar("T")
R = TypeVar("R")

# Binary multiples, as linker scripts and MCU datasheets count RAM: 96K is 98,304 bytes.
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
          "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30,
          "gib": 1 << 30}
_SIZE = re.compile(r"(?P<number>[0-9][0-9_]*)\s*(?P<unit>[a-z]*)")

# Batches at least this long get a progress bar (on a terminal only).
PROGRESS_MIN_ITEMS = 4

if TYPE_CHECKING:
    from tinyarena.arena.targets import TargetProfile


def add_target_argument(p: argparse.ArgumentParser) -> None:
    """``--target`` and ``--kernels``, the same on every command that sizes, plans or runs for
    a TFLM build: the choices are the profiles and kernel sets ``tinyarena.arena.targets``
    defines, so a new target is data. ``target_from_args`` turns them into one profile."""
    from tinyarena.arena.targets import KERNEL_SETS, PROFILES

    p.add_argument("--target", choices=tuple(PROFILES), default="host-x64",
                   help="the TFLM build: struct layout, kernels and allocator (default "
                        "host-x64, the pip wheel; cortex-m0 ... cortex-m85 for an Arm "
                        "Cortex-M firmware built with arm-none-eabi-gcc; list: tinyarena "
                        "targets)")
    p.add_argument("--kernels", choices=KERNEL_SETS, default=None,
                   help="the kernels the firmware links (default: the target's own: "
                        "cmsis-nn on cortex-m*, reference elsewhere)")


def add_footprint_arguments(p: argparse.ArgumentParser) -> None:
    """``--libc`` and ``--build``: which measured TFLM firmware build the flash code and static
    RAM of a device target's footprint are for (``size``, ``fit``)."""
    p.add_argument("--libc", choices=("full", "nano"), default="full",
                   help="C library of the footprint's code sizes: full newlib (default) or "
                        "newlib-nano (--specs=nano.specs)")
    p.add_argument("--build", choices=("default", "release"), default="default",
                   help="TFLM build type of the footprint's code sizes: default (keeps "
                        "DebugLog's printf and assertions) or release (-DNDEBUG "
                        "-DTF_LITE_STRIP_ERROR_STRINGS)")


def add_footprint_budgets(p: argparse.ArgumentParser) -> None:
    """``check``'s optional whole-footprint gate: the budgets and the C library."""
    p.add_argument("--ram-budget", type=positive_size_argument, metavar="BYTES",
                   help="also gate RAM: arena + TFLM's static objects (measured code sizes; "
                        "device targets only)")
    p.add_argument("--flash-budget", type=positive_size_argument, metavar="BYTES",
                   help="also gate flash: the model + TFLM's code (measured code sizes)")
    p.add_argument("--libc", choices=("full", "nano"), default="full",
                   help="C library of the footprint's code sizes (default full newlib)")


def parse_size(text: str) -> int:
    """A byte count as users write it: ``98304``, ``0x18000``, ``96K``, ``96KB``, ``96KiB``
    (K, M and G are binary multiples, with or without B/iB; case does not matter).
    Raises ``ValueError`` naming the accepted forms."""
    raw = text.strip()
    lowered = raw.lower().replace(",", "")
    value: int | None = None
    if lowered.startswith("0x"):
        try:
            value = int(lowered[2:], 16)
        except ValueError:
            value = None
    else:
        match = _SIZE.fullmatch(lowered)
        if match is not None and match["unit"] in _UNITS:
            value = int(match["number"]) * _UNITS[match["unit"]]
    if value is None:
        raise ValueError(f"not a size: {text!r}; write bytes as 98304, 0x18000, 96K or 96KiB")
    return value


def size_argument(text: str) -> int:
    """argparse ``type=`` for every size the CLI takes (--arena-size, --budget, --margin)."""
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def positive_size_argument(text: str) -> int:
    value = size_argument(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 bytes, got {text!r}")
    return value


def version_text() -> str:
    return f"tinyarena {__version__} (emulates {EMULATED_TFLM} on host-x64)"


def error_object(exc: BaseException, kind: str | None = None) -> dict[str, Any]:
    """The JSON every failing command prints with ``--json``: ``{"error": {"type", "message"}}``
    (plus the bytes needed and missing when the arena is too small)."""
    body: dict[str, Any] = {"type": kind or type(exc).__name__, "message": str(exc)}
    for attr in ("needed", "missing", "arena_size"):
        value = getattr(exc, attr, None)
        if isinstance(value, int):
            body[attr] = value
    return {"error": body}


def report_error(args: argparse.Namespace, kind: str, message: str) -> None:
    """A command's own failure (not a model's): the JSON error object with --json, else
    ``error: ...`` on stderr."""
    if getattr(args, "json", False):
        print(json.dumps({"error": {"type": kind, "message": message}}, indent=2))
    else:
        print(f"error: {message}", file=sys.stderr)


def oserror_message(exc: OSError) -> str:
    where = f"{exc.filename}: " if exc.filename is not None else ""
    return f"{where}{exc.strerror or exc}; check the path"


# -- many models ---------------------------------------------------------------------------------
def add_batch_arguments(p: argparse.ArgumentParser) -> None:
    """MODEL... (files or folders), --jobs and --csv, the same on size, check and export."""
    p.add_argument("model", nargs="+",
                   help="one or more .tflite files, or folders (their *.tflite files, sorted)")
    p.add_argument("--jobs", "-j", type=positive_int_argument, default=1, metavar="N",
                   help="models processed in parallel (processes; default 1). The output is "
                        "the same for every N")
    p.add_argument("--csv", default=None, metavar="FILE",
                   help="also write one row per model to FILE as CSV ('-' for stdout)")


def positive_int_argument(text: str) -> int:
    """argparse ``type=`` for every count the CLI takes (--jobs, --repeat, --max-external)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def seconds_argument(text: str) -> float:
    """argparse ``type=`` of every --time-budget: a finite number of seconds, zero or more."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds >= 0, got {text}")
    return value


def expand_models(paths: Sequence[str]) -> list[str]:
    """Files as given; a folder becomes its ``*.tflite`` files (recursively, sorted). A path
    that does not exist is kept, so the command reports it as that model's error."""
    models: list[str] = []
    for text in paths:
        path = Path(text)
        if path.is_dir():
            models.extend(str(p) for p in sorted(path.rglob("*.tflite")) if p.is_file())
        else:
            models.append(text)
    return models


def is_single(paths: Sequence[str]) -> bool:
    """One MODEL that is not a folder: the command prints one object, not a list."""
    return len(paths) == 1 and not Path(paths[0]).is_dir()


def run_batch(func: Callable[[T], R], items: Sequence[T], jobs: int = 1,
              desc: str = "") -> list[R]:
    """``[func(item) for item in items]``, in that order, on ``jobs`` processes.

    ``func`` must be a module-level function that returns plain data and reports a model's
    failure in its result, so one bad model does not stop the batch. A progress bar goes to
    stderr when it is a terminal and the batch has at least ``PROGRESS_MIN_ITEMS`` items.
    """
    workers = max(1, min(jobs, len(items)))
    if workers == 1:
        return list(_progress(map(func, items), len(items), desc))
    from concurrent.futures import ProcessPoolExecutor  # ~15 ms of imports a single model skips

    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(_progress(pool.map(func, items), len(items), desc))


def _progress(results: Iterable[R], total: int, desc: str) -> Iterator[R]:
    if total < PROGRESS_MIN_ITEMS or not sys.stderr.isatty():
        yield from results
        return
    from tqdm import tqdm

    yield from tqdm(results, total=total, desc=desc or None, unit="model", file=sys.stderr,
                    leave=False)


def csv_text(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """Rows as CSV with a header line; missing fields are empty, None is empty."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(columns), extrasaction="ignore",
                            lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in columns})
    return out.getvalue()


def write_csv(target: str, rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> None:
    text = csv_text(rows, columns)
    if target == "-":
        sys.stdout.write(text)
    else:
        Path(target).write_text(text)


def target_from_args(args: argparse.Namespace) -> TargetProfile:
    """The profile ``--target`` and ``--kernels`` name (host-x64 when no target is given)."""
    from tinyarena.arena.targets import get_target

    return get_target(getattr(args, "target", None) or "host-x64",
                      getattr(args, "kernels", None))


def plan_warnings(args: argparse.Namespace) -> list[str]:
    """Warnings for sizing or running ``args.model`` on the target the arguments name (printed
    to stderr as ``warning: ...``; JSON output lists them under ``warnings``): today, a plan
    ``tinyarena optimize`` proved safe only for other kernels than that target's."""
    import sys

    from tinyarena.model import read_model
    from tinyarena.optimize.safety import plan_warnings as _warnings

    found = _warnings(read_model(args.model), target_from_args(args))
    for text in found:
        print(f"warning: {text}", file=sys.stderr)
    return found


__all__ = [
    "PROGRESS_MIN_ITEMS",
    "add_batch_arguments",
    "add_footprint_arguments",
    "add_footprint_budgets",
    "add_target_argument",
    "csv_text",
    "error_object",
    "expand_models",
    "is_single",
    "oserror_message",
    "parse_size",
    "plan_warnings",
    "positive_int_argument",
    "positive_size_argument",
    "report_error",
    "run_batch",
    "seconds_argument",
    "size_argument",
    "target_from_args",
    "version_text",
    "write_csv",
]
