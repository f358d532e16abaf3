"""Renderings of results: human text, JSON-ready dicts with stable keys, SVG and HTML."""

from __future__ import annotations

from tinyarena.report.data import plan_dict, size_dict
from tinyarena.report.explain import ArenaExplanation, explain_arena
from tinyarena.report.text import render_plan, render_size

__all__ = ["ArenaExplanation", "explain_arena", "plan_dict", "render_plan", "render_size",
           "size_dict"]
