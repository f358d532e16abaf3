"""Where an Interpreter's memory comes from besides one arena: pre-allocated tensors, two
arenas, an arena shared by several interpreters, and the guard against overlapping arenas.

* Pre-allocated tensors (TFLM RFC 001, ``RegisterPreallocatedTensor``): the caller's buffer
  *is* the tensor: it is viewed, never copied, so a sensor writing into it writes the input,
  and the caller's array holds the output after ``invoke``.
* ``SplitMemory``: the two buffers of ``MicroAllocator::Create(persistent, non_persistent)``
  behind the one address space ``tinyarena.arena.multi.allocate_split`` plans in.
* ``SharedAllocator``: one MicroAllocator over one arena, handed to several Interpreters (as
  several ``MicroInterpreter``s take one ``MicroAllocator*``); each AllocateTensors continues
  where the previous one stopped, and the models must then be invoked one at a time.
* The owner stamp: TFLM keeps its allocator objects in the arena's tail, so a second
  allocator created over the same memory overwrites the first one's. tinyarena writes an
  8-byte token where those objects are, clears the whole arena when an Interpreter takes it
  (AllocateTensors), and checks the token before touching the arena: an Interpreter whose
  memory another one took over (any overlap that covers its token at the top of its arena:
  the same buffer, a view of it, a larger buffer around it) fails with a clear error instead
  of computing on corrupted data. An allocation strictly inside another's head, not reaching
  its top, cannot be seen without a process-wide registry, which tinyarena does not keep.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from tinyarena.arena.layout import ArenaLayout
from tinyarena.arena.multi import SharedLayout, allocate_shared
from tinyarena.errors import InterpreterError
from tinyarena.model.types import NUMPY_DTYPES, Model, Tensor

STAMP_BYTES = 8


def preallocated_view(tensor: Tensor, nbytes: int, buffer: Any) -> np.ndarray:
    """``buffer`` as ``tensor``'s typed array, sharing its memory (checked: writable, one
    contiguous block, exactly the tensor's bytes, aligned for its element type)."""
    what = f"pre-allocated buffer for tensor {tensor.index} ({tensor.name!r})"
    dtype = NUMPY_DTYPES.get(tensor.type)
    if dtype is None:
        raise InterpreterError(f"{what}: type {tensor.type.name} has no numpy equivalent")
    dtype = np.dtype(dtype)
    if isinstance(buffer, np.ndarray) and buffer.dtype != dtype and buffer.dtype != np.uint8:
        raise InterpreterError(
            f"{what} is {buffer.dtype.name} but the tensor is {dtype.name}; pass an array of "
            f"dtype {dtype.name} (or raw uint8 bytes)")
    try:
        view = memoryview(buffer)
    except TypeError:
        raise InterpreterError(f"{what} must be a writable buffer (numpy array, bytearray, ...), "
                               f"not {type(buffer).__name__}") from None
    if view.readonly:
        raise InterpreterError(f"{what} is read-only; pass a writable array or bytearray")
    if not view.c_contiguous:
        raise InterpreterError(f"{what} must be one C-contiguous block (use "
                               f"np.ascontiguousarray, then pass that array)")
    if view.nbytes != nbytes:
        raise InterpreterError(f"{what} has {view.nbytes} bytes; the tensor needs exactly "
                               f"{nbytes} ({dtype.name} {tuple(tensor.shape)})")
    raw = np.frombuffer(view.cast("B") if view.ndim != 1 or view.format != "B" else view,
                        dtype=np.uint8)
    address = int(raw.__array_interface__["data"][0])
    if address % dtype.itemsize:
        raise InterpreterError(f"{what} starts at an address not aligned to {dtype.itemsize} "
                               f"bytes ({dtype.name}); allocate it with numpy")
    return raw.view(dtype).reshape(tensor.shape)


@dataclass(frozen=True)
class SplitMemory:
    """The non-persistent buffer at addresses [0, base) and the persistent one from ``base``,
    as ``allocate_split`` numbers them; slicing returns a view of the right buffer."""

    non_persistent: np.ndarray
    persistent: np.ndarray
    base: int

    @property
    def shape(self) -> tuple[int]:
        return (self.base + self.persistent.shape[0],)

    def __getitem__(self, key: slice) -> np.ndarray:
        start = int(key.start or 0)
        stop = int(key.stop if key.stop is not None else self.shape[0])
        if start >= self.base:
            return self.persistent[start - self.base:stop - self.base]
        if stop > self.non_persistent.shape[0]:
            raise InterpreterError(f"bytes {start}..{stop} straddle the two arenas")
        return self.non_persistent[start:stop]


