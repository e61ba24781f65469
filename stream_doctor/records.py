"""``dataclass`` and ``field`` as the standard library defines them, at a fraction of the import cost.

``dataclasses.dataclass`` compiles five or six small functions per class (``__init__``,
``__repr__``, ``__eq__``, ``__hash__``, and for frozen classes ``__setattr__``/``__delattr__``); with
more than a hundred record classes on the way to a first report, that compiling was a quarter of
``stream-doctor replay``'s start-up. Here only ``__init__`` is compiled (it is per-instance hot
code), and only when the class's first instance is made; the other methods are shared functions
reading the field names the class was built with.

Everything else is the standard implementation: fields, defaults, ``slots``, inheritance,
``dataclasses.fields``/``replace``/``asdict`` and ``__match_args__``. The behaviour is the same:
the same ``repr`` text, equality only between instances of the same class, the same hash,
``FrozenInstanceError`` on assignment, pickling of frozen slotted instances. Options the project
does not use (``order``, ``unsafe_hash``, ``InitVar``, ``weakref_slot``) fall back to the standard
decorator. mypy sees the standard ``dataclass`` itself.
"""

from __future__ import annotations

import dataclasses
import re
import sys
import typing
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass
    from dataclasses import field as field
else:
    field = dataclasses.field

    def dataclass(
        cls: type | None = None,
        /,
        *,
        init: bool = True,
        repr: bool = True,  # noqa: A002 - the standard decorator's own keyword
        eq: bool = True,
        order: bool = False,
        unsafe_hash: bool = False,
        frozen: bool = False,
        match_args: bool = True,
        kw_only: bool = False,
        slots: bool = False,
        weakref_slot: bool = False,
    ) -> Any:
        if order or unsafe_hash or weakref_slot:
            return dataclasses.dataclass(
                cls,
                init=init,
                repr=repr,
                eq=eq,
                order=order,
                unsafe_hash=unsafe_hash,
                frozen=frozen,
                match_args=match_args,
                kw_only=kw_only,
                slots=slots,
                weakref_slot=weakref_slot,
            )

        def wrap(cls: type) -> type:
            return _build(cls, init, repr, eq, frozen, match_args, kw_only, slots)

        return wrap if cls is None else wrap(cls)


_MISSING = dataclasses.MISSING


class _HasDefaultFactory:
    def __repr__(self) -> str:
        return "<factory>"


_HAS_DEFAULT_FACTORY = _HasDefaultFactory()


def _build(
    cls: type, init: bool, repr: bool, eq: bool, frozen: bool, match_args: bool, kw_only: bool, slots: bool
) -> type:
    own = cls.__dict__
    # what the standard decorator would leave alone because the class defines it
    has_init, has_repr, has_eq = "__init__" in own, "__repr__" in own, "__eq__" in own
    class_hash = own.get("__hash__", _MISSING)
    has_explicit_hash = not (class_hash is _MISSING or (class_hash is None and has_eq))
    if frozen and ("__setattr__" in own or "__delattr__" in own):
        raise TypeError(f"Cannot overwrite attribute __setattr__ or __delattr__ in class {cls.__name__}")
    for base in cls.__mro__[1:]:
        base_frozen = base.__dict__.get("__records_frozen__")
        if base_frozen is not None and base_frozen != frozen:
            raise TypeError(
                "cannot inherit frozen dataclass from a non-frozen one"
                if frozen
                else "cannot inherit non-frozen dataclass from a frozen one"
            )
    fields = _fields(cls, kw_only)
    undocumented = not cls.__doc__
    if fields is None:
        # a shape this module does not read itself: fields, defaults, __match_args__ and slots the
        # standard way, with no method compiled (its __dataclass_params__ say so)
        if undocumented:
            cls.__doc__ = "-"  # the standard decorator would read the signature of a class without __init__
        built: type = dataclasses.dataclass(
            cls, init=False, repr=False, eq=False, frozen=False, match_args=match_args, kw_only=kw_only, slots=slots
        )
        fields = tuple(_Spec.of(f) for f in dataclasses.fields(built))
        if any("InitVar" in str(f.type) for f in built.__dataclass_fields__.values()):  # type: ignore[attr-defined]
            raise TypeError(f"{cls.__name__}: InitVar is not supported here; use dataclasses.dataclass")
    else:
        built = _place(cls, fields, match_args, kw_only, slots)
    methods: dict[str, Any] = {"__records_frozen__": frozen, "__records_fields__": fields}
    if init and not has_init:
        methods["__init__"] = _init(built, fields, frozen, slots)
    if repr and not has_repr:
        methods["__repr__"] = _repr(tuple(f.name for f in fields if f.repr))
    compared = tuple(f.name for f in fields if f.compare)
    if eq and not has_eq:
        methods["__eq__"] = _eq(compared)
    if eq and not has_explicit_hash:
        if frozen:
            hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
            methods["__hash__"] = _hash(hashed)
        else:
            methods["__hash__"] = None
    if frozen:
        names = frozenset(f.name for f in fields)
        methods["__setattr__"] = _frozen_setattr(built, names)
        methods["__delattr__"] = _frozen_delattr(built, names)
        if slots and "__getstate__" not in own:
            methods["__getstate__"] = _getstate
        if slots and "__setstate__" not in own:
            methods["__setstate__"] = _setstate
    for name, method in methods.items():
        setattr(built, name, method)
    if undocumented:
        built.__doc__ = built.__name__ + "(" + ", ".join(f"{f.name}: {_type_name(f.type)}" for f in fields) + ")"
    return built


