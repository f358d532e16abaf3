"""Pieces every ``tinyarena`` subcommand shares (arguments that must mean the same everywhere).

Subcommands live in ``cli.py`` and ``cli_<name>.py`` modules; those import from here, never from
each other, so that a new subcommand is one module and one line in ``cli.COMMANDS``.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

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


__all__ = ["add_target_argument", "plan_warnings", "target_from_args"]
