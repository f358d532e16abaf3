"""Memory TFLM asks for outside the tensor arena: the alternate decompression memory of a
compressed model, and the fast memory an Arm Ethos-U driver gives Vela's fast scratch.

* Alternate decompression memory (``MicroInterpreter::SetDecompressionMemory``, the wheel's
  ``alt_decompression_memory_size``): every TFLM_DECODE Prepare restarts at its first byte and
  packs its outputs there, each 16-aligned, while they fit; an output that does not fit is
  planned in the arena. The memory a model needs is the largest such packing over its DECODE
  operators: with it every decoded tensor is outside the arena, 16 bytes less and the last
  output of the largest packing falls back into the arena.
* Ethos-U fast memory: the driver (``ethosu_init(..., fast_memory, fast_memory_size, ...)``)
  replaces the base address of Vela's fast scratch (the ethos-u operator's input 3) with its
  own fast memory, refusing one smaller than that tensor. TFLM still plans the tensor in the
  arena as Vela wrote it; it takes no arena bytes only when its shape is [0] (as early Vela
  wrote it), which is the arena ``arena_without_fast_scratch`` gives.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from tinyarena.arena.allocator import Resolver, allocate_model
from tinyarena.arena.layout import ArenaLayout
from tinyarena.arena.targets import TargetProfile
from tinyarena.kernels import ethos_u
from tinyarena.model.types import Model

_UNLIMITED = 1 << 40  # an alternate memory every DECODE output fits in
DECODE = "TFLM_DECODE"


@dataclass(frozen=True)
class ArenaSizes:
    """head, tail, total (arena_used_bytes) and min_arena of one layout."""

    head: int
    tail: int
    total: int
    min_arena: int

    @staticmethod
    def of(layout: ArenaLayout) -> ArenaSizes:
        return ArenaSizes(int(layout.head), int(layout.tail), int(layout.total),
                          int(layout.min_arena))

    def to_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class AltDecompression:
    """The alternate decompression memory a compressed model needs (``nbytes``; 0 when no
    DECODE output can go there) and the arena when the interpreter has exactly that much."""

    nbytes: int
    with_memory: ArenaSizes | None

    def to_dict(self) -> dict[str, Any]:
        return {"bytes": self.nbytes,
                "arena_with_it": None if self.with_memory is None
                else self.with_memory.to_dict()}


def has_decode(model: Model) -> bool:
    return any(op.name == DECODE for sg in model.subgraphs for op in sg.operators)


def alt_decompression(model: Model, *, target: str | TargetProfile,
                      kernel_set: str | None = None,
                      resolver: Resolver | None = None) -> AltDecompression | None:
    """The alternate decompression memory ``model`` needs on ``target`` (None: the model has
    no TFLM_DECODE operator). Two emulations: one with unlimited alternate memory (how far
    the DECODE outputs reach), one with exactly that much (the arena then)."""
    if not has_decode(model):
        return None
    common: dict[str, Any] = {"target": target, "kernel_set": kernel_set, "resolver": resolver}
    needed = allocate_model(model, alt_decompression_memory=_UNLIMITED,
                            **common).alt_decompression_used
    if needed == 0:
        return AltDecompression(0, None)
    layout = allocate_model(model, alt_decompression_memory=needed, **common)
    return AltDecompression(int(needed), ArenaSizes.of(layout))


@dataclass(frozen=True)
class EthosUMemory:
    """Vela's scratch and fast scratch bytes, the fast memory a driver given one needs
    (``fast_memory``: at least the fast scratch's bytes, which the driver checks), and the
    arena when the fast scratch takes no arena bytes (None when the fast scratch is the
    scratch itself: Vela's Shared_Sram and Sram_Only memory modes)."""

    scratch: int
    fast_scratch: int
    shared: bool
    fast_memory: int
    without_fast_scratch: ArenaSizes | None
    note: str

    def to_dict(self) -> dict[str, Any]:
        return {"scratch": self.scratch, "fast_scratch": self.fast_scratch,
                "fast_scratch_is_scratch": self.shared, "fast_memory": self.fast_memory,
                "arena_without_fast_scratch": None if self.without_fast_scratch is None
                else self.without_fast_scratch.to_dict(),
                "note": self.note}


def without_fast_scratch(model: Model) -> Model:
    """``model`` with Vela's separate fast-scratch tensor shaped [0]: TFLM then plans it with
    no bytes (the driver's fast memory holds it). Unchanged when there is none."""
    fast = ethos_u.fast_scratch(model)
    if fast is None or fast.shared_with_scratch:
        return model
    sg = model.subgraphs[fast.subgraph]
    tensors = list(sg.tensors)
    tensors[fast.tensor] = dataclasses.replace(tensors[fast.tensor], shape=(0,),
                                               shape_signature=(0,))
    subgraphs = list(model.subgraphs)
    subgraphs[fast.subgraph] = dataclasses.replace(sg, tensors=tuple(tensors))
    return dataclasses.replace(model, subgraphs=tuple(subgraphs))


def ethos_u_memory(model: Model, *, target: str | TargetProfile,
                   kernel_set: str | None = None,
                   resolver: Resolver | None = None) -> EthosUMemory | None:
    """What a Vela model asks of the platform beside the arena (None: no ethos-u operator)."""
    scratch = ethos_u.vela_scratch_bytes(model)
    fast = ethos_u.fast_scratch(model)
    if scratch is None:
        return None
    if fast is None:
        return EthosUMemory(scratch, 0, False, 0, None,
                            "the ethos-u operator has no fast-scratch input: nothing to place "
                            "in a fast memory")
    if fast.shared_with_scratch:
        return EthosUMemory(
            scratch, fast.nbytes, True, fast.nbytes, None,
            f"Vela's fast scratch is its scratch (memory mode Shared_Sram or Sram_Only): it "
            f"stays in the arena. A driver given a fast memory anyway (ETHOSU_FAST_MEMORY_SIZE "
            f"> 0) redirects that base address there and refuses one under {fast.nbytes:,} "
            f"bytes; compile with --memory-mode Dedicated_Sram to move it out")
    layout = allocate_model(without_fast_scratch(model), target=target, kernel_set=kernel_set,
                            resolver=resolver)
    return EthosUMemory(
        scratch, fast.nbytes, False, fast.nbytes, ArenaSizes.of(layout),
        f"the driver's fast memory (ETHOSU_FAST_MEMORY_SIZE) must hold the {fast.nbytes:,}-byte "
        f"fast scratch. TFLM still plans Vela's fast-scratch tensor in the arena as the model "
        f"declares it: the arena without it holds for the model with that tensor shaped [0] "
        f"(as early Vela wrote it; the driver then cannot check the fast memory's size)")


__all__ = ["AltDecompression", "ArenaSizes", "EthosUMemory", "alt_decompression",
           "ethos_u_memory", "has_decode", "without_fast_scratch"]
