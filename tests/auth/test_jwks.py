"""The key set cache: TTL, rotation, refetch rate limit, failures, bounds."""

from __future__ import annotations

import json

import pytest
import trio
import trio.testing

from trimcp.auth import InvalidToken, JwksCache, VerifierUnavailable

from ._issuer import JWKS_URL, Issuer


def cache(issuer: Issuer, **options: float) -> JwksCache:
    return JwksCache(JWKS_URL, fetcher=issuer.fetch, **options)  # type: ignore[arg-type]


async def test_keys_are_fetched_once_then_again_after_the_ttl(
    clock: trio.testing.MockClock,
) -> None:
    issuer = Issuer()
    keys = cache(issuer, ttl=300)
    for _ in range(5):
        await keys.key("k1")
    assert issuer.fetched == 1
    clock.jump(299)
    await keys.key("k1")
    assert issuer.fetched == 1
    clock.jump(2)
    await keys.key("k1")
    assert issuer.fetched == 2


async def test_an_unknown_key_id_refetches_once_per_interval(
    clock: trio.testing.MockClock,
) -> None:
    issuer = Issuer()
    keys = cache(issuer, min_refetch=30)
    await keys.key("k1")
    clock.jump(31)
    issuer.rotate("k2")  # the authorization server rotated its key
    assert await keys.key("k2") is not None
    assert issuer.fetched == 2
    # Made-up ids cost no fetch within the interval: a flood is one fetch per interval.
    for n in range(50):
        with pytest.raises(InvalidToken, match="unknown key"):
            await keys.key(f"forged-{n}")
    assert issuer.fetched == 2
    clock.jump(31)
    with pytest.raises(InvalidToken):
        await keys.key("forged-again")
    assert issuer.fetched == 3


async def test_an_unreachable_key_set_is_unavailable_not_invalid(
    clock: trio.testing.MockClock,
) -> None:
    issuer = Issuer()
    issuer.down = True
    keys = cache(issuer, min_refetch=10)
    with pytest.raises(VerifierUnavailable) as caught:
        await keys.key("k1")
    assert caught.value.retry_after == 10
    with pytest.raises(VerifierUnavailable):
        await keys.key("k1")
    assert issuer.fetched == 1  # the retry waits for min_refetch
    issuer.down = False
    clock.jump(10)
    await keys.key("k1")
    assert issuer.fetched == 2


async def test_held_keys_stay_in_use_while_the_key_set_is_down(
    clock: trio.testing.MockClock,
) -> None:
    issuer = Issuer()
    keys = cache(issuer, ttl=60, min_refetch=10)
    await keys.key("k1")
    issuer.down = True
    clock.jump(61)
    assert await keys.key("k1") is not None
    assert issuer.fetched == 2
    assert await keys.key("k1") is not None
    assert issuer.fetched == 2  # no fetch per call while it is down


async def test_concurrent_callers_share_one_fetch() -> None:
    issuer = Issuer()
    release = trio.Event()
    real = issuer.fetch

    async def slow(url: str) -> bytes:
        await release.wait()
        return await real(url)

    keys = JwksCache(JWKS_URL, fetcher=slow)
    async with trio.open_nursery() as nursery:
        for _ in range(20):
            nursery.start_soon(keys.key, "k1")
        await trio.testing.wait_all_tasks_blocked()
        release.set()
    assert issuer.fetched == 1


async def test_a_fetch_that_hangs_is_bounded_by_the_timeout(
    clock: trio.testing.MockClock,
) -> None:
    async def hang(url: str) -> bytes:
        await trio.sleep_forever()
        raise AssertionError

    keys = JwksCache(JWKS_URL, fetcher=hang, timeout=2)
    with pytest.raises(VerifierUnavailable):
        await keys.key("k1")
    assert trio.current_time() == pytest.approx(2)


@pytest.mark.parametrize(
    "document",
    [
        b"not json",
        b"[]",
        b'{"keys": "nope"}',
        b'{"keys": []}',
        b'{"keys": [{"kty": "EC"}]}',
        json.dumps({"keys": [{"kty": "oct", "k": "c2VjcmV0", "kid": "k1"}]}).encode(),
        b"x" * 70_000,
    ],
)
async def test_a_bad_key_set_counts_as_a_failed_fetch(document: bytes) -> None:
    issuer = Issuer()
    issuer.document = document
    with pytest.raises(VerifierUnavailable):
        await cache(issuer).key("k1")


async def test_private_and_non_signing_keys_are_skipped() -> None:
    issuer = Issuer()
    good = issuer.keys["k1"].as_dict(private=False)
    private = issuer.add_key("k2").as_dict(private=True)
    encryption = {**issuer.add_key("k3").as_dict(private=False), "use": "enc"}
    issuer.document = json.dumps({"keys": [good, private, encryption]}).encode()
    keys = cache(issuer)
    await keys.key("k1")
    assert keys.key_ids == ["k1"]


async def test_at_most_max_keys_are_kept() -> None:
    issuer = Issuer()
    for n in range(10):
        issuer.add_key(f"extra-{n}")
    keys = JwksCache(JWKS_URL, fetcher=issuer.fetch, max_keys=4)
    await keys.key("k1")
    assert len(keys.key_ids) == 4


async def test_a_token_without_kid_needs_a_single_key_set() -> None:
    issuer = Issuer()
    keys = cache(issuer)
    assert await keys.key(None) is not None
    issuer.add_key("k2")
    other = cache(issuer)
    with pytest.raises(InvalidToken):
        await other.key(None)
