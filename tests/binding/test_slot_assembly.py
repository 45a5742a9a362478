"""Objects built by writing their slots are the objects their class would build.

A generated structure function writes each slot of a plain attrs class itself instead of
calling the class (:mod:`trimcp.binding._assembly`). The property: for every protocol
class, and for any input, that function and one that calls the class with keywords agree
exactly (the same attributes, set or unset, or the same error). The examples: a class
whose ``__init__`` does more than set attributes is always called.
"""

from __future__ import annotations

from typing import Any

import attrs
import cattrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

import trimcp.protocol as protocol
from trimcp.binding import converter
from trimcp.binding._assembly import slot_writers
from trimcp.binding._codegen import make_structure_fn
from trimcp.binding._plan import plan_for_class

from ._strategies import JSON, values_of

CLASSES = sorted(
    (c for c in vars(protocol).values() if isinstance(c, type) and attrs.has(c)),
    key=lambda c: c.__qualname__,
)
ASSEMBLED = [c for c in CLASSES if slot_writers(c) is not None]


def _pair(cls: type) -> tuple[Any, Any]:
    plan = plan_for_class(cls)

    def by_keywords(**members: Any) -> Any:
        return cls(**members)

    return (
        make_structure_fn(plan, converter, cls, lambda _: False),
        make_structure_fn(plan, converter, by_keywords, lambda _: False),
    )


def _state(obj: object) -> dict[str, Any]:
    missing = object()
    return {f.name: getattr(obj, f.name, missing) for f in attrs.fields(type(obj))}


def _outcome(structure: Any, value: Any) -> tuple[str, Any]:
    try:
        obj = structure(value)
    except cattrs.ClassValidationError as exc:
        return "error", [repr(e) for e in exc.exceptions]
    return "ok", (type(obj), _state(obj), obj)


def test_most_protocol_classes_are_assembled() -> None:
    # The fast path is the rule for the vocabulary, not an exception.
    assert len(ASSEMBLED) >= len(CLASSES) * 3 // 4, sorted(
        c.__qualname__ for c in set(CLASSES) - set(ASSEMBLED)
    )
    assert protocol.TextContent in ASSEMBLED
    assert protocol.CallToolResult in ASSEMBLED


def _wire_values(tp: Any) -> st.SearchStrategy[Any]:
    """The wire form of values of *tp* (drawn, then written by the converter), so that
    most drawn inputs are accepted; JSON of any shape covers the refusals."""
    return values_of(tp).map(lambda v: converter.unstructure(v, tp))


@st.composite
def _inputs(draw: st.DrawFn) -> tuple[type, dict[str, Any]]:
    cls = draw(st.sampled_from(ASSEMBLED))
    plan = plan_for_class(cls)
    value: dict[str, Any] = {}
    for field in plan.fields:
        if field.is_tag:
            choice = draw(st.sampled_from(["tag", "tag", "other", "absent"]))
            if choice == "tag":
                value[field.wire] = field.tag
            elif choice == "other":
                value[field.wire] = draw(JSON)
        elif draw(st.booleans()) or field.required:
            value[field.wire] = draw(JSON | _wire_values(field.type))
    value.update(draw(st.dictionaries(st.text(max_size=3), JSON, max_size=2)))
    return cls, value


@given(_inputs())
def test_slot_writes_build_what_the_class_builds(drawn: tuple[type, dict[str, Any]]) -> None:
    cls, value = drawn
    assembled, called = _pair(cls)
    ours, theirs = _outcome(assembled, value), _outcome(called, value)
    assert ours[0] == theirs[0]
    if ours[0] == "ok":
        assert ours[1][:2] == theirs[1][:2]
        assert ours[1][2] == theirs[1][2]
    else:
        assert ours[1] == theirs[1]


def test_a_valid_result_is_assembled_with_defaults_and_factories() -> None:
    @attrs.frozen(kw_only=True)
    class Item:
        name: str
        tags: list[str] = attrs.Factory(list)
        note: str | None = None

    structure = make_structure_fn(plan_for_class(Item), converter, Item, lambda _: False)
    first, second = structure({"name": "a"}), structure({"name": "b"})
    assert first == Item(name="a")
    assert second.note is None
    assert first.tags == []
    assert first.tags is not second.tags
    assert structure({"name": "c", "tags": ["x"]}) == Item(name="c", tags=["x"])


def _validated() -> type:
    @attrs.define
    class Validated:
        x: int = attrs.field(validator=attrs.validators.gt(0))

    return Validated


def _converted() -> type:
    @attrs.define
    class Converted:
        x: int = attrs.field(converter=abs)

    return Converted


def _post_init() -> type:
    @attrs.define
    class PostInit:
        x: int
        seen: list[int] = attrs.field(init=False, factory=list)

        def __attrs_post_init__(self) -> None:
            self.seen.append(self.x)

    return PostInit


def _cached_hash() -> type:
    @attrs.frozen(cache_hash=True)
    class CachedHash:
        x: int

    return CachedHash


def _takes_self() -> type:
    @attrs.define
    class TakesSelf:
        x: int
        y: int = attrs.Factory(lambda self: self.x * 2, takes_self=True)

    return TakesSelf


def _own_init() -> type:
    @attrs.define(init=False)
    class OwnInit:
        x: int

        def __init__(self, x: int) -> None:
            self.x = x + 1

    return OwnInit


def _no_slots() -> type:
    @attrs.define(slots=False)
    class NoSlots:
        x: int

    return NoSlots


@pytest.mark.parametrize(
    "make",
    [_validated, _converted, _post_init, _cached_hash, _takes_self, _own_init, _no_slots],
)
def test_a_class_whose_init_does_more_is_called(make: Any) -> None:
    cls = make()
    assert slot_writers(cls) is None
    structure = make_structure_fn(plan_for_class(cls), converter, cls, lambda _: False)
    assert _state(structure({"x": 3})) == _state(cls(x=3))
