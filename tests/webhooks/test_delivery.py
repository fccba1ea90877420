"""Webhooks through the real paths: made over GraphQL, sent by the delivery worker to a
receiver on loopback that verifies each delivery with the `standardwebhooks` package."""

import asyncio
import contextlib
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from schema.webhooks import MAX_WEBHOOKS_PER_KEY
from server.api_keys import create_key, revoke_key
from server.app import create_app
from server.settings import Settings
from store import ChangeKind, DeliveryDoc, Store
from tests.conftest import GraphQLClient, http_client
from tests.fake_dns import Dns
from tests.webhook_receiver import Receiver, webhook_receiver
from webhooks import DeliveryPolicy, DeliveryWorker, new_delivery

CREATE = """mutation($input: CreateWebhookInput!) {
  createWebhook(input: $input) { secret webhook { id url kinds enabled owner } } }"""
DELIVERIES = """query { webhooks { nodes { id enabled disabledReason
  deliveries(first: 50) { id kind sequence cursor status attempts responseCode error } } } }"""
LOOPBACK = {"webhook_allow_http": True, "webhook_allow_private": True}
FAST = {"webhook_backoff_seconds": 0.01, "webhook_max_backoff_seconds": 0.05}


@pytest.fixture
def settings() -> Settings:
    return Settings(**LOOPBACK, **FAST)  # type: ignore[arg-type]


@pytest.fixture
async def worker(store: Store, settings: Settings) -> AsyncIterator[DeliveryWorker]:
    """The delivery worker the server runs, on the test's store."""
    running = DeliveryWorker(store, DeliveryPolicy.of(settings))
    task = asyncio.create_task(running.run())
    yield running
    await running.stop()
    await task
    await running.close()


@pytest.fixture
def receiver() -> Any:
    with webhook_receiver() as received:
        yield received


async def labs(admin: GraphQLClient, *slugs: str) -> None:
    for slug in slugs:
        await admin.data(
            f'mutation {{ createLab(input: {{slug: "{slug}", name: "L"}}) {{ slug }} }}'
        )


async def made(client: GraphQLClient, receiver: Receiver, **input: Any) -> str:
    data = await client.data(CREATE, input={"url": receiver.url, **input})
    receiver.secret = data["createWebhook"]["secret"]
    webhook_id: str = data["createWebhook"]["webhook"]["id"]
    return webhook_id


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> Dns:
    return Dns(monkeypatch)


async def saved(
    store: Store, webhook_id: str, done: Callable[[list[DeliveryDoc]], bool]
) -> list[DeliveryDoc]:
    """The webhook's deliveries (newest first) once the worker has saved them as `done` asks:
    a receiver has an event before the worker has its answer."""
    for _ in range(600):
        found = await store.deliveries(webhook_id, 50)
        if done(found):
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"not saved in time: {found}")


def delivered(count: int) -> Callable[[list[DeliveryDoc]], bool]:
    return lambda found: sum(doc["status"] == "delivered" for doc in found) >= count


async def served(worker: DeliveryWorker) -> None:
    """One round of the worker, waited for: every endpoint's task it started."""
    await asyncio.gather(*await worker.round())


async def arrived(receiver: Receiver, count: int) -> None:
    await asyncio.to_thread(receiver.wait_for, lambda r: len(set(r.ids)) >= count)


async def test_deliveries_are_signed_and_arrive_in_order_after_failures(
    admin: GraphQLClient,
    client: httpx.AsyncClient,
    store: Store,
    receiver: Receiver,
    worker: DeliveryWorker,
) -> None:
    webhook_id = await made(admin, receiver, kinds=["LAB_CREATED"])
    receiver.failures = 3  # the receiver answers 500 for a while
    await labs(admin, "acme", "bolt", "cyan")
    await arrived(receiver, 3)
    await saved(store, webhook_id, delivered(3))
    assert receiver.unverified == 0
    assert [event["subject"]["slug"] for event in receiver.events] == ["acme", "bolt", "cyan"]
    sequences = [event["sequence"] for event in receiver.events]
    assert sequences == sorted(sequences)
    assert len(set(sequences)) == 3
    assert {event["type"] for event in receiver.events} == {ChangeKind.LAB_CREATED.value}
    webhook = (await admin.data(DELIVERIES))["webhooks"]["nodes"][0]
    first = webhook["deliveries"][-1]  # newest first
    assert (first["status"], first["attempts"], first["responseCode"]) == ("DELIVERED", 4, 204)
    assert first["id"] == receiver.ids[0]  # a retry keeps its webhook-id
    assert first["cursor"] == receiver.events[0]["cursor"]
    # Each delivery names its change in a header too (read-your-writes: Almanac-Min-Change).
    assert receiver.cursors == [event["cursor"] for event in receiver.events]
    metrics = (await client.get("/metrics")).text
    assert 'almanac_webhook_deliveries_total{outcome="retried"}' in metrics
    assert 'almanac_webhook_deliveries_total{outcome="delivered"}' in metrics
    assert "almanac_webhook_lag_changes" in metrics


