"""Pieces every ``tinyarena`` subcommand shares (arguments that must mean the same everywhere).

Subcommands live in ``cli.py`` and ``cli_<name>.py`` modules; those import from here, never from
each other, so that a new subcommand is one module and one line in ``cli.COMMANDS``.
"""

from __future__ import annotations

import argparse


def add_target_argument(p: argparse.ArgumentParser) -> None:
    """``--target``, the same on every command that sizes or plans for a TFLM build: its
    choices are the profiles ``tinyarena.arena.targets`` defines, so a new target is data."""
    from tinyarena.arena.targets import PROFILES

    p.add_argument("--target", choices=tuple(PROFILES), default="host-x64",
                   help="the TFLM build: struct layout, kernels and allocator "
                        "(default host-x64, the pip wheel)")


__all__ = ["add_target_argument"]
