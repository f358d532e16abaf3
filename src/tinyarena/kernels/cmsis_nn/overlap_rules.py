"""Every CMSIS-NN overlap rule, gathered from the kernel modules that keep them beside their
code (``OVERLAP_RULES`` in ``conv``, ``depthwise_conv``, ``pooling``, ``softmax``,
``fully_connected``; ADD, MUL and PAD in ``_overlap``). ``optimize/safety.py`` builds the
``cmsis-nn:<isa>`` rule sets from them."""

from __future__ import annotations

import importlib
from functools import lru_cache

from tinyarena.kernels.cmsis_nn._overlap import OVERLAP_RULES as _SHARED_RULES
from tinyarena.kernels.cmsis_nn._overlap import OverlapRule

RULE_MODULES = ("conv", "depthwise_conv", "pooling", "softmax", "fully_connected")


@lru_cache(maxsize=1)
def cmsis_overlap_rules() -> tuple[OverlapRule, ...]:
    """All rules; a key appears at most once per ISA class (checked: two rules for one code
    path on one ISA would make the rule set depend on their order)."""
    rules = list(_SHARED_RULES)
    for name in RULE_MODULES:
        module = importlib.import_module(f"tinyarena.kernels.cmsis_nn.{name}")
        rules.extend(module.OVERLAP_RULES)
    seen: set[tuple[str, str]] = set()
    for r in rules:
        for isa in r.isas:
            if (r.key, isa) in seen:
                raise ValueError(f"two CMSIS-NN overlap rules for {r.key} on {isa}")
            seen.add((r.key, isa))
    return tuple(rules)


__all__ = ["OverlapRule", "RULE_MODULES", "cmsis_overlap_rules"]