async def test_changes_of_api_keys_and_other_kinds_are_not_sent(
    admin: GraphQLClient, store: Store, receiver: Receiver, worker: DeliveryWorker
) -> None:
    await made(admin, receiver, kinds=["CATEGORY_CREATED"])
    await create_key(store, "another", "read")  # an internal change: never sent
    await labs(admin, "acme")
    await admin.data('mutation { createCategory(input: {slug: "c", name: "C"}) { slug } }')
    await arrived(receiver, 1)
    assert [event["type"] for event in receiver.events] == ["category_created"]


async def test_an_endpoint_failing_past_the_retry_period_is_disabled_then_enabled_again(
    admin: GraphQLClient, store: Store, receiver: Receiver
) -> None:
    policy = DeliveryPolicy.of(Settings(**LOOPBACK, **FAST, webhook_retry_seconds=0.3))  # type: ignore[arg-type]
    worker = DeliveryWorker(store, policy)
    webhook_id = await made(admin, receiver)
    receiver.failures = 10**6
    await labs(admin, "acme")
    for _ in range(400):
        await served(worker)
        held = await store.webhook(webhook_id)
        if held is not None and not held["enabled"]:
            break
        await asyncio.sleep(0.01)
    webhook = (await admin.data(DELIVERIES))["webhooks"]["nodes"][0]
    assert webhook["enabled"] is False
    assert "failed for 0.3 s" in webhook["disabledReason"]
    assert webhook["deliveries"][0]["status"] == "FAILED"
    assert webhook["deliveries"][0]["responseCode"] == 500
    receiver.failures = 0
    enable = "mutation($id: ID!) { updateWebhook(id: $id, input: {enabled: true}) { enabled } }"
    assert (await admin.data(enable, id=webhook_id))["updateWebhook"]["enabled"] is True
    for _ in range(400):
        await served(worker)
        if receiver.events:
            break
        await asyncio.sleep(0.01)
    assert [event["subject"]["slug"] for event in receiver.events] == ["acme"]
    await worker.close()


async def test_a_redirect_is_not_followed(
    admin: GraphQLClient, store: Store, receiver: Receiver, worker: DeliveryWorker
) -> None:
    webhook_id = await made(admin, receiver)
    receiver.redirect = True
    await labs(admin, "acme")
    for _ in range(600):
        tried = await store.deliveries(webhook_id, 1)
        if tried and tried[0]["attempts"] >= 2:
            break
        await asyncio.sleep(0.05)
    deliveries = (await admin.data(DELIVERIES))["webhooks"]["nodes"][0]["deliveries"]
    assert deliveries[0]["responseCode"] == 302
    assert "redirects are not followed" in deliveries[0]["error"]
    assert "/elsewhere" not in receiver.requests
    assert receiver.events == []


async def test_ping_and_redelivery_keep_their_ids(
    admin: GraphQLClient, store: Store, receiver: Receiver, worker: DeliveryWorker
) -> None:
    webhook_id = await made(admin, receiver)
    ping = "mutation($id: ID!) { testWebhook(id: $id) { id kind status } }"
    queued = (await admin.data(ping, id=webhook_id))["testWebhook"]
    assert (queued["kind"], queued["status"]) == ("ping", "PENDING")
    await arrived(receiver, 1)
    # Redelivered once the worker has saved it delivered (not as soon as the receiver has it:
    # until then it is still being delivered, and redelivery refuses it).
    await saved(store, webhook_id, delivered(1))
    assert receiver.events[0]["type"] == "ping"
    assert receiver.ids == [queued["id"]]
    assert receiver.cursors == [None]  # a ping is no change
    again = """mutation($id: ID!, $event: String!) {
      redeliverWebhookEvent(webhookId: $id, eventId: $event) { id status } }"""
    await admin.data(again, id=webhook_id, event=queued["id"])
    await asyncio.to_thread(receiver.wait_for, lambda r: len(r.ids) >= 2)
    assert receiver.ids == [queued["id"], queued["id"]]


