"""``make_request`` / ``make_response`` are the constructors, made in one call.

They take a shortcut for plainly valid fields; for any fields at all they give the
same event as ``Request(...)`` / ``Response(...)``, or raise the same error.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from trimcp.wire import LocalProtocolError, Request, Response, make_request, make_response


class _Dict(dict[str, Any]):
    """A dict subclass: valid, but not the shortcut's exact class."""


ids = st.one_of(
    st.integers(), st.text(max_size=4), st.booleans(), st.none(), st.floats(), st.just(_Dict())
)
methods = st.one_of(st.text(max_size=6), st.none(), st.integers(), st.just(b"x"))
objects = st.one_of(
    st.none(),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.builds(_Dict),
    st.lists(st.integers(), max_size=2),
    st.text(max_size=2),
)


def _outcome(make: Any, **fields: Any) -> tuple[str, Any]:
    try:
        return "ok", make(**fields)
    except LocalProtocolError as exc:
        return "error", str(exc)


@given(ids, methods, objects)
def test_make_request_is_the_constructor(id: Any, method: Any, params: Any) -> None:
    made = _outcome(
        lambda **f: make_request(f["id"], f["method"], f["params"]),
        id=id,
        method=method,
        params=params,
    )
    assert made == _outcome(Request, id=id, method=method, params=params)


@given(ids, objects)
def test_make_response_is_the_constructor(id: Any, result: Any) -> None:
    made = _outcome(lambda **f: make_response(f["id"], f["result"]), id=id, result=result)
    assert made == _outcome(Response, id=id, result=result)
    if made[0] == "ok":
        assert type(made[1]) is Response
