"""``RequestStateSealer``: only a token sealed by this server for exactly this binding,
not expired, ever opens. Examples first, then properties."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trimcp import RequestStateSealer
from trimcp.server._request_state import RequestStateError

KEY = b"k" * 32
BINDING = {"method": "tools/call", "target": "greet", "arguments": "abc"}
DATA = {"answers": {"user_name": {"action": "accept", "content": {"name": "Ann"}}}}


class Clock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def sealer(clock: Clock | None = None, **options: Any) -> RequestStateSealer:
    return RequestStateSealer([("k1", KEY)], clock=clock or Clock(), **options)


def test_round_trip() -> None:
    s = sealer()
    assert s.open(BINDING, s.seal(BINDING, DATA)) == DATA


def test_expiry_is_inclusive_of_the_ttl_and_no_more() -> None:
    clock = Clock()
    s = sealer(clock, ttl=60)
    token = s.seal(BINDING, DATA)
    clock.now += 60
    assert s.open(BINDING, token) == DATA
    clock.now += 1
    with pytest.raises(RequestStateError, match="expired"):
        s.open(BINDING, token)


def test_rotation_opens_old_tokens_and_seals_with_the_first_key() -> None:
    old = RequestStateSealer([("old", KEY)], clock=Clock())
    token = old.seal(BINDING, DATA)
    rotated = RequestStateSealer([("new", b"n" * 32), ("old", KEY)], clock=Clock())
    assert rotated.open(BINDING, token) == DATA
    assert rotated.seal(BINDING, DATA).split(".")[1] == "new"
    retired = RequestStateSealer([("new", b"n" * 32)], clock=Clock())
    with pytest.raises(RequestStateError, match="unknown key"):
        retired.open(BINDING, token)


def test_no_second_spelling_of_the_mac_opens() -> None:
    """The MAC's last base64 character has spare bits: other characters sharing its
    data bits decode to the same bytes, and must still be refused."""
    s = sealer()
    token = s.seal(BINDING, DATA)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    index = alphabet.index(token[-1])
    twins = [c for c in alphabet[index // 4 * 4 : index // 4 * 4 + 4] if c != token[-1]]
    assert len(twins) == 3
    for twin in twins:
        with pytest.raises(RequestStateError):
            s.open(BINDING, token[:-1] + twin)


def test_a_key_reused_under_another_id_does_not_open() -> None:
    token = RequestStateSealer([("a", KEY)], clock=Clock()).seal(BINDING, DATA)
    renamed = token.replace(".a.", ".b.", 1)
    with pytest.raises(RequestStateError):
        RequestStateSealer([("b", KEY)], clock=Clock()).open(BINDING, renamed)


def test_bare_keys_get_stable_ids() -> None:
    one = RequestStateSealer([KEY], clock=Clock())
    two = RequestStateSealer([b"other key of 16+", KEY], clock=Clock())
    assert two.open(BINDING, one.seal(BINDING, DATA)) == DATA


def test_bounds_and_bad_configuration() -> None:
    s = sealer(max_bytes=200)
    with pytest.raises(ValueError, match="over 200"):
        s.seal(BINDING, {"answers": {"x": "y" * 300}})
    with pytest.raises(RequestStateError, match="too large"):
        s.open(BINDING, "v1." + "a" * 300)
    for bad in ([], [b"short"], [("", KEY)], [("a.b", KEY)], [("a", KEY), ("a", KEY)]):
        with pytest.raises(ValueError):
            RequestStateSealer(bad)
    with pytest.raises(ValueError, match="ttl"):
        RequestStateSealer([KEY], ttl=0)


@pytest.mark.parametrize("token", [None, 5, "", "v1", "v2.k1.1.e30.AAAA", "v1.k1.x.e30.AAAA"])
def test_malformed_tokens(token: object) -> None:
    with pytest.raises(RequestStateError):
        sealer().open(BINDING, token)


# ---------------------------------------------------------------------------- properties

json_leaf = st.none() | st.booleans() | st.integers() | st.text(max_size=20)
json_value = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
bindings = st.fixed_dictionaries(
    {
        "method": st.sampled_from(["tools/call", "prompts/get", "resources/read"]),
        "target": st.none() | st.text(max_size=12),
        "arguments": st.text(alphabet="0123456789abcdef", min_size=1, max_size=8),
    }
)
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _refused(s: RequestStateSealer, binding: Any, token: object) -> bool:
    try:
        s.open(binding, token)
    except RequestStateError:
        return True
    return False


@SETTINGS
@given(st.text(max_size=300) | st.binary(max_size=300).map(lambda b: b.decode("latin-1")))
def test_random_strings_never_open(token: str) -> None:
    assert _refused(sealer(), BINDING, token)


@SETTINGS
@given(bindings, json_value, st.data())
def test_any_change_to_a_token_is_refused(binding: Any, data: Any, draw: st.DataObject) -> None:
    s = sealer()
    token = s.seal(binding, data)
    index = draw.draw(st.integers(0, len(token) - 1))
    bit = draw.draw(st.integers(0, 6))
    flipped = token[:index] + chr(ord(token[index]) ^ (1 << bit)) + token[index + 1 :]
    assert flipped != token
    assert _refused(s, binding, flipped)


@SETTINGS
@given(bindings, json_value, st.data())
def test_truncations_and_extensions_are_refused(
    binding: Any, data: Any, draw: st.DataObject
) -> None:
    s = sealer()
    token = s.seal(binding, data)
    cut = draw.draw(st.integers(0, len(token) - 1))
    assert _refused(s, binding, token[:cut])
    assert _refused(s, binding, token + draw.draw(st.text(min_size=1, max_size=8)))


@SETTINGS
@given(bindings, bindings, json_value)
def test_a_token_opens_only_under_its_own_binding(first: Any, second: Any, data: Any) -> None:
    s = sealer()
    token = s.seal(first, data)
    assert s.open(first, token) == data
    if second != first:
        assert _refused(s, second, token)


@SETTINGS
@given(bindings, json_value, st.binary(min_size=16, max_size=40))
def test_another_key_never_opens(binding: Any, data: Any, other: bytes) -> None:
    token = sealer().seal(binding, data)
    if other != KEY:
        assert _refused(RequestStateSealer([("k1", other)], clock=Clock()), binding, token)
