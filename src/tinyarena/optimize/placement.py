"""Placements that beat TFLM's greedy: certified against the live-bytes lower bound.

TFLM places buffers largest first at the lowest gap. That meets the lower bound (the largest
total of bytes live at one step) on most chain-like models, but strands a buffer on some, and
it is not monotone. ``search_plan`` keeps the best of several cheap candidates and stops as
soon as one reaches the bound, which proves it optimal:

1. TFLM's own greedy (so the result is never worse than what TFLM would do);
2. the same first-fit gap rule with other visiting orders (size then lifetime length, area,
   lifetime length, first use), which planning-notes.md found closes the greedy's misses;
3. two-sided ("ping-pong") placement for chains: buffers alternate between the bottom and
   the top of an arena of lower-bound height;
4. without offline offsets: the exact branch and bound over canonical solutions
   (``planning.canonical``, MiniMalloc's method, extended to overlap links), first at the
   lower bound, where a plan is optimal by definition, then bisecting towards it; it proves
   optimality when it exhausts a capacity, and returns the best plan found when the budget
   ends. It needs no extra package;
5. with links, when OR-Tools is installed and the in-house search left the plan unproven, an
   exact CP-SAT model for small instances (an optional accelerator: where it changes the
   result, ``SearchResult.notes`` says so);
6. randomised orders until the time budget runs out.

The budget is a deadline on ``clock``: every step checks it inside its loops, so that the call
returns within the budget at every scale (only TFLM's own greedy, the baseline every answer
needs, always runs to the end; with links on small instances the exact search also gets at
least ``EXACT_FLOOR_S``, the tolerance CP-SAT had).

Everything here sees sizes and lifetimes only (``planning.Buffer``), never models.

Links (``Link``) carry rule (c) of ``optimize.overlap``: buffer ``b`` may overlap buffer ``a``
while both are live, provided ``offset[b] <= offset[a] + max_delta`` (the output starts at most
``max_delta`` bytes above its input; usually below it). Otherwise b must sit wholly above or
below a as usual. With links, the bound subtracts each linked pair's largest possible overlap at
the steps where both are live; the exact searches replace the pair's disjunction by "b at most
max_delta above a, or b above a's end"; the heuristics add a first-fit whose forbidden start
intervals honour the same rule, in several orders. A ``max_delta`` below ``-size_b`` is raised
to it (b wholly below a is always allowed).
"""

from __future__ import annotations

import importlib.util
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from tinyarena.planning import Buffer, Plan, buffer_arrays, lower_bound, verify_plan
from tinyarena.planning.buffers import BufferArrays
from tinyarena.planning.canonical import Link, link_intervals, minimize_height
from tinyarena.planning.greedy import Deadline, first_fit_offsets, greedy_order

EXACT_MAX_BUFFERS = 400
"""Above this many online buffers the CP-SAT model (used with overlap links) is not attempted
(it rarely helps there within a short budget, and building it costs more than the
heuristics)."""

EXACT_FLOOR_S = 0.2
"""With overlap links and at most ``EXACT_MAX_BUFFERS`` buffers, the exact search runs for at
least this long even when the budget is spent (the budget's tolerance): on a loaded machine,
start-up and the model's emulation can use up a one-second budget, and the optimizer's small
linked problems are then proven in a few milliseconds to tens of milliseconds."""

CANONICAL_MAX_BUFFERS = 5000
"""Above this many buffers the canonical branch and bound is not attempted: its sweep and
per-node work grow with the buffer count, and heuristics are the better use of the budget."""


def _unit(arrays: BufferArrays, links: Sequence[Link] = ()) -> int:
    """The granularity of every size and link shift (16 for TFLM's rounded buffers and the
    optimizer's aligned margins): every offset, so every head, is a multiple of it, and the
    exact search's capacities step by it."""
    values = arrays.sizes[arrays.sizes > 0].tolist() + [abs(k.max_delta) for k in links]
    return max(int(np.gcd.reduce(np.asarray(values, dtype=np.int64))) if values else 1, 1)


def link_overlap(size_a: int, size_b: int, max_delta: int) -> int:
    """Most bytes b can share with a when it starts at a + t for some t <= max_delta."""
    if max_delta >= 0:
        return min(size_a, size_b)
    return max(0, min(size_a, size_b + max_delta))


