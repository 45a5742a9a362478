"""A sequence of a tagged union picks each item's member itself, as the union would.

``list[ContentBlock]`` (every tool result) structures each block by looking its
``type`` up and calling that member's hook directly, instead of through the union's hook
(:func:`trimcp.binding._strict._tagged_sequence`); anything unusual goes to the sequence
hook over the union. The property: for every such sequence type of the protocol, and for
any input (valid blocks, near misses, any JSON), both hooks agree exactly: the same
objects, or the same error.
"""

from __future__ import annotations

from typing import Any, get_args

import attrs
import cattrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

import trimcp.protocol as protocol
from trimcp.binding import converter
from trimcp.binding._constraints import checked_or_bare
from trimcp.binding._plan import plan_for_class
from trimcp.binding._strict import StrictHooks
from trimcp.binding._types import sequence_kind
from trimcp.binding._unions import UnionHooks

from ._strategies import JSON, near_misses, values_of

_UNIONS = UnionHooks(converter.get_structure_hook)
#: Sequence hooks without the tagged shortcut: every item through the union's hook.
_GENERAL = StrictHooks(converter, converter.get_structure_hook, lambda _: None)


def _tagged_sequence_types() -> list[Any]:
    found: dict[str, Any] = {}
    for cls in vars(protocol).values():
        if not (isinstance(cls, type) and attrs.has(cls)):
            continue
        for field in plan_for_class(cls).fields:
            tp = checked_or_bare(field.type)
            for candidate in (tp, *get_args(tp)):
                if sequence_kind(candidate) is None or not get_args(candidate):
                    continue
                if _UNIONS.tag_table(get_args(candidate)[0]) is not None:
                    found[repr(candidate)] = candidate
    return [found[k] for k in sorted(found)]


TYPES = _tagged_sequence_types()


def test_tool_results_and_sampling_take_the_shortcut() -> None:
    names = " ".join(repr(tp) for tp in TYPES)
    assert "ContentBlock" in names or "TextContent" in names, names
    hook = converter.get_structure_hook(list[protocol.ContentBlock])
    assert hook.__name__ == "structure_tagged_sequence"


def _outcome(hook: Any, value: Any, tp: Any) -> tuple[str, Any]:
    try:
        return "ok", hook(value, tp)
    except Exception as exc:  # the same error either way, whatever its kind
        return "error", _describe(exc)


def _describe(exc: BaseException) -> Any:
    notes = getattr(exc, "__notes__", [])
    if isinstance(exc, cattrs.BaseValidationError):
        return (type(exc), str(exc), notes, [_describe(e) for e in exc.exceptions])
    return (type(exc), str(exc), notes)


@st.composite
def _inputs(draw: st.DrawFn) -> tuple[Any, Any]:
    tp = draw(st.sampled_from(TYPES))
    elem = get_args(tp)[0]
    block = values_of(elem).map(lambda v: converter.unstructure(v, elem))
    items = st.lists(block | block.flatmap(near_misses) | JSON, max_size=4)
    return tp, draw(items | items | items | JSON)


@pytest.mark.parametrize("tp", TYPES, ids=repr)
def test_a_valid_list_structures_as_through_the_union(tp: Any) -> None:
    table = _UNIONS.tag_table(get_args(tp)[0])
    assert table is not None
    assert "text" in table[1]  # every type found has text blocks
    block = converter.unstructure(protocol.TextContent(text="hi"), protocol.TextContent)
    tagged, general = converter.get_structure_hook(tp), _GENERAL.sequence(tp)
    assert tagged([block, block], tp) == general([block, block], tp)
    assert isinstance(tagged([block], tp), sequence_kind(tp) or list)


@given(_inputs())
def test_tagged_and_general_sequences_agree(drawn: tuple[Any, Any]) -> None:
    tp, value = drawn
    ours = _outcome(converter.get_structure_hook(tp), value, tp)
    theirs = _outcome(_GENERAL.sequence(tp), value, tp)
    assert ours == theirs


def test_a_failing_block_is_reported_with_its_index() -> None:
    tp = list[protocol.ContentBlock]
    good = {"type": "text", "text": "a"}
    with pytest.raises(cattrs.BaseValidationError) as caught:
        converter.get_structure_hook(tp)([good, {"type": "text", "text": 5}], tp)
    assert _describe(caught.value) == _describe(_raised(_GENERAL.sequence(tp), tp))


def _raised(hook: Any, tp: Any) -> BaseException:
    try:
        hook([{"type": "text", "text": "a"}, {"type": "text", "text": 5}], tp)
    except Exception as exc:
        return exc
    raise AssertionError("no error")
