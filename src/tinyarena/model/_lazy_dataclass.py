"""Frozen dataclasses whose generated methods are made on first use, not at import.

``model.options`` declares one frozen dataclass per schema options table (about 150). Making a
dataclass compiles five or six methods; for all tables that was most of a cold ``tinyarena
size`` (0.2-0.3 s before anything was read). A model uses a handful of tables, so each class is
declared plain here and turned into the real dataclass (``dataclasses.dataclass(frozen=True)``,
in place: the class object never changes) the first time it is instantiated or asked for its
dataclass fields. After that it is an ordinary frozen dataclass in every respect.

Type checkers see ``dataclasses.dataclass`` itself (``options`` imports this one only at run
time), so they check the classes as the frozen dataclasses they become.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any, TypeVar

_T = TypeVar("_T", bound=type)


# Completion happens once per class; the lock keeps two threads' first uses from completing
# one class twice or seeing it half made (a synchronisation object, no data).
_COMPLETING = threading.Lock()


def _finish(cls: type) -> None:
    # ``cls.__dict__`` (not getattr): a subclass must not see its base's finished flag.
    if "__lazy_complete__" in cls.__dict__:
        return
    with _COMPLETING:
        if "__lazy_complete__" not in cls.__dict__:
            dataclasses.dataclass(frozen=True)(cls)
            type.__setattr__(cls, "__lazy_complete__", True)  # set last: all methods exist


class _LazyDataclassMeta(type):
    """Completes the dataclass on first instantiation or first dataclass-attribute lookup."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        _finish(cls)
        # then the ordinary construction (the check above is one dict lookup per instance)
        return type.__call__(cls, *args, **kwargs)

    def __getattr__(cls, name: str) -> Any:
        # Only reached for attributes the class lacks: the dataclass ones before completion.
        if name.startswith("__dataclass") or name == "__match_args__":
            _finish(cls)
            return type.__getattribute__(cls, name)
        raise AttributeError(f"type object {cls.__name__!r} has no attribute {name!r}")


def dataclass(*, frozen: bool) -> Any:
    """``@dataclass(frozen=True)`` with the methods generated on first use."""
    if not frozen:
        raise TypeError("the lazy dataclass only makes frozen dataclasses")

    def wrap(cls: _T) -> _T:
        namespace = {k: v for k, v in cls.__dict__.items()
                     if k not in ("__dict__", "__weakref__")}
        lazy: _T = _LazyDataclassMeta(cls.__name__, cls.__bases__, namespace)  # type: ignore
        return lazy

    return wrap


def declared_fields(cls: type) -> list[tuple[str, Any]]:
    """(name, default) of every field of ``cls`` in declaration order, without completing a
    lazy dataclass when the class body says it all (own annotations, plain defaults or
    ``field(default=...)``); any other class is completed and read with ``dataclasses.fields``.
    """
    if cls.__bases__ == (object,) and "__dataclass_fields__" not in cls.__dict__:
        result: list[tuple[str, Any]] = []
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            if "ClassVar" in str(annotation):
                break
            value = cls.__dict__.get(name, dataclasses.MISSING)
            if isinstance(value, dataclasses.Field):
                value = value.default
            if value is dataclasses.MISSING:
                break
            result.append((name, value))
        else:
            return result
    return [(f.name, _default(f)) for f in dataclasses.fields(cls)]


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    factory: Any = f.default_factory
    return dataclasses.MISSING if factory is dataclasses.MISSING else factory()


__all__ = ["dataclass", "declared_fields"]