def linked_lower_bound(buffers: Sequence[Buffer], links: Sequence[Link] = ()) -> int:
    """``planning.lower_bound`` minus, at each step, the largest overlap of every linked pair
    live at that step. The union of the live buffers is at least their total minus the pairwise
    overlaps (Bonferroni), and only linked pairs may overlap, so no plan can be smaller."""
    if not links:
        return lower_bound(buffers)
    times: list[int] = []
    deltas: list[int] = []
    for buf in buffers:
        times += [buf.first, buf.last + 1]
        deltas += [buf.size, -buf.size]
    for link in links:
        a, b = buffers[link.a], buffers[link.b]
        first, last = max(a.first, b.first), min(a.last, b.last)
        if first <= last:
            credit = link_overlap(a.size, b.size, link.max_delta)
            times += [first, last + 1]
            deltas += [-credit, credit]
    t = np.asarray(times, dtype=np.int64)
    order = np.argsort(t, kind="stable")
    t, level = t[order], np.cumsum(np.asarray(deltas, dtype=np.int64)[order])
    step_end = np.append(t[1:] != t[:-1], True)
    return int(max(level[step_end].max(), 0)) if len(t) else 0


def link_allowed(links: Sequence[Link], offsets: Sequence[int]) -> Callable[[int, int], bool]:
    """verify_plan's predicate: a linked pair may overlap only at a permitted displacement."""
    limits = {(link.a, link.b): link.max_delta for link in links}

    def allowed(i: int, j: int) -> bool:
        for a, b in ((i, j), (j, i)):
            limit = limits.get((a, b))
            if limit is not None and offsets[b] - offsets[a] <= limit:
                return True
        return False

    return allowed


def _linked_first_fit(arrays: BufferArrays, order: np.ndarray,
                      links: Sequence[Link], stop: Deadline | None = None) -> np.ndarray | None:
    """First fit in ``order``: each buffer takes the lowest start outside every forbidden
    interval its placed, time-intersecting neighbours impose. A plain neighbour q forbids
    starts in (q - size, q_end); a linked input a forbids (a + max_delta, a_end) to its output;
    a linked output b forbids (b - size, b - max_delta) to its input."""
    n = len(arrays)
    sizes = arrays.sizes.tolist()
    firsts = arrays.firsts.tolist()
    lasts = arrays.lasts.tolist()
    partner: dict[tuple[int, int], tuple[str, int]] = {}
    for link in links:
        partner[(link.b, link.a)] = ("input", link.max_delta)
        partner[(link.a, link.b)] = ("output", link.max_delta)
    offsets = np.zeros(n, dtype=np.int64)
    placed: list[int] = []
    for step, i in enumerate(order.tolist()):
        if stop is not None and stop.passed(step):
            return None
        size = sizes[i]
        if arrays.fixed[i]:
            offsets[i] = int(arrays.offsets[i])
            placed.append(i)
            continue
        spans = []
        for q in placed:
            if firsts[q] > lasts[i] or firsts[i] > lasts[q] or sizes[q] == 0 or size == 0:
                continue
            oq = int(offsets[q])
            rel = partner.get((i, q))
            if rel is None:
                spans.append((oq - size, oq + sizes[q]))
            elif rel[0] == "input":  # q is i's input: i may start at most max_delta above q
                spans.append((oq + rel[1], oq + sizes[q]))
            else:  # q is i's output: q must start at most max_delta above i
                spans.append((oq - size, oq - rel[1]))
        start = 0
        for lo, hi in sorted(spans):
            if lo >= hi:
                continue
            if start <= lo:
                break
            start = max(start, hi)
        offsets[i] = start
        placed.append(i)
    return offsets


def _linked_orders(arrays: BufferArrays) -> dict[str, np.ndarray]:
    """Visiting orders for the linked first fit: TFLM's, and by first use either way."""
    index = np.arange(len(arrays), dtype=np.int64)
    fixed, online = index[arrays.fixed], index[~arrays.fixed]
    size, first = arrays.sizes[online], arrays.firsts[online]
    keys = {"greedy": (-online, -size), "first-use": (-size, first),
            "last-use": (-size, -arrays.lasts[online])}
    return {name: np.concatenate([fixed, online[np.lexsort(key)]]) for name, key in keys.items()}


