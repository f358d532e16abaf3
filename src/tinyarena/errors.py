"""Every error tinyarena raises, under one base.

    TinyArenaError
     +-- ModelError            the .tflite bytes are malformed, truncated or inconsistent
     +-- UnsupportedOpError    an operator (or an operator/dtype combination) has no kernel here
     +-- ArenaTooSmallError    the arena cannot hold what TFLM would allocate in it
     +-- PlanError             a memory plan is invalid (overlap, bad offset, wrong buffer count)
     +-- KernelError           a kernel rejected its tensors during prepare or eval
     +-- InterpreterError      the interpreter API was used out of order or with bad arguments
     +-- BuildError            the model builder or rewriter was asked for something invalid
     +-- UsageError            options that name nothing (an unknown target) or contradict each
                               other; the CLI exits 2 for it, as for argparse's own usage errors

Foreign exceptions (struct.error, IndexError from a bad offset, ...) are caught where they
arise and re-raised as one of these, so callers need to handle only ``TinyArenaError``.
"""

from __future__ import annotations


class TinyArenaError(Exception):
    """Base class: catch this to handle every tinyarena failure."""


class ModelError(TinyArenaError):
    """The model file cannot be read: say what is wrong and where."""


class UnsupportedOpError(TinyArenaError):
    """No kernel for an operator; names the op, its index and its subgraph."""

    def __init__(self, message: str, *, op_name: str = "", op_index: int = -1,
                 subgraph_index: int = 0) -> None:
        super().__init__(message)
        self.op_name = op_name
        self.op_index = op_index
        self.subgraph_index = subgraph_index


class ArenaTooSmallError(TinyArenaError):
    """The arena is too small. ``needed`` is the smallest arena that works, ``missing`` the gap."""

    def __init__(self, message: str, *, arena_size: int, needed: int, missing: int) -> None:
        super().__init__(message)
        self.arena_size = arena_size
        self.needed = needed
        self.missing = missing


class PlanError(TinyArenaError):
    """A memory plan breaks a rule (two live buffers overlap, an offset is negative, ...)."""


class KernelError(TinyArenaError):
    """A kernel refused its inputs, as TFLM's TF_LITE_ENSURE would."""


class InterpreterError(TinyArenaError):
    """The interpreter was used wrongly: wrong order, wrong index, wrong shape or dtype."""


class BuildError(TinyArenaError):
    """The builder or the rewriter was asked to write an invalid model."""


class UsageError(TinyArenaError):
    """The caller asked for something that does not exist (a target, a kernel set) or combined
    options that contradict each other: nothing about the model is wrong. ``tinyarena`` exits 2
    for it, like for its own argument errors."""


__all__ = [
    "ArenaTooSmallError",
    "BuildError",
    "InterpreterError",
    "KernelError",
    "ModelError",
    "PlanError",
    "TinyArenaError",
    "UnsupportedOpError",
    "UsageError",
]
