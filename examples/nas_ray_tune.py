"""Architecture search for a microcontroller with the exact arena as a hard constraint.

Ray Tune samples DS-CNN / MobileNet-style candidates (``tinyarena.builder.search_space``); each
trial builds its candidate's ``.tflite`` and sizes it with ``tinyarena.batch.size_models`` for
every target the product ships on, exactly as TFLM's AllocateTensors would on each (CMSIS-NN
scratch, ESP-NN scratch, the allocator's own objects: no analytic estimate). A candidate whose
minimum arena exceeds the RAM budget on any target scores negative; among those that fit, the
search maximises multiply-accumulates, a stand-in for the accuracy a real search would train
for. Swap ``score`` for your validation accuracy and keep the constraint.

    pip install 'tinyarena[ray]' 'ray[tune]'
    python examples/nas_ray_tune.py --budget 64K --samples 64          # local Ray cluster
    RAY_ADDRESS=head:6379 python examples/nas_ray_tune.py --samples 2000  # an existing one

Sizing a candidate takes milliseconds, so one trial is cheap; Tune's own per-trial overhead
dominates. For more candidates per second, size whole batches in one task
(``size_models(candidates, targets, executor=...)``; see benchmarks/batch.py).
"""

from __future__ import annotations

import argparse
from typing import Any, Sequence

from tinyarena.batch import size_models
from tinyarena.builder.search_space import Candidate, ds_cnn
from tinyarena.cli_common import parse_size

TARGETS = ("cortex-m4", "cortex-m55", "cortex-m33")
STRIDES = {"early": (0, 1), "spread": (0, 2, 4), "late": (2, 4)}


def candidate(config: dict[str, Any]) -> Candidate:
    return Candidate(resolution=config["resolution"], channels=1, width=config["width"],
                     blocks=config["blocks"], stride_at=STRIDES[config["strides"]],
                     kernel=config["kernel"], classes=12)


def evaluate(config: dict[str, Any], targets: Sequence[str], budget: int) -> dict[str, Any]:
    """One trial's metrics: the exact minimum arena per target and the constrained score."""
    c = candidate(config)
    records = size_models([ds_cnn(c)], targets)
    errors = [r["error"]["message"] for r in records if "error" in r]
    if errors:
        return {"score": float("-inf"), "fits": False, "error": errors[0]}
    arena = {r["target"]: r["min_arena"] for r in records}
    worst = max(arena.values())
    fits = worst <= budget
    return {"score": float(c.macs()) if fits else float(budget - worst), "fits": fits,
            "worst_min_arena": worst, "macs": c.macs(),
            **{f"min_arena/{t}": n for t, n in arena.items()}}


def search(samples: int, targets: Sequence[str], budget: int, seed: int = 0) -> Any:
    import ray
    from ray import tune

    if not ray.is_initialized():
        ray.init(address=None, include_dashboard=False, logging_level="ERROR",
                 log_to_driver=False)

    def trial(config: dict[str, Any]) -> None:
        tune.report(evaluate(config, targets, budget))

    space = {"resolution": tune.choice([32, 40, 48, 64, 96]),
             "width": tune.choice([4, 8, 12, 16, 24, 32]),
             "blocks": tune.randint(1, 9),
             "kernel": tune.choice([3, 5]),
             "strides": tune.choice(sorted(STRIDES))}
    tuner = tune.Tuner(trial, param_space=space, tune_config=tune.TuneConfig(
        num_samples=samples, metric="score", mode="max",
        search_alg=tune.search.BasicVariantGenerator(random_state=seed)))
    return tuner.fit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=parse_size, default=parse_size("64K"),
                        help="arena bytes available on every target (default 64K)")
    parser.add_argument("--samples", type=int, default=32, help="candidates to try")
    parser.add_argument("--target", action="append", default=None,
                        help=f"a target to fit (repeat; default {', '.join(TARGETS)})")
    args = parser.parse_args()
    targets = args.target or list(TARGETS)
    results = search(args.samples, targets, args.budget)
    best = results.get_best_result()
    print(f"best of {args.samples} candidates for {', '.join(targets)} within "
          f"{args.budget:,} bytes: {candidate(best.config)}")
    for key, value in sorted(best.metrics.items()):
        if key.startswith("min_arena/") or key in ("macs", "fits", "worst_min_arena"):
            print(f"  {key}: {value:,}" if isinstance(value, int) and not isinstance(
                value, bool) else f"  {key}: {value}")


if __name__ == "__main__":
    main()