class _Spec:
    """A field as this module reads it: ``dataclasses.Field``'s attributes that building a class needs.

    The real ``Field`` objects (``dataclasses.fields``, ``replace``, ``asdict``) are made by the
    standard decorator the first time they are asked for (``_Twin``)."""

    __slots__ = ("name", "type", "default", "default_factory", "init", "repr", "hash", "compare", "kw_only")

    def __init__(
        self,
        name: str,
        type: Any,  # noqa: A002 - Field's own attribute name
        default: Any = _MISSING,
        default_factory: Any = _MISSING,
        init: bool = True,
        repr: bool = True,  # noqa: A002
        hash: bool | None = None,  # noqa: A002
        compare: bool = True,
        kw_only: bool = False,
    ) -> None:
        self.name, self.type, self.default, self.default_factory = name, type, default, default_factory
        self.init, self.repr, self.hash, self.compare, self.kw_only = init, repr, hash, compare, kw_only

    @classmethod
    def of(cls, f: dataclasses.Field[Any]) -> _Spec:
        return cls(f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.hash, f.compare, bool(f.kw_only))


#: An annotation the standard decorator reads as a class variable, when the module's ``ClassVar`` is typing's.
_CLASS_VAR = re.compile(r"\s*(?:typing\s*\.\s*)?ClassVar\s*(?:\[|$)")


def _fields(cls: type, kw_only: bool) -> tuple[_Spec, ...] | None:
    """The class's fields, inherited ones first, as the standard decorator finds them; None for a shape
    left to it (annotations that are not postponed strings, InitVar, KW_ONLY, a mutable default, a
    base built by the standard decorator, an abstract class)."""
    own = cls.__dict__
    annotations: dict[str, Any] = own.get("__annotations__", {})
    found: dict[str, _Spec] = {}
    for base in cls.__mro__[-2:0:-1]:
        base_fields = base.__dict__.get("__records_fields__")
        if base_fields is not None:
            found.update((f.name, f) for f in base_fields)
        elif "__dataclass_fields__" in base.__dict__:
            return None
    module = sys.modules.get(cls.__module__)
    typing_names = module.__dict__ if module is not None else {}
    for name, annotation in annotations.items():
        if not isinstance(annotation, str) or "InitVar" in annotation or "KW_ONLY" in annotation:
            return None
        if "ClassVar" in annotation:
            if not _CLASS_VAR.match(annotation):
                return None
            if annotation.lstrip().startswith("typing"):
                if typing_names.get("typing") is not typing:
                    return None
            elif typing_names.get("ClassVar") is not typing.ClassVar:
                return None
            if name in found:
                return None
            continue
        default = own.get(name, _MISSING)
        if isinstance(default, dataclasses.Field):
            spec = _Spec(
                name,
                annotation,
                default.default,
                default.default_factory,
                default.init,
                default.repr,
                default.hash,
                default.compare,
                kw_only if default.kw_only is _MISSING else bool(default.kw_only),
            )
        else:
            if default is not _MISSING and type(default).__hash__ is None:
                return None  # the standard decorator refuses a mutable default: let it say so
            spec = _Spec(name, annotation, default, kw_only=kw_only)
        found[name] = spec
    if any(isinstance(value, dataclasses.Field) and name not in annotations for name, value in own.items()):
        return None  # "is a field but has no type annotation": the standard decorator's error
    if getattr(cls, "__abstractmethods__", None):
        return None
    return tuple(found.values())


