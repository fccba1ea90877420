"""The store's webhooks, on both stores: a lease held by one worker at a time and taken over
once it expires, writes conditional on the lease, deliveries newest first, the most webhooks a
key has kept under concurrent inserts, the deliveries done pruned."""

import asyncio

import pytest

from store import Store, WebhookDoc
from webhooks import new_delivery


def endpoint(webhook_id: str, owner: str = "partner") -> WebhookDoc:
    return WebhookDoc(
        id=webhook_id,
        owner=owner,
        url="https://example.com/hook",
        kinds=None,
        benchmarks=None,
        models=None,
        category=None,
        description=None,
        secret="whsec_c2VjcmV0",
        enabled=True,
        disabled_reason=None,
        position=0,
        created_at="2026-12-01T00:00:00.000000Z",
        lease_holder=None,
        lease_until=0.0,
    )


async def test_one_worker_holds_a_lease_until_it_expires(store: Store) -> None:
    assert await store.insert_webhook(endpoint("wh_1"), 20)
    assert await store.take_webhook_lease("wh_1", "a", now=100.0, until=130.0)
    assert not await store.take_webhook_lease("wh_1", "b", now=110.0, until=140.0)
    assert await store.take_webhook_lease("wh_1", "a", now=120.0, until=150.0)  # renewed
    assert not await store.update_webhook("wh_1", {"position": 5}, holder="b")
    assert await store.update_webhook("wh_1", {"position": 5}, holder="a")
    assert await store.take_webhook_lease("wh_1", "b", now=151.0, until=180.0)  # expired
    assert not await store.update_webhook("wh_1", {"position": 6}, holder="a")
    held = await store.webhook("wh_1")
    assert held is not None
    assert (held["lease_holder"], held["position"]) == ("b", 5)


async def test_a_disabled_webhook_is_leased_to_no_one(store: Store) -> None:
    assert await store.insert_webhook(endpoint("wh_1"), 20)
    assert await store.update_webhook("wh_1", {"enabled": False, "disabled_reason": "failing"})
    assert not await store.take_webhook_lease("wh_1", "a", now=100.0, until=130.0)
    assert not await store.take_webhook_lease("wh_2", "a", now=100.0, until=130.0)


async def test_webhooks_by_owner_and_deliveries_newest_first(store: Store) -> None:
    for webhook_id, owner in (("wh_1", "partner"), ("wh_2", "other"), ("wh_3", "partner")):
        assert await store.insert_webhook(endpoint(webhook_id, owner), 20)
    assert [doc["id"] for doc in await store.webhooks("partner")] == ["wh_1", "wh_3"]
    assert len(await store.webhooks()) == 3
    for sequence in (1, 2, 3):
        delivery = new_delivery(
            "wh_1",
            f"msg_wh_1_{sequence}",
            sequence=sequence,
            kind="lab_created",
            body="{}",
            created_at=f"2026-12-01T00:00:0{sequence}.000000Z",
            manual=False,
        )
        await store.save_delivery(delivery)
    await store.save_delivery({**delivery, "status": "delivered", "attempts": 1})
    found = await store.deliveries("wh_1", 10)
    assert [doc["id"] for doc in found] == ["msg_wh_1_3", "msg_wh_1_2", "msg_wh_1_1"]
    assert found[0]["status"] == "delivered"
    assert [doc["id"] for doc in await store.deliveries("wh_1", 10, "pending")] == [
        "msg_wh_1_2",
        "msg_wh_1_1",
    ]
    assert await store.delete_webhook("wh_1")
    assert await store.deliveries("wh_1", 10) == []
    assert await store.webhook("wh_1") is None
    assert not await store.delete_webhook("wh_1")


async def test_concurrent_inserts_keep_to_the_most_an_owner_has(store: Store) -> None:
    made = await asyncio.gather(
        *(store.insert_webhook(endpoint(f"wh_{number}"), 20) for number in range(60))
    )
    assert made.count(True) == 20
    assert len(await store.webhooks("partner")) == 20
    assert await store.insert_webhook(endpoint("wh_other", "other"), 20)  # by owner
    assert await store.delete_webhook("wh_0")  # a place freed is taken again
    assert await store.insert_webhook(endpoint("wh_again"), 20)
    assert not await store.insert_webhook(endpoint("wh_past"), 20)


async def test_deliveries_done_before_an_instant_are_pruned(store: Store) -> None:
    assert await store.insert_webhook(endpoint("wh_1"), 20)
    for day, status in ((1, "delivered"), (2, "failed"), (3, "pending"), (5, "delivered")):
        doc = new_delivery(
            "wh_1",
            f"msg_{day}",
            sequence=day,
            kind="lab_created",
            body="{}",
            created_at=f"2026-12-0{day}T00:00:00.000000Z",
            manual=False,
        )
        await store.save_delivery({**doc, "status": status})
    assert await store.prune_deliveries("2026-12-04T00:00:00.000000Z") == 2
    kept = await store.deliveries("wh_1", 10)
    assert [doc["id"] for doc in kept] == ["msg_5", "msg_3"]


async def test_a_webhook_not_stored_gives_its_place_back(store: Store) -> None:
    assert await store.insert_webhook(endpoint("wh_1"), 2)
    with pytest.raises(Exception):  # noqa: B017, PT011  # each store's own refusal of the id
        await store.insert_webhook(endpoint("wh_1"), 2)
    assert await store.insert_webhook(endpoint("wh_2"), 2)  # the place the failure took is back
    assert not await store.insert_webhook(endpoint("wh_3"), 2)
