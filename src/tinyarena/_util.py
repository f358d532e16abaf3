"""Leaf helpers shared by every layer. Imports nothing else from tinyarena."""

from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping


def align_up(value: int, alignment: int) -> int:
    """Smallest multiple of ``alignment`` that is >= ``value`` (alignment > 0)."""
    return -(-value // alignment) * alignment


def align_down(value: int, alignment: int) -> int:
    """Largest multiple of ``alignment`` that is <= ``value`` (alignment > 0)."""
    return (value // alignment) * alignment


def lazy_exports(package: str, table: Mapping[str, str], namespace: Mapping[str, Any]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` (PEP 562) for names imported on first use:
    ``table`` maps each public name to the module defining it, so importing the package costs
    nothing until a name is needed (the CLI's cold start)."""

    def getattr_(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def dir_() -> list[str]:
        return sorted(set(namespace) | set(table))

    return getattr_, dir_
