"""The whole footprint of a TFLM firmware: flash (model + code) and RAM (arena + static objects).

The arena is one line of a firmware's budget. The rest is measured, never estimated:
``code_sizes.json`` holds, per TFLM build (core, float ABI, kernel set, C library, build type),
the sizes of firmwares linked from TFLM's own sources with arm-none-eabi-gcc and
``--gc-sections`` (how, with which flags and commits: its ``provenance``). A build's figures are

- ``framework``: TFLM's part of a firmware whose resolver registers no op (interpreter,
  allocator, planner, flatbuffer parsing, ``DebugLog``, the C library and libgcc routines they
  pull in), over a baseline firmware with the same start-up code and no TFLM;
- ``groups``: the code and data the ops add on top, split by which ops need them. An op's
  kernel is a group of its own; code two kernels share (CMSIS-NN support functions, kernel
  helpers, libgcc/libm routines) is one group naming both, counted once whichever of them a
  resolver registers. Groups come from the linker map of one firmware per op (each input
  section attributed to the set of ops whose firmware keeps it), so sums never double-count;
  op-set firmwares and firmwares built from ``tinyarena export``'s output check the sums
  (``validation``).

Static RAM adds the ``MicroInterpreter`` and ``MicroMutableOpResolver<N>`` objects the README's
pattern declares, with their ``sizeof`` measured in the same build.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any, Iterable, Mapping

from tinyarena.errors import TinyArenaError
from tinyarena.model.types import Model

LIBCS = ("full", "nano")
BUILD_TYPES = ("default", "release")
LIBC_WORDS = {"full": "full newlib", "nano": "newlib-nano (--specs=nano.specs)"}
BUILD_WORDS = {"default": "TFLM default build (DebugLog's vsnprintf and assertions kept)",
               "release": "TFLM release build (-DNDEBUG -DTF_LITE_STRIP_ERROR_STRINGS)"}
DATA_FILE = "code_sizes.json"


@dataclass(frozen=True)
class CodeGroup:
    """Bytes linked when any op in ``ops`` is registered: flash (.text, .rodata, .data image)
    and RAM (.data, .bss)."""

    ops: frozenset[str]
    flash: int
    ram: int


@dataclass(frozen=True)
class CodeSizes:
    """One measured TFLM build: what its framework and each set of ops add to a firmware."""

    core: str
    float_abi: str
    kernels: str
    libc: str
    build: str
    target_arch: tuple[str, ...]  # TFLM TARGET_ARCH names built this way
    compiler_flags: str
    framework_flash: int
    framework_ram: int
    groups: tuple[CodeGroup, ...]
    interpreter_bytes: int  # sizeof(tflite::MicroInterpreter)
    resolver_base: int  # sizeof(MicroMutableOpResolver<N>) = resolver_base + N * resolver_per_op
    resolver_per_op: int

    @property
    def ops(self) -> frozenset[str]:
        """Every op whose code was measured in this build."""
        return frozenset().union(*(g.ops for g in self.groups))

    @property
    def words(self) -> str:
        """The build as one phrase for headers."""
        return (f"{self.core} float ABI {self.float_abi}, {self.kernels} kernels, "
                f"{LIBC_WORDS[self.libc]}, {BUILD_WORDS[self.build]}")

    def code(self, ops: Iterable[str]) -> tuple[int, int]:
        """(flash, RAM) TFLM adds to a firmware registering ``ops``: framework plus every group
        one of them needs, each group once. Ops outside ``self.ops`` raise KeyError."""
        wanted = frozenset(ops)
        missing = wanted - self.ops
        if missing:
            raise KeyError(sorted(missing))
        used = [g for g in self.groups if g.ops & wanted]
        return (self.framework_flash + sum(g.flash for g in used),
                self.framework_ram + sum(g.ram for g in used))

    def resolver_bytes(self, op_count: int) -> int:
        """sizeof(MicroMutableOpResolver<op_count>) (TFLM needs N >= 1)."""
        return self.resolver_base + max(op_count, 1) * self.resolver_per_op


@dataclass(frozen=True)
class Footprint:
    """A model's flash and RAM on one measured build."""

    sizes: CodeSizes
    ops: tuple[str, ...]
    model_bytes: int  # the .tflite as export's g_model holds it
    code_bytes: int  # TFLM framework + the kernels the resolver links, C library included
    arena_bytes: int  # min_arena
    interpreter_bytes: int
    resolver_bytes: int
    tflm_static_bytes: int  # framework's and kernels' .data/.bss, C library's included

    @property
    def flash_total(self) -> int:
        return self.model_bytes + self.code_bytes

    @property
    def static_bytes(self) -> int:
        return self.interpreter_bytes + self.resolver_bytes + self.tflm_static_bytes

    @property
    def ram_total(self) -> int:
        return self.arena_bytes + self.static_bytes

    def to_dict(self) -> dict[str, Any]:
        """``size --json``'s ``footprint``: the contract keys plus what they assume."""
        return {
            "flash": {"model": self.model_bytes, "code": self.code_bytes,
                      "total": self.flash_total},
            "ram": {"arena": self.arena_bytes, "static": self.static_bytes,
                    "total": self.ram_total,
                    "static_parts": {"micro_interpreter": self.interpreter_bytes,
                                     "op_resolver": self.resolver_bytes,
                                     "data_bss": self.tflm_static_bytes}},
            "assumes": assumptions(self.sizes),
        }

    def render(self) -> list[str]:
        """The text block ``size`` prints under the arena."""
        s = self.sizes
        w = len(f"{max(self.flash_total, self.ram_total):,}")

        def row(label: str, value: int, what: str) -> str:
            return f"  {label:<8}{value:>{w},} bytes  {what}"

        return [
            f"footprint ({s.words}; arm-none-eabi-gcc 12.2, TFLM Makefile flags, "
            f"--gc-sections)",
            f"flash     {self.flash_total:>{w},} bytes",
            row("model", self.model_bytes, "the .tflite array export writes (g_model)"),
            row("code", self.code_bytes,
                f"TFLM framework + kernels of {', '.join(self.ops) or 'no op'}, with the C "
                f"library and libgcc code they pull in"),
            f"RAM       {self.ram_total:>{w},} bytes",
            row("arena", self.arena_bytes, "minimum arena (kTensorArenaSize)"),
            row("static", self.static_bytes,
                f"MicroInterpreter {self.interpreter_bytes:,} + "
                f"MicroMutableOpResolver<{len(self.ops)}> {self.resolver_bytes:,} + "
                f"TFLM and C library .data/.bss {self.tflm_static_bytes:,}"),
            "  (no stack or heap: size those for your application)",
        ]


