"""The public surface: every name in ``tinyarena.__all__`` resolves, and nothing lazy is
left out of ``__all__``."""

from __future__ import annotations

import tinyarena


def test_all_names_resolve() -> None:
    for name in tinyarena.__all__:
        assert getattr(tinyarena, name) is not None, name


def test_lazy_names_are_exported() -> None:
    assert set(tinyarena._LAZY) <= set(tinyarena.__all__)


def test_errors_share_one_base() -> None:
    for name in tinyarena.errors.__all__:
        assert issubclass(getattr(tinyarena.errors, name), tinyarena.TinyArenaError)
