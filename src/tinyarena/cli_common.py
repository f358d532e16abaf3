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
import contextlib
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


class _TargetAction(argparse.Action):
    """``--target T``: ``args.target`` is the first target named and ``args.targets`` every
    target, in order, without repeats. A command that sizes for one build only (``several``
    false) refuses a second ``--target`` as a usage error, instead of silently keeping one."""

    def __init__(self, option_strings: Sequence[str], dest: str, several: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.several = several

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        seen = list(getattr(namespace, "targets", None) or [])
        if seen and values not in seen and not self.several:
            parser.error(f"{parser.prog} takes one --target (got {seen[0]} and {values}); "
                         f"size and check take several")
        if not seen:
            setattr(namespace, self.dest, values)
        if values not in seen:
            seen.append(values)
        namespace.targets = seen


DEFAULT_TARGET = "host-x64"
DEFAULT_TARGET_WORDS = (f"{DEFAULT_TARGET} (default: the x86-64 pip wheel; for a device pass "
                        f"--target)")
"""What every header says instead of ``host-x64`` when no --target was given."""


def add_target_argument(p: argparse.ArgumentParser, several: bool = False,
                        required: bool = False, default_words: str | None = None) -> None:
    """``--target``, ``--kernels`` and ``--esp-nn``, the same on every command that sizes, plans
    or runs for a TFLM build: the choices are the profiles, kernel sets and esp-nn releases
    ``tinyarena.arena.targets`` defines, so a new target is data. ``target_from_args`` turns
    them into one profile; with ``several``, ``--target`` and ``--esp-nn`` may be repeated
    (``builds_from_args``: one record per build); ``check_esp_nn_usage`` checks the rest.

    The default stays None so that a command can tell "host-x64 by default" (which it says:
    ``target_defaulted``) from "host-x64 asked for"; commands that write or gate firmware
    (``required``) refuse to guess (``require_target``)."""
    from tinyarena.arena.targets import ESP_NN_VERSIONS, KERNEL_SETS, PROFILES

    default = default_words or ("required: the device the firmware runs on" if required else
                                f"default {DEFAULT_TARGET}, the x86-64 pip wheel, not a device")
    p.add_argument("--target", action=_TargetAction, several=several, choices=tuple(PROFILES),
                   default=None,
                   help=f"the TFLM build: struct layout, float ABI, kernels and allocator "
                        f"({default}; cortex-m0 ... cortex-m85 are TFLM's TARGET_ARCH names "
                        f"for an Arm Cortex-M firmware built with arm-none-eabi-gcc, e.g. "
                        f"cortex-m4 (soft-float) or cortex-m4+fp; esp32, esp32s3, esp32p4, "
                        f"esp32c3, esp32c6 for esp-tflite-micro; list: tinyarena targets)"
                        + ("; repeat it for several builds, side by side" if several else ""))
    p.add_argument("--kernels", choices=KERNEL_SETS, default=None,
                   help="the kernels the firmware links (default: the target's own: "
                        "cmsis-nn on cortex-m*, esp-nn on esp32*, reference elsewhere)")
    p.add_argument("--esp-nn", action="append", choices=ESP_NN_VERSIONS, default=None,
                   metavar="VERSION",
                   help="on esp32* targets: the esp-nn release the firmware resolved ("
                        + ", ".join(ESP_NN_VERSIONS) + f"; default {ESP_NN_VERSIONS[-1]}, "
                        "what a fresh build of esp-tflite-micro's esp-nn >=1.1.1 gets)"
                        + ("; repeat for one record per version" if several else ""))
    p.set_defaults(targets=None, several_builds=several)


def targets_from_args(args: argparse.Namespace) -> list[str]:
    """Every ``--target`` named, in order (the default target when none was)."""
    named = getattr(args, "targets", None)
    if named:
        return list(named)
    given = getattr(args, "target", None)
    if isinstance(given, list):  # a parser of its own with action="append" (report)
        return list(dict.fromkeys(given)) or ["host-x64"]
    return [given or "host-x64"]


def targets_of(args: argparse.Namespace) -> list[str]:
    """The --target values as a list (one, several, or the default host-x64)."""
    return targets_from_args(args)


def esp_nn_of(args: argparse.Namespace) -> list[str | None]:
    """The --esp-nn values (in order, once each), or [None]: the target's default release."""
    given = getattr(args, "esp_nn", None)
    return list(dict.fromkeys(given)) if given else [None]


def builds_from_args(args: argparse.Namespace) -> list[tuple[str, str | None]]:
    """Every build the arguments name, (target, esp-nn release or None), targets outermost:
    a command that gives one record per build gives them in this order."""
    return [(t, v) for t in targets_from_args(args) for v in esp_nn_of(args)]


def check_esp_nn_usage(args: argparse.Namespace) -> str | None:
    """Why --target/--kernels/--esp-nn cannot go together (a usage error, exit 2), or None.
    --esp-nn names an esp-nn release: only esp32* targets with their esp-nn kernels have one."""
    from tinyarena.arena.targets import ESP_NN_VERSIONS, PROFILES

    versions = [v for v in esp_nn_of(args) if v is not None]
    if not versions:
        return None
    known = ", ".join(ESP_NN_VERSIONS)
    for name in targets_of(args):
        profile = PROFILES.get(name)
        if profile is not None and profile.esp_nn_dispatch is None:
            return (f"--esp-nn applies to esp32* targets; target {name} has no ESP-NN build "
                    f"(esp-nn versions: {known})")
    kernels = getattr(args, "kernels", None)
    if kernels not in (None, "esp-nn"):
        return (f"--esp-nn names the esp-nn release, but --kernels {kernels} links no ESP-NN; "
                f"drop one of them (esp-nn versions: {known})")
    if len(versions) > 1 and not getattr(args, "several_builds", False):
        return (f"this command sizes one build; give one --esp-nn (esp-nn versions: {known}), "
                f"or compare versions with tinyarena size --esp-nn A --esp-nn B")
    return None


def check_build_arguments(args: argparse.Namespace) -> None:
    """Refuse a target/kernel-set pair that names no build (``--kernels cmsis-nn`` on
    host-x64) before any model is read: a ``UsageError`` (exit 2), not one error per model."""
    from tinyarena.arena.targets import get_target

    for name, version in builds_from_args(args):
        get_target(name, getattr(args, "kernels", None), version)


def target_line(profile: TargetProfile, allocator: str | None = None,
                planned: str | None = None, defaulted: bool = False) -> str:
    """The line every command's output starts with: what its numbers depend on (target, ABI,
    kernel set, allocator, TFLM version, and what placed the buffers when that is known).
    ``defaulted``: no --target was given, and the line says so; a target whose name changed
    meaning (``cortex-m4`` is now TFLM's soft-float build) gets a ``note:`` line after it."""
    line = profile.header(allocator)
    if planned:
        line = f"{line} | {planned}"
    if defaulted:
        line = line.replace(f"target {DEFAULT_TARGET}", f"target {DEFAULT_TARGET_WORDS}", 1)
    note = f"\nnote: target {profile.name}: {profile.note}" if profile.note else ""
    return line + note


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


def failed_record(model: str, exc: BaseException) -> dict[str, Any]:
    """A model's record when its work raised instead of returning one (a worker lost on
    every retry, an executor's own failure): the batch goes on, the model reports it."""
    return {"model": model, **error_object(exc)}


def records_per_build(record: Callable[..., dict[str, Any]], model: str,
                      builds: Sequence[tuple[str, str | None]], *, source: Any = None,
                      unreadable: Mapping[str, Any] | None = None,
                      **kwargs: Any) -> list[dict[str, Any]]:
    """``record(model, target=t, esp_nn=v, parsed=..., **kwargs)`` for every build (target,
    esp-nn release), the model read once (from ``source`` when given, e.g. a search
    candidate's bytes; else from the path ``model``): one batch task per model. A model that
    cannot be read is one error record per build, carrying ``unreadable``'s fields too."""
    from tinyarena.errors import TinyArenaError
    from tinyarena.model import read_model

    try:
        parsed = read_model(model if source is None else source)
    except TinyArenaError as exc:
        return [{"model": model, "target": t, **(unreadable or {}), **error_object(exc)}
                for t, _ in builds]
    return [record(model, target=t, esp_nn=v, parsed=parsed, **kwargs) for t, v in builds]


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
    add_executor_argument(p)


def add_executor_argument(p: argparse.ArgumentParser) -> None:
    """--executor: where a batch runs. The records are the same whichever runs them."""
    p.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="local: this machine, --jobs processes (default); ray: tasks on the "
                        "Ray cluster at RAY_ADDRESS or running here, else a local one "
                        "started for the command (pip install 'tinyarena[ray]')")


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
              desc: str = "", executor: str | None = None,
              on_error: Callable[[T, BaseException], R] | None = None) -> list[R]:
    """``[func(item) for item in items]``, in that order, on ``jobs`` processes or on Ray.

    ``func`` must be a module-level function that returns plain data and reports a model's
    failure in its result, so one bad model does not stop the batch (``on_error`` turns
    what escapes it, a worker lost on every retry included, into that model's result). A
    progress bar goes to stderr when it is a terminal and the batch has at least
    ``PROGRESS_MIN_ITEMS`` items.
    """
    from tinyarena.executors import map_ordered

    with _progress_bar(len(items), desc) as tick:
        return map_ordered(func, items, jobs=jobs, executor=executor, on_error=on_error,
                           progress=tick)


