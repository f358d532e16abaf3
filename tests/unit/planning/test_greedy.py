"""GreedyPlanner against offsets derived by hand from TFLM's rules (facts sheet 2.4) and
against a step-by-step mirror of TFLM's CalculateOffsetsIfNeeded."""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tinyarena.errors import PlanError
from tinyarena.planning import (
    GREEDY_BYTES_PER_BUFFER,
    Buffer,
    GreedyPlanner,
    buffer_arrays,
    greedy_max_buffers,
    greedy_order,
    lower_bound,
    plan_greedy,
    verify_plan,
)
from tinyarena.planning.greedy import _greedy_offsets, _reference_greedy_offsets

B = Buffer


def test_facts_sheet_hello_world_plan() -> None:
    # Order: 64 (id2), 64 (id1, equal size, added earlier -> after), 16 (id3), 16 (id0).
    # id2 -> 0; id1 [1,2] meets id2 -> 64; id3 [3,3] meets id2 only -> 64;
    # id0 [0,1] meets id1 only, gap 64 before it -> 0.
    plan = plan_greedy([B(16, 0, 1), B(64, 1, 2), B(64, 2, 3), B(16, 3, 3)])
    assert plan.offsets == (0, 64, 0, 64)
    assert plan.head_size == 128


def test_five_buffer_chain() -> None:
    # Order 50(id4), 40(id3), 30(id2), 20(id1), 10(id0).
    # id4 -> 0. id3 [3,4] meets nothing placed -> 0. id2 [2,3] meets id3 [0,40) -> 40.
    # id1 [1,2] meets id4 [0,50) and id2 [40,70): candidate 50, then 70 -> 70.
    # id0 [0,1] meets id4 [0,50) and id1 [70,90): gap 50..70 holds 10 -> 50.
    plan = plan_greedy([B(10, 0, 1), B(20, 1, 2), B(30, 2, 3), B(40, 3, 4), B(50, 0, 1)])
    assert plan.offsets == (50, 70, 40, 0, 0)
    assert plan.head_size == 90


def test_equal_sizes_later_added_goes_first() -> None:
    assert plan_greedy([B(32, 0, 1), B(32, 1, 2)]).offsets == (32, 0)
    # id2 ties id0 and goes first -> 0; id0 [0,2] meets id2 -> 48; id1 [1,1] meets only
    # id0 [48,96), and the 48 bytes below it hold 16 -> 0.
    assert plan_greedy([B(48, 0, 2), B(16, 1, 1), B(48, 2, 2)]).offsets == (48, 0, 0)


def test_order_is_size_descending_then_index_descending() -> None:
    arrays = buffer_arrays([B(16, 0, 0), B(32, 0, 0), B(16, 0, 0), B(8, 0, 0, offset=5),
                            B(32, 0, 0), B(4, 0, 0, offset=0)])
    assert greedy_order(arrays).tolist() == [3, 5, 4, 1, 2, 0]


def test_first_fit_in_offset_order_not_best_fit() -> None:
    # Fixed buffers live [0,5] at [0,32), [48,80), [100,116): gaps of 16 at 32 and 20 at 80.
    # Online order U(24), T(20), S(16). U fits neither gap -> 116. T skips the 16-byte gap
    # -> 80. S fits the first gap exactly (gap >= size) -> 32.
    buffers = [B(32, 0, 5, 0), B(32, 0, 5, 48), B(16, 0, 5, 100),
               B(16, 2, 2), B(20, 3, 3), B(24, 1, 1)]
    plan = plan_greedy(buffers)
    assert plan.offsets == (0, 48, 100, 32, 80, 116)
    assert plan.head_size == 140


def test_zero_size_entry_splits_a_gap_like_tflm() -> None:
    # Walk: [0,10) -> candidate 10; the empty entry at 20 -> gap 10 < 25, candidate 20;
    # [40,50) -> gap 20 < 25, candidate 50. The free run [10,40) of 30 is never seen whole.
    buffers = [B(10, 0, 5, 0), B(0, 0, 5, 20), B(10, 0, 5, 40), B(25, 1, 1)]
    assert plan_greedy(buffers).offsets == (0, 20, 40, 50)


def test_zero_size_buffers_land_at_zero() -> None:
    plan = plan_greedy([B(64, 0, 3), B(0, 1, 1), B(0, 2, 2)])
    assert plan.offsets == (0, 0, 0)


def test_offline_tensor_at_odd_offset() -> None:
    # Facts 1.2: 400-byte chain t0 -> t1 -> t2, t0 pinned at 3. t2 [2,2] meets nothing -> 0;
    # t1 [1,2] meets t2 [0,400) and t0 [3,403) -> 403. Head 803.
    plan = plan_greedy([B(400, 0, 1, offset=3), B(400, 1, 2), B(400, 2, 2)])
    assert plan.offsets == (3, 403, 0)
    assert plan.head_size == 803


def test_offline_and_online_mixed_chain() -> None:
    # Facts 3: 100-float chain, tensor 0 pinned at 1000, tensor 2 at 0; tensor 1 [1,2] meets
    # both: candidate 400 after tensor 2, gap 600 before tensor 0 -> 400. Head 1400.
    plan = plan_greedy([B(400, 0, 1, offset=1000), B(400, 1, 2), B(400, 2, 2, offset=0)])
    assert plan.offsets == (1000, 400, 0)
    assert plan.head_size == 1400


