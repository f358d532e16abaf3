"""``tinyarena fit``: does a model fit a board's RAM and flash, arena and TFLM code included?

Registered in ``cli.COMMANDS`` through ``add_fit_parser``. The board table is
``tinyarena.footprint.boards``; the footprint is ``tinyarena.footprint``'s measured code sizes
plus the arena ``size`` computes. A memory whose need is only partly known (code sizes not
measured for the board's build) is never guessed: the verdict is then ``unknown`` unless the
known part alone is already too big.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from tinyarena.cli_common import (
    add_footprint_arguments,
    add_target_argument,
    error_object,
    positive_size_argument,
    report_error,
)
from tinyarena.errors import TinyArenaError

EXIT_FITS, EXIT_ERROR, EXIT_USAGE, EXIT_OVER, EXIT_UNKNOWN = 0, 1, 2, 3, 4


def _memory(capacity: int, known: int | None, need: int | None) -> dict[str, Any]:
    """One memory's verdict: ``need`` when every part is known, else only ``known`` (a lower
    bound); ``fits`` is None when the known part fits but the rest is unknown."""
    if need is not None:
        return {"capacity": capacity, "need": need, "known": need,
                "headroom": capacity - need, "fits": need <= capacity}
    lower = known or 0
    return {"capacity": capacity, "need": None, "known": lower, "headroom": None,
            "fits": False if lower > capacity else None}


def fit_record(model: str, *, board: dict[str, Any], libc: str, build: str) -> dict[str, Any]:
    """The ``fit --json`` record of ``model`` on ``board`` (a row of the board table or a
    custom part: ``name``, ``target``, ``kernels``, ``ram``, ``flash``)."""
    from tinyarena.arena import allocate_model
    from tinyarena.arena.targets import get_target
    from tinyarena.footprint import footprint_for
    from tinyarena.model import read_model

    try:
        parsed = read_model(model)
    except TinyArenaError as exc:
        return {"model": model, "board": board, **error_object(exc)}
    model_bytes = Path(model).stat().st_size
    notes: list[str] = []
    try:
        profile = get_target(board["target"], board["kernels"])
        arena: int | None = allocate_model(parsed, target=profile).min_arena
    except TinyArenaError as exc:
        arena = None
        notes.append(f"arena unknown for target {board['target']} with {board['kernels']} "
                     f"kernels in this tinyarena: {exc}")
    if arena is None:
        found: Any = "arena unknown"
    else:
        found = footprint_for(parsed, model_bytes, arena, board["target"], board["kernels"],
                              libc, build)
    if isinstance(found, str):
        if arena is not None:
            notes.append(found)
        ram = _memory(board["ram"], arena, None)
        flash = _memory(board["flash"], model_bytes, None)
        footprint = None
    else:
        ram = _memory(board["ram"], found.ram_total, found.ram_total)
        flash = _memory(board["flash"], found.flash_total, found.flash_total)
        footprint = found.to_dict()
    fits = (False if ram["fits"] is False or flash["fits"] is False
            else True if ram["fits"] and flash["fits"] else None)
    verdict = {True: "fits", False: "does not fit", None: "unknown"}[fits]
    return {"model": model, "board": board, "verdict": verdict, "fits": fits, "ram": ram,
            "flash": flash, "footprint": footprint, "notes": notes}


def _kib(n: int) -> str:
    return f"{n:,} bytes ({n / 1024:,.1f} KiB)"


def _line(name: str, m: dict[str, Any], parts: str) -> str:
    if m["need"] is not None:
        room = m["headroom"]
        state = (f"headroom {_kib(room)}" if room >= 0 else f"OVER by {_kib(-room)}")
        return f"{name:<6}{_kib(m['need'])} of {_kib(m['capacity'])}: {state}  [{parts}]"
    if not m["known"]:
        return f"{name:<6}unknown of {_kib(m['capacity'])}  [{parts}]"
    over = m["fits"] is False
    return (f"{name:<6}at least {_kib(m['known'])} of {_kib(m['capacity'])}: "
            f"{'OVER already' if over else 'rest unmeasured'}  [{parts}]")


def render_fit(r: dict[str, Any]) -> str:
    """``fit``'s text: the verdict, each memory with its parts and headroom, what it assumes."""
    from tinyarena.footprint import LIBC_WORDS

    b = r["board"]
    fp = r["footprint"]
    lines = [f"{r['model']} on {b['name']} ({b.get('mcu', 'custom part')}; target "
             f"{b['target']}, {b['kernels']} kernels): {r['verdict'].upper()}"]
    if fp is not None:
        a = fp["assumes"]
        ram_parts = f"arena {fp['ram']['arena']:,} + static {fp['ram']['static']:,}"
        flash_parts = f"model {fp['flash']['model']:,} + code {fp['flash']['code']:,}"
        lines.append(_line("RAM", r["ram"], ram_parts))
        lines.append(_line("flash", r["flash"], flash_parts))
        lines.append(f"code and static sizes: {a['core']} float ABI {a['float_abi']}, "
                     f"{a['kernels']} kernels, {LIBC_WORDS[a['libc']]}, TFLM {a['build']} "
                     f"build, {a['toolchain']}, TFLM {a['tflm']}")
    else:
        lines.append(_line("RAM", r["ram"], "arena; TFLM static RAM unmeasured"))
        lines.append(_line("flash", r["flash"], "model; TFLM code unmeasured"))
    lines.extend(f"note: {n}" for n in r["notes"])
    if b.get("note"):
        lines.append(f"board: {b['note']}")
    lines.append("headroom is what is left for the application's own code, stack, heap and "
                 "buffers")
    return "\n".join(lines)


