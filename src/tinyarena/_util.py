"""Leaf helpers shared by every layer. Imports nothing else from tinyarena."""

from __future__ import annotations


def align_up(value: int, alignment: int) -> int:
    """Smallest multiple of ``alignment`` that is >= ``value`` (alignment > 0)."""
    return -(-value // alignment) * alignment


def align_down(value: int, alignment: int) -> int:
    """Largest multiple of ``alignment`` that is <= ``value`` (alignment > 0)."""
    return (value // alignment) * alignment
