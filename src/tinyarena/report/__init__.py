"""Renderings of results: human text and JSON-ready dicts with stable keys."""

from __future__ import annotations

from tinyarena.report.data import plan_dict, size_dict
from tinyarena.report.text import render_plan, render_size

__all__ = ["plan_dict", "render_plan", "render_size", "size_dict"]
