"""The ``--patches`` candidate search: cut moves, bounds, and the never-worse rule."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tinyarena.arena import allocate_model
from tinyarena.model import read_model
from tinyarena.optimize import optimize_model
from tinyarena.optimize.patches import _moves, optimize_with_patches, rest_lower_bound
from tinyarena.planning import Buffer
from tinyarena.planning.bounds import lower_bound

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rewrite"))
from patch_models import mobilenet_like, wide_stem_model  # noqa: E402


@given(n=st.integers(3, 40), data=st.data())
def test_cut_moves_shift_a_run_of_boundaries_by_one_and_stay_valid(
        n: int, data: st.DataObject) -> None:
    k = data.draw(st.integers(1, min(n - 1, 6)))
    cuts = tuple(sorted(data.draw(st.sets(st.integers(1, n - 1), min_size=k, max_size=k))))
    for moved in _moves(cuts, n):
        points = (0, *moved, n)
        assert all(b > a for a, b in zip(points, points[1:]))
        diff = [m - c for m, c in zip(moved, cuts)]
        changed = [i for i, d in enumerate(diff) if d]
        assert changed and all(abs(diff[i]) == 1 for i in changed)
        assert changed == list(range(changed[0], changed[-1] + 1))  # one run
        assert len({diff[i] for i in changed}) == 1  # shifted together
    assert len(set(_moves(cuts, n))) == len(_moves(cuts, n))


def test_cut_moves_reach_a_two_boundary_shift() -> None:
    assert (5, 13, 21) in _moves((6, 14, 21), 28)


def test_rest_bound_of_the_whole_model_is_its_live_bytes_bound_plus_tail() -> None:
    layout = allocate_model(read_model(mobilenet_like()))
    buffers = [Buffer(b.size, b.first, b.last) for b in layout.buffers]
    assert rest_lower_bound(layout, -1) == lower_bound(buffers) + layout.tail
    bounds = [rest_lower_bound(layout, s) for s in range(-1, 10)]
    assert bounds == sorted(bounds, reverse=True)  # fewer operators after the split


def test_patched_result_is_never_larger_than_plain_optimize() -> None:
    for data in (mobilenet_like(), wide_stem_model()):
        plain = optimize_model(data, target="cortex-m4", time_budget_s=0.2)
        result = optimize_with_patches(data, target="cortex-m4", time_budget_s=0.2,
                                       search_budget_s=5.0)
        assert result.after.min_arena <= plain.after.min_arena
        if result.patches is None:
            assert any(n.startswith("patches:") for n in result.notes)
