"""C++ sources a TFLM firmware project compiles as they are: the model, its arena, its ops.

What a TFLM user otherwise does by hand (``xxd -i``, a guessed ``kTensorArenaSize``, a
hand-written ``MicroMutableOpResolver<N>``) is generated from one model and one target:

- ``g_model``: the .tflite bytes, unchanged (an OfflineMemoryAllocation plan written by
  ``tinyarena optimize`` travels inside them), ``alignas(16)`` because ``tflite::GetModel``
  reads the flatbuffer in place and its tables hold 8- and 16-byte aligned buffers;
- ``kTensorArenaSize``: the smallest arena in which TFLM's AllocateTensors succeeds for that
  target (``ArenaLayout.min_arena``), plus a margin: not ``arena_used_bytes()``, which is
  smaller than what AllocateTensors needs on many small models;
- ``RegisterOps``: one ``Add...()`` call per distinct operator, on a
  ``MicroMutableOpResolver<kOpCount>`` with ``kOpCount`` exactly that number;
- for a model with resource variables (VAR_HANDLE), which TFLM only runs when the application
  hands the interpreter a ``MicroResourceVariables``: ``kNumResourceVariables`` and
  ``CreateInterpreter``, the construction TFLM needs (``MicroAllocator::Create`` over the
  arena, ``MicroResourceVariables::Create`` in it, the interpreter over both), which
  ``kTensorArenaSize`` covers; with ``separate_variables``, ESPHome's layout instead (the
  variables over a second arena of ``kVariablesArenaSize`` bytes).

The output depends only on the model bytes, the target, the name and the margin.
"""

from __future__ import annotations

import hashlib
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from tinyarena._version import EMULATED_TFLM, __version__
from tinyarena.arena.allocator import Resolver, allocate_model, resource_variable_count
from tinyarena.arena.layout import VariablesArena
from tinyarena.arena.targets import TargetProfile, get_target
from tinyarena.errors import BuildError, PlanError, UnsupportedOpError
from tinyarena.export.resolver_methods import BUILTIN_METHODS, CUSTOM_METHODS
from tinyarena.kernels import ethos_u
from tinyarena.model import read_model
from tinyarena.model.types import Model
from tinyarena.optimize.safety import plan_warnings

MODEL_ALIGNMENT = 16  # alignas() of the model array
ARENA_ALIGNMENT = 16  # MicroArenaBufferAlignment(): the arena start TFLM aligns up to
BYTES_PER_LINE = 12  # as ``xxd -i`` writes them
COMMENT_WIDTH = 80

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CPP_KEYWORDS = frozenset(
    "alignas alignof and asm auto bool break case catch char class const constexpr continue "
    "default delete do double else enum explicit export extern false float for friend goto if "
    "inline int long mutable namespace new noexcept not nullptr operator or private protected "
    "public register return short signed sizeof static struct switch template this throw true "
    "try typedef typeid typename union unsigned using virtual void volatile while tflite std"
    .split())
UINT_MAX = 2**32 - 1  # kTensorArenaSize's type, unsigned int, is 32 bits on every target


@dataclass(frozen=True)
class OpRegistration:
    """One resolver call: ``method`` (``AddConv2D``, or ``AddCustom`` for a user's custom op),
    the operator it registers, and for ``AddCustom`` the registration function to declare."""

    method: str
    op_name: str
    custom: bool = False
    register_function: str = ""

    @property
    def call(self) -> str:
        if self.method == "AddCustom":
            return f'AddCustom("{self.op_name}", {self.register_function}())'
        return f"{self.method}()"


