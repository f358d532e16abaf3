"""The options dataclasses are made lazily (model/_lazy_dataclass.py); they must behave as the
frozen dataclasses they are declared as, and the writers' specs must match their fields."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from tinyarena.model import options
from tinyarena.model._lazy_dataclass import dataclass, declared_fields


def test_specs_list_each_dataclass_field_and_default_in_order() -> None:
    for name, spec in options.OPTIONS_SPECS.items():
        want = [(f.name, f.default) for f in dataclasses.fields(spec.cls)]
        assert [(f.name, f.default) for f in spec.fields] == want, name


def test_lazy_classes_are_frozen_dataclasses() -> None:
    cls = options.Pool2DOptions
    a = cls(padding="VALID", stride_w=2)
    assert dataclasses.is_dataclass(a) and a == cls(padding="VALID", stride_w=2)
    assert hash(a) == hash(cls(padding="VALID", stride_w=2)) and a != cls()
    assert "stride_w=2" in repr(a)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.stride_w = 3  # type: ignore[misc]
    assert dataclasses.replace(a, stride_w=4).stride_w == 4
    assert pickle.loads(pickle.dumps(a)) == a
    assert isinstance(a, cls) and type(a) is cls


def test_fields_before_first_instance_and_field_defaults() -> None:
    @dataclass(frozen=True)
    class Fresh:
        x: int = 1
        y: tuple[int, ...] = dataclasses.field(default=())

    assert declared_fields(Fresh) == [("x", 1), ("y", ())]
    assert "__dataclass_fields__" not in Fresh.__dict__  # not completed by reading its fields
    assert [f.name for f in dataclasses.fields(Fresh)] == ["x", "y"]
    assert Fresh() == Fresh(1, ())