@dataclass(frozen=True)
class SearchResult:
    """The best plan found, how it was found, and what is proven about it."""

    plan: Plan
    lower_bound: int
    greedy_head: int
    optimal: bool  # proven: head == lower bound, or the exact solver proved it
    method: str  # which candidate won: "greedy", "order:<name>", "ping-pong", "random", "exact",
    # "exact:cp-sat" (OR-Tools)
    elapsed_s: float
    notes: tuple[str, ...] = ()  # where OR-Tools changed the result, what it changed

    @property
    def head(self) -> int:
        return self.plan.head_size


def _head(arrays: BufferArrays, offsets: np.ndarray) -> int:
    return int((offsets + arrays.sizes).max()) if len(arrays) else 0


def _orders(arrays: BufferArrays) -> dict[str, np.ndarray]:
    """Alternative first-fit visiting orders; fixed buffers always go first, as in TFLM."""
    index = np.arange(len(arrays), dtype=np.int64)
    fixed = index[arrays.fixed]
    online = index[~arrays.fixed]
    size = arrays.sizes[online]
    length = (arrays.lasts - arrays.firsts + 1)[online]
    first = arrays.firsts[online]
    keys = {
        "size-length": (-length, -size),
        "area": (-size, -(size * length)),
        "length-size": (-size, -length),
        "first-use": (-size, first),
    }
    return {name: np.concatenate([fixed, online[np.lexsort(key)]]) for name, key in keys.items()}


def _two_sided(arrays: BufferArrays, height: int,
               stop: Deadline | None = None) -> np.ndarray | None:
    """Ping-pong: by first use, each buffer goes to the bottom or the top of ``height`` bytes,
    alternating preference, at the first offset (from that side) free of live neighbours.
    Returns offsets, or None when something would not fit under ``height``."""
    n = len(arrays)
    if n == 0 or arrays.fixed.any():
        return None
    order = np.lexsort((-arrays.sizes, arrays.firsts))
    sizes = arrays.sizes.tolist()
    firsts = arrays.firsts.tolist()
    lasts = arrays.lasts.tolist()
    placed: list[tuple[int, int, int, int]] = []  # offset, end, first, last
    offsets = np.zeros(n, dtype=np.int64)
    prefer_top = False
    for step, i in enumerate(order.tolist()):
        if stop is not None and stop.passed(step):
            return None
        size, first, last = sizes[i], firsts[i], lasts[i]
        live = sorted((o, e) for o, e, f, la in placed if not (f > last or first > la))
        bottom = _lowest_gap(live, size)
        top = _highest_gap(live, size, height)
        long_lived = last > first
        choice: int | None
        if prefer_top and long_lived:
            choice = top if top is not None else (bottom if bottom + size <= height else None)
        else:
            choice = bottom if bottom + size <= height else top
        if choice is None:
            return None
        if long_lived:
            prefer_top = not prefer_top
        offsets[i] = choice
        placed.append((choice, choice + size, first, last))
    return offsets


def _lowest_gap(live: list[tuple[int, int]], size: int) -> int:
    candidate = 0
    for offset, end in live:
        if offset - candidate >= size:
            return candidate
        candidate = max(candidate, end)
    return candidate


def _highest_gap(live: list[tuple[int, int]], size: int, height: int) -> int | None:
    ceiling = height
    for offset, end in sorted(live, key=lambda e: -e[1]):
        if ceiling - end >= size:
            return ceiling - size
        ceiling = min(ceiling, offset)
    return ceiling - size if ceiling >= size else None