async def test_a_rotated_secret_signs_what_follows(
    admin: GraphQLClient, receiver: Receiver, worker: DeliveryWorker
) -> None:
    webhook_id = await made(admin, receiver)
    rotate = "mutation($id: ID!) { rotateWebhookSecret(id: $id) { secret } }"
    old = receiver.secret
    receiver.secret = (await admin.data(rotate, id=webhook_id))["rotateWebhookSecret"]["secret"]
    assert receiver.secret != old
    assert receiver.secret.startswith("whsec_")
    await labs(admin, "acme")
    await arrived(receiver, 1)
    assert receiver.unverified == 0


async def test_keys_see_their_own_webhooks_and_admins_all(
    admin: GraphQLClient, graphql: GraphQLClient, store: Store, receiver: Receiver
) -> None:
    reader = graphql.with_key(await create_key(store, "reader", "read"))
    other = graphql.with_key(await create_key(store, "other", "read"))  # a read key: its own
    mine = await made(admin, receiver)
    theirs = await made(other, receiver)
    listed = "query { webhooks { totalCount nodes { id owner } } }"
    assert (await admin.data(listed))["webhooks"]["totalCount"] == 2  # an admin sees all
    assert (await reader.data(listed))["webhooks"] == {"totalCount": 0, "nodes": []}
    assert (await other.data(listed))["webhooks"]["nodes"] == [{"id": theirs, "owner": "other"}]
    ping = "mutation($id: ID!) { testWebhook(id: $id) { id } }"
    assert (await other(ping, id=mine))["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    assert (await other(ping, id=theirs))["data"]["testWebhook"]["id"].startswith(f"msg_{theirs}")
    # A read key's mutation of anything but its webhooks is still refused before it runs.
    mixed = 'mutation($id: ID!) { testWebhook(id: $id) { id } createLab(input: {slug: "x", name: "X"}) { slug } }'
    assert (await other(mixed, id=theirs))["errors"][0]["extensions"]["code"] == "FORBIDDEN"
    delete = "mutation($id: ID!) { deleteWebhook(id: $id) { id } }"
    assert (await admin.data(delete, id=theirs))["deleteWebhook"] == {"id": theirs}
    assert (await admin.data(listed))["webhooks"]["nodes"] == [{"id": mine, "owner": "editor"}]
    missing = await admin(delete, id=theirs)
    assert missing["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    anonymous = await graphql(listed)
    assert anonymous["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    anonymous = await graphql(ping, id=mine)
    assert anonymous["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"


@pytest.mark.parametrize(
    ("url", "allowed", "refusal"),
    [
        ("http://127.0.0.1:9/hook", {}, "must use https"),
        ("https://127.0.0.1:9/hook", {}, "a loopback address"),
        ("https://localhost:9/hook", {}, "a loopback address"),
        ("https://10.1.2.3/hook", {}, "a private address"),
        ("https://[::1]/hook", {}, "a loopback address"),
        ("https://[::ffff:192.168.0.1]/hook", {}, "a private address"),
        ("https://169.254.169.254/latest", LOOPBACK, "a cloud metadata or link-local address"),
        ("https://[fd00:ec2::254]/latest", LOOPBACK, "a cloud metadata or link-local address"),
        ("https://user:pw@example.com/hook", {}, "user name or password"),
        ("ftp://example.com/hook", {}, "must use https"),
    ],
)
async def test_destinations_inside_are_refused_at_creation(
    store: Store, url: str, allowed: dict[str, bool], refusal: str
) -> None:
    app = create_app(Settings(**allowed), store)  # type: ignore[arg-type]
    async with http_client(app) as http:
        client = GraphQLClient(http, await create_key(store, "partner", "admin"))
        body = await client(CREATE, input={"url": url})
    error = body["errors"][0]
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert error["message"].startswith("`input.url`: ")
    assert refusal in error["message"]
    assert await store.webhooks() == []


async def test_a_destination_that_moved_inside_is_refused_at_delivery(
    admin: GraphQLClient, store: Store, receiver: Receiver
) -> None:
    """DNS rebinding: an address allowed at creation is checked again before each delivery."""
    await made(admin, receiver)
    strict = DeliveryPolicy.of(Settings(webhook_allow_http=True, **FAST))  # type: ignore[arg-type]
    worker = DeliveryWorker(store, strict)
    await labs(admin, "acme")
    await served(worker)
    await worker.close()
    delivery = (await admin.data(DELIVERIES))["webhooks"]["nodes"][0]["deliveries"][0]
    assert delivery["status"] == "PENDING"
    assert delivery["responseCode"] is None
    assert "a loopback address" in delivery["error"]
    assert receiver.requests == []


def test_a_lease_shorter_than_two_delivery_timeouts_is_refused() -> None:
    with pytest.raises(ValueError, match="at least twice webhook_timeout_seconds"):
        Settings(webhook_lease_seconds=15, webhook_timeout_seconds=10)


async def test_a_stopped_worker_gives_its_leases_back(
    admin: GraphQLClient, store: Store, receiver: Receiver, settings: Settings
) -> None:
    """At shutdown another process need not wait for the lease to expire."""
    webhook_id = await made(admin, receiver)
    worker = DeliveryWorker(store, DeliveryPolicy.of(settings))
    await labs(admin, "acme")
    await served(worker)
    held = await store.webhook(webhook_id)
    assert held is not None
    assert held["lease_holder"] == worker.holder
    assert held["lease_until"] > 0
    await worker.stop()
    await worker.close()
    released = await store.webhook(webhook_id)
    assert released is not None
    assert released["lease_until"] == 0.0
    assert await store.take_webhook_lease(webhook_id, "another", now=1.0, until=2.0)


PUBLIC = "93.184.215.14"  # a public address: the checks allow it (nothing connects to it here)
STRICT = {"webhook_allow_http": True, **FAST}  # loopback and private addresses refused


async def test_a_host_is_resolved_as_the_client_encodes_it(
    admin: GraphQLClient, store: Store, receiver: Receiver, dns: Dns
) -> None:
    """`straße` is `strasse` in IDNA 2003 (the socket module's codec) and `xn--strae-oqa` in
    IDNA 2008 (httpx's): the name checked is the one connected to."""
    dns.answers = {"strasse.test": [PUBLIC], "xn--strae-oqa.test": ["127.0.0.1"]}
    url = receiver.url.replace("127.0.0.1", "straße.test")
    app = create_app(Settings(**STRICT), store)  # type: ignore[arg-type]
    async with http_client(app) as http:
        partner = GraphQLClient(http, await create_key(store, "partner", "read"))
        refused = await partner(CREATE, input={"url": url})
    assert "resolves to a loopback address" in refused["errors"][0]["message"]
    # Made where loopback is allowed, then sent by a strict worker: refused at the attempt.
    webhook_id = (await admin.data(CREATE, input={"url": url}))["createWebhook"]["webhook"]["id"]
    worker = DeliveryWorker(store, DeliveryPolicy.of(Settings(**STRICT)))  # type: ignore[arg-type]
    await labs(admin, "acme")
    await served(worker)
    await worker.close()
    [delivery] = await store.deliveries(webhook_id, 10)
    assert delivery["error"] is not None
    assert "xn--strae-oqa.test resolves to a loopback address" in delivery["error"]
    assert receiver.requests == []


async def test_a_delivery_connects_to_the_address_checked(
    admin: GraphQLClient, receiver: Receiver, worker: DeliveryWorker, dns: Dns
) -> None:
    """DNS rebinding: the name answers one address to the check and another afterwards; the
    event goes to the one checked, with the host name in `Host`."""
    port = int(receiver.url.split(":")[2].split("/")[0])
    with webhook_receiver("127.0.0.2", port) as elsewhere:
        dns.answers = {"rebind.test": ["127.0.0.1", "127.0.0.1", "127.0.0.2"]}
        url = f"http://rebind.test:{port}/hook"
        data = await admin.data(CREATE, input={"url": url, "kinds": ["LAB_CREATED"]})
        receiver.secret = data["createWebhook"]["secret"]
        await labs(admin, "acme")
        await arrived(receiver, 1)
    assert elsewhere.requests == []
    assert receiver.hosts == [f"rebind.test:{port}"]


async def test_a_slow_receiver_holds_up_no_other_endpoint(
    admin: GraphQLClient, store: Store, receiver: Receiver
) -> None:
    """A receiver that answers a byte at a time has one deadline for its whole attempt, and
    the other endpoints are sent theirs meanwhile; the worker stops within that deadline."""
    policy = DeliveryPolicy.of(Settings(**LOOPBACK, **FAST, webhook_timeout_seconds=1))  # type: ignore[arg-type]
    worker = DeliveryWorker(store, policy)
    running = asyncio.create_task(worker.run())
    with webhook_receiver() as slow:
        slow.trickle = 0.1  # 4 KB would take 7 minutes: each byte within any read timeout
        slow_id = await made(admin, slow, kinds=["LAB_CREATED"])
        await made(admin, receiver, kinds=["LAB_CREATED"])
        await labs(admin, "acme")
        await arrived(receiver, 1)
        await labs(admin, "bolt")
        await arrived(receiver, 2)  # while the slow one is still trying its first
        [tried, *_] = await saved(
            store, slow_id, lambda found: bool(found) and found[0]["attempts"] >= 1
        )
        assert tried["error"] == "No answer within 1 s (the whole attempt's deadline)."
        await worker.stop()
        await asyncio.wait_for(running, 30)  # its attempt in flight ends within the deadline
    await worker.close()
    assert [event["subject"]["slug"] for event in receiver.events] == ["acme", "bolt"]


async def test_concurrent_creations_keep_to_the_most_webhooks_a_key_has(
    admin: GraphQLClient, store: Store, receiver: Receiver
) -> None:
    tries = await asyncio.gather(*(admin(CREATE, input={"url": receiver.url}) for _ in range(60)))
    refused = [body["errors"][0]["message"] for body in tries if "errors" in body]
    assert refused == ["A key may have at most 20 webhooks."] * 40
    assert len(await store.webhooks("editor")) == 20


async def test_deliveries_done_are_pruned_past_their_retention(
    admin: GraphQLClient, store: Store, receiver: Receiver, settings: Settings
) -> None:
    webhook_id = await made(admin, receiver)
    old = "2020-01-01T00:00:00.000000Z"  # long past the default retention (30 days)
    for status in ("delivered", "failed", "pending"):
        doc = new_delivery(
            webhook_id,
            f"msg_{status}",
            sequence=None,
            kind="ping",
            body="{}",
            created_at=old,
            manual=True,
        )
        await store.save_delivery({**doc, "status": status, "next_attempt_at": 2e9})
    ping = "mutation($id: ID!) { testWebhook(id: $id) { id } }"
    recent = (await admin.data(ping, id=webhook_id))["testWebhook"]["id"]
    worker = DeliveryWorker(store, DeliveryPolicy.of(settings))
    await served(worker)  # the ping is delivered: done, but within its retention
    await worker.close()
    assert await worker.prune() == 2
    kept = await store.deliveries(webhook_id, 10)
    assert {(doc["id"], doc["status"]) for doc in kept} == {
        (recent, "delivered"),
        ("msg_pending", "pending"),  # never pruned before it is done
    }


async def test_a_revoked_keys_webhooks_are_disabled(
    graphql: GraphQLClient, store: Store, receiver: Receiver, worker: DeliveryWorker
) -> None:
    partner = graphql.with_key(await create_key(store, "partner", "read"))
    webhook_id = await made(partner, receiver)
    assert await revoke_key(store, "partner")  # as `almanac keys revoke` does, from any process
    admin = graphql.with_key(await create_key(store, "operator", "admin"))
    await labs(admin, "acme")
    await admin.data(CREATE, input={"url": receiver.url})  # another key's: still sent
    disabled = None
    for _ in range(600):
        disabled = await store.webhook(webhook_id)
        if disabled is not None and not disabled["enabled"]:
            break
        await asyncio.sleep(0.05)
    assert disabled is not None
    assert disabled["enabled"] is False
    assert disabled["disabled_reason"] == (
        "The API key 'partner' that made it was revoked: nothing is sent for it. Make the "
        "webhook again with a key in force."
    )
    assert receiver.requests == []
    listed = (await admin.data(DELIVERIES))["webhooks"]["nodes"]
    assert [node["disabledReason"] is not None for node in listed] == [True, False]


async def test_a_dry_run_checks_each_webhook_mutation_and_writes_nothing(
    admin: GraphQLClient, store: Store, receiver: Receiver, worker: DeliveryWorker
) -> None:
    dry_create = """mutation($input: CreateWebhookInput!) {
      createWebhook(input: $input, dryRun: true) { secret webhook { url enabled } } }"""
    would = (await admin.data(dry_create, input={"url": receiver.url}))["createWebhook"]
    assert would["webhook"] == {"url": receiver.url, "enabled": True}
    assert await store.webhooks() == []
    refused = await admin(dry_create, input={"url": "ftp://example.com/hook"})
    assert refused["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    webhook_id = await made(admin, receiver)
    ping = "mutation($id: ID!) { testWebhook(id: $id) { id } }"
    await admin.data(ping, id=webhook_id)
    await arrived(receiver, 1)
    before = await store.webhook(webhook_id)
    [sent] = await saved(store, webhook_id, delivered(1))
    for mutation in (
        'updateWebhook(id: $id, input: {description: "d", enabled: false}, dryRun: true) { id }',
        "rotateWebhookSecret(id: $id, dryRun: true) { secret }",
        "testWebhook(id: $id, dryRun: true) { id }",
        f'redeliverWebhookEvent(webhookId: $id, eventId: "{sent["id"]}", dryRun: true) {{ id }}',
        "deleteWebhook(id: $id, dryRun: true) { id }",
    ):
        assert "errors" not in await admin(f"mutation($id: ID!) {{ {mutation} }}", id=webhook_id)
        assert "errors" in await admin(f"mutation($id: ID!) {{ {mutation} }}", id="wh_none")
    assert await store.webhook(webhook_id) == before
    assert await store.deliveries(webhook_id, 10) == [sent]
    for _ in range(MAX_WEBHOOKS_PER_KEY - 1):
        await made(admin, receiver)
    full = await admin(dry_create, input={"url": receiver.url})
    assert full["errors"][0]["message"] == "A key may have at most 20 webhooks."


@pytest.fixture
def tls_listener(tmp_path: Path) -> Iterator[tuple[int, list[str | None]]]:
    """A TLS server on loopback with a certificate no client trusts: its port, and the host
    name each client asked for (SNI) before the handshake failed."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=sni.test",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    names: list[str | None] = []
    context.sni_callback = lambda _socket, name, _context: names.append(name)
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                connection, _ = listener.accept()
                with contextlib.suppress(OSError), connection:
                    context.wrap_socket(connection, server_side=True).close()

    threading.Thread(target=serve, daemon=True).start()
    yield listener.getsockname()[1], names
    listener.close()


async def test_tls_is_asked_for_the_host_name_and_no_cause_is_told(
    admin: GraphQLClient, store: Store, dns: Dns, tls_listener: tuple[int, list[str | None]]
) -> None:
    """Connected to the address checked, TLS still names the host (SNI), and verifies the
    certificate against it; a failure is told in one text, as every failure below HTTP is."""
    port, names = tls_listener
    dns.answers = {"sni.test": ["127.0.0.1"]}
    made = await admin.data(CREATE, input={"url": f"https://sni.test:{port}/hook"})
    webhook_id = made["createWebhook"]["webhook"]["id"]
    worker = DeliveryWorker(store, DeliveryPolicy.of(Settings(**LOOPBACK, **FAST)))  # type: ignore[arg-type]
    await labs(admin, "acme")
    await served(worker)
    await worker.close()
    [delivery] = await store.deliveries(webhook_id, 10)
    assert delivery["error"] == "No answer: the connection failed or was cut."
    assert names == ["sni.test"]


async def test_an_answer_is_read_up_to_4_kb(
    admin: GraphQLClient, store: Store, receiver: Receiver, worker: DeliveryWorker
) -> None:
    """The worker lets go of a long answer after its first 4 KB, however they come: a receiver
    that sends them (in two parts) and then nothing more has answered."""
    receiver.trickle, receiver.burst = 600.0, (2048, 2048)
    webhook_id = await made(admin, receiver)
    await labs(admin, "acme")
    [done] = await saved(store, webhook_id, delivered(1))
    assert (done["response_code"], done["attempts"]) == (200, 1)
    assert (done["error"], done["next_attempt_at"]) == (None, None)
