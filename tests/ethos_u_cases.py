"""Models with the tensor layout Vela emits, built with tinyarena.builder (no Vela needed).

Vela's output (``ethos-u-vela`` 5.2, read from the models it writes): constants command
stream (uint8) and weights (uint8), a uint8 ``scratch`` tensor without data, in the Dedicated
SRAM memory modes a ``scratch_fast`` tensor too, then the real inputs; one ``ethos-u`` custom
operator whose custom options are the flexbuffer of the int 1 (``CO_TYPE_ETHOSU``) and whose
inputs are (command stream, weights, scratch, fast scratch or scratch again, inputs...); and an
OfflineMemoryAllocation plan (version 0) pinning scratch and fast scratch at 0 and the real
inputs and outputs at offsets inside the scratch, -1 for the constants.

The same cases were run on TFLM built for Cortex-M55 with the ethos_u kernel
(``tests/data/ethos_u_device.json``), so a case must not change once measured.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.builder import ModelBuilder
from tinyarena.model.metadata import encode_offline_plan

VELA_OPTIONS = b"\x01\x04\x01"  # flexbuffer root: int 1 (CO_TYPE_ETHOSU), as Vela writes it


@dataclass(frozen=True)
class VelaCase:
    """One synthetic Vela model: byte counts, the real inputs and outputs (shape, offset in the
    scratch), whether the fast scratch is a tensor of its own (and its shape), and whether the
    OfflineMemoryAllocation plan is written."""

    name: str
    command_stream: int
    weights: int
    scratch: int
    inputs: tuple[tuple[tuple[int, ...], int], ...]
    outputs: tuple[tuple[tuple[int, ...], int], ...]
    fast_scratch: tuple[int, ...] | None = None  # None: the scratch is also the fast scratch
    offline_plan: bool = True


CASES = (
    VelaCase("shared_1in_1out", 200, 64, 1000, (((1, 10, 10, 1), 0),), (((1, 5), 512),)),
    VelaCase("dedicated_2in_2out", 320, 100, 2048, (((1, 64), 0), ((1, 32), 64)),
             (((1, 16), 1024), ((1, 8), 1040)), fast_scratch=(4096,)),
    VelaCase("dedicated_fast_scratch_0", 320, 100, 2048, (((1, 64), 0), ((1, 32), 64)),
             (((1, 16), 1024), ((1, 8), 1040)), fast_scratch=(0,)),
    VelaCase("shared_no_offline_plan", 200, 64, 1000, (((1, 10, 10, 1), 0),),
             (((1, 5), 512),), offline_plan=False),
    VelaCase("shared_3in_1out", 96, 48, 3000, (((1, 100), 0), ((1, 200), 112), ((1, 7), 320)),
             (((1, 3), 2000),)),
)


def build_vela_model(case: VelaCase) -> bytes:
    """The case as a .tflite file with Vela's tensor order, operator and offline plan."""
    b = ModelBuilder()
    cms = b.add_constant("ethos_u_command_stream",
                         np.arange(case.command_stream, dtype=np.uint32).astype(np.uint8))
    weights = b.add_constant("read_only", np.full(case.weights, 7, np.uint8))
    scratch = b.add_tensor("scratch", (case.scratch,), "uint8")
    fast = (scratch if case.fast_scratch is None
            else b.add_tensor("scratch_fast", case.fast_scratch, "uint8"))
    ins = [b.add_input(f"input_{k}", shape, "int8", scale=0.5, zero_point=-1)
           for k, (shape, _) in enumerate(case.inputs)]
    outs = [b.add_tensor(f"output_{k}", shape, "int8", scale=0.25, zero_point=3)
            for k, (shape, _) in enumerate(case.outputs)]
    b.add_operator("ethos-u", [cms, weights, scratch, fast, *ins], outs,
                   custom_options=VELA_OPTIONS)
    b.mark_output(*outs)
    if case.offline_plan:
        offsets = {scratch: 0, fast: 0}
        offsets.update({t: off for t, (_, off) in zip(ins, case.inputs)})
        offsets.update({t: off for t, (_, off) in zip(outs, case.outputs)})
        count = 4 + len(ins) + len(outs) - (1 if case.fast_scratch is None else 0)
        b.add_metadata("OfflineMemoryAllocation",
                       encode_offline_plan([offsets.get(i, -1) for i in range(count)], 1,
                                           version=0))
    return b.build()


__all__ = ["CASES", "VELA_OPTIONS", "VelaCase", "build_vela_model"]
