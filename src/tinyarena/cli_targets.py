"""``tinyarena targets``: the TFLM builds ``--target`` names, with what each number assumes.

Registered in ``cli.COMMANDS`` through ``add_targets_parser``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any


def _rows() -> list[dict[str, Any]]:
    from tinyarena.arena.targets import ESP_NN_VERSIONS, PROFILES

    return [{
        "name": p.name,
        "core": p.core,
        "abi": p.abi,
        "float_build": p.float_build or None,
        "note": p.note or None,
        "kernels": p.kernel_set,
        "cmsis_nn_isa": p.cmsis_nn_isa,
        "allocator": p.default_allocator,
        "tflm": p.tflm_commit,
        "description": p.description,
        # esp32*: the esp_nn.h dispatch and the esp-nn releases --esp-nn accepts (last: default)
        **({"esp_nn_dispatch": p.esp_nn_dispatch, "esp_nn_versions": list(ESP_NN_VERSIONS),
            "esp_nn_default": p.esp_nn_version} if p.esp_nn_dispatch is not None else {}),
    } for p in PROFILES.values()]


def _kernels(row: dict[str, Any]) -> str:
    from tinyarena.arena.targets import ISA_NAMES

    from tinyarena.arena.targets import ESP_NN_DISPATCH_NAMES

    isa = row["cmsis_nn_isa"]
    if row["kernels"] == "cmsis-nn" and isa is not None:
        return f"cmsis-nn ({ISA_NAMES[isa]})"
    if row["kernels"] == "esp-nn" and "esp_nn_dispatch" in row:
        return (f"esp-nn {row['esp_nn_default']} "
                f"({ESP_NN_DISPATCH_NAMES[row['esp_nn_dispatch']]})")
    return str(row["kernels"])


def _render(rows: list[dict[str, Any]]) -> str:
    from tinyarena.arena.targets import ESP_NN_VERSIONS

    table = [("target", "default kernels", "allocator", "TFLM", "ABI")]
    table += [(r["name"], _kernels(r), r["allocator"], r["tflm"],
               r["abi"] + (f"; {r['float_build']}" if r["float_build"] else "")) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(4)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row[:4], widths)) + "  " + row[4]
             for row in table]
    lines.append("")
    lines.extend(f"note: {r['name']}: {r['note']}" for r in rows if r["note"])
    lines.append("cortex-m* are TFLM's TARGET_ARCH names (cortex_m_generic_makefile.inc), with "
                 "its float ABI; arm32 is the 32-bit struct layout with reference kernels and "
                 "int-sized enums, for a non-Cortex-M 32-bit build.")
    lines.append("--kernels reference|cmsis-nn|esp-nn overrides a target's default kernel "
                 "set; cmsis-nn needs a cortex-m* target, esp-nn an esp32* one.")
    lines.append("cortex-m* default to CMSIS-NN, which most Cortex-M deployments link; "
                 "CMSIS-NN's code path (plain C, DSP, MVE) follows the core.")
    lines.append("esp32* are esp-tflite-micro 1.4.0 builds and default to ESP-NN; --esp-nn "
                 f"{'|'.join(ESP_NN_VERSIONS)} picks the esp-nn release (default "
                 f"{ESP_NN_VERSIONS[-1]}), --kernels reference the same chip without ESP-NN.")
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> int:
    rows = _rows()
    print(json.dumps({"targets": rows}, indent=2) if args.json else _render(rows))
    return 0


def add_targets_parser(sub: Any) -> None:
    p = sub.add_parser("targets", help="the TFLM builds --target names",
                       description="List the targets tinyarena sizes for: ABI (struct layout), "
                                   "default kernel set and CMSIS-NN code path, allocator and "
                                   "TFLM version.")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_run)


__all__ = ["add_targets_parser"]
