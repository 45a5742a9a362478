"""THE converter: attrs classes <-> JSON-ready data, for every message trimcp reads or writes.

Policies:

- **Names**: the MCP vocabulary (trimcp's own classes) is camelCase on the wire, ``meta``
  is ``_meta``; a user's classes (attrs, dataclasses, ``TypedDict``) keep their Python
  names. The rule lives in one place (:mod:`trimcp.binding._plan`) and a field can
  override it with ``metadata={trimcp.protocol.WIRE_NAME: "..."}``.
- **Tags**: an ``init=False`` field with a one-value ``Literal`` type (``type`` of content
  blocks, ``mode`` of URL elicitation) is always written and, when read, must be present
  with exactly that value. Unions of such classes are dispatched on it.
- **Omission**: a member whose default is ``None`` is left out when it is ``None``; any
  other member is always written (a required ``x: int | None`` is written as ``null``).
- **Unknown keys** are ignored when reading the MCP vocabulary (forward compatibility)
  and refused in a user's classes (``unknown field(s) ...``); a class attribute
  ``__trimcp_forbid_extra__`` overrides either; an extra-keys field (capabilities) keeps
  them and writes them back.
- **Strict primitives, no coercion**: ``str`` accepts only str; ``int`` an int or an
  integral float (``5.0``, which JSON Schema calls an integer, becomes ``5``; never bool);
  ``float`` int or float (not bool); ``bool`` only bool; ``None`` only null; ``list[T]`` /
  ``tuple`` / ``set`` only JSON arrays; ``dict[str, T]`` and record classes only JSON
  objects; ``Literal`` and ``Enum`` only their exact values (``True`` is not ``1``).
- **More types**: dataclasses and ``TypedDict`` are records like attrs classes; pydantic
  models use pydantic (``_pydantic``); ``datetime``, ``date``, ``time``, ``UUID``,
  ``Path``, ``Decimal`` and ``bytes`` travel as strings (``_scalars``);
  ``Annotated[T, ...]`` constraints are checked after structuring (``_constraints``).
- **Unions**: ``X | None``; unions of primitives by exact JSON type; unions of classes by
  tag, else the first member that structures.
- **Pass-through**: JSON-native values (``Any``, primitives, lists / dicts of them) are
  neither copied nor walked, in either direction: the result shares them with the input.
- **Errors**: reading fails with :class:`cattrs.ClassValidationError` (objects) or
  :class:`cattrs.IterableValidationError` (arrays, maps), carrying notes that
  :func:`format_errors` turns into ``"expected int @ $.params.arguments.limit"``.
- **Speed**: hooks are generated once per type (straight-line code for each attrs class,
  primitive checks inlined) and cached by cattrs' dispatch; nothing is inspected per call.
"""

from __future__ import annotations

import enum
import pathlib
import threading
from collections.abc import Callable
from functools import partial
from typing import Annotated, Any, TypeVar, cast, get_args, get_origin, overload

import cattrs

from ._codegen import GENERATED_STRUCTURE, make_structure_fn, make_unstructure_fn
from ._plan import plan_for_class
from ._pydantic import structure_model, unstructure_model
from ._scalars import SCALAR_CLASSES, scalar_for
from ._strict import StrictHooks
from ._types import (
    NoneType,
    is_enum,
    is_literal,
    is_pydantic,
    is_record,
    is_typeddict,
    is_union,
    mapping_args,
    sequence_kind,
    strip_annotated,
)
from ._unions import UnionHooks
from ._writers import Writers

__all__ = ["converter", "make_converter", "structure", "structure_hook", "unstructure"]

T = TypeVar("T")


def _mentions(tp: Any, classes: set[type]) -> bool:
    if not classes:
        return False
    try:
        if tp in classes:
            return True
    except TypeError:  # unhashable Annotated metadata
        return False
    return any(_mentions(arg, classes) for arg in get_args(tp))


def _is_container(tp: Any) -> bool:
    return sequence_kind(tp) is not None or mapping_args(tp) is not None


def _is_annotated(tp: Any) -> bool:
    return get_origin(tp) is Annotated