@dataclass(frozen=True)
class ExportedSources:
    """The two files of one exported model, and the numbers they were made from."""

    name: str
    header_name: str
    source_name: str
    header: str
    source: str
    model_bytes: int
    min_arena: int
    arena_used: int
    margin: int
    arena_size: int  # kTensorArenaSize = min_arena + margin
    target: str
    ops: tuple[OpRegistration, ...]
    warnings: tuple[str, ...] = ()  # why the export needed --force (also #warning lines)
    resource_variables: int = 0  # kNumResourceVariables (0: the model has none)
    variables_arena: int = 0  # kVariablesArenaSize with separate_variables, else 0

    @property
    def op_count(self) -> int:
        return len(self.ops)

    def write(self, directory: str | Path) -> tuple[Path, Path]:
        """Write ``<name>.h`` and ``<name>.cc`` into ``directory`` (made if missing)."""
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        header = folder / self.header_name
        source = folder / self.source_name
        header.write_text(self.header)
        source.write_text(self.source)
        return header, source

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name, "header": self.header_name, "source": self.source_name,
            "target": self.target, "model_bytes": self.model_bytes,
            "min_arena": self.min_arena, "arena_used": self.arena_used, "margin": self.margin,
            "arena_size": self.arena_size, "op_count": self.op_count,
            "warnings": list(self.warnings),
            "resource_variables": self.resource_variables,
            **({"variables_arena_size": self.variables_arena} if self.variables_arena else {}),
            "ops": [op.method if not op.custom or op.method != "AddCustom"
                    else f"AddCustom({op.op_name})" for op in self.ops],
        }