def _place(cls: type, fields: tuple[_Spec, ...], match_args: bool, kw_only: bool, slots: bool) -> type:
    """What the standard decorator does to the class but compile methods: class attributes for defaults
    (or slots), ``__match_args__``, and ``__dataclass_fields__``/``__dataclass_params__`` made on first use."""
    own = cls.__dict__
    annotations: dict[str, Any] = own.get("__annotations__", {})
    originals = {name: own[name] for name in annotations if name in own}
    own_fields = [f for f in fields if f.name in annotations]
    if match_args and "__match_args__" not in own:
        type.__setattr__(cls, "__match_args__", tuple(f.name for f in fields if f.init and not f.kw_only))
    if slots:
        namespace = dict(own)
        inherited: set[str] = set()
        for base in cls.__mro__[1:-1]:
            declared = base.__dict__.get("__slots__")
            if isinstance(declared, str):
                inherited.add(declared)
            elif declared is not None:
                inherited.update(declared)
        namespace["__slots__"] = tuple(f.name for f in fields if f.name not in inherited)
        for f in fields:
            namespace.pop(f.name, None)
        namespace.pop("__dict__", None)
        namespace.pop("__weakref__", None)
        qualname = cls.__qualname__
        cls = type(cls)(cls.__name__, cls.__bases__, namespace)
        cls.__qualname__ = qualname
    else:
        for f in own_fields:
            if isinstance(originals.get(f.name), dataclasses.Field):
                if f.default is _MISSING:
                    type.__delattr__(cls, f.name)
                else:
                    type.__setattr__(cls, f.name, f.default)
    twin = _Twin(cls, annotations, originals, kw_only)
    type.__setattr__(cls, "__dataclass_fields__", _Lazy(twin, "__dataclass_fields__"))
    type.__setattr__(cls, "__dataclass_params__", _Lazy(twin, "__dataclass_params__"))
    return cls


class _Twin:
    """Makes a class's ``__dataclass_fields__`` and ``__dataclass_params__`` the standard way, once, on
    a twin of the class (same bases, annotations and defaults, no slots), and puts them on the class."""

    def __init__(self, cls: type, annotations: dict[str, Any], originals: dict[str, Any], kw_only: bool) -> None:
        self.cls, self.annotations, self.originals, self.kw_only = cls, annotations, originals, kw_only

    def build(self) -> None:
        cls = self.cls
        if not isinstance(cls.__dict__.get("__dataclass_fields__"), _Lazy):
            return
        namespace: dict[str, Any] = {
            "__module__": cls.__module__,
            "__qualname__": cls.__qualname__,
            "__doc__": "-",
            "__annotations__": self.annotations,
            **self.originals,
        }
        twin = type(cls.__name__, cls.__bases__, namespace)
        dataclasses.dataclass(twin, init=False, repr=False, eq=False, kw_only=self.kw_only)
        for name in ("__dataclass_fields__", "__dataclass_params__"):
            type.__setattr__(cls, name, twin.__dict__[name])


class _Lazy:
    """``__dataclass_fields__`` or ``__dataclass_params__`` until first read (see ``_Twin``)."""

    __slots__ = ("twin", "name")

    def __init__(self, twin: _Twin, name: str) -> None:
        self.twin, self.name = twin, name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        self.twin.build()
        return self.twin.cls.__dict__[self.name]