def _boards_table() -> list[dict[str, Any]]:
    from dataclasses import asdict

    from tinyarena.footprint.boards import BOARDS

    return [asdict(b) for b in BOARDS]


def _render_boards(rows: list[dict[str, Any]]) -> str:
    table = [("board", "MCU", "core", "target", "kernels", "RAM", "flash")]
    table += [(r["name"], r["mcu"], r["core"], r["target"], r["kernels"],
               f"{r['ram'] // 1024:,} KiB", f"{r['flash'] // 1024:,} KiB") for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in table]
    lines.append("")
    lines.extend(f"{r['name']}: {r['source']}" + (f" ({r['note']})" if r["note"] else "")
                 for r in rows)
    return "\n".join(lines)


def _board_from_args(args: argparse.Namespace) -> dict[str, Any] | str:
    """The board row ``--board`` names, or a custom part from the budgets; or a usage error."""
    from dataclasses import asdict

    from tinyarena.arena.targets import get_target
    from tinyarena.footprint.boards import board_names, get_board

    if args.board is not None:
        board = get_board(args.board)
        if board is None:
            return f"unknown board {args.board!r}; choose one of {', '.join(board_names())}"
        row = asdict(board)
        row["ram"] = args.ram_budget or row["ram"]
        row["flash"] = args.flash_budget or row["flash"]
        return row
    if args.ram_budget is None or args.flash_budget is None:
        return "give --board NAME (list: tinyarena fit --boards), or --ram-budget and " \
               "--flash-budget with a device --target"
    profile = get_target(args.target, args.kernels)
    if profile.core is None:
        return f"--target {args.target} is not a device build; give e.g. --target cortex-m4"
    return {"name": "custom", "mcu": "custom part", "core": profile.core,
            "target": profile.name, "kernels": profile.kernel_set, "ram": args.ram_budget,
            "flash": args.flash_budget, "source": "--ram-budget/--flash-budget", "note": ""}


def run_fit(args: argparse.Namespace) -> int:
    if args.boards:
        rows = _boards_table()
        print(json.dumps({"boards": rows}, indent=2) if args.json else _render_boards(rows))
        return EXIT_FITS
    if args.model is None:
        report_error(args, "UsageError", "give MODEL (or --boards to list the boards)")
        return EXIT_USAGE
    if args.build != "default":
        from tinyarena.footprint import unmeasured_build

        reason = unmeasured_build(args.build)
        if reason:
            report_error(args, "UsageError", reason)
            return EXIT_USAGE
    board = _board_from_args(args)
    if isinstance(board, str):
        report_error(args, "UsageError", board)
        return EXIT_USAGE
    record = fit_record(args.model, board=board, libc=args.libc, build=args.build)
    if "error" in record:
        if args.json:
            print(json.dumps(record, indent=2))
        else:
            report_error(args, record["error"]["type"], record["error"]["message"])
        return EXIT_ERROR
    print(json.dumps(record, indent=2) if args.json else render_fit(record))
    return {True: EXIT_FITS, False: EXIT_OVER, None: EXIT_UNKNOWN}[record["fits"]]


def add_fit_parser(sub: Any) -> None:
    p = sub.add_parser(
        "fit", help="does a model fit a board (RAM and flash, TFLM included)?",
        description="Flash (model + TFLM code) and RAM (arena + TFLM's static objects) of "
                    "MODEL against a board's memories, with the headroom left. Exit 0 fits, "
                    "3 does not fit, 4 unknown (TFLM's code not measured for the board's "
                    "build and the known part fits), 1 bad model, 2 usage error.")
    p.add_argument("model", nargs="?", metavar="MODEL", help="a .tflite file")
    p.add_argument("--board", metavar="NAME", help="a board of the table (--boards)")
    p.add_argument("--boards", action="store_true", help="list the board table and exit")
    p.add_argument("--ram-budget", type=positive_size_argument, metavar="BYTES",
                   help="RAM of a custom part (with --flash-budget and --target), or instead "
                        "of the board's")
    p.add_argument("--flash-budget", type=positive_size_argument, metavar="BYTES",
                   help="flash of a custom part, or instead of the board's")
    add_target_argument(p)
    add_footprint_arguments(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=run_fit)


__all__ = ["add_fit_parser", "fit_record", "render_fit", "run_fit"]
