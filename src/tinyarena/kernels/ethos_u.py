"""ethos-u: TFLM's ``kernels/ethos_u/ethosu.cc``, the custom operator Vela puts in a model.

Vela (Arm's compiler for the Ethos-U NPU) replaces every operator the NPU runs with one custom
operator ``ethos-u`` whose inputs are, by position, Vela's own tensors (the layout the
kernel's Eval documents and hands to the driver as base addresses):

* input 0: the NPU command stream (constant; its byte count is read in Prepare),
* input 1: the weights and biases Vela packed (constant, "read_only"),
* input 2: the scratch: one non-constant tensor holding every intermediate feature map of
  the NPU part, planned in the arena by TFLM (Vela's OfflineMemoryAllocation pins it at
  offset 0 and the model's inputs and outputs inside it),
* input 3: the fast scratch (the same tensor as input 2 when Vela's memory mode shares one
  SRAM; a tensor of its own otherwise, whose base address the driver replaces with its fast
  memory when the platform gives it one),
* inputs 4..: the operator's real inputs; outputs: its real outputs.

Allocation (the only part tinyarena emulates): Init allocates the OpData (three ints);
Prepare requests two scratch buffers of ``(inputs + outputs)`` entries, one of ``uint64_t``
base addresses and one of ``size_t`` sizes, and takes the command stream as a temp input
tensor to read its byte count. Eval hands everything to the Ethos-U driver: the arithmetic
is the NPU's, so there is no eval here and ``run`` refuses the model.

The kernel is linked into device builds (``CO_PROCESSOR=ethos_u``), never into the host
wheel, so it sizes only on the Cortex-M targets.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from tinyarena.errors import KernelError, UnsupportedOpError
from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.model.types import Model, Operator

CUSTOM_CODE = "ethos-u"
BASE_ADDRESS_BYTES = 8  # uint64_t base_addrs[]

# Vela's tensors by their position among the ethos-u operator's inputs.
COMMAND_STREAM, WEIGHTS, SCRATCH, FAST_SCRATCH = 0, 1, 2, 3
ROLE_NAMES: Mapping[str, str] = MappingProxyType({
    "command_stream": "Ethos-U command stream",
    "weights": "Ethos-U weights (Vela's read-only data)",
    "scratch": "Ethos-U scratch (the NPU's working memory: every intermediate feature map)",
    "fast_scratch": "Ethos-U fast scratch",
    "scratch+fast_scratch": "Ethos-U scratch and fast scratch (one tensor: the NPU's working "
                            "memory, every intermediate feature map)",
    "base_addresses": "ethos-u kernel: the driver's base addresses (uint64_t per tensor)",
    "base_address_sizes": "ethos-u kernel: the base addresses' sizes (size_t per tensor)",
})

NPU_EVAL_REFUSAL = (
    "runs on an Arm Ethos-U NPU: TFLM's ethos-u kernel hands the command stream Vela compiled "
    "to the NPU driver, so the arithmetic is the NPU's and no host kernel reproduces it; the "
    "arena is sized exactly (`tinyarena size/plan --target cortex-m55`), run the model on the "
    "device or on Arm's Corstone FVP")


def device_build(core: str | None) -> bool:
    """Whether a target's TFLM build can link the ethos-u kernel: the Cortex-M device builds
    (CO_PROCESSOR=ethos_u); the host wheel and the generic ABI profiles do not have it."""
    return core is not None and core.startswith("cortex-m")


@dataclass(frozen=True)
class EthosUData:
    """What Prepare stores in the OpData: the command stream's bytes and the two scratch
    buffer handles (base addresses, base address sizes)."""

    cms_data_size: int
    base_addr: int
    base_addr_size: int


def init(ctx: InitContext, op: Operator) -> None:
    if not device_build(ctx.target.core):
        raise UnsupportedOpError(
            f"{op.name} is TFLM's Arm Ethos-U kernel, which only device builds link "
            f"(CO_PROCESSOR=ethos_u); target {ctx.target.name} (the host wheel or a generic "
            f"ABI profile) has no such kernel, so TFLM refuses this Vela model there; size it "
            f"for the device, e.g. --target cortex-m55", op_name=op.name, op_index=op.index)
    ctx.allocate_persistent(ctx.target.sizeof("OpDataEthosU"))


def prepare(ctx: PrepareContext, op: Operator) -> EthosUData:
    if len(op.inputs) == 0:
        raise KernelError(f"{op.name} has no inputs; Vela's operator starts with its command "
                          f"stream (TF_LITE_ENSURE(node->inputs->size > 0))")
    if not op.custom_options:
        raise KernelError(f"{op.name} has no custom options; Vela writes a flexbuffer there "
                          f"(TF_LITE_ENSURE(custom_initial_data_size > 0)): recompile the "
                          f"model with Vela")
    count = len(op.inputs) + len(op.outputs)
    base_addr = ctx.request_scratch(count * BASE_ADDRESS_BYTES)
    base_addr_size = ctx.request_scratch(count * ctx.target.sizeof("size_t"))
    ctx.allocate_temp_tensor(op.inputs[COMMAND_STREAM])
    stream = ctx.tensor(op.inputs[COMMAND_STREAM])
    if stream is None:
        raise KernelError(f"{op.name}: its command stream (input 0) is omitted")
    return EthosUData(stream.tflm_nbytes or 0, base_addr, base_addr_size)


REGISTRATION = Registration(CUSTOM_CODE, init=init, prepare=prepare, eval=None,
                            builtin_data=None, eval_refusal=NPU_EVAL_REFUSAL)


# -- Vela's tensors, for plans and reports ------------------------------------------------------

def vela_roles(model: Model) -> dict[tuple[int, int], str]:
    """(subgraph, tensor) -> Vela's role of each tensor the ethos-u operators take by position
    (``command_stream``, ``weights``, ``scratch``, ``fast_scratch``, or
    ``scratch+fast_scratch`` when one tensor is both); empty for a model without Vela."""
    named = (("command_stream", COMMAND_STREAM), ("weights", WEIGHTS), ("scratch", SCRATCH),
             ("fast_scratch", FAST_SCRATCH))
    found: dict[tuple[int, int], set[str]] = {}
    for sg in model.subgraphs:
        for op in sg.operators:
            if op.name != CUSTOM_CODE:
                continue
            for role, position in named:
                if position < len(op.inputs) and op.inputs[position] >= 0:
                    found.setdefault((sg.index, op.inputs[position]), set()).add(role)
    # every ethos-u operator of a model shares Vela's one scratch: each role named once
    return {key: "+".join(role for role, _ in named if role in roles)
            for key, roles in found.items()}


@dataclass(frozen=True)
class FastScratch:
    """Vela's fast scratch of one model: its tensor, bytes (Eval passes the product of its
    dims, one byte per element, and the driver refuses a fast memory smaller than that:
    ``base_addr_size[2] > fast_memory_size``) and whether it is the scratch
    itself (Vela's Shared_Sram/Sram_Only modes) or a tensor of its own (Dedicated_Sram)."""

    subgraph: int
    tensor: int
    nbytes: int
    shared_with_scratch: bool


def fast_scratch(model: Model) -> FastScratch | None:
    """The model's fast scratch tensor (the first ethos-u operator's input 3), or None."""
    for sg in model.subgraphs:
        for op in sg.operators:
            if op.name != CUSTOM_CODE or len(op.inputs) <= FAST_SCRATCH:
                continue
            index = op.inputs[FAST_SCRATCH]
            if index < 0:
                continue
            tensor = sg.tensors[index]
            shared = op.inputs[SCRATCH] == index
            return FastScratch(sg.index, index, tensor.element_count, shared)
    return None


def vela_scratch_bytes(model: Model) -> int | None:
    """Bytes of the model's Vela scratch tensor (the first ethos-u operator's input 2), or
    None for a model without the ethos-u operator."""
    for sg in model.subgraphs:
        for op in sg.operators:
            if op.name == CUSTOM_CODE and len(op.inputs) > SCRATCH and op.inputs[SCRATCH] >= 0:
                return sg.tensors[op.inputs[SCRATCH]].element_count
    return None


def has_ethos_u(model: Model) -> bool:
    """Whether any operator of the model is Vela's ethos-u operator."""
    return any(op.name == CUSTOM_CODE for sg in model.subgraphs for op in sg.operators)


__all__ = ["CUSTOM_CODE", "EthosUData", "FastScratch", "NPU_EVAL_REFUSAL", "REGISTRATION",
           "ROLE_NAMES", "device_build", "fast_scratch", "has_ethos_u", "vela_roles",
           "vela_scratch_bytes"]