def _exact(arrays: BufferArrays, hint: np.ndarray, upper: int, bound: int,
           budget_s: float, links: Sequence[Link] = (),
           stop: Deadline | None = None) -> tuple[np.ndarray, bool] | None:
    """CP-SAT: offsets in 16-byte units when every size and fixed offset allows it, a
    disjunction for every pair of time-intersecting buffers, minimise the head. Returns
    (offsets, proven_optimal) or None when OR-Tools is absent or nothing was found."""
    try:
        from ortools.sat.python import cp_model
    except ImportError:
        return None
    n = len(arrays)
    sizes = arrays.sizes.tolist()
    given = arrays.offsets.tolist()
    fixed = arrays.fixed.tolist()
    unit = 16 if all(s % 16 == 0 for s in sizes) and all(
        o % 16 == 0 for o, f in zip(given, fixed) if f) and all(
        link.max_delta % 16 == 0 for link in links) else 1
    # Linked pairs: o_j - o_i outside the open interval (lo, hi), every link of the pair counted.
    limits = link_intervals(sizes, [k for k in links if not (fixed[k.a] or fixed[k.b])])
    model = cp_model.CpModel()
    top = upper // unit + 1
    offs = []
    for i in range(n):
        if fixed[i]:
            offs.append(model.new_constant(given[i] // unit))
        else:
            offs.append(model.new_int_var(0, max(top - sizes[i] // unit, 0), f"o{i}"))
    head = model.new_int_var(bound // unit, top, "head")
    for i in range(n):
        model.add(offs[i] + sizes[i] // unit <= head)
    firsts = arrays.firsts.tolist()
    lasts = arrays.lasts.tolist()
    for i in range(n):
        if stop is not None and stop.passed(i):
            return None  # building the model alone spent the budget
        for j in range(i + 1, n):
            if firsts[i] > lasts[j] or firsts[j] > lasts[i]:
                continue
            if fixed[i] and fixed[j]:
                continue
            if sizes[i] == 0 or sizes[j] == 0:
                continue
            interval = limits.get((i, j))
            if interval is not None:
                lo, hi = interval
                if lo + 1 >= hi:
                    continue  # the links permit every overlap of this pair
                below = model.new_bool_var(f"b{i}_{j}")
                model.add(offs[j] <= offs[i] + lo // unit).only_enforce_if(below)
                model.add(offs[j] >= offs[i] + hi // unit).only_enforce_if(below.Not())
                continue
            below = model.new_bool_var(f"b{i}_{j}")
            model.add(offs[i] + sizes[i] // unit <= offs[j]).only_enforce_if(below)
            model.add(offs[j] + sizes[j] // unit <= offs[i]).only_enforce_if(below.Not())
    for i in range(n):
        if not fixed[i]:
            model.add_hint(offs[i], int(hint[i]) // unit if unit > 1 else int(hint[i]))
    model.minimize(head)
    solver = cp_model.CpSolver()
    if stop is not None:
        budget_s = min(budget_s, stop.remaining())
    # A floor of 0.2 s (the budget's tolerance) lets CP-SAT finish its presolve and prove
    # small models even when importing OR-Tools (once per process) used up the time.
    solver.parameters.max_time_in_seconds = max(budget_s, 0.2)
    solver.parameters.num_workers = 2
    status = solver.Solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    result = np.array([solver.Value(v) * unit for v in offs], dtype=np.int64)
    return result, status == cp_model.OPTIMAL


def search_plan(buffers: Sequence[Buffer], *, time_budget_s: float = 1.0, seed: int = 0,
                exact: bool = True, clock: Callable[[], float] = time.perf_counter,
                links: Sequence[Link] = (), deadline: float | None = None,
                cp_sat: bool = True,
                progress: Callable[[str], None] | None = None) -> SearchResult:
    """The smallest plan found within ``time_budget_s`` (or by ``deadline``, a ``clock``
    value, when given: callers pass the deadline of their whole call); never larger than
    TFLM's greedy.

    The result is verified (no two live buffers overlap, fixed offsets kept; linked pairs
    only at a permitted displacement) before it is returned. ``optimal`` is True only when
    proven: the head equals the lower bound, or an exact search proved it. ``progress``, when
    given, receives a line whenever the exact search lowers the plan or raises what is proven.
    ``cp_sat`` False leaves OR-Tools out (callers whose ``clock`` counts work, not time).
    """
    start = clock()
    if deadline is None:
        deadline = start + max(time_budget_s, 0.0)
    stop = Deadline(deadline, clock)
    arrays = buffer_arrays(buffers)
    links = tuple(Link(k.a, k.b, max(k.max_delta, -int(arrays.sizes[k.b]))) for k in links
                  if not (arrays.fixed[k.a] or arrays.fixed[k.b]))
    bound = linked_lower_bound(buffers, links)
    best = first_fit_offsets(arrays, greedy_order(arrays))
    greedy_head = best_head = _head(arrays, best)
    method = "greedy"
    optimal = best_head <= bound

    def consider(offsets: np.ndarray | None, name: str) -> None:
        nonlocal best, best_head, method, optimal
        if offsets is None:
            return
        head = _head(arrays, offsets)
        if head < best_head:
            best, best_head, method = offsets, head, name
            optimal = head <= bound

    if not optimal and links:
        for name, order in _linked_orders(arrays).items():
            consider(_linked_first_fit(arrays, order, links, stop), f"linked:{name}")
            if optimal or clock() > deadline:
                break
    if not optimal:
        for name, order in _orders(arrays).items():
            consider(first_fit_offsets(arrays, order, stop), f"order:{name}")
            if optimal or clock() > deadline:
                break
    if not optimal and clock() < deadline:
        consider(_two_sided(arrays, bound, stop), "ping-pong")
    # CP-SAT's own time limit is wall-clock: a caller counting its budget in work (cp_sat
    # False) keeps the in-house exact search only, so its result cannot depend on the machine.
    cp_sat = cp_sat and exact and bool(links) and (~arrays.fixed).sum() <= EXACT_MAX_BUFFERS \
        and _has_ortools()
    small_linked = bool(links) and len(arrays) <= EXACT_MAX_BUFFERS
    if not optimal and exact and not arrays.fixed.any() \
            and len(arrays) <= CANONICAL_MAX_BUFFERS and (clock() < deadline or small_linked):
        # With OR-Tools as a second exact search, the in-house one leaves it half the time.
        now = clock()
        until = deadline if not cp_sat else now + 0.5 * (deadline - now)
        if small_linked:
            until = max(until, now + EXACT_FLOOR_S)
        report = None if progress is None else _reporter(progress, start, clock)
        minimized = minimize_height(buffers, best.tolist(), deadline=until, clock=clock,
                                    unit=_unit(arrays, links), links=links, progress=report)
        consider(np.asarray(minimized.offsets, dtype=np.int64), "exact")
        if minimized.optimal and minimized.height <= best_head:
            optimal = True
    notes: tuple[str, ...] = ()
    if not optimal and cp_sat:
        remaining = deadline - clock()
        if remaining > 0.02:
            before = best_head
            found = _exact(arrays, best, best_head, bound, remaining * 0.8, links, stop)
            if found is not None:
                offsets, proven = found
                consider(offsets, "exact:cp-sat")
                if proven:
                    optimal = True
                notes = _cp_sat_notes(before, best_head, optimal)
    rng = np.random.default_rng(seed)
    if not optimal:
        index = np.arange(len(arrays), dtype=np.int64)
        fixed, online = index[arrays.fixed], index[~arrays.fixed]
        sizes = arrays.sizes[online].astype(np.float64)
        while clock() < deadline and not optimal:
            noisy = sizes * rng.uniform(0.7, 1.3, size=sizes.shape)
            order = np.concatenate([fixed, online[np.argsort(-noisy, kind="stable")]])
            if links:
                consider(_linked_first_fit(arrays, order, links, stop), "linked:random")
            else:
                consider(first_fit_offsets(arrays, order, stop), "random")
    plan = Plan(tuple(int(o) for o in best), tuple(buffers))
    verify_plan(plan, allowed_overlaps=link_allowed(links, plan.offsets) if links else None)
    return SearchResult(plan, bound, greedy_head, optimal, method, clock() - start, notes)


def _reporter(progress: Callable[[str], None], start: float, clock: Callable[[], float]
              ) -> Callable[[int, int, bool], None]:
    """``minimize_height``'s progress as one line: elapsed time, best plan, what is proven."""
    def report(height: int, floor: int, proven: bool) -> None:
        where = "proven optimal" if proven else f"no plan below {floor:,} bytes exists"
        progress(f"{clock() - start:.1f} s: best plan {height:,} bytes; {where}")
    return report


def _has_ortools() -> bool:
    """Whether OR-Tools (an optional extra) is installed; found, not imported, so that a
    search the in-house exact search settles never pays for importing it."""
    try:
        return importlib.util.find_spec("ortools") is not None
    except (ImportError, ValueError):
        return False


def _cp_sat_notes(before: int, after: int, proven: bool) -> tuple[str, ...]:
    """What OR-Tools changed, in words, so that a result that differs from a lean install's
    says so (the in-house search alone had ``before``, unproven)."""
    if after < before:
        proof = "proven optimal" if proven else "not proven optimal"
        return (f"OR-Tools (CP-SAT) found a plan of {after} bytes ({proof}); the in-house "
                f"search alone had {before} bytes, not proven, within the budget",)
    if proven:
        return (f"OR-Tools (CP-SAT) proved the plan of {after} bytes optimal; the in-house "
                f"search alone found it but did not prove it within the budget",)
    return ()


__all__ = ["EXACT_FLOOR_S", "EXACT_MAX_BUFFERS", "Link", "SearchResult", "link_allowed",
           "link_overlap", "linked_lower_bound", "search_plan"]