def persistent_buffer(array: np.ndarray) -> np.ndarray:
    """CreatePersistentArenaAllocator uses the buffer up to its 16-aligned end; tinyarena
    also starts it at a 16-aligned address (it loses < 16 bytes at the bottom)."""
    start = int(array.__array_interface__["data"][0])
    end = (start + array.shape[0]) // 16 * 16
    first = -start % 16
    return array[first:max(first, end - start)]


def new_token() -> int:
    return int.from_bytes(os.urandom(STAMP_BYTES), "little") | 1


def stamp_slot(memory: Any, layout: ArenaLayout) -> np.ndarray | None:
    """The bytes of the first allocator object Create put in the tail (None: no tail)."""
    if not layout.tail_allocations:
        return None
    first = layout.tail_allocations[0]
    if first.requested < STAMP_BYTES:
        return None
    slot: np.ndarray = memory[first.address:first.address + STAMP_BYTES]
    return slot


def write_stamp(slot: np.ndarray | None, token: int) -> None:
    if slot is not None:
        slot[...] = np.frombuffer(token.to_bytes(STAMP_BYTES, "little"), dtype=np.uint8)


class StampCheck:
    """Is the owner stamp still in its slot? Every invoke asks: the slot's 8 bytes are read as
    one native 64-bit word through a memoryview (~40 ns, where ``tobytes`` + ``int.from_bytes``
    cost ~400 ns) and compared with the word the token wrote."""

    __slots__ = ("_word", "_expected")

    def __init__(self, slot: np.ndarray | None, token: int) -> None:
        if slot is None:  # no tail to stamp: a private word that nothing else can overwrite
            slot = np.zeros(STAMP_BYTES, dtype=np.uint8)
            write_stamp(slot, token)
        self._word = slot.data.cast("B").cast("Q")  # the slot itself, never a copy
        # write_stamp stores the token little-endian; "Q" reads the host's byte order
        self._expected = int.from_bytes(token.to_bytes(STAMP_BYTES, "little"), sys.byteorder)

    def intact(self) -> bool:
        return self._word[0] == self._expected


class SharedAllocator:
    """One MicroAllocator over one caller-supplied arena, for several Interpreters.

    ``Interpreter(model, allocator=shared)``: each ``allocate_tensors`` allocates that model
    after the models already allocated (TFLM's order: tails stack up, the head is the largest
    plan). Invoke them one at a time and write inputs / read outputs right around each invoke:
    the models' heads overlap by design.
    """

    def __init__(self, arena: Any) -> None:
        from tinyarena.interpreter.interpreter import _aligned, _arena_array

        self.arena = _aligned(_arena_array(arena))
        self._owner = arena
        self.token = new_token()
        self.target: str | None = None
        self._entries: list[tuple[int, Model, Any]] = []  # (interpreter id, model, resolver)
        self._layouts: dict[int, ArenaLayout] = {}
        self.shared: SharedLayout | None = None
        self._turn: int | None = None  # the Interpreter whose data the shared head holds

    def take_turn(self, key: int, what: str, needs_inputs: bool) -> None:
        """The heads of all models overlap, so only the Interpreter that last wrote its inputs
        or ran owns the head's contents: writing an input claims it; ``invoke`` needs it still
        claimed (else its inputs were overwritten); reading an output needs it unchanged."""
        if what == "input":
            self._turn = key
            return
        if self._turn != key and (what == "output" or needs_inputs):
            raise InterpreterError(
                f"another Interpreter on this SharedAllocator used the shared arena since this "
                f"one's {'inputs were written' if what == 'invoke' else 'invoke'}, overwriting "
                f"its {'inputs' if what == 'invoke' else 'outputs'}: models sharing an arena "
                f"run one at a time, so write inputs right before invoke() and read outputs "
                f"right after it")
        self._turn = key

    @property
    def models(self) -> tuple[Model, ...]:
        return tuple(m for _, m, _ in self._entries)

    def allocate(self, key: int, model: Model, target: str, resolver: Any) -> ArenaLayout:
        """The layout of ``model`` allocated after every model already in this arena."""
        if key in self._layouts:
            return self._layouts[key]
        if self.target is not None and target != self.target:
            raise InterpreterError(
                f"this SharedAllocator holds models for target {self.target!r}; an Interpreter "
                f"for {target!r} cannot share it")
        entries = self._entries + [(key, model, resolver)]
        if not self._entries:
            self.arena.fill(0)  # the arena is this allocator's: wipe any other owner's stamp
        shared = allocate_shared([m for _, m, _ in entries], target=target,
                                 arena_size=int(self.arena.shape[0]),
                                 resolvers=[r for _, _, r in entries],
                                 allow_tinyarena_kernels=True)
        self._entries = entries
        self.target = target
        self.shared = shared
        layout = shared.models[-1].layout
        self._layouts[key] = layout
        return layout


__all__ = ["SharedAllocator", "SplitMemory", "StampCheck", "preallocated_view"]
