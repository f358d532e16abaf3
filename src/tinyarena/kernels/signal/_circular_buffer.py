"""signal/src/circular_buffer.cc: the int16 ring that Framer, Stacker and Delay keep between
invokes, emulated on workspace arrays.

The ring stores every value twice (at ``i`` and ``i + capacity``), so a read of up to
``capacity`` values never wraps; read and write are indices, plus an empty flag. Here one
ring is a row of an int16 array of ``2 * capacity`` and a row ``[read, write, nonempty,
started]`` of an int64 array: all zeros is an empty ring the kernel has not set up yet (its
first eval, or after a reset, applies the kernel's initial writes, as TFLM's Prepare and Reset
do).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels.base import Target

READ, WRITE, NONEMPTY, STARTED = range(4)
STATE_FIELDS = 4


def needed_memory(target: Target, capacity: int) -> int:
    """CircularBufferGetNeededMemory: the struct and two copies of ``capacity`` int16."""
    return target.sizeof("tflm_signal::CircularBuffer") + 4 * capacity


@dataclass
class Ring:
    """One CircularBuffer: views of its storage row and its state row."""

    buffer: np.ndarray  # int16, 2 * capacity
    state: np.ndarray  # int64, STATE_FIELDS
    capacity: int

    def reset(self) -> None:
        """CircularBufferReset."""
        self.buffer[...] = 0
        self.state[...] = 0
        self.state[STARTED] = 1

    def available(self) -> int:
        diff = int(self.state[WRITE]) - int(self.state[READ])
        if diff > 0:
            return diff
        if diff < 0:
            return self.capacity + diff
        return self.capacity if self.state[NONEMPTY] else 0

    def write(self, values: np.ndarray) -> None:
        """CircularBufferWrite (values copied first, as memcpy reads its source)."""
        self._store(np.array(values, np.int16, copy=True).reshape(-1))

    def write_zeros(self, n: int) -> None:
        self._store(np.zeros(n, np.int16))

    def _store(self, values: np.ndarray) -> None:
        n = values.size
        if n == 0:
            return
        cap = self.capacity
        if n > cap - self.available():
            raise KernelError(f"circular buffer of {cap} values overflows (TFLM asserts): the "
                              f"op's sizes and steps do not fit together")
        write = int(self.state[WRITE])
        end = write + n
        self.buffer[write:end] = values
        if end < cap:
            self.buffer[cap + write:cap + end] = values
            write = end
        else:
            n1 = cap - write
            self.buffer[cap + write:2 * cap] = values[:n1]
            n2 = end - cap
            if n2 > 0:
                self.buffer[:n2] = values[n1:]
            write = n2
        self.state[WRITE] = write
        self.state[NONEMPTY] = 1

    def get(self, n: int) -> np.ndarray:
        """CircularBufferGet: the next ``n`` values, without consuming them."""
        read = int(self.state[READ])
        if read + n <= self.capacity:
            return self.buffer[read:read + n]
        n1 = self.capacity - read
        return np.concatenate([self.buffer[read:self.capacity], self.buffer[:n - n1]])

    def discard(self, n: int) -> None:
        read = int(self.state[READ]) + n
        if read >= self.capacity:
            read -= self.capacity
        self.state[READ] = read
        if read == self.state[WRITE]:
            self.state[NONEMPTY] = 0

    def extend(self, count: int, n: int) -> None:
        """CircularBufferExtend: append the last ``count`` values ``n`` more times."""
        if n <= 0 or count <= 0:
            return
        cap = self.capacity
        write = int(self.state[WRITE])
        start = write + cap - count if count > write else write - count
        for _ in range(n):
            if start + count <= cap:
                self.write(self.buffer[start:start + count])
            else:
                n1 = cap - start
                self.write(self.buffer[start:start + n1])
                self.write(self.buffer[:count - n1])