def c_name(text: str) -> str:
    """``text`` made a C++ identifier usable as a namespace and a file stem."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", text).strip("_") or "model"
    if name[0].isdigit():
        name = f"model_{name}"
    if name in _CPP_KEYWORDS:
        name = f"{name}_model"
    return name


def op_registrations(model: Model) -> tuple[OpRegistration, ...]:
    """One registration per distinct operator of every subgraph, sorted by method name (then
    custom code), as MicroMutableOpResolver needs: each op once, N equal to their number."""
    found: dict[str, OpRegistration] = {}
    for sg in model.subgraphs:
        for op in sg.operators:
            if op.name in found:
                continue
            found[op.name] = _registration(op.name, op.is_custom, op.index, sg.index)
    return tuple(sorted(found.values(), key=lambda r: (r.method, r.op_name)))


def _registration(name: str, custom: bool, op_index: int, subgraph: int) -> OpRegistration:
    if custom:
        method = CUSTOM_METHODS.get(name)
        if method is not None:
            return OpRegistration(method=method, op_name=name, custom=True)
        return OpRegistration(method="AddCustom", op_name=name, custom=True,
                              register_function=f"Register_{c_name(name)}")
    method = BUILTIN_METHODS.get(name)
    if method is None:
        raise UnsupportedOpError(
            f"{name} (operator {op_index} of subgraph {subgraph}) has no "
            f"MicroMutableOpResolver method in TFLM: TFLM cannot run this model; replace the "
            f"op before exporting it", op_name=name, op_index=op_index, subgraph_index=subgraph)
    return OpRegistration(method=method, op_name=name)


def export_model(model: Model | bytes | bytearray | memoryview | str | Path, *,
                 target: str | TargetProfile = "host-x64",
                 name: str | None = None, margin: int = 0,
                 model_file: str = "", resolver: Resolver | None = None,
                 force: bool = False, separate_variables: bool = False,
                 max_resource_variables: int | None = None) -> ExportedSources:
    """The C++ sources of ``model`` for ``target``; ``name`` (default: the file's stem, else
    "model") becomes the namespace and the file names. ``model_file`` is only quoted in a
    comment (its base name, so the output does not depend on where the file is). A model with
    custom ops needs a ``resolver`` holding their Registrations: their prepare decides the
    arena, and TFLM's MicroMutableOpResolver needs them registered too. A model with resource
    variables gets ``CreateInterpreter`` for ``max_resource_variables`` of them (default: the
    model's count), with ``MicroResourceVariables`` in the tensor arena, or in a second arena
    of its own with ``separate_variables`` (ESPHome's micro_wake_word layout).

    A model whose arena plan ``tinyarena optimize`` proved only for other kernels than the
    target's is refused (PlanError): TFLM would follow the plan and the firmware could compute
    wrong outputs. ``force`` exports it anyway, with a ``#warning`` in the header that every
    build of the firmware prints."""
    if isinstance(margin, bool) or not isinstance(margin, int) or margin < 0:
        raise BuildError(f"margin must be a whole number of bytes >= 0, got {margin!r}")
    if isinstance(model, (str, Path)) and not model_file:
        model_file = str(model)
    parsed = read_model(model)
    data = bytes(parsed.raw)
    if not data:
        raise BuildError("the Model has no raw bytes to export; read it with read_model")
    ident = c_name(name if name is not None else (Path(model_file).stem or "model"))
    if name is not None and ident != name:
        raise BuildError(f"--name {name!r} is not a C++ identifier; use e.g. {ident!r}")
    ops = op_registrations(parsed)
    profile = get_target(target)
    unproven = tuple(plan_warnings(parsed, profile))
    if unproven and not force:
        raise PlanError(f"refusing to export for target {profile.name}: {unproven[0]}; or "
                        f"export anyway with --force (the header then carries a #warning)")
    needed = resource_variable_count(parsed)
    variables = needed if max_resource_variables is None else max_resource_variables
    if separate_variables and not needed:
        raise BuildError("--separate-variables: the model has no resource variables "
                         "(no VAR_HANDLE), so there is no second arena to give them")
    try:
        layout = allocate_model(parsed, target=profile, resolver=resolver,
                                separate_variables=separate_variables,
                                max_resource_variables=variables if needed else None)
    except UnsupportedOpError as exc:
        custom = [op for op in ops if op.method == "AddCustom" and op.op_name == exc.op_name]
        if not custom:
            raise
        raise UnsupportedOpError(
            f"{exc}: the arena of a model with custom op {exc.op_name} depends on its kernel's "
            f"Init and Prepare, and tinyarena has none for it. From Python, pass "
            f"export_model(..., resolver=OpResolver.default().add_custom({exc.op_name!r}, "
            f"Registration(...))) describing its allocations",
            op_name=exc.op_name, op_index=exc.op_index,
            subgraph_index=exc.subgraph_index) from None
    arena_size = int(layout.min_arena) + margin
    if arena_size > UINT_MAX:  # the header declares it `unsigned int`: C++ would wrap it
        raise BuildError(
            f"kTensorArenaSize would be {arena_size:,} bytes (min_arena {layout.min_arena:,} + "
            f"margin {margin:,}), more than an unsigned int holds ({UINT_MAX:,}); use a "
            f"smaller --margin")
    facts = _Facts(
        name=ident, file=Path(model_file).name if model_file else "", data=data,
        sha256=hashlib.sha256(data).hexdigest(), target=profile.name,
        target_description=f"{profile.description}; kernels {profile.kernels}, TFLM "
                           f"{profile.tflm_commit}", allocator=layout.allocator,
        planner=layout.planner, min_arena=int(layout.min_arena),
        arena_used=int(layout.total), margin=margin, arena_size=arena_size, ops=ops,
        offline=any(b.offline for b in layout.buffers), warnings=unproven,
        resource_variables=variables if needed else 0,
        variables_arena=layout.variables_arena, model_variables=needed,
        npu=_npu_note(parsed))
    return ExportedSources(
        name=ident, header_name=f"{ident}.h", source_name=f"{ident}.cc",
        header=_header(facts), source=_source(facts), model_bytes=len(data),
        min_arena=facts.min_arena, arena_used=facts.arena_used, margin=margin,
        arena_size=arena_size, target=profile.name, ops=ops, warnings=unproven,
        resource_variables=facts.resource_variables,
        variables_arena=0 if layout.variables_arena is None else layout.variables_arena.min)


@dataclass(frozen=True)
class _Facts:
    name: str
    file: str
    data: bytes
    sha256: str
    target: str
    target_description: str
    allocator: str
    planner: str
    min_arena: int
    arena_used: int
    margin: int
    arena_size: int
    ops: tuple[OpRegistration, ...]
    offline: bool
    warnings: tuple[str, ...] = ()
    resource_variables: int = 0
    variables_arena: VariablesArena | None = None
    model_variables: int = 0  # distinct shared names of the model's VAR_HANDLE ops
    npu: str = ""  # what an Ethos-U (Vela) model needs from the firmware besides the arena


def _npu_note(model: Model) -> str:
    """The firmware side of a Vela model: the ethos_u kernel, the driver, and where Vela's
    scratch sits in the arena (empty for a model without the ethos-u operator)."""
    scratch = ethos_u.vela_scratch_bytes(model)
    if scratch is None:
        return ""
    fast = ethos_u.fast_scratch(model)
    text = (f"Arm Ethos-U: the ethos-u operator needs TFLM built with CO_PROCESSOR=ethos_u "
            f"(kernels/ethos_u, AddEthosU()) and the Ethos-U driver initialised (ethosu_init) "
            f"before AllocateTensors(). Vela's scratch ({_n(scratch)} bytes, the NPU's "
            f"working memory) is part of kTensorArenaSize, pinned by Vela's offline plan.")
    if fast is not None and not fast.shared_with_scratch:
        text += (f" Vela's fast scratch ({_n(fast.nbytes)} bytes) is planned in the arena too; "
                 f"a driver given a fast memory (ETHOSU_FAST_MEMORY_SIZE) needs at least "
                 f"{_n(fast.nbytes)} bytes there.")
    return text


def _n(value: int) -> str:
    return f"{value:,}"


def _banner(f: _Facts) -> list[str]:
    source = f" from {f.file}" if f.file else ""
    return [f"// Generated by tinyarena {__version__}{source} (tinyarena export); do not edit.",
            f"// Model: {_n(len(f.data))} bytes, SHA-256 {f.sha256}."]


def _header(f: _Facts) -> str:
    guard = f"TINYARENA_{f.name.upper()}_H_"
    plan = ("its OfflineMemoryAllocation plan, which TFLM follows, included"
            if f.offline else "unchanged")
    lines = [
        *_banner(f),
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        *(f'#warning "tinyarena export --force: {_c_text(w)}"' for w in f.warnings),
        *([""] if f.warnings else []),
        *_includes(f),
        "",
        f"namespace {f.name} {{",
        "",
        f"// The .tflite file byte for byte ({plan}). 16-byte aligned: tflite::GetModel()",
        "// reads the flatbuffer in place.",
        "extern const unsigned char g_model[];",
        f"constexpr unsigned int g_model_len = {len(f.data)};",
        "",
        *_comment(_arena_comment(f)),
        f"//   alignas(16) static uint8_t tensor_arena[{f.name}::kTensorArenaSize];",
        f"constexpr unsigned int kTensorArenaSize = {f.arena_size};",
        "",
        "// Distinct operators of the model: one MicroMutableOpResolver slot each.",
        f"constexpr unsigned int kOpCount = {len(f.ops)};",
        "using OpResolver = tflite::MicroMutableOpResolver<kOpCount>;",
        "",
    ]
    if f.npu:
        lines.extend([*_comment(f.npu), ""])
    customs = [op for op in f.ops if op.method == "AddCustom"]
    if customs:
        lines.append("// Custom operators TFLM does not ship: link your implementation of each.")
        lines.extend(f"const TFLMRegistration* {op.register_function}();  // \"{op.op_name}\""
                     for op in customs)
        lines.append("")
    names = ", ".join(op.call for op in f.ops) or "none"
    lines.extend([
        *_comment(f"Registers exactly the operators the model uses: {names}."),
        "// Usage: static OpResolver resolver; RegisterOps(resolver);",
        "TfLiteStatus RegisterOps(OpResolver& resolver);",
        "",
        *_variables_declarations(f),
        f"}}  // namespace {f.name}",
        "",
        f"#endif  // {guard}",
        "",
    ])
    return "\n".join(lines)


def _c_text(text: str) -> str:
    """``text`` inside a C string literal (for ``#warning "..."``)."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _includes(f: _Facts) -> list[str]:
    headers = ["micro_mutable_op_resolver.h"]
    if f.resource_variables:
        headers = ["micro_allocator.h", "micro_interpreter.h", *headers,
                   "micro_resource_variable.h"]
    return [f'#include "tensorflow/lite/micro/{h}"' for h in headers]


def _variables_declarations(f: _Facts) -> list[str]:
    """kNumResourceVariables and CreateInterpreter's declaration (nothing without VAR_HANDLE)."""
    if not f.resource_variables:
        return []
    room = ("" if f.resource_variables == f.model_variables else
            f" The table is made for {f.resource_variables}, as asked.")
    lines = [*_comment(
        f"Resource variables: the model's VAR_HANDLE ops name {f.model_variables} distinct "
        f"variables (shared_name). TFLM keeps them in a tflite::MicroResourceVariables that "
        f"the application creates and hands to the interpreter; without one, "
        f"AllocateTensors() fails (\"VAR_HANDLE requires resource variables\").{room}"),
        f"constexpr int kNumResourceVariables = {f.resource_variables};", ""]
    v = f.variables_arena
    if v is None:
        lines += _comment(
            "Creates the interpreter this model needs over tensor_arena (kTensorArenaSize "
            "bytes, 16-byte aligned): tflite::MicroAllocator::Create over the arena, "
            "tflite::MicroResourceVariables::Create(allocator, kNumResourceVariables) in it, "
            "then the interpreter over both. kTensorArenaSize covers all of it. Call it once: "
            "the interpreter is constructed in static storage. Then AllocateTensors().")
        lines.append("tflite::MicroInterpreter& CreateInterpreter(const OpResolver& resolver, "
                     "uint8_t* tensor_arena);")
        return [*lines, ""]
    lines += _comment(
        f"ESPHome's micro_wake_word layout: MicroResourceVariables lives in a second arena, "
        f"over a MicroAllocator of its own: {_n(v.used)} bytes for its SingleArenaBufferAllocator, "
        f"GreedyMemoryPlanner and MicroAllocator objects, the MicroResourceVariables object "
        f"and a table of kNumResourceVariables entries (16-byte aligned). kTensorArenaSize "
        f"then holds everything else, the variables' buffers included. Declare:")
    lines += [f"//   alignas(16) static uint8_t variables_arena[{f.name}::kVariablesArenaSize];",
              f"constexpr unsigned int kVariablesArenaSize = {v.min};", ""]
    lines += _comment(
        "Creates the interpreter over both arenas: tflite::MicroAllocator::Create("
        "variables_arena, kVariablesArenaSize), tflite::MicroResourceVariables::Create("
        "that allocator, kNumResourceVariables), then the interpreter over tensor_arena "
        "(kTensorArenaSize bytes) with those variables. Call it once: the interpreter is "
        "constructed in static storage. Then AllocateTensors().")
    lines.append("tflite::MicroInterpreter& CreateInterpreter(const OpResolver& resolver, "
                 "uint8_t* tensor_arena,")
    lines.append("                                            uint8_t* variables_arena);")
    return [*lines, ""]


def _variables_definition(f: _Facts) -> list[str]:
    """CreateInterpreter: the construction TFLM needs for resource variables."""
    if not f.resource_variables:
        return []
    storage = ["  alignas(tflite::MicroInterpreter) static unsigned char "
               "storage[sizeof(tflite::MicroInterpreter)];"]
    if f.variables_arena is None:
        return [
            "tflite::MicroInterpreter& CreateInterpreter(const OpResolver& resolver, "
            "uint8_t* tensor_arena) {",
            "  // What MicroInterpreter(model, resolver, arena, size) creates inside, done here",
            "  // so that MicroResourceVariables comes from the same arena.",
            "  tflite::MicroAllocator* allocator =",
            "      tflite::MicroAllocator::Create(tensor_arena, kTensorArenaSize);",
            "  tflite::MicroResourceVariables* variables =",
            "      tflite::MicroResourceVariables::Create(allocator, kNumResourceVariables);",
            *storage,
            "  return *new (storage) tflite::MicroInterpreter(tflite::GetModel(g_model), "
            "resolver,",
            "                                                 allocator, variables);",
            "}", ""]
    return [
        "tflite::MicroInterpreter& CreateInterpreter(const OpResolver& resolver, "
        "uint8_t* tensor_arena,",
        "                                            uint8_t* variables_arena) {",
        "  tflite::MicroAllocator* variables_allocator =",
        "      tflite::MicroAllocator::Create(variables_arena, kVariablesArenaSize);",
        "  tflite::MicroResourceVariables* variables =",
        "      tflite::MicroResourceVariables::Create(variables_allocator, "
        "kNumResourceVariables);",
        *storage,
        "  return *new (storage) tflite::MicroInterpreter(tflite::GetModel(g_model), "
        "resolver,",
        "                                                 tensor_arena, kTensorArenaSize, "
        "variables);",
        "}", ""]


def _arena_comment(f: _Facts) -> str:
    used = (f"Do not declare arena_used_bytes() ({_n(f.arena_used)}): AllocateTensors needs "
            f"{_n(f.min_arena - f.arena_used)} bytes more while it runs than it keeps."
            if f.arena_used < f.min_arena else
            f"(arena_used_bytes() reports the same {_n(f.arena_used)} bytes for this model.)")
    return (f"Tensor arena bytes for target {f.target} ({f.target_description}): "
            f"min_arena {_n(f.min_arena)} + margin {_n(f.margin)}. min_arena is the smallest "
            f"arena in which TFLM's MicroInterpreter::AllocateTensors() succeeds for this model "
            f"and target, as tinyarena {__version__} computes it by emulating TFLM's "
            f"allocator ({f.planner} planner, {f.allocator} allocator, the allocations of "
            f"the target's kernels; host-x64 figures checked against {EMULATED_TFLM}). "
            f"{used} Declare the arena 16-byte aligned, or TFLM loses up to 15 bytes aligning "
            f"its start:")


def _comment(text: str) -> list[str]:
    return textwrap.wrap(text, width=COMMENT_WIDTH, initial_indent="// ",
                         subsequent_indent="// ", break_on_hyphens=False)


def _source(f: _Facts) -> str:
    lines = [
        *_banner(f),
        f'#include "{f.name}.h"',
        *(("", "#include <new>") if f.resource_variables else ()),
        "",
        f"namespace {f.name} {{",
        "",
        f"alignas({MODEL_ALIGNMENT}) const unsigned char g_model[] = {{",
        *_hex_lines(f.data),
        "};",
        'static_assert(sizeof(g_model) == g_model_len, "g_model_len is the array\'s size");',
        "",
        "TfLiteStatus RegisterOps(OpResolver& resolver) {",
        *(f"  if (resolver.{op.call} != kTfLiteOk) return kTfLiteError;" for op in f.ops),
        *(() if f.ops else ("  (void)resolver;  // the model has no operators",)),
        "  return kTfLiteOk;",
        "}",
        "",
        *_variables_definition(f),
        f"}}  // namespace {f.name}",
        "",
    ]
    return "\n".join(lines)


def _hex_lines(data: bytes) -> list[str]:
    table = _HEX_BYTES
    return ["  " + ", ".join(map(table.__getitem__, data[i:i + BYTES_PER_LINE])) + ","
            for i in range(0, len(data), BYTES_PER_LINE)]


_HEX_BYTES = tuple(f"0x{b:02x}" for b in range(256))


__all__ = ["ExportedSources", "OpRegistration", "c_name", "export_model", "op_registrations"]