def assumptions(sizes: CodeSizes) -> dict[str, Any]:
    """What a footprint's code and static numbers are for, as JSON."""
    prov = _data()["provenance"]
    return {"core": sizes.core, "float_abi": sizes.float_abi, "kernels": sizes.kernels,
            "libc": sizes.libc, "build": sizes.build, "toolchain": prov["toolchain"],
            "tflm": prov["tflm_commit"], "cmsis_nn": prov["cmsis_nn_commit"],
            "compiler_flags": sizes.compiler_flags}


def _data() -> Mapping[str, Any]:
    text = resources.files("tinyarena.footprint").joinpath(DATA_FILE).read_text()
    data: Mapping[str, Any] = json.loads(text)
    return data


def load_code_sizes() -> tuple[CodeSizes, ...]:
    """Every measured build in ``code_sizes.json``."""
    return tuple(_code_sizes(b) for b in _data()["builds"])


def _code_sizes(b: Mapping[str, Any]) -> CodeSizes:
    model = b["model"]
    return CodeSizes(
        core=b["core"], float_abi=b["float_abi"], kernels=b["kernels"], libc=b["libc"],
        build=b["build"], target_arch=tuple(b["target_arch"]),
        compiler_flags=b["compiler_flags"],
        framework_flash=model["framework"]["flash"], framework_ram=model["framework"]["ram"],
        groups=tuple(CodeGroup(frozenset(g["ops"]), g["flash"], g["ram"])
                     for g in model["groups"]),
        interpreter_bytes=b["sizeof"]["MicroInterpreter"],
        resolver_base=b["sizeof"]["MicroMutableOpResolver"]["base"],
        resolver_per_op=b["sizeof"]["MicroMutableOpResolver"]["per_op"])


