"""render_memory_plan against rows worked out by hand from PrintMemoryPlan's rules."""

from __future__ import annotations

from tinyarena.planning import Buffer, Plan, plan_greedy, render_memory_plan
from tinyarena.planning.ascii import ordinal_character

B = Buffer


def test_five_buffer_chain_picture() -> None:
    # Offsets (50, 70, 40, 0, 0), head 90, so M = 90 and a column is 90/80 bytes:
    # id4 [0,50) -> columns [0, 44); id0 [50,60) -> [44, 53); id1 [70,90) -> [62, 80);
    # id2 [40,70) -> [35, 62); id3 [0,40) -> [0, 35).
    plan = plan_greedy([B(10, 0, 1), B(20, 1, 2), B(30, 2, 3), B(40, 3, 4), B(50, 0, 1)])
    expected = [
        "0 (id=0): size=10, offset=50, first_used=0 last_used=1",
        "1 (id=1): size=20, offset=70, first_used=1 last_used=2",
        "2 (id=2): size=30, offset=40, first_used=2 last_used=3",
        "3 (id=3): size=40, offset=0, first_used=3 last_used=4",
        "4 (id=4): size=50, offset=0, first_used=0 last_used=1",
        "   0: " + "4" * 44 + "0" * 9 + "." * 27 + " (1k)",
        "   1: " + "4" * 44 + "0" * 9 + "." * 9 + "1" * 18 + " (1k)",
        "   2: " + "." * 35 + "2" * 27 + "1" * 18 + " (1k)",
        "   3: " + "3" * 35 + "2" * 27 + "." * 18 + " (1k)",
        "   4: " + "3" * 35 + "." * 45 + " (1k)",
    ]
    assert render_memory_plan(plan) == "\n".join(expected) + "\n"


def test_small_plan_uses_80_byte_scale_stars_and_overdraw() -> None:
    # Buffer 1 lives one step -> '*'. Buffers 0 and 2 share bytes [8, 16) at step 1 -> '!'.
    # Kilobytes round up.
    plan = Plan((0, 24, 8), (B(16, 0, 1), B(16, 1, 1), B(1100, 1, 2)))
    text = render_memory_plan(plan).splitlines()
    assert text[1] == "* (id=1): size=16, offset=24, first_used=1 last_used=1"
    # M is now 1108 (offset 8 + 1100): columns = offset*80//1108.
    # id0 [0,16) -> [0, 1); id1 [24,40) -> [1, 2); id2 [8,1108) -> [0, 80).
    assert text[3] == "   0: 0" + "." * 79 + " (1k)"
    assert text[4] == "   1: !!" + "2" * 78 + " (2k)"
    assert text[5] == "   2: " + "2" * 80 + " (2k)"


def test_rows_start_at_zero_and_skip_unset_lifetimes() -> None:
    plan = Plan((0, 0), (B(40, -1, -1), B(8, 0, 0)))
    assert render_memory_plan(plan).splitlines()[2:] == [
        "   0: " + "*" * 8 + "." * 72 + " (1k)",
    ]
    assert render_memory_plan(Plan((), ())) == "   0: " + "." * 80 + " (0k)\n"


def test_ordinal_characters_wrap() -> None:
    assert [ordinal_character(i) for i in (0, 9, 10, 35, 36, 61, 62, 71)] == [
        "0", "9", "a", "z", "A", "Z", "0", "9"]
