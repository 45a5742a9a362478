"""RFC 6570 templates: expansion, matching, traversal refusal, and linear-time matching."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trimcp.server import UriTemplate, UriTemplateError
from trimcp.server._uri_template import MAX_URI_LENGTH

CASES = [
    ("test://template/{id}/data", "test://template/123/data", {"id": "123"}),
    ("test://x/{a,b}", "test://x/1,2", {"a": "1", "b": "2"}),
    ("test://x/{name}", "test://x/hello%20world", {"name": "hello world"}),
    ("file:///{+path}", "file:///a/b/c.txt", {"path": "a/b/c.txt"}),
    ("test://x{#frag}", "test://x#a/b", {"frag": "a/b"}),
    ("test://x{/a,b}", "test://x/1/2", {"a": "1", "b": "2"}),
    ("test://x{/seg*}", "test://x/1/2/3", {"seg": ["1", "2", "3"]}),
    ("test://x/y{.ext}", "test://x/y.json", {"ext": "json"}),
    ("test://x{;p}", "test://x;p=1", {"p": "1"}),
    ("test://s{?q,lang}", "test://s?q=cat&lang=en", {"q": "cat", "lang": "en"}),
    ("test://s{?q,lang}", "test://s?lang=en", {"lang": "en"}),
    ("test://s{?q}{&page}", "test://s?q=a&page=2", {"q": "a", "page": "2"}),
    ("test://s{?list}", "test://s?list=a,b", {"list": ["a", "b"]}),
    ("test://x{/p}{?q}", "test://x/seg?q=1", {"p": "seg", "q": "1"}),
    ("test://x/{id:3}", "test://x/abc", {"id": "abc"}),
    ("test://static", "test://static", {}),
]


@pytest.mark.parametrize(("template", "uri", "expected"), CASES)
def test_match(template: str, uri: str, expected: dict[str, object]) -> None:
    assert UriTemplate(template).match(uri) == expected


@pytest.mark.parametrize(
    ("template", "uri"),
    [
        ("test://template/{id}/data", "test://template/1/2/data"),
        ("test://template/{id}/data", "test://template/1/datax"),
        ("test://template/{id}/data", "other://template/1/data"),
        ("test://x/{id:3}", "test://x/abcd"),
        ("test://x{/a}", "test://x/1/2"),
        ("test://s{?q}", "test://s?other=1"),
        ("test://static", "test://static/"),
    ],
)
def test_no_match(template: str, uri: str) -> None:
    assert UriTemplate(template).match(uri) is None


@pytest.mark.parametrize(
    "uri",
    [
        "file:///a/../b",
        "file:///..",
        "file:///a/./b",
        "file:///a/%2e%2e/b",
        "file:///a/%2E%2e/b",
        "file:///a/.%2E/b",
        "file:///a\\..\\b",
        "file:///a%5c..%5cb",
        "file:///a%00b",
    ],
)
def test_traversal_is_refused_in_reserved_expansion(uri: str) -> None:
    assert UriTemplate("file:///{+path}").match(uri) is None


@pytest.mark.parametrize("value", ["..", ".", "%2e%2e", "%2E%2E", "a%2Fb", "%2F..%2F", "a%5Cb"])
def test_traversal_is_refused_in_simple_expansion(value: str) -> None:
    assert UriTemplate("test://x/{id}/data").match(f"test://x/{value}/data") is None


@pytest.mark.parametrize(
    "template",
    [
        "test://{id",
        "test://id}",
        "test://{}",
        "test://{a b}",
        "test://{a}{b}",
        "test://{a,a}",
        "{x:0}",
    ],
)
def test_malformed_templates(template: str) -> None:
    with pytest.raises(UriTemplateError):
        UriTemplate(template)


def test_expand() -> None:
    assert (
        UriTemplate("test://x/{a}{?q,lang}").expand({"a": "b c", "q": "1"}) == "test://x/b%20c?q=1"
    )
    assert UriTemplate("file:///{+path}").expand({"path": "a/b"}) == "file:///a/b"
    assert UriTemplate("test://x{/seg*}").expand({"seg": ["1", "2"]}) == "test://x/1/2"
    assert UriTemplate("test://x{.ext}").expand({}) == "test://x"
    assert UriTemplate("test://{a}").variables == ("a",)
    assert UriTemplate("test://plain").is_static


def test_expand_empty_values_as_rfc_6570_says() -> None:
    values = {"x": "1024", "y": "768", "empty": ""}
    assert UriTemplate("map{?x,y,empty}").expand(values) == "map?x=1024&y=768&empty="
    assert UriTemplate("map{&x,empty}").expand(values) == "map&x=1024&empty="
    assert UriTemplate("map{;x,empty}").expand(values) == "map;x=1024;empty"
    assert UriTemplate("map{?list}").expand({"list": []}) == "map"  # empty list: undefined
    assert UriTemplate("map{?x,y,empty}").match("map?x=1024&y=768&empty=") == values


SAFE_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\\/"),
    min_size=1,
    max_size=40,
).filter(lambda s: s not in (".", ".."))

ROUND_TRIP = [
    "test://template/{id}/data",
    "test://x{/a,b}",
    "test://s{?q,lang}",
    "test://x/{a}{?q}",
]


@settings(max_examples=200, deadline=None)
@given(template=st.sampled_from(ROUND_TRIP), a=SAFE_TEXT, b=SAFE_TEXT)
def test_expand_then_match_round_trips(template: str, a: str, b: str) -> None:
    parsed = UriTemplate(template)
    values = dict(zip(parsed.variables, (a, b), strict=False))
    uri = parsed.expand(values)
    assert parsed.match(uri) == values


HOSTILE_TEMPLATES = [
    "test://template/{id}/data",
    "test://x{/seg*}{?q,lang}",
    "file:///{+path}",
    "test://a{+x}b{y}c",
    "test://{a},{b},{c}/end",
    "test://s{?a,b,c}",
    "test://x{.a,b}{;c}",
]
DELIMITERS = st.sampled_from([",", "/", "?", "&", "=", ".", ";", "%", "%2e", "a", "b", "..", "#"])


@settings(max_examples=120, deadline=None)
@given(
    template=st.sampled_from(HOSTILE_TEMPLATES),
    unit=st.lists(DELIMITERS, min_size=1, max_size=6).map("".join),
    repeat=st.integers(min_value=500, max_value=MAX_URI_LENGTH),
)
def test_hostile_long_inputs_match_in_linear_time(template: str, unit: str, repeat: int) -> None:
    parsed = UriTemplate(template)
    prefix = template.split("{")[0]
    uri = (prefix + unit * repeat)[:MAX_URI_LENGTH]
    started = time.perf_counter()
    result = parsed.match(uri)
    elapsed = time.perf_counter() - started
    # Linear matching of 16 KiB is well under a millisecond per part; a backtracking
    # matcher takes seconds on these inputs.
    assert elapsed < 0.25, (template, unit, repeat, elapsed)
    if result is not None:
        assert all(".." not in str(v).split("/") for v in result.values())


def test_overlong_uris_never_match() -> None:
    assert UriTemplate("file:///{+path}").match("file:///" + "a" * MAX_URI_LENGTH) is None
