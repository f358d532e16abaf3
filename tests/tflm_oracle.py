"""The oracle: the pinned ``tflite-micro`` wheel, run live.

Its recording allocator prints to C-level stderr, so file descriptor 2 is redirected around
each call. Anything that can crash the process (a tiny arena) runs in a child process.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

SHARED_MODELS = Path(__file__).resolve().parents[2] / "shared" / "models"
DEFAULT_ARENA = 64 * 1024 * 1024


def shared_model_names() -> list[str]:
    """Stems of the .tflite files in ../shared/models (empty when the folder is absent)."""
    if not SHARED_MODELS.is_dir():
        return []
    return sorted(p.stem for p in SHARED_MODELS.glob("*.tflite"))


def shared_model_bytes(name: str) -> bytes:
    return (SHARED_MODELS / f"{name}.tflite").read_bytes()


def _runtime():
    from tflite_micro.python.tflite_micro import runtime

    return runtime


@contextmanager
def captured_stderr() -> Iterator[list[str]]:
    """Capture everything written to fd 2 (C and Python) into the yielded one-item list."""
    out: list[str] = []
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield out
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            out.append(tmp.read().decode("utf-8", "replace"))


@dataclass
class Allocations:
    """What RecordingMicroAllocator::PrintAllocations reported."""

    total: int
    head: int
    tail: int
    categories: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # used, requested, count
    text: str = ""


_LINE_TOTAL = re.compile(r"Arena allocation (total|head|tail) (\d+) bytes")
_LINE_CAT = re.compile(
    r"'([^']+)' used (\d+) bytes with alignment overhead \(requested (\d+) bytes for (\d+) "
)


def parse_allocations(text: str) -> Allocations:
    sizes = {m.group(1): int(m.group(2)) for m in _LINE_TOTAL.finditer(text)}
    if not {"total", "head", "tail"} <= sizes.keys():
        raise AssertionError(f"no allocation report in TFLM's output:\n{text}")
    cats = {
        m.group(1): (int(m.group(2)), int(m.group(3)), int(m.group(4)))
        for m in _LINE_CAT.finditer(text)
    }
    return Allocations(sizes["total"], sizes["head"], sizes["tail"], cats, text)


def make_interpreter(model: bytes, arena_size: int = DEFAULT_ARENA, preserve_all: bool = False):
    rt = _runtime()
    config = (rt.InterpreterConfig.kPreserveAllTensors if preserve_all
              else rt.InterpreterConfig.kAllocationRecording)
    return rt.Interpreter.from_bytes(bytes(model), arena_size=arena_size,
                                     intrepreter_config=config)


def tflm_allocations(model: bytes, arena_size: int = DEFAULT_ARENA,
                     inputs: Sequence[np.ndarray] | None = None) -> Allocations:
    """Load, invoke once (zeros unless inputs given) and read the recording allocator's report."""
    with captured_stderr() as err:
        ip = make_interpreter(model, arena_size)
        _feed(ip, inputs)
        ip.invoke()
        ip.print_allocations()
    return parse_allocations(err[0])


def _feed(ip, inputs: Sequence[np.ndarray] | None) -> None:
    i = 0
    while True:
        try:
            details = ip.get_input_details(i)
        except Exception:
            break
        if inputs is not None and i < len(inputs):
            data = np.asarray(inputs[i])
        else:
            data = np.zeros(details["shape"], dtype=details["dtype"])
        ip.set_input(data, i)
        i += 1
    if inputs is not None and len(inputs) > i:  # a test bug must not be dropped silently
        raise ValueError(f"{len(inputs)} inputs given to a model with {i}")


def _outputs(ip) -> list[np.ndarray]:
    """Copies of every output of the wheel's interpreter after an invoke."""
    outputs = []
    i = 0
    while True:
        try:
            ip.get_output_details(i)
        except Exception:
            break
        outputs.append(np.array(ip.get_output(i), copy=True))
        i += 1
    return outputs


def tflm_run(model: bytes, inputs: Sequence[np.ndarray],
             arena_size: int = DEFAULT_ARENA) -> list[np.ndarray]:
    """Outputs of one invoke of the wheel."""
    return tflm_invokes(model, [inputs], arena_size)[0]


def tflm_invokes(model: bytes, steps: Sequence[Sequence[np.ndarray]],
                 arena_size: int = DEFAULT_ARENA) -> list[list[np.ndarray]]:
    """The outputs of consecutive invokes of one wheel interpreter (variables and resource
    state carry over), one list per step; inputs a step leaves out are zeros."""
    results = []
    with captured_stderr():
        ip = make_interpreter(model, arena_size)
        for inputs in steps:
            _feed(ip, inputs)
            ip.invoke()
            results.append(_outputs(ip))
    return results


_PROBE = r"""
import sys, numpy as np
from tflite_micro.python.tflite_micro import runtime
model = open(sys.argv[1], 'rb').read()
try:
    ip = runtime.Interpreter.from_bytes(model, arena_size=int(sys.argv[2]))
    i = 0
    while True:
        try:
            d = ip.get_input_details(i)
        except Exception:
            break
        ip.set_input(np.zeros(d['shape'], dtype=d['dtype']), i)
        i += 1
    ip.invoke()
except Exception as exc:
    print('FAIL', exc)
    sys.exit(3)
print('OK')
"""


def tflm_fits(model: bytes, arena_size: int) -> tuple[bool, str]:
    """Does the wheel allocate and invoke in ``arena_size`` bytes? Runs in a child process,
    because an arena too small for the allocator objects crashes TFLM. Returns (ok, stderr)."""
    with tempfile.NamedTemporaryFile(suffix=".tflite", delete=False) as f:
        f.write(model)
        path = f.name
    try:
        proc = subprocess.run([sys.executable, "-c", _PROBE, path, str(arena_size)],
                              capture_output=True, text=True, timeout=120)
    finally:
        os.unlink(path)
    return proc.returncode == 0 and "OK" in proc.stdout, proc.stderr + proc.stdout


def model_random_inputs(model: bytes | Any, seed: int) -> list[np.ndarray]:
    """Random inputs for subgraph 0 of ``model`` (bytes or a read Model), drawn as
    ``tinyarena run`` draws them when given no input file."""
    from tinyarena.interpreter.inputs import random_inputs
    from tinyarena.model import read_model
    from tinyarena.model.types import NUMPY_DTYPES

    m = read_model(model) if isinstance(model, (bytes, bytearray, memoryview)) else model
    sg = m.subgraphs[0]
    return random_inputs([{"shape": sg.tensors[i].shape, "dtype": NUMPY_DTYPES[sg.tensors[i].type]}
                          for i in sg.inputs], seed)