@contextlib.contextmanager
def _progress_bar(total: int, desc: str) -> Iterator[Callable[[int], None] | None]:
    """A tqdm bar on a terminal's stderr for batches of ``PROGRESS_MIN_ITEMS`` or more, as a
    callback taking how many items just finished; None (no bar) otherwise."""
    if total < PROGRESS_MIN_ITEMS or not sys.stderr.isatty():
        yield None
        return
    from tqdm import tqdm

    with tqdm(total=total, desc=desc or None, unit="model", file=sys.stderr,
              leave=False) as bar:
        yield bar.update


def side_by_side(corner: str, columns: Sequence[str],
                 rows: Sequence[tuple[str, Sequence[str]]]) -> list[str]:
    """A text table with one column per target (several ``--target``): labels left, cells
    right-aligned, every column as wide as its widest cell."""
    label_width = max(len(corner), *(len(label) for label, _ in rows))
    widths = [max(len(name), *(len(cells[i]) for _, cells in rows))
              for i, name in enumerate(columns)]
    lines = [f"{corner:<{label_width}}  " + "  ".join(
        f"{name:>{w}}" for name, w in zip(columns, widths))]
    lines += [f"{label:<{label_width}}  " + "  ".join(f"{c:>{w}}" for c, w in zip(cells, widths))
              for label, cells in rows]
    return [line.rstrip() for line in lines]


