"""``structure_hook(tp)`` reads exactly as ``structure(value, tp)`` does: same value,
same error type and message, for object types (the generated function itself) and for
any other type (the general path)."""

from __future__ import annotations

from typing import Any

import cattrs
from hypothesis import given
from hypothesis import strategies as st

from trimcp.binding import structure, structure_hook
from trimcp.protocol import CallToolResult

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
results = st.fixed_dictionaries(
    {},
    optional={
        "content": st.lists(
            st.one_of(
                st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=5)}),
                st.dictionaries(st.sampled_from(["type", "text", "data"]), json_values, max_size=3),
            ),
            max_size=3,
        ),
        "isError": st.one_of(st.booleans(), json_values),
        "structuredContent": json_values,
        "_meta": json_values,
    },
)


def _outcome(read: Any, value: Any) -> tuple[str, Any]:
    try:
        return "ok", read(value)
    except cattrs.BaseValidationError as exc:
        return type(exc).__name__, str(exc)


@given(st.one_of(results, json_values))
def test_an_object_hook_reads_as_structure(value: Any) -> None:
    hook = structure_hook(CallToolResult)
    assert _outcome(hook, value) == _outcome(lambda v: structure(v, CallToolResult), value)


@given(json_values)
def test_any_other_hook_reads_as_structure(value: Any) -> None:
    hook = structure_hook(list[int])
    assert _outcome(hook, value) == _outcome(lambda v: structure(v, list[int]), value)
