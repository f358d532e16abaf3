"""Where ``MicroResourceVariables`` lives: in the tensor arena (TFLM's Python wrapper, and
``export``'s ``CreateInterpreter``), or in a second arena over its own MicroAllocator (ESPHome's
micro_wake_word: ``size --separate-variables``, ``variables_arena``).

Oracles: the struct sizes an ILP32 build of TFLM measured (``../shared/esp-oracle``'s
``provenance.abi``), walked through the allocation sequence of TFLM's source
(``MicroAllocator::Create``, ``MicroResourceVariables::Create``), and the CLI's contracts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from model_families import wake_word
from tinyarena.arena import allocate_model
from tinyarena.arena.allocator import resource_variable_count, variables_arena
from tinyarena.cli import main
from tinyarena.errors import KernelError
from tinyarena.model import read_model

ESP_ORACLE = Path(__file__).resolve().parents[4] / "shared" / "esp-oracle" / "figures.json"


def _measured_abi() -> dict[str, list[int]]:
    if not ESP_ORACLE.is_file():
        pytest.skip("../shared/esp-oracle is absent")
    data: dict[str, Any] = json.loads(ESP_ORACLE.read_text())
    return data["provenance"]["abi"]["sizeof_alignof_this_build"]


def _tail_walk(allocations: list[tuple[int, int]]) -> int:
    """Bytes taken from the top of a 16-aligned arena by persistent allocations in order:
    SingleArenaBufferAllocator::AllocatePersistentBuffer aligns each start down."""
    top = 1 << 20
    tail = top
    for size, alignment in allocations:
        tail = (tail - size) // alignment * alignment
    return top - tail


@pytest.mark.parametrize("count", [0, 1, 2, 7, 20, 33])
def test_variables_arena_walks_tflm_create_with_measured_ilp32_sizes(count: int) -> None:
    abi = _measured_abi()
    objects = [tuple(abi[name]) for name in ("SingleArenaBufferAllocator", "GreedyMemoryPlanner",
                                             "MicroAllocator")]
    # MicroResourceVariables::Create: MicroAllocator::AllocatePersistentBuffer, 16-aligned
    tables = [(abi["MicroResourceVariables"][0], 16), (abi["MicroResourceVariable"][0] * count, 16)]
    used = _tail_walk([*objects, *tables])  # type: ignore[list-item]
    for target in ("arm32", "cortex-m4", "cortex-m3"):
        v = variables_arena(target, count)
        assert (v.used, v.min) == (used, -(-used // 16) * 16)
        assert v.max_resource_variables == count


def test_esphome_count_of_20_fits_its_1024_byte_variable_arena() -> None:
    """streaming_model.h: STREAMING_MODEL_VARIABLE_ARENA_SIZE 1024, Create(ma_, 20)."""
    v = variables_arena("arm32", 20)
    assert v.min <= 1024
    assert [a.label for a in v.allocations][-2:] == ["MicroResourceVariables",
                                                     "MicroResourceVariable[20]"]


def test_separate_layout_moves_exactly_the_object_and_table_out() -> None:
    """Same allocations in the same order minus MicroResourceVariables and its table; the
    variables' buffers stay (ASSIGN_VARIABLE allocates them through the context)."""
    model = read_model(wake_word())
    n = resource_variable_count(model)
    assert n == 2
    for target in ("arm32", "cortex-m4", "host-x64"):
        same = allocate_model(model, target=target, allocator="production")
        apart = allocate_model(model, target=target, allocator="production",
                               separate_variables=True)
        labels = [t.label for t in same.tail_allocations]
        assert [t.label for t in apart.tail_allocations] == [
            label for label in labels
            if label not in ("MicroResourceVariables", f"MicroResourceVariable[{n}]")]
        assert len(apart.resource_offsets) == n
        assert apart.head == same.head and apart.tail < same.tail
        assert same.variables_arena is None
        assert apart.variables_arena == variables_arena(target, n)


def test_the_count_given_to_create_sizes_the_table_and_too_few_fails_like_tflm() -> None:
    model = read_model(wake_word())
    two = allocate_model(model, target="arm32", allocator="production")
    twenty = allocate_model(model, target="arm32", allocator="production",
                            max_resource_variables=20)
    table = [t for t in twenty.tail_allocations if t.label == "MicroResourceVariable[20]"]
    assert table and table[0].requested == 20 * 20
    assert twenty.tail > two.tail
    with pytest.raises(KernelError, match=r"Maximum resource variable count \(1\)"):
        allocate_model(model, target="arm32", max_resource_variables=1)


@pytest.fixture()
def wake_word_file(tmp_path: Path) -> Path:
    path = tmp_path / "ww.tflite"
    path.write_bytes(wake_word())
    return path


def test_size_separate_variables_json_and_text(wake_word_file: Path, capsys) -> None:
    args = ["size", str(wake_word_file), "--target", "cortex-m4", "--separate-variables",
            "--max-resource-variables", "20"]
    assert main([*args, "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    expected = variables_arena("cortex-m4", 20)
    assert {k: record["variables_arena"][k] for k in ("used", "min")} == {
        "used": expected.used, "min": expected.min}
    assert record["variables_arena"]["max_resource_variables"] == 20
    layout = allocate_model(read_model(wake_word()), target="cortex-m4",
                            separate_variables=True, max_resource_variables=20)
    assert (record["total"], record["min_arena"]) == (layout.total, layout.min_arena)
    assert main(args) == 0
    text = " ".join(capsys.readouterr().out.split())  # wrapped lines joined
    assert f"uint8_t variables_arena[{expected.min}]" in text
    assert "MicroResourceVariables::Create(allocator, 20)" in text
    assert f"4-byte aligned (a heap block) needs {expected.min_4_aligned}" in text


def test_variables_usage_errors_exit_2(wake_word_file: Path, capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["size", str(wake_word_file), "--max-resource-variables", "-1"])
    assert info.value.code == 2
    assert main(["size", str(wake_word_file), "--separate-variables", "--split"]) == 2
    assert "--separate-variables" in capsys.readouterr().err
    assert main(["size", str(wake_word_file), "--max-resource-variables", "1", "--json"]) == 1
    error = json.loads(capsys.readouterr().out)["error"]
    assert "Maximum resource variable count (1)" in error["message"]


@pytest.mark.oracle
def test_separate_tensor_arena_is_the_wheels_minus_the_object_and_table() -> None:
    """The wheel creates MicroResourceVariables in its one arena (it has no second one): its
    recording shows the object (sizeof 16 on x64) and the table (40 per variable) as two
    "Persistent buffer data" allocations. The separate layout's tensor arena records the same
    head and categories minus exactly those two requests."""
    from tflm_oracle import tflm_allocations

    data = wake_word()
    n = resource_variable_count(read_model(data))
    wheel = tflm_allocations(data)
    ours = allocate_model(read_model(data), separate_variables=True)  # host-x64, as the wheel
    assert ours.head == wheel.head
    got = {k: (v.used, v.requested, v.count) for k, v in ours.categories.items()}
    persistent = "Persistent buffer data"
    used, requested, count = wheel.categories[persistent]
    assert got[persistent][1:] == (requested - 16 - 40 * n, count - 2)
    assert {k: v for k, v in got.items() if k != persistent} == {
        k: v for k, v in wheel.categories.items() if k != persistent}