def csv_text(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """Rows as CSV with a header line; missing fields are empty, None is empty, booleans are
    ``true``/``false`` (as in the JSON, so a spreadsheet and a script read the same word)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(columns), extrasaction="ignore",
                            lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _csv_cell(row.get(k)) for k in columns})
    return out.getvalue()


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def csv_to_stdout(args: argparse.Namespace) -> bool:
    """``--csv -``: stdout carries the CSV only, so the text goes to stderr."""
    return getattr(args, "csv", None) == "-"


def text_stream(args: argparse.Namespace) -> Any:
    """Where a command's human-readable text goes: stdout, or stderr when ``--csv -`` has
    stdout (``tinyarena size *.tflite --csv - | python -c 'import csv ...'`` must parse)."""
    return sys.stderr if csv_to_stdout(args) else sys.stdout


def check_output_arguments(args: argparse.Namespace) -> None:
    """``--csv -`` and ``--json`` both want stdout: a usage error, not a mixed stream."""
    from tinyarena.errors import UsageError

    if csv_to_stdout(args) and getattr(args, "json", False):
        raise UsageError("--csv - and --json both write to stdout; write the CSV to a file "
                         "(--csv FILE) or drop one of them")


def write_csv(target: str, rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> None:
    text = csv_text(rows, columns)
    if target == "-":
        sys.stdout.write(text)
    else:
        Path(target).write_text(text)


def target_from_args(args: argparse.Namespace) -> TargetProfile:
    """The profile ``--target``, ``--kernels`` and ``--esp-nn`` name (host-x64 when no
    target is given); a command that sizes one build refuses several."""
    from tinyarena.arena.targets import get_target
    from tinyarena.errors import UsageError

    targets, versions = targets_of(args), esp_nn_of(args)
    if len(targets) > 1 or len(versions) > 1:
        raise UsageError("this sizes one build; give one --target and at most one --esp-nn")
    return get_target(targets[0], getattr(args, "kernels", None), versions[0])


def target_name(args: argparse.Namespace) -> str:
    """The (first) ``--target``, or the default when none was given."""
    return targets_from_args(args)[0]


def target_defaulted(args: argparse.Namespace) -> bool:
    """No --target was given: the numbers are the host wheel's, which every output says."""
    return not getattr(args, "target", None) and not getattr(args, "targets", None)


def announce_default(args: argparse.Namespace, text: str) -> str:
    """``text`` with its first ``target host-x64`` spelled out as a default when it was one,
    so that nobody copies the host's number into a firmware unawares."""
    if not target_defaulted(args):
        return text
    return text.replace(f"target {DEFAULT_TARGET}", f"target {DEFAULT_TARGET_WORDS}", 1)


def target_lines(args: argparse.Namespace, allocator: str | None = None) -> str:
    """The target header of a command's text output, with the default said and the note of a
    name whose meaning changed (``cortex-m4`` is now TFLM's soft-float build)."""
    return target_line(target_from_args(args), allocator, defaulted=target_defaulted(args))


def device_targets() -> list[str]:
    """Every target that is a device build (all but the host wheel), for error messages."""
    from tinyarena.arena.targets import PROFILES

    return [name for name in PROFILES if name != DEFAULT_TARGET]


def require_target(args: argparse.Namespace, command: str) -> int | None:
    """Usage error (exit 2) when a firmware command got no --target: the host wheel's number
    in a firmware is too small on real devices (issue 19), so it must be asked for by name."""
    if not target_defaulted(args):
        return None
    report_error(args, "UsageError",
                 f"{command} needs --target: the TFLM build the firmware runs, one of "
                 f"{', '.join(device_targets())} (TFLM's TARGET_ARCH names; see tinyarena "
                 f"targets), or {DEFAULT_TARGET} for the x86-64 pip wheel")
    return 2


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


def _count_argument(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text!r}")
    return value


def add_variables_arguments(p: argparse.ArgumentParser) -> None:
    """``--separate-variables`` and ``--max-resource-variables``: where a firmware creates
    ``MicroResourceVariables`` (VAR_HANDLE's variables) and for how many."""
    p.add_argument("--separate-variables", action="store_true",
                   help="ESPHome's micro_wake_word layout: MicroResourceVariables over a "
                        "MicroAllocator of a second arena; size the tensor arena without it "
                        "and report that arena as variables_arena {used, min}")
    p.add_argument("--max-resource-variables", type=_count_argument, default=None,
                   metavar="N",
                   help="the count given to MicroResourceVariables::Create (ESPHome: 20; "
                        "default: the model's distinct VAR_HANDLE variables)")


__all__ = [
    "DEFAULT_TARGET",
    "DEFAULT_TARGET_WORDS",
    "PROGRESS_MIN_ITEMS",
    "announce_default",
    "device_targets",
    "require_target",
    "target_defaulted",
    "target_lines",
    "target_name",
    "add_variables_arguments",
    "add_batch_arguments",
    "add_executor_argument",
    "add_footprint_arguments",
    "add_footprint_budgets",
    "add_target_argument",
    "builds_from_args",
    "check_build_arguments",
    "check_esp_nn_usage",
    "check_output_arguments",
    "csv_to_stdout",
    "esp_nn_of",
    "csv_text",
    "error_object",
    "expand_models",
    "failed_record",
    "is_single",
    "oserror_message",
    "parse_size",
    "plan_warnings",
    "records_per_build",
    "positive_int_argument",
    "positive_size_argument",
    "report_error",
    "run_batch",
    "seconds_argument",
    "side_by_side",
    "size_argument",
    "targets_of",
    "target_from_args",
    "target_line",
    "targets_from_args",
    "text_stream",
    "version_text",
    "write_csv",
]