def _type_name(annotation: Any) -> str:
    return annotation if isinstance(annotation, str) else getattr(annotation, "__name__", repr(annotation))


def _init(cls: type, fields: tuple[_Spec, ...], frozen: bool, slots: bool) -> Callable[..., None]:
    """``__init__`` with the standard decorator's signature and assignments, compiled on first use.

    Its source is written now (so a field order the standard decorator refuses is refused when the
    class is defined); compiling it waits for the first instance, and most record classes (an
    anomaly or a problem a capture does not have) are never instantiated in a run. The stub then
    puts the compiled method on the class, so later instances call it directly.
    """
    source, namespace = _init_source(cls, fields, frozen, slots)
    annotations = {**{f.name: f.type for f in fields if f.init}, "return": None}
    qualname = f"{cls.__qualname__}.__init__"

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        exec(source, namespace)  # noqa: S102 - the source is built from field names, as dataclasses does
        function: Callable[..., None] = namespace["__init__"]
        function.__qualname__ = qualname
        function.__annotations__ = annotations
        type.__setattr__(cls, "__init__", function)
        function(self, *args, **kwargs)

    __init__.__qualname__ = qualname
    __init__.__annotations__ = annotations
    return __init__


def _init_source(cls: type, fields: tuple[_Spec, ...], frozen: bool, slots: bool) -> tuple[str, dict[str, Any]]:
    """The source of ``__init__`` and the names it reads (defaults, factories)."""
    namespace: dict[str, Any] = {"__set": object.__setattr__, "__FACTORY": _HAS_DEFAULT_FACTORY}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    seen_default = False
    for f in fields:
        value: str | None
        default = f"__dflt_{f.name}"
        if f.default_factory is not _MISSING:
            namespace[default] = f.default_factory
            value = f"{default}() if {f.name} is __FACTORY else {f.name}" if f.init else f"{default}()"
        elif f.init:
            value = f.name
        elif slots and f.default is not _MISSING:
            namespace[default] = f.default
            value = default
        else:
            value = None  # the class attribute holds the default
        if f.init:
            if f.default_factory is not _MISSING:
                parameter = f"{f.name}=__FACTORY"
            elif f.default is not _MISSING:
                namespace[default] = f.default
                parameter = f"{f.name}={default}"
            else:
                parameter = f.name
            if f.kw_only:
                keyword.append(parameter)
            else:
                if "=" in parameter:
                    seen_default = True
                elif seen_default:
                    raise TypeError(f"non-default argument {f.name!r} follows default argument")
                positional.append(parameter)
        if value is not None:
            body.append(f"__set(self, {f.name!r}, {value})" if frozen else f"self.{f.name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    signature = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    return f"def __init__({signature}):\n " + "\n ".join(body or ["pass"]), namespace


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """A function from an instance to the tuple of these fields' values."""
    if not names:
        return lambda _: ()
    if len(names) == 1:
        name = names[0]
        return lambda instance: (getattr(instance, name),)
    getter: Callable[[Any], tuple[Any, ...]] = attrgetter(*names)
    return getter


def _repr(names: tuple[str, ...]) -> Callable[[Any], str]:
    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__


def _eq(names: tuple[str, ...]) -> Callable[[Any, object], Any]:
    values = _getter(names)

    def __eq__(self: Any, other: object) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return __eq__


def _hash(names: tuple[str, ...]) -> Callable[[Any], int]:
    values = _getter(names)

    def __hash__(self: Any) -> int:
        return hash(values(self))

    return __hash__


def _frozen_setattr(cls: type, names: frozenset[str]) -> Callable[[Any, str, Any], None]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        object.__setattr__(self, name, value)

    return __setattr__


def _frozen_delattr(cls: type, names: frozenset[str]) -> Callable[[Any, str], None]:
    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        object.__delattr__(self, name)

    return __delattr__


def _getstate(self: Any) -> list[Any]:
    return [getattr(self, f.name) for f in type(self).__records_fields__]


def _setstate(self: Any, state: list[Any]) -> None:
    for f, value in zip(type(self).__records_fields__, state, strict=True):
        object.__setattr__(self, f.name, value)
