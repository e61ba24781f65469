"""``records.dataclass`` behaves as ``dataclasses.dataclass`` does (it only builds classes faster)."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any, ClassVar

import pytest

from stream_doctor import records


def shapes(decorate: Any) -> dict[str, type]:
    """The same classes built by ``decorate`` (the standard decorator or ours)."""

    @decorate(frozen=True, slots=True)
    class Base:
        kind: ClassVar[str] = "base"
        pos: int
        message: int | None

    @decorate(frozen=True, slots=True)
    class Child(Base):
        kind: ClassVar[str] = "child"
        key: str
        extra: tuple[int, ...] = ()

    @decorate(frozen=True)
    class Plain:
        """Documented."""

        name: str
        items: list[int] = dataclasses.field(default_factory=list)
        related: tuple[str, ...] = dataclasses.field(default=(), kw_only=True)

    @decorate(slots=True)
    class Mutable:
        pos: int
        value: Any = None

    @decorate(frozen=True, slots=True)
    class Single:
        only: str

    @decorate(frozen=True)
    class Empty:
        pass

    @decorate(frozen=True)
    class Hidden:
        shown: int
        secret: str = dataclasses.field(default="x", repr=False, compare=False)
        later: int = dataclasses.field(default=0, init=False)

    @decorate
    class Bare:
        a: int

    for cls in (Base, Child, Plain, Mutable, Single, Empty, Hidden, Bare):  # same names in both reprs
        cls.__qualname__ = cls.__name__
    return {cls.__name__: cls for cls in (Base, Child, Plain, Mutable, Single, Empty, Hidden, Bare)}


STANDARD = shapes(dataclasses.dataclass)
OURS = shapes(records.dataclass)
globals().update(OURS)  # module attributes, so that pickle finds them


def instances(classes: dict[str, type]) -> list[Any]:
    c = classes
    return [
        c["Base"](1, None),
        c["Child"](2, 0, "k"),
        c["Child"](2, 0, "k", (1, 2)),
        c["Plain"]("n"),
        c["Plain"]("n", [1], related=("r",)),
        c["Mutable"](3),
        c["Single"]("s"),
        c["Empty"](),
        c["Hidden"](1, "y"),
        c["Bare"](5),
    ]


@pytest.mark.parametrize("index", range(len(instances(STANDARD))))
def test_repr_equality_hash_and_fields_are_the_standard_ones(index: int) -> None:
    theirs, ours = instances(STANDARD)[index], instances(OURS)[index]
    again = instances(OURS)[index]
    assert repr(ours) == repr(theirs)
    assert ours == again and not (ours != again)
    assert [f.name for f in dataclasses.fields(ours)] == [f.name for f in dataclasses.fields(theirs)]
    assert type(ours).__match_args__ == type(theirs).__match_args__
    assert dataclasses.asdict(ours) == dataclasses.asdict(theirs)
    assert hasattr(type(ours), "__slots__") == hasattr(type(theirs), "__slots__")
    if type(theirs).__hash__ is None:
        assert type(ours).__hash__ is None
    elif type(theirs).__hash__ is object.__hash__:
        assert type(ours).__hash__ is object.__hash__
    else:
        try:
            expected = hash(theirs)
        except TypeError:  # a list among the fields: neither hashes
            with pytest.raises(TypeError):
                hash(ours)
        else:
            assert hash(ours) == hash(again) == expected  # the same tuple of values is hashed
    assert copy.deepcopy(ours) == ours
    assert pickle.loads(pickle.dumps(ours)) == ours


def test_equality_needs_the_same_class() -> None:
    base, child = OURS["Base"](1, None), OURS["Child"](1, None, "k")
    assert base != child and child != base
    assert OURS["Single"]("s") != ("s",)
    assert OURS["Hidden"](1, "a") == OURS["Hidden"](1, "b")  # compare=False


def test_frozen_instances_refuse_assignment_and_deletion() -> None:
    child = OURS["Child"](2, 0, "k")
    with pytest.raises(dataclasses.FrozenInstanceError):
        child.key = "other"
    with pytest.raises(dataclasses.FrozenInstanceError):
        del child.key
    mutable = OURS["Mutable"](3)
    mutable.value = 4
    assert mutable.value == 4
    with pytest.raises(AttributeError):
        mutable.other = 1  # type: ignore[attr-defined]  # slots


def test_replace_defaults_and_signature() -> None:
    child = OURS["Child"](2, 0, "k")
    assert dataclasses.replace(child, key="z") == OURS["Child"](2, 0, "z")
    first, second = OURS["Plain"]("a"), OURS["Plain"]("a")
    assert first.items is not second.items  # type: ignore[attr-defined]  # a fresh default each time
    assert OURS["Hidden"](1).later == 0  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        OURS["Plain"]("a", [], ("positional",))
    with pytest.raises(TypeError):
        OURS["Base"](1)
    assert OURS["Plain"].__doc__ == "Documented."
    assert dataclasses.is_dataclass(OURS["Empty"])


def test_inheriting_across_frozen_and_not_is_refused() -> None:
    with pytest.raises(TypeError):

        @records.dataclass(slots=True)
        class Thawed(OURS["Base"]):  # type: ignore[misc]
            more: int = 0


def _package_record_classes() -> list[type]:
    import importlib
    import pkgutil

    import stream_doctor

    found: dict[int, type] = {}
    for module in pkgutil.walk_packages(stream_doctor.__path__, "stream_doctor."):
        if module.name.endswith("__main__") or module.name.startswith(
            ("stream_doctor.scan", "stream_doctor.record.", "stream_doctor.clients.library")
        ):
            continue  # optional extras (dask, aiohttp, the real client libraries)
        for value in vars(importlib.import_module(module.name)).values():
            if isinstance(value, type) and "__records_fields__" in value.__dict__:
                found[id(value)] = value
    return list(found.values())


def test_every_record_class_reads_its_fields_as_the_standard_decorator_does() -> None:
    # What __init__, repr, eq and hash are built from (read here from the annotations) against the
    # Field objects the standard decorator makes for the same class (on first use of dataclasses.fields).
    classes = _package_record_classes()
    assert len(classes) > 150
    for cls in classes:
        ours = [
            (f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.hash, f.compare, f.kw_only)
            for f in cls.__records_fields__  # type: ignore[attr-defined]
        ]
        theirs = [
            (f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.hash, f.compare, bool(f.kw_only))
            for f in dataclasses.fields(cls)
        ]
        assert ours == theirs, cls
        assert cls.__match_args__ == tuple(f.name for f in dataclasses.fields(cls) if f.init and not f.kw_only)