def test_offline_buffers_are_not_checked() -> None:
    plan = plan_greedy([B(100, 0, 3, offset=0), B(100, 0, 3, offset=50)])
    assert plan.offsets == (0, 50)
    with pytest.raises(PlanError, match="buffer 0 .* buffer 1"):
        verify_plan(plan)


def test_unreferenced_and_never_produced_tensors() -> None:
    # Facts 2.3: [-1,-1] meets nothing from step 0 on, lands at 0 and still counts.
    assert plan_greedy([B(400, 0, 1), B(4000, -1, -1)]).head_size == 4000
    # [-1, 1] is an interval too: it meets [0, 1].
    assert plan_greedy([B(400, 0, 1), B(4000, -1, 1)]).offsets == (4000, 0)


def test_empty() -> None:
    assert plan_greedy([]).offsets == ()
    assert plan_greedy([]).head_size == 0
    assert GreedyPlanner().maximum_memory_size() == 0


def test_planner_object_and_capacity() -> None:
    assert GREEDY_BYTES_PER_BUFFER == 40
    assert greedy_max_buffers(1919) == 47
    # Facts 1.4: 120 free bytes -> "Too many buffers (max is 3)".
    planner = GreedyPlanner.from_working_memory(120)
    assert planner.max_buffers == 3
    for b in (B(16, 0, 1), B(64, 1, 2), B(64, 2, 3)):
        planner.add_buffer(b)
    with pytest.raises(PlanError, match=r"Too many buffers \(max is 3\)"):
        planner.add_buffer(B(16, 3, 3))
    assert planner.offset_for_buffer(1) == 64
    assert planner.maximum_memory_size() == 128
    with pytest.raises(PlanError, match="outside range"):
        planner.offset_for_buffer(3)


def test_plan_is_recomputed_after_adding() -> None:
    planner = GreedyPlanner()
    planner.add_buffer(B(16, 0, 0))
    assert planner.maximum_memory_size() == 16
    planner.add_buffer(B(32, 0, 0))
    assert planner.plan().offsets == (32, 0)


@pytest.mark.parametrize("bad, words", [
    (B(-16, 0, 1), "negative size"),
    (B(16, 2, 1), "first > last"),
    (B(16, 0, 1, offset=-1), "offset=None"),
])
def test_bad_buffers_are_named(bad: Buffer, words: str) -> None:
    with pytest.raises(PlanError, match=f"buffer 1 .*{words}"):
        plan_greedy([B(16, 0, 0), bad])


buffer_lists = st.lists(
    st.builds(
        B,
        size=st.one_of(st.sampled_from([0, 16, 32, 48, 64]), st.integers(0, 200)),
        first=st.integers(-1, 8),
        last=st.integers(0, 8),
        offset=st.one_of(st.none(), st.none(), st.none(), st.integers(0, 300)),
    ).map(lambda b: B(b.size, min(b.first, b.last), b.last, b.offset)),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(buffer_lists)
def test_fast_planner_matches_tflm_mirror(buffers: list[Buffer]) -> None:
    expected = _reference_greedy_offsets(buffers)
    arrays = buffer_arrays(buffers)
    assert plan_greedy(buffers).offsets == tuple(expected)
    assert _greedy_offsets(arrays, max_pairs=-1).tolist() == expected  # scan method
    assert _greedy_offsets(arrays, max_pairs=10**9).tolist() == expected  # neighbour lists


@settings(max_examples=200, deadline=None)
@given(buffer_lists.map(lambda bs: [B(b.size, b.first, b.last) for b in bs]))
def test_online_plans_are_valid_and_above_the_bound(buffers: list[Buffer]) -> None:
    plan = plan_greedy(buffers)
    verify_plan(plan)
    assert lower_bound(buffers) <= plan.head_size


def _model_like(n: int, seed: int) -> list[Buffer]:
    rng = np.random.default_rng(seed)
    first = rng.integers(0, n // 2, n)
    last = first + rng.geometric(0.3, n)
    size = rng.integers(1, 1000, n) * 16
    return [B(int(s), int(f), int(l)) for s, f, l in zip(size, first, last)]


def test_ten_thousand_buffers_give_a_valid_plan() -> None:
    # Speed is a benchmark (benchmarks/planner.py), not a timed test.
    buffers = _model_like(10_000, 0)
    plan = plan_greedy(buffers)
    verify_plan(plan)


def test_heavily_overlapping_lifetimes_agree_on_a_larger_case() -> None:
    rng = np.random.default_rng(7)
    n = 400
    first = rng.integers(0, 30, n)
    last = first + rng.integers(0, 15, n)
    size = rng.choice([16, 32, 48, 64, 96, 160], n)
    buffers = [B(int(s), int(f), int(l)) for s, f, l in zip(size, first, last)]
    expected = _reference_greedy_offsets(buffers)
    arrays = buffer_arrays(buffers)
    assert _greedy_offsets(arrays, max_pairs=-1).tolist() == expected
    assert _greedy_offsets(arrays).tolist() == expected
