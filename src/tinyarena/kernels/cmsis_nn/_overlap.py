"""Overlap rules for CMSIS-NN's code paths: how far an op's output may lie over its dying input.

Each ``OverlapRule`` is one code path (TFLM 90b983c2's ``kernels/cmsis_nn/*.cc`` dispatch into
``ARM-software/CMSIS-NN`` at 4ab83cc3) on the ISA classes it was read for, and says, from the
order in which that code last reads input bytes and first writes output bytes, which overlap
the optimizer may plan (``optimize/safety.py`` turns these into a kernel set's rules):

* ``in-place``: output element i is written only after input element i is read, and never
  before a later element is read (rule (b) of ``optimize/overlap.py``);
* ``margin``: the output is written in blocks of consecutive whole output pixels, each block
  only after every input read that block makes (im2col into the scratch buffer, or element by
  element): the reference kernels' margin holds (``optimize/margins.window_margin``);
* ``block`` with a ``scheme``: inside a block of output pixels the code writes outputs while
  it still re-reads that block's input (a matrix product walking output channels inside the
  block, or max pooling's running maximum kept in the output). Then every byte of the block
  must lie below every input byte the block or a later block reads
  (``optimize/margins.block_margin``): ``"mve4"`` blocks of 4 pixels over the flattened image
  then single pixels, ``"row-mve4"`` the same inside each output row, ``"row"`` one output
  row, ``"pixel"`` one output pixel, ``"pad-chunk"`` one memset/memcpy of ``arm_pad_s8``;
* ``none``: the loop order forbids any useful overlap; ``why`` says which loop, and it is said
  in ``optimize``'s output.

The kernel modules (``conv``, ``depthwise_conv``, ``pooling``, ``softmax``,
``fully_connected``) keep their rules beside their code as ``OVERLAP_RULES``; ADD, MUL and
PAD, which tinyarena serves with the reference kernel (same allocation), keep theirs here.
"""

from __future__ import annotations

from dataclasses import dataclass

ALL_ISAS = frozenset({"plain", "dsp", "mve"})
KINDS = ("in-place", "margin", "block", "none")
BLOCK_SCHEMES = ("mve4", "row-mve4", "row", "pixel", "pad-chunk")


@dataclass(frozen=True)
class OverlapRule:
    """One CMSIS-NN code path's overlap rule. ``key`` is ``"OP:TYPE"`` or ``"OP:TYPE:path"``
    (``optimize.safety.op_keys``); ``source`` names the functions and lines it rests on."""

    key: str
    isas: frozenset[str]
    kind: str
    source: str
    why: str
    scheme: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown overlap rule kind {self.kind!r}")
        if (self.kind == "block") != (self.scheme is not None):
            raise ValueError("a block rule names its scheme, other rules none")
        if self.scheme is not None and self.scheme not in BLOCK_SCHEMES:
            raise ValueError(f"unknown block scheme {self.scheme!r}")


OVERLAP_RULES = (
    # TFLM cmsis_nn/add.cc EvalAddQuantized, same-shape int8/int16 (broadcasts go to the
    # reference kernel): arm_elementwise_add_s8 (Source/BasicMathFunctions/
    # arm_elementwise_add_s8.c, MVE loop: vldrbq_s32 of 4 lanes of each input, then vstrbq of
    # the same 4; DSP loop: arm_nn_read_s8x4_ia of 4 of each input, then 4 stores; C loop: one
    # element) and arm_elementwise_add_s16 (2 or 1 at a time). Every write lands on elements
    # already read and never ahead of the next read.
    OverlapRule("ADD:INT8", ALL_ISAS, "in-place",
                "arm_elementwise_add_s8.c (MVE/DSP/C loops); TFLM cmsis_nn/add.cc",
                "reads each 4-element block of both inputs, then writes that block"),
    OverlapRule("ADD:INT16", ALL_ISAS, "in-place",
                "arm_elementwise_add_s16.c; TFLM cmsis_nn/add.cc",
                "reads each element (DSP: pair) of both inputs, then writes it"),
    # TFLM cmsis_nn/mul.cc EvalQuantized: arm_elementwise_mul_s8/_s16 (BasicMathFunctions),
    # the same read-then-write blocks as ADD.
    OverlapRule("MUL:INT8", ALL_ISAS, "in-place",
                "arm_elementwise_mul_s8.c; TFLM cmsis_nn/mul.cc",
                "reads each 4-element block of both inputs, then writes that block"),
    OverlapRule("MUL:INT16", ALL_ISAS, "in-place",
                "arm_elementwise_mul_s16.c; TFLM cmsis_nn/mul.cc",
                "reads each element of both inputs, then writes it"),
    # TFLM cmsis_nn/pad.cc PadEvalInt8 -> arm_pad_s8 (Source/PadFunctions/arm_pad_s8.c, lines
    # 51-95 of the function): the output is written in address order by arm_memset_s8 (pad) and
    # arm_memcpy_s8 (a run of w*c input bytes when only n/h/w are padded, else c bytes per
    # pixel); the input is read only by those memcpys, in address order. A memcpy's source and
    # destination must not overlap, so each copied run must end at or below its source.
    OverlapRule("PAD:INT8", ALL_ISAS, "block",
                "arm_pad_s8.c: arm_memset_s8 / arm_memcpy_s8 runs in output order",
                "each copied run must end below its own source (memcpy)", "pad-chunk"),
    OverlapRule("PADV2:INT8", ALL_ISAS, "block",
                "arm_pad_s8.c (PADV2 shares PadEval in TFLM cmsis_nn/pad.cc)",
                "each copied run must end below its own source (memcpy)", "pad-chunk"),
)
"""Rules of the ops whose CMSIS-NN code tinyarena serves with the reference kernel."""


__all__ = ["ALL_ISAS", "BLOCK_SCHEMES", "KINDS", "OVERLAP_RULES", "OverlapRule"]