def find_code_sizes(target: str, kernels: str, libc: str, build: str
                    ) -> CodeSizes | str:
    """The measured build for TFLM ``TARGET_ARCH`` ``target`` with ``kernels``, ``libc`` and
    ``build``, or why there is none (a sentence naming what was measured)."""
    if libc not in LIBCS:
        return f"unknown C library {libc!r}: choose {' or '.join(LIBCS)}"
    every = load_code_sizes()
    same = [s for s in every if target in s.target_arch and s.kernels == kernels]
    for s in same:
        if s.libc == libc and s.build == build:
            return s
    measured = sorted({f"{a} ({s.kernels})" for s in every for a in s.target_arch})
    if same:
        return (f"code sizes for {target} with {kernels} kernels were measured for the "
                f"default build only, not the {build} build")
    return (f"code sizes were not measured for target {target} with {kernels} kernels "
            f"(measured: {', '.join(measured)}); flash code and static RAM unknown")


def model_footprint(sizes: CodeSizes, ops: Iterable[str], model_bytes: int,
                    min_arena: int) -> Footprint | str:
    """The footprint of a model with these distinct ``ops`` on ``sizes``' build, or why it
    cannot be given (an op whose code was not measured)."""
    names = tuple(sorted(set(ops)))
    missing = sorted(set(names) - sizes.ops)
    if missing:
        return (f"code size of {', '.join(missing)} not measured for {sizes.core} "
                f"({sizes.kernels}); measured ops: {', '.join(sorted(sizes.ops))}")
    flash, ram = sizes.code(names)
    return Footprint(sizes=sizes, ops=names, model_bytes=model_bytes, code_bytes=flash,
                     arena_bytes=min_arena, interpreter_bytes=sizes.interpreter_bytes,
                     resolver_bytes=sizes.resolver_bytes(len(names)), tflm_static_bytes=ram)


def unmeasured_build(build: str) -> str | None:
    """Why ``--build build`` cannot be answered (no build of that type measured), or None."""
    if any(s.build == build for s in load_code_sizes()):
        return None
    return (f"--build {build}: code sizes of TFLM's {build} build are not measured yet "
            f"(only the default build, which keeps DebugLog's vsnprintf and assertions); "
            f"use --build default")


def footprint_for(model: Model, model_bytes: int, min_arena: int, target: str, kernels: str,
                  libc: str = "full", build: str = "default") -> Footprint | str:
    """``model``'s footprint on TFLM build ``target`` (TARGET_ARCH) with ``kernels``, or why
    there is none: its ops are those ``tinyarena export`` registers."""
    from tinyarena.export import op_registrations

    sizes = find_code_sizes(target, kernels, libc, build)
    if isinstance(sizes, str):
        return sizes
    try:
        ops = [r.op_name for r in op_registrations(model)]
    except TinyArenaError as exc:
        return f"no resolver for this model: {exc}"
    return model_footprint(sizes, ops, model_bytes, min_arena)


__all__ = ["BUILD_TYPES", "BUILD_WORDS", "LIBCS", "LIBC_WORDS", "CodeGroup", "CodeSizes",
           "Footprint", "assumptions", "find_code_sizes", "footprint_for", "load_code_sizes",
           "model_footprint", "unmeasured_build"]