def configure_converter(conv: cattrs.Converter) -> None:
    """Install trimcp's policies (see the module docstring) on *conv*."""
    lock = threading.RLock()  # hook generation only; never taken on the per-value path
    structuring: set[type] = set()
    unstructuring: set[type] = set()

    def hook_for(tp: Any) -> Any:
        if _mentions(tp, structuring):
            return conv.structure
        return conv.get_structure_hook(tp)

    def writer_for(tp: Any) -> Any:
        if _mentions(tp, unstructuring):
            return lambda value: conv.unstructure(value, tp)
        return conv.get_unstructure_hook(tp)

    unions = UnionHooks(hook_for)
    strict = StrictHooks(conv, hook_for, unions.tag_table)
    writers = Writers(conv, writer_for)

    def structure_attrs(cls: type) -> Any:
        with lock:
            structuring.add(cls)
            try:
                build = None if is_typeddict(cls) else cls
                return make_structure_fn(
                    plan_for_class(cls), conv, build, lambda t: _mentions(t, structuring)
                )
            finally:
                structuring.discard(cls)

    def unstructure_attrs(cls: type) -> Any:
        with lock:
            unstructuring.add(cls)
            try:
                return make_unstructure_fn(
                    plan_for_class(cls), conv, lambda t: _mentions(t, unstructuring)
                )
            finally:
                unstructuring.discard(cls)

    for base in (str, int, float, bool):
        conv.register_structure_hook(base, strict.primitive(base))
    # By class (cattrs has class hooks of its own for bytes and Path, which these replace;
    # a subclass of PurePath reaches the PurePath hook, which builds the subclass).
    for cls in SCALAR_CLASSES:
        conv.register_structure_hook(cls, strict.scalar(cls))
        conv.register_unstructure_hook(cls, _scalar_writer(cls))
    conv.register_structure_hook(pathlib.PurePath, strict.path)
    none_hook = strict.primitive(NoneType)
    conv.register_structure_hook_func(lambda t: t is NoneType, none_hook)
    # Function dispatch: the most recently registered predicate wins.
    conv.register_structure_hook_factory(is_enum, strict.enum)
    conv.register_structure_hook_factory(is_literal, strict.literal)
    conv.register_structure_hook_factory(lambda t: sequence_kind(t) is not None, strict.sequence)
    conv.register_structure_hook_factory(lambda t: mapping_args(t) is not None, strict.mapping)
    conv.register_structure_hook_factory(is_union, unions.union)
    conv.register_structure_hook_factory(is_record, structure_attrs)
    conv.register_structure_hook_factory(is_pydantic, structure_model)
    conv.register_structure_hook_factory(_is_annotated, strict.checked)

    # str / int subclasses that are enums (StrEnum, IntEnum, ``class X(str, Enum)``) reach
    # the class-registered primitive hooks first: write their value, not the member.
    for base in (str, int):
        conv.register_unstructure_hook(base, _enum_value_or_self)
    conv.register_unstructure_hook_factory(is_enum, writers.enum)
    conv.register_unstructure_hook_factory(is_literal, lambda _: _identity)
    conv.register_unstructure_hook_factory(lambda t: sequence_kind(t) is not None, writers.sequence)
    conv.register_unstructure_hook_factory(lambda t: mapping_args(t) is not None, writers.mapping)
    conv.register_unstructure_hook_factory(is_union, writers.union)
    conv.register_unstructure_hook_factory(is_record, unstructure_attrs)
    conv.register_unstructure_hook_factory(is_pydantic, lambda _: unstructure_model)
    conv.register_unstructure_hook_factory(
        _is_annotated, lambda tp: conv.get_unstructure_hook(strip_annotated(tp))
    )


def _identity(value: Any) -> Any:
    return value


def _scalar_writer(tp: Any) -> Any:
    scalar = scalar_for(tp)
    assert scalar is not None
    return scalar.write


def _enum_value_or_self(value: Any) -> Any:
    return value.value if isinstance(value, enum.Enum) else value


def make_converter() -> cattrs.Converter:
    """A fresh converter with trimcp's policies (for tests or isolated registrations)."""
    conv = cattrs.Converter(detailed_validation=True)
    configure_converter(conv)
    return conv


converter: cattrs.Converter = make_converter()
"""The one converter every layer uses. Register extra hooks on it only at import time."""


@overload
def structure(value: Any, tp: type[T]) -> T: ...
@overload
def structure(value: Any, tp: Any) -> Any: ...
def structure(value: Any, tp: Any) -> Any:
    """Read *value* (decoded JSON) as *tp*, strictly.

    Raises:
        cattrs.ClassValidationError: invalid input for an object type, or for a scalar
            type (the single error is wrapped so callers need one ``except``).
        cattrs.IterableValidationError: invalid input for a list, tuple, set or dict type.
    """
    try:
        return converter.structure(value, tp)
    except cattrs.BaseValidationError:
        raise
    except Exception as exc:
        raise cattrs.ClassValidationError(f"While structuring {tp!r}", [exc], object) from None


def structure_hook(tp: type[T]) -> Callable[[Any], T]:
    """``structure(value, tp)`` for one type, its hook looked up once: for a hot path
    that reads the same type every time (a client's ``tools/call`` results). Same
    result, same errors. For an object type the generated function itself comes back,
    which spares each read this module's and cattrs' dispatch (two calls); look it up
    after every hook is registered (at first use, not at import)."""
    hook = converter.get_structure_hook(tp)
    if hook in GENERATED_STRUCTURE:
        return cast("Callable[[Any], T]", hook)
    return partial(structure, tp=tp)


def unstructure(obj: Any, as_type: Any = None) -> Any:
    """Write *obj* as JSON-ready data (dicts, lists, str, int, float, bool, None).

    *as_type* picks the hooks of a declared type (e.g. a union or ``list[Block]``) instead
    of the runtime class of *obj*.
    """
    return converter.unstructure(obj, unstructure_as=as_type)
